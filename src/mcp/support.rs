//! What the tools share besides the engine: the agent and client names, the read
//! clocks of a call, `memory_get`'s lines, and the engine a write goes through.

use rmcp::RoleServer;
use rmcp::service::RequestContext;

use super::MAX_GET_LINES;
use super::params::GetParams;
use crate::engine::{Engine, Held, ReadAt};
use crate::error::{Error, Result};
use crate::front::env::Env;
use crate::front::request;
use crate::front::workspaces::Target;
use crate::store::Workspace;

/// Where a tool's write of `key` goes (`scope`, else the key's class), found from the
/// server's own workspace; nothing is made until [`Target::ready`].
pub(super) fn write_target(
    engine: &Engine,
    env: &Env,
    key: &str,
    scope: Option<crate::core::level::Level>,
) -> Result<Target> {
    let primary = engine.workspace().root().to_path_buf();
    crate::front::workspaces::write_target(env, Some(&primary), key, scope)
}

/// The engine a tool's write to `target` goes through: the server's own when the
/// target is its workspace, else that workspace's, opened for the call (once the request
/// passed its checks: [`Target::ready`] has made a new local scope).
pub(super) fn write_engine<'a>(
    engine: &'a mut Engine,
    env: &Env,
    target: &Target,
) -> Result<Held<'a>> {
    target.ready()?;
    if engine.workspace().root() == target.root {
        return Ok(Held::Lent(engine));
    }
    let other = crate::front::session::open_root(env, &target.root)?;
    Ok(Held::Own(Box::new(other)))
}

pub(super) fn client_name(ctx: &RequestContext<RoleServer>) -> Option<String> {
    ctx.peer
        .peer_info()
        .map(|info| info.client_info.name.clone())
}

/// The agent a write is recorded under: the argument, else `MEM7_AGENT`, else the
/// client's name (made safe), else `mcp`.
pub(super) fn agent_name(env: &Env, given: Option<&str>, client: Option<&str>) -> String {
    if let Some(name) = given {
        return name.to_string();
    }
    if env.agent.is_some() {
        return env.agent(None);
    }
    client
        .map(crate::front::env::safe_agent)
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "mcp".to_string())
}

/// The read clocks a tool call asks for, with this machine's clock read once; each
/// scope resolves a missing `as_of` as it reads ([`Engine::as_of`]: what mem7 believes
/// now, entries recorded ahead of this clock included).
pub(super) fn read_at(env: &Env, valid_at: Option<&str>, as_of: Option<&str>) -> Result<ReadAt> {
    let now = env.now()?;
    let (valid_at, as_of) = request::read_times(("valid_at", valid_at), ("as_of", as_of), now)?;
    Ok(ReadAt {
        valid_at,
        as_of,
        now,
    })
}

/// `memory_get`: lines of a file of the workspace (the workspace's path checks,
/// [`Workspace::read_visible`]), after a header naming the range.
pub(super) fn read_workspace_file(ws: &Workspace, p: &GetParams) -> Result<String> {
    let text = ws.read_visible(&p.path)?;
    let from = p.from_line.unwrap_or(1).max(1);
    let to = p
        .to_line
        .unwrap_or(from + MAX_GET_LINES - 1)
        .min(from + MAX_GET_LINES - 1);
    if to < from {
        return Err(Error::input(
            format!("to_line ({to}) is before from_line ({from})"),
            "give to_line ≥ from_line, or leave it out",
        ));
    }
    let mut out = String::new();
    let mut last = 0;
    for (i, line) in text.lines().enumerate().skip(from - 1).take(to - from + 1) {
        out.push_str(line);
        out.push('\n');
        last = i + 1;
    }
    let total = text.lines().count();
    if last == 0 {
        return Err(Error::input(
            format!(
                "{} has {total} lines; from_line {from} is past the end",
                p.path
            ),
            "give a from_line within the file",
        ));
    }
    Ok(format!("{} lines {from}-{last} of {total}:\n{out}", p.path))
}
