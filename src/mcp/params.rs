//! The MCP tools' arguments as clients send them (the wire types, with their JSON
//! schemas via schemars), and the one argument read by hand (`memory_search`'s `mode`).

use rmcp::schemars::{self, JsonSchema};
use serde::Deserialize;

/// `memory_store` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(transform = crate::front::wire::standard_formats)]
#[serde(deny_unknown_fields)]
pub struct StoreParams {
    /// The fact's key: one word of letters, digits and `_ - . : / @ +`, e.g.
    /// `project:deploy_target` or `user:current_ticket` (at most 200 bytes).
    pub key: String,
    /// The value: short markdown text stating the fact.
    pub value: String,
    /// When the fact started to hold in the world (YYYY-MM-DD or RFC 3339). Default: now.
    /// Give a past time for a fact that was already true.
    pub valid_from: Option<String>,
    /// When it stopped holding (exclusive). Default: until the next already-known change
    /// of this key. `infinity` overrides every later version.
    pub valid_to: Option<String>,
    /// Tags for filtering, e.g. ["deploy", "infra"].
    pub tags: Option<Vec<String>>,
    /// Who is writing. Default: the MEM7_AGENT of the server, else the client's name.
    pub agent: Option<String>,
    /// Who vouches for the fact: `inferred` (the default: you concluded it; a guess to
    /// verify) or `asserted` (the person said it in so many words). `asserted` is
    /// recorded only where the workspace lets agents assert (`trust.agents` in
    /// mem7.yaml); otherwise the fact is recorded as `inferred` and the result says so.
    pub tier: Option<String>,
    /// The scope to write to: `local` (this checkout only, never shared), `project`
    /// (the project's workspace, shared through its git) or `user` (the person's own,
    /// everywhere). Default: by the key (`user:*` and `pref:*` to user, `local:*` to
    /// local, the rest to project), where that scope has a workspace.
    pub scope: Option<String>,
}

/// `memory_recall` arguments.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[schemars(transform = crate::front::wire::standard_formats)]
#[serde(deny_unknown_fields)]
pub struct RecallParams {
    /// The key to look up. Without it, every key matching `tags` is returned.
    pub key: Option<String>,
    /// Only versions carrying all these tags.
    pub tags: Option<Vec<String>>,
    /// The moment in the world to ask about (YYYY-MM-DD or RFC 3339). Default: now.
    pub valid_at: Option<String>,
    /// Answer as mem7 believed at this moment (YYYY-MM-DD or RFC 3339). Default: now.
    pub as_of: Option<String>,
    /// At most this many versions (default 50).
    pub limit: Option<usize>,
    /// Only facts of this tier: `asserted` (the person stated it) or `inferred` (a
    /// model's guess). Default: every fact.
    pub tier: Option<String>,
    /// Only this scope: `local` (this checkout), `project` (the project's workspace) or
    /// `user` (the person's, everywhere). Default: every scope, the narrowest answering
    /// for each key (wider values of the same key come back marked `shadowed`).
    pub scope: Option<String>,
}

/// `memory_search` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(transform = crate::front::wire::standard_formats)]
#[serde(deny_unknown_fields)]
pub struct SearchParams {
    /// Words to look for in keys, values and tags (plain text; punctuation is fine).
    pub query: String,
    /// Only versions valid at this moment in the world. Default: now.
    pub valid_at: Option<String>,
    /// Only what mem7 believed at this moment. Default: now.
    pub as_of: Option<String>,
    /// Only versions carrying all these tags.
    pub tags: Option<Vec<String>>,
    /// At most this many results (default 10).
    pub limit: Option<usize>,
    /// `lexical` (words, BM25), `semantic` (meaning, embeddings) or `hybrid` (both, fused
    /// by score). Default: hybrid when vectors exist, else lexical.
    pub mode: Option<String>,
    /// Only facts of this tier: `asserted` (the person stated it) or `inferred` (a
    /// model's guess). Default: every fact.
    pub tier: Option<String>,
    /// Only this scope: `local` (this checkout), `project` (the project's workspace) or
    /// `user` (the person's, everywhere). Default: every scope, the narrowest answering
    /// for each key (wider values of the same key come back marked `shadowed`).
    pub scope: Option<String>,
}

