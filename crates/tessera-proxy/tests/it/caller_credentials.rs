//! Upstream credentials that depend on the caller (`auth` of type
//! `tokenExchange` and `forward`), end to end over loopback HTTP: the test
//! authorization server, an upstream MCP server behind OAuth that records
//! every `Authorization` it receives, and an aggregating proxy behind its own
//! OAuth front, called by clients with their own tokens.

use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use serde_json::{Value, json};
use tessera_auth::server::{AuthInfo, BearerAuthLayer, JwtVerifier};
use tessera_auth::testing::TestAuthorizationServer;
use tessera_client::Client;
use tessera_http::{HttpClientTransport, McpHttp};
use tessera_proto::EngineConfig;
use tessera_proxy::{Aggregator, UpstreamOptions, parse_config};
use tessera_server::{Extension, Server, resource, tool};
use tessera_testkit::bounded;
use tessera_testkit::layers::{Seen, Tap};
use tessera_types::ProtocolVersion;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tower::Layer;

const SECRET: &str = "gateway-exchange-secret-0123456789";

/// What the rig's upstream tells its clients.
pub(crate) const RECORDER_INSTRUCTIONS: &str =
    "Call whoami to see the claims the upstream verified.";
const EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";

/// Records the `Authorization` header of every request before passing it on.
#[derive(Clone)]
struct Recording<S> {
    inner: S,
    seen: Arc<Mutex<Vec<String>>>,
}

impl<S, B> tower::Service<http::Request<B>> for Recording<S>
where
    S: tower::Service<http::Request<B>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: http::Request<B>) -> S::Future {
        if let Some(v) = req.headers().get(http::header::AUTHORIZATION) {
            let v = v.to_str().unwrap_or_default();
            let token = v.strip_prefix("Bearer ").unwrap_or(v).to_owned();
            self.seen.lock().unwrap().push(token);
        }
        self.inner.call(req)
    }
}

/// Serves `mcp` behind an OAuth front for `resource` (tokens of `asrv`)
/// on `listener`, recording the tokens it receives into `seen`.
fn serve_behind_oauth(
    listener: tokio::net::TcpListener,
    mcp: McpHttp,
    resource: &str,
    asrv: &TestAuthorizationServer,
    seen: Arc<Mutex<Vec<String>>>,
    stop: &CancellationToken,
) -> tokio::task::JoinHandle<()> {
    let verifier = JwtVerifier::builder(asrv.issuer(), resource)
        .min_refresh_interval(std::time::Duration::ZERO)
        .build();
    let front = BearerAuthLayer::builder(resource, verifier)
        .authorization_server(asrv.issuer())
        .build();
    let service = Recording {
        inner: front.layer(mcp.clone()),
        seen,
    };
    let stop = stop.clone();
    tokio::spawn(async move {
        let _ = tessera_http::serve_with(listener, mcp, service, stop.cancelled_owned()).await;
    })
}

/// The upstream's MCP endpoint for `server`, at `addr`, speaking `speaks`:
/// a new one has no sessions.
fn upstream_endpoint(server: &Server, speaks: Speaks, addr: std::net::SocketAddr) -> McpHttp {
    let server = server.clone();
    McpHttp::builder(move || -> (EngineConfig, Server) {
        let config = server.engine_config();
        let config = match speaks {
            Speaks::All => config,
            Speaks::LegacyOnly => config.with_versions(
                ProtocolVersion::ALL
                    .iter()
                    .copied()
                    .filter(|v| *v < ProtocolVersion::V2026_07_28),
            ),
        };
        (config, server.clone())
    })
    .bind_address(addr)
    .endpoint_path("/mcp")
    .build()
}

/// An address to serve on, and its endpoint URL.
async fn endpoint() -> (tokio::net::TcpListener, String) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    (listener, url)
}

pub(crate) struct Rig {
    pub(crate) asrv: TestAuthorizationServer,
    proxy_url: String,
    upstream_url: String,
    /// Every token the upstream received.
    upstream_saw: Arc<Mutex<Vec<String>>>,
    pub(crate) aggregator: Aggregator,
    /// The upstream server (to tell of changes).
    pub(crate) server: Server,
    /// What the upstream server has handled, reported once handled.
    handled: tokio::sync::Mutex<mpsc::UnboundedReceiver<Seen>>,
    speaks: Speaks,
    /// Stops the upstream's endpoint, and its serving task.
    upstream: Mutex<(CancellationToken, tokio::task::JoinHandle<()>)>,
    stop: CancellationToken,
}

