//! A peer that writes a flood while not reading what it is sent: the
//! connection keeps reading (its answers wait in a queue bounded in bytes)
//! instead of blocking on a full pipe, so neither side deadlocks. Before,
//! the server stopped reading as soon as its first write blocked, and a
//! peer writing more than a pipe's worth before reading hung for ever.

use std::time::Duration;

use tessera_server::{Server, tool};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

#[tokio::test(start_paused = true)]
async fn a_peer_that_writes_without_reading_is_still_read() {
    let server = Server::builder()
        .tool(tool("t").handler(|| async { "t" }))
        .build()
        .unwrap();
    // A 4 KiB pipe each way.
    let (ours, theirs) = tokio::io::duplex(4096);
    let (sr, sw) = tokio::io::split(theirs);
    let _serving = server.serve_io(sr, sw);
    let (r, mut w) = tokio::io::split(ours);

    // 10,000 lines of junk (the server answers each with a parse error,
    // about 800 KB in all), written before reading anything back.
    const LINES: usize = 10_000;
    let written = tokio::time::timeout(Duration::from_secs(60), async {
        for i in 0..LINES {
            w.write_all(format!("junk {i}\n").as_bytes()).await.unwrap();
        }
        w.flush().await.unwrap();
    })
    .await;
    assert!(written.is_ok(), "the server stopped reading: deadlock");

    // Every answer arrives once we read.
    let mut lines = BufReader::new(r).lines();
    let mut answered = 0;
    while answered < LINES {
        let line = tokio::time::timeout(Duration::from_secs(60), lines.next_line())
            .await
            .expect("answers keep coming")
            .unwrap()
            .expect("the server is still there");
        assert!(line.contains("-32700"), "{line}");
        answered += 1;
    }
}
