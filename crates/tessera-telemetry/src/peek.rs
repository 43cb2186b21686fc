//! What telemetry reads from a result that is still JSON text (a proxy's
//! pass-through): `isError`, `resultType` and `task.taskId` at the top
//! level, found by one pass over the bytes that skips every other value
//! without building it. Text that is not a well-formed object yields what
//! was found before the fault.

/// The members of a result that telemetry records.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct TopLevel {
    /// `"isError": true`.
    pub is_error: bool,
    /// `"resultType": "input_required"`.
    pub input_required: bool,
    /// `task.taskId`, decoded.
    pub task_id: Option<String>,
}

/// Reads the top level of the object `text`.
pub(crate) fn top_level(text: &str) -> TopLevel {
    let mut out = TopLevel::default();
    members(text.as_bytes(), |key, value| match key {
        b"isError" => out.is_error = value == b"true",
        b"resultType" => out.input_required = value == b"\"input_required\"",
        b"task" => {
            members(value, |k, v| {
                if k == b"taskId" {
                    out.task_id = string(v);
                }
            });
        }
        _ => {}
    });
    out
}

/// The text of a JSON string token, decoded.
fn string(token: &[u8]) -> Option<String> {
    let t = std::str::from_utf8(token).ok()?;
    if !t.starts_with('"') {
        return None;
    }
    if !t.contains('\\') {
        return t.get(1..t.len().checked_sub(1)?).map(str::to_owned);
    }
    serde_json::from_str(t).ok()
}

/// Calls `f(key, value)` for each member of the object `b` (keys as they
/// are written, without their quotes; a key written with escapes is
/// decoded), until the object ends or the text stops making sense.
fn members<'a>(b: &'a [u8], mut f: impl FnMut(&[u8], &'a [u8])) {
    let mut i = skip_ws(b, 0);
    if b.get(i) != Some(&b'{') {
        return;
    }
    i += 1;
    loop {
        i = skip_ws(b, i);
        match b.get(i) {
            Some(b'"') => {}
            _ => return,
        }
        let Some(key_end) = string_end(b, i) else {
            return;
        };
        let raw_key = &b[i..key_end];
        i = skip_ws(b, key_end);
        if b.get(i) != Some(&b':') {
            return;
        }
        i = skip_ws(b, i + 1);
        let Some(value_end) = value_end(b, i) else {
            return;
        };
        let value = &b[i..value_end];
        if raw_key.contains(&b'\\') {
            if let Some(k) = string(raw_key) {
                f(k.as_bytes(), value);
            }
        } else {
            f(&raw_key[1..raw_key.len() - 1], value);
        }
        i = skip_ws(b, value_end);
        match b.get(i) {
            Some(b',') => i += 1,
            _ => return,
        }
    }
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while matches!(b.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        i += 1;
    }
    i
}

/// The end (exclusive) of the string starting at the quote `b[i]`.
fn string_end(b: &[u8], mut i: usize) -> Option<usize> {
    i += 1;
    loop {
        i += memchr::memchr2(b'"', b'\\', &b[i..])?;
        if b[i] == b'\\' {
            i += 2;
            if i > b.len() {
                return None;
            }
        } else {
            return Some(i + 1);
        }
    }
}

/// The end (exclusive) of the value starting at `b[i]`.
fn value_end(b: &[u8], i: usize) -> Option<usize> {
    match b.get(i)? {
        b'"' => string_end(b, i),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut j = i;
            loop {
                match b.get(j)? {
                    b'"' => {
                        j = string_end(b, j)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(j + 1);
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
        }
        _ => {
            let mut j = i;
            while !matches!(
                b.get(j),
                None | Some(b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
            ) {
                j += 1;
            }
            (j > i).then_some(j)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_top_level_only() {
        let t = top_level(
            r#"{"content":[{"type":"text","text":"\"isError\":true, {\"task\":1}"}],"isError":true}"#,
        );
        assert!(t.is_error);
        assert!(!t.input_required);
        let t = top_level(r#"{"content":[{"isError":true}],"structuredContent":{"isError":true}}"#);
        assert_eq!(t, TopLevel::default());
        let t = top_level(r#"{ "isError" : false , "content" : [ ] }"#);
        assert!(!t.is_error);
    }

    #[test]
    fn reads_rounds_and_tasks() {
        let t = top_level(r#"{"resultType":"input_required","inputRequests":{"a":{}}}"#);
        assert!(t.input_required);
        let t = top_level(r#"{"task":{"status":"working","taskId":"t\u0031"},"x":[1,{"y":"}"}]}"#);
        assert_eq!(t.task_id.as_deref(), Some("t1"));
        // A key spelled with escapes is still the key.
        let t = top_level(r#"{"is\u0045rror":true}"#);
        assert!(t.is_error);
    }

    #[test]
    fn bad_text_yields_what_came_before() {
        assert_eq!(top_level(""), TopLevel::default());
        assert_eq!(top_level("[1]"), TopLevel::default());
        assert!(top_level(r#"{"isError":true,"content":[{"#).is_error);
        assert_eq!(
            top_level(r#"{"content":"unterminated"#),
            TopLevel::default()
        );
        assert_eq!(top_level(r#"{"a":}"#), TopLevel::default());
        assert_eq!(top_level(r#"{"a":"\"#), TopLevel::default());
        assert_eq!(top_level(r#"{"a":[}}}]]]"#), TopLevel::default());
    }
}
