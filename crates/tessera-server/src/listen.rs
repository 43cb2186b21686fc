//! `subscriptions/listen` (2026-07-28): a long-lived request whose response
//! stream carries the change notifications the client opted in to.

use std::collections::BTreeSet;
use tessera_types::methods;

use serde_json::{Value, json};
use tessera_runtime::{BoxFuture, HandlerResult, Request};
use tessera_types::{Era, ErrorObject, JsonObject};

use crate::hub::{Filter, tagged};
use crate::server::{Server, ready};

impl<S: Send + Sync + 'static> Server<S> {
    /// Serves `subscriptions/listen`: acknowledges with the granted filter,
    /// then forwards matching notifications, each tagged with the
    /// subscription id, until the client cancels.
    pub(crate) fn listen(&self, r: Request) -> BoxFuture<'static, HandlerResult> {
        if r.context.era != Era::Modern {
            return ready(Err(ErrorObject::method_not_found(
                methods::SUBSCRIPTIONS_LISTEN,
            )));
        }
        let requested = match r.params.as_ref().and_then(|p| p.get("notifications")) {
            Some(Value::Object(f)) => f.clone(),
            Some(_) => {
                return ready(Err(ErrorObject::invalid_params(
                    "Invalid params: notifications must be an object",
                )));
            }
            None => {
                return ready(Err(ErrorObject::invalid_params(
                    "Invalid params: subscriptions/listen needs a notifications filter",
                )));
            }
        };
        let (filter, mut granted) = match self.grant(&requested) {
            Ok(x) => x,
            Err(e) => return ready(Err(e)),
        };
        let task_ids = match self.grant_tasks(&r, &requested) {
            Ok(ids) => ids,
            Err(e) => return ready(Err(e)),
        };
        if !task_ids.is_empty() {
            granted.insert("taskIds".into(), json!(task_ids.iter().collect::<Vec<_>>()));
        }
        let server = self.clone();
        let owner = crate::task::hub::owner_of(&r);
        Box::pin(async move {
            let mut changes = server.tasks().watch();
            let mut ack = JsonObject::new();
            ack.insert("notifications".into(), Value::Object(granted));
            let id = r.id.clone();
            let key = server
                .hub()
                .add_listener(r.peer.clone(), r.id.clone(), filter, |peer| {
                    let _ = peer.notify(
                        methods::NOTIFICATIONS_SUBSCRIPTIONS_ACKNOWLEDGED,
                        Some(tagged(&id, ack)),
                        Some(id.clone()),
                    );
                });
            // Removed when this future ends or is dropped at any await (the
            // engine dropped it: the client closed the stream).
            let registration = Registration {
                server: server.clone(),
                key,
            };
            // Task status notifications (Tasks extension) for the granted
            // ids the listener owns, each the task as tasks/get shows it.
            loop {
                tokio::select! {
                    _ = r.cancel.cancelled() => break,
                    change = changes.recv(), if !task_ids.is_empty() => match change {
                        Ok(t) if task_ids.contains(&t.task_id) && t.owner == owner => {
                            let _ = r.peer.notify(
                                methods::NOTIFICATIONS_TASKS,
                                Some(tagged(&r.id, crate::task::wire::notification(&t))),
                                Some(r.id.clone()),
                            );
                        }
                        Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                        Err(tokio::sync::broadcast::error::RecvError::Closed) => {
                            r.cancel.cancelled().await;
                            break;
                        }
                    },
                }
            }
            drop(registration);
            // Only a server-initiated end is answered; a cancelled request gets
            // no response (the engine drops it).
            Ok(tagged(&r.id, JsonObject::new()))
        })
    }

    /// The task ids to send `notifications/tasks` for: only to a client
    /// that declared the Tasks extension on this request (`-32021` otherwise).
    fn grant_tasks(
        &self,
        r: &Request,
        requested: &JsonObject,
    ) -> Result<BTreeSet<String>, ErrorObject> {
        let ids = match requested.get("taskIds") {
            None | Some(Value::Null) => return Ok(BTreeSet::new()),
            Some(Value::Array(ids)) => ids,
            Some(_) => {
                return Err(ErrorObject::invalid_params(
                    "Invalid params: notifications.taskIds must be an array",
                ));
            }
        };
        if !crate::task::call::declares_extension(r) {
            return Err(crate::task::call::extension_required(
                "notifications.taskIds",
            ));
        }
        ids.iter()
            .map(|v| {
                v.as_str().map(str::to_owned).ok_or_else(|| {
                    ErrorObject::invalid_params(
                        "Invalid params: notifications.taskIds must be strings",
                    )
                })
            })
            .collect()
    }

    /// The part of the filter this server can honour, and its JSON form.
    fn grant(&self, requested: &JsonObject) -> Result<(Filter, JsonObject), ErrorObject> {
        let caps = self.capabilities();
        let flag = |key: &str| -> Result<bool, ErrorObject> {
            match requested.get(key) {
                None => Ok(false),
                Some(Value::Bool(b)) => Ok(*b),
                Some(_) => Err(ErrorObject::invalid_params(format!(
                    "Invalid params: notifications.{key} must be a boolean"
                ))),
            }
        };
        let mut filter = Filter {
            tools: flag("toolsListChanged")? && caps.tools.is_some(),
            prompts: flag("promptsListChanged")? && caps.prompts.is_some(),
            resources: flag("resourcesListChanged")? && caps.resources.is_some(),
            resource_uris: BTreeSet::new(),
        };
        match requested.get("resourceSubscriptions") {
            None => {}
            Some(Value::Array(uris)) => {
                for u in uris {
                    let Some(u) = u.as_str() else {
                        return Err(ErrorObject::invalid_params(
                            "Invalid params: notifications.resourceSubscriptions must be strings",
                        ));
                    };
                    if caps.resources.is_some() {
                        filter.resource_uris.insert(u.to_owned());
                    }
                }
            }
            Some(_) => {
                return Err(ErrorObject::invalid_params(
                    "Invalid params: notifications.resourceSubscriptions must be an array",
                ));
            }
        }
        let mut granted = JsonObject::new();
        if filter.tools {
            granted.insert("toolsListChanged".into(), json!(true));
        }
        if filter.prompts {
            granted.insert("promptsListChanged".into(), json!(true));
        }
        if filter.resources {
            granted.insert("resourcesListChanged".into(), json!(true));
        }
        if !filter.resource_uris.is_empty() {
            granted.insert(
                "resourceSubscriptions".into(),
                json!(filter.resource_uris.iter().collect::<Vec<_>>()),
            );
        }
        Ok((filter, granted))
    }
}

