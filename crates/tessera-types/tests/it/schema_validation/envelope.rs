//! Errors and the JSON-RPC envelope.

use super::*;

#[test]
fn errors_and_envelope_validate() {
    let mut c = Ctx::new();
    let id = Some(RequestId::Number(1));
    c.valid(
        MODERN,
        "UnsupportedProtocolVersionError",
        &JsonRpcMessage::error(
            id.clone(),
            ErrorObject::unsupported_protocol_version("1900-01-01", ["2026-07-28", "2025-11-25"]),
        ),
    );
    c.valid(
        MODERN,
        "MissingRequiredClientCapabilityError",
        &JsonRpcMessage::error(
            id.clone(),
            ErrorObject::missing_required_client_capability(
                "Elicitation needed",
                ClientCapabilities {
                    elicitation: Some(ElicitationCapability::default()),
                    ..ClientCapabilities::default()
                },
            ),
        ),
    );
    c.valid(
        MODERN,
        "HeaderMismatchError",
        &JsonRpcMessage::error(
            id.clone(),
            ErrorObject::new(ErrorCode::HEADER_MISMATCH, "Mcp-Name mismatch"),
        ),
    );
    c.invalid(
        MODERN,
        "HeaderMismatchError",
        &JsonRpcMessage::error(id.clone(), ErrorObject::internal("x")),
    );
    for (def, e) in [
        ("ParseError", ErrorObject::parse_error("bad json")),
        ("InvalidRequestError", ErrorObject::invalid_request("bad")),
        ("MethodNotFoundError", ErrorObject::method_not_found("x/y")),
        (
            "InvalidParamsError",
            ErrorObject::invalid_params("bad").with_data(json!({"field": "name"})),
        ),
        ("InternalError", ErrorObject::internal("oops")),
    ] {
        c.valid(MODERN, def, &e);
        c.valid(&since("2025-11-25"), "Error", &e);
    }
    for v in VERSIONS {
        let err_def = if v >= "2025-11-25" {
            "JSONRPCErrorResponse"
        } else {
            "JSONRPCError"
        };
        let err = JsonRpcMessage::error(id.clone(), ErrorObject::internal("x"));
        c.valid(&[v], err_def, &err);
        c.valid(&[v], "JSONRPCMessage", &err);
        let ok_def = if v >= "2025-11-25" {
            "JSONRPCResultResponse"
        } else {
            "JSONRPCResponse"
        };
        let result = if v >= "2026-07-28" {
            EmptyResult::complete()
        } else {
            EmptyResult::new()
        };
        let ok = JsonRpcMessage::typed_result(RequestId::from("a"), &result).unwrap();
        c.valid(&[v], ok_def, &ok);
        // An error about an unreadable request carries `"id": null` as
        // JSON-RPC 2.0 prescribes, but no MCP schema admits a null id.
        let anonymous = JsonRpcMessage::error(None, ErrorObject::parse_error("x"));
        c.invalid(&[v], err_def, &anonymous);
        c.valid(
            &[v],
            "JSONRPCRequest",
            &JsonRpcMessage::request(RequestId::Number(5), "x", None),
        );
        c.valid(
            &[v],
            "JSONRPCNotification",
            &JsonRpcMessage::notification("x", None),
        );
        c.valid(&[v], "RequestId", &RequestId::from("s"));
        c.valid(&[v], "ProgressToken", &ProgressToken::Number(-3));
    }
    for v in since("2025-11-25") {
        let resp = JsonRpcResponse::Error(JsonRpcErrorResponse {
            jsonrpc: JsonRpcVersion,
            id: Some(RequestId::Number(9)),
            error: ErrorObject::parse_error("x"),
        });
        c.valid(&[v], "JSONRPCResponse", &resp);
    }
    // Batches exist in 2025-03-26 only.
    let batch: JsonRpcBatch = vec![
        JsonRpcMessage::request(RequestId::Number(1), "ping", None),
        JsonRpcMessage::notification("notifications/initialized", None),
    ];
    c.valid(&["2025-03-26"], "JSONRPCBatchRequest", &batch);
    c.valid(&["2025-03-26"], "JSONRPCMessage", &batch);
    c.invalid(
        &["2025-06-18", "2025-11-25", "2026-07-28"],
        "JSONRPCMessage",
        &batch,
    );
    c.finish();
}
