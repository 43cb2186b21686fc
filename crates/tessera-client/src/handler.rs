//! The application's handlers for what a server asks of the client:
//! sampling, form-mode elicitation and consent to URL-mode elicitation.
//!
//! Each handler is a trait with a blanket implementation for async closures,
//! so a plain `|request| async move { … }` works; a type of the
//! application's implements the trait with an `async fn`. A handler answers
//! with the result or with the JSON-RPC error to report (for example
//! [`user_rejected`] when the user declines a sampling request).

use std::collections::BTreeMap;
use std::future::Future;

use tessera_runtime::BoxFuture;
use tessera_types::{
    CreateMessageRequestParams, CreateMessageResult, ElicitAction, ElicitResult, ElicitValue,
    ElicitationSchema, ErrorObject, JsonObject,
};

/// The error a client returns when the user rejects a sampling request
/// (code `-1`, as the 2025-11-25 sampling chapter suggests).
pub fn user_rejected(message: impl Into<String>) -> ErrorObject {
    ErrorObject::new(-1, message)
}

/// Answers `sampling/createMessage`: shows the request to the user, calls the
/// model, lets the user review the answer.
///
/// The client checks the request before calling the handler (tool results
/// paired with tool uses, tools only when `sampling.tools` is declared) and
/// checks the handler's answer against the request (no tool use unless tools
/// were offered and allowed).
///
/// A closure `|request| async move { … }` is one; so is a type with an
/// `async fn`:
///
/// ```
/// use tessera_client::{Client, SamplingHandler, user_rejected};
/// use tessera_types::{CreateMessageRequestParams, CreateMessageResult, ErrorObject};
///
/// /// Declines every request (a user who never consents).
/// struct AlwaysNo;
///
/// impl SamplingHandler for AlwaysNo {
///     async fn create_message(
///         &self,
///         _request: CreateMessageRequestParams,
///     ) -> Result<CreateMessageResult, ErrorObject> {
///         Err(user_rejected("the user declined"))
///     }
/// }
///
/// let builder = Client::builder("demo", "1.0.0").sampling(AlwaysNo);
/// # let _ = builder;
/// ```
pub trait SamplingHandler: Send + Sync + 'static {
    /// Produces the model's reply.
    fn create_message(
        &self,
        request: CreateMessageRequestParams,
    ) -> impl Future<Output = Result<CreateMessageResult, ErrorObject>> + Send;
}

impl<F, Fut> SamplingHandler for F
where
    F: Fn(CreateMessageRequestParams) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<CreateMessageResult, ErrorObject>> + Send,
{
    fn create_message(
        &self,
        request: CreateMessageRequestParams,
    ) -> impl Future<Output = Result<CreateMessageResult, ErrorObject>> + Send {
        self(request)
    }
}

/// [`SamplingHandler`] as the client holds it (behind a trait object).
pub(crate) trait HeldSampling: Send + Sync + 'static {
    fn create_message_boxed(
        &self,
        request: CreateMessageRequestParams,
    ) -> BoxFuture<'_, Result<CreateMessageResult, ErrorObject>>;
}

impl<T: SamplingHandler> HeldSampling for T {
    fn create_message_boxed(
        &self,
        request: CreateMessageRequestParams,
    ) -> BoxFuture<'_, Result<CreateMessageResult, ErrorObject>> {
        Box::pin(self.create_message(request))
    }
}

/// A form-mode elicitation: what the server wants to ask the user.
#[derive(Debug, Clone, PartialEq)]
pub struct FormRequest {
    /// Why the server asks (show it, with which server is asking).
    pub message: String,
    /// The requested schema, typed.
    pub requested_schema: ElicitationSchema,
    /// The requested schema exactly as the server sent it.
    pub raw_schema: JsonObject,
}

impl FormRequest {
    /// The default value of each property that has one (SEP-1034), to
    /// pre-populate the form. Properties the user leaves out of an accepted
    /// answer get these values before the answer is validated and sent.
    pub fn defaults(&self) -> BTreeMap<String, ElicitValue> {
        crate::elicitation::schema_defaults(&self.raw_schema)
            .into_iter()
            .filter_map(|(k, v)| serde_json::from_value(v).ok().map(|v| (k, v)))
            .collect()
    }

    /// The names of the required properties.
    pub fn required(&self) -> &[String] {
        self.requested_schema.required.as_deref().unwrap_or(&[])
    }
}

/// Answers form-mode `elicitation/create`: presents the form, returns what the
/// user did. An `accept` answer is completed with the schema's defaults and
/// validated against the requested schema before it is sent; an answer that
/// does not match is not sent (the request fails with `-32603`, or
/// [`ClientError::Input`](crate::ClientError::Input) in a multi round-trip
/// request), so the application should check its form before returning.
///
/// A closure `|request| async move { … }` is one; so is a type with an
/// `async fn`:
///
/// ```
/// use tessera_client::{Client, FormHandler, FormRequest};
/// use tessera_types::{ElicitAction, ElicitResult, ErrorObject};
///
/// /// Dismisses every form (a client with no user at hand).
/// struct Unattended;
///
/// impl FormHandler for Unattended {
///     async fn elicit(&self, _request: FormRequest) -> Result<ElicitResult, ErrorObject> {
///         Ok(ElicitResult::action(ElicitAction::Cancel))
///     }
/// }
///
/// let builder = Client::builder("demo", "1.0.0").elicitation(Unattended);
/// # let _ = builder;
/// ```
pub trait FormHandler: Send + Sync + 'static {
    /// Asks the user.
    fn elicit(
        &self,
        request: FormRequest,
    ) -> impl Future<Output = Result<ElicitResult, ErrorObject>> + Send;
}

