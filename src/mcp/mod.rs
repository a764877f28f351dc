//! The MCP server: mem7's tools for agents, over stdio (`mem7 mcp`) and streamable HTTP
//! (`mem7 serve`, see [`http`]).
//!
//! Each tool parses its arguments with the same functions as the CLI
//! ([`crate::front::request`]), runs the same engine calls and answers with the same JSON as
//! `--json`. Bad arguments come back as tool errors (`isError: true`) naming the problem
//! and the fix; nothing a client sends can stop the server.
//!
//! The server keeps its index current while it runs: every call first applies what
//! changed in the files (the cheap start-up check, [`Session::call`]), and a watcher
//! thread ([`crate::live::serve_loop`]) catches up in the background when files change or,
//! since watchers miss events, every few seconds. The tools' argument structs are in
//! `params.rs`, their answers in `output.rs`.

mod background;
pub mod http;
pub mod output;
mod params;
pub mod stdio;
mod support;

use background::VOICE;
use support::*;

pub use params::{
    ContextParams, ForgetParams, GetParams, HistoryParams, ListParams, RecallParams, RekeyParams,
    SearchParams, StoreParams,
};

use std::sync::Arc;
use std::time::Duration;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, tool, tool_handler, tool_router};

use crate::core::{Tier, Writer};
use crate::engine::{Ask, Clocks, ContextRequest, Engine, Find, StoreRequest};
use crate::error::{Error, Result};
use crate::front::block;
use crate::front::env::Env;
use crate::front::request;
use crate::front::session::Session;
use crate::front::workspaces;

/// How often the background thread reconciles when no file event arrives.
pub const RECONCILE_EVERY: Duration = Duration::from_secs(5);

/// The most lines `memory_get` returns at once.
const MAX_GET_LINES: usize = 2000;

/// What the server tells a client about itself when it connects.
const INSTRUCTIONS: &str = "mem7 is a memory of short facts under keys (like `project:deploy_target`) \
with two clocks: valid time (when a fact held in the world) and transaction time (when it was \
recorded). Call memory_context at the start of a task for what is known; memory_store to \
remember a fact (one key per fact, a short value, valid_from when it started to hold if not now); \
memory_recall / memory_search / memory_list to look things up, with valid_at to ask about a past \
moment and as_of to ask what was believed at a past moment. Times are YYYY-MM-DD or RFC 3339. \
Never store secrets.";

/// The mem7 MCP server (one per connection; clones share the engine: one
/// [`Session`] for every connection and the watcher thread).
#[derive(Clone)]
pub struct MemoryServer {
    session: Arc<Session>,
    tool_router: ToolRouter<MemoryServer>,
}

/// A tool error for the model: the problem and, where there is one, the fix. A failure
/// inside mem7 says so, so that the model does not rewrite a good request; it is also
/// logged for the person running the server.
fn tool_error(e: &Error) -> CallToolResult {
    let mut text = format!("error: {e}");
    if e.kind() == crate::error::Kind::Internal {
        eprintln!("mem7 mcp: error: {e}");
        text.push_str("\n(a failure inside mem7, not a problem with the request: retrying the same call later may work)");
    }
    if let Some(hint) = e.hint() {
        text.push_str(&format!("\nhint: {hint}"));
    }
    CallToolResult::error(vec![ContentBlock::text(text)])
}

