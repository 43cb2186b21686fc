//! Server-Sent Events: the encoder the server writes with and an incremental
//! decoder (for clients and tests), per the WHATWG event-stream format.
//!
//! ```
//! use tessera_http::sse::{SseDecoder, SseEvent};
//!
//! let mut wire = Vec::new();
//! SseEvent::data(br#"{"jsonrpc":"2.0","method":"ping"}"#).id("3-1").encode_into(&mut wire);
//! let mut decoder = SseDecoder::new();
//! let frames = decoder.feed(&wire)?;
//! assert_eq!(frames[0].id.as_deref(), Some("3-1"));
//! assert_eq!(frames[0].data, r#"{"jsonrpc":"2.0","method":"ping"}"#);
//! # Ok::<(), tessera_http::sse::SseTooLarge>(())
//! ```

use std::time::Duration;

use bytes::Bytes;

/// One event to write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent<'a> {
    /// `id:` — the event id a client echoes in `Last-Event-ID`.
    pub id: Option<&'a str>,
    /// `event:` — the event type (absent means `message`).
    pub event: Option<&'a str>,
    /// `data:` — the payload; every line becomes its own `data:` line.
    pub data: &'a [u8],
    /// `retry:` — how long a client waits before reconnecting.
    pub retry: Option<Duration>,
}

impl<'a> SseEvent<'a> {
    /// An event carrying `data`.
    pub fn data(data: &'a [u8]) -> Self {
        SseEvent {
            id: None,
            event: None,
            data,
            retry: None,
        }
    }

    /// Sets the id.
    pub fn id(mut self, id: &'a str) -> Self {
        self.id = Some(id);
        self
    }

    /// Sets the event type.
    pub fn event(mut self, event: &'a str) -> Self {
        self.event = Some(event);
        self
    }

    /// Sets the reconnection delay.
    pub fn retry(mut self, retry: Duration) -> Self {
        self.retry = Some(retry);
        self
    }

    /// Appends the encoded event (terminated by a blank line) to `out`.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        // Ids and event names are ours, but never let a line break through.
        if let Some(id) = self.id {
            out.extend_from_slice(b"id: ");
            push_single_line(out, id);
            out.push(b'\n');
        }
        if let Some(event) = self.event {
            out.extend_from_slice(b"event: ");
            push_single_line(out, event);
            out.push(b'\n');
        }
        if let Some(retry) = self.retry {
            out.extend_from_slice(b"retry: ");
            let mut digits = [0u8; 20];
            let mut at = digits.len();
            // In 64 bits: dividing the `u128` of `as_millis` is a call per digit.
            let mut n = u64::try_from(retry.as_millis()).unwrap_or(u64::MAX);
            loop {
                at -= 1;
                digits[at] = b'0' + (n % 10) as u8;
                n /= 10;
                if n == 0 {
                    break;
                }
            }
            out.extend_from_slice(&digits[at..]);
            out.push(b'\n');
        }
        if self.data.is_empty() {
            out.extend_from_slice(b"data: \n");
        } else {
            for line in split_lines(self.data) {
                out.extend_from_slice(b"data: ");
                out.extend_from_slice(line);
                out.push(b'\n');
            }
        }
        out.push(b'\n');
    }

    /// The encoded event.
    pub fn to_bytes(&self) -> Bytes {
        // Room for one data line and every field (a longer one grows it).
        let fields = self.id.map_or(0, |i| i.len() + 5)
            + self.event.map_or(0, |e| e.len() + 8)
            + self.retry.map_or(0, |_| 48);
        let mut out = Vec::with_capacity(self.data.len() + fields + 9);
        self.encode_into(&mut out);
        Bytes::from(out)
    }
}

/// Appends to `out` one event with `id` whose data is what `write` appends
/// (one JSON message), and returns the whole of `out` with the data alone
/// (a slice of it, or its own copy when the data has line breaks). Writes
/// what [`SseEvent::encode_into`] writes for that data, without the data's
/// own buffer and copy. A failing `write` leaves the data empty.
pub(crate) fn encode_message<E>(
    mut out: Vec<u8>,
    id: Option<&str>,
    write: impl FnOnce(&mut Vec<u8>) -> Result<(), E>,
) -> (Bytes, Bytes) {
    let head = out.len();
    if let Some(id) = id {
        out.extend_from_slice(b"id: ");
        push_single_line(&mut out, id);
        out.push(b'\n');
    }
    out.extend_from_slice(b"data: ");
    let start = out.len();
    if write(&mut out).is_err() {
        out.truncate(start);
    }
    let end = out.len();
    if memchr::memchr2(b'\n', b'\r', &out[start..end]).is_none() {
        out.extend_from_slice(b"\n\n");
        let body = Bytes::from(out);
        let data = body.slice(start..end);
        return (body, data);
    }
    // A message written with line breaks (raw JSON passed through): one
    // `data:` line per line, as the general encoder writes it.
    let data = Bytes::from(out.split_off(start));
    out.truncate(head);
    let mut event = SseEvent::data(&data);
    event.id = id;
    event.encode_into(&mut out);
    (Bytes::from(out), data)
}

