//! Multi round-trip requests and subscriptions (2026-07-28).

use super::*;

#[test]
fn mrtr_validates() {
    let mut c = Ctx::new();
    for (key, request) in input_requests() {
        c.valid(MODERN, "InputRequest", &request);
        c.valid(EXT, "InputRequest", &request);
        let def = match request {
            InputRequest::CreateMessage(_) => "CreateMessageRequest",
            InputRequest::ListRoots(_) => "ListRootsRequest",
            InputRequest::Elicit(_) => "ElicitRequest",
        };
        c.valid(MODERN, def, &request);
        let _ = key;
    }
    c.valid(MODERN, "InputRequests", &input_requests());
    c.valid(MODERN, "InputResponses", &input_responses());
    for (_, r) in input_responses() {
        c.valid(MODERN, "InputResponse", &r);
    }
    let result = InputRequiredResult::new(input_requests()).with_request_state("opaque");
    c.valid(MODERN, "InputRequiredResult", &result);
    c.valid(MODERN, "ServerResult", &result);
    c.valid(
        MODERN,
        "InputRequiredResult",
        &InputRequiredResult::with_state_only("s"),
    );
    for def in [
        "CallToolResultResponse",
        "GetPromptResultResponse",
        "ReadResourceResultResponse",
    ] {
        c.response(
            MODERN,
            def,
            &MrtrResult::<CallToolResult>::InputRequired(result.clone()),
        );
    }
    let mut retry = CallToolRequestParams::new("deploy");
    retry.meta = request_meta("2026-07-28");
    retry.input_responses = Some(input_responses());
    retry.request_state = Some("opaque".into());
    c.request::<CallToolRequest>(MODERN, "CallToolRequest", &retry);
    let mut prompt = GetPromptRequestParams::new("p");
    prompt.meta = request_meta("2026-07-28");
    prompt.input_responses = Some(input_responses());
    prompt.request_state = Some("s".into());
    c.request::<GetPromptRequest>(MODERN, "GetPromptRequest", &prompt);
    let mut read = ReadResourceRequestParams::new("file:///a");
    read.meta = request_meta("2026-07-28");
    read.input_responses = Some(input_responses());
    c.request::<ReadResourceRequest>(MODERN, "ReadResourceRequest", &read);
    c.valid(
        MODERN,
        "InputResponseRequestParams",
        &InputResponseRequestParams {
            meta: request_meta("2026-07-28"),
            input_responses: Some(input_responses()),
            request_state: Some("s".into()),
        },
    );
    c.finish();
}

#[test]
fn subscriptions_validate() {
    let mut c = Ctx::new();
    let filter = SubscriptionFilter {
        tools_list_changed: Some(true),
        prompts_list_changed: Some(false),
        resources_list_changed: Some(true),
        resource_subscriptions: Some(vec!["file:///a".into()]),
        task_ids: None,
    };
    c.valid(MODERN, "SubscriptionFilter", &filter);
    c.request::<SubscriptionsListenRequest>(
        MODERN,
        "SubscriptionsListenRequest",
        &SubscriptionsListenRequestParams {
            meta: request_meta("2026-07-28"),
            notifications: filter.clone(),
        },
    );
    let ack_meta = NotificationMeta {
        subscription_id: Some(RequestId::from("listen-1")),
        ..NotificationMeta::default()
    }
    .into_meta();
    c.notification::<SubscriptionsAcknowledgedNotification>(
        MODERN,
        "SubscriptionsAcknowledgedNotification",
        &SubscriptionsAcknowledgedNotificationParams {
            meta: Some(ack_meta.clone()),
            notifications: filter,
        },
    );
    c.notification::<ToolListChangedNotification>(
        MODERN,
        "ServerNotification",
        &NotificationParams {
            meta: Some(ack_meta),
        },
    );
    let closed = SubscriptionsListenResult::new(&RequestId::from("listen-1"));
    c.valid(MODERN, "SubscriptionsListenResult", &closed);
    c.response(MODERN, "SubscriptionsListenResultResponse", &closed);
    c.invalid(
        MODERN,
        "SubscriptionsListenResult",
        &SubscriptionsListenResult {
            meta: None,
            result_type: Some(ResultType::Complete),
        },
    );
    let tasks_filter = SubscriptionFilter {
        task_ids: Some(vec!["t-1".into()]),
        ..SubscriptionFilter::default()
    };
    c.valid(EXT, "TaskSubscriptionNotifications", &tasks_filter);
    c.valid(
        EXT,
        "TaskSubscriptionAcknowledgedNotifications",
        &tasks_filter,
    );
    c.finish();
}
