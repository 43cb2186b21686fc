//! Argument completion (`completion/complete`).

use std::marker::PhantomData;

use tessera_runtime::{BoxFuture, HandlerResult, Request};
use tessera_types::{ErrorObject, ServerCapabilities};

use crate::prompt::PromptRegistry;
use crate::resource::ResourceRegistry;
use crate::server::{Server, ready};

/// The completion providers of a server.
pub(crate) struct CompletionRegistry<S> {
    _state: PhantomData<fn() -> S>,
}

impl<S> Default for CompletionRegistry<S> {
    fn default() -> Self {
        CompletionRegistry {
            _state: PhantomData,
        }
    }
}

impl<S> CompletionRegistry<S> {
    pub fn declare(
        &self,
        _caps: &mut ServerCapabilities,
        _prompts: &PromptRegistry<S>,
        _resources: &ResourceRegistry<S>,
    ) {
    }

    pub fn methods(
        &self,
        _prompts: &PromptRegistry<S>,
        _resources: &ResourceRegistry<S>,
    ) -> Vec<&'static str> {
        Vec::new()
    }
}

impl<S: Send + Sync + 'static> Server<S> {
    pub(crate) fn handle_completion(&self, r: Request) -> BoxFuture<'static, HandlerResult> {
        ready(Err(ErrorObject::method_not_found(&r.method)))
    }
}