#[tool_router]
impl MemoryServer {
    /// Remember a fact: append a new version of `key`. Without valid_from the fact holds
    /// from now; a past valid_from records a fact that was already true (a later known
    /// change is not overwritten). Storing the value that already holds writes nothing
    /// ("unchanged"). Returns the new version with its clocks and the entry (file:line)
    /// that records it. Values that look like credentials are refused. Reuse the key a
    /// fact already has: look keys up first (memory_list with a prefix, or
    /// memory_search), and store a change under the same key so it closes the old value.
    /// A new key that looks like an existing one (the same ignoring case and separators)
    /// is reported in `similar`, with a `hint` saying what to do.
    #[tool(annotations(title = "Store a fact", destructive_hint = false), output_schema = output::store_schema())]
    async fn memory_store(
        &self,
        Parameters(p): Parameters<StoreParams>,
        ctx: RequestContext<RoleServer>,
    ) -> std::result::Result<CallToolResult, ErrorData> {
        let client = client_name(&ctx);
        self.run(move |engine, env| {
            let now = env.now()?;
            let req = StoreRequest {
                key: p.key,
                value: p.value,
                valid_from: p
                    .valid_from
                    .as_deref()
                    .map(|t| request::valid_time("valid_from", t))
                    .transpose()?,
                valid_to: p
                    .valid_to
                    .as_deref()
                    .map(|t| request::valid_end("valid_to", t))
                    .transpose()?,
                tags: p.tags.unwrap_or_default(),
                agent: agent_name(env, p.agent.as_deref(), client.as_deref()),
                allow_secret: false,
                // An agent's fact is a guess unless it says the person stated it and
                // the workspace written to lets agents assert: the engine's check
                // decides, from the ceiling of that workspace.
                tier: Some(request::tier("tier", p.tier.as_deref())?.unwrap_or(Tier::Inferred)),
                by: Writer::Model,
            };
            let asked = req.tier.unwrap_or(Tier::Inferred);
            let scope = request::level("scope", p.scope.as_deref())?;
            let target = write_target(engine, env, &req.key, scope)?;
            // Checked against the settings of the workspace written to, before it is
            // opened (or, a local scope's first write, made).
            let req = crate::engine::check(req, &target.config(env)?, now)?;
            let mut engine = write_engine(engine, env, &target)?;
            let similar = engine.look_alikes(&req.key)?;
            let outcome = engine.store_checked(&req, now)?;
            let level = target.level;
            let mut out = output::store(&outcome, &similar, level);
            if target.stacked || scope.is_some() {
                // The first line (the stored fact) says where it went.
                let (first, rest) = out.text.split_once('\n').unwrap_or((&out.text, ""));
                out.text = format!("{first} · {level}\n{rest}");
            }
            let recorded = req.tier.unwrap_or(Tier::Inferred);
            if asked > recorded {
                let why = if crate::core::tier::rule_shaped(&req.key, &req.tags) {
                    "a standing rule is only what the person asserted"
                } else {
                    "this workspace does not let agents record it (trust.agents in mem7.yaml)"
                };
                let note = format!(
                    "recorded as `{recorded}`, not `{asked}`: {why}; the person can restate it with `mem7 store`"
                );
                out.note("tier_note", note);
            }
            Ok(out)
        })
        .await
    }

    /// What was true, as mem7 knew it: the version of `key` valid at `valid_at` as
    /// believed at `as_of` (both default to now). Without `key`, every key carrying
    /// `tags`. Returns the versions (valid_from → valid_to, null = still holds; tx_from →
    /// tx_to, when mem7 believed it; the source file:line) and one line per version; on
    /// a miss, "no record" and the existing keys near the one asked for.
    #[tool(annotations(title = "Recall a fact", read_only_hint = true), output_schema = output::versions_schema())]
    async fn memory_recall(
        &self,
        Parameters(p): Parameters<RecallParams>,
    ) -> std::result::Result<CallToolResult, ErrorData> {
        self.run(move |engine, env| {
            let at = read_at(env, p.valid_at.as_deref(), p.as_of.as_deref())?;
            let tags = p.tags.unwrap_or_default();
            let tier = request::tier("tier", p.tier.as_deref())?;
            let scope = request::level("scope", p.scope.as_deref())?;
            let mut scopes = workspaces::around(engine, env, scope)?;
            let found = scopes.ask(Ask {
                key: p.key.as_deref(),
                tags: &tags,
                at,
                tier,
            })?;
            let Clocks { valid_at, as_of } = found.at;
            let mut found = found.rows;
            found.truncate(p.limit.unwrap_or(50).max(1));
            let stacked = scopes.stacked();
            let now = at.now;
            let miss = || match &p.key {
                Some(k) => (
                    format!("no version of {k} is valid at {valid_at} as of {as_of}"),
                    scopes.near_keys(k, now).unwrap_or_default(),
                ),
                None => (
                    format!("no key carries those tags at {valid_at} as of {as_of}"),
                    Vec::new(),
                ),
            };
            Ok(output::scoped(&found, stacked, miss))
        })
        .await
    }

    /// Search every version (keys, values, tags) by words, by meaning, or both, best match
    /// first, under the time filters: only versions valid at `valid_at` as believed at
    /// `as_of` (both default to now). Words match with English stemming; meaning search
    /// finds facts phrased differently from the query. Returns versions with a score and a
    /// snippet (and their word/meaning ranks in a hybrid search).
    #[tool(annotations(title = "Search memory", read_only_hint = true), output_schema = output::hits_schema())]
    async fn memory_search(
        &self,
        Parameters(p): Parameters<SearchParams>,
    ) -> std::result::Result<CallToolResult, ErrorData> {
        self.run(move |engine, env| {
            let at = read_at(env, p.valid_at.as_deref(), p.as_of.as_deref())?;
            let query = p.query.clone();
            let tier = request::tier("tier", p.tier.as_deref())?;
            let find = Find {
                text: p.query,
                raw: false,
                tags: p.tags.unwrap_or_default(),
                key_prefix: None,
                limit: p.limit.unwrap_or(10),
                mode: request::search_mode(p.mode.as_deref())?,
            };
            let scope = request::level("scope", p.scope.as_deref())?;
            let mut scopes = workspaces::around(engine, env, scope)?;
            workspaces::enable_embeddings(&mut scopes, env, VOICE);
            let found = scopes.search(&find, at, tier)?;
            Ok(output::scoped_hits(&found.rows, scopes.stacked(), &query))
        })
        .await
    }

