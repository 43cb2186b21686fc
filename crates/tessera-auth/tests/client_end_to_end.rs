//! The OAuth client end to end: a `tessera_client::Client` over
//! `HttpClientTransport` with an `OAuthClient` installed, against
//! `tessera_http::McpHttp` behind the bearer layer and the test
//! authorization server: registration, the code flow, then a step-up when
//! a tool needs a scope the first token lacks.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::json;
use tessera_auth::client::{Grant, HeadlessUserAgent, OAuthClient};
use tessera_auth::server::{BearerAuthLayer, JwtVerifier};
use tessera_auth::testing::TestAuthorizationServer;
use tessera_client::Client;
use tessera_http::{HttpClientTransport, McpHttp, ResponseMode};
use tessera_server::{Server, tool};
use tower::Layer;

#[tokio::test]
async fn client_authorizes_and_steps_up_over_http() {
    tokio::time::timeout(Duration::from_secs(60), run())
        .await
        .expect("the test did not finish in time");
}

async fn run() {
    let asrv = TestAuthorizationServer::start().await.unwrap();
    let writes = Arc::new(AtomicUsize::new(0));
    let w = writes.clone();
    let server = Server::builder()
        .name_version("auth-client-e2e", "1.0.0")
        .tool(
            tool("hello")
                .description("Says hello")
                .handler(|| async { "hello" }),
        )
        .tool(
            tool("write")
                .description("Writes")
                .scopes(["files:write"])
                .handler(move || {
                    let w = w.clone();
                    async move {
                        w.fetch_add(1, Ordering::SeqCst);
                        "written".to_owned()
                    }
                }),
        )
        .build()
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let resource = format!("http://{addr}/mcp");
    let mcp = McpHttp::builder(server.clone())
        .bind_address(addr)
        .endpoint_path("/mcp")
        .response_mode(ResponseMode::Json)
        .build();
    let verifier = JwtVerifier::builder(asrv.issuer(), &resource)
        .min_refresh_interval(Duration::ZERO)
        .build();
    let layer = BearerAuthLayer::builder(&resource, verifier)
        .authorization_server(asrv.issuer())
        .scopes_supported(["mcp"])
        .require_scopes(["mcp"])
        .tool_scopes(move |name| server.tool_scopes(name))
        .build();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(tessera_http::serve_with(
        listener,
        mcp.clone(),
        layer.layer(mcp),
        async move {
            let _ = stopped.await;
        },
    ));

    let ua = HeadlessUserAgent::new("http://127.0.0.1:9/callback").unwrap();
    let oauth = Arc::new(
        OAuthClient::builder(&resource, Grant::AuthorizationCode(Arc::new(ua)))
            .client_name("e2e")
            .build()
            .unwrap(),
    );
    let transport = HttpClientTransport::new(&resource)
        .unwrap()
        .with_auth(oauth.clone());
    let client = Client::builder("e2e", "1.0.0")
        .connect_transport(transport)
        .await
        .expect("connect through the OAuth flow");
    let tools = client.list_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "write"));
    let r = client.call_tool("hello", json!({})).await.unwrap();
    assert_ne!(r.is_error, Some(true));
    // `write` needs files:write: 403 insufficient_scope, step-up, retry.
    let r = client.call_tool("write", json!({})).await.unwrap();
    assert_ne!(r.is_error, Some(true), "{r:?}");
    assert_eq!(writes.load(Ordering::SeqCst), 1);
    client.close().await;

    let reqs = asrv.authorization_requests();
    assert_eq!(reqs.len(), 2, "{reqs:?}");
    assert_eq!(reqs[0]["scope"], "mcp");
    let second: Vec<&str> = reqs[1]["scope"].split(' ').collect();
    assert!(
        second.contains(&"mcp") && second.contains(&"files:write"),
        "{second:?}"
    );
    assert_eq!(asrv.registrations().len(), 1);
    let creds = oauth.credentials().await.unwrap().unwrap();
    assert_eq!(creds.resource, resource);
    let _ = stop.send(());
    let _ = task.await;
}
