//! Tools, resources, prompts, completion, logging, progress and cancellation.

use super::*;

#[test]
fn tools_validate() {
    let mut c = Ctx::new();
    for v in VERSIONS {
        let minimal = Tool::new("noop", Tool::empty_input_schema());
        c.valid(&[v], "Tool", &minimal);
        c.valid(&[v], "Tool", &tool_full(v));
        let legacy = v < "2026-07-28";

        let mut list = ListToolsResult::new(vec![minimal, tool_full(v)]);
        list.next_cursor = Some("page-2".into());
        list.meta = some_meta();
        if legacy {
            c.valid(&[v], "ListToolsResult", &list);
        } else {
            c.invalid(&[v], "ListToolsResult", &list);
            list.result_type = Some(ResultType::Complete);
            list.set_cache_hint(60_000, CacheScope::Private);
            c.valid(&[v], "ListToolsResult", &list);
            c.response(&[v], "ListToolsResultResponse", &list);
        }

        let mut params = CallToolRequestParams::new("get_weather")
            .with_arguments(obj(json!({"city": "Paris", "days": 2.5})));
        params.meta = request_meta(v).or(Some(meta_with_progress()));
        c.request::<CallToolRequest>(&[v], "CallToolRequest", &params);
        c.request::<CallToolRequest>(&[v], "ClientRequest", &params);
        let mut list_params = PaginatedRequestParams::after("page-2");
        list_params.meta = request_meta(v);
        c.request::<ListToolsRequest>(&[v], "ListToolsRequest", &list_params);
        c.notification::<ToolListChangedNotification>(
            &[v],
            "ToolListChangedNotification",
            &NotificationParams::default(),
        );

        let results = [
            CallToolResult::text("ok"),
            CallToolResult::error("it failed"),
            CallToolResult {
                meta: some_meta(),
                ..CallToolResult::new(content_blocks(v))
            },
        ];
        for mut r in results {
            if legacy {
                c.valid(&[v], "CallToolResult", &r);
            } else {
                c.invalid(&[v], "CallToolResult", &r);
                r.result_type = Some(ResultType::Complete);
                c.valid(&[v], "CallToolResult", &r);
                c.response(&[v], "CallToolResultResponse", &r);
            }
        }
        if v >= "2025-06-18" {
            let mut r = CallToolResult::structured(json!({"temperature": 18}));
            if !legacy {
                r.result_type = Some(ResultType::Complete);
            }
            c.valid(&[v], "CallToolResult", &r);
        }
    }
    // Any JSON value as structured content is a 2026-07-28 change.
    let mut array = CallToolResult::structured(json!([1, 2]));
    c.invalid(&["2025-06-18", "2025-11-25"], "CallToolResult", &array);
    array.result_type = Some(ResultType::Complete);
    c.valid(MODERN, "CallToolResult", &array);
    // 2025-11-25 task-augmented call.
    let mut params = CallToolRequestParams::new("slow");
    params.task = Some(tasks::legacy::TaskMetadata { ttl: Some(60_000) });
    c.valid(V2025_11_25, "CallToolRequestParams", &params);
    c.valid(
        V2025_11_25,
        "ToolExecution",
        &ToolExecution {
            task_support: Some(TaskSupport::Required),
        },
    );
    for s in [
        TaskSupport::Forbidden,
        TaskSupport::Optional,
        TaskSupport::Required,
    ] {
        c.valid(
            V2025_11_25,
            "Tool",
            &Tool::new("t", Tool::empty_input_schema()).with_task_support(s),
        );
    }
    c.valid(
        &since("2025-03-26"),
        "ToolAnnotations",
        &ToolAnnotations::default(),
    );
    c.valid(EXT, "Tool", &tool_full("2026-07-28"));
    c.finish();
}

fn resource_full(version: &str) -> Resource {
    Resource {
        title: (version >= "2025-06-18").then(|| "Readme".into()),
        description: Some("The readme".into()),
        mime_type: Some("text/markdown".into()),
        size: Some(1024),
        annotations: Some(if version >= "2025-06-18" {
            annotations_full()
        } else {
            annotations_2024()
        }),
        icons: (version >= "2025-11-25").then(|| vec![icon_full()]),
        meta: (version >= "2025-06-18").then(some_meta).flatten(),
        ..Resource::new("file:///README.md", "README.md")
    }
}

