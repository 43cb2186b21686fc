//! The resumable-stream event store's byte accounting (issue 32 item 1):
//! any sequence of appends (events of any size, to a few sessions and
//! streams), replays and session removals keeps every session within its
//! byte and count budgets and the store within its total, the accounted
//! bytes add up, and a replay returns only events of the stream asked for,
//! after the id asked for, in order, each as it was stored.
#![no_main]

#[path = "../support/runtime.rs"]
mod support;

use std::collections::HashMap;

use bytes::Bytes;
use libfuzzer_sys::fuzz_target;
use tessera_http::{EventId, EventStore, InMemoryEventStore, StoredEvent};

const PER_SESSION: usize = 8;
const SESSIONS: usize = 3;
const SESSION_BYTES: usize = 2048;
const TOTAL_BYTES: usize = 4096;
/// What an event costs beside its data (the store's documented overhead).
const OVERHEAD: usize = 64;

/// The data of event `seq` of `stream`, `len` bytes long: recognisable on
/// replay.
fn data(stream: u64, seq: u64, len: usize) -> Bytes {
    let tag = (stream * 31 + seq) as u8;
    Bytes::from(vec![tag; len])
}

fuzz_target!(|input: &[u8]| {
    let store = InMemoryEventStore::with_bytes(PER_SESSION, SESSIONS, SESSION_BYTES, TOTAL_BYTES);
    let names = ["s0", "s1", "s2", "s3", "s4"];
    // The next sequence number of each (session, stream), and the length
    // of each event stored.
    let mut next: HashMap<(usize, u64), u64> = HashMap::new();
    let mut stored: HashMap<(usize, u64, u64), usize> = HashMap::new();
    support::runtime().block_on(async {
        for op in input.chunks_exact(4) {
            let session = usize::from(op[1]) % names.len();
            let stream = u64::from(op[2] % 4);
            let name = names[session];
            match op[0] % 4 {
                0 | 1 => {
                    // Sizes from 0 to past a session's whole budget.
                    let len = usize::from(op[3]) * 10;
                    let seq = next.entry((session, stream)).or_insert(0);
                    let event = StoredEvent {
                        id: EventId { stream, seq: *seq },
                        data: data(stream, *seq, len),
                    };
                    stored.insert((session, stream, *seq), len);
                    *seq += 1;
                    store.store(name, event).await;
                }
                2 => {
                    let after = u64::from(op[3] % 16);
                    let got = store
                        .replay_after(name, EventId { stream, seq: after })
                        .await;
                    let mut last = after;
                    for e in &got {
                        assert_eq!(e.id.stream, stream, "only the stream asked for");
                        assert!(e.id.seq > last, "in order, after the id asked for");
                        last = e.id.seq;
                        let len = stored
                            .get(&(session, stream, e.id.seq))
                            .copied()
                            .expect("only events that were stored");
                        assert_eq!(e.data, data(stream, e.id.seq, len), "as stored");
                    }
                    assert!(got.len() <= PER_SESSION);
                }
                _ => {
                    store.remove_session(name).await;
                    assert_eq!(store.session_bytes(name), 0);
                    let got = store.replay_after(name, EventId { stream, seq: 0 }).await;
                    assert!(got.is_empty(), "a removed session replays nothing");
                }
            }
            let mut sum = 0;
            for n in names {
                let b = store.session_bytes(n);
                assert!(b <= SESSION_BYTES, "{n} holds {b} bytes");
                sum += b;
            }
            assert_eq!(sum, store.bytes(), "the accounting adds up");
            assert!(
                store.bytes() <= TOTAL_BYTES,
                "{} bytes in all",
                store.bytes()
            );
            assert!(store.len() <= PER_SESSION * SESSIONS);
            assert!(store.len() * OVERHEAD <= store.bytes());
        }
    });
});
