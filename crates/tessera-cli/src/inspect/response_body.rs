//! The answers' bodies the Network tab shows: for each HTTP exchange, the
//! first [`MAX_KEPT`] bytes of the body as text, piece by piece as the
//! transport reads them (an SSE stream as it goes), then its size and how
//! it ended. What a server sends is data: the page puts it in as text.

use std::collections::BTreeMap;
use std::sync::Mutex;

use serde::Serialize;

/// The most bytes of one answer's body shown.
pub const MAX_KEPT: usize = 64 * 1024;
/// The most bodies followed at once (the oldest are let go past it).
const MAX_OPEN: usize = 1024;

/// How an answer's body ended (the members of its last `http-body` event
/// but the label and exchange).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BodyEnd {
    /// Always `true`: this is the end.
    pub end: bool,
    /// The bytes read in all.
    pub bytes: usize,
    /// Whether more was read than shown.
    pub truncated: bool,
    /// The text of a character left cut at the end.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Why it was not read to its end.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The bodies being read, by exchange id.
#[derive(Default)]
pub struct ResponseBodies {
    open: Mutex<BTreeMap<u64, Open>>,
}

#[derive(Default)]
struct Open {
    /// Bytes passed on as text so far.
    kept: usize,
    /// Bytes read so far.
    total: usize,
    /// The start of a UTF-8 character cut by the end of a piece.
    carry: Vec<u8>,
}

/// Where the last whole UTF-8 character of `b` ends: `b.len()` unless `b`
/// ends inside a character (its 1 to 3 first bytes).
fn complete_prefix(b: &[u8]) -> usize {
    for back in 1..=b.len().min(3) {
        let c = b[b.len() - back];
        if c & 0xC0 == 0x80 {
            continue;
        }
        let need = match c {
            0xF0.. => 4,
            0xE0.. => 3,
            0xC0.. => 2,
            _ => 1,
        };
        return if need > back { b.len() - back } else { b.len() };
    }
    b.len()
}

impl ResponseBodies {
    fn open(&self) -> std::sync::MutexGuard<'_, BTreeMap<u64, Open>> {
        self.open
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Exchange `id` got an answer whose body is to come.
    pub fn begin(&self, id: u64) {
        let mut open = self.open();
        while open.len() >= MAX_OPEN {
            open.pop_first();
        }
        open.insert(id, Open::default());
    }

    /// A piece of exchange `id`'s body: the text to show, while fewer than
    /// [`MAX_KEPT`] bytes were shown (invalid UTF-8 shown as U+FFFD; a
    /// character cut between pieces is shown whole with the next one).
    pub fn chunk(&self, id: u64, chunk: &[u8]) -> Option<String> {
        let mut open = self.open();
        let o = open.get_mut(&id)?;
        o.total += chunk.len();
        let room = MAX_KEPT.saturating_sub(o.kept + o.carry.len());
        if room == 0 {
            return None;
        }
        o.carry.extend_from_slice(&chunk[..chunk.len().min(room)]);
        let cut = complete_prefix(&o.carry);
        // At the limit a cut character is not waited for.
        let cut = if o.kept + o.carry.len() >= MAX_KEPT {
            o.carry.len()
        } else {
            cut
        };
        if cut == 0 {
            return None;
        }
        let text = String::from_utf8_lossy(&o.carry[..cut]).into_owned();
        o.kept += cut;
        o.carry.drain(..cut);
        Some(text)
    }

    /// Exchange `id`'s body ended: the event's members (`end`, `bytes`,
    /// `truncated`, the `text` of a character left cut, and `error` when it
    /// was not read to its end).
    pub fn end(&self, id: u64, outcome: Result<(), &str>) -> Option<BodyEnd> {
        let o = self.open().remove(&id)?;
        Some(BodyEnd {
            end: true,
            bytes: o.total,
            truncated: o.total > o.kept + o.carry.len(),
            text: (!o.carry.is_empty()).then(|| String::from_utf8_lossy(&o.carry).into_owned()),
            error: outcome.err().map(str::to_owned),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_character_cut_between_pieces_is_shown_whole() {
        let b = ResponseBodies::default();
        b.begin(1);
        let euro = "€".as_bytes();
        assert_eq!(b.chunk(1, &[b'a', euro[0]]).as_deref(), Some("a"));
        assert_eq!(b.chunk(1, &euro[1..2]), None);
        assert_eq!(b.chunk(1, &[euro[2], b'b']).as_deref(), Some("€b"));
        let end = serde_json::to_value(b.end(1, Ok(())).unwrap()).unwrap();
        assert_eq!(end, json!({"end": true, "bytes": 5, "truncated": false}));
        // Unknown or ended exchanges are ignored.
        assert_eq!(b.chunk(1, b"x"), None);
        assert_eq!(b.end(1, Ok(())), None);
    }

    #[test]
    fn at_most_max_kept_bytes_are_shown_and_the_total_is_counted() {
        let b = ResponseBodies::default();
        b.begin(7);
        let piece = vec![b'x'; 40 * 1024];
        let mut shown = 0;
        for _ in 0..5 {
            shown += b.chunk(7, &piece).map_or(0, |t| t.len());
        }
        assert_eq!(shown, MAX_KEPT);
        let end = serde_json::to_value(b.end(7, Err("stopped")).unwrap()).unwrap();
        assert_eq!(end["bytes"], 5 * 40 * 1024);
        assert_eq!(end["truncated"], true);
        assert_eq!(end["error"], "stopped");
        // Invalid UTF-8 is shown, replaced.
        b.begin(8);
        assert_eq!(b.chunk(8, b"\xff<b>").as_deref(), Some("\u{FFFD}<b>"));
    }

    #[test]
    fn the_bodies_followed_at_once_are_bounded() {
        let b = ResponseBodies::default();
        for id in 0..(MAX_OPEN as u64 + 10) {
            b.begin(id);
        }
        assert_eq!(b.open().len(), MAX_OPEN);
        assert_eq!(b.chunk(0, b"gone"), None);
        assert!(b.chunk(MAX_OPEN as u64 + 9, b"kept").is_some());
    }
}
