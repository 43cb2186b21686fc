//! What a layer reads from a request or a notification: its target, typed
//! params, headers and principal.

use tessera_types::{ClientRequest, DecodeError, ServerRequest, methods};

use crate::Principal;
use crate::service::{Message, Notification, Request};

impl Request {
    /// What the request is about: the tool or prompt name of `tools/call`
    /// and `prompts/get`, the URI of `resources/read`,
    /// `resources/subscribe` and `resources/unsubscribe`; `None` for other
    /// methods or when the params lack it.
    pub fn target(&self) -> Option<&str> {
        let key = match self.method.as_str() {
            methods::TOOLS_CALL | methods::PROMPTS_GET => "name",
            methods::RESOURCES_READ
            | methods::RESOURCES_SUBSCRIBE
            | methods::RESOURCES_UNSUBSCRIBE => "uri",
            _ => return None,
        };
        self.params.as_ref()?.get(key)?.as_str()
    }

    /// Decodes the params as those of method `R` (the method name is not
    /// checked).
    pub fn params_as<R: tessera_types::RequestMethod>(
        &self,
    ) -> Result<R::Params, serde_json::Error> {
        tessera_types::decode_params(self.params.as_ref())
    }

    /// The request as a typed client request (what a server serves).
    pub fn client_request(&self) -> Result<ClientRequest, DecodeError> {
        ClientRequest::decode(&self.method, self.params.as_ref())
    }

    /// The request as a typed server request (what a client serves).
    pub fn server_request(&self) -> Result<ServerRequest, DecodeError> {
        ServerRequest::decode(&self.method, self.params.as_ref())
    }

    /// The HTTP headers the request came with, over HTTP.
    pub fn headers(&self) -> Option<&http::HeaderMap> {
        self.extensions.get::<http::HeaderMap>()
    }

    /// Who made the request, when the transport authenticated it.
    pub fn principal(&self) -> Option<&Principal> {
        self.extensions.get::<Principal>()
    }

    /// A value the transport (or an outer layer) attached to the request.
    pub fn extension<T: std::any::Any + Send + Sync>(&self) -> Option<&T> {
        self.extensions.get::<T>()
    }
}

impl Notification {
    /// Decodes the params as those of notification `N` (the method name is
    /// not checked).
    pub fn params_as<N: tessera_types::NotificationMethod>(
        &self,
    ) -> Result<N::Params, serde_json::Error> {
        serde_json::from_value(serde_json::Value::Object(
            self.params.clone().unwrap_or_default(),
        ))
    }

    /// The HTTP headers the notification came with, over HTTP.
    pub fn headers(&self) -> Option<&http::HeaderMap> {
        self.extensions.get::<http::HeaderMap>()
    }

    /// Who sent the notification, when the transport authenticated it.
    pub fn principal(&self) -> Option<&Principal> {
        self.extensions.get::<Principal>()
    }

    /// A value the transport (or an outer layer) attached to the notification.
    pub fn extension<T: std::any::Any + Send + Sync>(&self) -> Option<&T> {
        self.extensions.get::<T>()
    }
}

impl Message {
    /// The method.
    pub fn method(&self) -> &str {
        match self {
            Message::Request(r) => &r.method,
            Message::Notification(n) => &n.method,
        }
    }

    /// Whether this is a notification (it gets no answer).
    pub fn is_notification(&self) -> bool {
        matches!(self, Message::Notification(_))
    }

    /// What the transport attached to the message.
    pub fn extensions(&self) -> &crate::Extensions {
        match self {
            Message::Request(r) => &r.extensions,
            Message::Notification(n) => &n.extensions,
        }
    }

    /// The HTTP headers the message came with, over HTTP.
    pub fn headers(&self) -> Option<&http::HeaderMap> {
        self.extensions().get::<http::HeaderMap>()
    }

    /// Who sent the message, when the transport authenticated it.
    pub fn principal(&self) -> Option<&Principal> {
        self.extensions().get::<Principal>()
    }

    /// A value the transport (or an outer layer) attached to the message.
    pub fn extension<T: std::any::Any + Send + Sync>(&self) -> Option<&T> {
        self.extensions().get::<T>()
    }
}
