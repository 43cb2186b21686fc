//! What a line too long to keep was: the envelope of an oversized message,
//! read as its bytes stream past, so that the answer to a request can fail
//! that request (naming the size limit) instead of leaving it to time out.
//!
//! [`EnvelopeScan`] is a constant-size state machine over JSON text: it
//! follows strings, escapes and nesting, and keeps only the top-level `id`
//! (when it is a number or a short string) and whether a top-level `method`
//! was seen. It never allocates more than a few hundred bytes, whatever the
//! line's length, and never fails: text that is not JSON yields no id.

use tessera_types::RequestId;

/// The longest id value kept (in bytes of JSON text).
const MAX_ID: usize = 256;
/// The longest key compared (`method` and `id` are shorter).
const MAX_KEY: usize = 8;

/// Where the scanner is in the top-level object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    /// Expecting `{` (only whitespace before it).
    Start,
    /// Inside the top-level object, expecting a key (or `}`).
    Key,
    /// A key was read; expecting `:`.
    Colon,
    /// Expecting a member's value.
    Value,
    /// Inside a member's value (nested, a string or a scalar).
    InValue,
    /// After the top-level object, or not an object at all: nothing more.
    Done,
}

/// Scans the bytes of one JSON-RPC message for its top-level `id` and
/// `method`. Feed it every chunk in order with [`EnvelopeScan::feed`].
#[derive(Debug, Clone)]
pub(crate) struct EnvelopeScan {
    slot: Slot,
    /// Nesting below the top-level object, inside a value.
    depth: u32,
    in_string: bool,
    escape: bool,
    /// The key being read (truncated), and whether it was too long.
    key: Vec<u8>,
    key_overflow: bool,
    /// The member the current value belongs to.
    member: Member,
    /// The value of `id` being read.
    value: Vec<u8>,
    value_overflow: bool,
    id: Option<RequestId>,
    has_method: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Member {
    Id,
    Method,
    Other,
}

impl Default for EnvelopeScan {
    fn default() -> Self {
        EnvelopeScan {
            slot: Slot::Start,
            depth: 0,
            in_string: false,
            escape: false,
            key: Vec::with_capacity(MAX_KEY),
            key_overflow: false,
            member: Member::Other,
            value: Vec::new(),
            value_overflow: false,
            id: None,
            has_method: false,
        }
    }
}

impl EnvelopeScan {
    /// Reads the next chunk of the message.
    pub(crate) fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if self.slot == Slot::Done {
                return;
            }
            self.step(b);
        }
    }

    /// The id of the response this message is, if it is one: a top-level
    /// `id` that is a number or a string, and no top-level `method`.
    pub(crate) fn response_id(mut self) -> Option<RequestId> {
        // A scalar id as the last member before the line ended unclosed.
        if self.slot == Slot::InValue && self.member == Member::Id && self.depth == 0 {
            self.finish_value();
        }
        if self.has_method {
            return None;
        }
        self.id
    }

    fn step(&mut self, b: u8) {
        match self.slot {
            Slot::Start => match b {
                b'{' => self.slot = Slot::Key,
                b' ' | b'\t' | b'\r' | b'\n' => {}
                _ => self.slot = Slot::Done,
            },
            Slot::Key => {
                if self.in_string {
                    self.string_byte(b, true);
                } else {
                    match b {
                        b'"' => {
                            self.in_string = true;
                            self.key.clear();
                            self.key_overflow = false;
                        }
                        b'}' => self.slot = Slot::Done,
                        _ => {}
                    }
                }
            }
            Slot::Colon => {
                if b == b':' {
                    self.slot = Slot::Value;
                }
            }
            Slot::Value => match b {
                b' ' | b'\t' | b'\r' | b'\n' => {}
                _ => {
                    self.value.clear();
                    self.value_overflow = false;
                    self.slot = Slot::InValue;
                    self.value_byte(b);
                }
            },
            Slot::InValue => self.value_byte(b),
            Slot::Done => {}
        }
    }

    /// One byte inside a string: `key` strings collect into `self.key`.
    fn string_byte(&mut self, b: u8, key: bool) {
        if self.escape {
            self.escape = false;
        } else if b == b'\\' {
            self.escape = true;
        } else if b == b'"' {
            self.in_string = false;
            if key {
                self.member = match (self.key_overflow, self.key.as_slice()) {
                    (false, b"id") => Member::Id,
                    (false, b"method") => Member::Method,
                    _ => Member::Other,
                };
                if self.member == Member::Method {
                    self.has_method = true;
                }
                self.slot = Slot::Colon;
            }
            return;
        }
        if key {
            if self.key.len() < MAX_KEY {
                self.key.push(b);
            } else {
                self.key_overflow = true;
            }
        }
    }

    fn value_byte(&mut self, b: u8) {
        if self.member == Member::Id && self.depth == 0 {
            if self.value.len() < MAX_ID {
                self.value.push(b);
            } else {
                self.value_overflow = true;
            }
        }
        if self.in_string {
            self.string_byte(b, false);
            if !self.in_string && self.depth == 0 {
                // A top-level string value ended: the member ends here.
                self.finish_value();
                self.slot = Slot::Key;
            }
            return;
        }
        match b {
            b'"' => self.in_string = true,
            b'{' | b'[' => self.depth += 1,
            b'}' | b']' if self.depth > 0 => {
                self.depth -= 1;
                if self.depth == 0 {
                    self.finish_value();
                    self.slot = Slot::Key;
                }
            }
            b',' if self.depth == 0 => {
                if self.member == Member::Id {
                    self.value.pop();
                }
                self.finish_value();
                self.slot = Slot::Key;
            }
            b'}' if self.depth == 0 => {
                // The top-level object closes after a scalar value.
                if self.member == Member::Id {
                    self.value.pop();
                }
                self.finish_value();
                self.slot = Slot::Done;
            }
            _ => {}
        }
    }

    fn finish_value(&mut self) {
        if self.member != Member::Id || self.value_overflow {
            return;
        }
        let text = self.value.trim_ascii();
        self.id = match serde_json::from_slice::<serde_json::Value>(text) {
            Ok(serde_json::Value::Number(n)) => n.as_i64().map(RequestId::Number),
            Ok(serde_json::Value::String(s)) => Some(RequestId::String(s)),
            _ => None,
        };
        self.member = Member::Other;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan_in_chunks(text: &str, chunk: usize) -> Option<RequestId> {
        let mut s = EnvelopeScan::default();
        for c in text.as_bytes().chunks(chunk) {
            s.feed(c);
        }
        s.response_id()
    }

    fn scan(text: &str) -> Option<RequestId> {
        let whole = scan_in_chunks(text, text.len().max(1));
        for chunk in [1, 2, 3, 7] {
            assert_eq!(
                scan_in_chunks(text, chunk),
                whole,
                "{text} in chunks of {chunk}"
            );
        }
        whole
    }

    #[test]
    fn finds_the_id_of_a_response_wherever_it_is() {
        let big = "x".repeat(10_000);
        assert_eq!(
            scan(&format!(
                r#"{{"jsonrpc":"2.0","id":7,"result":{{"t":"{big}"}}}}"#
            )),
            Some(RequestId::Number(7))
        );
        // The TypeScript SDK writes the result first.
        assert_eq!(
            scan(&format!(
                r#"{{"result":{{"t":"{big} \"id\":9, [{{"}},"jsonrpc":"2.0","id":"a\"b"}}"#
            )),
            Some(RequestId::String("a\"b".into()))
        );
        assert_eq!(
            scan(r#" { "id" : 12 , "error" : {"code":-1,"message":"m"} } "#),
            Some(RequestId::Number(12))
        );
        // The line was cut after the id.
        assert_eq!(scan(r#"{"id":3"#), Some(RequestId::Number(3)));
    }

    #[test]
    fn ignores_what_is_not_a_response() {
        // Nested ids, requests and notifications, ids of other types.
        assert_eq!(scan(r#"{"result":{"id":1},"jsonrpc":"2.0"}"#), None);
        assert_eq!(scan(r#"{"id":1,"method":"x","params":{}}"#), None);
        assert_eq!(
            scan(r#"{"method":"notifications/message","params":{"id":4}}"#),
            None
        );
        assert_eq!(scan(r#"{"id":null,"error":{}}"#), None);
        assert_eq!(scan(r#"{"id":1.5,"result":{}}"#), None);
        assert_eq!(
            scan(&format!(r#"{{"id":"{}","result":{{}}}}"#, "k".repeat(300))),
            None
        );
        // Not an object, or not JSON at all.
        assert_eq!(scan(r#"[{"id":1,"result":{}}]"#), None);
        assert_eq!(scan("garbage \"id\":1"), None);
        assert_eq!(scan(""), None);
    }
}
