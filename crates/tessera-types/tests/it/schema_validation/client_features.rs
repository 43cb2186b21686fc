//! Sampling, roots and elicitation.

use super::*;

#[test]
fn sampling_and_roots_validate() {
    let mut c = Ctx::new();
    for v in VERSIONS {
        for ctx in [
            IncludeContext::None,
            IncludeContext::ThisServer,
            IncludeContext::AllServers,
        ] {
            let mut p = create_message_full(v);
            p.include_context = Some(ctx);
            c.request::<CreateMessageRequest>(&[v], "CreateMessageRequest", &p);
        }
        let reply = CreateMessageResult {
            stop_reason: Some("endTurn".into()),
            ..CreateMessageResult::text("claude-x", "4")
        };
        c.valid(&[v], "CreateMessageResult", &reply);
        c.valid(
            &[v],
            "ModelPreferences",
            &create_message_full(v).model_preferences,
        );
        let roots = ListRootsResult {
            meta: None,
            roots: vec![
                Root::new("file:///project").with_name("Project"),
                Root::new("file:///other"),
            ],
        };
        c.valid(&[v], "ListRootsResult", &roots);
        c.valid(&[v], "Root", &Root::new("file:///x"));
        c.request::<ListRootsRequest>(&[v], "ListRootsRequest", &RequestParams::default());
        if v < "2026-07-28" {
            c.request::<CreateMessageRequest>(&[v], "ServerRequest", &create_message_full(v));
            c.notification::<RootsListChangedNotification>(
                &[v],
                "RootsListChangedNotification",
                &NotificationParams::default(),
            );
        }
    }
    for v in since("2025-11-25") {
        for mode in [
            ToolChoiceMode::Auto,
            ToolChoiceMode::Required,
            ToolChoiceMode::None,
        ] {
            c.valid(&[v], "ToolChoice", &ToolChoice { mode: Some(mode) });
        }
        c.valid(&[v], "CreateMessageRequestParams", &create_message_full(v));
        let tool_reply = CreateMessageResult {
            meta: None,
            role: Role::Assistant,
            content: SamplingContent::Multiple(vec![
                SamplingMessageContentBlock::ToolUse(tool_use()),
                SamplingMessageContentBlock::text("calling"),
            ]),
            model: "m".into(),
            stop_reason: Some("toolUse".into()),
        };
        c.valid(&[v], "CreateMessageResult", &tool_reply);
    }
    let mut p = create_message_full("2025-11-25");
    p.task = Some(tasks::legacy::TaskMetadata { ttl: None });
    c.valid(V2025_11_25, "CreateMessageRequestParams", &p);
    c.valid(
        EXT,
        "CreateMessageRequestParams",
        &create_message_full("2026-07-28"),
    );
    c.invalid(
        ALL,
        "CreateMessageResult",
        &json!({"role": "assistant", "model": "m"}),
    );
    c.finish();
}