/// Which protocol versions the upstream speaks.
#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Speaks {
    All,
    /// Those before 2026-07-28: its sessions hear of changes on their own.
    LegacyOnly,
}

impl Rig {
    /// The upstream `up` (a `whoami` tool answering the verified claims)
    /// reached with `auth` (the upstream's URL put for `{UP}` in it).
    async fn start(auth: impl Fn(&str, &str) -> Value) -> Rig {
        Rig::start_speaking(Speaks::All, auth).await
    }

    /// [`Rig::start`] with an upstream speaking `speaks`, which also has
    /// the resources `mem://doc` and `mem://other`.
    pub(crate) async fn start_speaking(speaks: Speaks, auth: impl Fn(&str, &str) -> Value) -> Rig {
        Rig::start_entry(
            speaks,
            move |up, te| json!({"url": up, "auth": auth(up, te)}),
        )
        .await
    }

    /// [`Rig::start_speaking`] with the upstream's whole configuration
    /// entry made by `entry` from the upstream's URL and the token endpoint.
    pub(crate) async fn start_entry(speaks: Speaks, entry: impl Fn(&str, &str) -> Value) -> Rig {
        Rig::start_with(speaks, entry, |_| Vec::new()).await
    }

    /// [`Rig::start_entry`], with the environment variables `prepare`
    /// returns (it may register clients at the authorization server first)
    /// beside `GW_SECRET`.
    pub(crate) async fn start_with(
        speaks: Speaks,
        entry: impl Fn(&str, &str) -> Value,
        prepare: impl FnOnce(&TestAuthorizationServer) -> Vec<(&'static str, String)>,
    ) -> Rig {
        let asrv = TestAuthorizationServer::start().await.unwrap();
        asrv.register_client("gateway", SECRET);
        let mut vars = prepare(&asrv);
        vars.push(("GW_SECRET", SECRET.to_owned()));
        let stop = CancellationToken::new();
        let upstream_saw = Arc::new(Mutex::new(Vec::new()));
        let (handled_tx, handled) = mpsc::unbounded_channel();
        let server = Server::builder()
            .middleware(|s| s.layer(Tap::once_done(handled_tx)))
            .name_version("recorder", "1.0.0")
            .instructions(RECORDER_INSTRUCTIONS)
            .tool(
                tool("whoami")
                    .description("The caller's verified claims")
                    .handler(|Extension(auth): Extension<AuthInfo>| async move {
                        Value::Object(auth.claims).to_string()
                    }),
            )
            .resource(resource("mem://doc", "doc").handler(|| async { "a doc" }))
            .resource(resource("mem://other", "other").handler(|| async { "another" }))
            .build()
            .unwrap();
        let (listener, upstream_url) = endpoint().await;
        let mcp = upstream_endpoint(&server, speaks, listener.local_addr().unwrap());
        let upstream_stop = stop.child_token();
        let serving = serve_behind_oauth(
            listener,
            mcp,
            &upstream_url,
            &asrv,
            upstream_saw.clone(),
            &upstream_stop,
        );

        let doc = json!({"mcpServers": {"up": entry(&upstream_url, &asrv.token_endpoint())}});
        let config = parse_config(&doc.to_string(), |var| {
            vars.iter().find(|(k, _)| *k == var).map(|(_, v)| v.clone())
        })
        .expect("a good file");
        config.check_front(true).expect("an OAuth front");
        let aggregator = Aggregator::start(config.servers, UpstreamOptions::default()).unwrap();
        let (listener, proxy_url) = endpoint().await;
        let mcp = McpHttp::builder(aggregator.clone())
            .bind_address(listener.local_addr().unwrap())
            .endpoint_path("/mcp")
            .build();
        serve_behind_oauth(
            listener,
            mcp,
            &proxy_url,
            &asrv,
            Arc::new(Mutex::new(Vec::new())),
            &stop,
        );
        Rig {
            asrv,
            proxy_url,
            upstream_url,
            upstream_saw,
            aggregator,
            server,
            handled: tokio::sync::Mutex::new(handled),
            speaks,
            upstream: Mutex::new((upstream_stop, serving)),
            stop,
        }
    }

    /// Stops the upstream's endpoint and serves it again on the same
    /// address, with none of its sessions (as a restarted server would).
    pub(crate) async fn restart_upstream(&self) {
        let (stop, serving) = {
            let mut up = self.upstream.lock().unwrap();
            let fresh = (self.stop.child_token(), tokio::spawn(async {}));
            std::mem::replace(&mut *up, fresh)
        };
        stop.cancel();
        bounded("the upstream stops", serving).await.unwrap();
        let addr: std::net::SocketAddr = self
            .upstream_url
            .trim_start_matches("http://")
            .trim_end_matches("/mcp")
            .parse()
            .unwrap();
        let listener = tokio::net::TcpListener::bind(addr).await.unwrap();
        let mcp = upstream_endpoint(&self.server, self.speaks, addr);
        let stop = self.upstream.lock().unwrap().0.clone();
        let serving = serve_behind_oauth(
            listener,
            mcp,
            &self.upstream_url,
            &self.asrv,
            self.upstream_saw.clone(),
            &stop,
        );
        self.upstream.lock().unwrap().1 = serving;
    }

    /// Waits until the upstream server has handled `n` requests of
    /// `method` (counted from the last call; other messages are skipped).
    pub(crate) async fn handled(&self, method: &str, n: usize) {
        let mut handled = self.handled.lock().await;
        let mut seen = 0;
        bounded("the upstream handles the requests", async {
            while seen < n {
                match handled.recv().await {
                    Some(Seen::Request(m)) if m == method => seen += 1,
                    Some(_) => {}
                    None => panic!("the upstream server is gone"),
                }
            }
        })
        .await
    }

    /// Forgets what the upstream server handled so far.
    pub(crate) async fn forget_handled(&self) {
        let mut handled = self.handled.lock().await;
        while handled.try_recv().is_ok() {}
    }

    /// A token of `sub` for the proxy (and the other audiences given).
    pub(crate) fn token(&self, sub: &str, more_audiences: &[&str]) -> String {
        let mut claims = self.asrv.claims(&self.proxy_url, &["mcp"]);
        claims.insert("sub".into(), json!(sub));
        if !more_audiences.is_empty() {
            let mut aud = vec![json!(self.proxy_url)];
            aud.extend(more_audiences.iter().map(|a| json!(a)));
            claims.insert("aud".into(), Value::Array(aud));
        }
        self.asrv.token(&claims)
    }

    /// A client of the proxy presenting `token`.
    async fn client(&self, token: &str) -> Client {
        self.client_speaking(token, None).await
    }

    /// A client of the proxy presenting `token`, speaking `version` (the
    /// latest when `None`).
    pub(crate) async fn client_speaking(
        &self,
        token: &str,
        version: Option<ProtocolVersion>,
    ) -> Client {
        let mut h = tessera_http::http::HeaderMap::new();
        h.insert("authorization", format!("Bearer {token}").parse().unwrap());
        let t = HttpClientTransport::with_headers(&self.proxy_url, h).unwrap();
        let mut b = Client::builder("caller", "1.0");
        if let Some(v) = version {
            b = b.protocol_version(v);
        }
        bounded("connecting to the proxy", b.connect_transport(t))
            .await
            .expect("connects")
    }

    /// A legacy client of the proxy whose token comes from `auth` for each
    /// request (one that changes it, as a refreshing client does).
    pub(crate) async fn client_authorized_by(&self, auth: impl tessera_http::HttpAuth) -> Client {
        let t = HttpClientTransport::new(&self.proxy_url)
            .unwrap()
            .with_auth(auth);
        let b = Client::builder("caller", "1.0").protocol_version(ProtocolVersion::V2025_11_25);
        bounded("connecting to the proxy", b.connect_transport(t))
            .await
            .expect("connects")
    }

    fn upstream_saw(&self) -> Vec<String> {
        self.upstream_saw.lock().unwrap().clone()
    }

    pub(crate) fn exchanges(&self) -> u64 {
        self.asrv.token_requests(EXCHANGE)
    }

    pub(crate) fn close(self) {
        self.aggregator.close();
        self.stop.cancel();
    }
}

/// The claims the upstream verified, as `whoami` answers them.
async fn whoami(c: &Client) -> Value {
    let r = bounded("whoami", c.call_tool("up__whoami", json!({})))
        .await
        .expect("a result");
    serde_json::from_str(r.content[0].as_text().expect("text")).expect("JSON claims")
}

pub(crate) fn exchange_auth(token_endpoint: Option<&str>) -> impl Fn(&str, &str) -> Value {
    let configured = token_endpoint.is_some();
    move |_up: &str, te: &str| {
        let mut a = json!({"type": "tokenExchange", "clientId": "gateway",
                           "clientSecretEnv": "GW_SECRET", "scope": "mcp"});
        if configured {
            a["tokenEndpoint"] = json!(te);
        }
        a
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn token_exchange_gives_the_upstream_a_token_of_its_own_per_caller() {
    // The authorization server found through the upstream's resource metadata.
    let rig = Rig::start(exchange_auth(None)).await;
    let alice_token = rig.token("alice", &[]);
    let bob_token = rig.token("bob", &[]);
    let alice = rig.client(&alice_token).await;
    let bob = rig.client(&bob_token).await;
    // No pooled connection to wait for: each caller connects on use.
    assert!(bounded("usable", rig.aggregator.wait_connected("up", true)).await);
    let ready = rig.aggregator.readiness();
    assert!(ready.ready);
    assert_eq!(ready.upstreams["up"], "per-caller");
    assert_eq!(rig.aggregator.caller_connections("up"), 0);

    let names: Vec<String> = bounded("alice lists", alice.list_tools())
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(
        names,
        ["up__whoami"],
        "listed through alice's own connection"
    );
    assert_eq!(rig.exchanges(), 1, "alice's token exchanged once");

    for (c, sub) in [
        (&alice, "alice"),
        (&bob, "bob"),
        (&alice, "alice"),
        (&bob, "bob"),
    ] {
        let claims = whoami(c).await;
        assert_eq!(claims["sub"], sub);
        assert_eq!(
            claims["aud"],
            json!(rig.upstream_url),
            "issued for the upstream"
        );
        assert_eq!(
            claims["act"],
            json!({"sub": "gateway"}),
            "the proxy acts for {sub}"
        );
        assert_eq!(claims["client_id"], "gateway");
    }
    // One exchange per caller: the second call of each reused the cache.
    assert_eq!(rig.exchanges(), 2);
    assert_eq!(rig.aggregator.caller_connections("up"), 2);

    let saw = rig.upstream_saw();
    assert!(!saw.is_empty());
    assert!(
        !saw.iter().any(|t| *t == alice_token || *t == bob_token),
        "the upstream never sees a caller's own token"
    );
    let mut distinct = saw.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), 2, "one exchanged token per caller");
    let issued = rig.asrv.exchanges();
    assert_eq!(issued.len(), 2);
    assert_ne!(issued[0]["sub"], issued[1]["sub"]);

    // A new caller's first requests, all at once: one exchange, one connection.
    let frank = rig.client(&rig.token("frank", &[])).await;
    let (a, b, c) = tokio::join!(whoami(&frank), whoami(&frank), whoami(&frank));
    assert!([a, b, c].iter().all(|x| x["sub"] == "frank"));
    assert_eq!(rig.exchanges(), 3);
    assert_eq!(rig.aggregator.caller_connections("up"), 3);
    frank.close().await;

    alice.close().await;
    bob.close().await;
    rig.close();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_exchanged_token_near_its_expiry_is_exchanged_again() {
    // At a configured token endpoint; tokens that live 30 s, under the
    // minute before expiry at which the proxy stops using one.
    let rig = Rig::start(exchange_auth(Some("configured"))).await;
    rig.asrv.configure_exchange(|s| s.ttl = 30);
    let caller = rig.client(&rig.token("carol", &[])).await;
    let first = whoami(&caller).await;
    let after_first = rig.exchanges();
    assert!(after_first >= 1);
    let second = whoami(&caller).await;
    assert!(
        rig.exchanges() > after_first,
        "the near-expired token is not reused ({after_first} then {})",
        rig.exchanges()
    );
    assert_ne!(first["jti"], second["jti"], "a new token each time");
    assert_eq!(second["sub"], "carol");

    // With tokens that live an hour, the next exchange is kept and reused.
    rig.asrv.configure_exchange(|s| s.ttl = 3600);
    whoami(&caller).await;
    let kept = rig.exchanges();
    for _ in 0..3 {
        whoami(&caller).await;
    }
    assert_eq!(rig.exchanges(), kept, "a fresh token is reused");
    caller.close().await;
    rig.close();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_exchange_answers_the_caller_and_the_upstream_sees_nothing() {
    let rig = Rig::start(exchange_auth(None)).await;
    rig.asrv
        .configure_exchange(|s| s.refuse = Some("access_denied".into()));
    let caller = rig.client(&rig.token("mallory", &[])).await;
    let err = bounded("refused", caller.call_tool("up__whoami", json!({})))
        .await
        .expect_err("the exchange is refused");
    let text = err.to_string();
    assert!(
        text.contains("upstream up")
            && text.contains("token exchange")
            && text.contains("access_denied"),
        "{text}"
    );
    assert!(
        bounded("list", caller.list_tools())
            .await
            .unwrap()
            .is_empty(),
        "the upstream's tools are not listed for this caller"
    );
    assert!(
        rig.upstream_saw().is_empty(),
        "nothing reached the upstream"
    );
    assert_eq!(rig.aggregator.caller_connections("up"), 0);
    caller.close().await;
    rig.close();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forward_passes_on_only_a_token_issued_for_the_upstream() {
    let rig =
        Rig::start(|_, _| json!({"type": "forward", "acknowledgeTokenPassthrough": true})).await;
    // Issued for the proxy and the upstream: passed on as it is.
    let both = rig.token("dave", &[&rig.upstream_url]);
    let dave = rig.client(&both).await;
    let claims = whoami(&dave).await;
    assert_eq!(claims["sub"], "dave");
    assert_eq!(rig.exchanges(), 0);
    let saw = rig.upstream_saw();
    assert!(
        !saw.is_empty() && saw.iter().all(|t| *t == both),
        "the caller's own token"
    );

    // Issued for the proxy alone: refused before the upstream sees it.
    let proxy_only = rig.token("erin", &[]);
    let erin = rig.client(&proxy_only).await;
    let err = bounded("refused", erin.call_tool("up__whoami", json!({})))
        .await
        .expect_err("not issued for the upstream");
    assert!(
        err.to_string().contains("not issued for this upstream"),
        "{err}"
    );
    assert!(!rig.upstream_saw().contains(&proxy_only));
    dave.close().await;
    erin.close().await;
    rig.close();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn token_exchange_clients_sign_an_assertion_or_are_public() {
    // private_key_jwt, at the token endpoint found by discovery and at a
    // configured one; then a public client.
    for configured in [false, true] {
        let rig = Rig::start_with(
            Speaks::All,
            move |up, te| {
                let mut auth = json!({"type": "tokenExchange", "clientId": "gw-key",
                                      "privateKeyEnv": "GW_KEY", "privateKeyId": "k1",
                                      "scope": "mcp"});
                if configured {
                    auth["tokenEndpoint"] = json!(te);
                }
                json!({"url": up, "auth": auth})
            },
            |asrv| vec![("GW_KEY", asrv.register_key_client("gw-key"))],
        )
        .await;
        let alice = rig.client(&rig.token("alice", &[])).await;
        let claims = whoami(&alice).await;
        assert_eq!(claims["sub"], "alice");
        assert_eq!(claims["client_id"], "gw-key", "configured: {configured}");
        assert_eq!(claims["act"], json!({"sub": "gw-key"}));
        assert_eq!(rig.exchanges(), 1);
        alice.close().await;
        rig.close();
    }
    let rig = Rig::start_with(
        Speaks::All,
        |up, _| {
            json!({"url": up, "auth": {"type": "tokenExchange", "clientId": "gw-public",
                                       "clientAuth": "none", "scope": "mcp"}})
        },
        |asrv| {
            asrv.register_public_client("gw-public");
            Vec::new()
        },
    )
    .await;
    let bob = rig.client(&rig.token("bob", &[])).await;
    let claims = whoami(&bob).await;
    assert_eq!(claims["sub"], "bob");
    assert_eq!(claims["client_id"], "gw-public");
    bob.close().await;
    rig.close();
}
