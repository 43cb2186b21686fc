//! The typed client API: `server_info()` and `server_capabilities()` as
//! structs, `request::<R>()` named by the request's marker type, and a
//! handler's log level given as a `LoggingLevel`.

use serde_json::json;
use tessera_client::{Client, ClientEvent};
use tessera_server::{RequestContext, Server, tool};
use tessera_testkit::pair::in_process;
use tessera_types::{ListToolsRequest, LoggingLevel, PaginatedRequestParams, ProtocolVersion};

async fn chatty(ctx: RequestContext) -> &'static str {
    ctx.log(LoggingLevel::Warning, Some("chatty"), json!("careful"));
    "done"
}

async fn connect(server: &Server, version: ProtocolVersion) -> Client {
    in_process(
        server,
        Client::builder("typed-tests", "1.0").protocol_version(version),
    )
    .await
}

#[tokio::test]
async fn server_info_capabilities_and_requests_are_typed() {
    let server = Server::builder()
        .name_version("typed-server", "2.1.0")
        .tool(tool("chatty").handler(chatty))
        .build()
        .unwrap();
    for version in [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28] {
        let client = connect(&server, version).await;
        let info = client.server_info();
        assert_eq!(
            (info.name.as_str(), info.version.as_str()),
            ("typed-server", "2.1.0")
        );
        let caps = client.server_capabilities();
        assert!(caps.tools.is_some(), "{version}");
        assert!(caps.prompts.is_none(), "{version}");

        let listed = client
            .request::<ListToolsRequest>(&PaginatedRequestParams::default())
            .await
            .expect("tools/list");
        assert_eq!(listed.tools[0].name, "chatty");
        client.close().await;
    }
}

#[tokio::test]
async fn a_handler_logs_at_a_typed_level() {
    let server = Server::builder()
        .tool(tool("chatty").handler(chatty))
        .build()
        .unwrap();
    let client = connect(&server, ProtocolVersion::V2025_11_25).await;
    client
        .set_log_level(LoggingLevel::Debug)
        .await
        .expect("logging/setLevel");
    let mut events = client.events();
    client.call_tool("chatty", json!({})).await.expect("call");
    loop {
        match events.recv().await.expect("the connection is open") {
            ClientEvent::Log(log) => {
                assert_eq!(log.level, LoggingLevel::Warning);
                assert_eq!(log.logger.as_deref(), Some("chatty"));
                assert_eq!(log.data, json!("careful"));
                break;
            }
            _ => continue,
        }
    }
    client.close().await;
}

#[tokio::test]
async fn server_capabilities_keep_every_member_the_server_sent() {
    // Members Tessera does not model, and one whose value does not fit its
    // type, come back as sent; the modelled ones are typed.
    let declared = json!({
        "tools": {"listChanged": true, "com.example/streaming": true},
        "logging": {},
        "prompts": true,
        "com.example/holograms": {"depth": 3},
        "extensions": {"com.example/demo": {"level": 2}}
    });
    for version in [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28] {
        let (client, _peer, _notes) = tessera_testkit::pair::scripted(
            tessera_testkit::handlers::builder(version),
            declared.clone(),
            &[],
            |_| async { unreachable!("no requests") },
        )
        .await;
        let caps = client.server_capabilities();
        assert_eq!(caps.tools.as_ref().unwrap().list_changed, Some(true));
        assert!(caps.logging.is_some());
        assert!(caps.prompts.is_none() && caps.declares("prompts"));
        assert!(client.server_declares_extension("com.example/demo"));
        assert_eq!(serde_json::to_value(&caps).unwrap(), declared, "{version}");
        assert_eq!(client.connect_result()["capabilities"], declared);
        client.close().await;
    }
}

/// Arguments for `call_tool` as the caller has them.
#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
struct Greeting {
    name: String,
    times: u8,
}

async fn greet(tessera_server::Args(g): tessera_server::Args<Greeting>) -> String {
    format!("{} x{}", g.name, g.times)
}

