//! `subscriptions/listen` (2026-07-28): a long-lived request whose response
//! stream carries the change notifications the client opted in to.

use std::collections::BTreeSet;
use tessera_types::methods;

use tessera_runtime::{BoxFuture, ReplyResult, Request};
use tessera_types::{
    Era, ErrorObject, SubscriptionFilter, SubscriptionsAcknowledgedNotificationParams,
    SubscriptionsListenRequestParams, SubscriptionsListenResult,
};

use crate::hub::{Filter, subscription_meta};
use crate::server::{Server, done, typed_reply};

impl<S: Send + Sync + 'static> Server<S> {
    /// Serves `subscriptions/listen`: acknowledges with the granted filter,
    /// then forwards matching notifications, each tagged with the
    /// subscription id, until the client cancels.
    pub(crate) fn listen(&self, r: Request) -> BoxFuture<'static, ReplyResult> {
        if r.context.era != Era::Modern {
            return done(Err(ErrorObject::method_not_found(
                methods::SUBSCRIPTIONS_LISTEN,
            )));
        }
        let requested = match tessera_types::decode_params::<SubscriptionsListenRequestParams>(
            r.params.as_ref(),
        ) {
            Ok(p) => p.notifications,
            Err(e) => {
                return done(Err(ErrorObject::invalid_params(format!(
                    "Invalid params for subscriptions/listen: {e}"
                ))));
            }
        };
        let (filter, mut granted) = self.grant(&requested);
        let task_ids = match self.grant_tasks(&r, &requested) {
            Ok(ids) => ids,
            Err(e) => return done(Err(e)),
        };
        if !task_ids.is_empty() {
            granted.task_ids = Some(task_ids.iter().cloned().collect());
        }
        let server = self.clone();
        let owner = crate::task::hub::owner_of(&r);
        Box::pin(async move {
            let mut changes = server.tasks().watch();
            let ack = SubscriptionsAcknowledgedNotificationParams {
                meta: Some(subscription_meta(&r.id)),
                notifications: granted,
            };
            // Strings, booleans and an id: always encoded.
            let ack = tessera_types::encode_params(&ack).unwrap_or_default();
            let id = r.id.clone();
            let key = server
                .hub()
                .add_listener(r.peer.clone(), r.id.clone(), filter, |peer| {
                    let _ = peer.notify(
                        methods::NOTIFICATIONS_SUBSCRIPTIONS_ACKNOWLEDGED,
                        Some(ack),
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
                            let status =
                                crate::task::wire::notification(&t, subscription_meta(&r.id));
                            let _ = r.peer.notify(
                                methods::NOTIFICATIONS_TASKS,
                                tessera_types::encode_params(&status).ok(),
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
            Ok(typed_reply(
                &SubscriptionsListenResult::new(&r.id),
                r.context.result_shape.as_ref(),
            ))
        })
    }

    /// The task ids to send `notifications/tasks` for: only to a client
    /// that declared the Tasks extension on this request (`-32021` otherwise).
    fn grant_tasks(
        &self,
        r: &Request,
        requested: &SubscriptionFilter,
    ) -> Result<BTreeSet<String>, ErrorObject> {
        let Some(ids) = &requested.task_ids else {
            return Ok(BTreeSet::new());
        };
        if !crate::task::call::declares_extension(r) {
            return Err(crate::task::call::extension_required(
                "notifications.taskIds",
            ));
        }
        Ok(ids.iter().cloned().collect())
    }

    /// The part of the filter this server can honour: list changes of the
    /// features it offers, resource URIs when it offers resources.
    fn grant(&self, requested: &SubscriptionFilter) -> (Filter, SubscriptionFilter) {
        let caps = self.capabilities();
        let on = |flag: Option<bool>, offered: bool| flag == Some(true) && offered;
        let filter = Filter {
            tools: on(requested.tools_list_changed, caps.tools.is_some()),
            prompts: on(requested.prompts_list_changed, caps.prompts.is_some()),
            resources: on(requested.resources_list_changed, caps.resources.is_some()),
            resource_uris: match (&requested.resource_subscriptions, &caps.resources) {
                (Some(uris), Some(_)) => uris.iter().cloned().collect(),
                _ => BTreeSet::new(),
            },
        };
        let granted = SubscriptionFilter {
            tools_list_changed: filter.tools.then_some(true),
            prompts_list_changed: filter.prompts.then_some(true),
            resources_list_changed: filter.resources.then_some(true),
            resource_subscriptions: (!filter.resource_uris.is_empty())
                .then(|| filter.resource_uris.iter().cloned().collect()),
            task_ids: None,
        };
        (filter, granted)
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
