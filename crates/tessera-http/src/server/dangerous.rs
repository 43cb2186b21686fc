//! [`DangerousSettings`]: the settings that switch off a protection of the
//! HTTP server, one step away from the ordinary ones (as rustls does):
//! `McpHttp::builder(..).dangerous().allow_any_host()`.

use super::McpHttpBuilder;
use super::guard::{HostPolicy, OriginPolicy};

/// Settings that turn off the Host and Origin checks, reached through
/// [`McpHttpBuilder::dangerous`]. Each returns the builder, so every
/// dangerous setting is spelled out with its own `.dangerous()`.
///
/// The checks stop DNS rebinding: without them, a web page the user visits
/// can reach a server on the user's machine or network. Turn one off only
/// when something in front of the server (a reverse proxy, an API gateway)
/// checks the same thing.
#[derive(Debug)]
#[must_use = "a dangerous setting does nothing until it is applied"]
pub struct DangerousSettings {
    builder: McpHttpBuilder,
}

impl DangerousSettings {
    pub(super) fn new(builder: McpHttpBuilder) -> Self {
        DangerousSettings { builder }
    }

    /// Accepts any `Host` header: DNS rebinding protection is off unless a
    /// proxy in front of the server checks the Host.
    pub fn allow_any_host(mut self) -> McpHttpBuilder {
        self.builder.config.guard.hosts = HostPolicy::Any;
        self.builder
    }

    /// Accepts any `Origin` header: any web page the user opens may call the
    /// server from the browser, unless a proxy in front of it checks the
    /// Origin.
    pub fn allow_any_origin(mut self) -> McpHttpBuilder {
        self.builder.config.guard.origins = OriginPolicy::Any;
        self.builder
    }
}