    /// A compact markdown block of what memory holds, for the start of a task: the facts
    /// (all, or those relevant to `query`) with their validity, the changes of the last
    /// 48 hours marked [history], and the rules for reading it. Within `max_chars`.
    #[tool(annotations(title = "Memory context", read_only_hint = true), output_schema = output::text_schema())]
    async fn memory_context(
        &self,
        Parameters(p): Parameters<ContextParams>,
    ) -> std::result::Result<CallToolResult, ErrorData> {
        self.run(move |engine, env| {
            let at = read_at(env, p.valid_at.as_deref(), p.as_of.as_deref())?;
            let req = ContextRequest {
                query: p.query,
                at,
                max_chars: p.max_chars.unwrap_or(block::DEFAULT_MAX_CHARS),
                tier: request::tier("tier", p.tier.as_deref())?,
            };
            let scope = request::level("scope", p.scope.as_deref())?;
            // A block with no question, at now, of every tier leads with where the
            // server's checkout left off (captured by hooks; docs/capture.md).
            let plain = req.question().is_none()
                && p.valid_at.is_none()
                && p.as_of.is_none()
                && req.tier.is_none_or(|t| t == crate::core::Tier::Inferred);
            let mut scopes = workspaces::around(engine, env, scope)?;
            workspaces::enable_embeddings(&mut scopes, env, VOICE);
            let mut ctx = scopes.context(&req)?;
            if plain {
                ctx.left_off = crate::front::capture::left_off(&scopes, &env.cwd, at.now)?;
            }
            let block = block::render(&ctx, &req);
            Ok(output::text(block))
        })
        .await
    }

    /// Every key and its value valid at `valid_at` as believed at `as_of` (both default
    /// to now), optionally only keys under `prefix` or carrying `tags`. The versions,
    /// ordered by key, one line each.
    #[tool(annotations(title = "List facts", read_only_hint = true), output_schema = output::versions_schema())]
    async fn memory_list(
        &self,
        Parameters(p): Parameters<ListParams>,
    ) -> std::result::Result<CallToolResult, ErrorData> {
        self.run(move |engine, env| {
            let at = read_at(env, p.valid_at.as_deref(), p.as_of.as_deref())?;
            let tier = request::tier("tier", p.tier.as_deref())?;
            let scope = request::level("scope", p.scope.as_deref())?;
            let tags = p.tags.unwrap_or_default();
            let mut scopes = workspaces::around(engine, env, scope)?;
            let found = scopes.list((p.prefix.as_deref(), &tags), at, tier)?;
            let Clocks { valid_at, as_of } = found.at;
            let found = found.rows;
            let miss = || {
                (
                    format!("no keys match at valid_at {valid_at} as of {as_of}"),
                    Vec::new(),
                )
            };
            Ok(output::scoped(&found, scopes.stacked(), miss))
        })
        .await
    }

    /// Every version of `key` ever recorded, in the order mem7 learned them, with both
    /// clocks (valid_from/valid_to: when it held; tx_from/tx_to: when mem7 believed it,
    /// tx_to set means no longer believed) and the entry (file:line) behind each. `as_of` limits it to what was
    /// believed then.
    #[tool(annotations(title = "History of a key", read_only_hint = true), output_schema = output::versions_schema())]
    async fn memory_history(
        &self,
        Parameters(p): Parameters<HistoryParams>,
    ) -> std::result::Result<CallToolResult, ErrorData> {
        self.run(move |engine, env| {
            let as_of = p
                .as_of
                .as_deref()
                .map(|t| request::tx_time("as_of", t))
                .transpose()?;
            let scope = request::level("scope", p.scope.as_deref())?;
            let mut scopes = workspaces::around(engine, env, scope)?;
            let found = scopes.history(&p.key, as_of)?;
            let now = env.now()?;
            let stacked = scopes.stacked();
            let miss = || {
                (
                    format!("no history for {}", p.key),
                    scopes.near_keys(&p.key, now).unwrap_or_default(),
                )
            };
            Ok(output::history(&found, stacked, miss))
        })
        .await
    }

