//! How results are shown: `--json` prints the protocol result as one JSON
//! document; otherwise a readable table or text. Everything a server sent
//! passes through [`crate::peer_text`]: one-line fields through
//! `peer_text::line`, whole texts through `peer_text::block` when printed.

use std::borrow::Cow;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tessera::types::JsonObject;

use crate::peer_text;
use tessera::types::loose;

/// Prints one JSON document on stdout.
/// DEL and C1 characters in strings are written as `\u007f`…`\u009f`
/// escapes (C0 ones as `\u001b` and the like), so the document stays valid
/// JSON and carries no raw terminal control.
pub fn json(v: &Value) {
    let text = serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string());
    println!("{}", peer_text::json(&text));
}

/// Prints any serialisable document on stdout, as [`json`] does (through a
/// [`Value`], so that members come in name order, as they always have).
pub fn json_of<T: Serialize + ?Sized>(v: &T) {
    match serde_json::to_value(v) {
        Ok(v) => json(&v),
        Err(e) => eprintln!("error: cannot write the JSON output: {e}"),
    }
}

/// Prints a JSON object on stdout.
pub fn json_object(o: &JsonObject) {
    json(&Value::Object(o.clone()));
}

/// A member as text, when it is a string.
fn text(v: &Option<Value>) -> Option<&str> {
    v.as_ref().and_then(Value::as_str)
}

/// A member as one line of inert text (empty when missing or not a string).
fn line_of(v: &Option<Value>) -> Cow<'_, str> {
    peer_text::line(text(v).unwrap_or(""))
}

/// A member as multi-line inert text (empty when missing or not a string).
fn block_of(v: &Option<Value>) -> Cow<'_, str> {
    peer_text::block(text(v).unwrap_or(""))
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

/// What a listing shows of a tool, resource, template or prompt (read
/// leniently: each member as sent).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Item {
    #[serde(default)]
    name: Option<Value>,
    #[serde(default)]
    description: Option<Value>,
    #[serde(default)]
    uri: Option<Value>,
    #[serde(default)]
    uri_template: Option<Value>,
    #[serde(default)]
    mime_type: Option<Value>,
    #[serde(default)]
    arguments: Option<Value>,
}

/// A prompt's argument, as a listing shows it.
#[derive(Debug, Default, Deserialize)]
struct Argument {
    #[serde(default)]
    name: Option<Value>,
    #[serde(default)]
    required: Option<Value>,
}

/// A content block (of a tool result or a prompt message), read leniently.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Block {
    #[serde(rename = "type", default)]
    kind: Option<Value>,
    #[serde(default)]
    text: Option<Value>,
    #[serde(default)]
    mime_type: Option<Value>,
    #[serde(default)]
    data: Option<Value>,
    #[serde(default)]
    uri: Option<Value>,
    #[serde(default)]
    resource: Option<Value>,
}

/// The contents of a resource (embedded, or read), read leniently.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Contents {
    #[serde(default)]
    uri: Option<Value>,
    #[serde(default)]
    mime_type: Option<Value>,
    #[serde(default)]
    text: Option<Value>,
    #[serde(default)]
    blob: Option<Value>,
}

/// The members of a `tools/call` result shown.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ToolResult {
    #[serde(default)]
    is_error: Option<Value>,
    #[serde(default)]
    content: Option<Value>,
    #[serde(default, deserialize_with = "tessera::types::loose::present_value")]
    structured_content: Option<Value>,
}

/// The members of a `resources/read` result shown.
#[derive(Debug, Default, Deserialize)]
struct ReadResult {
    #[serde(default)]
    contents: Option<Value>,
}

/// The members of a `prompts/get` result shown.
#[derive(Debug, Default, Deserialize)]
struct PromptResult {
    #[serde(default)]
    description: Option<Value>,
    #[serde(default)]
    messages: Option<Value>,
}

/// A prompt message.
#[derive(Debug, Default, Deserialize)]
struct Message {
    #[serde(default)]
    role: Option<Value>,
    #[serde(default)]
    content: Option<Value>,
}

/// The members of a `completion/complete` result shown.
#[derive(Debug, Default, Deserialize)]
struct CompleteResult {
    #[serde(default)]
    completion: Option<Value>,
}

/// A completion.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Completion {
    #[serde(default)]
    values: Option<Value>,
    #[serde(default)]
    total: Option<Value>,
    #[serde(default)]
    has_more: Option<Value>,
}

/// `v`'s items when it is an array.
fn items(v: &Option<Value>) -> Option<&Vec<Value>> {
    v.as_ref().and_then(Value::as_array)
}

