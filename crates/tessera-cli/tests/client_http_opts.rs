//! `tessera list` / `tessera call` with `-H/--header` and `--cacert`: the
//! built binary against an in-process MCP server whose tool reports the HTTP
//! headers it received, over plain HTTP and behind a TLS terminator with a
//! self-signed certificate.

use std::net::SocketAddr;
use std::process::{Command, Output, Stdio};
use std::sync::Arc;
use std::time::Duration;

use tessera::http::McpHttp;
use tessera::server::{RequestContext, Server, tool};
use tessera_http::http::HeaderMap;
use tokio::net::{TcpListener, TcpStream};

/// An MCP server on a loopback port with the tool `headers`, which answers
/// with every `x-*` header of the HTTP request (`name=value` lines, in
/// order), and `hello`.
async fn mcp_server() -> (SocketAddr, tokio::sync::oneshot::Sender<()>) {
    let server = Server::builder()
        .name_version("headers-test", "1.0.0")
        .tool(
            tool("headers")
                .description("The x-* headers of the request")
                .handler(|ctx: RequestContext| async move {
                    let Some(h) = ctx.extension::<HeaderMap>() else {
                        return "no HTTP headers".to_owned();
                    };
                    h.iter()
                        .filter(|(k, _)| k.as_str().starts_with("x-"))
                        .map(|(k, v)| format!("{k}={}", v.to_str().unwrap_or("?")))
                        .collect::<Vec<_>>()
                        .join("\n")
                }),
        )
        .tool(
            tool("hello")
                .description("Says hello")
                .handler(|| async { "hello" }),
        )
        .build()
        .unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    // The TLS terminator forwards Host: localhost:PORT of another port.
    let mcp = McpHttp::builder(server)
        .bind_address(addr)
        .dangerous()
        .allow_any_host()
        .build();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(tessera::http::serve(listener, mcp, async move {
        let _ = stopped.await;
    }));
    (addr, stop)
}

/// Runs the tessera binary (bounded: the CLI's own timeouts apply, and the
/// test harness would report a hang) off the async threads.
async fn tessera(args: Vec<String>) -> Output {
    tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_tessera"))
            .args(&args)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    })
    .await
    .unwrap()
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| (*s).to_owned()).collect()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn headers_reach_the_server() {
    let (addr, _stop) = mcp_server().await;
    let url = format!("http://{addr}/mcp");
    let out = tessera(strings(&[
        "call",
        "headers",
        "-H",
        "X-Trace: abc 123",
        "--header",
        "X-Multi: one",
        "-H",
        "x-multi:two",
        "-H",
        "X-Empty:",
        &url,
    ]))
    .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let got = text(&out.stdout);
    let lines: Vec<&str> = got.lines().collect();
    assert!(lines.contains(&"x-trace=abc 123"), "{got}");
    assert!(lines.contains(&"x-empty="), "{got}");
    let multi: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| l.starts_with("x-multi="))
        .collect();
    assert_eq!(multi, ["x-multi=one", "x-multi=two"], "{got}");

    // `list` takes them too.
    let out = tessera(strings(&["list", "tools", "-H", "X-Trace: 1", &url])).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("headers"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_headers_are_usage_errors() {
    let (addr, _stop) = mcp_server().await;
    let url = format!("http://{addr}/mcp");
    for (h, says) in [
        ("NoColon", "expected 'Name: value'"),
        ("Bad Name: x", "the name may only hold"),
        ("Content-Type: text/plain", "sets this header itself"),
        ("Mcp-Session-Id: 1", "sets this header itself"),
    ] {
        let out = tessera(strings(&["call", "hello", "-H", h, &url])).await;
        assert_eq!(out.status.code(), Some(2), "{h}: {}", text(&out.stderr));
        let err = text(&out.stderr);
        assert!(err.contains(says), "{h}: {err}");
        assert!(err.contains(h), "{h}: {err}");
    }
    // Not for a stdio server.
    let out = tessera(strings(&[
        "list", "tools", "-H", "X-A: 1", "--", "tessera", "serve", "--stdio",
    ]))
    .await;
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("http(s) URL target"));
}

/// A TLS terminator on a loopback port with a certificate for `localhost`,
/// forwarding to `backend`; returns its port.
async fn tls_front(backend: SocketAddr, cert: &rcgen::CertifiedKey<rcgen::KeyPair>) -> u16 {
    use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
    // The workspace's one TLS backend, ring (deprecated by rustls 0.23.48 for
    // lacking post-quantum key exchange, which this loopback test does not need).
    #[expect(deprecated)]
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![CertificateDer::from(cert.cert.der().to_vec())],
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(cert.signing_key.serialize_der())),
        )
        .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(Ok(mut tls)) =
                    tokio::time::timeout(Duration::from_secs(10), acceptor.accept(tcp)).await
                else {
                    return;
                };
                if let Ok(mut plain) = TcpStream::connect(backend).await {
                    let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
                }
            });
        }
    });
    port
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cacert_trusts_a_private_root() {
    let (addr, _stop) = mcp_server().await;
    let cert = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
    let port = tls_front(addr, &cert).await;
    let url = format!("https://localhost:{port}/mcp");
    let dir = std::env::temp_dir().join(format!("tessera-cacert-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pem = dir.join("ca.pem");
    std::fs::write(&pem, cert.cert.pem()).unwrap();
    let der = dir.join("ca.der");
    std::fs::write(&der, cert.cert.der()).unwrap();
    let pem_s = pem.display().to_string();
    let der_s = der.display().to_string();

    // Not trusted without it: a connection failure (exit 3) naming the certificate problem.
    let out = tessera(strings(&["call", "hello", &url])).await;
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).to_lowercase().contains("certificate"),
        "{}",
        text(&out.stderr)
    );

    // Trusted with it, PEM or DER; headers still go through.
    for file in [&pem_s, &der_s] {
        let out = tessera(strings(&[
            "call",
            "headers",
            "--cacert",
            file,
            "-H",
            "X-Tls: yes",
            &url,
        ]))
        .await;
        assert!(out.status.success(), "{file}: {}", text(&out.stderr));
        assert!(text(&out.stdout).contains("x-tls=yes"));
    }

    // A file that is no certificate: usage error naming it.
    let junk = dir.join("junk.pem");
    std::fs::write(
        &junk,
        "-----BEGIN CERTIFICATE-----\n@@@\n-----END CERTIFICATE-----\n",
    )
    .unwrap();
    let junk_s = junk.display().to_string();
    let missing_s = dir.join("missing.pem").display().to_string();
    for file in [&junk_s, &missing_s] {
        let out = tessera(strings(&["call", "hello", "--cacert", file, &url])).await;
        assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
        assert!(text(&out.stderr).contains(file.as_str()));
    }
    let _ = std::fs::remove_dir_all(&dir);
}
