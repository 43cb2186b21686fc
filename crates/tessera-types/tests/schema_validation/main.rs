//! Values built with the Rust types validate against the official schema of
//! every version they claim to fit, and values missing what a version
//! requires do not.
//!
//! Each fixture lists the versions it is meant for: members that only
//! exist in newer versions are set only in fixtures for those versions
//! (older schemas mostly allow extra members, so a few negative checks
//! make sure the validator really looks).

#[path = "../spec/mod.rs"]
mod spec;

mod client_features;
mod content;
mod envelope;
mod lifecycle;
mod modern;
mod server_features;
mod task_handles;

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Value, json};
use tessera_types::*;

use spec::{EXT_TASKS, VERSIONS, validation_errors};

// ---------------------------------------------------------------------------
// Harness

/// Collects failures so one run reports all of them.
struct Ctx {
    checks: usize,
    failures: Vec<String>,
}

impl Ctx {
    fn new() -> Self {
        Ctx {
            checks: 0,
            failures: Vec::new(),
        }
    }

    fn to_json<T: Serialize>(value: &T) -> Value {
        serde_json::to_value(value).expect("fixture serialises")
    }

    /// `value` must be valid against `def` in every source of `sources`.
    fn valid<T: Serialize>(&mut self, sources: &[&str], def: &str, value: &T) {
        let v = Self::to_json(value);
        for s in sources {
            self.checks += 1;
            let errors = validation_errors(s, def, &v);
            if !errors.is_empty() {
                self.failures
                    .push(format!("{s} {def}: {}\n    value: {v}", errors.join("; ")));
            }
        }
    }

    /// `value` must be invalid against `def` in every source of `sources`.
    fn invalid<T: Serialize>(&mut self, sources: &[&str], def: &str, value: &T) {
        let v = Self::to_json(value);
        for s in sources {
            self.checks += 1;
            if validation_errors(s, def, &v).is_empty() {
                self.failures
                    .push(format!("{s} {def}: unexpectedly valid\n    value: {v}"));
            }
        }
    }

    /// A request message for marker `R` must validate as `def`.
    fn request<R: RequestMethod>(&mut self, sources: &[&str], def: &str, params: &R::Params) {
        let msg = JsonRpcMessage::typed_request::<R>(RequestId::Number(1), params).unwrap();
        self.valid(sources, def, &msg);
        self.valid(&with_envelope(sources), "JSONRPCMessage", &msg);
    }

    /// A notification message for marker `N` must validate as `def`.
    fn notification<N: NotificationMethod>(
        &mut self,
        sources: &[&str],
        def: &str,
        params: &N::Params,
    ) {
        let msg = JsonRpcMessage::typed_notification::<N>(params).unwrap();
        self.valid(sources, def, &msg);
        self.valid(&with_envelope(sources), "JSONRPCMessage", &msg);
    }

    /// A result response with `result` must validate as `def` (2026-07-28
    /// `*ResultResponse` definitions).
    fn response<T: Serialize>(&mut self, sources: &[&str], def: &str, result: &T) {
        let msg = JsonRpcMessage::typed_result(RequestId::from("r-1"), result).unwrap();
        self.valid(sources, def, &msg);
        self.valid(&with_envelope(sources), "JSONRPCMessage", &msg);
    }

    fn finish(self) {
        eprintln!("{} schema checks run", self.checks);
        assert!(
            self.failures.is_empty(),
            "{} of {} schema checks failed:\n\n{}",
            self.failures.len(),
            self.checks,
            self.failures.join("\n\n")
        );
        assert!(self.checks > 0);
    }
}

/// The sources among `sources` that define the JSON-RPC message union
/// (the Tasks extension's schema does not).
fn with_envelope<'a>(sources: &[&'a str]) -> Vec<&'a str> {
    sources
        .iter()
        .copied()
        .filter(|s| spec::has_definition(s, "JSONRPCMessage"))
        .collect()
}

/// Versions from `first` on.
fn since(first: &str) -> Vec<&'static str> {
    VERSIONS.iter().copied().filter(|v| *v >= first).collect()
}

