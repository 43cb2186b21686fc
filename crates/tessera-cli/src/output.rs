//! How results are shown: `--json` prints the protocol result as one JSON
//! document; otherwise a readable table or text. Everything a server sent
//! passes through [`crate::peer_text`]: one-line fields through
//! `peer_text::line`, whole texts through `peer_text::block` when printed.

use std::borrow::Cow;
use std::fmt::Write as _;

use serde_json::Value;
use tessera::types::JsonObject;

use crate::peer_text;

/// Prints one JSON document on stdout.
/// DEL and C1 characters in strings are written as `\u007f`…`\u009f`
/// escapes (C0 ones as `\u001b` and the like), so the document stays valid
/// JSON and carries no raw terminal control.
pub fn json(v: &Value) {
    let text = serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string());
    println!("{}", peer_text::json(&text));
}

/// Prints a JSON object on stdout.
pub fn json_object(o: &JsonObject) {
    json(&Value::Object(o.clone()));
}

/// Member `k` of `o` as one line of inert text.
fn str_of<'a>(o: &'a Value, k: &str) -> Cow<'a, str> {
    peer_text::line(o.get(k).and_then(Value::as_str).unwrap_or(""))
}

/// Member `k` of `o` as multi-line inert text.
fn text_of<'a>(o: &'a Value, k: &str) -> Cow<'a, str> {
    peer_text::block(o.get(k).and_then(Value::as_str).unwrap_or(""))
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

