//! What servers ask and offer beyond calls: sampling and elicitation answered through the API,
//! the transcript, tasks, resource subscriptions and skills.

use serde_json::{Value, json};

use super::client::*;
use super::common::start_inspect;

#[tokio::test]
async fn the_page_answers_sampling_and_elicitation_and_exports_the_transcript() {
    let inspector = start_inspect(&[], START);
    let api = Api::of(&inspector);
    let mut seen = 0;
    for era in ["modern", "legacy"] {
        let id = api.connect_reference(era).await["id"].as_u64().unwrap();
        let last = api.get("asks").await["asks"].as_array().unwrap().len() as u64;
        assert_eq!(last, 0);
        let call = |name: &'static str, arguments: Value| {
            let api = Api::of(&inspector);
            tokio::spawn(async move {
                api.send(
                    reqwest::Method::POST,
                    &format!("connections/{id}/tools/call"),
                    Some(json!({"name": name, "arguments": arguments})),
                )
                .await
            })
        };
        // Sampling: the page replies as the model.
        let sampled = call("test_sampling", json!({"prompt": "Say hi"}));
        let ask = next_ask(&api, seen).await;
        assert_eq!(ask["kind"], "sampling", "{ask}");
        assert_eq!(ask["connection"], id);
        let n = ask["ask"].as_u64().unwrap();
        assert_eq!(api.get("asks").await["asks"][0]["ask"], n);
        api.reply_sampling(n, "hi from the page").await;
        let (_, r) = sampled.await.unwrap();
        assert_eq!(
            r["result"]["content"][0]["text"], "LLM response: hi from the page",
            "{era}"
        );
        // Elicitation: the form's answer, then a decline.
        let elicited = call("test_elicitation", json!({"message": "Who are you?"}));
        let ask = next_ask(&api, n).await;
        assert_eq!(ask["kind"], "elicitation");
        assert_eq!(ask["message"], "Who are you?");
        assert_eq!(
            ask["requestedSchema"]["required"],
            json!(["username", "email"])
        );
        let n = ask["ask"].as_u64().unwrap();
        api.expect(204, reqwest::Method::POST,
                &format!("asks/{n}"),
                Some(json!({"reply": {"action": "accept",
                                      "content": {"username": "ada", "email": "ada@example.com"}}}))).await;
        let text = elicited.await.unwrap().1["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(
            text.contains("action=accept") && text.contains("ada@example.com"),
            "{text}"
        );
        let rejected = call("test_sampling", json!({"prompt": "again"}));
        let n = next_ask(&api, n).await["ask"].as_u64().unwrap();
        seen = n;
        api.send(
            reqwest::Method::POST,
            &format!("asks/{n}"),
            Some(json!({"reject": "not now"})),
        )
        .await;
        // Legacy: the tool reports the refusal; 2026-07-28: the call fails with it.
        let (_, r) = rejected.await.unwrap();
        let shown = r.to_string();
        assert!(shown.contains("not now"), "{era}: {shown}");
        // Answering twice: the question is gone.
        api.expect(
            404,
            reqwest::Method::POST,
            &format!("asks/{n}"),
            Some(json!({"reject": "again"})),
        )
        .await;
        api.disconnect(id).await;
    }
    // The transcript: every event, the messages among them.
    let resp = reqwest::get(format!(
        "{}/api/transcript?token={}",
        inspector.base, inspector.token
    ))
    .await
    .unwrap();
    assert!(
        resp.headers()["content-disposition"]
            .to_str()
            .unwrap()
            .contains("attachment")
    );
    let t: Value = resp.json().await.unwrap();
    assert_eq!(t["format"], "tessera-inspect-transcript");
    let events = t["events"].as_array().unwrap();
    assert!(protocol_methods(events, "in").contains(&"sampling/createMessage".to_string()));
    assert!(events.iter().any(|e| e["type"] == "ask"));
}