/// A `subscriptions/listen` registration in the hub, removed when dropped.
///
/// The handler's future can be dropped at any await without running to its
/// end: a per-request engine (2026-07-28 over HTTP) drops it when the client
/// closes the stream. Without this guard the listener, its peer and the
/// engine's channel would stay registered for the life of the server.
struct Registration<S: Send + Sync + 'static> {
    server: Server<S>,
    key: u64,
}

impl<S: Send + Sync + 'static> Drop for Registration<S> {
    fn drop(&mut self) {
        self.server.hub().remove_listener(self.key);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;
    use tessera_runtime::{Connection, Extensions};
    use tessera_types::{JsonRpcMessage, RequestId};

    use crate::Server;

    /// A 2026-07-28 `subscriptions/listen` request.
    fn listen(id: i64) -> JsonRpcMessage {
        let params = json!({
            "notifications": {"toolsListChanged": true},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "0"}
            }
        });
        let serde_json::Value::Object(params) = params else {
            unreachable!()
        };
        JsonRpcMessage::request(RequestId::Number(id), "subscriptions/listen", Some(params))
    }

    /// The HTTP server runs each 2026-07-28 request on its own engine and
    /// drops the engine when the client closes the stream: the listener must
    /// go with it (it used to stay registered forever, about 5 KB each).
    #[tokio::test]
    async fn a_dropped_listen_engine_leaves_no_listener() {
        let server: Server = Server::builder()
            .name_version("listen-tests", "1.0")
            .build()
            .unwrap();
        for id in 0..3 {
            let mut engine =
                Connection::new(server.shared_engine_config(), Arc::new(server.clone()));
            engine.handle_message(listen(id), Extensions::new());
            loop {
                let t = engine.next().await.expect("the engine acknowledges");
                let text = String::from_utf8(t.message.to_bytes()).unwrap_or_default();
                if text.contains("notifications/subscriptions/acknowledged") {
                    break;
                }
            }
            assert_eq!(server.hub().counts().1, 1, "the listener is registered");
            drop(engine);
            assert_eq!(
                server.hub().counts().1,
                0,
                "the listener went with its engine"
            );
        }
    }
}
