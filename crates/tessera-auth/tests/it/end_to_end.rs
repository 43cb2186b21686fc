//! End to end over real HTTP: `tessera_http::McpHttp` behind the bearer
//! layer, served by `tessera_http::serve_with`, a tool reading the verified
//! `AuthInfo`, a tool that needs a scope, tokens from the test authorization
//! server's token endpoint, all driven with a hyper client.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tessera_auth::challenge::BearerChallenge;
use tessera_auth::server::{AuthInfo, BearerAuthLayer, JwtVerifier};
use tessera_auth::testing::TestAuthorizationServer;
use tessera_http::{McpHttp, ResponseMode};
use tessera_server::{Extension, RequestContext, Server, tool};
use tower::Layer;

struct Fixture {
    addr: SocketAddr,
    resource: String,
    writes: Arc<AtomicUsize>,
    asrv: TestAuthorizationServer,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl Fixture {
    async fn start() -> Fixture {
        let asrv = TestAuthorizationServer::start().await.unwrap();
        let writes = Arc::new(AtomicUsize::new(0));
        let w = writes.clone();
        let server = Server::builder()
            .name_version("auth-e2e", "1.0.0")
            .tool(tool("whoami").description("Who is calling").handler(
                |Extension(auth): Extension<AuthInfo>, ctx: RequestContext| async move {
                    let principal = ctx
                        .extension::<tessera_runtime::Principal>()
                        .map(|p| p.0.clone())
                        .unwrap_or_default();
                    format!(
                        "sub={} client={} scopes={} principal={principal}",
                        auth.subject.unwrap_or_default(),
                        auth.client_id.unwrap_or_default(),
                        auth.scopes.join(",")
                    )
                },
            ))
            .tool(
                tool("write")
                    .description("Writes a file")
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
            .scopes_supported(["mcp", "files:write"])
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
        Fixture {
            addr,
            resource,
            writes,
            asrv,
            stop: Some(stop),
            task,
        }
    }

    /// A token from the authorization server's token endpoint (client
    /// credentials, RFC 8707 resource), fetched over HTTP.
    async fn token(&self, scope: &str) -> String {
        let form = format!(
            "grant_type=client_credentials&scope={}&resource={}",
            scope.replace(' ', "+"),
            url::form_urlencoded::byte_serialize(self.resource.as_bytes()).collect::<String>()
        );
        let req = Request::post("/token")
            .header("host", self.asrv.addr().to_string())
            .header("content-type", "application/x-www-form-urlencoded")
            .header("authorization", "Basic bWNwLWNsaWVudDpjbGllbnQtc2VjcmV0")
            .body(Full::new(Bytes::from(form)))
            .unwrap();
        let r = send(self.asrv.addr(), req).await;
        assert_eq!(r.status(), StatusCode::OK);
        json_of(r).await["access_token"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    fn post(&self, token: Option<&str>) -> http::request::Builder {
        let mut b = Request::post("/mcp")
            .header("host", self.addr.to_string())
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json");
        if let Some(t) = token {
            b = b.header("authorization", format!("Bearer {t}"));
        }
        b
    }

    async fn send(&self, b: http::request::Builder, v: Value) -> Response<Incoming> {
        send(
            self.addr,
            b.body(Full::new(Bytes::from(v.to_string()))).unwrap(),
        )
        .await
    }

    async fn stop(mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        (&mut self.task).await.unwrap().unwrap();
    }
}

async fn send(addr: SocketAddr, req: Request<Full<Bytes>>) -> Response<Incoming> {
    let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(async move {
        let _ = conn.await;
    });
    tokio::time::timeout(Duration::from_secs(10), sender.send_request(req))
        .await
        .expect("a response within 10 s")
        .unwrap()
}

async fn json_of(r: Response<Incoming>) -> Value {
    let b = r.into_body().collect().await.unwrap().to_bytes();
    serde_json::from_slice(&b).unwrap()
}

fn challenge(r: &Response<Incoming>) -> BearerChallenge {
    BearerChallenge::parse(r.headers()["www-authenticate"].to_str().unwrap()).unwrap()
}

fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "e2e", "version": "1"}
    }})
}

fn call(id: i64, name: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": name, "arguments": {}}})
}

