//! Mounting in axum (feature `axum`).

use super::McpHttp;

impl McpHttp {
    /// An axum router serving the MCP endpoint at `path` and, when enabled,
    /// the 2024-11-05 HTTP+SSE paths. Merge or nest it into an application:
    ///
    /// ```no_run
    /// # fn demo(mcp: tessera_http::McpHttp) {
    /// let app: axum::Router = axum::Router::new()
    ///     .route("/health", axum::routing::get(|| async { "ok" }))
    ///     .merge(mcp.axum_router("/mcp"));
    /// # }
    /// ```
    pub fn axum_router(&self, path: &str) -> axum::Router {
        let mut router = axum::Router::new().route_service(path, self.clone());
        if let Some(p) = &self.shared.config.legacy_sse {
            router = router
                .route_service(&p.sse, self.clone())
                .route_service(&p.message, self.clone());
        }
        router
    }
}
