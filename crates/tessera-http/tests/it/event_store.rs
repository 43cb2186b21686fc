//! An event store that keeps events later than they are written (a
//! networked one): the session writes each event to its client at once and
//! ends a stream with its last event, kept or not, and replays
//! (Last-Event-ID) only what the store has finished keeping.

use crate::common;

use std::sync::{Arc, Mutex};

use common::*;
use http::StatusCode;
use serde_json::json;
use tessera_http::{EventId, EventStore, InMemoryEventStore, ResponseMode, StoredEvent};
use tokio::sync::watch;

/// Keeps events only once its gate is open; until then each store waits.
struct GatedStore {
    kept: InMemoryEventStore,
    gate: watch::Sender<bool>,
    /// The events handed over, in call order.
    taken: Mutex<Vec<EventId>>,
}

impl GatedStore {
    fn new() -> Arc<Self> {
        Arc::new(GatedStore {
            kept: InMemoryEventStore::default(),
            gate: watch::channel(false).0,
            taken: Mutex::new(Vec::new()),
        })
    }
}

/// The store seen by the server: the gated store behind an `Arc`.
struct Shared(Arc<GatedStore>);

impl EventStore for Shared {
    fn store(
        &self,
        session: &str,
        event: StoredEvent,
    ) -> impl Future<Output = ()> + Send + 'static {
        self.0.taken.lock().unwrap().push(event.id);
        let (store, session) = (self.0.clone(), session.to_owned());
        let mut open = self.0.gate.subscribe();
        async move {
            let _ = open.wait_for(|o| *o).await;
            store.kept.store(&session, event).await;
        }
    }

    async fn replay_after(&self, session: &str, after: EventId) -> Vec<StoredEvent> {
        self.0.kept.replay_after(session, after).await
    }

    async fn remove_session(&self, session: &str) {
        self.0.kept.remove_session(session).await
    }
}

#[tokio::test]
async fn events_go_out_and_streams_end_before_the_store_keeps_them() {
    let gated = GatedStore::new();
    let store = Shared(gated.clone());
    let s = TestServer::start(move |b| b.event_store(store).response_mode(ResponseMode::Sse)).await;
    let sid = s.session(LEGACY).await;
    let r = s
        .send_json(
            s.in_session(&sid),
            call(5, "echo", json!({"text": "hi"}), false),
        )
        .await;
    assert_eq!(r.status(), StatusCode::OK);
    let mut sse = Sse::new(r);
    let priming = within(sse.next()).await.expect("the priming event");
    let priming_id = priming.id.expect("a resumable stream");
    // The response arrives although the store has not kept it.
    let (id, v) = within(sse.next_json()).await.expect("the response");
    assert_eq!(v["id"], 5);
    assert_eq!(v["result"]["content"][0]["text"], "hi");
    let event_id = id.expect("the response has an event id");
    assert_eq!(
        gated.taken.lock().unwrap().last().map(|e| e.to_string()),
        Some(event_id.clone()),
        "handed to the store before it was written"
    );
    assert!(gated.kept.is_empty(), "nothing kept yet");
    // The stream ends with its last event: the client has all of it.
    assert!(within(sse.next()).await.is_none(), "the stream ends");
    assert!(gated.kept.is_empty(), "still nothing kept");

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
    let replayed = within(resume).await.unwrap();
    assert_eq!(gated.kept.len(), 1, "kept before the replay");
    assert_eq!(replayed.len(), 1, "{replayed:?}");
    assert_eq!(replayed[0].0.as_deref(), Some(event_id.as_str()));
    assert_eq!(replayed[0].1["id"], 5);
}

/// With SSE answers, a request whose handler is still running after its
/// first step gets its stream and the priming event at once (the client can
/// resume it before any answer); one answered at once is one whole stream
/// with the same events: priming `S-0`, response `S-1`, each stream its own.
#[tokio::test]
async fn sse_answers_prime_before_a_running_handler_and_whole_when_answered_at_once() {
    let s = TestServer::start(|b| b.response_mode(ResponseMode::Sse)).await;
    let sid = s.session(LEGACY).await;
    let waiting = s.send_json(s.in_session(&sid), call(7, "gate", json!({}), false));
    let (r, ()) = tokio::join!(waiting, s.flags.at_gate.notified());
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(content_type(&r), "text/event-stream");
    let mut running = Sse::new(r);
    let priming = within(running.next()).await.expect("the priming event");
    assert_eq!(priming.data, "", "{priming:?}");
    let primed = priming.id.expect("a resumable stream");
    let primed = primed
        .strip_suffix("-0")
        .expect("the first event")
        .to_owned();

    let mut ids = Vec::new();
    for id in [8, 9] {
        let r = s
            .send_json(
                s.in_session(&sid),
                call(id, "echo", json!({"text": "hi"}), false),
            )
            .await;
        assert_eq!(r.status(), StatusCode::OK);
        assert_eq!(content_type(&r), "text/event-stream");
        let frames = within(Sse::new(r).rest()).await;
        assert_eq!(frames.len(), 2, "{frames:?}");
        assert_eq!(frames[0].data, "");
        let stream = frames[0].id.clone().expect("priming id");
        let stream = stream
            .strip_suffix("-0")
            .expect("priming is first")
            .to_owned();
        assert_eq!(
            frames[1].id.as_deref(),
            Some(format!("{stream}-1").as_str())
        );
        let v: serde_json::Value = serde_json::from_str(&frames[1].data).unwrap();
        assert_eq!(
            (v["id"].clone(), v["result"]["content"][0]["text"].clone()),
            (json!(id), json!("hi"))
        );
        ids.push(stream);
    }
    assert_ne!(ids[0], ids[1], "each request its own stream");
    assert!(!ids.contains(&primed));

    // The answered stream can be resumed after its priming event.
    let get = s
        .get()
        .header("mcp-session-id", &sid)
        .header("last-event-id", format!("{}-0", ids[0]));
    let r = send(
        s.addr,
        get.body(http_body_util::Full::new(bytes::Bytes::new()))
            .unwrap(),
    )
    .await;
    assert_eq!(r.status(), StatusCode::OK);
    let replayed = within(Sse::new(r).rest()).await;
    assert_eq!(replayed.len(), 1, "{replayed:?}");
    assert_eq!(
        replayed[0].id.as_deref(),
        Some(format!("{}-1", ids[0]).as_str())
    );

    s.flags.gate.notify_one();
    let (id, v) = within(running.next_json()).await.expect("the response");
    assert_eq!(v["id"], 7);
    assert_eq!(id, Some(format!("{primed}-1")));
    assert!(within(running.next()).await.is_none(), "the stream ends");
}