/// `memory_context` arguments.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[schemars(transform = crate::front::wire::standard_formats)]
#[serde(deny_unknown_fields)]
pub struct ContextParams {
    /// Only facts relevant to this text. Default: all current facts.
    pub query: Option<String>,
    /// The moment in the world to describe. Default: now.
    pub valid_at: Option<String>,
    /// As mem7 believed at this moment. Default: now.
    pub as_of: Option<String>,
    /// The block's length budget in characters (default 6000).
    pub max_chars: Option<usize>,
    /// Only facts of this tier: `asserted` (the person stated it) or `inferred` (a
    /// model's guess). Default: every fact.
    pub tier: Option<String>,
    /// Only this scope: `local` (this checkout), `project` (the project's workspace) or
    /// `user` (the person's, everywhere). Default: every scope, the narrowest answering
    /// for each key (wider values of the same key come back marked `shadowed`).
    pub scope: Option<String>,
}

/// `memory_list` arguments.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[schemars(transform = crate::front::wire::standard_formats)]
#[serde(deny_unknown_fields)]
pub struct ListParams {
    /// Only keys starting with this text, e.g. `project:`.
    pub prefix: Option<String>,
    /// Only versions carrying all these tags.
    pub tags: Option<Vec<String>>,
    /// The moment in the world to ask about. Default: now.
    pub valid_at: Option<String>,
    /// As mem7 believed at this moment. Default: now.
    pub as_of: Option<String>,
    /// Only facts of this tier: `asserted` (the person stated it) or `inferred` (a
    /// model's guess). Default: every fact.
    pub tier: Option<String>,
    /// Only this scope: `local` (this checkout), `project` (the project's workspace) or
    /// `user` (the person's, everywhere). Default: every scope, the narrowest answering
    /// for each key (wider values of the same key come back marked `shadowed`).
    pub scope: Option<String>,
}

/// `memory_history` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(transform = crate::front::wire::standard_formats)]
#[serde(deny_unknown_fields)]
pub struct HistoryParams {
    /// The key whose versions to list.
    pub key: String,
    /// Only what mem7 believed at this moment. Default: every version ever recorded.
    pub as_of: Option<String>,
    /// Only this scope: `local` (this checkout), `project` (the project's workspace) or
    /// `user` (the person's, everywhere). Default: every scope, the narrowest answering
    /// for each key (wider values of the same key come back marked `shadowed`).
    pub scope: Option<String>,
}

/// `memory_forget` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(transform = crate::front::wire::standard_formats)]
#[serde(deny_unknown_fields)]
pub struct ForgetParams {
    /// The key to stop believing.
    pub key: String,
    /// Forget only one value of a key of many values (`event:*`, `decision:*`): the
    /// `hash` of the entry that wrote it, as memory_recall shows it. Without it, every
    /// value of the key is forgotten.
    pub entry: Option<String>,
    /// Who is forgetting. Default: as for memory_store.
    pub agent: Option<String>,
    /// The scope to write to: `local` (this checkout only, never shared), `project`
    /// (the project's workspace, shared through its git) or `user` (the person's own,
    /// everywhere). Default: by the key (`user:*` and `pref:*` to user, `local:*` to
    /// local, the rest to project), where that scope has a workspace.
    pub scope: Option<String>,
}

/// `memory_rekey` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(transform = crate::front::wire::standard_formats)]
#[serde(deny_unknown_fields)]
pub struct RekeyParams {
    /// The key the fact is stored under now (the drifted one).
    pub from: String,
    /// The key it belongs under.
    pub to: String,
    /// Only say what would move and what it would supersede; write nothing.
    pub dry_run: Option<bool>,
    /// Who is moving it. Default: as for memory_store.
    pub agent: Option<String>,
}

/// `memory_get` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(transform = crate::front::wire::standard_formats)]
#[serde(deny_unknown_fields)]
pub struct GetParams {
    /// A file inside the workspace, relative to it, e.g. `memory/2026-04-05.md` (as in a
    /// version's `file`).
    pub path: String,
    /// First line to return (1-based, default 1).
    pub from_line: Option<usize>,
    /// Last line to return (inclusive, default: 2000 lines after from_line).
    pub to_line: Option<usize>,
}
