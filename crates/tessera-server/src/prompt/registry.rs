//! The prompts of a server: registration and its checks, the capability,
//! run-time changes, and `prompts/list` and `prompts/get`.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use tessera_types::methods;

use tessera_runtime::ReplyResult;
use tessera_runtime::{BoxFuture, Request};
use tessera_types::{
    ErrorObject, GetPromptRequestParams, Prompt, PromptsCapability, ServerCapabilities,
};

use crate::completion::{ErasedCompleter, completion_error};
use crate::context::RequestContext;
use crate::error::BuildError;
use crate::extract::{HandlerInput, RequestParts};
use crate::hub::ListKind;
use crate::prompt::builder::PromptRoute;
use crate::prompt::extract::PromptGet;
use crate::prompt::handler::ErasedPromptHandler;
use crate::prompt::message::{check_messages, fit_to_version};
use crate::prompt::prompt_error;
use crate::server::{Server, ServerBuilder, done};

/// The longest prompt or argument name accepted, in characters.
const MAX_NAME_CHARS: usize = 128;

/// Checks a prompt name: 1 to 128 characters, no control characters and no
/// leading or trailing whitespace. (The protocol only asks for a unique
/// identifier; these limits keep names usable as slash commands and in logs.)
pub fn check_prompt_name(name: &str) -> Result<(), BuildError> {
    check_name(name).map_err(|problem| prompt_error(name, &format!("invalid name: {problem}")))
}

fn check_name(name: &str) -> Result<(), String> {
    let chars = name.chars().count();
    if chars == 0 {
        return Err("a name must not be empty".into());
    }
    if chars > MAX_NAME_CHARS {
        return Err(format!(
            "a name must be at most {MAX_NAME_CHARS} characters, not {chars}"
        ));
    }
    if name.chars().any(char::is_control) {
        return Err("a name must not contain control characters".into());
    }
    if name.trim() != name {
        return Err("a name must not start or end with whitespace".into());
    }
    Ok(())
}

/// A registered prompt: definition, handler, argument rules.
pub(crate) struct RegisteredPrompt<S> {
    pub prompt: Prompt,
    pub undeclared: bool,
    pub handler: ErasedPromptHandler<S>,
}

impl<S> RegisteredPrompt<S> {
    fn declares(&self, argument: &str) -> bool {
        self.prompt
            .arguments
            .iter()
            .flatten()
            .any(|a| a.name == argument)
    }

