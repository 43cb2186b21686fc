//! The client against the reference server (`tessera serve --stdio`, this
//! crate's binary) in both eras: the same handlers answer legacy server
//! requests and 2026-07-28 input requests; subscriptions survive the
//! server's death.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::json;
use tessera::client::{
    CallOptions, Client, ClientBuilder, ClientError, ClientEvent, FormRequest, ListenEnd,
};
use tessera::types::{
    CallToolRequestParams, ElicitResult, ElicitValue, ErrorObject, LoggingLevel, MrtrResult,
    ProtocolVersion, Root, SubscriptionFilter,
};
use tessera_testkit::prelude::*;
use tessera_testkit::reference::Reference;

/// Connects `builder` to this crate's `tessera serve --stdio`.
async fn reference(builder: ClientBuilder) -> Client {
    Reference::new(env!("CARGO_BIN_EXE_tessera"))
        .connect(builder)
        .await
}

#[tokio::test]
async fn sampling_and_elicitation_tools_in_both_eras() {
    for v in ERAS {
        let client = reference(full_builder(v)).await;
        assert_eq!(client.protocol_version(), v);
        let r = client
            .call_tool("test_sampling", json!({"prompt": "Capital of France?"}))
            .await
            .unwrap();
        assert_eq!(text(&r), "LLM response: Paris", "{v}");
        let r = client
            .call_tool("test_elicitation", json!({"message": "Who are you?"}))
            .await
            .unwrap();
        assert_eq!(
            text(&r),
            r#"User response: action=accept, content={"email":"email-value","username":"username-value"}"#,
            "{v}"
        );
        client.close().await;
    }
}

#[tokio::test]
async fn every_input_required_tool_completes() {
    let cases = [
        (
            "test_input_required_result_elicitation",
            "Hello, name-value!",
        ),
        (
            "test_input_required_result_sampling",
            "The model said: Paris",
        ),
        (
            "test_input_required_result_list_roots",
            "Roots: file:///home/user/project, file:///home/user/notes",
        ),
        (
            "test_input_required_result_request_state",
            "state-ok: confirmed=true",
        ),
        (
            "test_input_required_result_multiple_inputs",
            "Got name name-value, a greeting and 2 root(s)",
        ),
        (
            "test_input_required_result_multi_round",
            "name-value likes color-value",
        ),
        (
            "test_input_required_result_tampered_state",
            "state verified",
        ),
        (
            "test_input_required_result_capabilities",
            "Asked for: elicitation, sampling, roots",
        ),
    ];
    for v in ERAS {
        let client = reference(full_builder(v)).await;
        for (tool, expected) in cases {
            let r = client.call_tool(tool, json!({})).await.unwrap();
            assert_eq!(text(&r), expected, "{tool} in {v}");
            assert!(!r.is_error(), "{tool} in {v}");
        }
        client.close().await;
    }
}

#[tokio::test]
async fn multi_round_asks_once_per_round_and_retries_with_new_ids() {
    let asked = Arc::new(Mutex::new(Vec::new()));
    let seen = asked.clone();
    let client = reference(builder(ProtocolVersion::V2026_07_28).elicitation(
        move |f: FormRequest| {
            seen.lock().unwrap().push(f.message.clone());
            fill_required(f)
        },
    ))
    .await;
    let r = client
        .call_tool("test_input_required_result_multi_round", json!({}))
        .await
        .unwrap();
    assert_eq!(text(&r), "name-value likes color-value");
    assert_eq!(
        *asked.lock().unwrap(),
        [
            "Step 1: What is your name?",
            "Step 2: What is your favorite color?"
        ]
    );
    client.close().await;
}

#[tokio::test]
async fn rounds_by_hand_echo_the_state_and_refuse_a_tampered_one() {
    let client = reference(full_builder(ProtocolVersion::V2026_07_28)).await;
    let params = CallToolRequestParams::new("test_input_required_result_tampered_state");
    let first = client
        .call_tool_once(params.clone(), &CallOptions::new())
        .await
        .unwrap();
    let MrtrResult::InputRequired(ir) = first else {
        panic!("expected input_required")
    };
    let state = ir.request_state.clone().expect("a request state");
    let responses = client.fulfil(&ir).await.unwrap();
    assert_eq!(responses.keys().collect::<Vec<_>>(), ["confirm"]);

    let mut tampered = params.clone();
    tampered.input_responses = Some(responses.clone());
    tampered.request_state = Some(format!("{state}x"));
    let e = client
        .call_tool_once(tampered, &CallOptions::new())
        .await
        .unwrap_err();
    assert_eq!(e.remote().map(|r| r.code), Some(-32602), "{e}");

    let mut retry = params;
    retry.input_responses = Some(responses);
    retry.request_state = Some(state);
    match client
        .call_tool_once(retry, &CallOptions::new())
        .await
        .unwrap()
    {
        MrtrResult::Complete(r) => assert_eq!(text(&r), "state verified"),
        MrtrResult::InputRequired(_) => panic!("the exact state completes the call"),
    }
    client.close().await;
}

