//! The multi round-trip loop against scripted 2026-07-28 servers: the round
//! limit, what a retry carries, refusal of undeclared input requests,
//! protocol violations, handler refusals, URL mode and sampling rules.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tessera_client::{ClientError, UrlRequest, user_rejected};
use tessera_testkit::prelude::*;
use tessera_types::{
    CreateMessageRequestParams, CreateMessageResult, ElicitAction, ErrorObject, JsonObject,
    ProtocolVersion, RequestId,
};

const MODERN: ProtocolVersion = ProtocolVersion::V2026_07_28;

fn tools_caps() -> Value {
    json!({"tools": {}})
}

/// A scripted `tools/call` that records each attempt's id and params, and
/// answers with `answer(attempt number, params)`.
async fn scripted_tool<F>(
    builder: tessera_client::ClientBuilder,
    answer: F,
) -> (
    tessera_client::Client,
    Arc<Mutex<Vec<(RequestId, JsonObject)>>>,
)
where
    F: Fn(usize, &JsonObject) -> Result<JsonObject, ErrorObject> + Send + Sync + 'static,
{
    let attempts = Arc::new(Mutex::new(Vec::new()));
    let log = attempts.clone();
    let answer = Arc::new(answer);
    let (client, _peer, _notes) = scripted(builder, tools_caps(), &["tools/call"], move |r| {
        let params = r.params.clone().unwrap_or_default().into_object();
        let n = {
            let mut l = log.lock().unwrap();
            l.push((r.id.clone(), params.clone()));
            l.len()
        };
        let out = answer(n, &params);
        async move { out }
    })
    .await;
    (client, attempts)
}

fn done(text: &str) -> Result<JsonObject, ErrorObject> {
    Ok(obj(json!({"content": [{"type": "text", "text": text}]})))
}

#[tokio::test]
async fn a_server_that_never_completes_hits_the_round_limit() {
    let (client, attempts) = scripted_tool(builder(MODERN).max_input_rounds(3), |_, _| {
        Ok(obj(
            json!({"resultType": "input_required", "requestState": "again"}),
        ))
    })
    .await;
    let e = client.call_tool("t", json!({"x": 1})).await.unwrap_err();
    assert!(
        matches!(&e, ClientError::TooManyRounds { method, rounds: 3 } if method == "tools/call"),
        "{e}"
    );
    assert!(e.to_string().contains("max_input_rounds"), "{e}");
    let attempts = attempts.lock().unwrap();
    assert_eq!(attempts.len(), 4, "the first attempt and three retries");
    let ids: std::collections::HashSet<_> = attempts.iter().map(|(id, _)| id.clone()).collect();
    assert_eq!(ids.len(), 4, "every retry has a new id");
    for (i, (_, p)) in attempts.iter().enumerate() {
        assert_eq!(p["name"], "t");
        assert_eq!(p["arguments"], json!({"x": 1}));
        assert!(!p.contains_key("inputResponses"), "nothing was asked");
        if i == 0 {
            assert!(!p.contains_key("requestState"));
        } else {
            assert_eq!(p["requestState"], "again");
        }
    }
}

