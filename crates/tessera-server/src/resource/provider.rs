//! [`ResourceProvider`]: a source of many resources at once (a directory, a
//! database), listed and read on demand.

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
pub trait ResourceProvider: Send + Sync + 'static {
    /// The resources to list, in a stable order (pagination counts on it).
    fn list(&self) -> BoxFuture<'static, Result<Vec<Resource>, ResourceError>>;

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
    ) -> Option<BoxFuture<'static, Result<ReadResourceResult, ResourceError>>>;
}
