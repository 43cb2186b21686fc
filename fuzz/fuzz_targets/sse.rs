//! The SSE codec: the client's decoder takes any bytes in any chunking, and
//! what the server's writer encodes decodes back to the same data.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tessera_http::sse::{SseDecoder, SseEvent};

fuzz_target!(|data: &[u8]| {
    // Arbitrary input, cut into chunks at the positions the first byte picks.
    let step = usize::from(data.first().copied().unwrap_or(1)).max(1);
    let mut d = SseDecoder::new();
    for chunk in data.chunks(step) {
        let _ = d.feed(chunk);
    }
    // The same with a small limit: a block past it is refused, and what the
    // decoder holds never grows past it by more than one chunk.
    let mut d = SseDecoder::with_limit(32);
    for chunk in data.chunks(step) {
        if let Ok(frames) = d.feed(chunk) {
            assert!(frames.iter().all(|f| f.data.len() <= 32));
        }
    }
    // Round trip: one event with this data (text without CR, as the writer
    // takes it) comes back whole.
    if let Ok(text) = std::str::from_utf8(data) {
        if !text.contains('\r') {
            let bytes = SseEvent::data(text.as_bytes()).id("7").to_bytes();
            let mut d = SseDecoder::new();
            let frames = d.feed(&bytes).expect("a fuzz input is within the default limit");
            assert_eq!(frames.len(), 1, "{text:?}");
            assert_eq!(frames[0].data, text);
            assert_eq!(frames[0].id.as_deref(), Some("7"));
        }
    }
});
