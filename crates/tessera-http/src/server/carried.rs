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
    /// The HTTP version of the request.
    version: tessera_runtime::HttpVersion,
}

impl Caller {
    /// The caller of the HTTP request whose extensions are `extensions`,
    /// sent over HTTP `version`.
    pub(crate) fn of(extensions: &http::Extensions, version: http::Version) -> Caller {
        let carried = extensions.get::<Extensions>().cloned().unwrap_or_default();
        let addr = extensions.get::<RemoteAddr>().map(|a| a.0);
        let version = tessera_runtime::HttpVersion::of(version);
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
        e.insert(self.version);
        e
    }

    /// [`Self::request_extensions`] with the entries of `base` (what a
    /// session gives each of its requests, made once) put over the carried
    /// values; `base`'s entries are shared, not made again. An
    /// [`HttpVersion`](tessera_runtime::HttpVersion) in `base` stands when it
    /// is the request's.
    pub(crate) fn request_extensions_on(
        &self,
        base: &Extensions,
        headers: HeaderMap,
    ) -> Extensions {
        let mut e = self.carried.clone();
        // An empty carried map takes `base`'s list as it is: the first
        // insert below copies it once, with room for the request's entries.
        e.extend(base);
        e.insert(headers);
        if let Some(a) = self.addr {
            e.insert(tessera_runtime::PeerAddr(a));
        }
        if base.get::<tessera_runtime::HttpVersion>() != Some(&self.version) {
            e.insert(self.version);
        }
        e
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tessera_runtime::{HttpVersion, PeerAddr, SessionId};

    fn caller(carried: Extensions, version: http::Version) -> Caller {
        let mut ext = http::Extensions::new();
        ext.insert(carried);
        ext.insert(RemoteAddr("127.0.0.1:9".parse().unwrap()));
        Caller::of(&ext, version)
    }

    fn headers() -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert("x-test", http::HeaderValue::from_static("1"));
        h
    }

    /// A session's request sees what it did when every entry was made per
    /// request: the carried values, the headers, the peer, the request's
    /// version and the session's id (over a carried one).
    #[test]
    fn a_session_s_base_gives_the_same_entries() {
        let base = super::super::session::request_base("s-1");
        for (version, name) in [
            (http::Version::HTTP_11, "1.1"),
            (http::Version::HTTP_2, "2"),
        ] {
            let mut carried = Extensions::new();
            carried.insert(7u8);
            carried.insert(SessionId("spoofed".into()));
            carried.insert(HttpVersion("0.9"));
            for carried in [carried, Extensions::new()] {
                let c = caller(carried.clone(), version);
                let e = c.request_extensions_on(&base, headers());
                assert_eq!(e.get::<SessionId>(), Some(&SessionId("s-1".into())));
                assert_eq!(e.get::<HttpVersion>(), Some(&HttpVersion(name)));
                assert_eq!(e.get::<u8>(), carried.get::<u8>());
                assert_eq!(
                    e.get::<PeerAddr>().map(|a| a.0),
                    Some("127.0.0.1:9".parse().unwrap())
                );
                assert_eq!(e.get::<HeaderMap>(), Some(&headers()));
            }
        }
        // The base itself is left as it was.
        assert_eq!(base.get::<HeaderMap>(), None);
        assert_eq!(base.get::<HttpVersion>(), Some(&HttpVersion("1.1")));
    }
}
