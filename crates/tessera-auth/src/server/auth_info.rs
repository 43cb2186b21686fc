//! [`AuthInfo`]: what a verified access token says.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::Deserialize;
use serde::de::value::MapDeserializer;
use serde_json::{Map, Value};

use tessera_types::loose::{lenient, present_value, view_map};

/// The registered claims [`AuthInfo`] reads (RFC 7519 §4.1, RFC 9068,
/// RFC 7662), leniently: a claim of another type reads as absent, except
/// the scope and audience claims, kept as sent and read by shape.
#[derive(Debug, Default, Deserialize)]
struct Registered {
    #[serde(default, deserialize_with = "lenient")]
    iss: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    sub: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    client_id: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    azp: Option<String>,
    #[serde(default, deserialize_with = "present_value")]
    scope: Option<Value>,
    #[serde(default, deserialize_with = "present_value")]
    scp: Option<Value>,
    #[serde(default)]
    aud: Option<Value>,
    #[serde(default, deserialize_with = "lenient")]
    exp: Option<u64>,
}

/// The confirmation claim of a sender-constrained token (RFC 9449 §6).
#[derive(Debug, Deserialize)]
struct Bound<'a> {
    #[serde(borrow, default)]
    cnf: Option<Confirmation<'a>>,
}

/// `cnf`: the thumbprint of the key the token is bound to.
#[derive(Debug, Deserialize)]
struct Confirmation<'a> {
    #[serde(borrow, default)]
    jkt: Option<&'a str>,
}

/// The claims as a deserializer, without copying them.
fn borrowed(
    claims: &Map<String, Value>,
) -> MapDeserializer<'_, impl Iterator<Item = (&str, &Value)>, serde_json::Error> {
    MapDeserializer::new(claims.iter().map(|(k, v)| (k.as_str(), v)))
}

/// The strings of an array (other items skipped).
fn strings(items: &[Value]) -> Vec<String> {
    items
        .iter()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect()
}
use tessera_runtime::Principal;

/// The verified claims of an access token, as the handlers of the request
/// see them. The token itself is deliberately not kept: an MCP server must
/// not pass the client's token on to other services.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct AuthInfo {
    /// The issuer (`iss`), if the token or introspection answer names it.
    pub issuer: Option<String>,
    /// The subject (`sub`): the user, or the client for `client_credentials`.
    pub subject: Option<String>,
    /// The OAuth client the token was issued to (`client_id`, or `azp`).
    pub client_id: Option<String>,
    /// The granted scopes.
    pub scopes: Vec<String>,
    /// The audiences (`aud`) the token names.
    pub audience: Vec<String>,
    /// When the token expires (`exp`), in seconds since the Unix epoch.
    pub expires_at: Option<u64>,
    /// Every claim (or every member of the introspection answer).
    pub claims: Map<String, Value>,
}

impl AuthInfo {
    /// Reads the registered claims out of a claim set (a JWT payload or an
    /// RFC 7662 introspection answer). Scopes come from `scope` (a space
    /// separated string, RFC 9068 / RFC 7662) or `scp` (a string or an array).
    pub fn from_claims(claims: Map<String, Value>) -> AuthInfo {
        let registered: Registered = view_map(&claims).unwrap_or_default();
        let scopes = match registered.scope.or(registered.scp) {
            Some(Value::String(s)) => s.split_ascii_whitespace().map(str::to_owned).collect(),
            Some(Value::Array(a)) => strings(&a),
            _ => Vec::new(),
        };
        let audience = match registered.aud {
            Some(Value::String(s)) => vec![s],
            Some(Value::Array(a)) => strings(&a),
            _ => Vec::new(),
        };
        AuthInfo {
            issuer: registered.iss,
            subject: registered.sub,
            client_id: registered.client_id.or(registered.azp),
            scopes,
            audience,
            expires_at: registered.exp,
            claims,
        }
    }

