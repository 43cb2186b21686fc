//! The HTTP client speaks HTTP/2 to an `https://` server that chooses it by
//! ALPN, and HTTP/1.1 to a plain `http://` one (hyper's pooled client).

use std::sync::Arc;
use std::time::Duration;

use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use hyper_util::service::TowerToHyperService;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tessera_client::Client;
use tessera_http::HttpClientTransport;
use tessera_runtime::LinkState;
use tokio::net::TcpListener;

use crate::common::{Flags, TestServer, fixture};

/// The fixture served over TLS on a loopback port with a certificate for
/// `localhost`, offering only `protocols` by ALPN; returns the port.
async fn tls_server(cert: &rcgen::CertifiedKey<rcgen::KeyPair>, protocols: &[&[u8]]) -> u16 {
    // The workspace's one TLS backend, ring (deprecated by rustls 0.23.48 for
    // lacking post-quantum key exchange, which this loopback test does not need).
    #[expect(deprecated)]
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![CertificateDer::from(cert.cert.der().to_vec())],
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(cert.signing_key.serialize_der())),
        )
        .unwrap();
    config.alpn_protocols = protocols.iter().map(|p| p.to_vec()).collect();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let mcp = tessera_http::McpHttp::builder(fixture(Arc::new(Flags::default())))
        .bind_address(listener.local_addr().unwrap())
        .endpoint_path("/mcp")
        .build();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            let mcp = mcp.clone();
            tokio::spawn(async move {
                let Ok(Ok(tls)) =
                    tokio::time::timeout(Duration::from_secs(10), acceptor.accept(tcp)).await
                else {
                    return;
                };
                let _ = auto::Builder::new(TokioExecutor::new())
                    .serve_connection_with_upgrades(
                        TokioIo::new(tls),
                        TowerToHyperService::new(mcp),
                    )
                    .await;
            });
        }
    });
    port
}

/// Connects a client through `transport` and calls `echo`; returns the HTTP
/// version the transport's answers came in.
async fn version_of_a_call(transport: HttpClientTransport) -> Option<&'static str> {
    let state = Arc::new(LinkState::default());
    let transport = transport.with_link_state(state.clone());
    let client = Client::builder("h2-test", "1")
        .connect_transport(transport)
        .await
        .expect("connected");
    let out = client
        .call_tool("echo", serde_json::json!({"text": "hi"}))
        .await
        .expect("echo answered");
    assert!(format!("{out:?}").contains("hi"), "{out:?}");
    client.close().await;
    state.http_version()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_https_server_that_chooses_http2_is_spoken_to_over_it() {
    let cert = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
    for (offered, expected) in [(&[&b"h2"[..]][..], "2"), (&[&b"http/1.1"[..]][..], "1.1")] {
        let port = tls_server(&cert, offered).await;
        let t = HttpClientTransport::builder(&format!("https://localhost:{port}/mcp"))
            .add_root_certificate_der(cert.cert.der().to_vec())
            .build()
            .unwrap();
        assert_eq!(version_of_a_call(t).await, Some(expected), "{offered:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plain_http_server_is_spoken_to_over_http1() {
    let server = TestServer::start(|b| b).await;
    let t = HttpClientTransport::new(&format!("http://{}/mcp", server.addr)).unwrap();
    assert_eq!(version_of_a_call(t).await, Some("1.1"));
}
