//! [`Subscriptions`]: the resources a connection follows — legacy
//! `resources/subscribe` (updates arrive as notifications on the session),
//! or a 2026-07-28 `subscriptions/listen` stream per resource. Updates are
//! recorded in the journal as `changed` events with the resource's URI.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde::Serialize;
use tessera::client::{Client, ClientEvent};
use tessera::types::{Era, SubscriptionFilter};

use super::journal::Journal;
use super::problem::Problem;

/// A `subscription` event: a resource is followed, or no longer.
#[derive(Serialize)]
struct Followed<'a> {
    connection: u64,
    uri: &'a str,
    state: &'static str,
}

impl<'a> Followed<'a> {
    fn new(connection: u64, uri: &'a str, state: &'static str) -> Self {
        Followed {
            connection,
            uri,
            state,
        }
    }
}

/// A `changed` event for a resource followed.
#[derive(Serialize)]
struct Changed<'a> {
    connection: u64,
    what: &'static str,
    uri: &'a str,
}

/// The most resources one connection follows.
pub const MAX_SUBSCRIPTIONS: usize = 64;

/// The resources one connection follows. Cheap to clone.
#[derive(Clone, Default)]
pub struct Subscriptions {
    /// URI → the task reading its listen stream (2026-07-28), or none
    /// (legacy: the session carries the updates).
    inner: Arc<Mutex<BTreeMap<String, Option<tokio::task::AbortHandle>>>>,
}

impl Subscriptions {
    fn map(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Option<tokio::task::AbortHandle>>> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The URIs followed.
    pub fn list(&self) -> Vec<String> {
        self.map().keys().cloned().collect()
    }

    /// Follows `uri` on connection `conn`.
    pub async fn subscribe(
        &self,
        client: &Client,
        conn: u64,
        uri: &str,
        journal: &Journal,
    ) -> Result<(), Problem> {
        {
            let map = self.map();
            if map.contains_key(uri) {
                return Ok(());
            }
            if map.len() >= MAX_SUBSCRIPTIONS {
                return Err(Problem::limit(format!(
                    "{MAX_SUBSCRIPTIONS} resources are already followed on this connection"
                )));
            }
        }
        let follower = if client.era() == Era::Legacy {
            client
                .subscribe(uri)
                .await
                .map_err(|e| Problem::client(&e, "resources/subscribe"))?;
            None
        } else {
            let filter = SubscriptionFilter {
                resource_subscriptions: Some(vec![uri.to_owned()]),
                ..SubscriptionFilter::default()
            };
            let mut stream = client
                .listen(filter)
                .await
                .map_err(|e| Problem::client(&e, "subscriptions/listen"))?;
            let (journal, me, uri) = (journal.clone(), self.clone(), uri.to_owned());
            let task = tokio::spawn(async move {
                while let Some(e) = stream.recv().await {
                    if let ClientEvent::ResourceUpdated(u) = e {
                        journal.record(
                            "changed",
                            Changed {
                                connection: conn,
                                what: "resource",
                                uri: &u.uri,
                            },
                        );
                    }
                }
                if me.map().remove(&uri).is_some() {
                    journal.record("subscription", Followed::new(conn, &uri, "ended"));
                }
            });
            Some(task.abort_handle())
        };
        self.map().insert(uri.to_owned(), follower);
        journal.record("subscription", Followed::new(conn, uri, "subscribed"));
        Ok(())
    }

    /// Stops following `uri`.
    pub async fn unsubscribe(
        &self,
        client: &Client,
        conn: u64,
        uri: &str,
        journal: &Journal,
    ) -> Result<(), Problem> {
        let Some(follower) = self.map().remove(uri) else {
            return Err(Problem::not_found(format!("{uri} is not followed")));
        };
        match follower {
            // Dropping the listen stream ends the subscription.
            Some(task) => task.abort(),
            None => client
                .unsubscribe(uri)
                .await
                .map_err(|e| Problem::client(&e, "resources/unsubscribe"))?,
        }
        journal.record("subscription", Followed::new(conn, uri, "unsubscribed"));
        Ok(())
    }

    /// Stops every listen stream (the connection is closing).
    pub fn stop(&self) {
        for (_, f) in std::mem::take(&mut *self.map()) {
            if let Some(task) = f {
                task.abort();
            }
        }
    }
}
