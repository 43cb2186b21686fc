//! Opening a `requestState` a client presents: any string is refused with
//! `-32602` or opened, never a panic; a state we sealed opens for exactly
//! its method and digest.
#![no_main]

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use tessera_server::mrtr::StateSealer;

fuzz_target!(|data: &[u8]| {
    let sealer = StateSealer::with_keys(vec![[7u8; 32]], Duration::from_secs(60)).unwrap();
    let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
    let text = String::from_utf8_lossy(data);
    if let Err(e) = sealer.open(&text, "tools/call", "digest", None, now) {
        assert_eq!(e.code, -32602);
    }
    // Round trip with the input as an answer and as the digest.
    let mut answers = BTreeMap::new();
    answers.insert("q".to_owned(), Value::String(text.to_string()));
    let sealed = sealer.seal("tools/call", &text, None, &answers, now);
    assert!(sealer.open(&sealed, "tools/call", &text, None, now).is_ok());
    assert!(
        sealer
            .open(&sealed, "prompts/get", &text, None, now)
            .is_err()
    );
});