fn text_of(v: &Value) -> &str {
    v["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
}

#[tokio::test]
async fn session_with_a_token_and_step_up() {
    let f = Fixture::start().await;
    let metadata_url = format!("http://{}/.well-known/oauth-protected-resource/mcp", f.addr);

    // No token: 401 naming the metadata and the base scope.
    let r = f.send(f.post(None), initialize()).await;
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    let c = challenge(&r);
    assert_eq!(c.resource_metadata.as_deref(), Some(metadata_url.as_str()));
    assert_eq!(c.scope.as_deref(), Some("mcp"));
    assert_eq!(c.error, None);

    // A session with a token that has `mcp` only.
    let token = f.token("mcp").await;
    let r = f.send(f.post(Some(&token)), initialize()).await;
    assert_eq!(r.status(), StatusCode::OK);
    let sid = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let _ = json_of(r).await;
    let in_session = |t: &str| {
        f.post(Some(t))
            .header("mcp-session-id", &sid)
            .header("mcp-protocol-version", "2025-11-25")
    };
    let r = f
        .send(
            in_session(&token),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        )
        .await;
    assert_eq!(r.status(), StatusCode::ACCEPTED);

    // The tool sees the verified claims and the principal.
    let r = f.send(in_session(&token), call(2, "whoami")).await;
    assert_eq!(r.status(), StatusCode::OK);
    let v = json_of(r).await;
    assert_eq!(
        text_of(&v),
        format!(
            "sub=mcp-client client=mcp-client scopes=mcp principal={} sub:mcp-client",
            f.asrv.issuer()
        )
    );

    // The scoped tool: 403 insufficient_scope naming what it needs; the handler never runs.
    let r = f.send(in_session(&token), call(3, "write")).await;
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    let c = challenge(&r);
    assert_eq!(c.error.as_deref(), Some("insufficient_scope"));
    assert_eq!(c.scope.as_deref(), Some("mcp files:write"));
    assert_eq!(c.resource_metadata.as_deref(), Some(metadata_url.as_str()));
    assert_eq!(f.writes.load(Ordering::SeqCst), 0);

    // Step up: a token with the scope, same session.
    let stronger = f.token("mcp files:write").await;
    let r = f.send(in_session(&stronger), call(4, "write")).await;
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(text_of(&json_of(r).await), "written");
    assert_eq!(f.writes.load(Ordering::SeqCst), 1);

    // A token minted for another resource is refused, even for a known session.
    let claims = f
        .asrv
        .claims("http://127.0.0.1:1/mcp", &["mcp", "files:write"]);
    let foreign = f.asrv.token(&claims);
    let r = f.send(in_session(&foreign), call(5, "write")).await;
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(challenge(&r).error.as_deref(), Some("invalid_token"));
    assert_eq!(f.writes.load(Ordering::SeqCst), 1);
    f.stop().await;
}

#[tokio::test]
async fn modern_stateless_call_and_metadata() {
    let f = Fixture::start().await;
    let token = f.token("mcp").await;
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "e2e", "version": "1"}
    });
    let b = f
        .post(Some(&token))
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "whoami");
    let r = f
        .send(
            b,
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                   "params": {"name": "whoami", "arguments": {}, "_meta": meta}}),
        )
        .await;
    assert_eq!(r.status(), StatusCode::OK);
    let v = json_of(r).await;
    assert!(text_of(&v).starts_with("sub=mcp-client "), "{v}");

    for path in [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ] {
        let req = Request::get(path)
            .header("host", f.addr.to_string())
            .header("origin", "https://app.example")
            .body(Full::new(Bytes::new()))
            .unwrap();
        let r = send(f.addr, req).await;
        assert_eq!(r.status(), StatusCode::OK, "{path}");
        assert_eq!(r.headers()["access-control-allow-origin"], "*");
        let doc = json_of(r).await;
        assert_eq!(doc["resource"], f.resource.as_str());
        assert_eq!(doc["authorization_servers"], json!([f.asrv.issuer()]));
        assert_eq!(doc["scopes_supported"], json!(["mcp", "files:write"]));
        assert_eq!(doc["bearer_methods_supported"], json!(["header"]));
    }
    f.stop().await;
}
