//! The DPoP attack matrix (RFC 9449), shared by the tests of `tessera serve`
//! and `tessera proxy`: both put the same verifier in front of their
//! endpoint, and both must give each attack the same status, `error` and
//! challenges.
#![allow(dead_code)] // each test binary uses a part of it

use std::time::Duration;

use serde_json::{Map, Value, json};
use tessera_auth::challenge::BearerChallenge;
use tessera_auth::testing::{TestAuthorizationServer, TestDpopKey, now, signing_input};

#[derive(Debug)]
pub struct Answer {
    /// The HTTP status.
    pub status: u16,
    /// Every challenge of every `WWW-Authenticate` header.
    pub challenges: Vec<BearerChallenge>,
    /// The `DPoP-Nonce` header.
    pub nonce: Option<String>,
    /// The body.
    pub body: String,
}

impl Answer {
    /// The challenge of `scheme`.
    pub fn challenge(&self, scheme: &str) -> Option<&BearerChallenge> {
        self.challenges
            .iter()
            .find(|c| c.scheme.eq_ignore_ascii_case(scheme))
    }

    /// The schemes challenged, in order.
    pub fn schemes(&self) -> Vec<String> {
        self.challenges.iter().map(|c| c.scheme.clone()).collect()
    }
}

/// A 2026-07-28 `tools/list` POSTed to `url` with `Authorization: auth`
/// and one `DPoP` header per proof.
pub async fn call(url: &str, auth: Option<String>, proofs: &[String]) -> Answer {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "serve-dpop-test", "version": "1"}
    }}});
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap();
    let mut req = client
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/list")
        .body(body.to_string());
    if let Some(a) = auth {
        req = req.header("authorization", a);
    }
    for p in proofs {
        req = req.header("dpop", p.as_str());
    }
    let r = req.send().await.unwrap();
    let status = r.status().as_u16();
    let challenges = r
        .headers()
        .get_all("www-authenticate")
        .iter()
        .flat_map(|v| BearerChallenge::parse_all(v.to_str().unwrap()))
        .collect();
    let nonce = r
        .headers()
        .get("dpop-nonce")
        .map(|v| v.to_str().unwrap().to_owned());
    let body = r.text().await.unwrap_or_default();
    Answer {
        status,
        challenges,
        nonce,
        body,
    }
}

/// A token of `asrv` for `aud`, bound to `key` when given.
pub fn token(asrv: &TestAuthorizationServer, aud: &str, key: Option<&TestDpopKey>) -> String {
    let mut c = asrv.claims(aud, &[]);
    if let Some(k) = key {
        c.insert("cnf".into(), k.cnf());
    }
    asrv.token(&c)
}

/// The attacks, each a proof (or proofs) and the `error` it must get.
pub struct Attack {
    /// What it tries.
    pub name: &'static str,
    /// The `Authorization` header.
    pub auth: String,
    /// The `DPoP` headers.
    pub proofs: Vec<String>,
    /// The `error` it must get (empty: it must succeed).
    pub error: &'static str,
    /// What the `error_description` must contain.
    pub says: &'static str,
}

