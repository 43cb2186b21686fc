//! Connection-level limits of `tessera_http::serve`, over real loopback
//! sockets: the header-read timeout, the idle keep-alive timeout, the write
//! timeout for a peer that does not read, and the cap on open connections.
//! Each test waits for the server to act (the socket closing, a response),
//! bounded by `within`; the timeouts under test are short.

use crate::common;

use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use common::{TestServer, body_json, call, within};

/// Reads until the server closes the connection; returns what it sent.
async fn read_to_close(s: &mut TcpStream) -> Vec<u8> {
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf).await {
            Ok(0) | Err(_) => return out,
            Ok(n) => out.extend_from_slice(&buf[..n]),
        }
    }
}

#[tokio::test]
async fn a_connection_that_trickles_its_headers_is_closed() {
    let server = TestServer::start(|b| {
        b.header_read_timeout(Some(Duration::from_millis(300)))
            .connection_idle_timeout(None)
    })
    .await;
    let mut s = TcpStream::connect(server.addr).await.unwrap();
    s.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0")
        .await
        .unwrap();
    let trickle = async {
        // A byte now and then does not keep it open.
        for b in b".0.1\r\nX-Slow: yes" {
            if s.write_all(&[*b]).await.is_err() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    within(trickle).await;
    let rest = within(read_to_close(&mut s)).await;
    let text = String::from_utf8_lossy(&rest);
    assert!(
        rest.is_empty() || text.starts_with("HTTP/1.1 408"),
        "closed (or told 408): {text}"
    );
}

#[tokio::test]
async fn an_idle_keep_alive_connection_is_closed() {
    let server =
        TestServer::start(|b| b.connection_idle_timeout(Some(Duration::from_millis(300)))).await;
    let mut s = TcpStream::connect(server.addr).await.unwrap();
    let body = serde_json::to_vec(&common::initialize(1, common::LEGACY)).unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nAccept: application/json, text/event-stream\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        server.host(),
        body.len()
    );
    s.write_all(head.as_bytes()).await.unwrap();
    s.write_all(&body).await.unwrap();
    let got = within(read_to_close(&mut s)).await;
    let text = String::from_utf8_lossy(&got);
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    assert!(
        text.contains("serverInfo"),
        "answered before it was closed: {text}"
    );
}

/// Issue 32 item 14: a connection that never sends a byte was held until
/// the idle timeout (60 s), not the header timeout.
#[tokio::test]
async fn a_silent_connection_is_closed_at_the_header_timeout() {
    let server = TestServer::start(|b| {
        b.header_read_timeout(Some(Duration::from_millis(300)))
            .connection_idle_timeout(Some(Duration::from_secs(20)))
    })
    .await;
    let mut s = TcpStream::connect(server.addr).await.unwrap();
    let opened = std::time::Instant::now();
    let got = within(read_to_close(&mut s)).await;
    assert!(got.is_empty(), "{}", String::from_utf8_lossy(&got));
    let held = opened.elapsed();
    assert!(
        held >= Duration::from_millis(300) && held < Duration::from_secs(5),
        "held {held:?}"
    );
    let stats = server.mcp.stats();
    assert_eq!(
        stats.refused_by(tessera_http::limit::HEADER_READ_TIMEOUT),
        1
    );
}

/// Reads one HTTP/1.1 response with a `content-length` off `s`.
pub(crate) async fn read_response(s: &mut TcpStream) -> String {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let text = String::from_utf8_lossy(&got).into_owned();
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let len = head
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length:")
                        .map(|v| v.trim().to_owned())
                })
                .and_then(|v| v.parse::<usize>().ok())
                .expect("a content-length");
            if body.len() >= len {
                return text;
            }
        }
        let n = s.read(&mut buf).await.unwrap();
        assert!(
            n > 0,
            "closed mid-response: {}",
            String::from_utf8_lossy(&got)
        );
        got.extend_from_slice(&buf[..n]);
    }
}

/// Issue 32 item 14: idle keep-alive connections closed at the header
/// timeout (10 s) where the docs say the idle timeout (60 s) applies.
#[tokio::test]
async fn an_idle_keep_alive_connection_outlives_the_header_timeout() {
    let server = TestServer::start(|b| {
        b.header_read_timeout(Some(Duration::from_millis(200)))
            .connection_idle_timeout(Some(Duration::from_secs(20)))
            .response_mode(tessera_http::ResponseMode::Json)
    })
    .await;
    let mut s = TcpStream::connect(server.addr).await.unwrap();
    let request = |id: i64| {
        let body = serde_json::to_vec(&common::initialize(id, common::LEGACY)).unwrap();
        server.raw_post(&body)
    };
    s.write_all(&request(1)).await.unwrap();
    let first = within(read_response(&mut s)).await;
    assert!(first.starts_with("HTTP/1.1 200"), "{first}");
    // Idle for four header timeouts: a keep-alive pause, not a slow head.
    tokio::time::sleep(Duration::from_millis(800)).await;
    s.write_all(&request(2)).await.unwrap();
    let second = within(read_response(&mut s)).await;
    assert!(
        second.starts_with("HTTP/1.1 200"),
        "the same connection: {second}"
    );
}