/// Rows of columns, aligned; the last column is not padded.
pub fn table(rows: &[Vec<String>]) -> String {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let mut width = vec![0; cols];
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            width[i] = width[i].max(c.chars().count());
        }
    }
    let mut out = String::new();
    for r in rows {
        let mut line = String::new();
        for (i, c) in r.iter().enumerate() {
            if i + 1 == r.len() {
                line.push_str(c);
            } else {
                let _ = write!(line, "{c:w$}  ", w = width[i]);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// The listing of `tools`, `resources`, `resourceTemplates` or `prompts`.
pub fn listing(key: &str, items: &[Value]) -> String {
    if items.is_empty() {
        let what = match key {
            "resourceTemplates" => "resource templates",
            other => other,
        };
        return format!("(no {what})\n");
    }
    let rows: Vec<Vec<String>> = items
        .iter()
        .map(|i| {
            let raw = i.get("description").and_then(Value::as_str).unwrap_or("");
            let desc = peer_text::line(first_line(raw)).into_owned();
            match key {
                "resources" => vec![
                    str_of(i, "uri").into_owned(),
                    str_of(i, "name").into_owned(),
                    str_of(i, "mimeType").into_owned(),
                    desc,
                ],
                "resourceTemplates" => vec![
                    str_of(i, "uriTemplate").into_owned(),
                    str_of(i, "name").into_owned(),
                    str_of(i, "mimeType").into_owned(),
                    desc,
                ],
                "prompts" => {
                    let args: Vec<String> = i
                        .get("arguments")
                        .and_then(Value::as_array)
                        .map(|a| {
                            a.iter()
                                .map(|a| {
                                    let n = str_of(a, "name");
                                    if a.get("required").and_then(Value::as_bool) == Some(true) {
                                        n.into_owned()
                                    } else {
                                        format!("[{n}]")
                                    }
                                })
                                .collect()
                        })
                        .unwrap_or_default();
                    vec![str_of(i, "name").into_owned(), args.join(" "), desc]
                }
                _ => vec![str_of(i, "name").into_owned(), desc],
            }
        })
        .collect();
    table(&rows)
}

/// Content blocks (of a tool result or a prompt message) as text.
pub fn content_block(block: &Value) -> String {
    match str_of(block, "type").as_ref() {
        "text" => text_of(block, "text").into_owned(),
        "image" | "audio" => format!(
            "[{} {}, {} base64 chars]",
            str_of(block, "type"),
            str_of(block, "mimeType"),
            str_of(block, "data").len()
        ),
        "resource_link" => format!("[resource link {}]", str_of(block, "uri")),
        "resource" => {
            let r = block.get("resource").cloned().unwrap_or(Value::Null);
            match r.get("text").and_then(Value::as_str) {
                Some(t) => format!("[resource {}]\n{}", str_of(&r, "uri"), peer_text::block(t)),
                None => format!(
                    "[resource {}, {} base64 chars]",
                    str_of(&r, "uri"),
                    str_of(&r, "blob").len()
                ),
            }
        }
        _ => peer_text::json(&block.to_string()).into_owned(),
    }
}

/// A `tools/call` result as text: its content, else its structured content.
pub fn tool_result(r: &JsonObject) -> String {
    let mut out = String::new();
    let content = r.get("content").and_then(Value::as_array);
    for block in content.into_iter().flatten() {
        out.push_str(&content_block(block));
        out.push('\n');
    }
    if content.is_none_or(|c| c.is_empty()) {
        if let Some(s) = r.get("structuredContent") {
            out.push_str(&peer_text::json(
                &serde_json::to_string_pretty(s).unwrap_or_default(),
            ));
            out.push('\n');
        }
    }
    out
}

/// Prints a typed tool result: its text on stdout, or on stderr after
/// `tool error:` when the tool reported an error.
pub fn print_result(r: &tessera::types::CallToolResult) {
    let o = match serde_json::to_value(r) {
        Ok(Value::Object(o)) => o,
        _ => JsonObject::new(),
    };
    if r.is_error == Some(true) {
        peer_text::eprint(&format!("tool error: {}", tool_result(&o)));
    } else {
        peer_text::print(&tool_result(&o));
    }
}

/// A `resources/read` result as text: text contents as they are, blobs
/// summarised.
pub fn read_result(r: &JsonObject) -> String {
    let mut out = String::new();
    let contents: &[Value] = r
        .get("contents")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    let many = contents.len() > 1;
    for c in contents {
        if many {
            let _ = writeln!(out, "--- {} {}", str_of(c, "uri"), str_of(c, "mimeType"));
        }
        match c.get("text").and_then(Value::as_str) {
            Some(t) => {
                out.push_str(&peer_text::block(t));
                if !t.ends_with('\n') {
                    out.push('\n');
                }
            }
            None => {
                let _ = writeln!(
                    out,
                    "[blob {} {}, {} base64 chars]",
                    str_of(c, "uri"),
                    str_of(c, "mimeType"),
                    str_of(c, "blob").len()
                );
            }
        }
    }
    if contents.is_empty() {
        out.push_str("(no contents)\n");
    }
    out
}

/// A `prompts/get` result as text: the description, then each message.
pub fn prompt_result(r: &JsonObject) -> String {
    let mut out = String::new();
    if let Some(d) = r.get("description").and_then(Value::as_str) {
        let _ = writeln!(out, "# {}", peer_text::block(d));
    }
    for m in r
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let content = m.get("content").cloned().unwrap_or(Value::Null);
        let text = match &content {
            Value::Array(blocks) => blocks
                .iter()
                .map(content_block)
                .collect::<Vec<_>>()
                .join("\n"),
            block => content_block(block),
        };
        let _ = writeln!(out, "{}: {text}", str_of(m, "role"));
    }
    out
}

/// A `completion/complete` result as text: one value a line, then how many
/// more there are.
pub fn completion_result(r: &JsonObject) -> String {
    let c = r.get("completion").cloned().unwrap_or(Value::Null);
    let values: Vec<&str> = c
        .get("values")
        .and_then(Value::as_array)
        .map(|v| v.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut out = String::new();
    for v in &values {
        out.push_str(&peer_text::line(v));
        out.push('\n');
    }
    if values.is_empty() {
        out.push_str("(no completions)\n");
    }
    let total = c.get("total").and_then(Value::as_u64);
    let more = c.get("hasMore").and_then(Value::as_bool) == Some(true);
    match total {
        Some(t) if t as usize > values.len() => {
            let _ = writeln!(out, "({} more)", t as usize - values.len());
        }
        _ if more => out.push_str("(more available)\n"),
        _ => {}
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> JsonObject {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn listings() {
        let tools = [
            json!({"name": "echo", "description": "Echoes\nmore"}),
            json!({"name": "a-long-name"}),
        ];
        assert_eq!(
            listing("tools", &tools),
            "echo         Echoes\na-long-name\n"
        );
        let prompts = [json!({"name": "p", "arguments": [
            {"name": "x", "required": true}, {"name": "y"}], "description": "d"})];
        assert_eq!(listing("prompts", &prompts), "p  x [y]  d\n");
        assert_eq!(
            listing("resourceTemplates", &[]),
            "(no resource templates)\n"
        );
    }

    #[test]
    fn results() {
        let r = obj(json!({"content": [
            {"type": "text", "text": "hi"},
            {"type": "image", "mimeType": "image/png", "data": "AAAA"}
        ]}));
        assert_eq!(tool_result(&r), "hi\n[image image/png, 4 base64 chars]\n");
        let r = obj(json!({"content": [], "structuredContent": {"a": 1}}));
        assert_eq!(tool_result(&r), "{\n  \"a\": 1\n}\n");
        let r = obj(json!({"contents": [{"uri": "x", "text": "body"}]}));
        assert_eq!(read_result(&r), "body\n");
        let r = obj(json!({"description": "D", "messages": [
            {"role": "user", "content": {"type": "text", "text": "q"}}]}));
        assert_eq!(prompt_result(&r), "# D\nuser: q\n");
        let r =
            obj(json!({"completion": {"values": ["paris", "park"], "total": 5, "hasMore": true}}));
        assert_eq!(completion_result(&r), "paris\npark\n(3 more)\n");
    }
}
