//! [`Asks`]: what servers ask of the inspector's user — elicitation (a form
//! from `requestedSchema`, or consent to open a URL) and sampling (a model's
//! reply) — held until the page answers. Each question is recorded in the journal (`ask`), so the
//! page shows it; the page answers with `POST /api/asks/{id}`; the outcome
//! is recorded too (`answered`). A question nobody answers within
//! [`ASK_LIMIT`] is refused, and at most [`MAX_PENDING`] wait at once.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tessera::client::{ClientBuilder, FormRequest, UrlRequest};
use tessera::types::{
    CreateMessageRequestParams, CreateMessageResult, ElicitAction, ElicitResult, ErrorObject,
};
use tokio::sync::oneshot;

use super::journal::Journal;

/// The most questions waiting for the page at once.
pub const MAX_PENDING: usize = 32;
/// How long a question waits for the page's answer.
pub const ASK_LIMIT: Duration = Duration::from_secs(600);
/// The code of a refusal by the inspector's user (as the CLI's).
const REFUSED: i64 = -1;

/// The page's answer to a question.
#[derive(Debug)]
pub enum Answer {
    /// The result to send (an `ElicitResult`, a `CreateMessageResult`).
    Reply(Value),
    /// Refuse, with this message.
    Reject(String),
}

/// An `ask` event: a question for the page (the members of `body` with
/// the connection, the question's id and its kind).
#[derive(Serialize)]
struct AskEvent<'a, B> {
    connection: u64,
    ask: u64,
    kind: &'a str,
    #[serde(flatten)]
    body: B,
}

/// An `answered` event: how a question ended.
#[derive(Serialize)]
struct Answered {
    ask: u64,
    outcome: &'static str,
}

/// An elicitation form, as asked.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct FormAsked<'a, S> {
    message: &'a str,
    requested_schema: &'a S,
}

/// A URL elicitation, as asked.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct UrlAsked<'a> {
    message: &'a str,
    url: &'a str,
    host: Option<String>,
    elicitation_id: Option<&'a str>,
}

/// The page's answer to a URL elicitation.
#[derive(Deserialize)]
struct UrlAnswer {
    action: ElicitAction,
}

/// A sampling request, as asked.
#[derive(Serialize)]
struct SamplingAsked<'a> {
    params: &'a CreateMessageRequestParams,
}

/// The automatic reply to a sampling request, as sent.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct AutoReplied<'a> {
    role: &'static str,
    model: &'a str,
    stop_reason: &'static str,
    content: TextContent<'a>,
}

/// A text content block.
#[derive(Serialize)]
struct TextContent<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    text: &'a str,
}

/// An `auto-reply` event: a sampling request answered automatically.
#[derive(Serialize)]
struct AutoReplyEvent<'a> {
    connection: u64,
    kind: &'static str,
    params: &'a CreateMessageRequestParams,
    reply: &'a AutoReplied<'a>,
}

/// The questions waiting for the page. Cheap to clone.
#[derive(Clone)]
pub struct Asks {
    inner: Arc<Inner>,
}

struct Inner {
    journal: Journal,
    next: AtomicU64,
    pending: Mutex<BTreeMap<u64, (Value, oneshot::Sender<Answer>)>>,
    auto: Mutex<Option<AutoReply>>,
}

/// The most bytes of an automatic sampling reply's text or model name.
pub const MAX_AUTO_REPLY: usize = 16 * 1024;

/// The fixed reply the inspector gives every sampling request at once, when
/// the user chose that instead of being asked each time.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct AutoReply {
    /// The reply's text.
    pub text: String,
    /// The model it names.
    pub model: String,
}

/// Removes a question when its asker stops waiting (answered, timed out,
/// or the server's request was cancelled).
struct Waiting<'a> {
    asks: &'a Asks,
    id: u64,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        if self.asks.pending().remove(&self.id).is_some() {
            self.asks.inner.journal.record(
                "answered",
                Answered {
                    ask: self.id,
                    outcome: "withdrawn",
                },
            );
        }
    }
}

impl Asks {
    /// No questions yet.
    pub fn new(journal: Journal) -> Asks {
        Asks {
            inner: Arc::new(Inner {
                journal,
                next: AtomicU64::new(1),
                pending: Mutex::new(BTreeMap::new()),
                auto: Mutex::new(None),
            }),
        }
    }