#[tokio::test]
async fn call_tool_takes_any_serializable_arguments_and_refuses_non_objects() {
    let server = Server::builder()
        .tool(tool("greet").handler(greet))
        .build()
        .unwrap();
    for version in [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28] {
        let client = connect(&server, version).await;
        let g = Greeting {
            name: "ada".into(),
            times: 2,
        };
        let r = client.call_tool("greet", &g).await.expect("a struct");
        assert_eq!(r.content[0].as_text(), Some("ada x2"), "{version}");
        let r = client
            .call_tool("greet", json!({"name": "bo", "times": 1}))
            .await
            .expect("json");
        assert_eq!(r.content[0].as_text(), Some("bo x1"), "{version}");
        for bad in [json!([1, 2]), json!("x"), json!(3), json!(true)] {
            let e = client.call_tool("greet", &bad).await.unwrap_err();
            assert!(
                matches!(&e, tessera_client::ClientError::InvalidArguments { why, .. } if why.contains("JSON object")),
                "{bad}: {e}"
            );
        }
        // `()` is null: no arguments, which this tool's schema refuses.
        let r = client.call_tool("greet", ()).await.expect("no arguments");
        assert_eq!(r.is_error, Some(true), "{version}");
        client.close().await;
    }
}

/// What a typed question asks for.
#[derive(serde::Deserialize, schemars::JsonSchema, Debug, PartialEq)]
struct Booking {
    name: String,
    guests: u8,
    note: Option<String>,
}

async fn book(ctx: RequestContext) -> String {
    match ctx.elicit::<Booking>("Who is coming?").await {
        Ok(tessera_server::Elicited::Accepted(b)) => {
            format!("{} x{} {:?}", b.name, b.guests, b.note)
        }
        Ok(tessera_server::Elicited::Declined) => "declined".into(),
        Ok(tessera_server::Elicited::Cancelled) => "cancelled".into(),
        Err(e) => format!("error: {e}"),
    }
}

#[tokio::test]
async fn a_typed_elicitation_asks_with_the_derived_form_and_reads_the_answer() {
    use std::collections::BTreeMap;
    use tessera_types::{ElicitAction, ElicitResult, ElicitValue, ErrorObject};
    let server = Server::builder()
        .tool(tool("book").handler(book))
        .build()
        .unwrap();
    for (answer, want) in [
        ("accept", "ada x3 None"),
        ("decline", "declined"),
        ("cancel", "cancelled"),
        ("wrong", "error:"),
    ] {
        for version in [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28] {
            let builder = Client::builder("typed-tests", "1.0")
                .protocol_version(version)
                .elicitation(move |f: tessera_client::FormRequest| async move {
                    // The form is the one derived from `Booking`, in order.
                    let props: Vec<&String> = f.requested_schema.properties.keys().collect();
                    assert_eq!(props.len(), 3, "{props:?}");
                    let required = f.requested_schema.required.clone().unwrap_or_default();
                    assert!(required.contains(&"guests".to_owned()));
                    assert!(!required.contains(&"note".to_owned()));
                    let mut content = BTreeMap::from([
                        ("name".to_owned(), ElicitValue::String("ada".into())),
                        ("guests".to_owned(), ElicitValue::Integer(3)),
                    ]);
                    Ok::<_, ErrorObject>(match answer {
                        "accept" => ElicitResult::accept(content),
                        "decline" => ElicitResult::action(ElicitAction::Decline),
                        "cancel" => ElicitResult::action(ElicitAction::Cancel),
                        _ => {
                            // Out of the form's range: refused on one side or
                            // the other, never read as a `u8`.
                            content.insert("guests".into(), ElicitValue::Integer(300));
                            ElicitResult::accept(content)
                        }
                    })
                });
            let client = in_process(&server, builder).await;
            let text = match client.call_tool("book", ()).await {
                Ok(r) => r.content[0].as_text().unwrap_or_default().to_owned(),
                // A 2026-07-28 client checks its own answer before the
                // retry, and gives up on the call when it does not fit.
                Err(tessera_client::ClientError::Input { error, .. }) => {
                    format!("error: {}", error.message)
                }
                Err(e) => panic!("{answer} {version}: {e}"),
            };
            assert!(text.starts_with(want), "{answer} {version}: {text}");
            client.close().await;
        }
    }
}