#[tokio::test]
async fn omitted_fields_get_the_schema_defaults() {
    for v in ERAS {
        let client = reference(builder(v).elicitation(|f: FormRequest| async move {
            assert_eq!(f.defaults().get("age"), Some(&ElicitValue::Integer(30)));
            // The user only changes their name.
            let content = BTreeMap::from([("name".to_owned(), ElicitValue::String("Ada".into()))]);
            Ok::<_, ErrorObject>(ElicitResult::accept(content))
        }))
        .await;
        let r = client
            .call_tool("test_elicitation_sep1034_defaults", json!({}))
            .await
            .unwrap();
        assert_eq!(
            text(&r),
            r#"User response: action=accept, content={"age":30,"name":"Ada","score":95.5,"status":"active","verified":true}"#,
            "{v}"
        );
        client.close().await;
    }
}

#[tokio::test]
async fn a_form_answer_that_breaks_the_schema_is_not_sent() {
    for v in ERAS {
        // `email` is required but missing.
        let client = reference(builder(v).elicitation(|_f: FormRequest| async move {
            let content =
                BTreeMap::from([("username".to_owned(), ElicitValue::String("ada".into()))]);
            Ok::<_, ErrorObject>(ElicitResult::accept(content))
        }))
        .await;
        let outcome = client
            .call_tool("test_elicitation", json!({"message": "Who?"}))
            .await;
        match v.era() {
            // Legacy: the server's request got a -32603 error, so its tool failed.
            tessera::types::Era::Legacy => {
                let r = outcome.unwrap();
                assert!(r.is_error(), "{r:?}");
                assert!(text(&r).contains("requestedSchema"), "{}", text(&r));
            }
            // Modern: the call fails locally, nothing is retried.
            tessera::types::Era::Modern => match outcome.unwrap_err() {
                ClientError::Input { method, error, .. } => {
                    assert_eq!(method, "elicitation/create");
                    assert_eq!(error.code, -32603);
                    assert!(error.message.contains("email"), "{}", error.message);
                }
                other => panic!("unexpected {other}"),
            },
        }
        client.close().await;
    }
}

#[tokio::test]
async fn only_declared_capabilities_are_asked_for() {
    for v in ERAS {
        let client = reference(builder(v).sampling(paris)).await;
        let caps = serde_json::to_value(client.capabilities()).unwrap();
        assert_eq!(caps, json!({"sampling": {}}));
        let r = client
            .call_tool("test_input_required_result_capabilities", json!({}))
            .await
            .unwrap();
        assert_eq!(text(&r), "Asked for: sampling", "{v}");
        client.close().await;
    }
}

#[tokio::test]
async fn progress_reaches_the_callback_and_the_event_stream() {
    for v in ERAS {
        let client = reference(builder(v)).await;
        let mut events = client.events();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = seen.clone();
        let options =
            CallOptions::new().on_progress(move |p| sink.lock().unwrap().push(p.progress));
        let r = client
            .call_tool_with(
                CallToolRequestParams::new("test_tool_with_progress"),
                &options,
            )
            .await
            .unwrap();
        assert_eq!(text(&r), "Progress test completed (with progress token)");
        assert_eq!(*seen.lock().unwrap(), [0.0, 50.0, 100.0], "{v}");
        let mut from_events = Vec::new();
        while from_events.len() < 3 {
            if let Some(ClientEvent::Progress(p)) = bounded("progress events", events.recv()).await
            {
                from_events.push(p.progress);
            }
        }
        assert_eq!(from_events, [0.0, 50.0, 100.0]);
        client.close().await;
    }
}

#[tokio::test]
async fn log_messages_arrive_as_events_in_both_eras() {
    for v in ERAS {
        let client = reference(builder(v)).await;
        let mut events = client.events();
        let options = match v.era() {
            tessera::types::Era::Legacy => {
                client.set_log_level(LoggingLevel::Info).await.unwrap();
                CallOptions::new()
            }
            tessera::types::Era::Modern => CallOptions::new().log_level(LoggingLevel::Info),
        };
        client
            .call_tool_with(
                CallToolRequestParams::new("test_tool_with_logging"),
                &options,
            )
            .await
            .unwrap();
        let mut lines = Vec::new();
        while lines.len() < 3 {
            if let Some(ClientEvent::Log(l)) = bounded("log events", events.recv()).await {
                assert_eq!(l.level, LoggingLevel::Info);
                lines.push(l.data.as_str().unwrap().to_owned());
            }
        }
        assert_eq!(
            lines,
            [
                "Tool execution started",
                "Tool processing data",
                "Tool execution completed"
            ],
            "{v}"
        );
        client.close().await;
    }
}

#[tokio::test]
async fn a_legacy_list_change_is_an_event() {
    let client = reference(builder(ProtocolVersion::V2025_11_25).cache(true)).await;
    let before = client.list_tools().await.unwrap();
    assert!(!before.iter().any(|t| t.name == "test_dynamic_tool"));
    let mut events = client.events();
    client
        .call_tool("test_trigger_tool_change", json!({}))
        .await
        .unwrap();
    loop {
        if let Some(ClientEvent::ToolListChanged(_)) =
            bounded("the list_changed event", events.recv()).await
        {
            break;
        }
    }
    let after = client.list_tools().await.unwrap();
    assert!(after.iter().any(|t| t.name == "test_dynamic_tool"));
    client.close().await;
}

