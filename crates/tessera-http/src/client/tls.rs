//! The HTTP client: reqwest, with TLS by rustls on the ring provider (or
//! the provider the application installed for the process), trusting the webpki (Mozilla) roots plus any roots the builder was given.
//!
//! reqwest is the workspace's one HTTP client (tessera-auth's OAuth client
//! and the CLI use it too), so a binary links one HTTP client stack (reqwest
//! over hyper and hyper-rustls) and one TLS setup (rustls + ring). It was
//! chosen over a hand-driven hyper-util client because the OAuth side needs
//! what reqwest already does well (forms, JSON, timeouts), while the MCP
//! transport needs only what reqwest exposes as plain `http` types: the
//! response converts into an `http::Response` whose body is read frame by
//! frame for SSE.

use std::sync::{Arc, OnceLock};

use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;

use super::HttpClientError;

/// Parses every certificate of a PEM document.
pub(crate) fn pem_certificates(
    pem: &[u8],
) -> Result<Vec<CertificateDer<'static>>, HttpClientError> {
    let certs: Vec<_> = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<_, _>>()
        .map_err(|e| HttpClientError::Tls(format!("bad PEM certificate: {e}")))?;
    if certs.is_empty() {
        return Err(HttpClientError::Tls(
            "no certificate in the PEM data".into(),
        ));
    }
    Ok(certs)
}

fn config(
    extra_roots: &[CertificateDer<'static>],
) -> Result<rustls::ClientConfig, HttpClientError> {
    let mut roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    for cert in extra_roots {
        roots
            .add(cert.clone())
            .map_err(|e| HttpClientError::Tls(format!("bad root certificate: {e}")))?;
    }
    let mut config = rustls::ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| HttpClientError::Tls(e.to_string()))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    // HTTP/2 when the server offers it (one connection for every request
    // in flight), HTTP/1.1 otherwise.
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(config)
}

/// The crypto provider: the one the application installed for the process
/// ([`rustls::crypto::CryptoProvider::install_default`]; aws-lc-rs, say, for
/// post-quantum key exchange), else rustls's ring provider.
fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    if let Some(installed) = rustls::crypto::CryptoProvider::get_default() {
        return Arc::clone(installed);
    }
    // ring stays the workspace's one TLS backend (aws-lc-rs is a long C and
    // cmake build). rustls 0.23.48 deprecates ring's provider because ring has
    // no post-quantum key exchange; an application that wants X25519MLKEM768
    // installs the aws-lc-rs provider process-wide and is served above.
    #[expect(deprecated)]
    let ring = rustls::crypto::ring::default_provider();
    Arc::new(ring)
}

/// A client for `https://` URLs (`http://` ones go to hyper's client: see
/// `shared::HttpClient`). Like a bare hyper client it follows no redirects
/// and reads no proxy settings from the environment; it speaks HTTP/2 with
/// servers that choose it by ALPN, HTTP/1.1 with the others.
pub(crate) fn client(
    extra_roots: &[CertificateDer<'static>],
) -> Result<reqwest::Client, HttpClientError> {
    // The default configuration is built once per process.
    static DEFAULT: OnceLock<Result<Arc<rustls::ClientConfig>, String>> = OnceLock::new();
    let config = if extra_roots.is_empty() {
        DEFAULT
            .get_or_init(|| config(&[]).map(Arc::new).map_err(|e| e.to_string()))
            .clone()
            .map_err(HttpClientError::Tls)?
    } else {
        Arc::new(config(extra_roots)?)
    };
    reqwest::Client::builder()
        .use_preconfigured_tls(Arc::unwrap_or_clone(config))
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .tcp_nodelay(true)
        .build()
        .map_err(|e| HttpClientError::Tls(format!("cannot set up the HTTP client: {e}")))
}