/// A result read as its view (a default view when its shape differs).
fn view<'a, T: Deserialize<'a> + Default>(r: &'a JsonObject) -> T {
    T::deserialize(r).unwrap_or_default()
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
pub fn listing(key: &str, items_listed: &[Value]) -> String {
    if items_listed.is_empty() {
        let what = match key {
            "resourceTemplates" => "resource templates",
            other => other,
        };
        return format!("(no {what})\n");
    }
    let rows: Vec<Vec<String>> = items_listed
        .iter()
        .map(|i| {
            let i: Item = loose::view_or_default(i);
            let raw = text(&i.description).unwrap_or("");
            let desc = peer_text::line(first_line(raw)).into_owned();
            match key {
                "resources" => vec![
                    line_of(&i.uri).into_owned(),
                    line_of(&i.name).into_owned(),
                    line_of(&i.mime_type).into_owned(),
                    desc,
                ],
                "resourceTemplates" => vec![
                    line_of(&i.uri_template).into_owned(),
                    line_of(&i.name).into_owned(),
                    line_of(&i.mime_type).into_owned(),
                    desc,
                ],
                "prompts" => {
                    let args: Vec<String> = items(&i.arguments)
                        .map(|a| {
                            a.iter()
                                .map(|a| {
                                    let a: Argument = loose::view_or_default(a);
                                    let n = line_of(&a.name);
                                    if a.required.as_ref().and_then(Value::as_bool) == Some(true) {
                                        n.into_owned()
                                    } else {
                                        format!("[{n}]")
                                    }
                                })
                                .collect()
                        })
                        .unwrap_or_default();
                    vec![line_of(&i.name).into_owned(), args.join(" "), desc]
                }
                _ => vec![line_of(&i.name).into_owned(), desc],
            }
        })
        .collect();
    table(&rows)
}

/// Content blocks (of a tool result or a prompt message) as text.
pub fn content_block(block: &Value) -> String {
    let b: Block = loose::view_or_default(block);
    match line_of(&b.kind).as_ref() {
        "text" => block_of(&b.text).into_owned(),
        "image" | "audio" => format!(
            "[{} {}, {} base64 chars]",
            line_of(&b.kind),
            line_of(&b.mime_type),
            line_of(&b.data).len()
        ),
        "resource_link" => format!("[resource link {}]", line_of(&b.uri)),
        "resource" => {
            let r: Contents = b
                .resource
                .as_ref()
                .map(loose::view_or_default)
                .unwrap_or_default();
            match text(&r.text) {
                Some(t) => format!("[resource {}]\n{}", line_of(&r.uri), peer_text::block(t)),
                None => format!(
                    "[resource {}, {} base64 chars]",
                    line_of(&r.uri),
                    line_of(&r.blob).len()
                ),
            }
        }
        _ => peer_text::json(&block.to_string()).into_owned(),
    }
}

/// A `tools/call` result as text: its content, else its structured content.
pub fn tool_result(r: &JsonObject) -> String {
    let r: ToolResult = view(r);
    let mut out = String::new();
    let content = items(&r.content);
    for block in content.into_iter().flatten() {
        out.push_str(&content_block(block));
        out.push('\n');
    }
    if content.is_none_or(|c| c.is_empty()) {
        if let Some(s) = &r.structured_content {
            out.push_str(&peer_text::json(
                &serde_json::to_string_pretty(s).unwrap_or_default(),
            ));
            out.push('\n');
        }
    }
    out
}

/// Whether a `tools/call` result says the tool failed (`isError: true`).
pub fn is_tool_error(r: &JsonObject) -> bool {
    let r: ToolResult = view(r);
    r.is_error.as_ref().and_then(Value::as_bool) == Some(true)
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
    let r: ReadResult = view(r);
    let mut out = String::new();
    let contents: &[Value] = items(&r.contents).map(Vec::as_slice).unwrap_or(&[]);
    let many = contents.len() > 1;
    for c in contents {
        let c: Contents = loose::view_or_default(c);
        if many {
            let _ = writeln!(out, "--- {} {}", line_of(&c.uri), line_of(&c.mime_type));
        }
        match text(&c.text) {
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
                    line_of(&c.uri),
                    line_of(&c.mime_type),
                    line_of(&c.blob).len()
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
    let r: PromptResult = view(r);
    let mut out = String::new();
    if let Some(d) = text(&r.description) {
        let _ = writeln!(out, "# {}", peer_text::block(d));
    }
    for m in items(&r.messages).into_iter().flatten() {
        let m: Message = loose::view_or_default(m);
        let content = m.content.clone().unwrap_or(Value::Null);
        let text = match &content {
            Value::Array(blocks) => blocks
                .iter()
                .map(content_block)
                .collect::<Vec<_>>()
                .join("\n"),
            block => content_block(block),
        };
        let _ = writeln!(out, "{}: {text}", line_of(&m.role));
    }
    out
}

/// A `completion/complete` result as text: one value a line, then how many
/// more there are.
pub fn completion_result(r: &JsonObject) -> String {
    let r: CompleteResult = view(r);
    let c: Completion = r
        .completion
        .as_ref()
        .map(loose::view_or_default)
        .unwrap_or_default();
    let values: Vec<&str> = items(&c.values)
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
    let total = c.total.as_ref().and_then(Value::as_u64);
    let more = c.has_more.as_ref().and_then(Value::as_bool) == Some(true);
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