impl<F, Fut> FormHandler for F
where
    F: Fn(FormRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<ElicitResult, ErrorObject>> + Send,
{
    fn elicit(
        &self,
        request: FormRequest,
    ) -> impl Future<Output = Result<ElicitResult, ErrorObject>> + Send {
        self(request)
    }
}

/// [`FormHandler`] as the client holds it (behind a trait object).
pub(crate) trait HeldForm: Send + Sync + 'static {
    fn elicit_boxed(
        &self,
        request: FormRequest,
    ) -> BoxFuture<'_, Result<ElicitResult, ErrorObject>>;
}

impl<T: FormHandler> HeldForm for T {
    fn elicit_boxed(
        &self,
        request: FormRequest,
    ) -> BoxFuture<'_, Result<ElicitResult, ErrorObject>> {
        Box::pin(self.elicit(request))
    }
}

/// A URL-mode elicitation: the server wants the user to open a URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UrlRequest {
    /// Why the user should open it.
    pub message: String,
    /// The URL, in full (show all of it before asking for consent).
    pub url: String,
    /// The elicitation's id (2025-11-25; absent in 2026-07-28).
    pub elicitation_id: Option<String>,
}

impl UrlRequest {
    /// The host part of the URL, to highlight (guards against subdomain
    /// spoofing), or `None` when the URL has no `scheme://host` part.
    pub fn host(&self) -> Option<&str> {
        let (_, rest) = self.url.split_once("://")?;
        let authority = rest.split(['/', '?', '#']).next()?;
        let host_port = authority.rsplit('@').next()?;
        let host = if let Some(v6) = host_port.strip_prefix('[') {
            v6.split(']').next()?
        } else {
            host_port.split(':').next()?
        };
        (!host.is_empty()).then_some(host)
    }

    /// Whether the URL deserves a warning: not `https`, Punycode labels
    /// (`xn--`), non-ASCII characters, or embedded credentials.
    pub fn looks_suspicious(&self) -> bool {
        let lower = self.url.to_ascii_lowercase();
        let host = self.host().unwrap_or("").to_ascii_lowercase();
        !lower.starts_with("https://")
            || host.split('.').any(|l| l.starts_with("xn--"))
            || !self.url.is_ascii()
            || lower
                .split_once("://")
                .and_then(|(_, r)| r.split(['/', '?', '#']).next())
                .is_some_and(|a| a.contains('@'))
    }
}

/// Asks the user's consent to open a URL (URL-mode elicitation).
///
/// The library never opens, fetches or pre-fetches the URL: when the user
/// consents, the application opens it itself, in a way that keeps the page's
/// content away from the client and the model (a system browser), and returns
/// [`ElicitAction::Accept`]. `Decline` and `Cancel` are the user's refusal or
/// dismissal.
///
/// A closure `|request| async move { … }` is one; so is a type with an
/// `async fn`:
///
/// ```
/// use tessera_client::{Client, UrlConsent, UrlRequest};
/// use tessera_types::{ElicitAction, ErrorObject};
///
/// /// Refuses URLs that look suspicious, and leaves the others to the user.
/// struct Careful;
///
/// impl UrlConsent for Careful {
///     async fn consent(&self, request: UrlRequest) -> Result<ElicitAction, ErrorObject> {
///         if request.looks_suspicious() {
///             return Ok(ElicitAction::Decline);
///         }
///         Ok(ElicitAction::Cancel)
///     }
/// }
///
/// let builder = Client::builder("demo", "1.0.0").url_elicitation(Careful);
/// # let _ = builder;
/// ```
pub trait UrlConsent: Send + Sync + 'static {
    /// Shows the URL and asks.
    fn consent(
        &self,
        request: UrlRequest,
    ) -> impl Future<Output = Result<ElicitAction, ErrorObject>> + Send;
}

impl<F, Fut> UrlConsent for F
where
    F: Fn(UrlRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<ElicitAction, ErrorObject>> + Send,
{
    fn consent(
        &self,
        request: UrlRequest,
    ) -> impl Future<Output = Result<ElicitAction, ErrorObject>> + Send {
        self(request)
    }
}

/// [`UrlConsent`] as the client holds it (behind a trait object).
pub(crate) trait HeldConsent: Send + Sync + 'static {
    fn consent_boxed(
        &self,
        request: UrlRequest,
    ) -> BoxFuture<'_, Result<ElicitAction, ErrorObject>>;
}

impl<T: UrlConsent> HeldConsent for T {
    fn consent_boxed(
        &self,
        request: UrlRequest,
    ) -> BoxFuture<'_, Result<ElicitAction, ErrorObject>> {
        Box::pin(self.consent(request))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(u: &str) -> UrlRequest {
        UrlRequest {
            message: "m".into(),
            url: u.into(),
            elicitation_id: None,
        }
    }

    #[test]
    fn host_and_suspicion() {
        assert_eq!(
            url("https://mcp.example.com/x?y").host(),
            Some("mcp.example.com")
        );
        assert_eq!(url("https://u:p@h.example:8443/").host(), Some("h.example"));
        assert_eq!(url("https://[::1]:80/").host(), Some("::1"));
        assert_eq!(url("not a url").host(), None);
        assert!(!url("https://mcp.example.com/connect").looks_suspicious());
        assert!(url("http://mcp.example.com/").looks_suspicious());
        assert!(url("https://xn--pple-43d.com/").looks_suspicious());
        assert!(url("https://user@evil.example/").looks_suspicious());
    }
}
