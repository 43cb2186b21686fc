//! The OAuth client end to end: a `tessera_client::Client` over
//! `HttpClientTransport` with an `OAuthClient` installed, against
//! `tessera_http::McpHttp` behind the bearer layer and the test
//! authorization server: registration, the code flow, then a step-up when
//! a tool needs a scope the first token lacks. Observers see every
//! exchange: the flow's labelled by phase, the transport's with status.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use tessera_auth::client::{
    Grant, HeadlessUserAgent, OAuthClient, OAuthExchange, OAuthObserver, OAuthPhase,
};
use tessera_auth::server::{BearerAuthLayer, JwtVerifier};
use tessera_auth::testing::TestAuthorizationServer;
use tessera_client::Client;
use tessera_http::{HttpClientTransport, HttpExchange, HttpObserver, McpHttp, ResponseMode};
use tessera_server::{Server, tool};
use tower::Layer;

/// What the observers saw: the flow's phases with their statuses, and the
/// transport's statuses.
#[derive(Default)]
struct Seen {
    flow: Mutex<Vec<(OAuthPhase, u16)>>,
    wire: Mutex<Vec<u16>>,
}

impl OAuthObserver for Seen {
    fn exchange(&self, e: &OAuthExchange<'_>) {
        let status = e.outcome.as_ref().map_or(0, |(s, _, _)| *s);
        self.flow.lock().unwrap().push((e.phase, status));
    }
}

impl HttpObserver for Seen {
    fn exchange(&self, e: &HttpExchange<'_>) {
        let status = e.outcome.as_ref().map_or(0, |(s, _)| s.as_u16());
        self.wire.lock().unwrap().push(status);
    }
}

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
    let seen = Arc::new(Seen::default());
    let oauth = Arc::new(
        OAuthClient::builder(&resource, Grant::AuthorizationCode(Arc::new(ua)))
            .client_name("e2e")
            .observer(seen.clone())
            .build()
            .unwrap(),
    );
    let transport = HttpClientTransport::new(&resource)
        .unwrap()
        .with_auth(oauth.clone())
        .with_observer(seen.clone());
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

    // The flow, step by step: discovery, one registration, a token per grant.
    let flow = seen.flow.lock().unwrap().clone();
    let phases: Vec<OAuthPhase> = flow.iter().map(|(p, _)| *p).collect();
    assert_eq!(phases[0], OAuthPhase::Discovery, "{flow:?}");
    let count = |p| phases.iter().filter(|x| **x == p).count();
    assert_eq!(count(OAuthPhase::Registration), 1, "{flow:?}");
    assert_eq!(count(OAuthPhase::Token), 2, "{flow:?}");
    assert!(
        flow.iter()
            .any(|(p, s)| *p == OAuthPhase::Registration && *s == 201)
    );
    assert!(
        flow.iter()
            .all(|(p, s)| *p != OAuthPhase::Token || *s == 200),
        "{flow:?}"
    );
    // The wire: challenged first (401), then the insufficient scope (403).
    let wire = seen.wire.lock().unwrap().clone();
    assert_eq!(wire.first(), Some(&401), "{wire:?}");
    assert!(wire.contains(&403) && wire.contains(&200), "{wire:?}");
    let _ = stop.send(());
    let _ = task.await;
}
