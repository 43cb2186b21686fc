//! [`resource`] and [`resource_template`]: describing resources and
//! attaching their handlers.

use std::sync::Arc;

use tessera_runtime::BoxFuture;
use tessera_types::{
    Annotations, Icon, JsonObject, ReadResourceResult, Resource, ResourceTemplate,
};

use super::extract::ResourceRead;
use super::handler::ResourceHandler;
use super::response::ResourceError;
use crate::extract::HandlerInput;

pub(crate) type ErasedReader<S> = Arc<
    dyn Fn(
            HandlerInput<S, ResourceRead>,
        ) -> BoxFuture<'static, Result<ReadResourceResult, ResourceError>>
        + Send
        + Sync,
>;

/// Starts describing the resource at `uri`, called `name`.
///
/// ```
/// use tessera_server::{Server, resource};
///
/// async fn readme() -> &'static str {
///     "# Tessera"
/// }
///
/// let server = Server::builder()
///     .resource(
///         resource("docs://readme", "readme")
///             .mime_type("text/markdown")
///             .handler(readme),
///     )
///     .build()
///     .unwrap();
/// ```
pub fn resource(uri: impl Into<String>, name: impl Into<String>) -> ResourceBuilder {
    ResourceBuilder {
        resource: Resource::new(uri, name),
    }
}

/// Starts describing the family of resources whose URIs match the RFC 6570
/// template `uri_template`, called `name`.
///
/// ```
/// use serde::Deserialize;
/// use tessera_server::{Server, Vars, resource_template};
///
/// #[derive(Deserialize)]
/// struct User {
///     id: u64,
/// }
///
/// async fn profile(Vars(u): Vars<User>) -> String {
///     format!("user {}", u.id)
/// }
///
/// let server = Server::builder()
///     .resource_template(resource_template("users://{id}/profile", "profile").handler(profile))
///     .build()
///     .unwrap();
/// ```
pub fn resource_template(
    uri_template: impl Into<String>,
    name: impl Into<String>,
) -> ResourceTemplateBuilder {
    ResourceTemplateBuilder {
        template: ResourceTemplate::new(uri_template, name),
    }
}

/// Describes a resource; finish with [`ResourceBuilder::handler`].
#[derive(Debug, Clone)]
pub struct ResourceBuilder {
    resource: Resource,
}

impl ResourceBuilder {
    /// A human-readable title (2025-06-18 and later).
    pub fn title(mut self, t: impl Into<String>) -> Self {
        self.resource.title = Some(t.into());
        self
    }

    /// A description, for the model and for people.
    pub fn description(mut self, d: impl Into<String>) -> Self {
        self.resource.description = Some(d.into());
        self
    }

    /// The MIME type; also the default type of the handler's contents.
    pub fn mime_type(mut self, m: impl Into<String>) -> Self {
        self.resource.mime_type = Some(m.into());
        self
    }

    /// The size in bytes, if known.
    pub fn size(mut self, bytes: u64) -> Self {
        self.resource.size = Some(bytes);
        self
    }

    /// Display hints (audience, priority, last modified).
    pub fn annotations(mut self, a: Annotations) -> Self {
        self.resource.annotations = Some(a);
        self
    }

    /// Icons (2025-11-25 and later).
    pub fn icons(mut self, icons: Vec<Icon>) -> Self {
        self.resource.icons = Some(icons);
        self
    }

    /// `_meta` of the definition.
    pub fn meta(mut self, meta: JsonObject) -> Self {
        self.resource.meta = Some(meta);
        self
    }

    /// Edits the definition directly.
    pub fn edit(mut self, f: impl FnOnce(&mut Resource)) -> Self {
        f(&mut self.resource);
        self
    }

    /// Attaches the handler: an async function whose parameters are
    /// extractors ([`FromRequest`](crate::FromRequest)) and whose
    /// output converts into contents
    /// ([`IntoResourceContents`](crate::IntoResourceContents)).
    pub fn handler<H, M, S>(self, handler: H) -> ResourceRoute<S>
    where
        H: ResourceHandler<M, S>,
        S: Send + Sync + 'static,
    {
        ResourceRoute {
            resource: self.resource,
            handler: Arc::new(move |input| handler.call(input)),
        }
    }
}

/// A resource ready to register: its definition and its handler.
pub struct ResourceRoute<S> {
    pub(crate) resource: Resource,
    pub(crate) handler: ErasedReader<S>,
}

impl<S> ResourceRoute<S> {
    /// The resource's definition.
    pub fn definition(&self) -> &Resource {
        &self.resource
    }
}

impl<S> std::fmt::Debug for ResourceRoute<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceRoute")
            .field("resource", &self.resource)
            .finish_non_exhaustive()
    }
}

/// Describes a resource template; finish with
/// [`ResourceTemplateBuilder::handler`].
#[derive(Debug, Clone)]
pub struct ResourceTemplateBuilder {
    template: ResourceTemplate,
}

impl ResourceTemplateBuilder {
    /// A human-readable title (2025-06-18 and later).
    pub fn title(mut self, t: impl Into<String>) -> Self {
        self.template.title = Some(t.into());
        self
    }

    /// A description, for the model and for people.
    pub fn description(mut self, d: impl Into<String>) -> Self {
        self.template.description = Some(d.into());
        self
    }

    /// The MIME type shared by the matching resources; also the default type
    /// of the handler's contents.
    pub fn mime_type(mut self, m: impl Into<String>) -> Self {
        self.template.mime_type = Some(m.into());
        self
    }

    /// Display hints (audience, priority, last modified).
    pub fn annotations(mut self, a: Annotations) -> Self {
        self.template.annotations = Some(a);
        self
    }

    /// Icons (2025-11-25 and later).
    pub fn icons(mut self, icons: Vec<Icon>) -> Self {
        self.template.icons = Some(icons);
        self
    }

    /// `_meta` of the definition.
    pub fn meta(mut self, meta: JsonObject) -> Self {
        self.template.meta = Some(meta);
        self
    }

    /// Edits the definition directly.
    pub fn edit(mut self, f: impl FnOnce(&mut ResourceTemplate)) -> Self {
        f(&mut self.template);
        self
    }

    /// Attaches the handler, which runs for every URI the template matches
    /// (take the variables with [`Vars`](crate::Vars) or
    /// [`UriVars`](crate::UriVars)).
    pub fn handler<H, M, S>(self, handler: H) -> ResourceTemplateRoute<S>
    where
        H: ResourceHandler<M, S>,
        S: Send + Sync + 'static,
    {
        ResourceTemplateRoute {
            template: self.template,
            handler: Arc::new(move |input| handler.call(input)),
        }
    }
}

/// A resource template ready to register: its definition and its handler.
pub struct ResourceTemplateRoute<S> {
    pub(crate) template: ResourceTemplate,
    pub(crate) handler: ErasedReader<S>,
}

impl<S> ResourceTemplateRoute<S> {
    /// The template's definition.
    pub fn definition(&self) -> &ResourceTemplate {
        &self.template
    }
}

impl<S> std::fmt::Debug for ResourceTemplateRoute<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceTemplateRoute")
            .field("template", &self.template)
            .finish_non_exhaustive()
    }
}
