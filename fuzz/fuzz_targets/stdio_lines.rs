//! The stdio line reader under junk (issue 32 item 7): any bytes, arriving
//! in any chunks, with any line limit, are framed exactly as a reference
//! model splits them — each complete line without its newline (and a
//! trailing `\r`), blank lines skipped, a line over the limit reported as
//! too long with its length instead of being buffered, a last line without
//! a newline still counted — and no frame is ever longer than the limit.
#![no_main]

#[path = "../support/runtime.rs"]
mod support;

use std::collections::HashSet;
use std::pin::Pin;
use std::task::{Context, Poll};

use libfuzzer_sys::fuzz_target;
use tessera_runtime::lines::{LineFrame as Frame, LineReader};
use tokio::io::{AsyncRead, ReadBuf};

/// Hands out `data` in chunks of the sizes in `sizes` (cycled).
struct Chunked<'a> {
    data: &'a [u8],
    sizes: &'a [u8],
    next: usize,
}

impl AsyncRead for Chunked<'_> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let size = match self.sizes {
            [] => 4096,
            s => usize::from(s[self.next % s.len()]).max(1),
        };
        self.next += 1;
        let n = size.min(self.data.len()).min(buf.remaining());
        let (now, later) = self.data.split_at(n);
        buf.put_slice(now);
        self.data = later;
        Poll::Ready(Ok(()))
    }
}

/// One frame the reader must produce.
#[derive(Debug)]
enum Want {
    /// This line.
    Line(Vec<u8>),
    /// A too-long report with one of these lengths (the `\r` of a line
    /// may or may not have been counted with its discarded bytes).
    TooLong(Vec<usize>),
    /// A line exactly at the limit once its `\r` is dropped: read whole it
    /// is this line (`None`: blank, skipped); read in pieces its `\r` took
    /// the buffer over the limit, and it is reported too long with `len`.
    Either { line: Option<Vec<u8>>, len: usize },
}

/// What the reader must produce for `data` with limit `max`.
fn model(data: &[u8], max: usize) -> Vec<Want> {
    let blank = |l: &[u8]| l.iter().all(u8::is_ascii_whitespace);
    let mut out = Vec::new();
    let mut parts: Vec<&[u8]> = data.split(|&b| b == b'\n').collect();
    let last = parts.pop().unwrap_or_default();
    for raw in parts {
        let line = raw.strip_suffix(b"\r").unwrap_or(raw);
        if line.len() > max {
            out.push(Want::TooLong(vec![line.len(), raw.len()]));
        } else if raw.len() > max {
            out.push(Want::Either {
                line: (!blank(line)).then(|| line.to_vec()),
                len: raw.len(),
            });
        } else if !blank(line) {
            out.push(Want::Line(line.to_vec()));
        }
    }
    if last.len() > max {
        out.push(Want::TooLong(vec![last.len()]));
    } else if !blank(last) {
        out.push(Want::Line(last.to_vec()));
    }
    out
}

fuzz_target!(|input: &[u8]| {
    let Some((&max, rest)) = input.split_first() else {
        return;
    };
    let Some((&n_sizes, rest)) = rest.split_first() else {
        return;
    };
    let n_sizes = usize::from(n_sizes % 8).min(rest.len());
    let (sizes, data) = rest.split_at(n_sizes);
    let max = usize::from(max % 64) + 1;
    let frames = support::runtime().block_on(async {
        let mut reader = LineReader::new(
            Chunked {
                data,
                sizes,
                next: 0,
            },
            max,
        );
        let mut frames = Vec::new();
        while let Some(f) = reader.next().await.expect("reading memory never fails") {
            frames.push(f);
            assert!(frames.len() <= data.len() + 1, "more frames than bytes");
        }
        frames
    });
    for f in &frames {
        if let Frame::Line(line) = f {
            assert!(
                line.len() <= max,
                "a line of {} bytes passed the limit {max}",
                line.len()
            );
            assert!(!line.contains(&b'\n'));
        }
    }
    let want = model(data, max);
    let mut failed = HashSet::new();
    assert!(
        matches(&frames, &want, 0, 0, &mut failed),
        "frames {frames:?} do not fit the model {want:?} (max {max})"
    );
});

/// Whether frame `f` is what `w` allows when `w` produces a frame.
fn fits(f: &Frame, w: &Want) -> bool {
    match (f, w) {
        (Frame::Line(got), Want::Line(l) | Want::Either { line: Some(l), .. }) => {
            got.as_ref() == l.as_slice()
        }
        (Frame::TooLong { len, .. }, Want::TooLong(lens)) => lens.contains(len),
        (Frame::TooLong { len, .. }, Want::Either { len: l, .. }) => len == l,
        _ => false,
    }
}

/// Whether `frames[i..]` is what `want[j..]` allows: each want gives its
/// frame in order, except a blank line at the limit (`Either` with no
/// line), which gives a too-long report or nothing. Both ways are tried (a
/// greedy match paired a skipped blank line's length with the next
/// report of the same length: the campaign's finding of 2026-12-06);
/// `failed` remembers the pairs that cannot fit, so this stays linear in
/// practice and never worse than frames × wants.
fn matches(
    frames: &[Frame],
    want: &[Want],
    i: usize,
    j: usize,
    failed: &mut HashSet<(usize, usize)>,
) -> bool {
    if i == frames.len() {
        return want[j..]
            .iter()
            .all(|w| matches!(w, Want::Either { line: None, .. }));
    }
    if j == want.len() || failed.contains(&(i, j)) {
        return false;
    }
    let ok = (fits(&frames[i], &want[j]) && matches(frames, want, i + 1, j + 1, failed))
        || (matches!(want[j], Want::Either { line: None, .. })
            && matches(frames, want, i, j + 1, failed));
    if !ok {
        failed.insert((i, j));
    }
    ok
}
