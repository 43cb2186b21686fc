//! URL-mode elicitation: a server (built here with the library, served over
//! Streamable HTTP on a loopback port) asks the user to open a URL; the
//! inspector shows the URL and its host and sends the page's consent.

use std::time::Duration;

use serde_json::json;
use tessera::server::{RequestContext, Server, tool};
use tessera::types::{ElicitRequestParams, ElicitRequestURLParams};

use super::client::*;
use super::common;

/// A server with one tool, `visit`, that asks the user to open a URL and
/// returns the action they chose; its `/mcp` URL.
async fn url_asking_server() -> String {
    let server = Server::builder()
        .name_version("url-asker", "1.0.0")
        .tool(
            tool("visit")
                .description("Asks the user to open a URL")
                .handler(|ctx: RequestContext| async move {
                    let mut ask = ElicitRequestURLParams::new(
                        "Sign in to connect your account",
                        "https://accounts.example.com/connect?state=abc",
                    );
                    ask.elicitation_id = Some("e-1".into());
                    let r = ctx
                        .elicit_with(ElicitRequestParams::Url(ask))
                        .await
                        .map_err(|e| format!("elicitation failed: {e}"))?;
                    Ok::<_, String>(format!("action={}", json!(r.action)))
                }),
        )
        .build()
        .unwrap();
    super::fixture::serve_in_process(server).await
}

// The server runs on this runtime: the test's blocking waits must not stall it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_consents_to_a_url_the_server_asks_to_open() {
    let url = url_asking_server().await;
    let inspector = common::start_inspect(&[], START);
    let api = Api::of(&inspector);
    let id = api
        .post("connections", json!({"url": url, "era": "legacy"}))
        .await["id"]
        .as_u64()
        .unwrap();
    let mut seen = 0;
    for (action, expected) in [
        ("accept", "action=\"accept\""),
        ("decline", "action=\"decline\""),
    ] {
        let call = {
            let api = Api::of(&inspector);
            tokio::spawn(async move {
                api.post(
                    &format!("connections/{id}/tools/call"),
                    json!({"name": "visit"}),
                )
                .await
            })
        };
        let ask = next_ask(&api, seen).await;
        seen = ask["ask"].as_u64().unwrap();
        assert_eq!(ask["kind"], "url", "{ask}");
        assert_eq!(ask["url"], "https://accounts.example.com/connect?state=abc");
        assert_eq!(ask["host"], "accounts.example.com");
        assert_eq!(ask["message"], "Sign in to connect your account");
        api.expect(
            204,
            reqwest::Method::POST,
            &format!("asks/{seen}"),
            Some(json!({"reply": {"action": action}})),
        )
        .await;
        let r = tokio::time::timeout(Duration::from_secs(30), call)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(r["result"]["content"][0]["text"], expected, "{r}");
    }
}
