//! The reference server's resources: static text and binary, a template, and
//! a resource whose changes can be subscribed to.

use serde::Deserialize;
use tessera::server::{Blob, ServerBuilder, Vars, resource, resource_template};

use super::media::PNG;

/// The variables of `test://template/{id}/data`.
#[derive(Debug, Deserialize)]
struct TemplateVars {
    id: String,
}

async fn static_text() -> &'static str {
    "This is the content of the static text resource."
}

async fn static_binary() -> Blob {
    Blob(PNG.to_vec())
}

async fn template_data(Vars(v): Vars<TemplateVars>) -> String {
    /// The template resource's text.
    #[derive(serde::Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Data<'a> {
        data: String,
        id: &'a str,
        template_test: bool,
    }
    serde_json::to_string(&Data {
        data: format!("Data for ID: {}", v.id),
        id: &v.id,
        template_test: true,
    })
    .unwrap_or_default()
}

async fn watched() -> &'static str {
    "This resource can be subscribed to; the server announces its updates."
}

async fn example() -> &'static str {
    "This is an example resource, embedded by test_prompt_with_embedded_resource."
}

/// Registers the resources.
pub fn register(b: ServerBuilder<()>) -> ServerBuilder<()> {
    b.resource(
        resource("test://static-text", "Static Text Resource")
            .description("A static text resource for testing")
            .mime_type("text/plain")
            .handler(static_text),
    )
    .resource(
        resource("test://static-binary", "Static Binary Resource")
            .description("A static binary resource (a PNG image) for testing")
            .mime_type("image/png")
            .handler(static_binary),
    )
    .resource(
        resource("test://watched-resource", "Watched Resource")
            .description("A resource that can be subscribed to")
            .mime_type("text/plain")
            .handler(watched),
    )
    .resource(
        resource("test://example-resource", "Example Resource")
            .description("A resource embedded in prompts")
            .mime_type("text/plain")
            .handler(example),
    )
    .resource_template(
        resource_template("test://template/{id}/data", "Template Resource")
            .description("A resource template with an id variable")
            .mime_type("application/json")
            .handler(template_data),
    )
}
