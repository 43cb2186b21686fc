//! Extractors of resource handlers: what a handler function can take as
//! parameters.

use std::collections::HashMap;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use tokio_util::sync::CancellationToken;

use super::response::ResourceError;
use super::template::VarValue;
use super::vars::from_vars;
use crate::context::RequestContext;
use crate::extract::State;

/// Everything a `resources/read` carries, before extraction.
#[derive(Debug)]
pub struct ResourceRead<S> {
    /// The URI asked for.
    pub uri: String,
    /// The URI template that matched (`None` for a fixed resource).
    pub template: Option<String>,
    /// The template's variables, percent-decoded (empty for a fixed resource).
    pub variables: HashMap<String, VarValue>,
    /// The MIME type declared by the resource or template.
    pub mime_type: Option<String>,
    /// The request context.
    pub context: RequestContext,
    /// The server's shared state.
    pub state: Arc<S>,
}

/// Something a resource handler can take as a parameter.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a parameter of a resource handler",
    label = "not a resource extractor",
    note = "each parameter of a resource handler is an extractor (`FromResourceRead<S>`), such as `Uri`, `Vars<T>`, `UriVars`, `RequestContext`, `State<S>`, `Peer` or `CancellationToken`"
)]
pub trait FromResourceRead<S>: Sized + Send {
    /// Extracts the value; an `Err` becomes the request's error response.
    fn from_resource_read(read: &mut ResourceRead<S>) -> Result<Self, ResourceError>;
}

/// The URI being read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Uri(pub String);

impl std::ops::Deref for Uri {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl<S> FromResourceRead<S> for Uri {
    fn from_resource_read(read: &mut ResourceRead<S>) -> Result<Self, ResourceError> {
        Ok(Uri(read.uri.clone()))
    }
}

/// The variables of the matched URI template, deserialised into `T`
/// (usually a struct with one field per variable).
///
/// Values are percent-decoded text: numbers, booleans, characters and
/// unit-variant enums are parsed from it; an exploded or comma-separated
/// value fills a `Vec`; `{?params*}` pairs fill a map; an undefined variable
/// is a missing field (use `Option` or `#[serde(default)]` for optional
/// ones). If the variables do not fit `T`, the read fails with `-32602`
/// naming the problem.
#[derive(Debug, Clone, PartialEq)]
pub struct Vars<T>(pub T);

impl<S, T: DeserializeOwned + Send> FromResourceRead<S> for Vars<T> {
    fn from_resource_read(read: &mut ResourceRead<S>) -> Result<Self, ResourceError> {
        from_vars(&read.variables).map(Vars).map_err(|e| {
            ResourceError::InvalidParams(match &read.template {
                Some(t) => format!("the URI does not fit the template {t}: {e}"),
                None => format!("the resource has no such variables: {e}"),
            })
        })
    }
}

/// The variables of the matched URI template as strings, percent-decoded;
/// list values are joined with `,` (see [`VarValue::joined`]). Undefined
/// variables are absent.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct UriVars(pub HashMap<String, String>);

impl<S> FromResourceRead<S> for UriVars {
    fn from_resource_read(read: &mut ResourceRead<S>) -> Result<Self, ResourceError> {
        Ok(UriVars(
            read.variables
                .iter()
                .map(|(k, v)| (k.clone(), v.joined()))
                .collect(),
        ))
    }
}

impl<S: Send + Sync> FromResourceRead<S> for State<S> {
    fn from_resource_read(read: &mut ResourceRead<S>) -> Result<Self, ResourceError> {
        Ok(State(read.state.clone()))
    }
}

impl<S> FromResourceRead<S> for RequestContext {
    fn from_resource_read(read: &mut ResourceRead<S>) -> Result<Self, ResourceError> {
        Ok(read.context.clone())
    }
}

impl<S> FromResourceRead<S> for tessera_runtime::Peer {
    fn from_resource_read(read: &mut ResourceRead<S>) -> Result<Self, ResourceError> {
        Ok(read.context.peer().clone())
    }
}

impl<S> FromResourceRead<S> for CancellationToken {
    fn from_resource_read(read: &mut ResourceRead<S>) -> Result<Self, ResourceError> {
        Ok(read.context.cancellation().clone())
    }
}