#[tokio::test]
async fn new_roots_are_what_the_server_gets_next() {
    for v in ERAS {
        let client = reference(full_builder(v)).await;
        client
            .set_roots(vec![Root::new("file:///srv/data")])
            .unwrap();
        let r = client
            .call_tool("test_input_required_result_list_roots", json!({}))
            .await
            .unwrap();
        assert_eq!(text(&r), "Roots: file:///srv/data", "{v}");
        assert!(
            client
                .set_roots(vec![Root::new("https://x.example/")])
                .is_err()
        );
        client.close().await;
    }
}

fn kill(pid: u32) {
    let status = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .expect("runs kill");
    assert!(status.success());
}

#[tokio::test]
async fn reconnects_after_the_child_is_killed() {
    for v in ERAS {
        let client = reference(full_builder(v).retry_idempotent(true)).await;
        let mut events = client.events();
        assert_eq!(client.generation(), 1);
        let first_pid = client.child_id().expect("a child");

        kill(first_pid);
        bounded("the connection to end", client.closed()).await;
        assert!(!client.is_connected());
        let e = client
            .call_tool("echo", json!({"text": "x"}))
            .await
            .unwrap_err();
        assert!(e.is_closed(), "{e}");
        assert_eq!(
            bounded("disconnect event", events.recv()).await,
            Some(ClientEvent::Disconnected)
        );

        bounded("reconnect", client.reconnect()).await.unwrap();
        assert_eq!(client.generation(), 2);
        assert!(client.is_connected());
        assert_ne!(client.child_id(), Some(first_pid));
        assert_eq!(
            bounded("reconnect event", events.recv()).await,
            Some(ClientEvent::Reconnected {
                era: v.era(),
                version: v
            })
        );
        let r = client
            .call_tool("echo", json!({"text": "back"}))
            .await
            .unwrap();
        assert_eq!(text(&r), "back");

        // An idempotent request re-issues itself after a reconnection.
        kill(client.child_id().unwrap());
        bounded("the connection to end", client.closed()).await;
        let tools = bounded("list_tools", client.list_tools()).await.unwrap();
        assert!(tools.iter().any(|t| t.name == "echo"));
        assert_eq!(client.generation(), 3);
        client.close().await;
    }
}

#[tokio::test]
async fn a_one_off_transport_cannot_reconnect() {
    let server = tessera::server::Server::builder().build().unwrap();
    let client = in_process(&server, builder(ProtocolVersion::V2025_11_25)).await;
    assert!(matches!(
        client.reconnect().await,
        Err(ClientError::NotReconnectable)
    ));
}

#[tokio::test]
async fn the_round_count_is_bounded_by_the_handlers_being_called_once_per_request() {
    // test_input_required_result_multiple_inputs asks three things at once:
    // each handler runs exactly once, in the same round.
    let calls = Arc::new(AtomicUsize::new(0));
    let c = calls.clone();
    let client = reference(
        builder(ProtocolVersion::V2026_07_28)
            .roots(two_roots())
            .sampling(move |p| {
                c.fetch_add(1, Ordering::SeqCst);
                paris(p)
            })
            .elicitation(fill_required),
    )
    .await;
    let r = client
        .call_tool("test_input_required_result_multiple_inputs", json!({}))
        .await
        .unwrap();
    assert_eq!(text(&r), "Got name name-value, a greeting and 2 root(s)");
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    client.close().await;
}

#[tokio::test]
async fn subscriptions_are_sent_again_after_reconnecting() {
    let client = reference(builder(ProtocolVersion::V2026_07_28)).await;
    let mut stream = client
        .listen(SubscriptionFilter {
            tools_list_changed: Some(true),
            ..Default::default()
        })
        .await
        .unwrap();
    let pid = client.child_id().unwrap();
    assert!(
        std::process::Command::new("kill")
            .args(["-9", &pid.to_string()])
            .status()
            .unwrap()
            .success()
    );
    bounded("the connection to end", client.closed()).await;
    bounded("reconnect", client.reconnect()).await.unwrap();
    let ack = bounded("the new acknowledgment", stream.recv())
        .await
        .unwrap();
    assert!(
        matches!(ack, ClientEvent::SubscriptionsAcknowledged(_)),
        "{ack:?}"
    );
    client
        .call_tool("test_trigger_tool_change", json!({}))
        .await
        .unwrap();
    let n = bounded("the change", stream.recv()).await.unwrap();
    assert_eq!(n.method(), Some("notifications/tools/list_changed"));
    // The change comes on the subscription that the new acknowledgment names.
    assert_eq!(
        n.subscription_id().expect("a subscription id"),
        ack.subscription_id().expect("a subscription id")
    );
    client.close().await;
    assert!(bounded("the stream to end", stream.recv()).await.is_none());
    assert_eq!(stream.end(), Some(ListenEnd::Closed));
}
