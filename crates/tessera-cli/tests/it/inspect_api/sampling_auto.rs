//! Sampling answered at once with a fixed reply (`PUT /api/sampling-auto`),
//! in both eras, then put to the user again once it is turned off; a reply
//! over the bound is refused.

use serde_json::json;

use super::client::*;
use super::common;

#[tokio::test]
async fn sampling_is_answered_at_once_with_the_fixed_reply_until_turned_off() {
    let inspector = common::start_inspect(&[], START);
    let api = Api::of(&inspector);
    assert_eq!(api.get("sampling-auto").await, json!({"auto": null}));
    let set = api
        .expect(
            200,
            reqwest::Method::PUT,
            "sampling-auto",
            Some(json!({"text": "fixed <reply>", "model": "m-1"})),
        )
        .await;
    assert_eq!(
        set,
        json!({"auto": {"text": "fixed <reply>", "model": "m-1"}})
    );
    for era in ["modern", "legacy"] {
        let id = api.connect_reference(era).await["id"].as_u64().unwrap();
        let r = api
            .post(
                &format!("connections/{id}/tools/call"),
                json!({"name": "test_sampling", "arguments": {"prompt": "Say hi"}}),
            )
            .await;
        assert_eq!(
            r["result"]["content"][0]["text"], "LLM response: fixed <reply>",
            "{era}: {r}"
        );
        assert_eq!(api.get("asks").await["asks"], json!([]), "{era}");
    }
    // The journal tells each automatic answer, with the request.
    let events = events_until(&api, |ev| {
        ev.iter().filter(|e| e["type"] == "auto-reply").count() == 2
    })
    .await;
    let auto = events.iter().find(|e| e["type"] == "auto-reply").unwrap();
    assert_eq!(auto["kind"], "sampling");
    assert_eq!(auto["reply"]["model"], "m-1");
    assert!(auto["params"]["messages"].is_array(), "{auto}");

    // Too long a reply is refused, and the one set stays.
    let long = "x".repeat(17 * 1024);
    let v = api
        .expect(
            400,
            reqwest::Method::PUT,
            "sampling-auto",
            Some(json!({"text": long})),
        )
        .await;
    says(&v, "at most");
    assert_eq!(api.get("sampling-auto").await["auto"]["model"], "m-1");

    // Off: the next request waits for the user again.
    api.expect(
        200,
        reqwest::Method::PUT,
        "sampling-auto",
        Some(json!({"text": null})),
    )
    .await;
    let id = api.connect_reference("modern").await["id"]
        .as_u64()
        .unwrap();
    let call = {
        let api = Api::of(&inspector);
        tokio::spawn(async move {
            api.post(
                &format!("connections/{id}/tools/call"),
                json!({"name": "test_sampling", "arguments": {"prompt": "again"}}),
            )
            .await
        })
    };
    let ask = next_ask(&api, 0).await;
    assert_eq!(ask["kind"], "sampling");
    let n = ask["ask"].as_u64().unwrap();
    api.reply_sampling(n, "by hand").await;
    let r = call.await.unwrap();
    assert_eq!(r["result"]["content"][0]["text"], "LLM response: by hand");
}
