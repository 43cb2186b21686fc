//! The circuit breaker of an upstream reached on one connection per
//! caller: a caller's connection that cannot be made is a failure of the
//! upstream; a caller refused before the upstream is asked is not.

use serde_json::json;
use tessera_testkit::bounded;

use crate::caller_credentials::{Rig, Speaks, exchange_auth};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn callers_failed_connections_open_the_circuit_refused_exchanges_do_not() {
    // An upstream nobody serves, its token endpoint configured.
    let dead = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}/mcp", l.local_addr().unwrap())
    };
    let auth = exchange_auth(Some("configured"));
    let rig = Rig::start_entry(Speaks::All, move |_, te| {
        json!({"url": dead, "auth": auth(&dead, te),
               "circuitBreaker": {"failures": 2, "cooldown": 600}})
    })
    .await;
    let caller = rig.client_speaking(&rig.token("alice", &[]), None).await;
    let call = || async {
        bounded("the call", caller.call_tool("up__whoami", json!({})))
            .await
            .expect_err("fails")
            .to_string()
    };

    // Refused exchanges: the upstream is never asked, and nothing counts.
    rig.asrv
        .configure_exchange(|s| s.refuse = Some("access_denied".into()));
    for _ in 0..3 {
        let e = call().await;
        assert!(e.contains("token exchange"), "{e}");
    }
    assert_eq!(rig.aggregator.readiness().upstreams["up"], "per-caller");

    // Exchanged, and the connection cannot be made: twice opens it.
    rig.asrv.configure_exchange(|s| s.refuse = None);
    let e = call().await;
    assert!(e.contains("cannot be reached for this caller"), "{e}");
    assert_eq!(rig.aggregator.readiness().upstreams["up"], "per-caller");
    let e = call().await;
    assert!(e.contains("cannot be reached for this caller"), "{e}");
    assert_eq!(rig.aggregator.readiness().upstreams["up"], "circuit-open");
    // Open: refused at once, before any exchange or connection.
    let exchanged = rig.exchanges();
    let e = call().await;
    assert!(
        e.contains("circuit breaker opened after 2 consecutive failures"),
        "{e}"
    );
    assert_eq!(rig.exchanges(), exchanged);
    assert!(
        bounded("the list", caller.list_tools())
            .await
            .unwrap()
            .is_empty(),
        "its tools are left out while it is open"
    );
    caller.close().await;
    rig.close();
}
