//! The completion providers of resource templates, the `completions`
//! capability, and the dispatch of `completion/complete`.
//!
//! Providers for prompt arguments live with the prompts
//! ([`PromptRegistry`]), so that a prompt removed at run time takes its
//! providers with it.

use serde_json::Value;
use tessera_runtime::{BoxFuture, ReplyResult, Request};
use tessera_types::methods;
use tessera_types::{
    CompleteRequestParams, CompleteResult, CompletionReference, ErrorObject, JsonObject,
    ServerCapabilities,
};

use crate::completion::completion_error;
use crate::completion::handler::{CompletionHandler, ErasedCompleter, erase, limit};
use crate::completion::request::{CompletionRequest, CompletionTarget};
use crate::context::RequestContext;
use crate::error::BuildError;
use crate::extract::{HandlerInput, RequestParts};
use crate::prompt::PromptRegistry;
use crate::resource::ResourceRegistry;
use crate::server::{Server, ServerBuilder, done, typed_reply};

struct TemplateCompleter<S> {
    template: String,
    variable: String,
    handler: ErasedCompleter<S>,
}

/// The completion providers of resource template variables.
pub(crate) struct CompletionRegistry<S> {
    templates: Vec<TemplateCompleter<S>>,
}

impl<S> Default for CompletionRegistry<S> {
    fn default() -> Self {
        CompletionRegistry {
            templates: Vec::new(),
        }
    }
}

impl<S> CompletionRegistry<S> {
    /// Adds the provider of `variable` of the URI template `template`.
    pub fn add_template(
        &mut self,
        template: String,
        variable: String,
        handler: ErasedCompleter<S>,
    ) -> Result<(), BuildError> {
        if template.is_empty() || variable.is_empty() {
            return Err(completion_error(
                &format!("{template} {{{variable}}}"),
                "the URI template and the variable must not be empty",
            ));
        }
        if self.template_completer(&template, &variable).is_some() {
            return Err(completion_error(
                &template,
                &format!("variable {variable:?} has two completion providers"),
            ));
        }
        self.templates.push(TemplateCompleter {
            template,
            variable,
            handler,
        });
        Ok(())
    }

    /// The provider of `variable` of `template`, if one was registered.
    pub fn template_completer(&self, template: &str, variable: &str) -> Option<ErasedCompleter<S>> {
        self.templates
            .iter()
            .find(|t| t.template == template && t.variable == variable)
            .map(|t| t.handler.clone())
    }

