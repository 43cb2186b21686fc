//! Mounting McpHttp inside an axum application.

use crate::common;

use std::sync::Arc;

use common::*;
use http::StatusCode;
use serde_json::json;
use tessera_http::McpHttp;

#[tokio::test]
async fn mounts_in_an_axum_router_next_to_other_routes() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let mcp = McpHttp::builder(fixture(Arc::new(Flags::default())))
        .bind_address(addr)
        .build();
    let app = axum::Router::new()
        .route("/health", axum::routing::get(|| async { "ok" }))
        .route_service("/mcp", mcp.clone())
        .nest_service("/api/mcp", mcp.clone());
    tokio::spawn(async move { axum::serve(listener, app).await });
    let host = format!("127.0.0.1:{}", addr.port());
    for path in ["/mcp", "/api/mcp"] {
        let req = http::Request::post(path)
            .header("host", &host)
            .header("accept", ACCEPT_BOTH)
            .header("content-type", "application/json")
            .body(http_body_util::Full::new(bytes::Bytes::from(
                serde_json::to_vec(&initialize(1, LEGACY)).unwrap(),
            )))
            .unwrap();
        let r = send(addr, req).await;
        assert_eq!(r.status(), StatusCode::OK, "{path}");
        assert!(r.headers().contains_key("mcp-session-id"));
        let v = body_json(r).await;
        assert_eq!(v["result"]["protocolVersion"], LEGACY);
    }
    let r = send(
        addr,
        http::Request::get("/health")
            .header("host", &host)
            .body(Default::default())
            .unwrap(),
    )
    .await;
    assert_eq!(body_bytes(r).await, "ok");
    assert_eq!(mcp.session_count(), 2);
    let _ = json!(null);
}
