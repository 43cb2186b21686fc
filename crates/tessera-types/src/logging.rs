//! Log messages from server to client.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::JsonObject;
use crate::macros::{notifications, requests};
use crate::result::EmptyResult;

/// Severity of a log message (RFC 5424 levels), ordered from least to most
/// severe: `Debug < Info < ... < Emergency`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LoggingLevel {
    /// Debugging detail.
    Debug,
    /// Informational.
    Info,
    /// Normal but significant.
    Notice,
    /// Warning.
    Warning,
    /// Error.
    Error,
    /// Critical condition.
    Critical,
    /// Action must be taken immediately.
    Alert,
    /// The system is unusable.
    Emergency,
}

impl LoggingLevel {
    /// Every level, least severe first.
    pub const ALL: [LoggingLevel; 8] = [
        LoggingLevel::Debug,
        LoggingLevel::Info,
        LoggingLevel::Notice,
        LoggingLevel::Warning,
        LoggingLevel::Error,
        LoggingLevel::Critical,
        LoggingLevel::Alert,
        LoggingLevel::Emergency,
    ];

    /// The wire string.
    pub const fn as_str(self) -> &'static str {
        match self {
            LoggingLevel::Debug => "debug",
            LoggingLevel::Info => "info",
            LoggingLevel::Notice => "notice",
            LoggingLevel::Warning => "warning",
            LoggingLevel::Error => "error",
            LoggingLevel::Critical => "critical",
            LoggingLevel::Alert => "alert",
            LoggingLevel::Emergency => "emergency",
        }
    }

    /// Whether a message of level `self` passes a `threshold`.
    pub fn passes(self, threshold: LoggingLevel) -> bool {
        self >= threshold
    }
}

impl fmt::Display for LoggingLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for LoggingLevel {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        LoggingLevel::ALL
            .into_iter()
            .find(|l| l.as_str() == s)
            .ok_or_else(|| format!("unknown logging level {s:?}"))
    }
}

/// Parameters of `logging/setLevel`. 2024-11-05 through 2025-11-25 (in
/// 2026-07-28 the level travels in `_meta` as
/// `io.modelcontextprotocol/logLevel`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SetLevelRequestParams {
    /// Reserved metadata (`_meta`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
    /// The lowest level the client wants.
    pub level: LoggingLevel,
}

/// Parameters of `notifications/message`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoggingMessageNotificationParams {
    /// Reserved metadata (`_meta`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
    /// The severity.
    pub level: LoggingLevel,
    /// The logger's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logger: Option<String>,
    /// The message: any JSON value.
    pub data: Value,
}

impl LoggingMessageNotificationParams {
    /// A message of `level` with `data`.
    pub fn new(level: LoggingLevel, data: impl Into<Value>) -> Self {
        LoggingMessageNotificationParams {
            meta: None,
            level,
            logger: None,
            data: data.into(),
        }
    }

    /// Sets the logger name.
    pub fn with_logger(mut self, logger: impl Into<String>) -> Self {
        self.logger = Some(logger.into());
        self
    }
}

requests! {
    /// `logging/setLevel`. 2024-11-05 through 2025-11-25.
    SetLevelRequest: crate::methods::LOGGING_SET_LEVEL, SetLevelRequestParams => EmptyResult;
}

notifications! {
    /// `notifications/message`.
    LoggingMessageNotification: crate::methods::NOTIFICATIONS_MESSAGE, LoggingMessageNotificationParams;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_are_ordered_and_round_trip() {
        assert!(LoggingLevel::Debug < LoggingLevel::Emergency);
        assert!(LoggingLevel::Error.passes(LoggingLevel::Warning));
        assert!(!LoggingLevel::Info.passes(LoggingLevel::Warning));
        for l in LoggingLevel::ALL {
            assert_eq!(l.as_str().parse::<LoggingLevel>().unwrap(), l);
            assert_eq!(serde_json::to_value(l).unwrap(), l.as_str());
        }
    }
}
