//! Counting the elements of a JSON-RPC batch while its body streams in.
//!
//! [`BatchScan`] is fed the body's chunks as they arrive and counts the
//! elements of a top-level JSON array without building anything: it keeps
//! the nesting depth, whether it is inside a string and whether the previous
//! byte was a backslash in one, so a chunk may end anywhere (inside a string,
//! between a backslash and the byte it escapes, between two brackets). Its
//! state is a few words, whatever the body.
//!
//! It checks nothing: a body it counts within the limit is read and checked
//! as JSON afterwards, as before. For valid JSON its count is the array's
//! length; for malformed JSON it is some number of element starts (a byte
//! that is not whitespace, a comma or a closing bracket after the array's
//! opening bracket or after one of its commas), which is enough to refuse a
//! body that is over the limit either way.

/// Where the scan is in the body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Only whitespace so far.
    Start,
    /// Inside the top-level array.
    Array,
    /// The body is not an array, or the array has closed: nothing more to count.
    Done,
}

/// The element count of a top-level JSON array, fed chunk by chunk.
#[derive(Debug, Clone)]
pub(crate) struct BatchScan {
    phase: Phase,
    /// Open arrays and objects, the top-level array included.
    depth: usize,
    in_string: bool,
    /// The previous byte was a backslash inside a string.
    escaped: bool,
    /// At depth 1 after `[` or `,`: the next significant byte starts an element.
    expect_element: bool,
    elements: usize,
    closed: bool,
}

impl Default for BatchScan {
    fn default() -> Self {
        BatchScan {
            phase: Phase::Start,
            depth: 0,
            in_string: false,
            escaped: false,
            expect_element: false,
            elements: 0,
            closed: false,
        }
    }
}

impl BatchScan {
    /// Elements seen so far (0 for a body that is not an array).
    pub(crate) fn elements(&self) -> usize {
        self.elements
    }

    /// Whether the top-level array's closing bracket was seen (the count is final).
    pub(crate) fn closed(&self) -> bool {
        self.closed
    }

    /// Whether the body is known not to be an array.
    #[cfg(test)]
    pub(crate) fn not_a_batch(&self) -> bool {
        self.phase == Phase::Done && !self.closed
    }

