//! An event store that keeps events later than they are written (a
//! networked one): the session writes each event to its client at once,
//! except a stream's last, which it writes together with the end of the
//! stream once the store has it, and replays (Last-Event-ID) only what the
//! store has finished keeping.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use http::StatusCode;
use serde_json::json;
use tessera_http::{EventId, EventStore, InMemoryEventStore, ResponseMode, StoredEvent};
use tessera_runtime::BoxFuture;
use tokio::sync::watch;

/// Keeps events only once its gate is open; until then each store waits.
/// Events are taken in call order and kept in that order, as the contract
/// asks of every store.
struct GatedStore {
    kept: InMemoryEventStore,
    /// Taken, not kept yet, in call order.
    queued: Mutex<Vec<(String, StoredEvent)>>,
    gate: watch::Sender<bool>,
    /// The events handed over, in call order.
    taken: Mutex<Vec<EventId>>,
    /// The data of the events handed over, in call order.
    handed: watch::Sender<Vec<bytes::Bytes>>,
}

impl GatedStore {
    fn new() -> Arc<Self> {
        Arc::new(GatedStore {
            kept: InMemoryEventStore::default(),
            queued: Mutex::new(Vec::new()),
            gate: watch::channel(false).0,
            taken: Mutex::new(Vec::new()),
            handed: watch::channel(Vec::new()).0,
        })
    }

    /// Waits until an event whose data contains `text` is handed over.
    async fn handed_over(&self, text: &str) {
        let mut rx = self.handed.subscribe();
        let _ = rx
            .wait_for(|all| {
                all.iter()
                    .any(|d| String::from_utf8_lossy(d).contains(text))
            })
            .await;
    }
}

/// The store seen by the server: the gated store behind an `Arc`.
struct Shared(Arc<GatedStore>);

impl EventStore for Shared {
    fn store(&self, session: &str, event: StoredEvent) -> BoxFuture<'static, ()> {
        self.0.taken.lock().unwrap().push(event.id);
        self.0
            .handed
            .send_modify(|all| all.push(event.data.clone()));
        self.0
            .queued
            .lock()
            .unwrap()
            .push((session.to_owned(), event));
        let store = self.0.clone();
        let mut open = self.0.gate.subscribe();
        Box::pin(async move {
            let _ = open.wait_for(|o| *o).await;
            // Whichever store wakes first keeps every queued event, in order
            // (the in-memory store keeps each at once).
            let queued = std::mem::take(&mut *store.queued.lock().unwrap());
            for (session, event) in queued {
                store.kept.store(&session, event).await;
            }
        })
    }

    fn replay_after(&self, session: &str, after: EventId) -> BoxFuture<'_, Vec<StoredEvent>> {
        self.0.kept.replay_after(session, after)
    }

    fn remove_session(&self, session: &str) -> BoxFuture<'_, ()> {
        self.0.kept.remove_session(session)
    }
}

#[tokio::test]
async fn events_go_out_before_the_store_keeps_them_and_the_last_leaves_with_the_end() {
    let gated = GatedStore::new();
    let store: Arc<dyn EventStore> = Arc::new(Shared(gated.clone()));
    let s = TestServer::start(move |b| b.event_store(Some(store)).response_mode(ResponseMode::Sse))
        .await;
    let sid = s.session(LEGACY).await;
    let r = s
        .send_json(s.in_session(&sid), call(5, "progress", json!({}), true))
        .await;
    assert_eq!(r.status(), StatusCode::OK);
    let mut sse = Sse::new(r);
    let priming = within(sse.next()).await.expect("the priming event");
    let priming_id = priming.id.expect("a resumable stream");
    // The notifications arrive although the store has kept none of them.
    let mut steps = 0;
    while steps < 3 {
        let (id, v) = within(sse.next_json()).await.expect("a notification");
        assert!(
            v.get("id").is_none(),
            "the answer came before it was kept: {v}"
        );
        assert!(id.is_some(), "every event of a resumable stream has an id");
        if v["method"] == "notifications/progress" {
            steps += 1;
            assert_eq!(v["params"]["progress"].as_f64(), Some(f64::from(steps)));
        }
    }
    assert!(gated.kept.is_empty(), "nothing kept yet");
    // The answer is handed to the store, and held back until it is kept:
    // the stream neither shows it nor ends.
    within(gated.handed_over("\"result\"")).await;
    let quiet = tokio::time::timeout(Duration::from_millis(200), async {
        while let Some((_, v)) = sse.next_json().await {
            assert!(
                v.get("id").is_none(),
                "the answer came before it was kept: {v}"
            );
        }
    })
    .await;
    assert!(
        quiet.is_err(),
        "the stream ended before the store kept its last event"
    );
    let answer_id = gated.taken.lock().unwrap().last().map(|e| e.to_string());

    // A resumption asked now is answered once the store has the event.
    let resume = {
        let get = s
            .get()
            .header("mcp-session-id", &sid)
            .header("last-event-id", &priming_id);
        let addr = s.addr;
        tokio::spawn(async move {
            let body = http_body_util::Full::new(bytes::Bytes::new());
            let r = send(addr, get.body(body).unwrap()).await;
            assert_eq!(r.status(), StatusCode::OK);
            let mut sse = Sse::new(r);
            let mut got = Vec::new();
            while let Some((id, v)) = sse.next_json().await {
                got.push((id, v));
            }
            got
        })
    };
    gated.gate.send_replace(true);
    // Once kept, the answer goes out, then the stream ends.
    let (id, v) = within(sse.next_json()).await.expect("the answer");
    assert_eq!(v["id"], 5);
    assert_eq!(v["result"]["content"][0]["text"], "done");
    assert_eq!(
        id, answer_id,
        "the answer's event is the last one handed to the store"
    );
    assert!(within(sse.next()).await.is_none(), "the stream ends");
    // The replay has everything after the priming event, the answer last.
    let replayed = within(resume).await.unwrap();
    let seqs: Vec<u64> = replayed
        .iter()
        .filter_map(|(id, _)| id.as_deref()?.rsplit('-').next()?.parse().ok())
        .collect();
    assert_eq!(seqs.len(), replayed.len(), "{replayed:?}");
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "in order: {seqs:?}");
    let last = replayed.last().expect("a replay");
    assert_eq!(last.0, answer_id, "{replayed:?}");
    assert_eq!(last.1["id"], 5);
    assert_eq!(
        replayed
            .iter()
            .filter(|(_, v)| v["method"] == "notifications/progress")
            .count(),
        3,
        "{replayed:?}"
    );
}
