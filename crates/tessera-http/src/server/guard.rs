//! DNS-rebinding protection: the `Host` and `Origin` allow-lists.
//!
//! The defaults come from the address the server is bound to:
//!
//! | bind address                  | `Host` accepted                                   | `Origin` accepted (when sent)              |
//! |-------------------------------|---------------------------------------------------|--------------------------------------------|
//! | loopback (127.0.0.1, ::1)     | `localhost`, `127.0.0.1`, `[::1]`, with the bound port or none | those names over http/https, any port |
//! | a specific address            | that address, with the bound port or none         | same host as the request's `Host`          |
//! | unspecified (0.0.0.0, ::)     | any (a warning is logged)                          | same host as the request's `Host`          |
//! | unknown (no bind address set) | as for loopback, any port                          | as for loopback                            |
//!
//! Explicit lists replace the defaults. Loopback origins on other ports are
//! accepted because a page can only carry a loopback origin when it was itself
//! served from this machine.

use std::net::{IpAddr, SocketAddr};

/// The loopback names a local server answers to.
const LOOPBACK_NAMES: [&str; 3] = ["localhost", "127.0.0.1", "[::1]"];

/// Which `Host` header values are accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostPolicy {
    /// Loopback names (`localhost`, `127.0.0.1`, `[::1]`), with `port` or none
    /// (any port when `port` is `None`).
    Loopback {
        /// The port the server listens on, if known.
        port: Option<u16>,
    },
    /// Exactly these hosts (`name` or `name:port`; a name without a port
    /// matches any port). Case-insensitive.
    List(Vec<String>),
    /// Any host (for a server bound to all interfaces behind a trusted proxy).
    Any,
}

/// Which `Origin` header values are accepted (a request without `Origin`,
/// e.g. from a non-browser client, always passes this check).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OriginPolicy {
    /// `http(s)://` + a loopback name, any port.
    Loopback,
    /// Origins whose host equals the request's `Host` header (same-origin).
    SameAsHost,
    /// Exactly these origins (`scheme://host[:port]`), case-insensitive.
    List(Vec<String>),
    /// Any origin.
    Any,
}

/// The `Host`/`Origin` checks of one server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostGuard {
    /// The `Host` policy.
    pub hosts: HostPolicy,
    /// The `Origin` policy.
    pub origins: OriginPolicy,
}

impl Default for HostGuard {
    fn default() -> Self {
        HostGuard {
            hosts: HostPolicy::Loopback { port: None },
            origins: OriginPolicy::Loopback,
        }
    }
}

/// Why a request was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostGuardRefusal {
    /// Which header.
    pub header: &'static str,
    /// Its value (or `(missing)`).
    pub value: String,
    /// What would be accepted, in words.
    pub allowed: String,
}

impl HostGuard {
    /// The defaults for a server bound to `addr` (see the module docs).
    pub fn for_bind(addr: SocketAddr) -> Self {
        let ip = addr.ip();
        if ip.is_loopback() {
            HostGuard {
                hosts: HostPolicy::Loopback {
                    port: Some(addr.port()),
                },
                origins: OriginPolicy::Loopback,
            }
        } else if ip.is_unspecified() {
            tracing::warn!(
                %addr,
                "bound to all interfaces: any Host header is accepted; restrict it with \
                 an allowed-hosts list (tessera serve --allow-host) unless a trusted proxy checks it"
            );
            HostGuard {
                hosts: HostPolicy::Any,
                origins: OriginPolicy::SameAsHost,
            }
        } else {
            let name = match ip {
                IpAddr::V4(v4) => v4.to_string(),
                IpAddr::V6(v6) => format!("[{v6}]"),
            };
            HostGuard {
                hosts: HostPolicy::List(vec![name.clone(), format!("{name}:{}", addr.port())]),
                origins: OriginPolicy::SameAsHost,
            }
        }
    }

    /// Checks a request's `Host` (or HTTP/2 `:authority`) and `Origin`.
    pub fn check(&self, host: Option<&str>, origin: Option<&str>) -> Result<(), HostGuardRefusal> {
        self.check_host(host)?;
        match origin {
            None => Ok(()),
            Some(o) => self.check_origin(o, host),
        }
    }

