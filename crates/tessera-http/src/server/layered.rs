//! [`LayeredFactory`]: any [`ServiceFactory`] with MCP middleware over its
//! services (a proxy's telemetry, say).

use std::sync::Arc;

use tessera_proto::EngineConfig;
use tessera_runtime::middleware::{Layered, MiddlewareStack};

use super::{ServiceFactory, ToolHeaders};
use tessera_runtime::{DynBus, StoreError};

/// A [`ServiceFactory`] whose services' requests go through `stack` first;
/// everything else is the inner factory's.
#[derive(Debug, Clone)]
pub struct LayeredFactory<F> {
    inner: F,
    stack: MiddlewareStack,
}

impl<F: ServiceFactory> LayeredFactory<F> {
    /// Wraps `inner`'s services with `stack`.
    pub fn new(inner: F, stack: MiddlewareStack) -> Self {
        LayeredFactory { inner, stack }
    }
}

impl<F: ServiceFactory> ServiceFactory for LayeredFactory<F> {
    type Service = Layered<F::Service>;

    fn make(&self) -> (EngineConfig, Self::Service) {
        let (config, service) = self.inner.make();
        (config, Layered::new(service, self.stack.clone()))
    }

    fn make_shared(&self) -> (Arc<EngineConfig>, Arc<Self::Service>) {
        let (config, service) = self.inner.make_shared();
        (
            config,
            Arc::new(Layered::from_arc(service, self.stack.clone())),
        )
    }

    fn make_session(&self) -> (Arc<EngineConfig>, Arc<Self::Service>) {
        let (config, service) = self.inner.make_session();
        (
            config,
            Arc::new(Layered::from_arc(service, self.stack.clone())),
        )
    }

    fn tool_param_headers(&self, name: &str) -> ToolHeaders {
        self.inner.tool_param_headers(name)
    }

    fn share_events(
        &self,
        bus: Arc<dyn DynBus>,
    ) -> impl Future<Output = Result<(), StoreError>> + Send {
        self.inner.share_events(bus)
    }
}
