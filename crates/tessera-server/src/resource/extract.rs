//! The body of a `resources/read` and the extractors that read it.

use std::collections::HashMap;

use serde::de::DeserializeOwned;

use super::template::VarValue;
use super::vars::from_vars;
use crate::extract::{FromRequest, HandlerInput, Rejection, RequestBody};

/// The body of a `resources/read`: what it carries beyond the
/// [`RequestParts`](crate::RequestParts).
#[derive(Debug, Clone)]
pub struct ResourceRead {
    /// The URI asked for.
    pub uri: String,
    /// The URI template that matched (`None` for a fixed resource).
    pub template: Option<String>,
    /// The template's variables, percent-decoded (empty for a fixed resource).
    pub variables: HashMap<String, VarValue>,
    /// The MIME type declared by the resource or template.
    pub mime_type: Option<String>,
}

impl RequestBody for ResourceRead {
    /// Resource extractors declare nothing.
    type Declaration = ();
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

impl<S> FromRequest<S, ResourceRead> for Uri {
    fn from_request(input: &mut HandlerInput<S, ResourceRead>) -> Result<Self, Rejection> {
        Ok(Uri(input.body.uri.clone()))
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

impl<S, T: DeserializeOwned + Send> FromRequest<S, ResourceRead> for Vars<T> {
    fn from_request(input: &mut HandlerInput<S, ResourceRead>) -> Result<Self, Rejection> {
        let read = &input.body;
        from_vars(&read.variables).map(Vars).map_err(|e| {
            Rejection::InvalidParams(match &read.template {
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

impl<S> FromRequest<S, ResourceRead> for UriVars {
    fn from_request(input: &mut HandlerInput<S, ResourceRead>) -> Result<Self, Rejection> {
        Ok(UriVars(
            input
                .body
                .variables
                .iter()
                .map(|(k, v)| (k.clone(), v.joined()))
                .collect(),
        ))
    }
}