/// A comment line (`: text`), which clients ignore; used as a keep-alive.
pub fn comment(text: &str) -> Bytes {
    let mut out = Vec::with_capacity(text.len() + 4);
    out.push(b':');
    if !text.is_empty() {
        out.push(b' ');
        push_single_line(&mut out, text);
    }
    out.extend_from_slice(b"\n\n");
    Bytes::from(out)
}

/// A bare `retry:` field (no event is dispatched for it).
pub fn retry_field(retry: Duration) -> Bytes {
    Bytes::from(format!("retry: {}\n\n", retry.as_millis()))
}

fn push_single_line(out: &mut Vec<u8>, s: &str) {
    if memchr::memchr2(b'\n', b'\r', s.as_bytes()).is_none() {
        out.extend_from_slice(s.as_bytes());
    } else {
        out.extend(s.bytes().filter(|b| *b != b'\n' && *b != b'\r'));
    }
}

/// The lines of `data`, split at `\n` (a `\r` before it dropped); found
/// with `memchr` (a message is one long line, nearly always).
fn split_lines(data: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = Some(data);
    std::iter::from_fn(move || {
        let text = rest?;
        let line = match memchr::memchr(b'\n', text) {
            Some(at) => {
                rest = Some(&text[at + 1..]);
                &text[..at]
            }
            None => {
                rest = None;
                text
            }
        };
        Some(line.strip_suffix(b"\r").unwrap_or(line))
    })
}

/// One decoded block of fields, ended by a blank line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SseFrame {
    /// The `id:` field of this block, if any.
    pub id: Option<String>,
    /// The `event:` field, if any.
    pub event: Option<String>,
    /// The `data:` lines joined with `\n` (empty for a priming event).
    pub data: String,
    /// The `retry:` field in milliseconds, if any.
    pub retry: Option<u64>,
}

/// The most bytes an [`SseDecoder`] holds for one block by default (its
/// unfinished line and the data read so far): 16 MiB, the largest message
/// a connection takes by default.
pub const DEFAULT_MAX_EVENT_BYTES: usize = 16 * 1024 * 1024;

/// A block of an event stream grew past its decoder's limit
/// ([`SseDecoder::with_limit`]); the decoder dropped what it held of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SseTooLarge {
    /// The limit, in bytes.
    pub limit: usize,
}

impl std::fmt::Display for SseTooLarge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "an event of the stream is over {} bytes", self.limit)
    }
}

impl std::error::Error for SseTooLarge {}

/// An incremental event-stream parser: feed it bytes as they arrive, get back
/// every complete block. Comment lines are skipped; a block with no field at
/// all is not reported. What it holds of an unfinished block is bounded
/// ([`SseDecoder::with_limit`]).
#[derive(Debug)]
pub struct SseDecoder {
    buf: Vec<u8>,
    current: SseFrame,
    has_field: bool,
    has_data: bool,
    /// A `\r` ended the last chunk: a `\n` starting the next one belongs to it.
    pending_cr: bool,
    /// The most bytes held for one block.
    limit: usize,
    /// A block read since the last [`SseDecoder::feed`] began went past
    /// `limit`.
    over: bool,
}

impl Default for SseDecoder {
    fn default() -> Self {
        SseDecoder::with_limit(DEFAULT_MAX_EVENT_BYTES)
    }
}

impl SseDecoder {
    /// A new decoder holding at most [`DEFAULT_MAX_EVENT_BYTES`] of a block.
    pub fn new() -> Self {
        SseDecoder::default()
    }

    /// A new decoder holding at most `limit` bytes of a block (its
    /// unfinished line and the data lines read so far).
    pub fn with_limit(limit: usize) -> Self {
        SseDecoder {
            buf: Vec::new(),
            current: SseFrame::default(),
            has_field: false,
            has_data: false,
            pending_cr: false,
            limit,
            over: false,
        }
    }