#[tokio::test]
async fn beyond_the_connection_cap_new_connections_get_503_at_once() {
    let server = TestServer::start(|b| b.max_connections(2)).await;
    let a = TcpStream::connect(server.addr).await.unwrap();
    let b = TcpStream::connect(server.addr).await.unwrap();
    let mut c = TcpStream::connect(server.addr).await.unwrap();
    let got = within(read_to_close(&mut c)).await;
    let text = String::from_utf8_lossy(&got);
    assert!(text.starts_with("HTTP/1.1 503"), "{text}");
    assert!(text.contains("--max-connections"), "{text}");
    let stats = server.mcp.stats();
    assert_eq!(stats.refused_by(tessera_http::limit::MAX_CONNECTIONS), 1);
    assert_eq!(stats.connections_open(), 2, "the two accepted ones");
    // The open ones keep working; once one closes there is room again.
    drop(a);
    drop(b);
    let sid = within(server.session(common::LEGACY)).await;
    let r = within(server.send_json(
        server.in_session(&sid),
        call(2, "echo", json!({"text": "still here"}), false),
    ))
    .await;
    assert!(body_json(r).await.to_string().contains("still here"));
}

#[tokio::test]
async fn a_peer_that_does_not_read_its_response_is_dropped() {
    let server = TestServer::start(|b| {
        b.write_timeout(Some(Duration::from_millis(300)))
            .max_body_bytes(8 * 1024 * 1024)
            .response_mode(tessera_http::ResponseMode::Json)
    })
    .await;
    let sid = within(server.session(common::LEGACY)).await;
    let sock = tokio::net::TcpSocket::new_v4().unwrap();
    sock.set_recv_buffer_size(4096).unwrap();
    let mut s = within(sock.connect(server.addr)).await.unwrap();
    // A 6 MB reply, far more than the socket buffers hold.
    let text = "x".repeat(6 * 1024 * 1024);
    let body = serde_json::to_vec(&call(2, "echo", json!({ "text": text }), false)).unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nAccept: application/json, text/event-stream\r\n\
         Content-Type: application/json\r\nMcp-Session-Id: {sid}\r\n\
         Mcp-Protocol-Version: {}\r\nContent-Length: {}\r\n\r\n",
        server.host(),
        common::LEGACY,
        body.len()
    );
    within(async {
        s.write_all(head.as_bytes()).await.unwrap();
        s.write_all(&body).await.unwrap();
    })
    .await;
    // Wait for the reply to start (the handler has answered), then do not
    // read for a second (the behaviour under test): the server's write
    // stalls, and after the write timeout it drops the connection. What
    // arrives afterwards is what the buffers held, not the whole reply.
    let mut first = [0u8; 1];
    assert_eq!(within(s.read(&mut first)).await.unwrap(), 1);
    tokio::time::sleep(Duration::from_secs(1)).await;
    let got = within(read_to_close(&mut s)).await;
    assert!(
        got.len() < 6 * 1024 * 1024,
        "the reply was cut short: {} bytes",
        got.len()
    );
}

/// Connects to `server` from the loopback address `source`.
async fn connect_from(source: &str, server: std::net::SocketAddr) -> TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind(format!("{source}:0").parse().unwrap()).unwrap();
    socket.connect(server).await.unwrap()
}

/// Issue 32 item 4: one address held every connection and another client
/// was refused 35 times out of 35. Now an address holds at most
/// `max_connections_per_client`: its next connection gets `429` with
/// `Retry-After` at once, while another address is served.
#[tokio::test]
async fn one_address_cannot_hold_every_connection() {
    let server = TestServer::start(|b| {
        b.max_connections(8)
            .max_connections_per_client(2)
            .response_mode(tessera_http::ResponseMode::Json)
    })
    .await;
    // 127.0.0.3 opens two connections and sends nothing (as a client
    // holding streams does): both are held.
    let _a = connect_from("127.0.0.3", server.addr).await;
    let _b = connect_from("127.0.0.3", server.addr).await;
    let mut c = connect_from("127.0.0.3", server.addr).await;
    let got = within(read_to_close(&mut c)).await;
    let text = String::from_utf8_lossy(&got);
    assert!(text.starts_with("HTTP/1.1 429"), "{text}");
    assert!(text.contains("retry-after: 1"), "{text}");
    assert!(text.contains("--max-connections-per-client"), "{text}");
    let stats = server.mcp.stats();
    assert_eq!(
        stats.refused_by(tessera_http::limit::MAX_CONNECTIONS_PER_CLIENT),
        1
    );
    assert_eq!(stats.refused_by(tessera_http::limit::MAX_CONNECTIONS), 0);
    // Another address gets in and is served.
    let mut other = connect_from("127.0.0.4", server.addr).await;
    let body = serde_json::to_vec(&common::initialize(1, common::LEGACY)).unwrap();
    let request = server.raw_post(&body);
    other.write_all(&request).await.unwrap();
    let answer = within(read_response(&mut other)).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    // Once one of 127.0.0.3's connections closes, it may open another.
    drop(_a);
    let mut again = within(async {
        loop {
            let mut s = connect_from("127.0.0.3", server.addr).await;
            s.write_all(&request).await.unwrap();
            let mut first = [0u8; 12];
            if s.read_exact(&mut first).await.is_ok() && &first == b"HTTP/1.1 200" {
                return s;
            }
            // The server has not seen the close yet: it refused; try again
            // once it has (each try waits for the server's answer).
        }
    })
    .await;
    let mut rest = [0u8; 1];
    again.read_exact(&mut rest).await.unwrap();
}

