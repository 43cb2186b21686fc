//! Skill frontmatter: any text parses to an object or an error.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = tessera_types::skills::parse_frontmatter(text);
    }
});
