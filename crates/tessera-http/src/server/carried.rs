//! Values an outer tower layer hands to the MCP handlers.
//!
//! A layer in front of [`McpHttp`](super::McpHttp) (an authentication layer,
//! for example) puts a [`tessera_runtime::Extensions`] into the HTTP
//! request's extensions; every value in it is copied into the runtime
//! [`Extensions`] that the handlers of that request see (next to the request's
//! [`http::HeaderMap`]). `tessera-auth`'s `BearerAuthLayer` carries the
//! verified `AuthInfo` and the [`tessera_runtime::Principal`] this way.
//!
//! The values are read from the HTTP request once, into a [`Caller`] that
//! the request path hands down explicitly: nothing travels in a task-local.

use http::HeaderMap;
use tessera_runtime::{Extensions, Principal};

use super::RemoteAddr;
use super::registry::ClientKey;

/// Who made an HTTP request and what an outer layer carried with it.
#[derive(Debug, Clone)]
pub(crate) struct Caller {
    /// What the outer layers carried (empty if none).
    carried: Extensions,
    /// Who the request counts against for the per-client session cap.
    pub(crate) client: ClientKey,
    /// The TCP peer, when known.
    addr: Option<std::net::SocketAddr>,
    /// The HTTP version of the request, when known.
    version: Option<tessera_runtime::HttpVersion>,
}

impl Caller {
    /// The caller of the HTTP request whose extensions are `extensions`,
    /// sent over HTTP `version`.
    pub(crate) fn of(extensions: &http::Extensions, version: http::Version) -> Caller {
        let carried = extensions.get::<Extensions>().cloned().unwrap_or_default();
        let addr = extensions.get::<RemoteAddr>().map(|a| a.0);
        let version = Some(tessera_runtime::HttpVersion::of(version));
        let client = ClientKey::of(carried.get::<Principal>().cloned(), addr.map(|a| a.ip()));
        Caller {
            carried,
            client,
            addr,
            version,
        }
    }

    /// The authenticated principal, if an outer layer established one.
    pub(crate) fn principal(&self) -> Option<Principal> {
        self.carried.get::<Principal>().cloned()
    }

    /// Whether this caller is `owner` (the principal that opened a session;
    /// `None` for a session opened without authentication).
    pub(crate) fn made(&self, owner: Option<&Principal>) -> bool {
        self.carried.get::<Principal>() == owner
    }

    /// What the handlers of the request read: the carried values and the
    /// request's headers (an [`http::HeaderMap`] extension).
    pub(crate) fn request_extensions(&self, headers: HeaderMap) -> Extensions {
        let mut e = self.carried.clone();
        e.insert(headers);
        if let Some(a) = self.addr {
            e.insert(tessera_runtime::PeerAddr(a));
        }
        if let Some(v) = self.version {
            e.insert(v);
        }
        e
    }
}
