//! Client-side handlers with known answers, for tests in which a server asks
//! the client something (sampling, elicitation, roots).

use std::collections::BTreeMap;
use std::future::Future;

use tessera_client::{Client, ClientBuilder, FormRequest};
use tessera_types::{
    CreateMessageRequestParams, CreateMessageResult, ElicitResult, ElicitValue, ErrorObject,
    ProtocolVersion, Root,
};

/// A client builder named `tessera-tests` pinned to `version`.
pub fn builder(version: ProtocolVersion) -> ClientBuilder {
    Client::builder("tessera-tests", "1.0").protocol_version(version)
}

/// A builder pinned to `version` with every handler set: [`two_roots`],
/// sampling by [`paris`], elicitation by [`fill_required`].
pub fn full_builder(version: ProtocolVersion) -> ClientBuilder {
    builder(version)
        .roots(two_roots())
        .sampling(paris)
        .elicitation(fill_required)
}

/// A form handler that fills every required property with `"{prop}-value"`
/// (`true` for booleans), leaving optional properties out.
pub fn fill_required(form: FormRequest) -> impl Future<Output = Result<ElicitResult, ErrorObject>> {
    let mut content = BTreeMap::new();
    for name in form.required() {
        let kind = form.raw_schema["properties"][name]["type"]
            .as_str()
            .unwrap_or("string");
        let v = match kind {
            "boolean" => ElicitValue::Boolean(true),
            _ => ElicitValue::String(format!("{name}-value")),
        };
        content.insert(name.clone(), v);
    }
    async move { Ok(ElicitResult::accept(content)) }
}

/// A sampling handler that answers `"Paris"` as model `test-model`.
pub async fn paris(_: CreateMessageRequestParams) -> Result<CreateMessageResult, ErrorObject> {
    Ok(CreateMessageResult::text("test-model", "Paris"))
}

/// Two roots: `file:///home/user/project` (named "Project") and
/// `file:///home/user/notes`.
pub fn two_roots() -> Vec<Root> {
    vec![
        Root::new("file:///home/user/project").with_name("Project"),
        Root::new("file:///home/user/notes"),
    ]
}
