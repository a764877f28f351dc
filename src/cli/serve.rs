//! The servers' commands: `mcp` (stdio), `serve` (MCP over HTTP) and `ui` (the page):
//! the engine opened through the shell, the tokio runtime, the listener and the start-up
//! lines.

use std::io::{self, Write};

use super::{Cli, EXIT_OK, Env, open_engine, write_out};
use crate::error::{Error, Result};
use crate::front::session::{self, Voice};

/// `mem7 mcp`.
pub(super) fn mcp(cli: &Cli, env: &Env) -> Result<u8> {
    let mut engine = open_engine(cli, env)?;
    session::try_enable_embeddings(&mut engine, env, Voice::CLI);
    let server = crate::mcp::MemoryServer::new(engine, env.clone());
    server.spawn_watcher()?;
    runtime()?.block_on(async {
        use rmcp::ServiceExt;
        let (input, output) = rmcp::transport::stdio();
        let (transport, writer) = crate::mcp::stdio::filtered(input, output);
        let served = async {
            let running = server
                .serve(transport)
                .await
                .map_err(|e| Error::io("<stdio>", io::Error::other(e.to_string())))?;
            running
                .waiting()
                .await
                .map_err(|e| Error::io("<stdio>", io::Error::other(e.to_string())))?;
            Ok::<(), Error>(())
        }
        .await;
        // The last answers may still be on their way to standard output.
        let _ = tokio::time::timeout(std::time::Duration::from_secs(2), writer).await;
        served
    })?;
    Ok(EXIT_OK)
}

/// `mem7 serve`.
pub(super) fn serve(cli: &Cli, env: &Env, listen: std::net::SocketAddr, token: &str) -> Result<u8> {
    crate::front::auth::check_token(token)?;
    let mut engine = open_engine(cli, env)?;
    session::try_enable_embeddings(&mut engine, env, Voice::CLI);
    let server = crate::mcp::MemoryServer::new(engine, env.clone());
    server.spawn_watcher()?;
    runtime()?.block_on(async {
        let (listener, addr) = bind(listen).await?;
        eprintln!(
            "mem7 serve: MCP on http://{addr}{} for {} (Ctrl-C to stop)",
            crate::mcp::http::MCP_PATH,
            env.workspace(cli.workspace.as_deref()).display()
        );
        if !addr.ip().is_loopback() {
            eprintln!(
                "mem7 serve: warning: {addr} is reachable from other machines; the token is all that guards it, and HTTP is not encrypted"
            );
        }
        crate::mcp::http::serve(server, listener, token).await
    })?;
    Ok(EXIT_OK)
}

/// `mem7 ui`.
pub(super) fn ui(
    cli: &Cli,
    env: &Env,
    out: &mut dyn Write,
    listen: std::net::SocketAddr,
    token: Option<&str>,
) -> Result<u8> {
    let token = crate::front::auth::token_for("mem7 ui", listen, token)?;
    let chain_key = env.chain_key()?;
    let mut engine = open_engine(cli, env)?;
    session::try_enable_embeddings(&mut engine, env, Voice("mem7 ui"));
    runtime()?.block_on(async {
        let (listener, addr) = bind(listen).await?;
        write_out(
            out,
            &format!("mem7 ui: serving http://{addr}/ (Ctrl-C stops)\n"),
        )?;
        out.flush().map_err(|e| Error::io("<stdout>", e))?;
        if token.is_some() {
            eprintln!(
                "mem7 ui: requests need the token: `Authorization: Bearer <token>`, or open http://{addr}/?token=<token> once in a browser"
            );
        }
        if !addr.ip().is_loopback() {
            eprintln!(
                "mem7 ui: warning: {addr} is reachable from other machines; the token is all that guards it, and HTTP is not encrypted"
            );
        }
        crate::view::server::serve(engine, env.clone(), chain_key, listener, token).await
    })?;
    Ok(EXIT_OK)
}

/// Binds a server's listener; a busy or foreign address is an input error (exit 2).
async fn bind(
    listen: std::net::SocketAddr,
) -> Result<(tokio::net::TcpListener, std::net::SocketAddr)> {
    let listener = tokio::net::TcpListener::bind(listen).await.map_err(|e| {
        Error::input(
            format!("cannot listen on {listen}: {e}"),
            "pick another port with --listen 127.0.0.1:PORT (0 picks a free one)",
        )
    })?;
    let addr = listener
        .local_addr()
        .map_err(|e| Error::io("<listener>", e))?;
    Ok((listener, addr))
}

/// The async runtime of the servers: two workers (tool calls run on blocking threads).
fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| Error::io("<tokio runtime>", e))
}
