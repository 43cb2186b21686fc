//! The contract every [`SessionStore`] must meet, written once and run against
//! each implementation ([`MemorySessionStore`](super::MemorySessionStore)
//! here; a networked store in another crate calls [`run`] and [`expiry`] from
//! its own tests).
//!
//! The checks panic on the first broken rule, like any test assertion. Each
//! check uses its own session ids (prefixed `contract-`), so one store value
//! can serve all of them, and a shared store is left as it was found.

use std::future::Future;
use std::time::Duration;

use serde_json::json;
use tessera_types::{JsonObject, ProtocolVersion};

use super::state::SessionState;
use super::store::SessionStore;

const TTL: Duration = Duration::from_secs(60);

fn obj(v: serde_json::Value) -> JsonObject {
    match v {
        serde_json::Value::Object(o) => o,
        _ => JsonObject::new(),
    }
}

/// A state with every field set (unicode, nesting, numbers, nulls).
pub fn full_state(id: &str) -> SessionState {
    let mut s = SessionState::new(id, ProtocolVersion::V2025_11_25);
    s.revision = 7;
    s.client_info = Some(obj(json!({"name": "cliënt ✓", "version": "1.0.0"})));
    s.client_capabilities = tessera_types::ClientCapabilities::from_object(&obj(json!({
        "roots": {"listChanged": true}, "elicitation": {}, "com.example/x": {"on": true}
    })));
    s.initialized = true;
    s.log_level = Some("warning".into());
    s.principal = Some("alice@example.com".into());
    s.client_key = Some("principal:alice@example.com".into());
    s.data = obj(json!({
        "tessera.subscriptions": ["file:///a b.txt", "mem://x?y=1"],
        "app": {"n": 1.5, "none": null, "big": u64::MAX, "nested": [[], {}]}
    }));
    s
}

/// Runs every check that needs no time to pass.
pub async fn run<S: SessionStore + ?Sized>(store: &S) {
    missing(store).await;
    save_then_load(store).await;
    save_replaces(store).await;
    touch(store).await;
    remove(store).await;
    independent(store).await;
}

/// A session never saved is not there; touching or removing it is harmless.
pub async fn missing<S: SessionStore + ?Sized>(store: &S) {
    let id = "contract-missing";
    assert_eq!(store.load(id).await.expect("load"), None);
    assert!(
        !store.touch(id, TTL).await.expect("touch"),
        "touch of a missing session must say false"
    );
    assert_eq!(
        store.load(id).await.expect("load"),
        None,
        "touch must not create a session"
    );
    store
        .remove(id)
        .await
        .expect("removing a missing session is not an error");
}

/// A saved state loads back equal, field for field.
pub async fn save_then_load<S: SessionStore + ?Sized>(store: &S) {
    let s = full_state("contract-full");
    store.save(&s, TTL).await.expect("save");
    assert_eq!(store.load(&s.id).await.expect("load"), Some(s.clone()));
    let mut minimal = SessionState::new("contract-minimal", ProtocolVersion::V2025_03_26);
    minimal.client_info = None;
    store.save(&minimal, TTL).await.expect("save");
    assert_eq!(
        store.load(&minimal.id).await.expect("load"),
        Some(minimal.clone())
    );
    store.remove(&s.id).await.expect("remove");
    store.remove(&minimal.id).await.expect("remove");
}

/// A second save replaces the first whole (fields it lacks are gone).
pub async fn save_replaces<S: SessionStore + ?Sized>(store: &S) {
    let first = full_state("contract-replace");
    store.save(&first, TTL).await.expect("save");
    let mut second = SessionState::new("contract-replace", ProtocolVersion::V2025_06_18);
    second.revision = 8;
    second.log_level = Some("error".into());
    store.save(&second, TTL).await.expect("save");
    assert_eq!(
        store.load(&second.id).await.expect("load"),
        Some(second.clone())
    );
    store.remove(&second.id).await.expect("remove");
}

/// Touching a live session says so and keeps it as it was.
pub async fn touch<S: SessionStore + ?Sized>(store: &S) {
    let s = full_state("contract-touch");
    store.save(&s, TTL).await.expect("save");
    assert!(
        store.touch(&s.id, TTL).await.expect("touch"),
        "touch of a live session must say true"
    );
    assert_eq!(store.load(&s.id).await.expect("load"), Some(s.clone()));
    store.remove(&s.id).await.expect("remove");
    assert!(
        !store.touch(&s.id, TTL).await.expect("touch"),
        "a removed session cannot be touched"
    );
}

/// A removed session is gone for good (until saved again).
pub async fn remove<S: SessionStore + ?Sized>(store: &S) {
    let s = full_state("contract-remove");
    store.save(&s, TTL).await.expect("save");
    store.remove(&s.id).await.expect("remove");
    assert_eq!(store.load(&s.id).await.expect("load"), None);
    store
        .remove(&s.id)
        .await
        .expect("a second remove is not an error");
    store.save(&s, TTL).await.expect("save again");
    assert_eq!(store.load(&s.id).await.expect("load"), Some(s.clone()));
    store.remove(&s.id).await.expect("remove");
}

/// Sessions do not see each other; many saved at once are all there.
pub async fn independent<S: SessionStore + ?Sized>(store: &S) {
    let states: Vec<SessionState> = (0..16)
        .map(|i| {
            let mut s = full_state(&format!("contract-many-{i}"));
            s.revision = i;
            s
        })
        .collect();
    futures::future::join_all(states.iter().map(|s| store.save(s, TTL)))
        .await
        .into_iter()
        .collect::<Result<Vec<()>, _>>()
        .expect("concurrent saves");
    store.remove(&states[3].id).await.expect("remove");
    for (i, s) in states.iter().enumerate() {
        let got = store.load(&s.id).await.expect("load");
        if i == 3 {
            assert_eq!(got, None, "removing one session removed only it");
        } else {
            assert_eq!(got.as_ref(), Some(s), "session {} kept its own state", s.id);
        }
    }
    for s in &states {
        store.remove(&s.id).await.expect("remove");
    }
}

/// TTLs: a state expires once its TTL has passed, and `touch` and `save`
/// push the expiry out. `pass(d)` must let at least `d` of the store's time
/// pass (advance a paused clock, or sleep for a networked store; the TTLs
/// used are a few hundred milliseconds).
pub async fn expiry<S, P, F>(store: &S, pass: P)
where
    S: SessionStore + ?Sized,
    P: Fn(Duration) -> F,
    F: Future<Output = ()>,
{
    let ms = Duration::from_millis;
    let s = full_state("contract-expiry");
    store.save(&s, ms(300)).await.expect("save");
    pass(ms(150)).await;
    assert!(
        store.touch(&s.id, ms(600)).await.expect("touch"),
        "alive before its TTL"
    );
    pass(ms(300)).await;
    // 450 ms after the save: alive only because of the touch.
    assert_eq!(
        store.load(&s.id).await.expect("load"),
        Some(s.clone()),
        "touch extends the TTL"
    );
    store.save(&s, ms(300)).await.expect("save");
    pass(ms(450)).await;
    assert_eq!(
        store.load(&s.id).await.expect("load"),
        None,
        "expired after its TTL"
    );
    assert!(
        !store.touch(&s.id, ms(300)).await.expect("touch"),
        "an expired session cannot be touched"
    );
}
