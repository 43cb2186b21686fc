//! Context propagation through `params._meta`: the sender injects the W3C
//! `traceparent`, `tracestate` and `baggage` entries (unprefixed, as the
//! MCP conventions and SEP-414 say), the receiver extracts them and parents
//! its span on them.

use opentelemetry::Context;
use opentelemetry::propagation::{Extractor, Injector, TextMapPropagator};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tessera_types::{JsonObject, Loose};

/// The longest propagation entry read from a peer's `_meta`, in bytes: the
/// W3C limits are 55 bytes for `traceparent`, 512 list members for
/// `tracestate` and 8192 bytes for `baggage`.
pub const MAX_ENTRY_BYTES: usize = 8192;

/// Reads the propagation keys from a `_meta` object. Values that are not
/// strings, or longer than [`MAX_ENTRY_BYTES`], are ignored.
struct MetaReader<'a>(&'a JsonObject);

impl Extractor for MetaReader<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0
            .get(key)
            .and_then(Value::as_str)
            .filter(|v| v.len() <= MAX_ENTRY_BYTES)
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(String::as_str).collect()
    }
}

/// Writes the propagation keys into a `_meta` object (replacing any the
/// caller copied from elsewhere, so a proxy continues its own trace).
struct MetaWriter<'a>(&'a mut JsonObject);

impl Injector for MetaWriter<'_> {
    fn set(&mut self, key: &str, value: String) {
        self.0.insert(key.to_owned(), Value::String(value));
    }
}

/// The context a peer propagated in `meta` (its `traceparent`,
/// `tracestate` and `baggage`), over `base`.
pub fn extract(
    propagator: &dyn TextMapPropagator,
    meta: Option<&JsonObject>,
    base: &Context,
) -> Context {
    match meta {
        Some(m) => propagator.extract_with_context(base, &MetaReader(m)),
        None => base.clone(),
    }
}

/// Puts `cx` into `params._meta`, creating the params and the `_meta`
/// object when missing (a `_meta` that is not an object is replaced).
pub fn inject(propagator: &dyn TextMapPropagator, cx: &Context, params: &mut Option<JsonObject>) {
    let mut p: WithMeta = params
        .take()
        .and_then(|p| serde_json::from_value(Value::Object(p)).ok())
        .unwrap_or_default();
    let mut m = std::mem::take(&mut p.meta).into_valid().unwrap_or_default();
    propagator.inject_context(cx, &mut MetaWriter(&mut m));
    p.meta = Loose::Valid(m);
    *params = Some(match serde_json::to_value(&p) {
        Ok(Value::Object(o)) => o,
        // Objects of JSON values always write as one.
        _ => JsonObject::new(),
    });
}

/// Params: the `_meta` the context goes into, and the rest as it came.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(default)]
struct WithMeta {
    #[serde(rename = "_meta", skip_serializing_if = "Loose::is_absent")]
    meta: Loose<JsonObject>,
    #[serde(flatten)]
    rest: JsonObject,
}

#[cfg(test)]
mod tests {
    use super::*;
    use opentelemetry::trace::{
        SpanContext, SpanId, TraceContextExt, TraceFlags, TraceId, TraceState,
    };
    use opentelemetry_sdk::propagation::TraceContextPropagator;

    #[test]
    fn round_trips_through_meta() {
        let sc = SpanContext::new(
            TraceId::from_hex("4bf92f3577b34da6a3ce929d0e0e4736").unwrap(),
            SpanId::from_hex("00f067aa0ba902b7").unwrap(),
            TraceFlags::SAMPLED,
            true,
            TraceState::default(),
        );
        let cx = Context::new().with_remote_span_context(sc.clone());
        let prop = TraceContextPropagator::new();
        let mut params = None;
        inject(&prop, &cx, &mut params);
        let meta = params.as_ref().unwrap()["_meta"].as_object().unwrap();
        assert_eq!(
            meta["traceparent"],
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
        );
        let back = extract(&prop, Some(meta), &Context::new());
        assert_eq!(back.span().span_context().trace_id(), sc.trace_id());
        assert!(back.span().span_context().is_remote());
    }

    #[test]
    fn ignores_malformed_entries() {
        let prop = TraceContextPropagator::new();
        let mut meta = JsonObject::new();
        meta.insert("traceparent".into(), Value::from(42));
        let cx = extract(&prop, Some(&meta), &Context::new());
        assert!(!cx.span().span_context().is_valid());
        meta.insert(
            "traceparent".into(),
            Value::from("x".repeat(MAX_ENTRY_BYTES + 1)),
        );
        let cx = extract(&prop, Some(&meta), &Context::new());
        assert!(!cx.span().span_context().is_valid());
        // A `_meta` that is not an object is replaced on injection.
        let mut params = Some(JsonObject::from_iter([("_meta".into(), Value::from(1))]));
        inject(&prop, &Context::new(), &mut params);
        assert!(params.unwrap()["_meta"].is_object());
    }
}
