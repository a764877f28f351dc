//! `mem7 serve`: the same tools over MCP's streamable HTTP transport, for a team that
//! shares one workspace. Every request to `/mcp` must carry `Authorization: Bearer
//! TOKEN` (compared in constant time); `/healthz` answers `ok` to anyone.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use super::MemoryServer;
use crate::error::{Error, Result};

/// The path of the MCP endpoint.
pub const MCP_PATH: &str = "/mcp";

/// Refuses a request whose `Origin` is another site (403), before the token is looked
/// at ([`crate::front::auth::origin_allowed`]).
async fn require_origin(req: Request, next: Next) -> Response {
    let allowed = {
        let header_text = |name| req.headers().get(name).and_then(|v| v.to_str().ok());
        crate::front::auth::origin_allowed(header_text(header::ORIGIN), header_text(header::HOST))
    };
    if allowed {
        next.run(req).await
    } else {
        (
            StatusCode::FORBIDDEN,
            "this server answers no page of another site: the request's Origin is not this server's\n",
        )
            .into_response()
    }
}

async fn require_token(
    State(expected): State<Arc<crate::front::auth::Expected>>,
    req: Request,
    next: Next,
) -> Response {
    let header = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    if expected.matches_bearer(header) {
        next.run(req).await
    } else {
        (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, "Bearer")],
            "missing or wrong bearer token: send `Authorization: Bearer <token>` as given to `mem7 serve --token`\n",
        )
            .into_response()
    }
}

/// Serves `server` on `listener` until Ctrl-C.
pub async fn serve(
    server: MemoryServer,
    listener: tokio::net::TcpListener,
    token: &str,
) -> Result<()> {
    let addr: SocketAddr = listener
        .local_addr()
        .map_err(|e| Error::io("<listener>", e))?;
    let mut config = StreamableHttpServerConfig::default();
    if !addr.ip().is_loopback() {
        // rmcp's Host check guards loopback servers against DNS rebinding; a server on
        // another address is reached by names we cannot know, and the token guards it.
        config = config.disable_allowed_hosts();
    }
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let expected = Arc::new(crate::front::auth::Expected::new(token));
    let app = axum::Router::new()
        .nest_service(MCP_PATH, service)
        .layer(middleware::from_fn_with_state(expected, require_token))
        .route("/healthz", get(|| async { "ok\n" }))
        .layer(middleware::from_fn(require_origin));
    axum::serve(listener, app)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
        .map_err(|e| Error::io(addr.to_string(), e))
}
