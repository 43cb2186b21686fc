//! Prompts.

use std::marker::PhantomData;

use tessera_runtime::{BoxFuture, HandlerResult, Request};
use tessera_types::{ErrorObject, ServerCapabilities};

use crate::error::BuildError;
use crate::server::{Server, ready};

/// The prompts of a server.
pub(crate) struct PromptRegistry<S> {
    _state: PhantomData<fn() -> S>,
}

impl<S> Default for PromptRegistry<S> {
    fn default() -> Self {
        PromptRegistry {
            _state: PhantomData,
        }
    }
}

impl<S> PromptRegistry<S> {
    pub fn finish(&mut self) -> Result<(), BuildError> {
        Ok(())
    }

    pub fn declare(&self, _caps: &mut ServerCapabilities) {}

    pub fn methods(&self) -> Vec<&'static str> {
        Vec::new()
    }
}

impl<S: Send + Sync + 'static> Server<S> {
    pub(crate) fn handle_prompts(&self, r: Request) -> BoxFuture<'static, HandlerResult> {
        ready(Err(ErrorObject::method_not_found(&r.method)))
    }
}
