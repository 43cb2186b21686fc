//! The client's side of a connection as a [`Service`]: answers the server's
//! legacy requests (roots, sampling, elicitation) and takes in notifications
//! (cache invalidation, URL elicitation completions, subscription streams,
//! typed events).

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use tessera_runtime::middleware::MiddlewareStack;
use tessera_runtime::{BoxFuture, HandlerResult, Notification, Request, Service};
use tessera_types::JsonObject;
use tokio::sync::{broadcast, watch};

use crate::cache::ResponseCache;
use crate::events::ClientEvent;
use crate::input::Inputs;
use crate::listen::Subscriptions;

/// What every connection of a client shares.
#[derive(Debug)]
pub(crate) struct Shared {
    pub inputs: Arc<Inputs>,
    pub events: broadcast::Sender<ClientEvent>,
    pub cache: Option<ResponseCache>,
    pub subscriptions: Arc<Subscriptions>,
    /// The connection generation; bumped on every (re)connection, and
    /// touched when the client closes.
    pub generation: watch::Sender<u64>,
    pub closed: AtomicBool,
    /// The MCP-level middleware the server's requests go through.
    pub middleware: MiddlewareStack,
}

/// The [`Service`] of one connection.
#[derive(Debug, Clone)]
pub(crate) struct ClientService {
    shared: Arc<Shared>,
    generation: u64,
}

impl ClientService {
    pub fn new(shared: Arc<Shared>, generation: u64) -> Self {
        ClientService { shared, generation }
    }

    fn on_notification(&self, method: &str, params: Option<JsonObject>) {
        let s = &self.shared;
        s.inputs.extensions.notify(method, params.as_ref());
        if let Some(c) = &s.cache {
            c.on_notification(method, params.as_ref());
        }
        let event = ClientEvent::from_notification(method, params);
        if let ClientEvent::ElicitationComplete(p) = &event {
            // Only completions of elicitations this client is waiting on.
            if !s.inputs.tracker.complete(&p.elicitation_id) {
                return;
            }
        }
        if let Some(sub) = event.subscription_id() {
            s.subscriptions.route(self.generation, sub, event.clone());
        }
        let _ = s.events.send(event);
    }
}

impl Service for ClientService {
    fn methods(&self) -> Vec<String> {
        self.shared.inputs.methods()
    }

    fn handle_request(&self, request: Request) -> BoxFuture<'static, HandlerResult> {
        let inputs = self.shared.inputs.clone();
        let answer = move |request: Request| -> BoxFuture<'static, HandlerResult> {
            let inputs = inputs.clone();
            Box::pin(async move {
                // Undeclared requests are refused inside `answer`, before any handler runs.
                inputs
                    .answer(
                        request.method,
                        request.params.map(tessera_types::Params::into_object),
                        Some(request.peer),
                    )
                    .await
            })
        };
        if self.shared.middleware.is_empty() {
            return answer(request);
        }
        self.shared.middleware.run(request, answer)
    }

    fn handle_notification(&self, n: Notification) -> BoxFuture<'static, ()> {
        self.on_notification(&n.method, n.params);
        Box::pin(async {})
    }
}
