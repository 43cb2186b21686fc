//! Identity, capabilities, the handshake, discovery, `_meta` and the generic result shapes.

use super::*;

fn client_capabilities_full(version: &str) -> ClientCapabilities {
    let settings = obj(json!({"level": 2, "name": "x", "on": true, "list": ["a", 1]}));
    let mut caps = ClientCapabilities {
        experimental: Some(BTreeMap::from([(
            "com.example/feature".to_owned(),
            settings,
        )])),
        roots: Some(RootsCapability {
            list_changed: (version < "2026-07-28").then_some(true),
            ..Default::default()
        }),
        sampling: Some(SamplingCapability::default()),
        ..ClientCapabilities::default()
    };
    if version >= "2025-06-18" {
        caps.elicitation = Some(ElicitationCapability::default());
    }
    if version >= "2025-11-25" {
        caps.sampling = Some(SamplingCapability {
            context: Some(JsonObject::new()),
            tools: Some(JsonObject::new()),
            ..Default::default()
        });
        caps.elicitation = Some(ElicitationCapability {
            form: Some(JsonObject::new()),
            url: Some(JsonObject::new()),
            ..Default::default()
        });
    }
    if version == "2025-11-25" {
        caps.tasks = Some(ClientTasksCapability {
            list: Some(JsonObject::new()),
            cancel: Some(JsonObject::new()),
            requests: Some(ClientTaskRequests {
                sampling: Some(SamplingTaskRequests {
                    create_message: Some(JsonObject::new()),
                    ..Default::default()
                }),
                elicitation: Some(ElicitationTaskRequests {
                    create: Some(JsonObject::new()),
                    ..Default::default()
                }),
                ..Default::default()
            }),
            ..Default::default()
        });
    }
    if version >= "2026-07-28" {
        caps = caps.with_extension(TASKS_EXTENSION);
        caps.extensions.as_mut().unwrap().insert(
            "io.modelcontextprotocol/ui".into(),
            obj(json!({"mimeTypes": ["text/html;profile=mcp-app"]})),
        );
    }
    caps
}

fn server_capabilities_full(version: &str) -> ServerCapabilities {
    let mut caps = ServerCapabilities {
        experimental: Some(BTreeMap::from([(
            "com.example/feature".to_owned(),
            obj(json!({"v": 1})),
        )])),
        logging: Some(JsonObject::new()),
        prompts: Some(PromptsCapability {
            list_changed: Some(true),
            ..Default::default()
        }),
        resources: Some(ResourcesCapability {
            subscribe: Some(true),
            list_changed: Some(false),
            ..Default::default()
        }),
        tools: Some(ToolsCapability {
            list_changed: Some(true),
            ..Default::default()
        }),
        ..ServerCapabilities::default()
    };
    if version >= "2025-03-26" {
        caps.completions = Some(JsonObject::new());
    }
    if version == "2025-11-25" {
        caps.tasks = Some(ServerTasksCapability {
            list: Some(JsonObject::new()),
            cancel: Some(JsonObject::new()),
            requests: Some(ServerTaskRequests {
                tools: Some(ToolsTaskRequests {
                    call: Some(JsonObject::new()),
                    ..Default::default()
                }),
                ..Default::default()
            }),
            ..Default::default()
        });
    }
    if version >= "2026-07-28" {
        caps = caps.with_extension(TASKS_EXTENSION);
    }
    caps
}

#[test]
fn capabilities_validate() {
    let mut c = Ctx::new();
    for v in VERSIONS {
        c.valid(&[v], "ClientCapabilities", &client_capabilities_full(v));
        c.valid(&[v], "ClientCapabilities", &ClientCapabilities::default());
        c.valid(&[v], "ServerCapabilities", &server_capabilities_full(v));
        c.valid(&[v], "ServerCapabilities", &ServerCapabilities::default());
    }
    // 2026-07-28 restricts capability settings to JSON values without null
    // or fractions.
    let with_null = ServerCapabilities {
        logging: Some(obj(json!({"x": null}))),
        ..ServerCapabilities::default()
    };
    c.valid(&until("2025-11-25"), "ServerCapabilities", &with_null);
    c.invalid(MODERN, "ServerCapabilities", &with_null);
    c.valid(
        EXT,
        "TasksExtensionCapability",
        &TasksExtensionCapability {},
    );
    c.invalid(EXT, "TasksExtensionCapability", &json!({"x": 1}));
    c.finish();
}