#[tokio::test]
async fn a_tool_call_as_a_task_is_followed_to_its_end_or_cancelled() {
    let inspector = start_inspect(&[], START);
    let api = Api::of(&inspector);
    for era in ["legacy", "modern"] {
        let conn = api
            .post(
                "connections",
                json!({"command": env!("CARGO_BIN_EXE_tessera"), "args": ["serve", "--stdio"],
                       "era": era, "tasks": true}),
            )
            .await;
        assert_eq!(conn["tasksDeclared"], true);
        let id = conn["id"].as_u64().unwrap();
        let started = api
            .post(
                &format!("connections/{id}/tools/call"),
                json!({"name": "sleep", "arguments": {"ms": 200}, "task": true}),
            )
            .await;
        let task = started["task"]["taskId"].as_str().unwrap().to_owned();
        let events = events_until(&api, |ev| {
            ev.iter()
                .any(|e| e["type"] == "taskResult" && e["taskId"] == task.as_str())
        })
        .await;
        let end = events
            .iter()
            .find(|e| e["type"] == "taskResult" && e["taskId"] == task.as_str())
            .unwrap();
        assert_eq!(end["connection"], id);
        assert_eq!(
            end["result"]["content"][0]["text"], "slept 200 ms",
            "{era}: {end}"
        );
        assert!(
            events.iter().any(|e| e["type"] == "task"
                && e["taskId"] == task.as_str()
                && e["status"] == "completed"),
            "{era}"
        );
        // A long one, cancelled.
        let started = api
            .post(
                &format!("connections/{id}/tools/call"),
                json!({"name": "sleep", "arguments": {"ms": 60000}, "task": true}),
            )
            .await;
        let long = started["task"]["taskId"].as_str().unwrap().to_owned();
        let listed = api.get(&format!("connections/{id}/tasks")).await;
        assert!(
            listed["tasks"]
                .as_array()
                .unwrap()
                .iter()
                .any(|t| t["taskId"] == long.as_str()),
            "{listed}"
        );
        api.expect(
            204,
            reqwest::Method::POST,
            &format!("connections/{id}/tasks/{long}/cancel"),
            None,
        )
        .await;
        let events = events_until(&api, |ev| {
            ev.iter()
                .any(|e| e["type"] == "taskResult" && e["taskId"] == long.as_str())
        })
        .await;
        assert!(
            events.iter().any(|e| e["type"] == "task"
                && e["taskId"] == long.as_str()
                && e["status"] == "cancelled"),
            "{era}: {events:#?}"
        );
        api.expect(
            404,
            reqwest::Method::POST,
            &format!("connections/{id}/tasks/{long}/cancel"),
            None,
        )
        .await;
        // The server's own list: 2025-11-25 has tasks/list, the extension has none.
        let (s, v) = api
            .send(
                reqwest::Method::GET,
                &format!("connections/{id}/server-tasks"),
                None,
            )
            .await;
        if era == "legacy" {
            assert_eq!(s, 200, "{v}");
            assert!(
                v["tasks"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|t| t["taskId"] == task.as_str()),
                "{v}"
            );
        } else {
            assert_eq!(s, 409, "{v}");
        }
    }
}

#[tokio::test]
async fn resource_subscriptions_in_both_eras() {
    let inspector = start_inspect(&[], START);
    let api = Api::of(&inspector);
    for era in ["legacy", "modern"] {
        let id = api.connect_reference(era).await["id"].as_u64().unwrap();
        let uri = "test://watched-resource";
        api.expect(
            204,
            reqwest::Method::POST,
            &format!("connections/{id}/resources/subscribe"),
            Some(json!({"uri": uri})),
        )
        .await;
        let listed = api.get(&format!("connections/{id}/resources")).await;
        assert_eq!(listed["subscribed"], json!([uri]));
        api.post(
            &format!("connections/{id}/tools/call"),
            json!({"name": "test_trigger_resource_update", "arguments": {"uri": uri}}),
        )
        .await;
        events_until(&api, |ev| {
            ev.iter()
                .any(|e| e["type"] == "changed" && e["connection"] == id && e["uri"] == uri)
        })
        .await;
        api.expect(
            204,
            reqwest::Method::POST,
            &format!("connections/{id}/resources/unsubscribe"),
            Some(json!({"uri": uri})),
        )
        .await;
        let listed = api.get(&format!("connections/{id}/resources")).await;
        assert_eq!(listed["subscribed"], json!([]));
    }
}