pub fn attacks(
    key: &TestDpopKey,
    other: &TestDpopKey,
    url: &str,
    bound: &str,
    port: u16,
) -> Vec<Attack> {
    let dpop = format!("DPoP {bound}");
    let claims = |f: &dyn Fn(&mut Map<String, Value>)| {
        let mut c = key.claims("POST", url, Some(bound), None);
        f(&mut c);
        c
    };
    let signed = |f: &dyn Fn(&mut Map<String, Value>)| key.sign(&key.header(), &claims(f));
    let at =
        |htu: String| signed(&move |c| drop(c.insert("htu".into(), Value::from(htu.as_str()))));
    let replayed = key.proof("POST", url, bound, None);
    let mut none_header = key.header();
    none_header.insert("alg".into(), "none".into());
    let mut hs_header = key.header();
    hs_header.insert("alg".into(), "HS256".into());
    let mut private_header = key.header();
    let mut leaked = key.jwk.clone();
    leaked.extend(key.private.clone());
    private_header.insert("jwk".into(), Value::Object(leaked));
    let mut jwt_typ = key.header();
    jwt_typ.insert("typ".into(), "JWT".into());
    let big = format!(
        "{}.{}.{}",
        "e".repeat(40_000),
        "e".repeat(40_000),
        "A".repeat(20_000)
    );
    let a = |name, auth: &str, proofs: Vec<String>, error, says| Attack {
        name,
        auth: auth.to_owned(),
        proofs,
        error,
        says,
    };
    vec![
        a("replayed jti", &dpop, vec![replayed.clone()], "", ""),
        a(
            "replayed jti",
            &dpop,
            vec![replayed],
            "invalid_dpop_proof",
            "already used",
        ),
        a(
            "htm mismatch",
            &dpop,
            vec![key.sign(
                &key.header(),
                &claims(&|c| drop(c.insert("htm".into(), "GET".into()))),
            )],
            "invalid_dpop_proof",
            "htm",
        ),
        a(
            "htu other host",
            &dpop,
            vec![at(format!("http://evil.example:{port}/mcp"))],
            "invalid_dpop_proof",
            "htu",
        ),
        a(
            "htu other port",
            &dpop,
            vec![at("http://127.0.0.1:1/mcp".into())],
            "invalid_dpop_proof",
            "htu",
        ),
        a(
            "htu other path",
            &dpop,
            vec![at(format!("http://127.0.0.1:{port}/other"))],
            "invalid_dpop_proof",
            "htu",
        ),
        a(
            "htu with query",
            &dpop,
            vec![at(format!("{url}?x=1"))],
            "invalid_dpop_proof",
            "htu",
        ),
        a(
            "htu with fragment",
            &dpop,
            vec![at(format!("{url}#f"))],
            "invalid_dpop_proof",
            "htu",
        ),
        a(
            "iat too old",
            &dpop,
            vec![signed(&|c| {
                drop(c.insert("iat".into(), json!(now() - 120)))
            })],
            "invalid_dpop_proof",
            "ago",
        ),
        a(
            "iat in the future",
            &dpop,
            vec![signed(&|c| {
                drop(c.insert("iat".into(), json!(now() + 120)))
            })],
            "invalid_dpop_proof",
            "future",
        ),
        a(
            "missing ath",
            &dpop,
            vec![signed(&|c| drop(c.remove("ath")))],
            "invalid_dpop_proof",
            "no ath",
        ),
        a(
            "missing jti",
            &dpop,
            vec![signed(&|c| drop(c.remove("jti")))],
            "invalid_dpop_proof",
            "no jti",
        ),
        a(
            "missing htm",
            &dpop,
            vec![signed(&|c| drop(c.remove("htm")))],
            "invalid_dpop_proof",
            "no htm",
        ),
        a(
            "missing htu",
            &dpop,
            vec![signed(&|c| drop(c.remove("htu")))],
            "invalid_dpop_proof",
            "no htu",
        ),
        a(
            "missing iat",
            &dpop,
            vec![signed(&|c| drop(c.remove("iat")))],
            "invalid_dpop_proof",
            "no iat",
        ),
        a(
            "not a JWT",
            &dpop,
            vec!["not-a-jwt".to_owned()],
            "invalid_dpop_proof",
            "three parts",
        ),
        a(
            "wrong ath",
            &dpop,
            vec![signed(&|c| {
                drop(c.insert(
                    "ath".into(),
                    Value::from(tessera_auth::testing::ath("another-token")),
                ))
            })],
            "invalid_dpop_proof",
            "ath does not match",
        ),
        a(
            "proof key is not cnf.jkt",
            &dpop,
            vec![other.proof("POST", url, bound, None)],
            "invalid_token",
            "cnf.jkt",
        ),
        a(
            "alg none",
            &dpop,
            vec![format!(
                "{}.",
                signing_input(&none_header, &claims(&|_| {}))
            )],
            "invalid_dpop_proof",
            "\"none\" is not accepted",
        ),
        a(
            "HS256 with the public key",
            &dpop,
            vec![key.hmac_with_public_key(&hs_header, &claims(&|_| {}))],
            "invalid_dpop_proof",
            "\"HS256\" is not accepted",
        ),
        a(
            "jwk with the private key",
            &dpop,
            vec![key.sign(&private_header, &claims(&|_| {}))],
            "invalid_dpop_proof",
            "private key",
        ),
        a(
            "typ JWT",
            &dpop,
            vec![key.sign(&jwt_typ, &claims(&|_| {}))],
            "invalid_dpop_proof",
            "typ",
        ),
        a(
            "bad signature",
            &dpop,
            vec![other.sign(&key.header(), &claims(&|_| {}))],
            "invalid_dpop_proof",
            "signature",
        ),
        a(
            "two DPoP headers",
            &dpop,
            vec![
                key.proof("POST", url, bound, None),
                key.proof("POST", url, bound, None),
            ],
            "invalid_dpop_proof",
            "more than one",
        ),
        a(
            "no DPoP header",
            &dpop,
            vec![],
            "invalid_dpop_proof",
            "no DPoP header",
        ),
        a(
            "100 KB proof",
            &dpop,
            vec![big],
            "invalid_dpop_proof",
            "bytes",
        ),
        a(
            "bound token as Bearer",
            &format!("Bearer {bound}"),
            vec![],
            "invalid_token",
            "bound to a DPoP key",
        ),
    ]
}