#[test]
fn resources_validate() {
    let mut c = Ctx::new();
    for v in VERSIONS {
        let legacy = v < "2026-07-28";
        c.valid(&[v], "Resource", &resource_full(v));
        let template = ResourceTemplate {
            title: (v >= "2025-06-18").then(|| "Files".into()),
            description: Some("Any file".into()),
            mime_type: Some("text/plain".into()),
            icons: (v >= "2025-11-25").then(|| vec![icon_full()]),
            ..ResourceTemplate::new("file:///{path}", "files")
        };
        c.valid(&[v], "ResourceTemplate", &template);
        c.valid(
            &[v],
            "TextResourceContents",
            &TextResourceContents::new("file:///a", "x"),
        );
        c.valid(
            &[v],
            "BlobResourceContents",
            &BlobResourceContents::from_bytes("file:///b", b"x"),
        );

        let mut list = ListResourcesResult {
            resources: vec![resource_full(v)],
            next_cursor: Some("c".into()),
            ..ListResourcesResult::default()
        };
        let mut templates = ListResourceTemplatesResult {
            resource_templates: vec![template],
            ..ListResourceTemplatesResult::default()
        };
        let mut read = ReadResourceResult::new(vec![
            TextResourceContents::new("file:///a", "x")
                .with_mime_type("text/plain")
                .into(),
            BlobResourceContents::from_bytes("file:///b", b"x").into(),
        ]);
        if legacy {
            c.valid(&[v], "ListResourcesResult", &list);
            c.valid(&[v], "ListResourceTemplatesResult", &templates);
            c.valid(&[v], "ReadResourceResult", &read);
        } else {
            c.invalid(&[v], "ListResourcesResult", &list);
            c.invalid(&[v], "ReadResourceResult", &read);
            for r in [
                &mut list.result_type,
                &mut templates.result_type,
                &mut read.result_type,
            ] {
                *r = Some(ResultType::Complete);
            }
            list.set_cache_hint(0, CacheScope::Public);
            templates.set_cache_hint(10, CacheScope::Private);
            read.set_cache_hint(5_000, CacheScope::Private);
            c.valid(&[v], "ListResourcesResult", &list);
            c.valid(&[v], "ListResourceTemplatesResult", &templates);
            c.valid(&[v], "ReadResourceResult", &read);
            c.response(&[v], "ListResourcesResultResponse", &list);
            c.response(&[v], "ListResourceTemplatesResultResponse", &templates);
            c.response(&[v], "ReadResourceResultResponse", &read);
        }

        let mut params = ReadResourceRequestParams::new("file:///a");
        params.meta = request_meta(v);
        c.request::<ReadResourceRequest>(&[v], "ReadResourceRequest", &params);
        let page = PaginatedRequestParams {
            meta: request_meta(v),
            ..PaginatedRequestParams::default()
        };
        c.request::<ListResourcesRequest>(&[v], "ListResourcesRequest", &page);
        c.request::<ListResourceTemplatesRequest>(&[v], "ListResourceTemplatesRequest", &page);
        c.notification::<ResourceListChangedNotification>(
            &[v],
            "ResourceListChangedNotification",
            &NotificationParams::default(),
        );
        c.notification::<ResourceUpdatedNotification>(
            &[v],
            "ResourceUpdatedNotification",
            &ResourceUpdatedNotificationParams::new("file:///a"),
        );
        if legacy {
            let p = ResourceRequestParams::new("file:///a");
            c.request::<SubscribeRequest>(&[v], "SubscribeRequest", &p);
            c.request::<UnsubscribeRequest>(&[v], "UnsubscribeRequest", &p);
        }
    }
    c.invalid(ALL, "Resource", &json!({"uri": "file:///a"}));
    c.finish();
}

