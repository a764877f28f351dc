//! The arguments of the reading commands (`history`, `search`, `timeline`, `list`,
//! `context`) and the clocks every read takes (clap), apart from the command tree in
//! `args.rs`.

use clap::Args;

use super::args::TIME_HELP;
use super::values::*;

#[derive(Debug, Args)]
pub struct TimeArgs {
    #[arg(long, value_name = "T", help = format!("The moment in the world to ask about (default: now): {TIME_HELP}"))]
    pub valid_at: Option<String>,
    #[arg(long, value_name = "T", help = format!("Answer as mem7 believed at T (default: now): {TIME_HELP}"))]
    pub as_of: Option<String>,
}

// The arguments of `mem7 history` (no doc comment: the variant's is the command's help).
#[derive(Debug, Args)]
pub struct HistoryArgs {
    pub key: String,
    /// Only what was believed at this transaction time.
    #[arg(long, value_name = "T", help = format!("Only what mem7 believed at T: {TIME_HELP}"))]
    pub as_of: Option<String>,
    /// Print a JSON array of versions.
    #[arg(long, conflicts_with = "svg")]
    pub json: bool,
    /// Write the bitemporal picture as one standalone SVG document to stdout.
    #[arg(long)]
    pub svg: bool,
    /// With --svg: draw a line at this valid time.
    #[arg(long, value_name = "T", requires = "svg", help = format!("With --svg, draw a line at valid time T: {TIME_HELP}"))]
    pub valid_at: Option<String>,
    #[command(flatten)]
    pub scope: ScopeChoice,
}

// The arguments of `mem7 search` (no doc comment: the variant's is the command's help).
#[derive(Debug, Args)]
pub struct SearchArgs {
    /// The words to look for.
    #[arg(allow_hyphen_values = true)]
    pub query: String,
    #[command(flatten)]
    pub at: TimeArgs,
    #[command(flatten)]
    pub tier: TierFilter,
    #[command(flatten)]
    pub scope: ScopeChoice,
    /// Only versions carrying TAG (repeat to require several).
    #[arg(long = "tag", value_name = "TAG")]
    pub tags: Vec<String>,
    /// Only keys starting with P.
    #[arg(long, value_name = "P")]
    pub key_prefix: Option<String>,
    /// At most N results.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub limit: usize,
    /// Treat QUERY as tantivy query syntax (fields: value, key, tags_text).
    #[arg(long)]
    pub raw: bool,
    /// Rank by words (BM25), by meaning (cosine similarity of embeddings), or both
    /// fused by score. Default: hybrid when the workspace has vectors of the
    /// configured model, else lexical.
    #[arg(long, value_enum, value_name = "MODE")]
    pub mode: Option<crate::engine::SearchMode>,
    /// Print a JSON array of versions, each with a `score` and a `snippet`.
    #[arg(long)]
    pub json: bool,
}

// The arguments of `mem7 timeline` (no doc comment: the variant's is the command's help).
#[derive(Debug, Args)]
pub struct TimelineArgs {
    /// Which clock orders the list.
    #[arg(long, value_enum, default_value_t = Clock::Valid)]
    pub clock: Clock,
    #[arg(long, value_name = "T", help = format!("From T on (inclusive): {TIME_HELP}"))]
    pub since: Option<String>,
    #[arg(long, value_name = "T", help = format!("Before T (exclusive): {TIME_HELP}"))]
    pub until: Option<String>,
    /// Only keys starting with P.
    #[arg(long, value_name = "P")]
    pub key_prefix: Option<String>,
    /// Print a JSON array of versions.
    #[arg(long)]
    pub json: bool,
}

// The arguments of `mem7 rekey` (no doc comment: the variant's is the command's help).
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Only keys starting with P.
    #[arg(long, value_name = "P")]
    pub prefix: Option<String>,
    /// Only versions carrying TAG (repeat to require several).
    #[arg(long = "tag", value_name = "TAG")]
    pub tags: Vec<String>,
    #[command(flatten)]
    pub at: TimeArgs,
    #[command(flatten)]
    pub tier: TierFilter,
    #[command(flatten)]
    pub scope: ScopeChoice,
    /// Print a JSON array of versions.
    #[arg(long)]
    pub json: bool,
}

// The arguments of `mem7 context`.
#[derive(Debug, Args)]
pub struct ContextArgs {
    /// Only facts relevant to these words (full-text search).
    pub query: Option<String>,
    #[command(flatten)]
    pub at: TimeArgs,
    #[command(flatten)]
    pub tier: TierFilter,
    #[command(flatten)]
    pub scope: ScopeChoice,
    /// The block's length budget in characters.
    #[arg(long, value_name = "N", default_value_t = crate::front::block::DEFAULT_MAX_CHARS)]
    pub max_chars: usize,
    /// Print in the shape a client's session-start hook expects.
    #[arg(long, value_enum, value_name = "CLIENT")]
    pub hook: Option<Client>,
}
