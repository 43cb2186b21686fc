//! [`ResourceProvider`]: a source of many resources at once (a directory, a
//! database), listed and read on demand; [`SharedProvider`], one as an
//! extension hands it over.

use std::future::Future;
use std::sync::Arc;

use tessera_runtime::BoxFuture;
use tessera_types::{ReadResourceResult, Resource, ResourceTemplate};

use super::response::ResourceError;
use crate::context::RequestContext;

/// A source of resources that are listed and read on demand rather than
/// registered one by one. Register one with
/// [`ServerBuilder::resources_from`](crate::ServerBuilder::resources_from);
/// [`FsResources`](crate::FsResources) is one.
///
/// `resources/list` shows the registered resources first, then each
/// provider's in registration order. `resources/read` tries the registered
/// resources (exact URI), then the providers, then the templates: the first
/// provider whose [`read`](ResourceProvider::read) returns `Some` answers.
///
/// Implement it with `async fn`s:
///
/// ```
/// use tessera_server::{ResourceError, ResourceProvider};
/// use tessera_server::{RequestContext, Server};
/// use tessera_types::{ReadResourceResult, Resource, ResourceContents, TextResourceContents};
///
/// /// Notes kept in memory, under `note:///`.
/// struct Notes(Vec<(String, String)>);
///
/// impl ResourceProvider for Notes {
///     async fn list(&self) -> Result<Vec<Resource>, ResourceError> {
///         Ok(self
///             .0
///             .iter()
///             .map(|(name, _)| Resource::new(format!("note:///{name}"), name.clone()))
///             .collect())
///     }
///
///     async fn read(
///         &self,
///         uri: &str,
///         _context: &RequestContext,
///     ) -> Option<Result<ReadResourceResult, ResourceError>> {
///         let name = uri.strip_prefix("note:///")?;
///         let text = self.0.iter().find(|(n, _)| n == name).map(|(_, t)| t.clone());
///         Some(match text {
///             Some(t) => Ok(ReadResourceResult::new(vec![ResourceContents::Text(
///                 TextResourceContents::new(uri, t),
///             )])),
///             None => Err(ResourceError::NotFound),
///         })
///     }
/// }
///
/// let server = Server::builder()
///     .resources_from(Notes(vec![("todo".into(), "write docs".into())]))
///     .build();
/// # let _ = server;
/// ```
pub trait ResourceProvider: Send + Sync + 'static {
    /// The resources to list, in a stable order (pagination counts on it).
    fn list(&self) -> impl Future<Output = Result<Vec<Resource>, ResourceError>> + Send;

    /// Templates describing the provider's URIs, for `resources/templates/list`
    /// (and for completion). None by default.
    fn templates(&self) -> Vec<ResourceTemplate> {
        Vec::new()
    }

    /// Reads `uri` if it is this provider's (`None` lets the next source
    /// answer). A provider that claims a URI answers for it, including
    /// "not found".
    fn read(
        &self,
        uri: &str,
        context: &RequestContext,
    ) -> impl Future<Output = Option<Result<ReadResourceResult, ResourceError>>> + Send;
}

impl<P: ResourceProvider> ResourceProvider for Arc<P> {
    fn list(&self) -> impl Future<Output = Result<Vec<Resource>, ResourceError>> + Send {
        (**self).list()
    }
    fn templates(&self) -> Vec<ResourceTemplate> {
        (**self).templates()
    }
    fn read(
        &self,
        uri: &str,
        context: &RequestContext,
    ) -> impl Future<Output = Option<Result<ReadResourceResult, ResourceError>>> + Send {
        (**self).read(uri, context)
    }
}

/// [`ResourceProvider`] as the server holds it (behind a trait object, one
/// box per call).
pub(crate) trait HeldProvider: Send + Sync + 'static {
    fn list_boxed(&self) -> BoxFuture<'_, Result<Vec<Resource>, ResourceError>>;
    fn templates(&self) -> Vec<ResourceTemplate>;
    fn read_boxed<'a>(
        &'a self,
        uri: &'a str,
        context: &'a RequestContext,
    ) -> BoxFuture<'a, Option<Result<ReadResourceResult, ResourceError>>>;
}

impl<P: ResourceProvider> HeldProvider for P {
    fn list_boxed(&self) -> BoxFuture<'_, Result<Vec<Resource>, ResourceError>> {
        Box::pin(self.list())
    }
    fn templates(&self) -> Vec<ResourceTemplate> {
        ResourceProvider::templates(self)
    }
    fn read_boxed<'a>(
        &'a self,
        uri: &'a str,
        context: &'a RequestContext,
    ) -> BoxFuture<'a, Option<Result<ReadResourceResult, ResourceError>>> {
        Box::pin(self.read(uri, context))
    }
}

/// A [`ResourceProvider`] as a
/// [`ServerExtension`](crate::extension::ServerExtension) hands it to the
/// server (its [`resources`](crate::extension::ServerExtension::resources)).
#[derive(Clone)]
pub struct SharedProvider(pub(crate) Arc<dyn HeldProvider>);

impl SharedProvider {
    /// Wraps `provider` (an `Arc` of a provider is one too).
    pub fn new(provider: impl ResourceProvider) -> Self {
        SharedProvider(Arc::new(provider))
    }
}

impl std::fmt::Debug for SharedProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedProvider").finish_non_exhaustive()
    }
}