    fn check_host(&self, host: Option<&str>) -> Result<(), HostGuardRefusal> {
        let ok = match (&self.hosts, host) {
            (HostPolicy::Any, _) => true,
            (_, None) => false,
            (HostPolicy::Loopback { port }, Some(h)) => {
                loopback_plain(h, *port).unwrap_or_else(|| loopback_host(h, *port))
            }
            (HostPolicy::List(list), Some(h)) => host_in_list(list, h),
        };
        if ok {
            return Ok(());
        }
        Err(HostGuardRefusal {
            header: "Host",
            value: host.unwrap_or("(missing)").to_owned(),
            allowed: match &self.hosts {
                HostPolicy::Loopback { port: Some(p) } => {
                    format!("localhost, 127.0.0.1 or [::1] (optionally with :{p})")
                }
                HostPolicy::Loopback { port: None } => "localhost, 127.0.0.1 or [::1]".to_owned(),
                HostPolicy::List(l) => l.join(", "),
                HostPolicy::Any => "any".to_owned(),
            },
        })
    }

    fn check_origin(&self, origin: &str, host: Option<&str>) -> Result<(), HostGuardRefusal> {
        let parsed = split_origin(origin);
        let ok = match &self.origins {
            OriginPolicy::Any => true,
            OriginPolicy::Loopback => parsed
                .and_then(|(_, authority)| split_host_port(authority))
                .is_some_and(|(name, _)| is_loopback_name(name)),
            OriginPolicy::SameAsHost => match (parsed, host) {
                (Some((_, authority)), Some(h)) => authority.eq_ignore_ascii_case(h.trim()),
                _ => false,
            },
            OriginPolicy::List(list) => list
                .iter()
                .any(|o| o.trim_end_matches('/').eq_ignore_ascii_case(origin.trim())),
        };
        if ok {
            return Ok(());
        }
        Err(HostGuardRefusal {
            header: "Origin",
            value: origin.to_owned(),
            allowed: match &self.origins {
                OriginPolicy::Loopback => {
                    "http(s)://localhost, 127.0.0.1 or [::1] on any port".to_owned()
                }
                OriginPolicy::SameAsHost => "the same host as the Host header".to_owned(),
                OriginPolicy::List(l) => l.join(", "),
                OriginPolicy::Any => "any".to_owned(),
            },
        })
    }
}

fn is_loopback_name(name: &str) -> bool {
    LOOPBACK_NAMES.iter().any(|n| n.eq_ignore_ascii_case(name))
}

/// Whether `h` (a `Host` value) names a loopback host, with `port` or none
/// (any port when `port` is `None`).
fn loopback_host(h: &str, port: Option<u16>) -> bool {
    match split_host_port(h) {
        Some((name, p)) => is_loopback_name(name) && (p.is_none() || port.is_none() || p == port),
        None => false,
    }
}

/// [`loopback_host`] for the values clients send nearly always
/// (`127.0.0.1:PORT`, `localhost:PORT`, lower case, no spaces), read without
/// splitting or parsing; `None` for any other value (the general reading
/// decides), never a different answer.
fn loopback_plain(h: &str, port: Option<u16>) -> Option<bool> {
    let b = h.as_bytes();
    let rest = b
        .strip_prefix(b"127.0.0.1")
        .or_else(|| b.strip_prefix(b"localhost"))?;
    let digits = match rest {
        [] => return Some(true),
        [b':', digits @ ..] if (1..=5).contains(&digits.len()) => digits,
        _ => return None,
    };
    let mut p: u32 = 0;
    for d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        p = p * 10 + u32::from(d - b'0');
    }
    let p = u16::try_from(p).ok()?;
    Some(port.is_none_or(|want| want == p))
}

/// Splits `host[:port]` (IPv6 in brackets). `None` when malformed.
fn split_host_port(s: &str) -> Option<(&str, Option<u16>)> {
    let s = s.trim();
    if s.is_empty() {
        return None;
    }
    if s.starts_with('[') {
        let end = s.find(']')?;
        let (name, rest) = s.split_at(end + 1);
        return match rest.strip_prefix(':') {
            None if rest.is_empty() => Some((name, None)),
            Some(p) => p.parse().ok().map(|p| (name, Some(p))),
            None => None,
        };
    }
    match s.rsplit_once(':') {
        Some((name, p)) => p.parse().ok().map(|p| (name, Some(p))),
        None => Some((s, None)),
    }
}

