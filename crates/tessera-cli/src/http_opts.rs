//! The HTTP options of the client verbs: `-H/--header 'Name: value'`
//! (repeatable) and `--cacert PATH` (an extra trusted root for `https://`).

use std::path::{Path, PathBuf};

use std::sync::Arc;

use clap::Args;
use tessera_auth::client::{Grant, OAuthClient, WorkloadToken};
use tessera_http::http::{HeaderMap, HeaderName, HeaderValue};
use tessera_http::{HttpClientBuilder, HttpClientError, HttpClientTransport};

use crate::Failure;

/// Headers the transport sets itself: a user value would break the protocol.
const MANAGED: &[&str] = &[
    "accept",
    "connection",
    "content-length",
    "content-type",
    "last-event-id",
    "mcp-method",
    "mcp-name",
    "mcp-protocol-version",
    "mcp-session-id",
    "te",
    "transfer-encoding",
    "upgrade",
];

/// `-H` and `--cacert`, for a client verb whose target is an http(s) URL.
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "HTTP (for an http:// or https:// target)")]
pub struct HttpOptions {
    /// Send this header with every HTTP request, e.g. -H 'Authorization:
    /// Bearer TOKEN' (repeatable; a name given twice is sent with both values).
    #[arg(short = 'H', long = "header", value_name = "NAME: VALUE")]
    pub headers: Vec<String>,

    /// Also trust the CA certificate(s) in this PEM (or DER) file for
    /// https:// (on top of the built-in web roots), e.g. for a private CA.
    #[arg(long, value_name = "PATH")]
    pub cacert: Option<PathBuf>,

    /// Authorize as a workload (SEP-1933): present the JWT in this file (a
    /// Kubernetes projected service-account token, say) to the MCP server's
    /// authorization server in the RFC 7523 jwt-bearer grant, with no
    /// client id or login. The file is read again at every token request,
    /// so a rotated token is used from the next one on.
    #[arg(
        long,
        value_name = "PATH",
        env = "TESSERA_WORKLOAD_TOKEN_FILE",
        conflicts_with = "workload_token_env"
    )]
    pub workload_token_file: Option<PathBuf>,

    /// As --workload-token-file, with the token in the environment variable NAME.
    #[arg(long, value_name = "NAME")]
    pub workload_token_env: Option<String>,
}

impl HttpOptions {
    /// Whether any option was given.
    pub fn is_set(&self) -> bool {
        !self.headers.is_empty() || self.cacert.is_some() || self.workload().is_some()
    }

    /// The workload token asked for, if any.
    pub fn workload(&self) -> Option<WorkloadToken> {
        match (&self.workload_token_file, &self.workload_token_env) {
            (Some(path), _) => Some(WorkloadToken::file(path)),
            (None, Some(name)) => Some(WorkloadToken::env(name)),
            (None, None) => None,
        }
    }

    /// How requests to `url` are authorized: not at all by us when a header
    /// gives `Authorization` (it wins), by the workload identity grant when
    /// a workload token is given, else with the token `tessera login` stored.
    pub fn authorizer(&self, url: &str) -> Result<Authorizer, Failure> {
        if self.header_map()?.contains_key("authorization") {
            return Ok(Authorizer::Header);
        }
        let Some(workload) = self.workload() else {
            return Ok(Authorizer::Stored(url.to_owned()));
        };
        let oauth = OAuthClient::builder(url, Grant::Workload(workload))
            .client_name("tessera-cli")
            .build()
            .map_err(|e| Failure::Usage(format!("workload identity for {url}: {e}")))?;
        Ok(Authorizer::Workload(Arc::new(oauth)))
    }

    /// Refuses the options for a target that is not an http(s) URL.
    pub fn only_for_http(&self) -> Result<(), Failure> {
        if self.is_set() {
            return Err(Failure::Usage(
                "-H/--header, --cacert and --workload-token-* apply to an http(s) URL target, not to `-- COMMAND`"
                    .into(),
            ));
        }
        Ok(())
    }

    /// The headers, parsed and checked.
    pub fn header_map(&self) -> Result<HeaderMap, Failure> {
        let mut map = HeaderMap::new();
        for text in &self.headers {
            let (name, value) = parse_header(text)?;
            map.append(name, value);
        }
        Ok(map)
    }

    /// The HTTP client transport for `url`, with these options.
    pub fn transport(&self, url: &str) -> Result<HttpClientTransport, Failure> {
        self.apply(HttpClientTransport::builder(url))?
            .build()
            .map_err(|e| match (&e, &self.cacert) {
                (HttpClientError::Tls(_), Some(path)) => {
                    Failure::Usage(format!("--cacert {}: {e}", path.display()))
                }
                _ => Failure::Usage(e.to_string()),
            })
    }

    /// Applies the options to an HTTP client builder.
    pub fn apply(&self, mut b: HttpClientBuilder) -> Result<HttpClientBuilder, Failure> {
        let headers = self.header_map()?;
        if !headers.is_empty() {
            b = b.headers(headers);
        }
        if let Some(path) = &self.cacert {
            b = add_roots(b, path)?;
        }
        Ok(b)
    }
}

/// How a client verb authorizes its HTTP requests ([`HttpOptions::authorizer`]).
#[derive(Debug, Clone)]
pub enum Authorizer {
    /// A `-H Authorization: …` header does.
    Header,
    /// The workload identity grant (one client, its tokens shared by every
    /// connection made with it).
    Workload(Arc<OAuthClient>),
    /// The token `tessera login` stored for this URL, if any.
    Stored(String),
}

