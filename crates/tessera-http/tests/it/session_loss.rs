//! A legacy session the server forgets (ended by a `DELETE` from outside):
//! the transport reports the loss and writes nothing of its own; the client
//! reconnects once (a new `initialize`), restores its log level and resource
//! subscriptions, and sends the refused call again. Every wait is for an
//! event, with a deadline.

use crate::common;

use std::time::Duration;

use common::{TestServer, within};
use serde_json::json;
use tessera_client::{Client, ClientEvent};
use tessera_http::HttpClientTransport;
use tessera_runtime::SessionId;
use tessera_server::{RequestContext, Server, resource, tool};
use tessera_types::{LoggingLevel, ProtocolVersion};

const URI: &str = "mem://note";

fn server() -> Server {
    Server::builder()
        .name_version("session-loss", "1.0.0")
        .tool(
            tool("speak")
                .description("Logs once at info and once at error")
                .handler(|ctx: RequestContext| async move {
                    ctx.log(LoggingLevel::Info, Some("speak"), json!("quiet"));
                    ctx.log(LoggingLevel::Error, Some("speak"), json!("loud"));
                    "spoke".to_owned()
                }),
        )
        .tool(
            tool("whoami")
                .description("The caller's session id")
                .handler(|ctx: RequestContext| async move {
                    ctx.extension::<SessionId>()
                        .map(|s| s.0.clone())
                        .unwrap_or_default()
                }),
        )
        .resource(resource(URI, "note").handler(|| async { "a note" }))
        .build()
        .expect("the server builds")
}

/// The next log message and resource update the client receives, skipping
/// other events.
async fn next_log(events: &mut tessera_client::EventStream) -> String {
    loop {
        match within(events.recv()).await {
            Some(ClientEvent::Log(l)) => return l.data.to_string(),
            Some(_) => continue,
            None => panic!("the client is gone"),
        }
    }
}

async fn next_update(events: &mut tessera_client::EventStream) -> String {
    loop {
        match within(events.recv()).await {
            Some(ClientEvent::ResourceUpdated(u)) => return u.uri,
            Some(_) => continue,
            None => panic!("the client is gone"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forgotten_session_is_renewed_by_the_client_with_its_level_and_subscriptions() {
    let s = server();
    let srv = TestServer::start_with(s.clone(), |b| b).await;
    let url = format!("http://{}/mcp", srv.addr);
    let made = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = made.clone();
    let target = url.clone();
    let client = Client::builder("session-loss-test", "1")
        .protocol_version(ProtocolVersion::V2025_11_25)
        .reconnect_policy(tessera_client::ReconnectPolicy {
            max_attempts: 2,
            initial_delay: Duration::from_millis(10),
            ..Default::default()
        })
        .connect_transports(move || {
            count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            HttpClientTransport::new(&target).map_err(std::io::Error::other)
        })
        .await
        .unwrap();
    let mut events = client.events();
    client.set_log_level(LoggingLevel::Error).await.unwrap();
    client.subscribe(URI).await.unwrap();

    // Before: only the error line arrives (the first log the client gets),
    // and the update reaches the client.
    let r = client.call_tool("speak", json!({})).await.unwrap();
    assert_eq!(r.content[0].as_text(), Some("spoke"));
    assert_eq!(next_log(&mut events).await, "\"loud\"");
    s.notify_resource_updated(URI);
    assert_eq!(next_update(&mut events).await, URI);

    // The session ends on the server, behind the client's back.
    let who = client.call_tool("whoami", json!({})).await.unwrap();
    let sid = who.content[0].as_text().expect("a session id").to_owned();
    assert!(!sid.is_empty());
    assert_eq!(srv.mcp.session_count(), 1);
    let deleted = common::send(
        srv.addr,
        srv.in_session(&sid)
            .method("DELETE")
            .body(http_body_util::Full::new(bytes::Bytes::new()))
            .unwrap(),
    )
    .await;
    assert!(deleted.status().is_success(), "{}", deleted.status());

    // The next call is refused with 404 on the old session, then succeeds
    // on a new one, made by the client's second transport.
    let r = client.call_tool("speak", json!({})).await.unwrap();
    assert_eq!(r.content[0].as_text(), Some("spoke"));
    assert_eq!(made.load(std::sync::atomic::Ordering::SeqCst), 2);
    let who = client.call_tool("whoami", json!({})).await.unwrap();
    assert_ne!(
        who.content[0].as_text(),
        Some(sid.as_str()),
        "a new session"
    );
    assert_eq!(srv.mcp.session_count(), 1, "the old session is gone");

    // The level came back (the info line, which a new session's default
    // level would let through first, is still filtered out), and so did the
    // subscription.
    assert_eq!(next_log(&mut events).await, "\"loud\"");
    s.notify_resource_updated(URI);
    assert_eq!(next_update(&mut events).await, URI);
    client.close().await;
}
