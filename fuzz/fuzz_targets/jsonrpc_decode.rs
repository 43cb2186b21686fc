//! The JSON-RPC decoder: any bytes decode to a message, a batch or an
//! invalid-message error (never a panic), and what decodes re-encodes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tessera_proto::decode::{Inbound, decode};

fuzz_target!(|data: &[u8]| {
    match decode(data) {
        Inbound::Message(m) => {
            let bytes = serde_json::to_vec(&m).expect("a decoded message encodes");
            assert!(matches!(decode(&bytes), Inbound::Message(_)));
        }
        Inbound::Batch(items) => {
            for m in items.into_iter().flatten() {
                let _ = serde_json::to_vec(&m).expect("a decoded message encodes");
            }
        }
        _ => {}
    }
});
