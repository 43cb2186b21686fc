//! The rules of sampling with tools (2025-11-25), checked on the messages a
//! server sends and on the reply the application's handler returns.
//!
//! - A user message holding `tool_result` blocks holds nothing else.
//! - Every assistant message with `tool_use` blocks is followed by a user
//!   message of `tool_result` blocks answering each of them (by `toolUseId`),
//!   before any other message.
//! - `tool_use` comes from the assistant, `tool_result` from the user.
//! - A reply may use tools only when the request offered them, did not forbid
//!   them (`toolChoice.mode: "none"`), and only the tools offered.

use std::collections::BTreeSet;

use tessera_types::{
    CreateMessageRequestParams, CreateMessageResult, ErrorObject, Role,
    SamplingMessageContentBlock as Block, ToolChoiceMode,
};

/// Whether any message of the request carries tool content.
pub(crate) fn uses_tools(p: &CreateMessageRequestParams) -> bool {
    p.tools.is_some()
        || p.tool_choice.is_some()
        || p.messages.iter().any(|m| {
            m.content
                .blocks()
                .iter()
                .any(|b| matches!(b, Block::ToolUse(_) | Block::ToolResult(_)))
        })
}

fn bad(message: String) -> ErrorObject {
    ErrorObject::invalid_params(format!("Invalid params: {message}"))
}

/// Checks the conversation a server sent; `-32602` on a broken rule.
pub(crate) fn check_request(p: &CreateMessageRequestParams) -> Result<(), ErrorObject> {
    let mut pending: BTreeSet<String> = BTreeSet::new();
    for (i, m) in p.messages.iter().enumerate() {
        let blocks = m.content.blocks();
        let results: Vec<&str> = blocks
            .iter()
            .filter_map(|b| match b {
                Block::ToolResult(r) => Some(r.tool_use_id.as_str()),
                _ => None,
            })
            .collect();
        let uses: Vec<&str> = blocks
            .iter()
            .filter_map(|b| match b {
                Block::ToolUse(u) => Some(u.id.as_str()),
                _ => None,
            })
            .collect();
        if !results.is_empty() {
            if m.role != Role::User {
                return Err(bad(format!(
                    "message {i}: tool_result content is only allowed in user messages"
                )));
            }
            if results.len() != blocks.len() {
                return Err(bad(format!(
                    "message {i}: Tool results mixed with other content"
                )));
            }
        }
        if !uses.is_empty() && m.role != Role::Assistant {
            return Err(bad(format!(
                "message {i}: tool_use content is only allowed in assistant messages"
            )));
        }
        if !pending.is_empty() {
            let answered: BTreeSet<String> = results.iter().map(|s| (*s).to_owned()).collect();
            if let Some(missing) = pending.difference(&answered).next() {
                return Err(bad(format!(
                    "message {i}: Tool result missing in request for tool use {missing:?}"
                )));
            }
            if let Some(extra) = answered.difference(&pending).next() {
                return Err(bad(format!(
                    "message {i}: tool_result {extra:?} answers no tool use of the preceding assistant message"
                )));
            }
            pending.clear();
        } else if let Some(r) = results.first() {
            return Err(bad(format!(
                "message {i}: tool_result {r:?} does not follow an assistant message with that tool use"
            )));
        }
        for id in uses {
            if !pending.insert(id.to_owned()) {
                return Err(bad(format!(
                    "message {i}: tool use id {id:?} appears twice"
                )));
            }
        }
    }
    if let Some(missing) = pending.into_iter().next() {
        return Err(bad(format!(
            "Tool result missing in request: the last message's tool use {missing:?} is unanswered"
        )));
    }
    Ok(())
}

