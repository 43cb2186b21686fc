//! The `data` of the errors the proxy answers with on its own (a refused
//! caller, a limit reached, a failing upstream), and its reading back by
//! [`crate::RetryAfterLayer`].

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The `data` of an error of the proxy's own: what was refused and when to
/// retry. Members left `None` are not written.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct RefusalData {
    /// The upstream concerned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub upstream: Option<String>,
    /// The kind of credentials that could not be had for it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub credentials: Option<String>,
    /// The limit reached (`callers`, `maxConcurrent`, `rateLimits[…]`, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<String>,
    /// The limit's value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max: Option<u64>,
    /// The upstream's circuit breaker state (`open`, `half-open`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub circuit: Option<String>,
    /// When to retry, in milliseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_after_ms: Option<u64>,
}

impl RefusalData {
    /// About upstream `name`.
    pub fn upstream(name: &str) -> Self {
        RefusalData {
            upstream: Some(name.to_owned()),
            ..RefusalData::default()
        }
    }

    /// Naming the limit reached.
    pub fn limit(mut self, limit: &str) -> Self {
        self.limit = Some(limit.to_owned());
        self
    }

    /// With the limit's value.
    pub fn max(mut self, max: usize) -> Self {
        self.max = Some(u64::try_from(max).unwrap_or(u64::MAX));
        self
    }

    /// With the time to wait before retrying.
    pub fn retry_after_ms(mut self, ms: u64) -> Self {
        self.retry_after_ms = Some(ms);
        self
    }

    /// The data as JSON.
    pub fn to_value(&self) -> Value {
        // Strings and integers: always serialised.
        serde_json::to_value(self).unwrap_or_default()
    }
}

/// A JSON-RPC error response, as far as [`crate::RetryAfterLayer`] reads it.
#[derive(Debug, Deserialize)]
pub(crate) struct ErrorResponse {
    /// The error.
    pub error: ErrorWithData,
}

/// A JSON-RPC error's data.
#[derive(Debug, Deserialize)]
pub(crate) struct ErrorWithData {
    /// The data (the proxy's own errors carry a [`RefusalData`]).
    pub data: RetryHint,
}

/// The members of a [`RefusalData`] that say whether and when to retry.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RetryHint {
    /// The limit reached.
    pub limit: Option<String>,
    /// When to retry, in milliseconds.
    pub retry_after_ms: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_what_is_set_is_written() {
        assert_eq!(
            RefusalData::upstream("up")
                .limit("maxConcurrent")
                .max(2)
                .to_value(),
            json!({"upstream": "up", "limit": "maxConcurrent", "max": 2})
        );
        assert_eq!(
            RefusalData::default()
                .retry_after_ms(1000)
                .limit("rate-limit-buckets")
                .to_value(),
            json!({"retryAfterMs": 1000, "limit": "rate-limit-buckets"})
        );
    }
}