    fn pending(
        &self,
    ) -> std::sync::MutexGuard<'_, BTreeMap<u64, (Value, oneshot::Sender<Answer>)>> {
        self.inner
            .pending
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn auto(&self) -> std::sync::MutexGuard<'_, Option<AutoReply>> {
        self.inner
            .auto
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The automatic sampling reply, if one is set.
    pub fn auto_reply(&self) -> Option<AutoReply> {
        self.auto().clone()
    }

    /// Sets (or, with `None`, clears) the reply every sampling request gets
    /// at once; refused when its text or model is over [`MAX_AUTO_REPLY`]
    /// bytes. Questions already waiting still wait for the user.
    pub fn set_auto_reply(&self, reply: Option<AutoReply>) -> Result<(), String> {
        if let Some(r) = &reply {
            if r.text.len() > MAX_AUTO_REPLY || r.model.len() > MAX_AUTO_REPLY {
                return Err(format!(
                    "an automatic reply's text and model are at most {MAX_AUTO_REPLY} bytes"
                ));
            }
        }
        *self.auto() = reply;
        Ok(())
    }

    /// The questions waiting, as recorded.
    pub fn list(&self) -> Vec<Value> {
        self.pending().values().map(|(v, _)| v.clone()).collect()
    }

    /// Answers question `id`; false if no such question waits.
    pub fn answer(&self, id: u64, answer: Answer) -> bool {
        let Some((_, tx)) = self.pending().remove(&id) else {
            return false;
        };
        let outcome = match &answer {
            Answer::Reply(_) => "replied",
            Answer::Reject(_) => "rejected",
        };
        self.inner
            .journal
            .record("answered", Answered { ask: id, outcome });
        tx.send(answer).is_ok()
    }

    /// Asks the page (`kind` and `body` are shown) and waits for its answer,
    /// decoded as `T`.
    async fn ask<T: DeserializeOwned>(
        &self,
        conn: u64,
        kind: &str,
        body: impl Serialize,
    ) -> Result<T, ErrorObject> {
        let id = self.inner.next.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        // Kept as written, for the page's list of questions.
        let event = serde_json::to_value(AskEvent {
            connection: conn,
            ask: id,
            kind,
            body,
        })
        .unwrap_or(Value::Null);
        {
            let mut pending = self.pending();
            if pending.len() >= MAX_PENDING {
                return Err(ErrorObject::new(
                    REFUSED,
                    format!("{MAX_PENDING} questions already wait for the inspector's user"),
                ));
            }
            pending.insert(id, (event.clone(), tx));
        }
        let _waiting = Waiting { asks: self, id };
        self.inner.journal.record("ask", event);
        match tokio::time::timeout(ASK_LIMIT, rx).await {
            Ok(Ok(Answer::Reply(v))) => serde_json::from_value(v).map_err(|e| {
                ErrorObject::new(REFUSED, format!("the inspector's answer is not valid: {e}"))
            }),
            Ok(Ok(Answer::Reject(why))) => Err(ErrorObject::new(REFUSED, why)),
            Ok(Err(_)) | Err(_) => Err(ErrorObject::new(
                REFUSED,
                format!("the inspector's user did not answer within {ASK_LIMIT:?}"),
            )),
        }
    }

