//! Upstream credentials of `tessera proxy --config`: an upstream that
//! requires OAuth tokens (`tessera serve --http --auth-issuer`, with the
//! repository's test authorization server) reached with a client
//! credentials grant (one token, fetched once and reused) and with a static
//! header read from an environment variable; the same upstream without
//! credentials is never reachable.

use crate::common;

use common::start_proxy_env;

use serde_json::json;
use tessera::client::Client;
use tessera_auth::testing::TestAuthorizationServer;
use tessera_testkit::bounded;

const SECRET: &str = "gateway-proxy-secret-0123456789";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_credentials_and_a_header_from_the_environment() {
    let asrv = TestAuthorizationServer::start().await.unwrap();
    asrv.register_client("gateway-proxy", SECRET);
    let (_upstream, up_url) = common::serve_behind(&asrv).await;
    let token = asrv.token(&asrv.claims(&up_url, &["mcp"]));

    let dir = std::env::temp_dir().join(format!("tessera-gw-creds-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("servers.json");
    let doc = json!({"mcpServers": {
        "cc": {"url": up_url, "auth": {"type": "clientCredentials", "clientId": "gateway-proxy",
                                        "clientSecretEnv": "GW_CC_SECRET", "scope": "mcp"}},
        "hdr": {"url": up_url, "auth": {"type": "header", "header": "Authorization",
                                         "prefix": "Bearer ", "valueEnv": "GW_HDR_TOKEN"}},
        "bare": {"url": up_url}
    }});
    std::fs::write(&file, doc.to_string()).unwrap();
    let path = file.to_str().unwrap().to_owned();
    let env_token = token.clone();
    let (_proxy, url) = tokio::task::spawn_blocking(move || {
        start_proxy_env(
            &["--http", "127.0.0.1:0", "--config", &path],
            &[("GW_CC_SECRET", SECRET), ("GW_HDR_TOKEN", &env_token)],
        )
    })
    .await
    .unwrap();

    let t = tessera_http::HttpClientTransport::new(&url).unwrap();
    let c = bounded(
        "connecting to the proxy",
        Client::builder("gateway-test", "1.0").connect_transport(t),
    )
    .await
    .unwrap();
    // The upstreams connect in the background: wait (bounded) for both.
    let names = bounded("both credentialed upstreams listed", async {
        loop {
            let names: Vec<String> = c
                .list_tools()
                .await
                .expect("lists")
                .into_iter()
                .map(|t| t.name)
                .collect();
            if names.iter().any(|n| n == "cc__echo") && names.iter().any(|n| n == "hdr__echo") {
                break names;
            }
            tokio::task::yield_now().await;
        }
    })
    .await;
    assert!(
        !names.iter().any(|n| n.starts_with("bare__")),
        "an upstream without credentials is refused: {names:?}"
    );
    for i in 0..3 {
        for tool in ["cc__echo", "hdr__echo"] {
            let text = format!("{tool} {i}");
            let r = bounded(tool, c.call_tool(tool, json!({"text": text})))
                .await
                .unwrap();
            assert_eq!(r.content[0].as_text(), Some(text.as_str()));
        }
    }
    // One client credentials token served every connection and call.
    assert_eq!(asrv.token_requests("client_credentials"), 1);
    c.close().await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn credential_errors_name_the_server_and_field() {
    let dir = std::env::temp_dir().join(format!("tessera-gw-creds-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (auth, why) in [
        (json!({"type": "basic"}), "auth.type must be"),
        (
            json!({"type": "header", "header": "X-Key", "valueEnv": "GW_UNSET_VAR_FOR_TEST"}),
            "auth.valueEnv: the environment variable GW_UNSET_VAR_FOR_TEST is not set",
        ),
        (
            json!({"type": "clientCredentials", "clientId": "x", "clientSecret": "inline"}),
            "auth.clientSecret: unknown field",
        ),
        // The caller's token is needed, and without --auth-issuer there is none.
        (
            json!({"type": "forward", "acknowledgeTokenPassthrough": true}),
            "auth.type: \"forward\" starts from the caller's OAuth token",
        ),
        (
            json!({"type": "tokenExchange", "clientId": "x", "clientSecretEnv": "HOME"}),
            "auth.type: \"tokenExchange\" starts from the caller's OAuth token",
        ),
        (
            json!({"type": "forward"}),
            "auth.acknowledgeTokenPassthrough: must be true",
        ),
    ] {
        let file = dir.join("servers.json");
        let doc = json!({"mcpServers": {"web": {"url": "http://127.0.0.1:1/mcp", "auth": auth}}});
        std::fs::write(&file, doc.to_string()).unwrap();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_tessera"))
            .args(["proxy", "--http", "127.0.0.1:0", "--config"])
            .arg(&file)
            .env_remove("GW_UNSET_VAR_FOR_TEST")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{auth}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("server \"web\"") && err.contains(why),
            "{auth}: {err}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The OAuth front of the proxy (`--auth-issuer`) names the caller for the
/// gateway's rules: a token's claims decide what it sees.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oauth_token_claims_drive_the_rules() {
    let asrv = TestAuthorizationServer::start().await.unwrap();
    let issuer = asrv.issuer();
    let dir = std::env::temp_dir().join(format!("tessera-gw-oauth-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("servers.json");
    let doc = json!({
        "mcpServers": {"up": {"command": env!("CARGO_BIN_EXE_tessera"), "args": ["serve", "--stdio"]}},
        "gateway": {"rules": [
            {"when": {"groups": "eng"}, "tools": "echo", "effect": "allow"}
        ]}
    });
    std::fs::write(&file, doc.to_string()).unwrap();
    let path = file.to_str().unwrap().to_owned();
    let (_proxy, url) = tokio::task::spawn_blocking(move || {
        start_proxy_env(
            &[
                "--http",
                "127.0.0.1:0",
                "--config",
                &path,
                "--auth-issuer",
                &issuer,
            ],
            &[] as &[(&str, &str)],
        )
    })
    .await
    .unwrap();
    let token_for = |groups: Option<&str>| {
        let mut c = asrv.claims(&url, &["mcp"]);
        if let Some(g) = groups {
            c.insert("groups".into(), json!([g]));
        }
        asrv.token(&c)
    };
    let connect = |token: String| {
        let url = url.clone();
        async move {
            let mut h = tessera_http::http::HeaderMap::new();
            h.insert("authorization", format!("Bearer {token}").parse().unwrap());
            let t = tessera_http::HttpClientTransport::with_headers(&url, h).unwrap();
            bounded(
                "connecting with a token",
                Client::builder("gateway-test", "1.0").connect_transport(t),
            )
            .await
            .unwrap()
        }
    };
    let eng = connect(token_for(Some("eng"))).await;
    let names = bounded("up listed", async {
        loop {
            let t: Vec<String> = eng
                .list_tools()
                .await
                .unwrap()
                .into_iter()
                .map(|t| t.name)
                .collect();
            if !t.is_empty() {
                break t;
            }
            tokio::task::yield_now().await;
        }
    })
    .await;
    assert_eq!(names, ["up__echo"]);
    let sales = connect(token_for(Some("sales"))).await;
    assert!(
        bounded("list", sales.list_tools())
            .await
            .unwrap()
            .is_empty()
    );
    // No token: 401 from the OAuth front.
    let r = reqwest::Client::new()
        .post(&url)
        .header("content-type", "application/json")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    eng.close().await;
    sales.close().await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// `tokenExchange` through the real binaries: the proxy behind its OAuth
/// front trades each caller's token (issued for the proxy, which the
/// upstream `tessera serve --auth-issuer` refuses) for one issued for the
/// upstream, once per caller, and a refused exchange is an error for the
/// caller.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn token_exchange_per_caller_through_the_binaries() {
    const EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
    let asrv = TestAuthorizationServer::start().await.unwrap();
    asrv.register_client("gateway-proxy", SECRET);
    let issuer = asrv.issuer();
    let (_upstream, up_url) = common::serve_behind(&asrv).await;
    let dir = std::env::temp_dir().join(format!("tessera-gw-exchange-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("servers.json");
    let doc = json!({"mcpServers": {
        "up": {"url": up_url, "auth": {"type": "tokenExchange", "clientId": "gateway-proxy",
                                        "clientSecretEnv": "GW_X_SECRET", "scope": "mcp"}}
    }});
    std::fs::write(&file, doc.to_string()).unwrap();
    let path = file.to_str().unwrap().to_owned();
    let (_proxy, url) = tokio::task::spawn_blocking(move || {
        start_proxy_env(
            &[
                "--http",
                "127.0.0.1:0",
                "--config",
                &path,
                "--auth-issuer",
                &issuer,
            ],
            &[("GW_X_SECRET", SECRET)],
        )
    })
    .await
    .unwrap();
    let connect = |sub: &str| {
        let mut claims = asrv.claims(&url, &["mcp"]);
        claims.insert("sub".into(), json!(sub));
        let token = asrv.token(&claims);
        let url = url.clone();
        async move {
            let mut h = tessera_http::http::HeaderMap::new();
            h.insert("authorization", format!("Bearer {token}").parse().unwrap());
            let t = tessera_http::HttpClientTransport::with_headers(&url, h).unwrap();
            bounded(
                "connecting with a token",
                Client::builder("gateway-test", "1.0").connect_transport(t),
            )
            .await
            .unwrap()
        }
    };
    let alice = connect("alice").await;
    let bob = connect("bob").await;
    for i in 0..2 {
        for (c, who) in [(&alice, "alice"), (&bob, "bob")] {
            let text = format!("{who} {i}");
            let r = bounded("echo", c.call_tool("up__echo", json!({"text": text})))
                .await
                .unwrap();
            assert_eq!(r.content[0].as_text(), Some(text.as_str()));
        }
    }
    assert_eq!(asrv.token_requests(EXCHANGE), 2, "one exchange per caller");
    let issued = asrv.exchanges();
    let subs: Vec<&str> = issued.iter().map(|c| c["sub"].as_str().unwrap()).collect();
    assert_eq!(subs, ["alice", "bob"]);
    for c in &issued {
        assert_eq!(c["aud"], json!(up_url));
        assert_eq!(c["act"], json!({"sub": "gateway-proxy"}));
    }
    asrv.configure_exchange(|s| s.refuse = Some("access_denied".into()));
    let carol = connect("carol").await;
    let err = bounded("refused", carol.call_tool("up__echo", json!({"text": "x"})))
        .await
        .expect_err("the exchange is refused");
    assert!(err.to_string().contains("access_denied"), "{err}");
    for c in [alice, bob, carol] {
        c.close().await;
    }
    let _ = std::fs::remove_dir_all(&dir);
}
