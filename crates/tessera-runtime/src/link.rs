//! [`Link`]: where a connection goes, in the terms telemetry records
//! (`network.transport`, `network.protocol.name`, `server.address`,
//! `server.port`).

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
}

impl Link {
    /// A child process's stdio.
    pub fn pipe() -> Link {
        Link {
            transport: "pipe",
            protocol: None,
            address: None,
            port: None,
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
        })
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
}