    /// Checks the arguments of a `prompts/get` before the handler runs:
    /// every required argument is given, and (unless the prompt accepts
    /// undeclared arguments) every given argument is declared.
    fn check_arguments(&self, given: &BTreeMap<String, String>) -> Result<(), ErrorObject> {
        let declared = self.prompt.arguments.as_deref().unwrap_or_default();
        let missing: Vec<&str> = declared
            .iter()
            .filter(|a| a.required == Some(true) && !given.contains_key(&a.name))
            .map(|a| a.name.as_str())
            .collect();
        if !missing.is_empty() {
            return Err(ErrorObject::invalid_params(format!(
                "Missing required argument{} for prompt {}: {}",
                plural(missing.len()),
                self.prompt.name,
                missing.join(", ")
            )));
        }
        if self.undeclared {
            return Ok(());
        }
        let unknown: Vec<&str> = given
            .keys()
            .filter(|k| !self.declares(k))
            .map(String::as_str)
            .collect();
        if !unknown.is_empty() {
            let accepted = if declared.is_empty() {
                "it takes no arguments".to_owned()
            } else {
                let names: Vec<&str> = declared.iter().map(|a| a.name.as_str()).collect();
                format!("it takes {}", names.join(", "))
            };
            return Err(ErrorObject::invalid_params(format!(
                "Unknown argument{} for prompt {}: {}; {accepted}",
                plural(unknown.len()),
                self.prompt.name,
                unknown.join(", ")
            )));
        }
        Ok(())
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Checks a definition: its name, and its arguments' names (valid, unique).
fn check_definition(prompt: &Prompt) -> Result<(), BuildError> {
    check_prompt_name(&prompt.name)?;
    let mut seen = HashSet::new();
    for a in prompt.arguments.iter().flatten() {
        check_name(&a.name).map_err(|problem| {
            prompt_error(
                &prompt.name,
                &format!("invalid argument name {:?}: {problem}", a.name),
            )
        })?;
        if !seen.insert(a.name.as_str()) {
            return Err(prompt_error(
                &prompt.name,
                &format!("two arguments are named {:?}", a.name),
            ));
        }
    }
    Ok(())
}

/// A completion provider registered on the builder, attached to its prompt
/// when the server is built.
struct PendingCompleter<S> {
    prompt: String,
    argument: String,
    handler: ErasedCompleter<S>,
}

/// The prompts of a server, in registration order (a deterministic order, so
/// clients see a stable list), with the completion providers of their
/// arguments.
pub(crate) struct PromptRegistry<S> {
    prompts: Vec<Arc<RegisteredPrompt<S>>>,
    index: HashMap<String, usize>,
    /// Prompt name → argument name → provider.
    completers: HashMap<String, HashMap<String, ErasedCompleter<S>>>,
    pending: Vec<PendingCompleter<S>>,
    dynamic: bool,
}

impl<S> Default for PromptRegistry<S> {
    fn default() -> Self {
        PromptRegistry {
            prompts: Vec::new(),
            index: HashMap::new(),
            completers: HashMap::new(),
            pending: Vec::new(),
            dynamic: false,
        }
    }
}

impl<S> PromptRegistry<S> {
    /// Attaches the providers registered with
    /// `ServerBuilder::complete_prompt_argument`, checking that each names a
    /// prompt and one of its arguments.
    pub fn finish(&mut self) -> Result<(), BuildError> {
        for p in std::mem::take(&mut self.pending) {
            if !self.contains(&p.prompt) {
                return Err(completion_error(
                    &p.prompt,
                    &format!(
                        "there is no prompt {:?} (argument {:?})",
                        p.prompt, p.argument
                    ),
                ));
            }
            self.attach(&p.prompt, p.argument, p.handler)?;
        }
        Ok(())
    }

    /// Declares `prompts: {listChanged: true}` when there are prompts (or
    /// [`ServerBuilder::dynamic_prompts`] asked for it).
    pub fn declare(&self, caps: &mut ServerCapabilities) {
        if self.offered() {
            caps.prompts = Some(PromptsCapability {
                list_changed: Some(true),
                ..Default::default()
            });
        }
    }

    /// `prompts/list` and `prompts/get` when prompts are offered.
    pub fn methods(&self) -> Vec<&'static str> {
        if self.offered() {
            vec![methods::PROMPTS_LIST, methods::PROMPTS_GET]
        } else {
            Vec::new()
        }
    }

    fn offered(&self) -> bool {
        self.dynamic || !self.prompts.is_empty()
    }

    /// Whether completion is wanted for prompts: some prompt has arguments or
    /// a provider, or prompts may be added while serving.
    pub fn wants_completion(&self) -> bool {
        self.dynamic
            || !self.completers.is_empty()
            || !self.pending.is_empty()
            || self
                .prompts
                .iter()
                .any(|p| p.prompt.arguments.as_ref().is_some_and(|a| !a.is_empty()))
    }

    /// Registers a prompt with the providers attached to its route. Nothing
    /// changes when any check fails.
    pub fn add(&mut self, route: PromptRoute<S>) -> Result<(), BuildError> {
        check_definition(&route.prompt)?;
        let name = route.prompt.name.clone();
        if self.index.contains_key(&name) {
            return Err(prompt_error(
                &name,
                &format!("two prompts are named {name:?}; prompt names must be unique"),
            ));
        }
        let mut completers: HashMap<String, ErasedCompleter<S>> = HashMap::new();
        let registered = RegisteredPrompt {
            prompt: route.prompt,
            undeclared: route.undeclared,
            handler: route.handler,
        };
        for (argument, handler) in route.completers {
            if !registered.declares(&argument) {
                return Err(completion_error(
                    &name,
                    &format!("prompt {name:?} declares no argument {argument:?}"),
                ));
            }
            if completers.insert(argument.clone(), handler).is_some() {
                return Err(completion_error(
                    &name,
                    &format!("argument {argument:?} has two completion providers"),
                ));
            }
        }
        self.index.insert(name.clone(), self.prompts.len());
        self.prompts.push(Arc::new(registered));
        if !completers.is_empty() {
            self.completers.insert(name, completers);
        }
        Ok(())
    }

    /// Records a provider to attach at [`PromptRegistry::finish`].
    pub fn add_pending_completer(
        &mut self,
        prompt: String,
        argument: String,
        handler: ErasedCompleter<S>,
    ) {
        self.pending.push(PendingCompleter {
            prompt,
            argument,
            handler,
        });
    }

    fn attach(
        &mut self,
        prompt: &str,
        argument: String,
        handler: ErasedCompleter<S>,
    ) -> Result<(), BuildError> {
        if !self.has_argument(prompt, &argument) {
            return Err(completion_error(
                prompt,
                &format!("prompt {prompt:?} declares no argument {argument:?}"),
            ));
        }
        let of_prompt = self.completers.entry(prompt.to_owned()).or_default();
        if of_prompt.contains_key(&argument) {
            return Err(completion_error(
                prompt,
                &format!("argument {argument:?} has two completion providers"),
            ));
        }
        of_prompt.insert(argument, handler);
        Ok(())
    }

    /// Removes a prompt and its providers; returns whether it existed.
    pub fn remove(&mut self, name: &str) -> bool {
        let Some(i) = self.index.remove(name) else {
            return false;
        };
        self.prompts.remove(i);
        for (n, p) in self.prompts.iter().enumerate().skip(i) {
            self.index.insert(p.prompt.name.clone(), n);
        }
        self.completers.remove(name);
        true
    }

    /// The prompt called `name`.
    pub fn get(&self, name: &str) -> Option<Arc<RegisteredPrompt<S>>> {
        self.index.get(name).map(|i| self.prompts[*i].clone())
    }

    /// Whether a prompt called `name` is registered.
    pub fn contains(&self, name: &str) -> bool {
        self.index.contains_key(name)
    }

    /// Whether the prompt `prompt` exists and declares the argument `argument`.
    pub fn has_argument(&self, prompt: &str, argument: &str) -> bool {
        self.get(prompt).is_some_and(|p| p.declares(argument))
    }

    /// The completion provider of an argument, if it has one.
    pub fn completer(&self, prompt: &str, argument: &str) -> Option<ErasedCompleter<S>> {
        self.completers.get(prompt)?.get(argument).cloned()
    }

    /// Every definition, in registration order.
    pub fn definitions(&self) -> Vec<Prompt> {
        self.prompts.iter().map(|p| p.prompt.clone()).collect()
    }
}

impl<S: Send + Sync + 'static> ServerBuilder<S> {
    /// Registers a prompt (see [`prompt`](crate::prompt())). An invalid or
    /// duplicate name, a duplicate argument, or a completion provider for an
    /// argument the prompt does not declare makes
    /// [`build`](ServerBuilder::build) fail.
    pub fn prompt(mut self, route: PromptRoute<S>) -> Self {
        if let Err(e) = self.registry.prompts.add(route) {
            self.errors.push(e);
        }
        self
    }

