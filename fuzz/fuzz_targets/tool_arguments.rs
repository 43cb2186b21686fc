//! Tool-argument validation: an arbitrary JSON Schema (first line) compiles
//! or is refused, and checking an arbitrary value (the rest) against it
//! answers without a panic. Remote references are never fetched.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use tessera_server::schema::Validator;

fuzz_target!(|data: &[u8]| {
    let (schema, value) = match data.iter().position(|b| *b == b'\n') {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &b"null"[..]),
    };
    let Ok(Value::Object(schema)) = serde_json::from_slice::<Value>(schema) else {
        return;
    };
    let Ok(value) = serde_json::from_slice::<Value>(value) else {
        return;
    };
    if let Ok(v) = Validator::new(&schema) {
        let _ = v.check(&value);
    }
});
