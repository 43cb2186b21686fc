//! Text that came from a peer, made safe to print.
//!
//! A server chooses the bytes of its tool results, names, log and progress
//! messages, error messages and elicitation prompts. Printed raw, control
//! characters in them drive the terminal: OSC 52 writes the clipboard, OSC
//! 0/2 sets the title, CSI clears the screen or switches to the alternate
//! screen, OSC 8 hides a link behind other text, and the 8-bit C1 forms do
//! the same without an ESC. Every print path of the CLI passes peer text
//! through this module, on a terminal and through pipes alike:
//!
//! - [`block`] keeps newlines and tabs (multi-line text: tool results,
//!   resource contents, instructions); [`line`] keeps neither (one-line
//!   fields: names, titles, status, log and progress lines).
//! - Every other C0 character, DEL, and every C1 character (U+0080–U+009F)
//!   is shown as a visible escape (`\x1b`, `\x7f`, `\u{9b}`), so the
//!   sequence it would start is printed as inert text. A CRLF line end is
//!   kept as a newline in [`block`].
//! - [`json`] makes a serialised JSON document safe: serde_json already
//!   escapes C0 inside strings; DEL and C1 are escaped as `\u007f` and
//!   `\u0080`…`\u009f`, so the output stays valid JSON with the same value.

use std::borrow::Cow;
use std::fmt::Write as _;

/// Whether `c` is neutralised when it is not an allowed line break or tab.
fn is_control(c: char) -> bool {
    c.is_ascii_control() || ('\u{80}'..='\u{9f}').contains(&c)
}

fn escape(c: char, out: &mut String) {
    if c.is_ascii() {
        let _ = write!(out, "\\x{:02x}", u32::from(c));
    } else {
        let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
    }
}

fn neutralise(s: &str, keep_breaks: bool) -> Cow<'_, str> {
    let keep = |c: char| keep_breaks && (c == '\n' || c == '\t');
    if !s.chars().any(|c| is_control(c) && !keep(c)) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if keep_breaks && c == '\r' && chars.peek() == Some(&'\n') {
            continue;
        }
        if is_control(c) && !keep(c) {
            escape(c, &mut out);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Multi-line peer text: newlines and tabs kept (CRLF becomes a newline),
/// every other control character shown as an escape.
pub fn block(s: &str) -> Cow<'_, str> {
    neutralise(s, true)
}

/// One-line peer text: every control character, newlines and tabs
/// included, shown as an escape, so the text cannot start a line of its own.
pub fn line(s: &str) -> Cow<'_, str> {
    neutralise(s, false)
}

/// Prints `s` on stdout as [`block`] text.
pub fn print(s: &str) {
    print!("{}", block(s));
}

/// Prints `s` on stderr as [`block`] text.
pub fn eprint(s: &str) {
    eprint!("{}", block(s));
}

/// Prints `s` and a newline on stderr as [`block`] text.
pub fn eprintln(s: &str) {
    eprintln!("{}", block(s));
}

/// Stderr for the log lines of the `tessera` process itself (tracing):
/// they quote peers (an upstream's name, a server's error message), so
/// each write is passed through [`block`] like any other peer text. The
/// subscriber writes one whole event per call, so a character is never
/// split between two writes.
pub struct LogStderr;

impl std::io::Write for LogStderr {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        std::io::stderr().write_all(block(&text).as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

/// A serialised JSON document with DEL and C1 characters escaped as
/// `\u007f`/`\u0080`…`\u009f` (serde_json escapes C0 already). Such
/// characters can only occur inside JSON strings, so the result is valid
/// JSON with the same value.
pub fn json(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_control_beyond_json) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if is_control_beyond_json(c) {
            let _ = write!(out, "\\u{:04x}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Control characters serde_json leaves raw (it escapes U+0000–U+001F);
/// raw C0 (as in a document not written by serde_json) is escaped too.
fn is_control_beyond_json(c: char) -> bool {
    (c.is_ascii_control() && c != '\n') || ('\u{7f}'..='\u{9f}').contains(&c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_is_borrowed() {
        assert!(matches!(block("héllo\n\tworld"), Cow::Borrowed(_)));
        assert!(matches!(line("héllo world"), Cow::Borrowed(_)));
        assert!(matches!(json("{\"a\": \"b\"}"), Cow::Borrowed(_)));
    }

    #[test]
    fn escape_sequences_become_inert_text() {
        let osc52 = "x\u{1b}]52;c;ZXZpbA==\u{7}y";
        assert_eq!(block(osc52), "x\\x1b]52;c;ZXZpbA==\\x07y");
        assert_eq!(
            block("\u{1b}[2J\u{1b}[?1049h\u{9b}31m\u{9d}0;t\u{9c}"),
            "\\x1b[2J\\x1b[?1049h\\u{9b}31m\\u{9d}0;t\\u{9c}"
        );
        assert_eq!(block("a\r\nb\rc\u{7f}"), "a\nb\\x0dc\\x7f");
        assert_eq!(line("a\nb\tc"), "a\\x0ab\\x09c");
        for s in [block(osc52), line(osc52)] {
            assert!(!s.chars().any(is_control), "{s}");
        }
    }

    #[test]
    fn json_stays_valid_and_equal() {
        let v = serde_json::json!({"t": "\u{1b}]0;pwned\u{7}\u{7f}\u{9b}2J\n"});
        let text = serde_json::to_string_pretty(&v).unwrap();
        let safe = json(&text);
        assert!(safe.contains("\\u001b") && safe.contains("\\u007f") && safe.contains("\\u009b"));
        assert!(!safe.chars().any(|c| is_control(c) && c != '\n'));
        let back: serde_json::Value = serde_json::from_str(&safe).unwrap();
        assert_eq!(back, v);
    }
}
