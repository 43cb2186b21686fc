//! The reference server's prompts, and completion of their arguments.

use schemars::JsonSchema;
use serde::Deserialize;
use tessera::server::{PromptArgs, RequestContext, ServerBuilder, prompt};
use tessera::types::{
    ContentBlock, EmbeddedResource, GetPromptResult, ImageContent, PromptMessage, Role,
    TextResourceContents,
};

use super::media::png_base64;

/// The arguments of `test_prompt_with_arguments`.
#[derive(Debug, Deserialize, JsonSchema)]
struct TwoArgs {
    /// The first argument.
    arg1: String,
    /// The second argument.
    arg2: String,
}

/// The arguments of `test_prompt_with_embedded_resource`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct ResourceArg {
    /// The URI of the resource to embed.
    resource_uri: String,
}

async fn simple() -> &'static str {
    "This is a simple prompt for testing."
}

async fn with_arguments(PromptArgs(a): PromptArgs<TwoArgs>) -> String {
    format!(
        "Prompt with arguments: arg1='{}', arg2='{}'",
        a.arg1, a.arg2
    )
}

async fn with_embedded_resource(
    PromptArgs(a): PromptArgs<ResourceArg>,
) -> Result<Vec<PromptMessage>, String> {
    Ok(vec![
        PromptMessage {
            role: Role::User,
            content: ContentBlock::Resource(EmbeddedResource::new(
                TextResourceContents::new(a.resource_uri, "Embedded resource content for testing.")
                    .with_mime_type("text/plain"),
            )),
        },
        PromptMessage::user_text("Please process the embedded resource above."),
    ])
}

async fn with_image() -> Result<Vec<PromptMessage>, String> {
    Ok(vec![
        PromptMessage {
            role: Role::User,
            content: ContentBlock::Image(ImageContent::new(png_base64(), "image/png")),
        },
        PromptMessage::user_text("Please analyze the image above."),
    ])
}

async fn input_required(ctx: RequestContext) -> Result<GetPromptResult, String> {
    /// The answer to the form.
    #[derive(serde::Deserialize)]
    struct Context {
        context: String,
    }
    let form = super::mrtr::form(
        "What context should the prompt use?",
        super::mrtr::one_field("context"),
    )?;
    let answer = ctx
        .elicit_as("user_context", form)
        .await
        .map_err(|e| e.to_string())?;
    let context = super::mrtr::answers::<Context>(&answer)
        .map(|c| c.context)
        .unwrap_or_default();
    Ok(GetPromptResult::new(vec![PromptMessage::user_text(
        format!("Use this context: {context}"),
    )]))
}

async fn complete_arg1(req: tessera::server::CompletionRequest) -> Vec<String> {
    req.complete_from(["paris", "park", "parrot", "penguin", "python"])
}

/// Registers the prompts.
pub fn register(b: ServerBuilder<()>) -> ServerBuilder<()> {
    b.prompt(
        prompt("test_simple_prompt")
            .description("A simple prompt without arguments")
            .handler(simple),
    )
    .prompt(
        prompt("test_prompt_with_arguments")
            .description("A prompt with two required arguments")
            .handler(with_arguments)
            .complete("arg1", complete_arg1),
    )
    .prompt(
        prompt("test_prompt_with_embedded_resource")
            .description("A prompt that embeds a resource")
            .handler(with_embedded_resource),
    )
    .prompt(
        prompt("test_prompt_with_image")
            .description("A prompt that includes an image")
            .handler(with_image),
    )
    .prompt(
        prompt("test_input_required_result_prompt")
            .description("A prompt that asks the user for context first")
            .handler(input_required),
    )
}