fn primitive_schemas(version: &str) -> Vec<(&'static str, PrimitiveSchemaDefinition)> {
    let newer = version >= "2025-11-25";
    let mut out: Vec<(&'static str, PrimitiveSchemaDefinition)> = Vec::new();
    for format in [
        None,
        Some(StringFormat::Email),
        Some(StringFormat::Uri),
        Some(StringFormat::Date),
        Some(StringFormat::DateTime),
    ] {
        out.push((
            "StringSchema",
            StringSchema {
                title: Some("Name".into()),
                description: Some("Your name".into()),
                min_length: Some(1),
                max_length: Some(50),
                format,
                default: newer.then(|| "Ada".into()),
            }
            .into(),
        ));
    }
    for kind in [NumberType::Number, NumberType::Integer] {
        out.push((
            "NumberSchema",
            NumberSchema {
                kind,
                title: Some("Age".into()),
                description: Some("Years".into()),
                minimum: Some(0.0),
                maximum: Some(150.5),
                default: newer.then_some(30.0),
            }
            .into(),
        ));
    }
    out.push((
        "BooleanSchema",
        BooleanSchema {
            title: Some("Agree".into()),
            description: Some("Do you agree?".into()),
            default: Some(false),
        }
        .into(),
    ));
    let legacy_enum = LegacyTitledEnumSchema {
        title: Some("Color".into()),
        description: Some("Pick one".into()),
        values: vec!["r".into(), "g".into()],
        enum_names: Some(vec!["Red".into(), "Green".into()]),
        default: newer.then(|| "r".into()),
    };
    if newer {
        out.push(("LegacyTitledEnumSchema", legacy_enum.into()));
        let options = vec![EnumOption::new("r", "Red"), EnumOption::new("g", "Green")];
        out.push((
            "UntitledSingleSelectEnumSchema",
            UntitledSingleSelectEnumSchema {
                title: Some("Color".into()),
                description: Some("Pick one".into()),
                values: vec!["r".into(), "g".into()],
                default: Some("g".into()),
            }
            .into(),
        ));
        out.push((
            "TitledSingleSelectEnumSchema",
            TitledSingleSelectEnumSchema {
                title: Some("Color".into()),
                description: Some("Pick one".into()),
                one_of: options.clone(),
                default: Some("r".into()),
            }
            .into(),
        ));
        out.push((
            "UntitledMultiSelectEnumSchema",
            UntitledMultiSelectEnumSchema {
                title: Some("Colors".into()),
                description: Some("Pick some".into()),
                min_items: Some(1),
                max_items: Some(2),
                items: UntitledEnumItems {
                    values: vec!["r".into(), "g".into()],
                },
                default: Some(vec!["r".into()]),
            }
            .into(),
        ));
        out.push((
            "TitledMultiSelectEnumSchema",
            TitledMultiSelectEnumSchema {
                title: Some("Colors".into()),
                description: Some("Pick some".into()),
                min_items: Some(0),
                max_items: Some(2),
                items: TitledEnumItems { any_of: options },
                default: Some(vec!["g".into()]),
            }
            .into(),
        ));
    } else {
        out.push(("EnumSchema", legacy_enum.into()));
    }
    out
}

#[test]
fn elicitation_validates() {
    let mut c = Ctx::new();
    for v in since("2025-06-18") {
        let mut schema = ElicitationSchema::new();
        for (i, (def, p)) in primitive_schemas(v).into_iter().enumerate() {
            c.valid(&[v], def, &p);
            c.valid(&[v], "PrimitiveSchemaDefinition", &p);
            if def.ends_with("EnumSchema") && v >= "2025-11-25" {
                c.valid(&[v], "EnumSchema", &p);
            }
            schema = schema.property(format!("field{i}"), p, i % 2 == 0);
        }
        if v >= "2025-11-25" {
            schema.schema = Some("https://json-schema.org/draft/2020-12/schema".into());
        }
        let mut form = ElicitRequestFormParams::new("Tell me", schema);
        if v >= "2025-11-25" {
            form.mode = Some(FormMode::Form);
        }
        c.request::<ElicitRequest>(&[v], "ElicitRequest", &form.clone().into());
        if v >= "2025-11-25" {
            c.valid(&[v], "ElicitRequestFormParams", &form);
            c.valid(
                &[v],
                "ElicitRequestParams",
                &ElicitRequestParams::from(form.clone()),
            );
        }
        let mut values = BTreeMap::from([
            ("name".to_owned(), ElicitValue::String("Ada".into())),
            ("age".to_owned(), ElicitValue::Integer(36)),
            ("agree".to_owned(), ElicitValue::Boolean(true)),
        ]);
        if v >= "2025-11-25" {
            values.insert("colors".into(), ElicitValue::StringList(vec!["r".into()]));
        }
        c.valid(&[v], "ElicitResult", &ElicitResult::accept(values));
        for action in [
            ElicitAction::Accept,
            ElicitAction::Decline,
            ElicitAction::Cancel,
        ] {
            c.valid(&[v], "ElicitResult", &ElicitResult::action(action));
        }
        if v < "2026-07-28" {
            c.request::<ElicitRequest>(&[v], "ServerRequest", &form.into());
        }
    }
    // URL mode: 2025-11-25 requires `elicitationId`, 2026-07-28 dropped it.
    let mut url = ElicitRequestURLParams::new("Set your key", "https://example.com/key");
    c.valid(MODERN, "ElicitRequestURLParams", &url);
    c.invalid(V2025_11_25, "ElicitRequestURLParams", &url);
    url.elicitation_id = Some("el-1".into());
    c.valid(V2025_11_25, "ElicitRequestURLParams", &url);
    c.request::<ElicitRequest>(V2025_11_25, "ElicitRequest", &url.clone().into());
    c.valid(
        V2025_11_25,
        "ElicitRequestParams",
        &ElicitRequestParams::from(url.clone()),
    );
    c.notification::<ElicitationCompleteNotification>(
        V2025_11_25,
        "ElicitationCompleteNotification",
        &ElicitationCompleteNotificationParams {
            meta: None,
            elicitation_id: "el-1".into(),
        },
    );
    c.valid(
        V2025_11_25,
        "URLElicitationRequiredError",
        &JsonRpcMessage::error(
            Some(RequestId::Number(1)),
            URLElicitationRequiredError::error(
                "Authorise first",
                &URLElicitationRequiredData {
                    elicitations: vec![url],
                    extra: JsonObject::new(),
                },
            ),
        ),
    );
    // Multi-selects are not single values in 2025-06-18.
    c.invalid(
        &["2025-06-18"],
        "ElicitResult",
        &json!({"action": "accept", "content": {"c": ["r"]}}),
    );
    for (def, p) in primitive_schemas("2026-07-28") {
        c.valid(EXT, def, &p);
    }
    c.finish();
}
