//! What an authorization client reads from servers it does not trust:
//! `WWW-Authenticate` challenges and OAuth / OpenID Connect metadata.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tessera_auth::challenge::BearerChallenge;
use tessera_auth::metadata::{AuthorizationServerMetadata, ProtectedResourceMetadata};

fuzz_target!(|data: &[u8]| {
    if let Ok(header) = std::str::from_utf8(data) {
        let _ = BearerChallenge::parse_all(header);
        let _ = BearerChallenge::parse(header);
    }
    if let Ok(m) = serde_json::from_slice::<AuthorizationServerMetadata>(data) {
        let _ = m.supports_s256();
        let _ = m.supports_grant("refresh_token");
        let _ = m.supports_scope("mcp");
    }
    let _ = serde_json::from_slice::<ProtectedResourceMetadata>(data);
});
