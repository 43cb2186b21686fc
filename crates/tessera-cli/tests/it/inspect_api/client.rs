//! A client of one inspector's API, and reading its event stream.

use std::time::Duration;

use serde_json::{Value, json};

use super::common::Inspector;

pub use super::fixture::START;

/// A client of one inspector's API.
pub struct Api {
    pub http: reqwest::Client,
    pub base: String,
    pub token: String,
}

impl Api {
    pub fn of(i: &Inspector) -> Api {
        Api {
            http: reqwest::Client::new(),
            base: i.base.clone(),
            token: i.token.clone(),
        }
    }

    pub async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> (u16, Value) {
        let mut r = self
            .http
            .request(method, format!("{}/api/{path}", self.base))
            .bearer_auth(&self.token);
        if let Some(b) = body {
            r = r.json(&b);
        }
        let resp = r.send().await.expect("the inspector answers");
        let status = resp.status().as_u16();
        let text = resp.text().await.unwrap();
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    /// Sends a request that must be answered `status`; returns the body.
    pub async fn expect(
        &self,
        status: u16,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> Value {
        let (s, v) = self.send(method.clone(), path, body).await;
        assert_eq!(s, status, "{method} {path}: {v}");
        v
    }

    pub async fn get(&self, path: &str) -> Value {
        self.expect(200, reqwest::Method::GET, path, None).await
    }

    pub async fn post(&self, path: &str, body: Value) -> Value {
        self.expect(200, reqwest::Method::POST, path, Some(body))
            .await
    }

    /// Closes connection `id`.
    pub async fn disconnect(&self, id: u64) {
        let path = format!("connections/{id}");
        self.expect(204, reqwest::Method::DELETE, &path, None).await;
    }

    /// Answers sampling question `ask` as the model, with `text`.
    pub async fn reply_sampling(&self, ask: u64, text: &str) {
        let reply = json!({"reply": {"role": "assistant", "model": "m", "stopReason": "endTurn",
                                     "content": {"type": "text", "text": text}}});
        self.expect(
            204,
            reqwest::Method::POST,
            &format!("asks/{ask}"),
            Some(reply),
        )
        .await;
    }

    /// Connects to `tessera serve --stdio` in `era`.
    pub async fn connect_reference(&self, era: &str) -> Value {
        self.post(
            "connections",
            json!({"command": env!("CARGO_BIN_EXE_tessera"), "args": ["serve", "--stdio"], "era": era}),
        )
        .await
    }
}

/// Asserts that the API's error answer `v` says `text` in its message.
pub fn says(v: &Value, text: &str) {
    let message = v["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains(text), "{text:?} not in {v}");
}

/// The journal's event stream, read until `done` holds for the events so
/// far (or the deadline passes, which fails the test).
pub async fn events_until(api: &Api, done: impl Fn(&[Value]) -> bool) -> Vec<Value> {
    let mut resp = api
        .http
        .get(format!("{}/api/events?token={}", api.base, api.token))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    // Bytes: a piece of the stream may end inside a character.
    let mut buf: Vec<u8> = Vec::new();
    let mut events = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let chunk = tokio::time::timeout_at(deadline, resp.chunk())
            .await
            .unwrap_or_else(|_| panic!("the events never matched; got {events:#?}"))
            .unwrap()
            .expect("the stream stays open");
        buf.extend_from_slice(&chunk);
        while let Some(end) = buf.windows(2).position(|w| w == b"\n\n") {
            let block = String::from_utf8(buf.drain(..end + 2).collect()).unwrap();
            let is_message = !block.lines().any(|l| l.starts_with("event:"));
            for line in block.lines() {
                if let Some(d) = line.strip_prefix("data:") {
                    if is_message {
                        events.push(serde_json::from_str(d.trim()).unwrap());
                    }
                }
            }
        }
        if done(&events) {
            return events;
        }
    }
}

pub fn protocol_methods(events: &[Value], dir: &str) -> Vec<String> {
    events
        .iter()
        .filter(|e| e["type"] == "protocol" && e["dir"] == dir)
        .filter_map(|e| e["message"]["method"].as_str().map(str::to_owned))
        .collect()
}

/// Waits for the next question a server asks, and returns it.
pub async fn next_ask(api: &Api, after: u64) -> Value {
    let events = events_until(api, |ev| {
        ev.iter()
            .any(|e| e["type"] == "ask" && e["ask"].as_u64() > Some(after))
    })
    .await;
    events
        .into_iter()
        .find(|e| e["type"] == "ask" && e["ask"].as_u64() > Some(after))
        .unwrap()
}