    /// Repair a fact stored under two keys (`team:CDN` and `team:cdn`): every version of
    /// `from` believed now is stored under `to` with its own valid period (superseding
    /// what `to` held over it; `to` keeps its values outside), then `from` is forgotten.
    /// Both keys stay readable with an earlier `as_of`. Returns {written, moved,
    /// superseded}; with dry_run, the plan only.
    #[tool(annotations(title = "Move a fact to another key", destructive_hint = false), output_schema = output::rekey_schema())]
    async fn memory_rekey(
        &self,
        Parameters(p): Parameters<RekeyParams>,
        ctx: RequestContext<RoleServer>,
    ) -> std::result::Result<CallToolResult, ErrorData> {
        let client = client_name(&ctx);
        self.run(move |engine, env| {
            let now = env.now()?;
            let own = workspaces::level_of(env, engine.workspace().root());
            let agent = agent_name(env, p.agent.as_deref(), client.as_deref());
            let dry_run = p.dry_run.unwrap_or(false);
            let plan = if dry_run {
                engine.plan_rekey(&p.from, &p.to)?
            } else {
                engine.rekey(&p.from, &p.to, (&agent, Writer::Model), now)?
            };
            Ok(output::object(
                crate::front::wire::rekey_value(&plan, !dry_run, Some(own)),
                crate::front::render::rekey_human(&p.from, &p.to, &plan, !dry_run),
            ))
        })
        .await
    }

    /// Stop believing `key` from now on: reads at later times no longer see it, reads
    /// with an earlier `as_of` still do, and its history stays. Use it when a fact was
    /// wrong or no longer applies; to record a change, store the new value instead.
    #[tool(annotations(
        title = "Forget a key",
        destructive_hint = true,
        idempotent_hint = true
    ), output_schema = output::forget_schema())]
    async fn memory_forget(
        &self,
        Parameters(p): Parameters<ForgetParams>,
        ctx: RequestContext<RoleServer>,
    ) -> std::result::Result<CallToolResult, ErrorData> {
        let client = client_name(&ctx);
        self.run(move |engine, env| {
            let now = env.now()?;
            crate::core::validate::lookup_key(&p.key)?;
            let agent = agent_name(env, p.agent.as_deref(), client.as_deref());
            crate::core::validate::agent(&agent)?;
            let scope = request::level("scope", p.scope.as_deref())?;
            let target = write_target(engine, env, &p.key, scope)?;
            let mut engine = write_engine(engine, env, &target)?;
            let outcome =
                engine.forget(&p.key, p.entry.as_deref(), (&agent, Writer::Model), now)?;
            Ok(output::forget(&p.key, &outcome))
        })
        .await
    }

    /// Read a file of the workspace (e.g. the `file` of a version, to see its entry in
    /// context), optionally only lines from_line..=to_line. Paths are relative to the
    /// workspace; paths outside it are refused.
    #[tool(annotations(title = "Read a workspace file", read_only_hint = true), output_schema = output::text_schema())]
    async fn memory_get(
        &self,
        Parameters(p): Parameters<GetParams>,
    ) -> std::result::Result<CallToolResult, ErrorData> {
        self.run(move |engine, _env| {
            let text = read_workspace_file(engine.workspace(), &p)?;
            Ok(output::text(text))
        })
        .await
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for MemoryServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("mem7", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }
}

impl MemoryServer {
    /// A server on an open engine; `env` gives the clock and the default agent.
    pub fn new(engine: Engine, env: Env) -> MemoryServer {
        MemoryServer {
            session: Arc::new(Session::new(engine, env, VOICE)),
            tool_router: Self::tool_router(),
        }
    }

    /// Runs one call on a blocking thread: catch up with the files, then `f`. Its
    /// errors become tool errors.
    async fn run<F>(&self, f: F) -> std::result::Result<CallToolResult, ErrorData>
    where
        F: FnOnce(&mut Engine, &Env) -> Result<output::Out> + Send + 'static,
    {
        let session = self.session.clone();
        let done = tokio::task::spawn_blocking(move || {
            let (out, notes) = session.call_noting(|engine, _now, env| f(engine, env));
            // What the answer lacks, in words the model acts on.
            out.map(|mut out| {
                for note in &notes {
                    out.text.push_str(&crate::front::notes::for_model(note));
                    out.text.push('\n');
                }
                out
            })
        })
        .await;
        Ok(match done {
            Ok(Ok(out)) => {
                let mut result = CallToolResult::success(vec![ContentBlock::text(out.text)]);
                result.structured_content = Some(out.structured);
                result
            }
            Ok(Err(e)) => tool_error(&e),
            Err(join) => CallToolResult::error(vec![ContentBlock::text(format!(
                "error: mem7 failed inside this call ({join}); the server is still running"
            ))]),
        })
    }
}