/// Checks the application's reply against the request; `-32603` (the error
/// is this client's, not the server's) on a broken rule.
pub(crate) fn check_result(
    p: &CreateMessageRequestParams,
    r: &CreateMessageResult,
) -> Result<(), ErrorObject> {
    let fail = |m: String| {
        Err(ErrorObject::internal(format!(
            "Internal error: the sampling reply is invalid: {m}"
        )))
    };
    let blocks = r.content.blocks();
    if blocks.iter().any(|b| matches!(b, Block::ToolResult(_))) {
        return fail("a reply cannot carry tool_result content".into());
    }
    let uses: Vec<_> = blocks
        .iter()
        .filter_map(|b| match b {
            Block::ToolUse(u) => Some(u),
            _ => None,
        })
        .collect();
    if uses.is_empty() {
        return Ok(());
    }
    if r.role != Role::Assistant {
        return fail("tool_use must come from the assistant".into());
    }
    let Some(tools) = &p.tools else {
        return fail("it uses a tool but the request offered none".into());
    };
    if p.tool_choice.as_ref().and_then(|c| c.mode) == Some(ToolChoiceMode::None) {
        return fail("it uses a tool but the request's toolChoice is \"none\"".into());
    }
    let mut ids = BTreeSet::new();
    for u in uses {
        if !tools.iter().any(|t| t.name == u.name) {
            return fail(format!(
                "it uses the tool {:?}, which the request did not offer",
                u.name
            ));
        }
        if !ids.insert(u.id.as_str()) {
            return fail(format!("tool use id {:?} appears twice", u.id));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn req(v: Value) -> CreateMessageRequestParams {
        serde_json::from_value(v).unwrap()
    }

    fn use_(id: &str) -> Value {
        json!({"type": "tool_use", "id": id, "name": "get_weather", "input": {}})
    }

    fn result(id: &str) -> Value {
        json!({"type": "tool_result", "toolUseId": id, "content": []})
    }

    fn conversation(messages: Value) -> CreateMessageRequestParams {
        req(json!({"messages": messages, "maxTokens": 10,
            "tools": [{"name": "get_weather", "inputSchema": {"type": "object"}}]}))
    }

    #[test]
    fn paired_tool_results_pass() {
        let p = conversation(json!([
            {"role": "user", "content": {"type": "text", "text": "weather?"}},
            {"role": "assistant", "content": [use_("a"), use_("b")]},
            {"role": "user", "content": [result("b"), result("a")]},
            {"role": "assistant", "content": {"type": "text", "text": "ok"}}
        ]));
        check_request(&p).unwrap();
        assert!(uses_tools(&p));
    }

    #[test]
    fn broken_pairings_are_refused() {
        let cases = [
            json!([{"role": "assistant", "content": [use_("a"), use_("b")]},
                   {"role": "user", "content": [result("a")]}]),
            json!([{"role": "assistant", "content": [use_("a")]},
                   {"role": "user", "content": [{"type": "text", "text": "x"}, result("a")]}]),
            json!([{"role": "assistant", "content": [use_("a")]},
                   {"role": "user", "content": {"type": "text", "text": "x"}}]),
            json!([{"role": "user", "content": [result("a")]}]),
            json!([{"role": "assistant", "content": [use_("a")]}]),
            json!([{"role": "user", "content": [use_("a")]}]),
            json!([{"role": "assistant", "content": [use_("a")]},
                   {"role": "user", "content": [result("a"), result("z")]}]),
        ];
        for c in cases {
            let e = check_request(&conversation(c.clone())).unwrap_err();
            assert_eq!(e.code, -32602, "{c}");
        }
    }

    #[test]
    fn replies_use_only_offered_tools() {
        let p = conversation(json!([{"role": "user", "content": {"type": "text", "text": "q"}}]));
        let reply = |content: Value| -> CreateMessageResult {
            serde_json::from_value(json!({"role": "assistant", "content": content, "model": "m"}))
                .unwrap()
        };
        check_result(&p, &reply(json!([use_("a")]))).unwrap();
        let other = json!([{"type": "tool_use", "id": "a", "name": "rm_rf", "input": {}}]);
        assert_eq!(check_result(&p, &reply(other)).unwrap_err().code, -32603);
        assert!(check_result(&p, &reply(json!([use_("a"), use_("a")]))).is_err());
        assert!(check_result(&p, &reply(json!([result("a")]))).is_err());
        let mut none = p.clone();
        none.tool_choice = Some(serde_json::from_value(json!({"mode": "none"})).unwrap());
        assert!(check_result(&none, &reply(json!([use_("a")]))).is_err());
        let plain = req(json!({"messages": [], "maxTokens": 1}));
        assert!(!uses_tools(&plain));
        assert!(check_result(&plain, &reply(json!([use_("a")]))).is_err());
        check_result(&plain, &reply(json!({"type": "text", "text": "fine"}))).unwrap();
    }
}