    /// Feeds bytes; returns the blocks they complete, or [`SseTooLarge`]
    /// when the block being read grew past the limit (what was held of it
    /// is dropped; the stream should be given up).
    pub fn feed(&mut self, bytes: &[u8]) -> Result<Vec<SseFrame>, SseTooLarge> {
        let mut out = Vec::new();
        let mut bytes = bytes;
        if self.pending_cr {
            self.pending_cr = false;
            if let Some(rest) = bytes.strip_prefix(b"\n") {
                bytes = rest;
            }
        }
        if self.buf.is_empty() {
            // The usual case (a chunk of whole lines): read in place, only
            // an unfinished last line kept.
            let used = self.lines(bytes, &mut out);
            self.buf.extend_from_slice(&bytes[used..]);
        } else {
            let mut buf = std::mem::take(&mut self.buf);
            buf.extend_from_slice(bytes);
            let used = self.lines(&buf, &mut out);
            buf.drain(..used);
            self.buf = buf;
        }
        if self.over || self.buf.len().saturating_add(self.current.data.len()) > self.limit {
            self.over = false;
            self.buf = Vec::new();
            self.current = SseFrame::default();
            self.has_field = false;
            self.has_data = false;
            return Err(SseTooLarge { limit: self.limit });
        }
        Ok(out)
    }

    /// Reads the complete lines of `text` (each ended by `\n`, `\r\n` or
    /// `\r`), adding the blocks they complete to `out`; returns how many
    /// bytes they took.
    fn lines(&mut self, text: &[u8], out: &mut Vec<SseFrame>) -> usize {
        let mut start = 0;
        while let Some(at) = memchr::memchr2(b'\n', b'\r', &text[start..]) {
            let end = start + at;
            let mut next = end + 1;
            if text[end] == b'\r' {
                match text.get(next) {
                    Some(b'\n') => next += 1,
                    Some(_) => {}
                    None => self.pending_cr = true,
                }
            }
            if let Some(frame) = self.line(&text[start..end]) {
                out.push(frame);
            }
            start = next;
        }
        start
    }

