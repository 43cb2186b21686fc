//! The Network tab's answer bodies, through the API's event stream: each
//! HTTP exchange's body follows its `http` event as `http-body` events, as
//! read, at most 64 KiB of it shown (a character cut between pieces shown
//! whole), then its size and whether it was cut.

use serde_json::{Value, json};

use super::client::*;
use super::{common, fixture};

/// The most bytes of a body shown (`inspect::response_body::MAX_KEPT`).
const MAX_KEPT: usize = 64 * 1024;

/// The `http` event of the exchange whose request body satisfies `sent`,
/// and the text and end of its body.
fn exchange(events: &[Value], sent: impl Fn(&Value) -> bool) -> Option<(Value, String, Value)> {
    let http = events
        .iter()
        .find(|e| e["type"] == "http" && sent(&e["requestBody"]))?;
    let id = &http["exchange"];
    let body: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "http-body" && &e["exchange"] == id)
        .collect();
    let end = body.iter().find(|e| e["end"] == true)?;
    let text: String = body.iter().filter_map(|e| e["text"].as_str()).collect();
    Some((http.clone(), text, (*end).clone()))
}

#[tokio::test]
async fn answer_bodies_follow_each_exchange_bounded() {
    let (_server, url) = fixture::serve_http();
    let inspector = common::start_inspect(&[], START);
    let api = Api::of(&inspector);
    let id = api
        .post("connections", json!({"url": url, "era": "modern"}))
        .await["id"]
        .as_u64()
        .unwrap();
    let call = format!("connections/{id}/tools/call");

    // A small answer: whole, markup in it kept as the characters it is.
    let markup = "<img src=x onerror=alert(1)> & <b>bold</b>";
    api.post(
        &call,
        json!({"name": "echo", "arguments": {"text": markup}}),
    )
    .await;
    let is_small = |b: &Value| b["params"]["arguments"]["text"] == markup;
    let events = events_until(&api, |ev| exchange(ev, is_small).is_some()).await;
    let (http, text, end) = exchange(&events, is_small).unwrap();
    assert_eq!(http["connection"], id);
    assert!(
        text.contains(&markup.replace('&', "\\u0026")) || text.contains(markup),
        "{text}"
    );
    assert_eq!(end["truncated"], false, "{end}");
    assert_eq!(end["bytes"], text.len(), "{end}");
    assert!(end.get("error").is_none(), "{end}");

    // A large one (two-byte characters, so that pieces end inside one):
    // the first 64 KiB shown, the whole size counted.
    let big = "é".repeat(100_000);
    api.post(&call, json!({"name": "echo", "arguments": {"text": big}}))
        .await;
    let is_big = |b: &Value| b["bytes"].as_u64().is_some_and(|n| n > 200_000);
    let events = events_until(&api, |ev| exchange(ev, is_big).is_some()).await;
    let (_, text, end) = exchange(&events, is_big).unwrap();
    assert_eq!(end["truncated"], true, "{end}");
    assert!(end["bytes"].as_u64().unwrap() > 200_000, "{end}");
    assert!(
        text.len() <= MAX_KEPT && text.len() >= MAX_KEPT - 4,
        "{}",
        text.len()
    );
    assert!(!text.contains('\u{FFFD}'), "a character was cut");
    assert!(text.contains("éééé"));

    // Every exchange that got an answer says how its body ended.
    for http in events
        .iter()
        .filter(|e| e["type"] == "http" && e["status"].is_number())
    {
        let ended = events.iter().any(|e| {
            e["type"] == "http-body" && e["exchange"] == http["exchange"] && e["end"] == true
        });
        let listening = http["method"] == "GET";
        assert!(ended || listening, "no end for {http}");
    }
}
