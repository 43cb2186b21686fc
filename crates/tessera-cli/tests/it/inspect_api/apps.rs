//! MCP Apps through the API: a tool's view fetched with the policy the
//! sandbox enforces; the sandbox origin (a second port) serving the proxy
//! with that policy, framed only by the inspector, behind the same Host and
//! Origin rules.

use serde_json::json;

use super::client::*;
use super::common::start_inspect;

#[tokio::test]
async fn a_view_is_fetched_and_the_sandbox_origin_serves_its_proxy() {
    let inspector = start_inspect(&[], START);
    let api = Api::of(&inspector);
    let conn = api.connect_reference("auto").await;
    let id = conn["id"].as_u64().unwrap();
    // The client declared the Apps extension.
    let tools = api.get(&format!("connections/{id}/tools")).await;
    assert!(
        tools["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "app_counter"
                && t["_meta"]["ui"]["resourceUri"] == "ui://tessera/counter"),
        "{tools}"
    );
    let view = api
        .post(
            &format!("connections/{id}/apps/view"),
            json!({"tool": "app_counter"}),
        )
        .await;
    assert_eq!(view["uri"], "ui://tessera/counter");
    assert!(view["html"].as_str().unwrap().contains("ui/initialize"));
    assert_eq!(view["meta"]["prefersBorder"], true);
    assert_eq!(view["visibility"], json!(["model", "app"]));
    let policy = view["policy"].as_str().unwrap();
    assert!(policy.contains("connect-src 'none'"), "{policy}");
    assert_eq!(view["refused"], json!([]));
    // A tool without a view, and one never listed.
    let v = api
        .expect(
            400,
            reqwest::Method::POST,
            &format!("connections/{id}/apps/view"),
            Some(json!({"tool": "echo"})),
        )
        .await;
    says(&v, "names no view");
    api.expect(
        404,
        reqwest::Method::POST,
        &format!("connections/{id}/apps/view"),
        Some(json!({"tool": "nope"})),
    )
    .await;

    // Client extensions from the page: an identifier that is not one is refused.
    let v = api
        .expect(
            400,
            reqwest::Method::POST,
            "connections",
            Some(
                json!({"command": env!("CARGO_BIN_EXE_tessera"), "args": ["serve", "--stdio"],
                        "extensions": {"not an id": {}}}),
            ),
        )
        .await;
    says(&v, "not an id");

    // The sandbox origin: another port of the same host.
    let info = api.get("info").await;
    let port = info["sandboxPort"].as_u64().unwrap();
    let own: u64 = inspector.base.rsplit(':').next().unwrap().parse().unwrap();
    assert_ne!(port, own);
    let sandbox = format!("http://127.0.0.1:{port}");
    let http = reqwest::Client::new();
    let csp = r#"{"connectDomains":["https://api.example.com","https://x; script-src *"]}"#;
    let r = http
        .get(format!("{sandbox}/proxy.html"))
        .query(&[("host", inspector.base.as_str()), ("csp", csp)])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let header = r.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(
        header.contains("connect-src https://api.example.com;"),
        "{header}"
    );
    assert!(!header.contains("script-src *"), "{header}");
    assert!(
        header.contains(&format!("frame-ancestors http://127.0.0.1:{own}")),
        "{header}"
    );
    assert!(r.text().await.unwrap().contains("/proxy.js"));
    let r = http
        .get(format!("{sandbox}/proxy.js"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    // The page itself may frame the sandbox's port, nothing else.
    let page = http
        .get(format!("{}/", inspector.base))
        .send()
        .await
        .unwrap();
    let page_csp = page.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(
        page_csp.contains(&format!("frame-src http://*:{port};")),
        "{page_csp}"
    );
    // DNS rebinding: a foreign Host is refused on the sandbox port too.
    let r = http
        .get(format!("{sandbox}/proxy.html"))
        .header("Host", format!("evil.example:{port}"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
    // The sandbox serves no API: the inspector's token is worth nothing there.
    let r = http
        .get(format!("{sandbox}/api/info"))
        .bearer_auth(&inspector.token)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
}