    fn line(&mut self, line: &[u8]) -> Option<SseFrame> {
        if line.is_empty() {
            if !self.has_field {
                return None;
            }
            self.has_field = false;
            self.has_data = false;
            return Some(std::mem::take(&mut self.current));
        }
        if line[0] == b':' {
            return None;
        }
        let (name, value) = match line.iter().position(|b| *b == b':') {
            Some(p) => {
                let v = &line[p + 1..];
                (&line[..p], v.strip_prefix(b" ").unwrap_or(v))
            }
            None => (line, &b""[..]),
        };
        // Borrowed when it is UTF-8 (data is copied once, into the block).
        let value = String::from_utf8_lossy(value);
        match name {
            b"data" => {
                if self.has_data {
                    self.current.data.push('\n');
                }
                self.current.data.push_str(&value);
                self.has_data = true;
                self.over |= self.current.data.len() > self.limit;
            }
            b"id" if !value.contains('\0') => self.current.id = Some(value.into_owned()),
            b"event" => self.current.event = Some(value.into_owned()),
            b"retry" => match value.parse() {
                Ok(ms) => self.current.retry = Some(ms),
                Err(_) => return None,
            },
            _ => return None,
        }
        self.has_field = true;
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_encoded_in_place_as_the_general_encoder_writes_it() {
        let datas: [&[u8]; 6] = [b"{\"a\":1}", b"", b"a\nb", b"a\r\nb\r", b"a\rb", b"\n"];
        for data in datas {
            for id in [None, Some("3-1")] {
                let mut expected = b"id: 3-0\ndata: \n\n".to_vec();
                let prefix = expected.len();
                let mut event = SseEvent::data(data);
                event.id = id;
                event.encode_into(&mut expected);
                let (body, stored) = encode_message(expected[..prefix].to_vec(), id, |out| {
                    out.extend_from_slice(data);
                    Ok::<(), ()>(())
                });
                assert_eq!(body, expected, "{data:?} {id:?}");
                assert_eq!(stored, data, "{data:?}");
            }
        }
        let (body, stored) = encode_message(Vec::new(), None, |out| {
            out.extend_from_slice(b"{\"half");
            Err(())
        });
        assert_eq!((&body[..], &stored[..]), (&b"data: \n\n"[..], &b""[..]));
    }

    #[test]
    fn encodes_fields_and_multiline_data() {
        let e = SseEvent::data(b"a\nb")
            .id("1-2")
            .event("message")
            .retry(Duration::from_millis(500));
        assert_eq!(
            e.to_bytes(),
            Bytes::from_static(b"id: 1-2\nevent: message\nretry: 500\ndata: a\ndata: b\n\n")
        );
        assert_eq!(
            SseEvent::data(b"").id("0-0").to_bytes(),
            Bytes::from_static(b"id: 0-0\ndata: \n\n")
        );
        assert_eq!(comment(""), Bytes::from_static(b":\n\n"));
        // A line break at the end leaves an empty last line.
        assert_eq!(
            SseEvent::data(b"a\r\n").to_bytes(),
            Bytes::from_static(b"data: a\ndata: \n\n")
        );
    }

    #[test]
    fn fields_keep_to_one_line_and_long_delays_are_written_in_full() {
        // A line break in an id or event name is dropped, not let through.
        assert_eq!(
            SseEvent::data(b"x").id("a\nb\rc").event("m\r\n").to_bytes(),
            Bytes::from_static(b"id: abc\nevent: m\ndata: x\n\n")
        );
        assert_eq!(
            SseEvent::data(b"")
                .retry(Duration::from_millis(1_234_567_890_123))
                .to_bytes(),
            Bytes::from_static(b"retry: 1234567890123\ndata: \n\n")
        );
        assert_eq!(
            SseEvent::data(b"").retry(Duration::ZERO).to_bytes(),
            Bytes::from_static(b"retry: 0\ndata: \n\n")
        );
        // Beyond 64 bits of milliseconds (never set in practice): the largest.
        assert_eq!(
            SseEvent::data(b"").retry(Duration::MAX).to_bytes(),
            Bytes::from_static(b"retry: 18446744073709551615\ndata: \n\n")
        );
    }

    #[test]
    fn decodes_across_chunks_and_line_endings() {
        let mut d = SseDecoder::new();
        assert!(d.feed(b"id: 7\r").unwrap().is_empty());
        assert!(d.feed(b"\ndata: {\"a\"").unwrap().is_empty());
        let f = d.feed(
            b":1}\r\n\r\n: keep-alive\n\nretry: 300\ndata:\n\nevent: endpoint\ndata: /m?x=1\n\n",
        )
        .unwrap();
        assert_eq!(f.len(), 3);
        assert_eq!(f[0].id.as_deref(), Some("7"));
        assert_eq!(f[0].data, "{\"a\":1}");
        assert_eq!(f[1].retry, Some(300));
        assert_eq!(f[1].data, "");
        assert_eq!(f[2].event.as_deref(), Some("endpoint"));
        assert_eq!(f[2].data, "/m?x=1");
    }

    #[test]
    fn round_trips() {
        let mut wire = Vec::new();
        SseEvent::data(b"x\r\ny").id("a").encode_into(&mut wire);
        let f = SseDecoder::new().feed(&wire).unwrap();
        assert_eq!(f[0].data, "x\ny");
    }

    /// A block is held up to the limit, whether it grows by one long line or
    /// by many data lines, and refused past it; the decoder then drops what
    /// it held (bounded memory) and reads the blocks that follow.
    #[test]
    fn a_block_past_the_limit_is_refused_and_dropped() {
        let mut d = SseDecoder::with_limit(16);
        assert_eq!(d.feed(b"data: 0123456789").unwrap(), []);
        assert_eq!(d.feed(b"abcdef"), Err(SseTooLarge { limit: 16 }));
        assert!(d.buf.capacity() == 0 && d.current.data.is_empty());
        let mut d = SseDecoder::with_limit(16);
        assert_eq!(d.feed(b"data: 01234567\ndata: 89\n").unwrap(), []);
        assert_eq!(d.feed(b"data: abcdef\n"), Err(SseTooLarge { limit: 16 }));
        let f = d.feed(b"\ndata: ok\n\n").unwrap();
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].data, "ok");
        // A whole block past the limit in one chunk, blocks before it too.
        let mut d = SseDecoder::with_limit(4);
        assert_eq!(
            d.feed(b"data: ok\n\ndata: abcde\n\n"),
            Err(SseTooLarge { limit: 4 })
        );
        // A block of exactly the limit is read.
        let f = SseDecoder::with_limit(4).feed(b"data: abcd\n\n").unwrap();
        assert_eq!(f[0].data, "abcd");
    }
}