    /// Installs the elicitation (form and URL mode) and sampling handlers of
    /// connection `conn` on `builder`: each question goes to the page.
    pub fn install(&self, builder: ClientBuilder, conn: u64) -> ClientBuilder {
        let asks = self.clone();
        let builder = builder.elicitation(move |form: FormRequest| {
            let asks = asks.clone();
            async move {
                asks.ask::<ElicitResult>(
                    conn,
                    "elicitation",
                    FormAsked {
                        message: &form.message,
                        requested_schema: &form.raw_schema,
                    },
                )
                .await
            }
        });
        let asks = self.clone();
        let builder = builder.url_elicitation(move |req: UrlRequest| {
            let asks = asks.clone();
            async move {
                let host = req.host().map(str::to_owned);
                let answer = asks
                    .ask::<Value>(
                        conn,
                        "url",
                        UrlAsked {
                            message: &req.message,
                            url: &req.url,
                            host,
                            elicitation_id: req.elicitation_id.as_deref(),
                        },
                    )
                    .await?;
                tessera::types::loose::view::<UrlAnswer>(&answer)
                    .map(|a| a.action)
                    .ok_or_else(|| {
                        ErrorObject::new(
                            REFUSED,
                            "the inspector's answer has no valid action (accept, decline or cancel)",
                        )
                    })
            }
        });
        let asks = self.clone();
        builder.sampling(move |params: CreateMessageRequestParams| {
            let asks = asks.clone();
            async move {
                if let Some(auto) = asks.auto_reply() {
                    let reply = AutoReplied {
                        role: "assistant",
                        model: &auto.model,
                        stop_reason: "endTurn",
                        content: TextContent {
                            kind: "text",
                            text: &auto.text,
                        },
                    };
                    asks.inner.journal.record(
                        "auto-reply",
                        AutoReplyEvent {
                            connection: conn,
                            kind: "sampling",
                            params: &params,
                            reply: &reply,
                        },
                    );
                    return serde_json::to_value(&reply)
                        .and_then(serde_json::from_value::<CreateMessageResult>)
                        .map_err(|e| {
                            ErrorObject::new(
                                REFUSED,
                                format!("the automatic reply is not valid: {e}"),
                            )
                        });
                }
                asks.ask::<CreateMessageResult>(conn, "sampling", SamplingAsked { params: &params })
                    .await
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn questions_and_the_automatic_reply_keep_their_shape() {
        let asked = AskEvent {
            connection: 1,
            ask: 2,
            kind: "url",
            body: UrlAsked {
                message: "m",
                url: "http://x",
                host: None,
                elicitation_id: None,
            },
        };
        assert_eq!(
            serde_json::to_value(asked).unwrap(),
            json!({"connection": 1, "ask": 2, "kind": "url", "message": "m", "url": "http://x",
                   "host": null, "elicitationId": null})
        );
        let reply = AutoReplied {
            role: "assistant",
            model: "m",
            stop_reason: "endTurn",
            content: TextContent {
                kind: "text",
                text: "hi",
            },
        };
        let v = serde_json::to_value(&reply).unwrap();
        assert_eq!(
            v,
            json!({"role": "assistant", "model": "m", "stopReason": "endTurn",
                   "content": {"type": "text", "text": "hi"}})
        );
        assert!(serde_json::from_value::<CreateMessageResult>(v).is_ok());
        let answer: Option<UrlAnswer> = tessera::types::loose::view(&json!({"action": "accept"}));
        assert_eq!(answer.map(|a| a.action), Some(ElicitAction::Accept));
    }
    use serde_json::json;

    #[tokio::test]
    async fn a_question_waits_for_its_answer_and_leaves_when_dropped() {
        let journal = Journal::new();
        let asks = Asks::new(journal.clone());
        let (_, _, mut live) = journal.follow();
        let a = asks.clone();
        let waiting =
            tokio::spawn(async move { a.ask::<Value>(1, "sampling", json!({"params": {}})).await });
        let event: Value = serde_json::from_str(&live.recv().await.unwrap().text).unwrap();
        assert_eq!(event["type"], "ask");
        let id = event["ask"].as_u64().unwrap();
        assert_eq!(asks.list().len(), 1);
        assert!(asks.answer(id, Answer::Reply(json!({"ok": true}))));
        assert_eq!(waiting.await.unwrap().unwrap(), json!({"ok": true}));
        assert!(!asks.answer(id, Answer::Reject("late".into())));

        // A rejection is an error with the page's message.
        let a = asks.clone();
        let waiting = tokio::spawn(async move { a.ask::<Value>(1, "sampling", json!({})).await });
        let _answered: Value = serde_json::from_str(&live.recv().await.unwrap().text).unwrap();
        let event: Value = serde_json::from_str(&live.recv().await.unwrap().text).unwrap();
        let id = event["ask"].as_u64().unwrap();
        asks.answer(id, Answer::Reject("no model here".into()));
        assert_eq!(waiting.await.unwrap().unwrap_err().message, "no model here");

        // A question whose asker gives up is withdrawn.
        let a = asks.clone();
        let waiting = tokio::spawn(async move { a.ask::<Value>(1, "sampling", json!({})).await });
        let _answered = live.recv().await.unwrap();
        let _asked = live.recv().await.unwrap();
        waiting.abort();
        let _ = waiting.await;
        assert!(asks.list().is_empty());
        let event: Value = serde_json::from_str(&live.recv().await.unwrap().text).unwrap();
        assert_eq!(event["outcome"], "withdrawn");
    }
}
