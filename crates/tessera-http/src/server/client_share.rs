//! Each client's share of the requests in progress (issue 32 item 4): one
//! address or principal, with many sessions, many concurrent calls in one
//! session or many HTTP/2 streams on one connection, cannot take every
//! request slot of the server for itself.
//!
//! A client is counted as for the session caps (the authenticated principal,
//! else the peer's IP address; see [`ClientKey`]). A request takes a unit of
//! its client's share when it is admitted and gives it back when it has been
//! answered: a session's request when the engine answers it (a closed
//! response stream does not end it early), a 2026-07-28 or stateless request
//! when its engine stops (its response sent or its stream closed). Beyond
//! the share the request is refused at once with `429` and `Retry-After`.
//! The standalone GET stream of a session is not a request: it is bounded by
//! the session caps.

use std::sync::Arc;

use http::StatusCode;
use tokio::sync::OwnedSemaphorePermit;

use super::Shared;
use super::registry::ClientKey;
use super::reply::{self, HttpResponse};
use super::slots::{Slot, Slots};

/// The default of `max_requests_per_client`: a client may have as many
/// requests in progress as one session may.
pub(crate) const DEFAULT_MAX_REQUESTS_PER_CLIENT: usize = 256;

/// The requests in progress of every client, under one cap per client.
#[derive(Debug)]
pub(crate) struct ClientShares {
    slots: Arc<Slots<ClientKey>>,
    cap: usize,
}

/// Units of one client's share, given back when dropped. A request whose
/// client is not known (the service mounted without a peer address and no
/// authentication) holds none.
#[derive(Debug)]
pub(crate) struct ClientShare {
    _slot: Option<Slot<ClientKey>>,
}

/// A session request's hold on its session's in-flight limit and on its
/// client's share, both given back when it has been answered.
#[derive(Debug)]
pub(crate) struct InFlight {
    _session: OwnedSemaphorePermit,
    _client: ClientShare,
}

impl InFlight {
    /// Holds `session` (the session's permits) and `client` (the client's
    /// units) together.
    pub(crate) fn new(session: OwnedSemaphorePermit, client: ClientShare) -> Self {
        InFlight {
            _session: session,
            _client: client,
        }
    }
}

impl ClientShares {
    /// At most `cap` requests in progress per client.
    pub(crate) fn new(cap: usize) -> Self {
        ClientShares {
            slots: Arc::default(),
            cap: cap.max(1),
        }
    }

    /// The cap per client.
    pub(crate) fn cap(&self) -> usize {
        self.cap
    }

    /// `n` more requests in progress for `client`, or `None` when that
    /// would take it over its share.
    pub(crate) fn take(&self, client: &ClientKey, n: usize) -> Option<ClientShare> {
        if *client == ClientKey::Unknown {
            return Some(ClientShare { _slot: None });
        }
        self.slots
            .take(client.clone(), n, self.cap)
            .map(|s| ClientShare { _slot: Some(s) })
    }

    /// How many requests `client` has in progress.
    pub(crate) fn held(&self, client: &ClientKey) -> usize {
        self.slots.held(client)
    }
}

/// The refusal of a request whose client has its whole share in progress
/// (`429`, `Retry-After: 1`, counted as `max_requests_per_client`).
pub(crate) fn client_busy(shared: &Shared, client: &ClientKey) -> HttpResponse {
    shared.stats.refuse(super::limit::MAX_REQUESTS_PER_CLIENT);
    let max = shared.client_shares.cap();
    tracing::debug!(
        client = %client.store_key(),
        held = shared.client_shares.held(client),
        max,
        "request refused: its client has its share of requests in progress"
    );
    let r = reply::refuse(
        StatusCode::TOO_MANY_REQUESTS,
        format!(
            "Too Many Requests: this client has {max} requests in progress, the per-client \
             limit; retry when some have finished, or raise it (tessera serve \
             --max-requests-per-client, McpHttpBuilder::max_requests_per_client; behind a \
             reverse proxy every client has its address)"
        ),
    );
    reply::retry_after(r, 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_is_held_to_its_share_and_others_are_not_affected() {
        let shares = ClientShares::new(3);
        let a = ClientKey::Addr("127.0.0.1".parse().unwrap());
        let b = ClientKey::Principal(tessera_runtime::Principal("b".into()));
        let two = shares.take(&a, 2).unwrap();
        assert!(
            shares.take(&a, 2).is_none(),
            "a batch over the share is refused whole"
        );
        let one = shares.take(&a, 1).unwrap();
        assert!(shares.take(&a, 1).is_none());
        assert!(
            shares.take(&b, 3).is_some(),
            "another client has its own share"
        );
        assert!(
            (0..10).all(|_| shares.take(&ClientKey::Unknown, 5).is_some()),
            "an unknown client is not counted"
        );
        drop(two);
        assert_eq!(shares.held(&a), 1);
        drop(one);
        assert_eq!(shares.held(&a), 0);
        assert_eq!(ClientShares::new(0).cap(), 1);
    }
}