#[test]
fn lifecycle_validates() {
    let mut c = Ctx::new();
    let minimal = Implementation::new("x", "1");
    for v in VERSIONS {
        c.valid(&[v], "Implementation", &minimal);
    }
    c.valid(
        &since("2025-11-25"),
        "Implementation",
        &implementation_full(),
    );
    c.valid(EXT, "Implementation", &implementation_full());
    c.valid(&since("2025-11-25"), "Icon", &icon_full());
    c.valid(
        &since("2025-11-25"),
        "Icons",
        &Icons {
            icons: Some(vec![icon_full()]),
        },
    );
    c.invalid(
        &since("2025-11-25"),
        "Icon",
        &json!({"src": "x", "theme": "blue"}),
    );
    c.valid(
        &since("2025-06-18"),
        "BaseMetadata",
        &BaseMetadata {
            name: "n".into(),
            title: Some("N".into()),
        },
    );
    c.invalid(ALL, "Implementation", &json!({"name": "x"}));

    for v in LEGACY {
        let info = if *v >= "2025-11-25" {
            implementation_full()
        } else if *v >= "2025-06-18" {
            Implementation::new("x", "1").with_title("X")
        } else {
            Implementation::new("x", "1")
        };
        let version = ProtocolVersion::parse(v).unwrap();
        let mut params =
            InitializeRequestParams::new(version, client_capabilities_full(v), info.clone());
        c.request::<InitializeRequest>(&[v], "InitializeRequest", &params);
        params.meta = Some(meta_with_progress());
        c.request::<InitializeRequest>(&[v], "InitializeRequest", &params);
        c.request::<InitializeRequest>(&[v], "ClientRequest", &params);
        if *v >= "2025-11-25" {
            c.valid(&[v], "InitializeRequestParams", &params);
        }
        let mut result = InitializeResult::new(version, server_capabilities_full(v), info);
        result.instructions = Some("Use the tools.".into());
        result.meta = some_meta();
        c.valid(&[v], "InitializeResult", &result);
        c.valid(&[v], "ServerResult", &result);
        c.notification::<InitializedNotification>(
            &[v],
            "InitializedNotification",
            &NotificationParams::default(),
        );
        c.request::<PingRequest>(&[v], "PingRequest", &RequestParams::default());
        c.valid(&[v], "EmptyResult", &EmptyResult::new());
    }
    let discover = {
        let mut d = DiscoverResult::new(
            [ProtocolVersion::V2026_07_28, ProtocolVersion::V2025_11_25],
            server_capabilities_full("2026-07-28"),
            3_600_000,
            CacheScope::Public,
        );
        d.instructions = Some("Use the tools.".into());
        d.meta = Some(
            ResultMeta {
                server_info: Some(implementation_full()),
                ..ResultMeta::default()
            }
            .into_meta(),
        );
        d
    };
    c.valid(MODERN, "DiscoverResult", &discover);
    c.response(MODERN, "DiscoverResultResponse", &discover);
    let mut no_cache = discover.clone();
    no_cache.clear_cache_hint();
    c.invalid(MODERN, "DiscoverResult", &no_cache);
    c.request::<DiscoverRequest>(
        MODERN,
        "DiscoverRequest",
        &RequestParams {
            meta: request_meta("2026-07-28"),
        },
    );
    c.request::<DiscoverRequest>(
        MODERN,
        "ClientRequest",
        &RequestParams {
            meta: request_meta("2026-07-28"),
        },
    );
    // 2026-07-28 requests must carry the protocol metadata.
    let bare = JsonRpcMessage::typed_request::<DiscoverRequest>(
        RequestId::Number(1),
        &RequestParams::default(),
    )
    .unwrap();
    c.invalid(MODERN, "DiscoverRequest", &bare);
    c.finish();
}

#[test]
fn request_meta_validates() {
    let mut c = Ctx::new();
    let meta = RequestMeta::modern(
        ProtocolVersion::V2026_07_28,
        client_capabilities_full("2026-07-28"),
    )
    .with_client_info(implementation_full())
    .with_progress_token(ProgressToken::Number(3));
    for level in LoggingLevel::ALL {
        c.valid(
            MODERN,
            "RequestMetaObject",
            &meta.clone().with_log_level(level),
        );
    }
    c.invalid(MODERN, "RequestMetaObject", &RequestMeta::default());
    c.valid(
        MODERN,
        "ResultMetaObject",
        &ResultMeta {
            server_info: Some(implementation_full()),
            ..ResultMeta::default()
        },
    );
    c.valid(
        MODERN,
        "NotificationMetaObject",
        &NotificationMeta {
            subscription_id: Some(RequestId::from("listen-1")),
            ..NotificationMeta::default()
        },
    );
    c.valid(
        MODERN,
        "SubscriptionsListenResultMetaObject",
        &ResultMeta {
            subscription_id: Some(RequestId::Number(4)),
            server_info: Some(Implementation::new("s", "1")),
            ..ResultMeta::default()
        },
    );
    c.finish();
}

#[test]
fn generic_results_validate() {
    let mut c = Ctx::new();
    for v in LEGACY {
        c.valid(&[v], "Result", &EmptyResult::new());
        c.valid(
            &[v],
            "PaginatedResult",
            &PaginatedResult {
                next_cursor: Some("x".into()),
                ..PaginatedResult::default()
            },
        );
    }
    c.valid(MODERN, "Result", &EmptyResult::complete());
    c.invalid(MODERN, "Result", &EmptyResult::new());
    c.valid(MODERN, "ResultType", &ResultType::InputRequired);
    c.valid(
        MODERN,
        "CacheableResult",
        &CacheableResult {
            result_type: Some(ResultType::Complete),
            ..CacheableResult::default()
        }
        .with_cache_hint(0, CacheScope::Public),
    );
    c.valid(
        MODERN,
        "PaginatedResult",
        &PaginatedResult {
            result_type: Some(ResultType::Complete),
            ..PaginatedResult::default()
        },
    );
    c.valid(
        &since("2025-11-25"),
        "RequestParams",
        &RequestParams {
            meta: request_meta("2026-07-28"),
        },
    );
    c.valid(
        &since("2025-11-25"),
        "NotificationParams",
        &NotificationParams::default(),
    );
    c.finish();
}
