//! The remaining requests and session controls: completion, legacy resource
//! subscriptions and log level, ping, discovery, roots, URL elicitation.

use std::time::Duration;
use tessera_types::methods;

use tessera_proto::RequestOptions;
use tessera_types::{
    CompleteRequestParams, CompleteResult, DiscoverResult, ElicitAction, ElicitRequestURLParams,
    Era, LoggingLevel, ResourceRequestParams, Root, SetLevelRequestParams, decode_object_params,
};

use crate::client::{Client, decode};
use crate::error::ClientError;
use crate::handler::UrlRequest;
use crate::input::to_object;
use crate::options::CallOptions;

/// The user's answer to an elicitation, as far as its action.
#[derive(Debug, serde::Deserialize)]
struct Answered {
    action: Option<ElicitAction>,
}

impl Client {
    /// Asks for completions of a prompt argument or resource template variable.
    pub async fn complete(
        &self,
        params: CompleteRequestParams,
    ) -> Result<CompleteResult, ClientError> {
        let raw = self
            .send(
                methods::COMPLETION_COMPLETE,
                Some(to_object(&params)),
                &CallOptions::default(),
            )
            .await?;
        decode(methods::COMPLETION_COMPLETE, raw)
    }

    /// Subscribes to updates of a resource (legacy `resources/subscribe`;
    /// in 2026-07-28 use [`Client::listen`]). Updates arrive as
    /// [`ClientEvent::ResourceUpdated`](crate::ClientEvent::ResourceUpdated)
    /// and invalidate the cached reads of that resource. The subscription is
    /// restored after a reconnection.
    pub async fn subscribe(&self, uri: &str) -> Result<(), ClientError> {
        self.require_legacy(methods::RESOURCES_SUBSCRIBE, "listen()")?;
        let subscribable = self
            .connected()
            .server_capabilities
            .resources
            .as_ref()
            .and_then(|r| r.subscribe)
            == Some(true);
        if !subscribable {
            return Err(ClientError::Unsupported("resource subscriptions".into()));
        }
        let p = to_object(&ResourceRequestParams::new(uri));
        self.send(
            methods::RESOURCES_SUBSCRIBE,
            Some(p),
            &CallOptions::default(),
        )
        .await?;
        self.inner.remembered().subscriptions.insert(uri.to_owned());
        Ok(())
    }

    /// Ends a legacy resource subscription (`resources/unsubscribe`).
    pub async fn unsubscribe(&self, uri: &str) -> Result<(), ClientError> {
        self.require_legacy(methods::RESOURCES_UNSUBSCRIBE, "dropping the ListenStream")?;
        self.inner.remembered().subscriptions.remove(uri);
        let p = to_object(&ResourceRequestParams::new(uri));
        self.send(
            methods::RESOURCES_UNSUBSCRIBE,
            Some(p),
            &CallOptions::default(),
        )
        .await?;
        Ok(())
    }

    fn require_legacy(&self, method: &str, instead: &str) -> Result<(), ClientError> {
        if self.era() == Era::Modern {
            return Err(ClientError::Unsupported(format!(
                "{method} in protocol version {} (use {instead})",
                self.protocol_version()
            )));
        }
        Ok(())
    }

    /// Sets the lowest log level the server sends. Legacy: `logging/setLevel`
    /// for the session (restored after a reconnection). 2026-07-28: there is
    /// no session, so the level becomes the `_meta` log level of every
    /// following request ([`CallOptions::log_level`] overrides it per request).
    pub async fn set_log_level(&self, level: LoggingLevel) -> Result<(), ClientError> {
        self.inner.remembered().log_level = Some(level);
        if self.era() == Era::Modern {
            return Ok(());
        }
        if self.connected().server_capabilities.logging.is_none() {
            return Err(ClientError::Unsupported("logging".into()));
        }
        let p = to_object(&SetLevelRequestParams { meta: None, level });
        self.send(methods::LOGGING_SET_LEVEL, Some(p), &CallOptions::default())
            .await?;
        Ok(())
    }

    /// Checks that the server answers, and how fast. Legacy: `ping`.
    /// 2026-07-28 has no `ping`; `server/discover` (uncached) serves instead.
    pub async fn ping(&self) -> Result<Duration, ClientError> {
        let started = tokio::time::Instant::now();
        let method = match self.era() {
            Era::Legacy => methods::PING,
            Era::Modern => methods::SERVER_DISCOVER,
        };
        let peer = self.peer();
        peer.request(method, None, RequestOptions::default())
            .await
            .map_err(ClientError::from_peer)?;
        Ok(started.elapsed())
    }

