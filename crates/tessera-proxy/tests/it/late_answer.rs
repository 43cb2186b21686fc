//! An HTTP upstream whose answer to a legacy session's `initialize` comes
//! after the HTTP client's first-answer wait (2 s; a loaded machine): the
//! session's calls through the proxy still reach it. The answer is held by
//! a gate in the upstream, on tokio's paused clock, until the wait is past.

use std::task::{Context, Poll};
use std::time::Duration;

use http_body_util::{BodyExt, Full};
use serde::Deserialize;
use tessera_client::Client;
use tessera_http::HttpClientTransport;
use tessera_http::McpHttp;
use tessera_proxy::{Proxy, UpstreamOptions, UpstreamSpec};
use tessera_runtime::BoxFuture;
use tessera_server::{Args, Server, tool};
use tessera_types::{ProtocolVersion, methods};
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

/// How long the HTTP client waits for the first answer of a connection
/// before it goes on without it (`FIRST_ANSWER_WAIT` in tessera-http).
const FIRST_ANSWER_WAIT: Duration = Duration::from_secs(2);

/// An MCP endpoint (`inner`) whose answer to every `initialize` POST is
/// held while `closed` says so; `arrived` is told of each one it holds.
#[derive(Clone)]
struct Gate {
    inner: McpHttp,
    closed: watch::Receiver<bool>,
    arrived: mpsc::UnboundedSender<()>,
}

/// Whether a POST body is an `initialize` request.
fn is_initialize(body: &[u8]) -> bool {
    serde_json::from_slice::<serde_json::Value>(body)
        .is_ok_and(|v| v["method"] == methods::INITIALIZE)
}

impl<B> tower::Service<http::Request<B>> for Gate
where
    B: http_body::Body<Data = bytes::Bytes> + Send + 'static,
    B::Error: std::fmt::Debug,
{
    type Response = http::Response<tessera_http::McpBody>;
    type Error = std::convert::Infallible;
    type Future = BoxFuture<'static, Result<Self::Response, Self::Error>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: http::Request<B>) -> Self::Future {
        let mut gate = self.clone();
        Box::pin(async move {
            let (head, body) = req.into_parts();
            let body = body.collect().await.expect("a body").to_bytes();
            if *gate.closed.borrow() && is_initialize(&body) {
                let _ = gate.arrived.send(());
                let _ = gate.closed.wait_for(|c| !*c).await;
            }
            let req = http::Request::from_parts(head, Full::new(body));
            gate.inner.call(req).await
        })
    }
}

/// Serves `server` behind a [`Gate`] until `stop` fires; its URL.
async fn serve_gated(
    server: Server,
    closed: watch::Receiver<bool>,
    arrived: mpsc::UnboundedSender<()>,
    stop: &CancellationToken,
) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("binds");
    let addr = listener.local_addr().expect("address");
    let mcp = McpHttp::builder(server)
        .bind_address(addr)
        .endpoint_path("/mcp")
        .build();
    let gate = Gate {
        inner: mcp.clone(),
        closed,
        arrived,
    };
    let stop = stop.clone();
    tokio::spawn(async move {
        let _ = tessera_http::serve_with(listener, mcp, gate, stop.cancelled_owned()).await;
    });
    format!("http://{addr}/mcp")
}

#[derive(Deserialize, schemars::JsonSchema)]
struct Text {
    text: String,
}

async fn echo(Args(a): Args<Text>) -> String {
    a.text
}

#[tokio::test(start_paused = true)]
async fn calls_reach_an_upstream_whose_first_answer_came_after_the_wait() {
    let stop = CancellationToken::new();
    let (close, closed) = watch::channel(false);
    let (arrived, mut held) = mpsc::unbounded_channel();
    let server = Server::builder()
        .name_version("slow-start", "1.0.0")
        .tool(
            tool("echo")
                .description("Sends the text back")
                .handler(echo),
        )
        .build()
        .expect("builds");
    let up = serve_gated(server, closed, arrived, &stop).await;
    // The proxy's shared connection (its first to the URL, which tells
    // the process the URL speaks Streamable HTTP) is answered at once.
    let proxy = Proxy::connect(
        UpstreamSpec::http(&up, Default::default()),
        UpstreamOptions::default(),
    )
    .await
    .expect("the proxy connects");
    let url = crate::bridge::serve(proxy.clone(), &stop).await;

    // A legacy session, with an upstream session of its own (opened on
    // its handshake or its first call) whose `initialize` is held past the
    // wait.
    close.send_replace(true);
    let session = tokio::spawn(async move {
        let client = Client::builder("late-test", "1.0")
            .protocol_version(ProtocolVersion::V2025_11_25)
            .connect_transport(HttpClientTransport::new(&url).expect("transport"))
            .await
            .expect("the session opens");
        let mut said = Vec::new();
        for text in ["one", "two", "three"] {
            let r = client
                .call_tool("echo", serde_json::json!({"text": text}))
                .await
                .expect("called through the late upstream session");
            said.push(r.content[0].as_text().map(str::to_owned));
        }
        client.close().await;
        said
    });
    held.recv()
        .await
        .expect("the upstream session's initialize");
    tokio::time::sleep(FIRST_ANSWER_WAIT + Duration::from_secs(1)).await;
    close.send_replace(false);
    let said = session.await.expect("the session's task ran");
    assert_eq!(
        said,
        [
            Some("one".to_owned()),
            Some("two".into()),
            Some("three".into())
        ]
    );
    proxy.close().await;
    stop.cancel();
}
