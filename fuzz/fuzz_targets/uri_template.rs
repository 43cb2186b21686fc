//! RFC 6570 templates: any template parses or is refused, and matching any
//! URI against a parsed one terminates without a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tessera_server::UriTemplate;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (template, uri) = text.split_once('\n').unwrap_or((text, ""));
    if let Ok(t) = UriTemplate::parse(template) {
        let _ = t.match_uri(uri);
        let _ = t.match_uri(template);
    }
});
