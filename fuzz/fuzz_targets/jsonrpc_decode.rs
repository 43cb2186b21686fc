//! The JSON-RPC decoder: any bytes decode to a message, a batch or an
//! invalid-message error (never a panic), what decodes re-encodes, and no
//! string id over `MAX_ID_BYTES` is ever accepted or echoed.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tessera_proto::MAX_ID_BYTES;
use tessera_proto::decode::{Decoded, Inbound, decode};
use tessera_types::RequestId;

/// A string id is within the limit.
fn bounded(id: Option<&RequestId>) -> bool {
    !matches!(id, Some(RequestId::String(s)) if s.len() > MAX_ID_BYTES)
}

fn check(d: &Decoded) {
    match d {
        Ok(m) => assert!(bounded(m.id()), "an id over the limit was accepted"),
        Err(r) => assert!(bounded(r.id.as_ref()), "an id over the limit is echoed"),
    }
}

fuzz_target!(|data: &[u8]| {
    match decode(data) {
        Inbound::Message(m) => {
            check(&Ok(m.clone()));
            let bytes = serde_json::to_vec(&m).expect("a decoded message encodes");
            assert!(matches!(decode(&bytes), Inbound::Message(_)));
        }
        Inbound::Batch(items) => {
            for d in &items {
                check(d);
            }
            for m in items.into_iter().flatten() {
                let _ = serde_json::to_vec(&m).expect("a decoded message encodes");
            }
        }
        Inbound::Invalid(r) => check(&Err(r)),
    }
});