#[test]
fn prompts_and_completion_validate() {
    let mut c = Ctx::new();
    for v in VERSIONS {
        let legacy = v < "2026-07-28";
        let prompt = Prompt {
            title: (v >= "2025-06-18").then(|| "Review".into()),
            description: Some("Code review".into()),
            arguments: Some(vec![PromptArgument {
                title: (v >= "2025-06-18").then(|| "Code".into()),
                description: Some("The code".into()),
                required: Some(true),
                ..PromptArgument::new("code")
            }]),
            icons: (v >= "2025-11-25").then(|| vec![icon_full()]),
            ..Prompt::new("review")
        };
        c.valid(&[v], "Prompt", &prompt);
        let mut list = ListPromptsResult {
            prompts: vec![prompt],
            ..ListPromptsResult::default()
        };
        let mut get = GetPromptResult {
            description: Some("d".into()),
            ..GetPromptResult::new(vec![
                PromptMessage::user_text("Review this"),
                PromptMessage::assistant_text("Sure"),
            ])
        };
        let mut complete = CompleteResult::new(vec!["python".into(), "pytorch".into()]);
        complete.completion.total = Some(10);
        complete.completion.has_more = Some(true);
        if legacy {
            c.valid(&[v], "ListPromptsResult", &list);
            c.valid(&[v], "GetPromptResult", &get);
            c.valid(&[v], "CompleteResult", &complete);
        } else {
            c.invalid(&[v], "GetPromptResult", &get);
            list.result_type = Some(ResultType::Complete);
            list.set_cache_hint(1, CacheScope::Public);
            get.result_type = Some(ResultType::Complete);
            complete.result_type = Some(ResultType::Complete);
            c.valid(&[v], "ListPromptsResult", &list);
            c.valid(&[v], "GetPromptResult", &get);
            c.valid(&[v], "CompleteResult", &complete);
            c.response(&[v], "ListPromptsResultResponse", &list);
            c.response(&[v], "GetPromptResultResponse", &get);
            c.response(&[v], "CompleteResultResponse", &complete);
        }
        let mut params = GetPromptRequestParams::new("review");
        params.arguments = Some(BTreeMap::from([("code".into(), "x = 1".into())]));
        params.meta = request_meta(v);
        c.request::<GetPromptRequest>(&[v], "GetPromptRequest", &params);
        let page = PaginatedRequestParams {
            meta: request_meta(v),
            ..PaginatedRequestParams::default()
        };
        c.request::<ListPromptsRequest>(&[v], "ListPromptsRequest", &page);
        c.notification::<PromptListChangedNotification>(
            &[v],
            "PromptListChangedNotification",
            &NotificationParams::default(),
        );

        let references = [
            CompletionReference::Prompt(PromptReference {
                name: "review".into(),
                title: (v >= "2025-06-18").then(|| "Review".into()),
            }),
            CompletionReference::ResourceTemplate(ResourceTemplateReference {
                uri: "file:///{path}".into(),
            }),
        ];
        for reference in references {
            let params = CompleteRequestParams {
                meta: request_meta(v),
                reference,
                argument: CompletionArgument {
                    name: "language".into(),
                    value: "py".into(),
                },
                context: (v >= "2025-06-18").then(|| CompletionContext {
                    arguments: Some(BTreeMap::from([("framework".into(), "x".into())])),
                }),
            };
            c.request::<CompleteRequest>(&[v], "CompleteRequest", &params);
        }
        let reference_def = if v >= "2025-06-18" {
            "ResourceTemplateReference"
        } else {
            "ResourceReference"
        };
        c.valid(
            &[v],
            reference_def,
            &ResourceReference {
                uri: "file:///{x}".into(),
            },
        );
    }
    // 2026-07-28 caps completions at 100 values.
    let mut many = CompleteResult::new((0..101).map(|i| i.to_string()).collect());
    many.result_type = Some(ResultType::Complete);
    c.invalid(MODERN, "CompleteResult", &many);
    c.finish();
}

// ---------------------------------------------------------------------------
// Logging, progress, cancellation

#[test]
fn logging_progress_cancel_validate() {
    let mut c = Ctx::new();
    for v in VERSIONS {
        for level in LoggingLevel::ALL {
            c.valid(&[v], "LoggingLevel", &level);
            let params =
                LoggingMessageNotificationParams::new(level, json!({"msg": "x", "n": 1.5}))
                    .with_logger("db");
            c.notification::<LoggingMessageNotification>(
                &[v],
                "LoggingMessageNotification",
                &params,
            );
            c.notification::<LoggingMessageNotification>(&[v], "ServerNotification", &params);
            if v < "2026-07-28" {
                c.request::<SetLevelRequest>(
                    &[v],
                    "SetLevelRequest",
                    &SetLevelRequestParams { meta: None, level },
                );
            }
        }
        let mut progress =
            ProgressNotificationParams::new(ProgressToken::from("t"), 50.0, Some(100.0));
        if v >= "2025-03-26" {
            progress = progress.with_message("half way");
        }
        c.notification::<ProgressNotification>(&[v], "ProgressNotification", &progress);
        let fractional = ProgressNotificationParams::new(ProgressToken::Number(7), 0.25, None);
        c.notification::<ProgressNotification>(&[v], "ProgressNotification", &fractional);

        let cancel = CancelledNotificationParams::new(RequestId::Number(3)).with_reason("user");
        c.notification::<CancelledNotification>(&[v], "CancelledNotification", &cancel);
        c.notification::<CancelledNotification>(&[v], "ClientNotification", &cancel);
    }
    c.invalid(ALL, "LoggingLevel", &json!("verbose"));
    // Only 2025-11-25 lets a cancellation omit the request id.
    let no_id = JsonRpcMessage::typed_notification::<CancelledNotification>(
        &CancelledNotificationParams::default(),
    )
    .unwrap();
    c.valid(V2025_11_25, "CancelledNotification", &no_id);
    c.invalid(
        &["2024-11-05", "2025-06-18", "2026-07-28"],
        "CancelledNotification",
        &no_id,
    );
    c.finish();
}