/// A stateless server's connection serves one POST after another, whether
/// the body comes with its head, after it in a second write, or chunked
/// (no length: its end is read from the connection), and the connection
/// stays open for the next request each time.
#[tokio::test]
async fn a_stateless_connection_serves_posts_one_after_another() {
    let server = TestServer::start(|b| {
        b.stateless(true)
            .response_mode(tessera_http::ResponseMode::Json)
    })
    .await;
    let mut s = TcpStream::connect(server.addr).await.unwrap();
    let body = |id: i64| {
        serde_json::to_vec(&json!({
            "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": format!("call {id}")}}
        }))
        .unwrap()
    };
    let head = |extra: String| {
        format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nAccept: application/json, text/event-stream\r\n\
             Content-Type: application/json\r\nMcp-Protocol-Version: 2025-06-18\r\n{extra}\r\n",
            server.host()
        )
    };
    let answered = |text: &str, id: i64| {
        assert!(text.starts_with("HTTP/1.1 200"), "{text}");
        let (_, json) = text.split_once("\r\n\r\n").unwrap();
        let v: serde_json::Value = serde_json::from_str(json).unwrap();
        assert_eq!(v["id"], id, "{text}");
        assert_eq!(
            v["result"]["content"][0]["text"],
            format!("call {id}"),
            "{text}"
        );
    };
    for id in 1..=6 {
        let b = body(id);
        match id % 3 {
            // Head and body in one write.
            1 => {
                let mut r = head(format!("Content-Length: {}\r\n", b.len())).into_bytes();
                r.extend_from_slice(&b);
                s.write_all(&r).await.unwrap();
            }
            // The body in two writes after the head.
            2 => {
                let r = head(format!("Content-Length: {}\r\n", b.len()));
                s.write_all(r.as_bytes()).await.unwrap();
                s.write_all(&b[..10]).await.unwrap();
                s.flush().await.unwrap();
                s.write_all(&b[10..]).await.unwrap();
            }
            // Chunked, in two chunks.
            _ => {
                let r = head("Transfer-Encoding: chunked\r\n".to_owned());
                s.write_all(r.as_bytes()).await.unwrap();
                for part in [&b[..10], &b[10..]] {
                    s.write_all(format!("{:x}\r\n", part.len()).as_bytes())
                        .await
                        .unwrap();
                    s.write_all(part).await.unwrap();
                    s.write_all(b"\r\n").await.unwrap();
                }
                s.write_all(b"0\r\n\r\n").await.unwrap();
            }
        }
        let text = within(read_response(&mut s)).await;
        answered(&text, id);
    }
    assert_eq!(server.mcp.stats().connections_open(), 1);
}

/// Graceful shutdown reaches a keep-alive connection that has served a
/// request and waits for the next: it is closed, and the server's task ends
/// without waiting for the drain timeout.
#[tokio::test]
async fn shutdown_closes_an_idle_keep_alive_connection_at_once() {
    let mut server = TestServer::start(|b| {
        b.stateless(true)
            .response_mode(tessera_http::ResponseMode::Json)
            .drain_timeout(Duration::from_secs(60))
            .connection_idle_timeout(None)
    })
    .await;
    let mut s = TcpStream::connect(server.addr).await.unwrap();
    let body = serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"})).unwrap();
    s.write_all(&server.raw_post(&body)).await.unwrap();
    let first = within(read_response(&mut s)).await;
    assert!(first.starts_with("HTTP/1.1 200"), "{first}");
    let serve = server.begin_shutdown();
    let rest = within(read_to_close(&mut s)).await;
    assert!(rest.is_empty(), "{}", String::from_utf8_lossy(&rest));
    within(serve).await.unwrap().unwrap();
}
