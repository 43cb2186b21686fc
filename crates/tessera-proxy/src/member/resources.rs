//! Resource subscriptions to one upstream, on the connection the
//! subscriber's requests go through (its own, for an upstream reached per
//! caller): `resources/subscribe` on a legacy connection, a listen stream
//! naming the resource on a 2026-07-28 one (which has no
//! `resources/subscribe`), kept until the subscription ends.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tessera_proto::RequestOptions;
use tessera_runtime::Request;
use tessera_types::{Era, ErrorObject, ResourceRequestParams, SubscriptionFilter, methods};
use tokio_util::sync::CancellationToken;

use super::Member;
use crate::callers::ACKNOWLEDGEMENT_WAIT;
use crate::hub::{Hub, Topic};
use crate::refusal::RefusalData;
use crate::shapes::write;
use crate::upstream::Upstream;

/// The most listen streams carrying resource subscriptions to one
/// upstream.
pub const MAX_STREAMS: usize = 1024;

/// A subscription: the caller whose connection carries it (`None`: the
/// pooled one) and the upstream's own URI.
type Key = (Option<[u8; 32]>, String);

/// The listen streams carrying resource subscriptions, each stopped by its
/// token.
#[derive(Default)]
pub(crate) struct Streams(Mutex<HashMap<Key, CancellationToken>>);

impl Streams {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Key, CancellationToken>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Stops the stream of `key`; whether there was one.
    fn stop(&self, key: &Key) -> bool {
        self.lock().remove(key).map(|t| t.cancel()).is_some()
    }
}

/// Asks the upstream on `peer` for `method` (`resources/subscribe` or
/// `resources/unsubscribe`) of its own `uri`; the error says why not.
pub(crate) async fn ask_about_resource(
    peer: &tessera_runtime::Peer,
    method: &'static str,
    uri: &str,
) -> Result<(), String> {
    let p = write(&ResourceRequestParams::new(uri)).map_err(|e| e.message)?;
    peer.request(method, Some(p), RequestOptions::default())
        .await
        .map(drop)
        .map_err(|e| e.to_string())
}

impl Member {
    /// Subscribes to `uri` (the upstream's own) for `caller` (the key of
    /// the caller of `r`, `None` on the pooled connection), on the
    /// connection its requests go through.
    pub async fn subscribe(
        &self,
        r: &Request,
        caller: Option<[u8; 32]>,
        uri: &str,
    ) -> Result<(), ErrorObject> {
        let conn = self.connection(r).await.map_err(|x| x.error)?;
        let up = conn.upstream().clone();
        drop(conn);
        if up.era() == Era::Legacy {
            let p = write(&ResourceRequestParams::new(uri))?;
            return self
                .call(r, methods::RESOURCES_SUBSCRIBE, p)
                .await
                .map(drop);
        }
        let key = (caller, uri.to_owned());
        {
            let streams = self.streams.lock();
            if streams.len() >= MAX_STREAMS && !streams.contains_key(&key) {
                let mut e = ErrorObject::internal(format!(
                    "upstream {} already carries its limit of {MAX_STREAMS} resource \
                     subscriptions; try again later",
                    self.entry.name
                ));
                e.data = Some(
                    RefusalData::upstream(&self.entry.name)
                        .limit("subscriptions")
                        .max(MAX_STREAMS)
                        .to_value(),
                );
                return Err(e);
            }
        }
        let filter = SubscriptionFilter {
            resource_subscriptions: Some(vec![uri.to_owned()]),
            ..SubscriptionFilter::default()
        };
        let wait = self.options.request_timeout.unwrap_or(ACKNOWLEDGEMENT_WAIT);
        let stop = up
            .acks
            .listen(up.peer.clone(), filter, wait, &r.cancel)
            .await?;
        if let Some(old) = self.streams.lock().insert(key, stop) {
            old.cancel();
        }
        Ok(())
    }

    /// Makes again, on `up` (a new connection of `caller`, `None` for the
    /// pooled one, after the old one was lost), the subscriptions that
    /// `hub` says the old connection carried: `resources/subscribe` on a
    /// legacy connection, a listen stream each on a 2026-07-28 one. The
    /// streams of the old connection are dropped first. One the upstream
    /// refuses is logged and left out; one given up while it was being
    /// made again is stopped at once.
    pub async fn resubscribe(&self, up: &Arc<Upstream>, caller: Option<[u8; 32]>, hub: &Hub) {
        let uris = hub.topics(&self.naming, caller);
        if uris.is_empty() {
            return;
        }
        let still = |uri: &str| {
            hub.is_subscribed(&Topic {
                caller,
                naming: self.naming.clone(),
                uri: self.naming.uri(uri),
            })
        };
        self.streams.lock().retain(|(c, _), t| {
            if *c != caller {
                return true;
            }
            t.cancel();
            false
        });
        let cancel = CancellationToken::new();
        for uri in uris {
            let made = if up.era() == Era::Legacy {
                ask_about_resource(&up.peer, methods::RESOURCES_SUBSCRIBE, &uri).await
            } else {
                let filter = SubscriptionFilter {
                    resource_subscriptions: Some(vec![uri.clone()]),
                    ..SubscriptionFilter::default()
                };
                let wait = self.options.request_timeout.unwrap_or(ACKNOWLEDGEMENT_WAIT);
                match up.acks.listen(up.peer.clone(), filter, wait, &cancel).await {
                    Ok(stop) if still(&uri) => {
                        if let Some(old) = self.streams.lock().insert((caller, uri.clone()), stop) {
                            old.cancel();
                        }
                        Ok(())
                    }
                    Ok(stop) => {
                        stop.cancel();
                        Ok(())
                    }
                    Err(e) => Err(e.message),
                }
            };
            match made {
                Ok(()) => {
                    tracing::debug!(upstream = %self.entry.name, %uri, per_caller = caller.is_some(), "subscribed again")
                }
                Err(e) => {
                    tracing::warn!(upstream = %self.entry.name, %uri, error = %e, "subscription not made again")
                }
            }
        }
    }

    /// Ends the subscription to `uri` (the upstream's own) of `caller`, for
    /// the caller of `r` (a legacy session's `resources/unsubscribe`).
    pub async fn unsubscribe_now(
        &self,
        r: &Request,
        caller: Option<[u8; 32]>,
        uri: &str,
    ) -> Result<(), ErrorObject> {
        if self.streams.stop(&(caller, uri.to_owned())) {
            return Ok(());
        }
        let p = write(&ResourceRequestParams::new(uri))?;
        self.call(r, methods::RESOURCES_UNSUBSCRIBE, p)
            .await
            .map(drop)
    }

    /// Ends the subscription to `uri` (the upstream's own) of `caller`
    /// (`None`: the pooled connection's), if its connection is still open
    /// (a closed one took its subscriptions with it); the error says why
    /// the upstream refused.
    pub async fn end_subscription(
        &self,
        caller: Option<[u8; 32]>,
        uri: &str,
    ) -> Result<(), String> {
        if self.streams.stop(&(caller, uri.to_owned())) {
            return Ok(());
        }
        let up = match (caller, &self.callers) {
            (Some(key), Some(callers)) => callers.open(&key),
            _ => self.current(),
        };
        match up {
            Some(up) if up.era() == Era::Legacy => {
                ask_about_resource(&up.peer, methods::RESOURCES_UNSUBSCRIBE, uri).await
            }
            _ => Ok(()),
        }
    }
}
