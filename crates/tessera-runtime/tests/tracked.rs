//! [`Peer::request_tracked`] tells a request that never reached the engine
//! (so was never written, and may be sent again elsewhere) from one that
//! was handed to it and may have run: the first never names its id, the
//! second has. A client core over a duplex pipe whose other end the test
//! plays.

use std::time::Duration;

use tessera_proto::{ClientIdentity, EngineConfig, RequestOptions};
use tessera_runtime::{ConnectionOptions, NoService, Peer};
use tessera_types::RequestId;
use tokio::io::{AsyncBufReadExt, BufReader, DuplexStream};
use tokio::sync::oneshot;

const BOUND: Duration = Duration::from_secs(10);

/// A client connection whose server the test plays on the returned ends.
fn client() -> (Peer, BufReader<DuplexStream>, DuplexStream) {
    let (to_server, from_client) = tokio::io::duplex(64 * 1024);
    let (to_client, from_server) = tokio::io::duplex(64 * 1024);
    let config = EngineConfig::client(ClientIdentity::default());
    let (peer, _task) = tessera_runtime::spawn(
        config,
        from_server,
        to_server,
        NoService,
        ConnectionOptions::default(),
    );
    (peer, BufReader::new(from_client), to_client)
}

#[tokio::test]
async fn a_written_request_names_its_id_and_an_unsent_one_never_does() {
    // Written, then the connection ends before the answer: the id was given.
    let (peer, mut lines, out) = client();
    let (assigned, mut id) = oneshot::channel::<RequestId>();
    let p = peer.clone();
    let call = tokio::spawn(async move {
        p.request_tracked(
            "tools/call",
            None,
            RequestOptions::default(),
            None,
            assigned,
            true,
        )
        .await
    });
    let mut line = String::new();
    tokio::time::timeout(BOUND, lines.read_line(&mut line))
        .await
        .expect("the request is written in time")
        .expect("reads");
    assert!(line.contains("tools/call"), "{line}");
    drop((lines, out));
    let out = tokio::time::timeout(BOUND, call)
        .await
        .expect("the call ends")
        .expect("joins");
    assert!(out.is_err(), "no answer came");
    assert!(id.try_recv().is_ok(), "the engine took it: it may have run");

    // The connection is gone first: the request never reaches the engine.
    let (peer, _lines, _out) = client();
    peer.close();
    tokio::time::timeout(BOUND, peer.closed())
        .await
        .expect("closes");
    let (assigned, mut id) = oneshot::channel::<RequestId>();
    let out = peer
        .request_tracked(
            "tools/call",
            None,
            RequestOptions::default(),
            None,
            assigned,
            false,
        )
        .await;
    assert!(out.is_err());
    assert!(
        matches!(id.try_recv(), Err(oneshot::error::TryRecvError::Closed)),
        "never taken: nothing was written"
    );
}