#[tokio::test]
async fn skills_are_listed_and_each_file_verified() {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("inspect-skills-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("pdf/forms")).unwrap();
    std::fs::write(
        dir.join("pdf/SKILL.md"),
        "---\nname: pdf\ndescription: Fill PDFs\n---\nSee forms/FORMS.md\n",
    )
    .unwrap();
    std::fs::write(dir.join("pdf/forms/FORMS.md"), "field: name\n").unwrap();
    let inspector = start_inspect(&[], START);
    let api = Api::of(&inspector);
    let id = api
        .post(
            "connections",
            json!({"command": env!("CARGO_BIN_EXE_tessera"),
                   "args": ["serve", "--stdio", "--skills", dir.to_str().unwrap()]}),
        )
        .await["id"]
        .as_u64()
        .unwrap();
    let listed = api.get(&format!("connections/{id}/skills")).await;
    let skill = &listed["skills"][0];
    assert_eq!(skill["frontmatter"]["name"], "pdf", "{listed}");
    let uri = skill["uri"].as_str().unwrap().to_owned();
    let verdicts = api
        .post(
            &format!("connections/{id}/skills/verify"),
            json!({"uri": uri}),
        )
        .await;
    let files = verdicts["files"].as_array().unwrap();
    assert_eq!(files.len(), 2, "{verdicts}");
    assert!(files.iter().all(|f| f["verdict"] == "ok"), "{verdicts}");
    // A file changed after the manifest was made: its verdict says so.
    std::fs::write(dir.join("pdf/forms/FORMS.md"), "field: tampered\n").unwrap();
    let verdicts = api
        .post(
            &format!("connections/{id}/skills/verify"),
            json!({"uri": uri}),
        )
        .await;
    let forms = verdicts["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["uri"].as_str().unwrap().ends_with("FORMS.md"))
        .unwrap();
    assert_ne!(forms["verdict"], "ok", "{verdicts}");
    assert!(forms["detail"].is_string());
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_load_run_reports_as_it_goes_and_sums_up() {
    let inspector = start_inspect(&[], START);
    let api = Api::of(&inspector);
    let id = api.connect_reference("auto").await["id"].as_u64().unwrap();
    let run = api
        .post(
            &format!("connections/{id}/load"),
            json!({"name": "add", "arguments": {"a": 1, "b": 2}, "concurrency": 2, "seconds": 1.2}),
        )
        .await["run"]
        .as_u64()
        .unwrap();
    let events = events_until(&api, |ev| {
        ev.iter()
            .any(|e| e["type"] == "loadDone" && e["run"] == run)
    })
    .await;
    let ticks: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "load" && e["run"] == run)
        .collect();
    assert!(!ticks.is_empty(), "no progress reported");
    assert!(
        ticks[0]["reqPerSec"].as_f64().unwrap() > 0.0,
        "{}",
        ticks[0]
    );
    let done = events
        .iter()
        .find(|e| e["type"] == "loadDone" && e["run"] == run)
        .unwrap();
    let s = &done["summary"];
    assert!(s["requests"].as_u64().unwrap() > 0, "{done}");
    assert_eq!(s["requests"], s["ok"], "{done}");
    assert_eq!(s["tool"], "add");
    assert_eq!(s["concurrency"], 2);
    // Its calls went over a connection of their own: the journal holds
    // only the few messages of the inspector's connection.
    let calls = events
        .iter()
        .filter(|e| e["type"] == "protocol" && e["message"]["method"] == "tools/call")
        .count();
    assert_eq!(calls, 0);
    // Bounds, and stopping a run.
    api.expect(
        400,
        reqwest::Method::POST,
        &format!("connections/{id}/load"),
        Some(json!({"name": "add", "concurrency": 1000})),
    )
    .await;
    let run = api
        .post(
            &format!("connections/{id}/load"),
            json!({"name": "echo", "arguments": {"text": "x"}, "seconds": 30}),
        )
        .await["run"]
        .as_u64()
        .unwrap();
    api.expect(
        204,
        reqwest::Method::POST,
        &format!("load/{run}/stop"),
        None,
    )
    .await;
    events_until(&api, |ev| {
        ev.iter()
            .any(|e| e["type"] == "loadDone" && e["run"] == run && e["error"] == "stopped")
    })
    .await;
}