    /// Asks a 2026-07-28 server what it supports (`server/discover`; cached
    /// for its `ttlMs` when the cache is on).
    pub async fn discover(&self) -> Result<DiscoverResult, ClientError> {
        if self.era() != Era::Modern {
            return Err(ClientError::Unsupported(format!(
                "server/discover in protocol version {}",
                self.protocol_version()
            )));
        }
        let raw = self
            .send(methods::SERVER_DISCOVER, None, &CallOptions::default())
            .await?;
        decode(methods::SERVER_DISCOVER, raw)
    }

    /// The roots currently exposed.
    pub fn roots(&self) -> Vec<Root> {
        self.inner.shared.inputs.roots()
    }

    /// Replaces the exposed roots (`file://` URIs). In the legacy era, a
    /// client that declared `roots` tells the server with
    /// `notifications/roots/list_changed` (2026-07-28 has no such
    /// notification: servers ask again when they need the roots).
    pub fn set_roots(&self, roots: Vec<Root>) -> Result<(), ClientError> {
        crate::roots::check_roots(&roots).map_err(ClientError::Config)?;
        if self.capabilities().roots.is_none() {
            return Err(ClientError::Config(
                "set_roots needs the roots capability: build the client with .roots(…)".into(),
            ));
        }
        self.inner.shared.inputs.set_roots(roots);
        if self.era() == Era::Legacy {
            self.peer()
                .notify(methods::NOTIFICATIONS_ROOTS_LIST_CHANGED, None, None)
                .map_err(ClientError::Request)?;
        }
        Ok(())
    }

    /// Asks the user's consent for the URL elicitations of a `-32042` error
    /// ([`ClientError::UrlElicitationRequired`]) through the URL consent
    /// handler, one after the other, and remembers their ids so that
    /// [`Client::elicitation_completed`] and
    /// [`ClientEvent::ElicitationComplete`](crate::ClientEvent::ElicitationComplete)
    /// see their completion. Returns each user's action.
    pub async fn consent_to_urls(
        &self,
        elicitations: &[ElicitRequestURLParams],
    ) -> Result<Vec<ElicitAction>, ClientError> {
        let mut actions = Vec::with_capacity(elicitations.len());
        for e in elicitations {
            // The URL form writes its `mode`.
            let params = to_object(e);
            if let Some(id) = &e.elicitation_id {
                self.inner.shared.inputs.tracker.register(id);
            }
            let check = self
                .inner
                .shared
                .inputs
                .check(methods::ELICITATION_CREATE, Some(&params));
            if let Err(r) = check {
                return Err(ClientError::UndeclaredInput {
                    key: e.elicitation_id.clone().unwrap_or_default(),
                    what: r.undeclared.unwrap_or_else(|| r.error.message.clone()),
                });
            }
            let answer = self
                .inner
                .shared
                .inputs
                .clone()
                .answer(methods::ELICITATION_CREATE.into(), Some(params), None)
                .await
                .map_err(|error| ClientError::Input {
                    key: e.elicitation_id.clone().unwrap_or_default(),
                    method: methods::ELICITATION_CREATE.into(),
                    error,
                })?;
            let action = decode_object_params::<Answered>(Some(&answer))
                .ok()
                .and_then(|a| a.action)
                .unwrap_or(ElicitAction::Cancel);
            actions.push(action);
        }
        Ok(actions)
    }

    /// Completes when the server reports the URL elicitation `id` complete
    /// (`notifications/elicitation/complete`, 2025-11-25). The id is
    /// remembered from now on if it was not known; the notification may never
    /// come, so bound the wait and let the user retry by hand.
    pub async fn elicitation_completed(&self, id: &str) {
        let mut rx = self.inner.shared.inputs.tracker.register(id);
        let _ = rx.wait_for(|done| *done).await;
    }

    /// Describes a URL elicitation for display (host to highlight, warning).
    pub fn describe_url(e: &ElicitRequestURLParams) -> UrlRequest {
        UrlRequest {
            message: e.message.clone(),
            url: e.url.clone(),
            elicitation_id: e.elicitation_id.clone(),
        }
    }
}
