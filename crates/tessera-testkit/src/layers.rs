//! Plain `tower` layers over the MCP middleware stack, for tests that watch
//! or refuse messages: [`Tap`] reports each message's method on a channel,
//! [`RefuseNotification`] drops every notification of one method.

use std::task::{Context, Poll};

use tessera_runtime::middleware::BoxError;
use tessera_runtime::{BoxFuture, Message, Reply};
use tessera_types::ErrorObject;
use tokio::sync::mpsc;

/// What a [`Tap`] saw: a request's or a notification's method.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seen {
    /// A request of this method.
    Request(String),
    /// A notification of this method.
    Notification(String),
}

impl Seen {
    fn of(message: &Message) -> Seen {
        let method = message.method().to_owned();
        if message.is_notification() {
            Seen::Notification(method)
        } else {
            Seen::Request(method)
        }
    }
}

/// Reports every message it passes on, as it arrives or once the layers
/// below it are done with it.
#[derive(Clone)]
pub struct Tap {
    seen: mpsc::UnboundedSender<Seen>,
    once_done: bool,
}

impl Tap {
    /// Reports each message as it arrives, before the layers below see it.
    pub fn on_arrival(seen: mpsc::UnboundedSender<Seen>) -> Tap {
        Tap {
            seen,
            once_done: false,
        }
    }

    /// Reports each message once the layers below it (and the handler) are
    /// done with it, whatever they answered: a test waiting on the report
    /// knows everything below has recorded the message.
    pub fn once_done(seen: mpsc::UnboundedSender<Seen>) -> Tap {
        Tap {
            seen,
            once_done: true,
        }
    }
}

impl<S> tower::Layer<S> for Tap {
    type Service = TapService<S>;

    fn layer(&self, inner: S) -> TapService<S> {
        TapService {
            tap: self.clone(),
            inner,
        }
    }
}

/// The service of a [`Tap`].
#[derive(Clone)]
pub struct TapService<S> {
    tap: Tap,
    inner: S,
}

impl<S> tower::Service<Message> for TapService<S>
where
    S: tower::Service<Message, Response = Reply, Error = BoxError>,
    S::Future: Send + 'static,
{
    type Response = Reply;
    type Error = BoxError;
    type Future = BoxFuture<'static, Result<Reply, BoxError>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, message: Message) -> Self::Future {
        let seen = Seen::of(&message);
        if !self.tap.once_done {
            let _ = self.tap.seen.send(seen);
            return Box::pin(self.inner.call(message));
        }
        let report = self.tap.seen.clone();
        let answer = self.inner.call(message);
        Box::pin(async move {
            let result = answer.await;
            let _ = report.send(seen);
            result
        })
    }
}

/// Refuses every notification of one method with `-32600`, which the core
/// drops without an answer; everything else passes.
#[derive(Clone)]
pub struct RefuseNotification(pub &'static str);

impl<S> tower::Layer<S> for RefuseNotification {
    type Service = RefuseService<S>;

    fn layer(&self, inner: S) -> RefuseService<S> {
        RefuseService {
            method: self.0,
            inner,
        }
    }
}

/// The service of a [`RefuseNotification`].
#[derive(Clone)]
pub struct RefuseService<S> {
    method: &'static str,
    inner: S,
}

impl<S> tower::Service<Message> for RefuseService<S>
where
    S: tower::Service<Message, Response = Reply, Error = BoxError>,
    S::Future: Send + 'static,
{
    type Response = Reply;
    type Error = BoxError;
    type Future = BoxFuture<'static, Result<Reply, BoxError>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, message: Message) -> Self::Future {
        if message.is_notification() && message.method() == self.method {
            let refused = ErrorObject::invalid_request("not this notification");
            return Box::pin(std::future::ready(Err(BoxError::from(refused))));
        }
        Box::pin(self.inner.call(message))
    }
}
