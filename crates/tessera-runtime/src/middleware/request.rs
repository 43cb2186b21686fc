//! What a layer reads from a request: its target, typed params, headers and
//! principal.

use tessera_types::{ClientRequest, DecodeError, ServerRequest, methods};

use crate::Principal;
use crate::service::Request;

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