    /// Whether the token grants `scope` itself (no hierarchy applied; the
    /// layer's [`ScopeRules`](super::ScopeRules) apply the hierarchy).
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.iter().any(|s| s == scope)
    }

    /// The thumbprint of the key the token is bound to (`cnf.jkt`, RFC 9449
    /// §6), if it is a DPoP-bound token.
    pub fn dpop_jkt(&self) -> Option<&str> {
        let bound = Bound::deserialize(borrowed(&self.claims)).ok()?;
        bound.cnf?.jkt
    }

    /// When the token expires, if it says.
    pub fn expires(&self) -> Option<SystemTime> {
        self.expires_at.map(|s| UNIX_EPOCH + Duration::from_secs(s))
    }

    /// Who made the request: `"<issuer> sub:<subject>"` (issuer and
    /// subject together, since subjects are only unique per issuer), else
    /// `"<issuer> client:<client id>"` for a token with no subject — a
    /// subject and a client id of the same text are different principals.
    /// A token that names neither is its own principal,
    /// `"<issuer> token:<SHA-256 of its claims>"`: it shares nothing (no
    /// session) with any other token. A DPoP-bound token adds
    /// ` jkt=<thumbprint>`, so what is bound to the principal (sessions) is
    /// also bound to the key. Always `Some` (kept an `Option` for callers).
    pub fn principal(&self) -> Option<Principal> {
        let who = match (&self.subject, &self.client_id) {
            (Some(sub), _) => format!("sub:{sub}"),
            (None, Some(client)) => format!("client:{client}"),
            (None, None) => {
                use base64::Engine as _;
                use sha2::Digest as _;
                let text = serde_json::to_vec(&self.claims).unwrap_or_default();
                let hash = sha2::Sha256::digest(&text);
                format!(
                    "token:{}",
                    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(hash)
                )
            }
        };
        let mut p = match &self.issuer {
            Some(iss) => format!("{iss} {who}"),
            None => who,
        };
        if let Some(jkt) = self.dpop_jkt() {
            p.push_str(" jkt=");
            p.push_str(jkt);
        }
        Some(Principal(p))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_registered_claims() {
        let Value::Object(c) = json!({
            "iss": "https://as", "sub": "alice", "azp": "cli", "aud": ["https://rs/mcp", "x"],
            "scope": "files:read  files:write", "exp": 1700000000
        }) else {
            unreachable!()
        };
        let a = AuthInfo::from_claims(c);
        assert_eq!(a.scopes, ["files:read", "files:write"]);
        assert_eq!(a.audience, ["https://rs/mcp", "x"]);
        assert_eq!(a.client_id.as_deref(), Some("cli"));
        assert_eq!(
            a.principal(),
            Some(Principal("https://as sub:alice".into()))
        );
        assert!(a.has_scope("files:write") && !a.has_scope("files"));
        assert_eq!(
            a.expires(),
            Some(UNIX_EPOCH + Duration::from_secs(1_700_000_000))
        );
    }

    #[test]
    fn scp_array_and_no_subject() {
        let Value::Object(c) = json!({"scp": ["a", 1, "b"], "client_id": "svc"}) else {
            unreachable!()
        };
        let a = AuthInfo::from_claims(c);
        assert_eq!(a.scopes, ["a", "b"]);
        assert_eq!(a.principal(), Some(Principal("client:svc".into())));
        // A subject and a client id of the same text are two principals.
        let Value::Object(c) = json!({"sub": "svc"}) else {
            unreachable!()
        };
        assert_eq!(
            AuthInfo::from_claims(c).principal(),
            Some(Principal("sub:svc".into()))
        );
        // Tokens naming neither are each their own principal.
        let nobody = |jti: &str| {
            let Value::Object(c) = json!({"iss": "https://as", "jti": jti, "exp": 1}) else {
                unreachable!()
            };
            AuthInfo::from_claims(c).principal().unwrap().0
        };
        assert!(
            nobody("a").starts_with("https://as token:"),
            "{}",
            nobody("a")
        );
        assert_ne!(nobody("a"), nobody("b"));
        assert_eq!(
            nobody("a"),
            nobody("a"),
            "the same token, the same principal"
        );
        let Value::Object(c) = json!({"sub": "bob", "cnf": {"jkt": "abc"}}) else {
            unreachable!()
        };
        let a = AuthInfo::from_claims(c);
        assert_eq!(a.dpop_jkt(), Some("abc"));
        assert_eq!(a.principal(), Some(Principal("sub:bob jkt=abc".into())));
    }
}
