//! The arguments of `mem7 hook` and `mem7 capture` (clap), apart from the command tree
//! in `args.rs`.

use clap::Subcommand;

// `mem7 hook …` (no doc comment: see `Command::Hook`).
#[derive(Debug, Subcommand)]
pub enum HookClient {
    /// A Claude Code hook event on standard input.
    ClaudeCode,
    /// A Codex hook event on standard input.
    Codex,
    /// One of git's hooks: `mem7 hook git post-commit`, with git's arguments.
    Git {
        /// post-commit, post-merge, post-checkout or post-rewrite.
        event: String,
        /// The arguments git passed to the hook.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
}

// `mem7 capture …`.
#[derive(Debug, Subcommand)]
pub enum CaptureAction {
    /// Which kinds are captured, to which scope's workspace, what waits in the spool,
    /// and the log's last lines.
    Status,
    /// Apply every write waiting in the spool (waiting for the writers' lock if an
    /// import holds it).
    Drain,
}