#[tokio::test]
async fn a_retry_carries_the_answers_and_only_the_state_it_was_given() {
    let (client, attempts) = scripted_tool(full_builder(MODERN), |n, p| match n {
        // No requestState: the retry must not carry one.
        1 => Ok(obj(json!({"resultType": "input_required", "inputRequests": {
            "where": {"method": "roots/list"},
            "model": {"method": "sampling/createMessage", "params": {
                "messages": [{"role": "user", "content": {"type": "text", "text": "Capital?"}}],
                "maxTokens": 5}}
        }}))),
        2 => {
            assert!(!p.contains_key("requestState"));
            let r = &p["inputResponses"];
            assert_eq!(r["where"]["roots"][0]["uri"], "file:///home/user/project");
            assert_eq!(r["model"]["content"]["text"], "Paris");
            assert_eq!(r["model"]["model"], "test-model");
            Ok(obj(json!({"resultType": "input_required", "requestState": "opaque+/=",
                "inputRequests": {"form": {"method": "elicitation/create", "params": {
                    "message": "Name?",
                    "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}}}})))
        }
        _ => {
            assert_eq!(p["requestState"], "opaque+/=");
            assert_eq!(
                p["inputResponses"],
                json!({"form": {"action": "accept", "content": {"name": "name-value"}}})
            );
            done("finished")
        }
    })
    .await;
    let r = client.call_tool("t", Value::Null).await.unwrap();
    assert_eq!(text(&r), "finished");
    assert_eq!(attempts.lock().unwrap().len(), 3);
}

#[tokio::test]
async fn undeclared_input_requests_are_refused_unanswered() {
    let cases = [
        (
            builder(MODERN).elicitation(fill_required),
            json!({"m": {"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 1}}}),
            "sampling/createMessage",
        ),
        (
            builder(MODERN).sampling(paris),
            json!({"r": {"method": "roots/list"}}),
            "roots/list",
        ),
        (
            builder(MODERN).elicitation(fill_required),
            json!({"u": {"method": "elicitation/create", "params": {
                "mode": "url", "message": "Open", "url": "https://x.example/"}}}),
            "elicitation/create (url mode)",
        ),
        (
            builder(MODERN).url_elicitation(|_u: UrlRequest| async {
                Ok::<_, ErrorObject>(ElicitAction::Accept)
            }),
            json!({"f": {"method": "elicitation/create", "params": {
                "message": "Name?", "requestedSchema": {"type": "object", "properties": {}}}}}),
            "elicitation/create (form mode)",
        ),
        (
            builder(MODERN).sampling(paris),
            json!({"t": {"method": "sampling/createMessage", "params": {
                "messages": [{"role": "user", "content": {"type": "text", "text": "q"}}], "maxTokens": 1,
                "tools": [{"name": "get_weather", "inputSchema": {"type": "object"}}]}}}),
            "sampling/createMessage with tools",
        ),
        (
            builder(MODERN),
            json!({"x": {"method": "tasks/get", "params": {}}}),
            "tasks/get",
        ),
    ];
    for (b, requests, what) in cases {
        let requests = Arc::new(requests);
        let (client, attempts) = scripted_tool(b, move |_, _| {
            Ok(obj(
                json!({"resultType": "input_required", "inputRequests": *requests}),
            ))
        })
        .await;
        match client.call_tool("t", json!({})).await.unwrap_err() {
            ClientError::UndeclaredInput { what: got, .. } => assert_eq!(got, what),
            other => panic!("{what}: unexpected {other}"),
        }
        assert_eq!(attempts.lock().unwrap().len(), 1, "{what}: never retried");
    }
}

#[tokio::test]
async fn one_undeclared_request_means_no_handler_runs() {
    let calls = Arc::new(AtomicUsize::new(0));
    let c = calls.clone();
    let (client, _) = scripted_tool(
        builder(MODERN).sampling(move |p| {
            c.fetch_add(1, Ordering::SeqCst);
            paris(p)
        }),
        |_, _| {
            Ok(obj(json!({"resultType": "input_required", "inputRequests": {
                "a": {"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 1}},
                "b": {"method": "roots/list"}
            }})))
        },
    )
    .await;
    assert!(matches!(
        client.call_tool("t", json!({})).await,
        Err(ClientError::UndeclaredInput { .. })
    ));
    assert_eq!(calls.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn an_input_required_result_without_requests_or_state_is_a_violation() {
    let (client, _) = scripted_tool(builder(MODERN), |_, _| {
        Ok(obj(json!({"resultType": "input_required"})))
    })
    .await;
    let e = client.call_tool("t", json!({})).await.unwrap_err();
    assert!(matches!(e, ClientError::Protocol { .. }), "{e}");
}

#[tokio::test]
async fn a_refused_input_fails_the_call_without_a_retry() {
    let (client, attempts) = scripted_tool(
        builder(MODERN).sampling(|_p: CreateMessageRequestParams| async {
            Err::<CreateMessageResult, _>(user_rejected("User rejected sampling request"))
        }),
        |_, _| {
            Ok(obj(json!({"resultType": "input_required", "requestState": "s", "inputRequests": {
                "m": {"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 1}}
            }})))
        },
    )
    .await;
    match client.call_tool("t", json!({})).await.unwrap_err() {
        ClientError::Input { key, method, error } => {
            assert_eq!(
                (key.as_str(), method.as_str()),
                ("m", "sampling/createMessage")
            );
            assert_eq!(error.code, -1);
        }
        other => panic!("unexpected {other}"),
    }
    assert_eq!(attempts.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn url_mode_asks_consent_and_answers_without_content() {
    let shown = Arc::new(Mutex::new(None));
    let s = shown.clone();
    let (client, _) = scripted_tool(
        builder(MODERN).url_elicitation(move |u: UrlRequest| {
            *s.lock().unwrap() = Some((u.url.clone(), u.host().map(str::to_owned), u.looks_suspicious()));
            async { Ok::<_, ErrorObject>(ElicitAction::Accept) }
        }),
        |n, p| match n {
            1 => Ok(obj(json!({"resultType": "input_required", "requestState": "s", "inputRequests": {
                "login": {"method": "elicitation/create", "params": {
                    "mode": "url", "message": "Connect your account", "url": "https://auth.example.com/connect?x=1"}}
            }}))),
            _ => {
                assert_eq!(p["inputResponses"], json!({"login": {"action": "accept"}}));
                done("connected")
            }
        },
    )
    .await;
    assert_eq!(
        serde_json::to_value(client.capabilities()).unwrap(),
        json!({"elicitation": {"url": {}}})
    );
    let r = client.call_tool("t", json!({})).await.unwrap();
    assert_eq!(text(&r), "connected");
    assert_eq!(
        *shown.lock().unwrap(),
        Some((
            "https://auth.example.com/connect?x=1".to_owned(),
            Some("auth.example.com".to_owned()),
            false
        ))
    );
}

#[tokio::test]
async fn sampling_with_tools_is_checked_both_ways() {
    let history = json!([
        {"role": "user", "content": {"type": "text", "text": "Weather in Paris?"}},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "c1", "name": "get_weather", "input": {"city": "Paris"}}]},
        {"role": "user", "content": [{"type": "tool_result", "toolUseId": "c1", "content": [{"type": "text", "text": "18C"}]}]}
    ]);
    let tools = json!([{"name": "get_weather", "inputSchema": {"type": "object"}}]);
    let request = |messages: &Value| {
        json!({"resultType": "input_required", "inputRequests": {"s": {"method": "sampling/createMessage",
            "params": {"messages": messages, "maxTokens": 50, "tools": tools}}}})
    };
    // A well-formed conversation reaches the handler, whose tool use goes back.
    let ok = request(&history);
    let (client, _) = scripted_tool(
        builder(MODERN).sampling_with_tools(|p: CreateMessageRequestParams| async move {
            assert_eq!(p.messages.len(), 3);
            Ok::<_, ErrorObject>(serde_json::from_value(json!({"role": "assistant", "model": "m",
                "stopReason": "toolUse",
                "content": [{"type": "tool_use", "id": "c2", "name": "get_weather", "input": {"city": "Oslo"}}]})).unwrap())
        }),
        move |n, p| match n {
            1 => Ok(obj(ok.clone())),
            _ => {
                assert_eq!(p["inputResponses"]["s"]["content"][0]["name"], "get_weather");
                done("ok")
            }
        },
    )
    .await;
    assert_eq!(
        serde_json::to_value(client.capabilities()).unwrap(),
        json!({"sampling": {"tools": {}}})
    );
    assert_eq!(text(&client.call_tool("t", json!({})).await.unwrap()), "ok");

    // A tool result mixed with text never reaches the handler: -32602.
    let mut mixed = history.clone();
    mixed[2]["content"]
        .as_array_mut()
        .unwrap()
        .push(json!({"type": "text", "text": "and more"}));
    let bad = request(&mixed);
    let (client, _) = scripted_tool(
        builder(MODERN).sampling_with_tools(|_p: CreateMessageRequestParams| async {
            panic!("the handler must not run")
        }),
        move |_, _| Ok(obj(bad.clone())),
    )
    .await;
    match client.call_tool("t", json!({})).await.unwrap_err() {
        ClientError::Input { error, .. } => {
            assert_eq!(error.code, -32602);
            assert!(error.message.contains("mixed"), "{}", error.message);
        }
        other => panic!("unexpected {other}"),
    }

    // A handler using a tool that was not offered: -32603, not sent.
    let ok = request(&history);
    let (client, _) = scripted_tool(
        builder(MODERN).sampling_with_tools(|_p: CreateMessageRequestParams| async {
            Ok::<_, ErrorObject>(serde_json::from_value(json!({"role": "assistant", "model": "m",
                "content": [{"type": "tool_use", "id": "c2", "name": "delete_everything", "input": {}}]})).unwrap())
        }),
        move |_, _| Ok(obj(ok.clone())),
    )
    .await;
    match client.call_tool("t", json!({})).await.unwrap_err() {
        ClientError::Input { error, .. } => assert_eq!(error.code, -32603),
        other => panic!("unexpected {other}"),
    }
}

#[tokio::test]
async fn prompts_and_resources_run_the_same_loop() {
    let (client, _peer, _notes) = scripted(
        full_builder(MODERN),
        json!({"prompts": {}, "resources": {}}),
        &["prompts/get", "resources/read"],
        |r| async move {
            let p = r.params.unwrap_or_default().into_object();
            if !p.contains_key("inputResponses") {
                return Ok(obj(
                    json!({"resultType": "input_required", "requestState": "s",
                    "inputRequests": {"r": {"method": "roots/list"}}}),
                ));
            }
            let roots = p["inputResponses"]["r"]["roots"].as_array().unwrap().len();
            Ok(match r.method.as_str() {
                "prompts/get" => obj(json!({"messages": [{"role": "user",
                    "content": {"type": "text", "text": format!("{roots} roots")}}]})),
                _ => obj(
                    json!({"contents": [{"uri": p["uri"], "text": format!("{roots} roots")}],
                    "ttlMs": 0, "cacheScope": "private"}),
                ),
            })
        },
    )
    .await;
    let prompt = client.get_prompt("p", Default::default()).await.unwrap();
    assert_eq!(prompt.messages[0].content.as_text(), Some("2 roots"));
    let read = client.read_resource("file:///x").await.unwrap();
    assert_eq!(
        serde_json::to_value(&read.contents[0]).unwrap()["text"],
        "2 roots"
    );
}
