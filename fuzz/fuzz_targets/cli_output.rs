//! The CLI's output sanitiser (issue 32 item 3): whatever text a server
//! sends, what `tessera` prints of it holds no character that drives a
//! terminal — [`block`] keeps only newlines and tabs, [`line`] not even
//! those — text without control characters is printed unchanged, and the
//! JSON form stays valid JSON with the same value and no DEL or C1
//! character (C0 already escaped by serde_json).
//!
//! The sanitiser is the `tessera` binary's `peer_text` module, compiled here
//! from its source file (it uses only std).
#![no_main]

#[path = "../../crates/tessera-cli/src/peer_text.rs"]
#[allow(dead_code)]
mod peer_text;

use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};

/// A character that starts or is part of a terminal control sequence.
fn drives_terminal(c: char) -> bool {
    c.is_ascii_control() || ('\u{80}'..='\u{9f}').contains(&c)
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let block = peer_text::block(&text);
    assert!(
        !block
            .chars()
            .any(|c| drives_terminal(c) && c != '\n' && c != '\t'),
        "block left a control character: {block:?}"
    );
    let line = peer_text::line(&text);
    assert!(
        !line.chars().any(drives_terminal),
        "line left a control character: {line:?}"
    );
    if !text.chars().any(drives_terminal) {
        assert_eq!(block, text);
        assert_eq!(line, text);
    }
    // Every visible character survives, in order.
    let visible = |s: &str| {
        s.chars()
            .filter(|c| !drives_terminal(*c))
            .collect::<String>()
    };
    assert!(visible(&line).len() >= visible(&text).len());

    for doc in [json!(text), json!({"k": text, "n": [text]})] {
        for serialised in [
            serde_json::to_string(&doc).unwrap(),
            serde_json::to_string_pretty(&doc).unwrap(),
        ] {
            let safe = peer_text::json(&serialised);
            assert!(
                !safe.chars().any(|c| drives_terminal(c) && c != '\n'),
                "json left a control character: {safe:?}"
            );
            let back: Value = serde_json::from_str(&safe).expect("still valid JSON");
            assert_eq!(back, doc, "the same value");
        }
    }
});
