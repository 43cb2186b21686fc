//! State shared between server instances: the seam a networked store plugs into.
//!
//! One MCP endpoint may be served by several processes (replicas behind a
//! load balancer that is not sticky). What a legacy session needs to go on in
//! any of them lives behind two traits:
//!
//! - [`SessionStore`] keeps each session's [`SessionState`]: the negotiated
//!   version, the client's info and capabilities, whether
//!   `notifications/initialized` arrived, the log level, the principal the
//!   session is bound to, and a map of server-defined data (the resource
//!   subscriptions of `tessera-server`, for example). [`MemorySessionStore`]
//!   is the default: bounded, expiring, one process.
//! - [`Bus`] carries messages between instances on named topics: a
//!   publish/subscribe channel without persistence. [`LocalBus`] serves one
//!   process (and tests that run several instances in one process).
//!
//! # How state moves
//!
//! The instance that runs the `initialize` handshake saves the session's
//! state once the handshake is answered, and again whenever the state
//! changes (`logging/setLevel`, `resources/subscribe`…), each time with the
//! session's idle timeout as TTL; while the session is used, the TTL is
//! refreshed with [`SessionStore::touch`] at most once per interval. A
//! request carrying a session id unknown to an instance makes it
//! [`SessionStore::load`] the state and restore a local copy of the session
//! (an engine that starts as if the handshake had just been answered, with
//! the stored log level and server data), after checking that the request's
//! principal is the one the session is bound to. From then on the local copy
//! answers without a store round trip. Ending the session removes the state
//! ([`SessionStore::remove`]) and tells the other instances over the bus to
//! drop their copies.
//!
//! What cannot be stored — requests in progress, open SSE connections,
//! server-to-client requests waiting for an answer — stays on the instance
//! that holds it; messages about it travel over the [`Bus`]. The HTTP layer
//! (`tessera-http`) documents its topics and what each one carries.
//!
//! # For implementers
//!
//! Every implementation runs the same checks (feature `testing`):
//! `session_contract::run` and `session_contract::expiry` for a
//! [`SessionStore`], `bus_contract::run` for a [`Bus`]. Errors of the
//! backend are [`StoreError`]s; the HTTP layer answers a request that
//! needs the store while it is down with `503` and a JSON-RPC error saying
//! so.

mod bus;
#[cfg(any(test, feature = "testing"))]
pub mod bus_contract;
#[cfg(any(test, feature = "testing"))]
pub mod session_contract;
mod state;
mod store;

pub use bus::{Bus, BusSubscription, DynBus, LocalBus};
pub use state::{SessionExport, SessionState};
pub use store::{DynSessionStore, MemorySessionStore, SessionCaps, SessionStore, StoreError};