    /// Declares the `prompts` capability (with `listChanged`) and the
    /// `completions` capability even while no prompt is registered, so that
    /// prompts added later with [`Server::add_prompt`] reach clients that are
    /// already connected. (Capabilities and methods are fixed when a client
    /// connects.)
    pub fn dynamic_prompts(mut self) -> Self {
        self.registry.prompts.dynamic = true;
        self
    }
}

impl<S: Send + Sync + 'static> Server<S> {
    /// Adds a prompt while serving; clients that asked are told the list
    /// changed (`notifications/prompts/list_changed`).
    pub fn add_prompt(&self, route: PromptRoute<S>) -> Result<(), BuildError> {
        self.write().prompts.add(route)?;
        self.hub().list_changed(ListKind::Prompts);
        Ok(())
    }

    /// Removes a prompt (and its completion providers) while serving; returns
    /// whether it existed. Clients that asked are told the list changed.
    pub fn remove_prompt(&self, name: &str) -> bool {
        let removed = self.write().prompts.remove(name);
        if removed {
            self.hub().list_changed(ListKind::Prompts);
        }
        removed
    }

    pub(crate) fn list_prompts(&self, r: &Request) -> ReplyResult {
        let ctx = RequestContext::from_request(r);
        let cursor = crate::pagination::cursor_of(r.params.as_ref())?;
        let all = self.read().prompts.definitions();
        let (prompts, next_cursor) =
            self.pager()
                .page(methods::PROMPTS_LIST, &all, cursor.as_deref())?;
        let mut result = tessera_types::ListPromptsResult {
            prompts,
            next_cursor,
            ..Default::default()
        };
        self.hint(&ctx, &mut result);
        crate::extension::routes::write_result(&result, r.context.result_shape.as_ref())
    }

    pub(crate) fn get_prompt(&self, r: Request) -> BoxFuture<'static, ReplyResult> {
        let params: GetPromptRequestParams = match tessera_types::decode_params(
            crate::mrtr::without_round_fields(r.params.as_ref()).as_ref(),
        ) {
            Ok(p) => p,
            Err(e) => {
                return done(Err(ErrorObject::invalid_params(format!(
                    "Invalid params for prompts/get: {e}"
                ))));
            }
        };
        let Some(prompt) = self.read().prompts.get(&params.name) else {
            return done(Err(ErrorObject::invalid_params(format!(
                "Unknown prompt: {}",
                params.name
            ))));
        };
        let arguments = params.arguments.unwrap_or_default();
        if let Err(e) = prompt.check_arguments(&arguments) {
            return done(Err(e));
        }
        // 2026-07-28: the answers a retry brings (refused before the handler
        // runs when the sealed state is bad).
        let input = match self.prepare_input(&r) {
            Ok(i) => i,
            Err(e) => return done(Err(e)),
        };
        let mut context = RequestContext::from_request(&r);
        context.input = Some(input.clone());
        let version = context.protocol_version();
        let get = HandlerInput {
            parts: RequestParts::new(self, context),
            body: PromptGet {
                name: params.name,
                arguments,
            },
        };
        let fut = (prompt.handler)(get);
        let server = self.clone();
        let principal = crate::mrtr::principal(&r);
        let shape = r.context.result_shape.clone();
        Box::pin(async move {
            let run = async move {
                let mut result = fut.await?;
                let name = &prompt.prompt.name;
                check_messages(&result.messages).map_err(|problem| {
                    ErrorObject::internal(format!(
                        "Internal error: prompt {name} produced an invalid message: {problem}"
                    ))
                })?;
                fit_to_version(&mut result.messages, version).map_err(|problem| {
                    ErrorObject::internal(format!("Internal error: prompt {name}: {problem}"))
                })?;
                if result.description.is_none() {
                    result.description = prompt.prompt.description.clone();
                }
                Ok(crate::server::typed_reply(&result, shape.as_ref()))
            };
            // A handler that asks the client for input (elicitation, sampling,
            // roots) is answered with an InputRequiredResult in 2026-07-28.
            server
                .run_with_input(&r.method, r.params.as_ref(), principal, input, run)
                .await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert!(check_prompt_name("code_review").is_ok());
        assert!(check_prompt_name("Code review ✓").is_ok());
        assert!(check_prompt_name("").is_err());
        assert!(check_prompt_name(" padded").is_err());
        assert!(check_prompt_name("line\nbreak").is_err());
        assert!(check_prompt_name(&"x".repeat(129)).is_err());
        assert!(check_prompt_name(&"é".repeat(128)).is_ok());
    }
}