/// Versions up to and including `last`.
fn until(last: &str) -> Vec<&'static str> {
    VERSIONS.iter().copied().filter(|v| *v <= last).collect()
}

const ALL: &[&str] = &VERSIONS;
const LEGACY: &[&str] = &["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];
const MODERN: &[&str] = &["2026-07-28"];
const V2025_11_25: &[&str] = &["2025-11-25"];
const EXT: &[&str] = &[EXT_TASKS];

fn obj(v: Value) -> JsonObject {
    match v {
        Value::Object(m) => m,
        other => panic!("not an object: {other}"),
    }
}

fn icon_full() -> Icon {
    Icon {
        src: "https://example.com/icon.png".into(),
        mime_type: Some("image/png".into()),
        sizes: Some(vec!["48x48".into(), "any".into()]),
        theme: Some(IconTheme::Dark),
    }
}

fn implementation_full() -> Implementation {
    Implementation::new("tessera-test", "1.2.3")
        .with_title("Tessera Test")
        .with_description("A test implementation")
        .with_website_url("https://example.com")
        .with_icons(vec![
            icon_full(),
            Icon {
                theme: Some(IconTheme::Light),
                ..Icon::new("data:image/png;base64,iVBORw0KGgo=")
            },
        ])
}

/// The `_meta` a request must carry in `version`.
fn request_meta(version: &str) -> Option<JsonObject> {
    if version >= "2026-07-28" {
        Some(
            RequestMeta::modern(ProtocolVersion::V2026_07_28, ClientCapabilities::default())
                .with_client_info(Implementation::new("client", "1.0"))
                .into_meta(),
        )
    } else {
        None
    }
}

fn meta_with_progress() -> JsonObject {
    RequestMeta::default()
        .with_progress_token(ProgressToken::from("tok-1"))
        .into_meta()
}

fn annotations_full() -> Annotations {
    Annotations {
        audience: Some(vec![Role::User, Role::Assistant]),
        priority: Some(0.5),
        last_modified: Some("2025-01-12T15:00:58Z".into()),
    }
}

fn annotations_2024() -> Annotations {
    Annotations {
        audience: Some(vec![Role::User]),
        priority: Some(1.0),
        last_modified: None,
    }
}

fn some_meta() -> Option<JsonObject> {
    Some(obj(json!({"com.example/trace": "abc", "n": 1})))
}

/// Every content block that exists in `version`, with every member it has there.
fn content_blocks(version: &str) -> Vec<ContentBlock> {
    let newer = version >= "2025-06-18";
    let ann = if version >= "2025-06-18" {
        annotations_full()
    } else {
        annotations_2024()
    };
    let meta = if newer { some_meta() } else { None };
    let mut blocks = vec![
        ContentBlock::Text(TextContent {
            annotations: Some(ann.clone()),
            meta: meta.clone(),
            ..TextContent::new("hello")
        }),
        ContentBlock::Image(ImageContent {
            annotations: Some(ann.clone()),
            meta: meta.clone(),
            ..ImageContent::from_bytes(b"\x89PNG\r\n", "image/png")
        }),
        ContentBlock::Resource(EmbeddedResource {
            annotations: Some(ann.clone()),
            meta: meta.clone(),
            ..EmbeddedResource::new(TextResourceContents {
                meta: meta.clone(),
                ..TextResourceContents::new("file:///a.txt", "text").with_mime_type("text/plain")
            })
        }),
        ContentBlock::Resource(EmbeddedResource::new(
            BlobResourceContents::from_bytes("file:///a.bin", b"\x00\x01")
                .with_mime_type("application/octet-stream"),
        )),
    ];
    if version >= "2025-03-26" {
        blocks.push(ContentBlock::Audio(AudioContent {
            annotations: Some(ann.clone()),
            meta: meta.clone(),
            ..AudioContent::from_bytes(b"RIFF", "audio/wav")
        }));
    }
    if version >= "2025-06-18" {
        blocks.push(ContentBlock::ResourceLink(ResourceLink {
            title: Some("A".into()),
            description: Some("a file".into()),
            mime_type: Some("text/plain".into()),
            size: Some(12),
            annotations: Some(ann),
            icons: (version >= "2025-11-25").then(|| vec![icon_full()]),
            meta,
            ..ResourceLink::new("file:///a.txt", "a.txt")
        }));
    }
    blocks
}

fn tool_use() -> ToolUseContent {
    ToolUseContent {
        id: "call_1".into(),
        name: "get_weather".into(),
        input: obj(json!({"city": "Paris"})),
        meta: some_meta(),
    }
}

fn tool_result(version: &str) -> ToolResultContent {
    ToolResultContent {
        tool_use_id: "call_1".into(),
        content: content_blocks(version),
        structured_content: Some(json!({"temperature": 18})),
        is_error: Some(false),
        meta: some_meta(),
    }
}

fn tool_full(version: &str) -> Tool {
    let input = obj(json!({
        "type": "object",
        "properties": {"city": {"type": "string", "description": "City"}},
        "required": ["city"]
    }));
    let mut tool = Tool::new("get_weather", input).with_description("Weather for a city");
    if version >= "2025-03-26" {
        tool = tool.with_annotations(ToolAnnotations {
            title: Some("Weather".into()),
            read_only_hint: Some(true),
            destructive_hint: Some(false),
            idempotent_hint: Some(true),
            open_world_hint: Some(true),
        });
    }
    if version >= "2025-06-18" {
        tool = tool
            .with_title("Get weather")
            .with_output_schema(obj(json!({
                "type": "object",
                "properties": {"temperature": {"type": "number"}},
                "required": ["temperature"]
            })));
        tool.meta = some_meta();
    }
    if version >= "2025-11-25" {
        tool = tool.with_icons(vec![icon_full()]);
    }
    if version == "2025-11-25" {
        tool = tool.with_task_support(TaskSupport::Optional);
    }
    tool
}

fn create_message_full(version: &str) -> CreateMessageRequestParams {
    let mut p = CreateMessageRequestParams::new(
        vec![
            SamplingMessage::user_text("What is 2+2?"),
            SamplingMessage::assistant_text("4"),
        ],
        100,
    );
    p.model_preferences = Some(ModelPreferences {
        hints: Some(vec![ModelHint {
            name: Some("claude".into()),
        }]),
        cost_priority: Some(0.3),
        speed_priority: Some(1.0),
        intelligence_priority: Some(0.0),
    });
    p.system_prompt = Some("Be brief.".into());
    p.temperature = Some(0.7);
    p.stop_sequences = Some(vec!["END".into()]);
    p.metadata = Some(obj(json!({"provider": "x"})));
    if version >= "2025-11-25" {
        p.tools = Some(vec![tool_full("2026-07-28")]);
        p.tool_choice = Some(ToolChoice {
            mode: Some(ToolChoiceMode::Auto),
        });
    }
    p
}

fn input_requests() -> InputRequests {
    let form = ElicitRequestFormParams::new(
        "Your GitHub login?",
        ElicitationSchema::new().property("login", StringSchema::default(), true),
    );
    BTreeMap::from([
        ("login".to_owned(), InputRequest::Elicit(form.into())),
        (
            "url".to_owned(),
            InputRequest::Elicit(
                ElicitRequestURLParams::new("Key", "https://example.com/k").into(),
            ),
        ),
        (
            "capital".to_owned(),
            InputRequest::CreateMessage(create_message_full("2026-07-28")),
        ),
        ("roots".to_owned(), InputRequest::list_roots()),
        (
            "roots2".to_owned(),
            InputRequest::ListRoots(Some(RequestParams::default())),
        ),
    ])
}

fn input_responses() -> InputResponses {
    BTreeMap::from([
        (
            "login".to_owned(),
            ElicitResult::accept(BTreeMap::from([(
                "login".to_owned(),
                ElicitValue::String("octocat".into()),
            )]))
            .into(),
        ),
        (
            "url".to_owned(),
            ElicitResult::action(ElicitAction::Accept).into(),
        ),
        (
            "capital".to_owned(),
            CreateMessageResult::text("m", "Paris").into(),
        ),
        (
            "roots".to_owned(),
            ListRootsResult {
                meta: None,
                roots: vec![Root::new("file:///p")],
            }
            .into(),
        ),
    ])
}
