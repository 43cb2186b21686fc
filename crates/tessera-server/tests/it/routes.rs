//! The method router: the application's own typed methods beside the core's
//! and the extensions', one handler per method and era, and the clashes
//! refused when the server is built.

use serde::{Deserialize, Serialize};
use serde_json::json;
use tessera_client::Client;
use tessera_server::{BuildError, Server};
use tessera_testkit::pair::in_process;
use tessera_types::{ErrorCode, ErrorObject};

#[derive(Deserialize)]
struct Count {
    n: u32,
}

#[derive(Serialize)]
struct Doubled {
    doubled: u32,
}

fn server() -> Server {
    Server::builder()
        .routes(|r| {
            r.method("example.com/double", |_req, p: Count| async move {
                p.n.checked_mul(2)
                    .map(|doubled| Doubled { doubled })
                    .ok_or_else(|| ErrorObject::invalid_params("too large to double"))
            });
        })
        .build()
        .expect("builds")
}

async fn connect(server: &Server) -> Client {
    in_process(server, Client::builder("routes-test", "1")).await
}

#[tokio::test]
async fn an_application_method_answers_with_its_typed_result() {
    let client = connect(&server()).await;
    let out = client
        .request_raw(
            "example.com/double",
            Some(json!({"n": 21}).as_object().unwrap().clone()),
        )
        .await
        .expect("answers");
    assert_eq!(out.get("doubled"), Some(&json!(42)));
    // The handler's own error reaches the caller as it was made.
    let err = client
        .request_raw(
            "example.com/double",
            Some(json!({"n": u32::MAX}).as_object().unwrap().clone()),
        )
        .await
        .expect_err("refused");
    let remote = err.remote().expect("a JSON-RPC error");
    assert_eq!(remote.code, ErrorCode::INVALID_PARAMS.0);
    assert!(remote.message.contains("too large"), "{}", remote.message);
    client.close().await;
}

#[tokio::test]
async fn params_that_do_not_decode_are_refused_before_the_handler() {
    let client = connect(&server()).await;
    let err = client
        .request_raw(
            "example.com/double",
            Some(json!({"n": "twenty"}).as_object().unwrap().clone()),
        )
        .await
        .expect_err("refused");
    let remote = err.remote().expect("a JSON-RPC error");
    assert_eq!(remote.code, ErrorCode::INVALID_PARAMS.0);
    assert!(
        remote.message.contains("example.com/double"),
        "{}",
        remote.message
    );
    client.close().await;
}

#[tokio::test]
async fn unknown_methods_and_other_eras_methods_are_not_found() {
    let client = connect(&server()).await;
    // The client speaks 2026-07-28, where `tasks/result` is gone.
    assert_eq!(client.era(), tessera_types::Era::Modern);
    for method in ["example.com/triple", "resources/unknown", "tasks/result"] {
        let err = client
            .request_raw(method, None)
            .await
            .expect_err("not found");
        let remote = err.remote().expect("a JSON-RPC error");
        assert_eq!(remote.code, ErrorCode::METHOD_NOT_FOUND.0, "{method}");
    }
    client.close().await;
}

#[test]
fn a_route_over_a_core_method_or_routed_twice_fails_the_build() {
    let core = Server::builder()
        .routes(|r| {
            r.method("tools/list", |_req, _p: serde_json::Value| async move {
                Ok::<_, ErrorObject>(json!({"tools": []}))
            });
        })
        .build();
    assert!(
        matches!(&core, Err(BuildError::InvalidRoute { method, .. }) if method == "tools/list"),
        "{core:?}"
    );
    let twice = Server::builder()
        .routes(|r| {
            for _ in 0..2 {
                r.method("example.com/x", |_req, _p: serde_json::Value| async move {
                    Ok::<_, ErrorObject>(json!({}))
                });
            }
        })
        .build();
    assert!(
        matches!(&twice, Err(BuildError::InvalidRoute { method, .. }) if method == "example.com/x"),
        "{twice:?}"
    );
}
