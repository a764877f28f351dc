//! The values flags take (clap value enums) and small flag groups shared by several
//! commands, apart from the command tree in `args.rs`.

use crate::engine::SearchMode;

/// An agent mem7 can set itself up for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Client {
    /// Anthropic's Claude Code.
    ClaudeCode,
    /// OpenAI's Codex CLI.
    Codex,
}

/// Where `setup` registers mem7.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Scope {
    /// This project only (files in the current directory).
    Project,
    /// Every project of this user (files in the home directory).
    User,
}

/// The clock a timeline follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Clock {
    /// Valid time: when facts held in the world.
    Valid,
    /// Transaction time: when mem7 recorded them.
    Tx,
}

// `--tier` on a read: only facts of one tier. (No doc comment: clap would make it the
// help of each command it is flattened into, which builds its arguments when it runs.)
#[derive(Clone, Copy, Debug, Default, clap::Args)]
pub struct TierFilter {
    /// Only facts of this tier: `asserted` (stated by a person) or `inferred` (a model's
    /// guess). Facts written before tiers existed have neither.
    #[arg(long = "tier", value_enum, value_name = "TIER")]
    pub tier: Option<TierArg>,
}

impl TierFilter {
    /// The tier to keep, if any.
    pub fn wanted(self) -> Option<crate::core::Tier> {
        self.tier.map(Into::into)
    }
}

/// `--tier`: who vouches for a fact.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum TierArg {
    /// Stated by a person.
    Asserted,
    /// Inferred by a model: a guess to verify.
    Inferred,
}

impl From<TierArg> for crate::core::Tier {
    fn from(t: TierArg) -> Self {
        match t {
            TierArg::Asserted => crate::core::Tier::Asserted,
            TierArg::Inferred => crate::core::Tier::Inferred,
        }
    }
}

/// `export --format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormatArg {
    /// JSON Lines.
    Json,
    /// CSV with a header.
    Csv,
}

/// `search --mode`: the engine's own modes, by the words the engine names them
/// ([`SearchMode::name`]), so the CLI, the MCP tools and the page parse one set of words.
impl clap::ValueEnum for SearchMode {
    fn value_variants<'a>() -> &'a [Self] {
        &SearchMode::NAMED
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        let help = match self {
            SearchMode::Auto => return None,
            SearchMode::Lexical => "Words only (BM25)",
            SearchMode::Semantic => "Meaning only (embeddings)",
            SearchMode::Hybrid => "Both, fused by score",
        };
        Some(clap::builder::PossibleValue::new(self.name()).help(help))
    }
}

/// `--scope`: one scope of the stack.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ScopeArg {
    /// This checkout or machine (the project workspace's .mem7/local; never synced).
    Local,
    /// The project's workspace (the nearest mem7.yaml above the working directory, or
    /// --workspace), shared through the project's git.
    Project,
    /// Your own workspace, everywhere (MEM7_USER_WORKSPACE, else ~/.mem7/workspace).
    User,
}

// `--scope` on a command: write to, or read from, one scope only. (No doc comment: as
// for `TierFilter`.)
#[derive(Clone, Copy, Debug, Default, clap::Args)]
pub struct ScopeChoice {
    /// Only this scope: `local`, `project` or `user`. Reads otherwise merge every scope
    /// (the narrowest that holds a key answers); writes otherwise go where the key's
    /// class says (`scopes:` in mem7.yaml: user:* and pref:* to user, local:* to local,
    /// the rest to project).
    #[arg(long = "scope", value_enum, value_name = "SCOPE")]
    pub scope: Option<ScopeArg>,
}

impl ScopeChoice {
    /// The scope named, if any.
    pub fn level(self) -> Option<crate::core::level::Level> {
        self.scope.map(|s| match s {
            ScopeArg::Local => crate::core::level::Level::Local,
            ScopeArg::Project => crate::core::level::Level::Project,
            ScopeArg::User => crate::core::level::Level::User,
        })
    }
}