/// Splits `scheme://authority` (no path) into its parts.
fn split_origin(origin: &str) -> Option<(&str, &str)> {
    let (scheme, rest) = origin.trim().split_once("://")?;
    if !(scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https")) {
        return None;
    }
    let authority = rest.trim_end_matches('/');
    if authority.is_empty() || authority.contains('/') {
        return None;
    }
    Some((scheme, authority))
}

fn host_in_list(list: &[String], host: &str) -> bool {
    let Some((name, port)) = split_host_port(host) else {
        return false;
    };
    list.iter().any(|entry| match split_host_port(entry) {
        Some((n, None)) => n.eq_ignore_ascii_case(name),
        Some((n, Some(p))) => n.eq_ignore_ascii_case(name) && port.is_none_or(|q| q == p),
        None => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plain_reading_of_a_loopback_host_agrees_with_the_general_one() {
        let values = [
            "127.0.0.1",
            "127.0.0.1:8001",
            "127.0.0.1:08001",
            "127.0.0.1:9",
            "127.0.0.1:",
            "127.0.0.1:+8001",
            "127.0.0.1:65535",
            "127.0.0.1:65536",
            "127.0.0.1:123456",
            "127.0.0.1:80a",
            "127.0.0.10:8001",
            "127.0.0.1.evil:8001",
            "localhost",
            "localhost:8001",
            "LOCALHOST:8001",
            "localhost.evil:8001",
            " localhost:8001",
            "localhost:8001 ",
            "[::1]:8001",
            "example.com:8001",
            "",
        ];
        for h in values {
            for port in [Some(8001), Some(9), None] {
                if let Some(fast) = loopback_plain(h, port) {
                    assert_eq!(fast, loopback_host(h, port), "{h:?} {port:?}");
                }
            }
        }
        assert_eq!(loopback_plain("127.0.0.1:8001", Some(8001)), Some(true));
        assert_eq!(loopback_plain("localhost:9", Some(8001)), Some(false));
        assert_eq!(loopback_plain("LOCALHOST:8001", Some(8001)), None);
    }

    #[test]
    fn loopback_bind() {
        let g = HostGuard::for_bind("127.0.0.1:8001".parse().unwrap());
        for h in [
            "localhost:8001",
            "127.0.0.1:8001",
            "[::1]:8001",
            "LOCALHOST",
            "127.0.0.1",
        ] {
            assert!(g.check(Some(h), None).is_ok(), "{h}");
        }
        for h in [
            "evil.example.com",
            "localhost:9",
            "127.0.0.2:8001",
            "[::1]x",
            "",
        ] {
            assert!(g.check(Some(h), None).is_err(), "{h}");
        }
        assert!(g.check(None, None).is_err());
        assert!(
            g.check(Some("localhost:8001"), Some("http://localhost:3000"))
                .is_ok()
        );
        assert!(
            g.check(Some("localhost:8001"), Some("http://evil.example.com"))
                .is_err()
        );
        assert!(g.check(Some("localhost:8001"), Some("null")).is_err());
    }

    #[test]
    fn wildcard_and_lists() {
        let g = HostGuard::for_bind("0.0.0.0:80".parse().unwrap());
        assert!(g.check(Some("anything:1"), None).is_ok());
        assert!(
            g.check(Some("a.example"), Some("https://a.example"))
                .is_ok()
        );
        assert!(
            g.check(Some("a.example"), Some("https://b.example"))
                .is_err()
        );
        let g = HostGuard {
            hosts: HostPolicy::List(vec!["mcp.example".into(), "10.0.0.1:8080".into()]),
            origins: OriginPolicy::List(vec!["https://app.example".into()]),
        };
        assert!(g.check(Some("MCP.example:443"), None).is_ok());
        assert!(g.check(Some("10.0.0.1:8080"), None).is_ok());
        assert!(g.check(Some("10.0.0.1:9090"), None).is_err());
        assert!(
            g.check(Some("mcp.example"), Some("https://app.example"))
                .is_ok()
        );
        assert!(
            g.check(Some("mcp.example"), Some("https://evil.example"))
                .is_err()
        );
    }
}
