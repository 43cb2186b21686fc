//! [`prompt`], [`PromptBuilder`] and [`PromptRoute`]: describing a prompt.

use std::sync::Arc;

use tessera_types::{Icon, JsonObject, Prompt, PromptArgument};

use crate::completion::{CompletionHandler, ErasedCompleter, erase};
use crate::prompt::handler::{ErasedPromptHandler, PromptHandler};

/// Starts describing a prompt called `name`.
///
/// ```
/// use tessera_server::{PromptArgsMap, Server, prompt};
///
/// async fn review(PromptArgsMap(args): PromptArgsMap) -> String {
///     format!("Please review this code:\n{}", args["code"])
/// }
///
/// let server = Server::builder()
///     .prompt(
///         prompt("code_review")
///             .title("Request Code Review")
///             .description("Asks the model to review code")
///             .argument("code", "The code to review", true)
///             .handler(review),
///     )
///     .build()
///     .unwrap();
/// # let _ = server;
/// ```
pub fn prompt(name: impl Into<String>) -> PromptBuilder {
    PromptBuilder {
        prompt: Prompt::new(name),
        undeclared: false,
    }
}

/// Describes a prompt; finish with [`PromptBuilder::handler`].
#[derive(Debug, Clone)]
pub struct PromptBuilder {
    prompt: Prompt,
    undeclared: bool,
}

impl PromptBuilder {
    /// A human-readable title, for display (2025-06-18 and later).
    pub fn title(mut self, t: impl Into<String>) -> Self {
        self.prompt.title = Some(t.into());
        self
    }

    /// A description for the user choosing the prompt.
    pub fn description(mut self, d: impl Into<String>) -> Self {
        self.prompt.description = Some(d.into());
        self
    }

    /// Icons for display (2025-11-25 and later).
    pub fn icons(mut self, icons: Vec<Icon>) -> Self {
        self.prompt.icons = Some(icons);
        self
    }

    /// Declares an argument. Declared arguments replace those the handler's
    /// [`PromptArgs<T>`](crate::PromptArgs) would imply. Arguments are listed
    /// in the order declared.
    pub fn argument(
        self,
        name: impl Into<String>,
        description: impl Into<String>,
        required: bool,
    ) -> Self {
        let mut a = PromptArgument::new(name);
        a.description = Some(description.into());
        a.required = Some(required);
        self.argument_definition(a)
    }

    /// Declares an argument from its full definition (with a title, say).
    pub fn argument_definition(mut self, argument: PromptArgument) -> Self {
        self.prompt
            .arguments
            .get_or_insert_with(Vec::new)
            .push(argument);
        self
    }

    /// Accepts arguments the prompt does not declare (by default they are
    /// refused with `-32602`, since a misspelt argument is otherwise silently
    /// ignored). They reach the handler like the others.
    pub fn allow_undeclared_arguments(mut self) -> Self {
        self.undeclared = true;
        self
    }

    /// Reserved metadata (`_meta`) of the definition.
    pub fn meta(mut self, meta: JsonObject) -> Self {
        self.prompt.meta = Some(meta);
        self
    }

    /// Edits the definition directly.
    pub fn edit(mut self, f: impl FnOnce(&mut Prompt)) -> Self {
        f(&mut self.prompt);
        self
    }

    /// Attaches the handler: an async function whose parameters are
    /// extractors ([`PromptHandler`]). Without declared arguments, the
    /// arguments are those of the handler's [`PromptArgs<T>`](crate::PromptArgs).
    pub fn handler<H, M, S>(mut self, handler: H) -> PromptRoute<S>
    where
        H: PromptHandler<M, S>,
        S: Send + Sync + 'static,
    {
        if self.prompt.arguments.is_none() {
            self.prompt.arguments = H::arguments();
        }
        PromptRoute {
            prompt: self.prompt,
            undeclared: self.undeclared,
            handler: Arc::new(move |get| handler.call(get)),
            completers: Vec::new(),
        }
    }
}

/// A prompt ready to register: its definition, its handler and the
/// completion providers of its arguments.
pub struct PromptRoute<S> {
    pub(crate) prompt: Prompt,
    pub(crate) undeclared: bool,
    pub(crate) handler: ErasedPromptHandler<S>,
    pub(crate) completers: Vec<(String, ErasedCompleter<S>)>,
}

impl<S> std::fmt::Debug for PromptRoute<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PromptRoute")
            .field("prompt", &self.prompt)
            .field("undeclared", &self.undeclared)
            .finish_non_exhaustive()
    }
}

impl<S> PromptRoute<S> {
    /// The prompt's definition.
    pub fn definition(&self) -> &Prompt {
        &self.prompt
    }
}

impl<S: Send + Sync + 'static> PromptRoute<S> {
    /// Attaches the completion provider of the argument `argument` (see
    /// [`CompletionHandler`]). Registering the prompt fails if it does not
    /// declare that argument or if the argument gets two providers.
    pub fn complete<H, M>(mut self, argument: impl Into<String>, handler: H) -> Self
    where
        H: CompletionHandler<M, S>,
    {
        self.completers.push((argument.into(), erase(handler)));
        self
    }
}
