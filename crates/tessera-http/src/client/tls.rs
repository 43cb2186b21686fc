//! TLS for the HTTP client: rustls on the ring provider, trusting the
//! webpki (Mozilla) roots plus any roots the builder was given.

use std::sync::{Arc, OnceLock};

use hyper_rustls::{HttpsConnector, HttpsConnectorBuilder};
use hyper_util::client::legacy::connect::HttpConnector;
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
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    Ok(rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| HttpClientError::Tls(e.to_string()))?
        .with_root_certificates(roots)
        .with_no_client_auth())
}

/// A connector for `http://` and `https://` URLs.
pub(crate) fn connector(
    extra_roots: &[CertificateDer<'static>],
) -> Result<HttpsConnector<HttpConnector>, HttpClientError> {
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
    let mut http = HttpConnector::new();
    http.set_nodelay(true);
    http.enforce_http(false);
    Ok(HttpsConnectorBuilder::new()
        .with_tls_config(Arc::unwrap_or_clone(config))
        .https_or_http()
        .enable_http1()
        .wrap_connector(http))
}
