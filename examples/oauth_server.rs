//! An MCP server that only answers requests carrying an OAuth 2.1 access
//! token from one authorization server (it acts as the resource server).
//!
//! `cargo run -p tessera-examples --example oauth_server -- 127.0.0.1:8001 https://auth.example.com`
//!
//! A request without a token gets `401` with a `WWW-Authenticate` header
//! pointing at the protected resource metadata, served without a token at
//! `/.well-known/oauth-protected-resource/mcp`; MCP clients (and
//! `tessera login`) discover the authorization server from there.

use tessera::server::{RequestContext, Server, tool};
use tessera_auth::server::{AuthInfo, BearerAuthLayer, JwtVerifier};
use tessera_http::McpHttp;

/// Handlers see who called: the verified token's claims and scopes.
async fn whoami(ctx: RequestContext) -> String {
    match ctx.extension::<AuthInfo>() {
        Some(auth) => format!(
            "you are {} with scopes {:?}",
            auth.subject.as_deref().unwrap_or("(no subject)"),
            auth.scopes
        ),
        None => "no token".to_owned(),
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let addr = args.next().unwrap_or("127.0.0.1:8001".into());
    let issuer = args.next().unwrap_or("https://auth.example.com".into());
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    let local = listener.local_addr()?;
    // Tokens must name this endpoint as their audience (RFC 8707).
    let resource = format!("http://{local}/mcp");

    let server = Server::builder()
        .name_version("oauth-example", "1.0.0")
        .tool(
            tool("whoami")
                .description("Says who the token belongs to")
                .handler(whoami),
        )
        .build()?;
    let mcp = McpHttp::builder(server).bind_address(local).build();

    // JWT access tokens signed by the issuer; its keys come from the
    // `jwks_uri` in its metadata, fetched when the first token arrives.
    let verifier = JwtVerifier::builder(issuer.clone(), resource.clone()).build();
    let auth = BearerAuthLayer::builder(resource.clone(), verifier)
        .authorization_server(issuer)
        .require_scopes(["mcp"])
        .build();

    println!("serving MCP at {resource} (tokens required)");
    let service = tower::Layer::layer(&auth, mcp.clone());
    tessera_http::serve_with(listener, mcp, service, async {
        let _ = tokio::signal::ctrl_c().await;
    })
    .await?;
    Ok(())
}