impl Authorizer {
    /// `transport`, authorized.
    pub fn install(&self, transport: HttpClientTransport) -> HttpClientTransport {
        match self {
            Authorizer::Header => transport,
            Authorizer::Workload(oauth) => transport.with_auth(oauth.clone()),
            Authorizer::Stored(url) => crate::login::with_stored_auth(transport, url),
        }
    }
}

/// Parses `Name: value` (curl's syntax): the name is a token, the value is
/// trimmed and must not contain control characters such as CR or LF.
fn parse_header(text: &str) -> Result<(HeaderName, HeaderValue), Failure> {
    let bad = |why: &str| Failure::Usage(format!("-H {text:?}: {why}"));
    let Some((name, value)) = text.split_once(':') else {
        return Err(bad("expected 'Name: value'"));
    };
    if name.is_empty() || name.trim() != name {
        return Err(bad(
            "expected 'Name: value' (no spaces in or around the name)",
        ));
    }
    let name = HeaderName::from_bytes(name.as_bytes())
        .map_err(|_| bad("the name may only hold letters, digits and !#$%&'*+-.^_`|~"))?;
    if MANAGED.contains(&name.as_str()) || name.as_str().starts_with("mcp-param-") {
        return Err(bad(
            "the MCP transport sets this header itself; it cannot be given",
        ));
    }
    let value = HeaderValue::from_str(value.trim_matches([' ', '\t']))
        .map_err(|_| bad("the value holds a control character or non-ASCII byte"))?;
    Ok((name, value))
}

/// Trusts the certificates of `path`: PEM (one or more `CERTIFICATE`
/// blocks) or a single DER certificate.
fn add_roots(b: HttpClientBuilder, path: &Path) -> Result<HttpClientBuilder, Failure> {
    let shown = path.display();
    let bytes = std::fs::read(path)
        .map_err(|e| Failure::Usage(format!("--cacert {shown}: cannot read it: {e}")))?;
    let pem = bytes
        .windows(b"-----BEGIN".len())
        .any(|w| w == b"-----BEGIN");
    if pem {
        b.add_root_certificates_pem(&bytes)
            .map_err(|e| Failure::Usage(format!("--cacert {shown}: {e}")))
    } else if bytes.first() == Some(&0x30) {
        // A DER certificate is an ASN.1 SEQUENCE; the TLS setup checks it.
        Ok(b.add_root_certificate_der(bytes))
    } else {
        Err(Failure::Usage(format!(
            "--cacert {shown}: not a PEM or DER certificate"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(r: Result<(HeaderName, HeaderValue), Failure>) -> String {
        match r {
            Err(Failure::Usage(m)) => m,
            other => panic!("expected a usage error, got {other:?}"),
        }
    }

    #[test]
    fn parses_curl_style_headers() {
        let (n, v) = parse_header("Authorization: Bearer abc").unwrap();
        assert_eq!(n.as_str(), "authorization");
        assert_eq!(v, "Bearer abc");
        let (n, v) = parse_header("X-Empty:").unwrap();
        assert_eq!((n.as_str(), v.to_str().unwrap()), ("x-empty", ""));
        let (_, v) = parse_header("X-Pad: \t a:b \t").unwrap();
        assert_eq!(v, "a:b");
    }

    #[test]
    fn refuses_bad_headers_clearly() {
        assert!(usage(parse_header("NoColon")).contains("expected 'Name: value'"));
        assert!(usage(parse_header(": v")).contains("expected"));
        assert!(usage(parse_header("X A: v")).contains("the name may only hold"));
        assert!(usage(parse_header(" X: v")).contains("no spaces"));
        assert!(usage(parse_header("X-A: a\u{1}b")).contains("control character"));
        assert!(usage(parse_header("Content-Type: text/plain")).contains("sets this header"));
        assert!(usage(parse_header("Mcp-Session-Id: 1")).contains("sets this header"));
        assert!(usage(parse_header("mcp-param-x: 1")).contains("sets this header"));
    }

    #[test]
    fn repeated_names_keep_every_value() {
        let o = HttpOptions {
            headers: vec!["X-A: 1".into(), "x-a: 2".into(), "X-B: 3".into()],
            ..HttpOptions::default()
        };
        let m = o.header_map().unwrap();
        let a: Vec<_> = m.get_all("x-a").iter().collect();
        assert_eq!(a, ["1", "2"]);
        assert_eq!(m["x-b"], "3");
    }

    #[test]
    fn cacert_errors_name_the_file() {
        let dir = std::env::temp_dir().join(format!("tessera-cacert-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let junk = dir.join("junk.pem");
        std::fs::write(&junk, "hello").unwrap();
        let b = || tessera_http::HttpClientTransport::builder("https://localhost/mcp");
        for (path, says) in [
            (dir.join("missing.pem"), "cannot read it"),
            (junk.clone(), "not a PEM or DER certificate"),
        ] {
            match add_roots(b(), &path) {
                Err(Failure::Usage(m)) => {
                    assert!(m.contains(&path.display().to_string()), "{m}");
                    assert!(m.contains(says), "{m}");
                }
                other => panic!("{other:?}"),
            }
        }
        std::fs::write(
            &junk,
            "-----BEGIN CERTIFICATE-----\nnot base64!\n-----END CERTIFICATE-----\n",
        )
        .unwrap();
        assert!(matches!(add_roots(b(), &junk), Err(Failure::Usage(m)) if m.contains("PEM")));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