/// Runs the matrix against the endpoint `base` + `/mcp` of a server started
/// with `--auth-dpop MODE`, protected by `asrv`'s tokens; `port` is its port.
pub async fn matrix(asrv: &TestAuthorizationServer, base: &str, port: u16, mode: &str) {
    let url = format!("{base}/mcp");
    let (key, other) = (TestDpopKey::es256(), TestDpopKey::es256());
    let bound = token(asrv, &url, Some(&key));
    let plain = token(asrv, &url, None);
    let required = mode == "required";
    let algs = "ES256 EdDSA PS256 RS256";

    // The metadata announces DPoP.
    let meta: Value = reqwest::get(format!("{base}/.well-known/oauth-protected-resource/mcp"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        meta["dpop_signing_alg_values_supported"],
        json!(["ES256", "EdDSA", "PS256", "RS256"])
    );
    assert_eq!(meta["dpop_bound_access_tokens_required"], json!(required));

    // No token: the schemes of the mode, no error.
    let a = call(&url, None, &[]).await;
    assert_eq!(a.status, 401, "{a:?}");
    let want: &[&str] = if required {
        &["DPoP"]
    } else {
        &["Bearer", "DPoP"]
    };
    assert_eq!(a.schemes(), want, "{a:?}");
    assert!(a.challenges.iter().all(|c| c.error.is_none()), "{a:?}");
    let d = a.challenge("DPoP").unwrap();
    assert_eq!(d.other, [("algs".to_owned(), algs.to_owned())]);
    assert_eq!(
        d.resource_metadata.as_deref(),
        Some(format!("{base}/.well-known/oauth-protected-resource/mcp").as_str())
    );

    // A valid proof.
    let a = call(
        &url,
        Some(format!("DPoP {bound}")),
        &[key.proof("POST", &url, &bound, None)],
    )
    .await;
    assert_eq!(a.status, 200, "valid proof: {a:?}");
    assert!(a.body.contains("tools"), "{a:?}");

    // A plain bearer token: fine when allowed, refused when required.
    let a = call(&url, Some(format!("Bearer {plain}")), &[]).await;
    if required {
        assert_eq!(a.status, 401, "{a:?}");
        assert_eq!(a.schemes(), ["DPoP"]);
        let c = a.challenge("DPoP").unwrap();
        assert_eq!(c.error.as_deref(), Some("invalid_token"));
        assert!(
            c.error_description
                .as_deref()
                .unwrap()
                .contains("DPoP-bound tokens only")
        );
    } else {
        assert_eq!(a.status, 200, "plain bearer in allowed mode: {a:?}");
    }

    // An unbound token presented with the DPoP scheme (and a good proof).
    let a = call(
        &url,
        Some(format!("DPoP {plain}")),
        &[key.proof("POST", &url, &plain, None)],
    )
    .await;
    assert_eq!(a.status, 401, "{a:?}");
    let c = a.challenge("DPoP").unwrap();
    assert_eq!(c.error.as_deref(), Some("invalid_token"));
    assert!(
        c.error_description
            .as_deref()
            .unwrap()
            .contains("not DPoP-bound")
    );

    for attack in attacks(&key, &other, &url, &bound, port) {
        let a = call(&url, Some(attack.auth.clone()), &attack.proofs).await;
        if attack.error.is_empty() {
            assert_eq!(a.status, 200, "{} (first use): {a:?}", attack.name);
            continue;
        }
        assert_eq!(a.status, 401, "{}: {a:?}", attack.name);
        let as_bearer = attack.auth.starts_with("Bearer");
        // The error is on the challenge of the scheme used (DPoP only, when required).
        let (with_error, plain_scheme) = match (required, as_bearer) {
            (true, _) => ("DPoP", None),
            (false, true) => ("Bearer", Some("DPoP")),
            (false, false) => ("DPoP", Some("Bearer")),
        };
        let c = a
            .challenge(with_error)
            .unwrap_or_else(|| panic!("{}: {a:?}", attack.name));
        assert_eq!(
            c.error.as_deref(),
            Some(attack.error),
            "{}: {a:?}",
            attack.name
        );
        let why = c.error_description.as_deref().unwrap_or_default();
        assert!(why.contains(attack.says), "{}: {why:?}", attack.name);
        match plain_scheme {
            Some(s) => assert_eq!(
                a.challenge(s).unwrap().error,
                None,
                "{}: {a:?}",
                attack.name
            ),
            None => assert_eq!(a.schemes(), ["DPoP"], "{}: {a:?}", attack.name),
        }
        let body: Value = serde_json::from_str(&a.body).unwrap();
        assert_eq!(body["error"], attack.error, "{}", attack.name);
    }
}
