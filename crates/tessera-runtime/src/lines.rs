//! Newline-delimited framing with a size limit.

use bytes::{Buf, BytesMut};
use tessera_types::RequestId;
use tokio::io::{AsyncRead, AsyncReadExt};

use crate::oversized::EnvelopeScan;

/// One frame read from a line transport.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LineFrame {
    /// A complete line, without its newline (and without a trailing `\r`).
    Line(BytesMut),
    /// A line longer than the limit; its bytes were discarded (after being
    /// scanned for the envelope of a response).
    TooLong {
        /// How many bytes the line had (at least).
        len: usize,
        /// The id of the response the line was, when its top-level `id`
        /// could be read and it had no top-level `method`.
        response_to: Option<RequestId>,
    },
}

/// Reads newline-delimited frames. Cancel-safe: partial lines stay buffered
/// between calls to [`LineReader::next`].
#[derive(Debug)]
pub struct LineReader<R> {
    inner: R,
    buf: BytesMut,
    scanned: usize,
    max: usize,
    /// Bytes of the current over-long line discarded so far, and what was
    /// read of its envelope.
    discarding: Option<(usize, EnvelopeScan)>,
    eof: bool,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    /// Wraps a reader; lines longer than `max` bytes are reported as [`LineFrame::TooLong`].
    pub fn new(inner: R, max: usize) -> Self {
        LineReader {
            inner,
            buf: BytesMut::with_capacity(8 * 1024),
            scanned: 0,
            max: max.max(1),
            discarding: None,
            eof: false,
        }
    }

    /// The next frame; `None` at end of input. Blank lines are skipped.
    pub async fn next(&mut self) -> std::io::Result<Option<LineFrame>> {
        loop {
            // memchr scans a word at a time: a byte-by-byte search cost about
            // 900 instructions per message.
            if let Some(pos) = memchr::memchr(b'\n', &self.buf[self.scanned..]) {
                let end = self.scanned + pos;
                let mut line = self.buf.split_to(end + 1);
                self.scanned = 0;
                line.truncate(end);
                if line.last() == Some(&b'\r') {
                    line.truncate(line.len() - 1);
                }
                if let Some((skipped, mut scan)) = self.discarding.take() {
                    scan.feed(&line);
                    return Ok(Some(LineFrame::TooLong {
                        len: skipped + line.len(),
                        response_to: scan.response_id(),
                    }));
                }
                if line.len() > self.max {
                    let mut scan = EnvelopeScan::default();
                    scan.feed(&line);
                    return Ok(Some(LineFrame::TooLong {
                        len: line.len(),
                        response_to: scan.response_id(),
                    }));
                }
                if line.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                return Ok(Some(LineFrame::Line(line)));
            }
            self.scanned = self.buf.len();
            if self.buf.len() > self.max || (self.discarding.is_some() && !self.buf.is_empty()) {
                let n = self.buf.len();
                let (skipped, scan) = self.discarding.get_or_insert_with(Default::default);
                *skipped += n;
                scan.feed(&self.buf);
                self.buf.advance(n);
                self.scanned = 0;
            }
            if self.eof {
                if let Some((skipped, mut scan)) = self.discarding.take() {
                    scan.feed(&self.buf);
                    let len = skipped + self.buf.len();
                    self.buf.clear();
                    return Ok(Some(LineFrame::TooLong {
                        len,
                        response_to: scan.response_id(),
                    }));
                }
                if self.buf.iter().all(u8::is_ascii_whitespace) {
                    return Ok(None);
                }
                // A last line without a newline still counts.
                let line = self.buf.split();
                self.scanned = 0;
                return Ok(Some(LineFrame::Line(line)));
            }
            self.buf.reserve(8 * 1024);
            if self.inner.read_buf(&mut self.buf).await? == 0 {
                self.eof = true;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn frames(input: &[u8], max: usize) -> Vec<LineFrame> {
        let mut r = LineReader::new(input, max);
        let mut out = Vec::new();
        while let Some(f) = r.next().await.unwrap() {
            out.push(f);
        }
        out
    }

    fn line(s: &str) -> LineFrame {
        LineFrame::Line(BytesMut::from(s.as_bytes()))
    }

    #[tokio::test]
    async fn splits_lines() {
        assert_eq!(
            frames(b"a\nbb\r\n\n  \nccc", 100).await,
            vec![line("a"), line("bb"), line("ccc")]
        );
    }

    /// The `stdio_lines` fuzz target's finding: a blank line that fits once
    /// its `\r` is dropped is skipped, and the last line (5 bytes, no
    /// newline) is reported too long with its length. The reader was right;
    /// the target's model matched the report against the skipped line.
    #[tokio::test]
    async fn a_blank_line_at_the_limit_is_skipped_and_the_long_last_line_reported() {
        assert_eq!(
            frames(b"\r\r\n\r\r\0\0\0", 1).await,
            vec![LineFrame::TooLong {
                len: 5,
                response_to: None
            }]
        );
    }

    /// The second campaign finding of the `stdio_lines` target (2026-12-06),
    /// again the model's: with a limit of 2, a blank line at the limit once
    /// its `\r` is dropped (`"  \r"`, 3 bytes raw) is skipped, and the next
    /// line of 3 spaces is reported too long with 3; the model's greedy
    /// matching paired that report with the skipped line.
    #[tokio::test]
    async fn a_skipped_blank_line_at_the_limit_leaves_the_next_report_its_own() {
        assert_eq!(
            frames(b"  \r\n\n   \n", 2).await,
            vec![LineFrame::TooLong {
                len: 3,
                response_to: None
            }]
        );
    }

    #[tokio::test]
    async fn reports_long_lines_and_goes_on() {
        let mut input = vec![b'x'; 50_000];
        input.extend_from_slice(b"\nok\n");
        let f = frames(&input, 1000).await;
        assert!(matches!(f[0], LineFrame::TooLong { len, response_to: None } if len >= 50_000));
        assert_eq!(f[1], line("ok"));
    }

    #[tokio::test]
    async fn an_over_long_response_keeps_its_id() {
        // The id after 50 kB of result (as the TypeScript SDK writes it),
        // read in 8 KiB chunks of which all but the last are discarded.
        let mut input = br#"{"result":{"text":""#.to_vec();
        input.extend(std::iter::repeat_n(b'y', 50_000));
        input.extend_from_slice(br#""},"jsonrpc":"2.0","id":42}"#);
        input.extend_from_slice(b"\n{\"id\":1,\"result\":{}}\n");
        let f = frames(&input, 1000).await;
        assert_eq!(
            f[0],
            LineFrame::TooLong {
                len: input.len() - 22,
                response_to: Some(RequestId::Number(42))
            }
        );
        assert_eq!(f[1], line("{\"id\":1,\"result\":{}}"));
        // Cut off by the end of input before its id.
        let f = frames(&input[..input.len() - 30], 1000).await;
        assert!(matches!(
            f[0],
            LineFrame::TooLong {
                response_to: None,
                ..
            }
        ));
    }
}