    /// Scans the next chunk of the body and returns the elements seen so far.
    pub(crate) fn feed(&mut self, chunk: &[u8]) -> usize {
        let mut i = 0;
        while i < chunk.len() && self.phase != Phase::Done {
            if self.in_string {
                i = self.skip_string(chunk, i);
                continue;
            }
            let b = chunk[i];
            i += 1;
            if matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
                continue;
            }
            if self.phase == Phase::Start {
                if b == b'[' {
                    self.phase = Phase::Array;
                    self.depth = 1;
                    self.expect_element = true;
                } else {
                    self.phase = Phase::Done;
                }
                continue;
            }
            if self.expect_element && self.depth == 1 && !matches!(b, b',' | b']' | b'}') {
                self.elements += 1;
                self.expect_element = false;
            }
            match b {
                b'"' => self.in_string = true,
                b'[' | b'{' => self.depth += 1,
                b']' | b'}' => {
                    self.depth -= 1;
                    if self.depth == 0 {
                        self.closed = true;
                        self.phase = Phase::Done;
                    }
                }
                b',' if self.depth == 1 => self.expect_element = true,
                _ => {}
            }
        }
        self.elements
    }

    /// Moves past string content from `i`: to just after the closing quote
    /// (leaving the string), or to the chunk's end.
    fn skip_string(&mut self, chunk: &[u8], mut i: usize) -> usize {
        if self.escaped {
            self.escaped = false;
            i += 1;
        }
        while i < chunk.len() {
            match memchr::memchr2(b'"', b'\\', &chunk[i..]) {
                None => return chunk.len(),
                Some(at) if chunk[i + at] == b'"' => {
                    self.in_string = false;
                    return i + at + 1;
                }
                Some(at) => {
                    // A backslash: the next byte, in this chunk or the next, is escaped.
                    if i + at + 1 < chunk.len() {
                        i += at + 2;
                    } else {
                        self.escaped = true;
                        return chunk.len();
                    }
                }
            }
        }
        i
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The count after feeding `body` in pieces cut at `cuts`.
    fn count_cut(body: &[u8], cuts: &[usize]) -> (usize, bool) {
        let mut scan = BatchScan::default();
        let mut from = 0;
        for &c in cuts {
            scan.feed(&body[from..c]);
            from = c;
        }
        scan.feed(&body[from..]);
        (scan.elements(), scan.closed())
    }

    /// The count for every way of cutting `body` into two and into three
    /// pieces, checked to be the same as in one piece.
    fn count_everywhere(body: &str) -> (usize, bool) {
        let b = body.as_bytes();
        let whole = count_cut(b, &[]);
        for i in 0..=b.len() {
            assert_eq!(count_cut(b, &[i]), whole, "{body:?} cut at {i}");
            for j in i..=b.len() {
                assert_eq!(count_cut(b, &[i, j]), whole, "{body:?} cut at {i}, {j}");
            }
        }
        // One byte at a time.
        let mut scan = BatchScan::default();
        for byte in b {
            scan.feed(std::slice::from_ref(byte));
        }
        assert_eq!((scan.elements(), scan.closed()), whole, "{body:?} bytewise");
        whole
    }

    #[test]
    fn valid_json_is_counted_as_its_length_however_it_is_cut() {
        let table: &[(&str, usize)] = &[
            ("[]", 0),
            ("[ ]", 0),
            (" \r\n\t[ \n ] ", 0),
            ("[1]", 1),
            ("[1,2,3]", 3),
            ("[ 1 , 2 , 3 ]", 3),
            ("[\"a,b\",\"]\",\"[\"]", 3),
            (r#"["\"", "\\", "\\\"", "\\\\"]"#, 4),
            (r#"["\"]\",[", "x\\"]"#, 2),
            (r#"["\u005d,\u0022", 2]"#, 2),
            ("[[1,2],[3,[4,5]],{}]", 3),
            (r#"[{"a":[1,2,{"b":"],"}]},{"c":"\\"}]"#, 2),
            (
                r#"[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","method":"x"}]"#,
                2,
            ),
            ("[true,false,null,-1.5e3,\"\"]", 5),
            ("[\"é ü 雪 \\u00e9\",1]", 2),
        ];
        for (body, n) in table {
            assert_eq!(count_everywhere(body), (*n, true), "{body}");
            let parsed: serde_json::Value = serde_json::from_str(body).unwrap();
            assert_eq!(parsed.as_array().unwrap().len(), *n, "{body}");
        }
    }

    #[test]
    fn a_body_that_is_not_an_array_counts_nothing() {
        for body in [
            "",
            "   ",
            "{}",
            r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":[1,2,3]}}"#,
            "\"[1,2,3]\"",
            "1",
            "x[1,2]",
        ] {
            let (n, closed) = count_everywhere(body);
            assert_eq!((n, closed), (0, false), "{body:?}");
        }
        let mut scan = BatchScan::default();
        scan.feed(b" {\"a\":[1,2,3]}");
        assert!(scan.not_a_batch());
        let mut scan = BatchScan::default();
        scan.feed(b"  ");
        assert!(!scan.not_a_batch(), "not decided on whitespace");
    }

    #[test]
    fn malformed_input_is_counted_without_panicking_and_bounded() {
        let table: &[(&str, usize, bool)] = &[
            ("[", 0, false),
            ("[1,2", 2, false),
            ("[1,2,", 2, false),
            ("[,,,]", 0, true),
            ("[1,,2]", 2, true),
            ("[1 2 3]", 1, true),
            ("[1,2}", 2, true),
            ("[1,2]]]]", 2, true),
            ("[1,2],3,4", 2, true),
            ("[\"unterminated,1,2,3", 1, false),
            ("[\"a\\", 1, false),
            ("[}}}}", 0, true),
            ("[{]]]]", 1, true),
            ("[\u{0}, \u{7f}]", 2, true),
        ];
        for (body, n, closed) in table {
            assert_eq!(count_everywhere(body), (*n, *closed), "{body:?}");
        }
        // Bytes that are not UTF-8 at all.
        let mut scan = BatchScan::default();
        assert_eq!(scan.feed(&[b'[', 0xff, b',', 0xfe, b'"', 0x80, b'"']), 2);
        // Deep nesting holds no memory per level.
        let deep = format!("[{}{}, 2]", "[".repeat(100_000), "]".repeat(100_000));
        let mut scan = BatchScan::default();
        assert_eq!(scan.feed(deep.as_bytes()), 2);
        assert!(scan.closed());
    }

    #[test]
    fn an_escape_split_from_its_byte_is_kept_across_chunks() {
        // The backslash ends one chunk; the escaped quote starts the next.
        let mut scan = BatchScan::default();
        scan.feed(b"[\"a\\");
        scan.feed(b"\"],[");
        assert_eq!(scan.elements(), 1, "still inside the first string");
        scan.feed(b",2]");
        assert_eq!((scan.elements(), scan.closed()), (1, false));
        scan.feed(b"\",3]");
        assert_eq!((scan.elements(), scan.closed()), (2, true));
        // An escaped backslash ends the chunk: the quote after it closes the string.
        let mut scan = BatchScan::default();
        scan.feed(b"[\"a\\");
        scan.feed(b"\\");
        scan.feed(b"\",2,3]");
        assert_eq!((scan.elements(), scan.closed()), (3, true));
    }

    #[test]
    fn generated_batches_match_the_parser_for_every_cut() {
        // Elements that exercise every state; batches of them in several
        // orders and spacings, each cut at every point.
        let parts = [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a,]\"[\\"}}}"#,
            r#""\\\\\"""#,
            "[[],[[]],{}]",
            "-0.5",
            r#"{"k":"\u005b"}"#,
        ];
        let mut seed = 0x2545_f491_u64;
        for round in 0..40 {
            let n = round % 7;
            let mut body = String::from("[");
            for k in 0..n {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                if k > 0 {
                    body.push_str([",", " , ", ",\n"][(seed % 3) as usize]);
                }
                body.push_str(parts[(seed >> 8) as usize % parts.len()]);
            }
            body.push(']');
            let expected = serde_json::from_str::<serde_json::Value>(&body)
                .unwrap()
                .as_array()
                .unwrap()
                .len();
            assert_eq!(expected, n);
            let b = body.as_bytes();
            for i in 0..=b.len() {
                assert_eq!(count_cut(b, &[i]), (n, true), "{body} cut at {i}");
            }
        }
    }
}
