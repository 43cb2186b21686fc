//! The client's side of a connection as a [`Service`]: answers the server's
//! legacy requests (roots, sampling, elicitation) and takes in notifications
//! (cache invalidation, URL elicitation completions, subscription streams,
//! typed events).

use std::future::Future;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Weak};

use futures::FutureExt;
use futures::future::Either;

use tessera_runtime::Reply;
use tessera_runtime::middleware::{self, BoxError, McpService, MiddlewareStack};
use tessera_runtime::{BoxFuture, HandlerResult, Message, Notification, Request, Service};
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
    /// The MCP-level middleware over the answers to legacy server requests and over
    /// 2026-07-28 input requests (`None` without layers), built once so
    /// what layers keep (a limit's slots) is shared.
    pub stacks: Option<Stacks>,
    /// The stack as configured: its observer of what connections send.
    pub middleware: MiddlewareStack,
}

/// The client's middleware, built over its two ways of answering.
#[derive(Clone)]
pub(crate) struct Stacks {
    /// Over the requests a legacy server sends, and the notifications any
    /// server sends.
    pub legacy: McpService,
    /// Over the input requests of a 2026-07-28 result.
    pub input: McpService,
}

impl std::fmt::Debug for Stacks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Stacks")
    }
}

/// The endpoint answering each request with `answer` over `inputs`, and
/// taking each notification into the client `shared` (when it is still there).
fn answering(
    inputs: &Arc<Inputs>,
    shared: &Weak<Shared>,
    answer: fn(Arc<Inputs>, Request) -> BoxFuture<'static, HandlerResult>,
) -> McpService {
    let inputs = inputs.clone();
    let shared = shared.clone();
    McpService::new(tower::service_fn(move |message: Message| {
        let answered = match message {
            Message::Request(request) => answer(inputs.clone(), request),
            Message::Notification(n) => {
                if let Some(shared) = shared.upgrade() {
                    shared.take_notification(n);
                }
                Box::pin(std::future::ready(Ok(JsonObject::new())))
            }
        };
        async move { answered.await.map(Reply::Object).map_err(BoxError::from) }
    }))
}

/// The connection generation a notification arrived on, attached for the
/// client's own endpoint below its middleware.
#[derive(Debug, Clone, Copy)]
struct Generation(u64);

impl Stacks {
    /// `middleware` over `inputs`' answers and the notifications the client
    /// `shared` takes; `None` without layers.
    pub fn new(
        middleware: &MiddlewareStack,
        inputs: &Arc<Inputs>,
        shared: &Weak<Shared>,
    ) -> Option<Stacks> {
        if middleware.is_empty() {
            return None;
        }
        // Undeclared requests are refused inside `answer`, before any handler runs.
        let legacy = answering(inputs, shared, |inputs, request| {
            let params = request.params.map(tessera_types::Params::into_object);
            Box::pin(inputs.answer(request.method, params, Some(request.peer)))
        });
        // Notifications never reach this one: they all go through `legacy`.
        let input = answering(inputs, &Weak::new(), |inputs, request| {
            let params = request.params.map(tessera_types::Params::into_object);
            Box::pin(inputs.answer_now(request.method, params))
        });
        Some(Stacks {
            legacy: middleware.wrap(legacy),
            input: middleware.wrap(input),
        })
    }
}

impl Shared {
    /// Takes in a notification (below the middleware, if any): unless the
    /// connection core already acted on it, it updates the cache, completes
    /// elicitations, feeds subscriptions and becomes a [`ClientEvent`].
    fn take_notification(&self, n: Notification) {
        if n.handled_by_core {
            return;
        }
        let Some(&Generation(generation)) = n.extension::<Generation>() else {
            return;
        };
        let (method, params) = (n.method.as_str(), n.params);
        self.inputs.extensions.notify(method, params.as_ref());
        if let Some(c) = &self.cache {
            c.on_notification(method, params.as_ref());
        }
        let event = ClientEvent::from_notification(method, params);
        if let ClientEvent::ElicitationComplete(p) = &event {
            // Only completions of elicitations this client is waiting on.
            if !self.inputs.tracker.complete(&p.elicitation_id) {
                return;
            }
        }
        if let Some(sub) = event.subscription_id() {
            self.subscriptions.route(generation, sub, event.clone());
        }
        let _ = self.events.send(event);
    }
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
}

impl Service for ClientService {
    fn methods(&self) -> Vec<String> {
        self.shared.inputs.methods()
    }

    fn outgoing_observer(&self) -> Option<Arc<dyn tessera_runtime::outgoing::OutgoingObserver>> {
        self.shared.middleware.outgoing().cloned()
    }

    fn handle_request(
        self: Arc<Self>,
        request: Request,
    ) -> impl Future<Output = HandlerResult> + Send + 'static {
        if let Some(stacks) = &self.shared.stacks {
            let answer = middleware::serve(&stacks.legacy, request);
            return Either::Left(answer.map(middleware::reply_object));
        }
        let inputs = self.shared.inputs.clone();
        Either::Right(async move {
            // Undeclared requests are refused inside `answer`, before any handler runs.
            inputs
                .answer(
                    request.method,
                    request.params.map(tessera_types::Params::into_object),
                    Some(request.peer),
                )
                .await
        })
    }

    fn handle_notification(
        self: Arc<Self>,
        mut n: Notification,
    ) -> impl Future<Output = ()> + Send + 'static {
        n.extensions.insert(Generation(self.generation));
        self.shared.take_notification(n);
        std::future::ready(())
    }

    fn notify(self: Arc<Self>, mut n: Notification) -> impl Future<Output = ()> + Send + 'static {
        n.extensions.insert(Generation(self.generation));
        if let Some(stacks) = &self.shared.stacks {
            return Either::Left(middleware::notify(&stacks.legacy, n));
        }
        self.shared.take_notification(n);
        Either::Right(std::future::ready(()))
    }
}
