//! [`Link`]: where a connection goes, in the terms telemetry records
//! (`network.transport`, `network.protocol.name`, `server.address`,
//! `server.port`), and what its transport learns on the way
//! ([`LinkState`]: `network.protocol.version`, `mcp.session.id`).

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

/// Where a connection goes. Set by whoever opens it
/// ([`ConnectionOptions::link`](crate::ConnectionOptions::link)); read
/// back with [`Peer::link`](crate::Peer::link).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    /// `pipe` (stdio) or `tcp` (HTTP).
    pub transport: &'static str,
    /// The application protocol over it: `http`, or none for stdio.
    pub protocol: Option<&'static str>,
    /// The peer's host name or address, when it has one.
    pub address: Option<String>,
    /// The peer's port, with the address.
    pub port: Option<u16>,
    /// What the transport learns as it goes (shared with it).
    pub state: Arc<LinkState>,
}

/// What a connection's transport learns as it goes, for telemetry to read:
/// the HTTP version of the last answer and the legacy session id. The
/// transport holds the same `Arc` as the [`Link`]
/// (`HttpClientTransport::link` in `tessera-http`).
#[derive(Debug, Default)]
pub struct LinkState {
    http_version: AtomicU8,
    session: Mutex<Option<Arc<str>>>,
}

/// Two states are equal when they are the same one.
impl PartialEq for LinkState {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self, other)
    }
}

impl Eq for LinkState {}

impl LinkState {
    /// Records the HTTP version of an answer.
    pub fn set_http_version(&self, v: http::Version) {
        let code = match v {
            http::Version::HTTP_09 => 1,
            http::Version::HTTP_10 => 2,
            http::Version::HTTP_11 => 3,
            http::Version::HTTP_2 => 4,
            http::Version::HTTP_3 => 5,
            _ => 0,
        };
        self.http_version.store(code, Ordering::Relaxed);
    }

    /// The HTTP version of the last answer as `network.protocol.version`
    /// spells it (`1.1`, `2`), once one came.
    pub fn http_version(&self) -> Option<&'static str> {
        match self.http_version.load(Ordering::Relaxed) {
            1 => Some("0.9"),
            2 => Some("1.0"),
            3 => Some("1.1"),
            4 => Some("2"),
            5 => Some("3"),
            _ => None,
        }
    }

    /// Records the session id the server issued (`None`: no session, or
    /// it ended).
    pub fn set_session(&self, id: Option<&str>) {
        let mut s = self.session.lock().unwrap_or_else(PoisonError::into_inner);
        if s.as_deref() != id {
            *s = id.map(Arc::from);
        }
    }

    /// The session id the server issued, if any.
    pub fn session(&self) -> Option<Arc<str>> {
        self.session
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

impl Link {
    /// A child process's stdio.
    pub fn pipe() -> Link {
        Link {
            transport: "pipe",
            protocol: None,
            address: None,
            port: None,
            state: Arc::default(),
        }
    }

    /// An HTTP endpoint at `url` (`None` unless it is an `http(s)` URL
    /// with a host); the port defaults to the scheme's.
    pub fn http(url: &str) -> Option<Link> {
        let uri: http::Uri = url.parse().ok()?;
        let port = match (uri.port_u16(), uri.scheme_str()) {
            (Some(p), _) => p,
            (None, Some("https")) => 443,
            (None, Some("http")) => 80,
            _ => return None,
        };
        let host = uri.host()?.trim_start_matches('[').trim_end_matches(']');
        Some(Link {
            transport: "tcp",
            protocol: Some("http"),
            address: Some(host.to_owned()),
            port: Some(port),
            state: Arc::default(),
        })
    }

    /// This link, sharing `state` with the transport that updates it.
    pub fn with_state(mut self, state: Arc<LinkState>) -> Link {
        self.state = state;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_http_urls() {
        let l = Link::http("http://127.0.0.1:8001/mcp").unwrap();
        assert_eq!(
            (l.transport, l.address.as_deref(), l.port),
            ("tcp", Some("127.0.0.1"), Some(8001))
        );
        assert_eq!(
            Link::http("https://example.com/mcp").unwrap().port,
            Some(443)
        );
        assert_eq!(
            Link::http("http://[::1]:9/mcp").unwrap().address.as_deref(),
            Some("::1")
        );
        assert_eq!(Link::http("not a url"), None);
        assert_eq!(Link::pipe().transport, "pipe");
    }

    #[test]
    fn the_state_follows_the_transport() {
        let s = LinkState::default();
        assert_eq!((s.http_version(), s.session()), (None, None));
        s.set_http_version(http::Version::HTTP_2);
        s.set_session(Some("abc"));
        assert_eq!(s.http_version(), Some("2"));
        assert_eq!(s.session().as_deref(), Some("abc"));
        s.set_http_version(http::Version::HTTP_11);
        s.set_session(None);
        assert_eq!((s.http_version(), s.session()), (Some("1.1"), None));
    }
}