    /// Checks that every provider names a registered template and one of its
    /// variables. Meant to run in `ServerBuilder::build`, after the resources
    /// are finished.
    pub fn finish(
        &self,
        _prompts: &PromptRegistry<S>,
        resources: &ResourceRegistry<S>,
    ) -> Result<(), BuildError> {
        for t in &self.templates {
            if !resources.has_template_variable(&t.template, &t.variable) {
                return Err(completion_error(
                    &t.template,
                    &format!(
                        "there is no resource template {:?} with a variable {:?}",
                        t.template, t.variable
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Whether `completion/complete` is served: some prompt has arguments,
    /// some resource template exists, or some provider is registered.
    fn offered(&self, prompts: &PromptRegistry<S>, resources: &ResourceRegistry<S>) -> bool {
        !self.templates.is_empty() || prompts.wants_completion() || resources.has_templates()
    }

    /// Declares `completions: {}` when completion is offered.
    pub fn declare(
        &self,
        caps: &mut ServerCapabilities,
        prompts: &PromptRegistry<S>,
        resources: &ResourceRegistry<S>,
    ) {
        if self.offered(prompts, resources) {
            caps.completions = Some(JsonObject::new());
        }
    }

    /// `completion/complete` when completion is offered.
    pub fn methods(
        &self,
        prompts: &PromptRegistry<S>,
        resources: &ResourceRegistry<S>,
    ) -> Vec<&'static str> {
        if self.offered(prompts, resources) {
            vec![methods::COMPLETION_COMPLETE]
        } else {
            Vec::new()
        }
    }
}

impl<S: Send + Sync + 'static> ServerBuilder<S> {
    /// Registers the completion provider of the argument `argument` of the
    /// prompt `prompt` (see [`CompletionHandler`]). The prompt may be
    /// registered before or after; [`build`](ServerBuilder::build) fails if it
    /// does not exist or does not declare that argument, or if the argument
    /// already has a provider. [`PromptRoute::complete`](crate::PromptRoute::complete)
    /// does the same on the prompt itself.
    ///
    /// An argument without a provider is answered with an empty list.
    pub fn complete_prompt_argument<H, M>(
        mut self,
        prompt: impl Into<String>,
        argument: impl Into<String>,
        handler: H,
    ) -> Self
    where
        H: CompletionHandler<M, S>,
    {
        self.registry
            .prompts
            .add_pending_completer(prompt.into(), argument.into(), erase(handler));
        self
    }

    /// Registers the completion provider of the variable `variable` of the
    /// resource template `uri_template` (as written in the template, for
    /// example `"file:///{path}"` and `"path"`). The template may be
    /// registered before or after; two providers for the same variable are a
    /// build error. A request for a template that is not (or no longer)
    /// registered is refused with `-32602`.
    ///
    /// A template variable without a provider is answered with an empty list.
    pub fn complete_template_variable<H, M>(
        mut self,
        uri_template: impl Into<String>,
        variable: impl Into<String>,
        handler: H,
    ) -> Self
    where
        H: CompletionHandler<M, S>,
    {
        if let Err(e) = self.registry.completions.add_template(
            uri_template.into(),
            variable.into(),
            erase(handler),
        ) {
            self.errors.push(e);
        }
        self
    }
}

impl<S: Send + Sync + 'static> Server<S> {
    /// Serves `completion/complete`.
    ///
    /// Errors (`-32602`): a `ref.type` other than `ref/prompt` and
    /// `ref/resource`, malformed params, an unknown prompt or an argument the
    /// prompt does not declare, an unknown template or template variable.
    /// A known argument without a provider gets an empty list. A provider's
    /// answer is cut to 100 values, with `total` and `hasMore` set.
    pub(crate) fn handle_completion(&self, r: Request) -> BoxFuture<'static, ReplyResult> {
        if let Err(e) = check_reference_type(r.params.as_ref().map(tessera_types::Params::object)) {
            return done(Err(e));
        }
        let params: CompleteRequestParams = match tessera_types::decode_params(r.params.as_ref()) {
            Ok(p) => p,
            Err(e) => {
                return done(Err(ErrorObject::invalid_params(format!(
                    "Invalid params for completion/complete: {e}"
                ))));
            }
        };
        let argument = params.argument.name;
        let (target, handler) = {
            let reg = self.read();
            match params.reference {
                CompletionReference::Prompt(p) => {
                    if !reg.prompts.contains(&p.name) {
                        return done(Err(ErrorObject::invalid_params(format!(
                            "Unknown prompt: {}",
                            p.name
                        ))));
                    }
                    if !reg.prompts.has_argument(&p.name, &argument) {
                        return done(Err(ErrorObject::invalid_params(format!(
                            "Prompt {} has no argument {argument}",
                            p.name
                        ))));
                    }
                    let handler = reg.prompts.completer(&p.name, &argument);
                    (CompletionTarget::Prompt(p.name), handler)
                }
                CompletionReference::ResourceTemplate(t) => {
                    // The template must exist now: it may have been removed while serving.
                    if !reg.resources.has_template_variable(&t.uri, &argument) {
                        return done(Err(ErrorObject::invalid_params(format!(
                            "Unknown resource template variable: {argument} of {}",
                            t.uri
                        ))));
                    }
                    let handler = reg.completions.template_completer(&t.uri, &argument);
                    (CompletionTarget::ResourceTemplate(t.uri), handler)
                }
            }
        };
        let Some(handler) = handler else {
            return done(Ok(typed_reply(
                &limit(CompleteResult::new(Vec::new())),
                r.context.result_shape.as_ref(),
            )));
        };
        let input = HandlerInput {
            parts: RequestParts::new(self, RequestContext::from_request(&r)),
            body: CompletionRequest {
                target,
                argument,
                value: params.argument.value,
                arguments: params.context.and_then(|c| c.arguments).unwrap_or_default(),
            },
        };
        let shape = r.context.result_shape.clone();
        let fut = handler(input);
        Box::pin(async move { Ok(typed_reply(&limit(fut.await?), shape.as_ref())) })
    }
}

/// Refuses a reference type other than `ref/prompt` and `ref/resource` with a
/// message that says which ones exist.
fn check_reference_type(params: Option<&JsonObject>) -> Result<(), ErrorObject> {
    let reference = params.and_then(|p| p.get("ref"));
    match reference.and_then(|r| r.get("type")) {
        Some(Value::String(t)) if t == "ref/prompt" || t == "ref/resource" => Ok(()),
        Some(Value::String(t)) => Err(ErrorObject::invalid_params(format!(
            "Invalid params: unsupported reference type {t:?}; use \"ref/prompt\" or \"ref/resource\""
        ))),
        Some(_) => Err(ErrorObject::invalid_params(
            "Invalid params: ref.type must be a string",
        )),
        None => Err(ErrorObject::invalid_params(
            "Invalid params: completion/complete needs ref.type (\"ref/prompt\" or \"ref/resource\")",
        )),
    }
}
