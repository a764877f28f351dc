//! The process environment mem7 reads, captured once (`Env`), and what follows from it
//! alone: "now", the chain key, the agent name, workspace discovery. The front ends (the
//! CLI, the MCP server, the page) take it from here; nothing below them reads the
//! environment.

use std::path::{Path, PathBuf};

use crate::core::chain::ChainKey;
use crate::core::level::Level;
use crate::core::time::TxTime;
use crate::error::{Error, Result};
use crate::store;

/// The blake3 key-derivation context for `MEM7_CHAIN_KEY`.
pub const CHAIN_KEY_CONTEXT: &str = "mem7 2026-11-29 hash chain key v1";

/// The process environment mem7 reads, captured once so everything below is pure of it.
#[derive(Clone, Debug, Default)]
pub struct Env {
    pub workspace: Option<PathBuf>,
    /// `MEM7_USER_WORKSPACE`: the user scope's workspace (default `~/.mem7/workspace`).
    pub user_workspace: Option<PathBuf>,
    pub now: Option<String>,
    pub agent: Option<String>,
    pub user: Option<String>,
    pub home: Option<PathBuf>,
    /// `XDG_CONFIG_HOME`: where the user's approvals of projects' settings are kept
    /// (default `~/.config`).
    pub config_home: Option<PathBuf>,
    pub legacy_dir: Option<PathBuf>,
    pub chain_key: Option<String>,
    /// Codex's configuration directory (`CODEX_HOME`), for `mem7 setup codex`.
    pub codex_home: Option<PathBuf>,
    /// The embedding provider's variables (`MEM7_EMBED_*`, `MEM7_MODEL_DIR`).
    pub embed: crate::embed::EmbedEnv,
    pub cwd: PathBuf,
    /// `MEM7_TRACE`: what to say about mem7's own work on standard error, as a
    /// comma-separated list (`startup`: how each start-up knew its index was current;
    /// `requests`: how a long-running server knew it before each call).
    pub trace: Option<String>,
    /// This process must never wait for the writers' lock or a rebuild (a hook,
    /// docs/capture.md): its workspaces are opened [`store::Workspace::without_waiting`]. Set by the
    /// front end, not read from the environment.
    pub no_wait: bool,
}

impl Env {
    /// Reads the real environment.
    pub fn from_process() -> Env {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        Env {
            workspace: var("MEM7_WORKSPACE").map(PathBuf::from),
            user_workspace: var("MEM7_USER_WORKSPACE").map(PathBuf::from),
            now: var("MEM7_NOW"),
            agent: var("MEM7_AGENT"),
            user: var("USER").or_else(|| var("USERNAME")),
            home: var("HOME").map(PathBuf::from),
            config_home: var("XDG_CONFIG_HOME").map(PathBuf::from),
            legacy_dir: var("MEM7_DIR").map(PathBuf::from),
            chain_key: std::env::var("MEM7_CHAIN_KEY").ok(),
            codex_home: var("CODEX_HOME").map(PathBuf::from),
            embed: crate::embed::EmbedEnv::from_process(),
            cwd: std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
            trace: var("MEM7_TRACE"),
            no_wait: false,
        }
    }

    /// Whether `MEM7_TRACE` names `what`.
    pub fn traces(&self, what: &str) -> bool {
        self.trace
            .as_deref()
            .is_some_and(|t| t.split(',').any(|w| w.trim() == what))
    }

    /// "Now": `MEM7_NOW` when set (must be RFC 3339), else the system clock.
    pub fn now(&self) -> Result<TxTime> {
        match &self.now {
            Some(text) => {
                let parsed = chrono::DateTime::parse_from_rfc3339(text.trim()).map_err(|_| {
                    Error::input(
                        format!("MEM7_NOW={text:?} is not an RFC 3339 time"),
                        "set it like MEM7_NOW=2026-04-12T09:00:00Z, or unset it to use the clock",
                    )
                })?;
                let now = TxTime::from_micros(parsed.timestamp_micros());
                if !now.in_range() {
                    return Err(Error::input(
                        format!(
                            "MEM7_NOW={text:?} is outside the times mem7 keeps ({})",
                            crate::core::time::RANGE_TEXT
                        ),
                        "set it to a time in years 1 to 9999, or unset it to use the clock",
                    ));
                }
                Ok(now)
            }
            None => Ok(TxTime::from_micros(chrono::Utc::now().timestamp_micros())),
        }
    }

    /// The chain key: `MEM7_CHAIN_KEY` is any non-empty secret; the 32-byte blake3 key
    /// is derived from it (blake3 `derive_key`, context [`CHAIN_KEY_CONTEXT`]).
    pub fn chain_key(&self) -> Result<ChainKey> {
        match &self.chain_key {
            None => Ok(ChainKey::Plain),
            Some(secret) if secret.trim().is_empty() => Err(Error::input(
                "MEM7_CHAIN_KEY is set but empty",
                "set it to a long random secret (e.g. `openssl rand -hex 32`), or unset it",
            )),
            Some(secret) => Ok(ChainKey::Keyed(blake3::derive_key(
                CHAIN_KEY_CONTEXT,
                secret.as_bytes(),
            ))),
        }
    }

    /// The agent name for writes: the flag as given (validated later), else
    /// `MEM7_AGENT` or `$USER` made safe (their odd characters become `-`), else `cli`.
    pub fn agent(&self, flag: Option<&str>) -> String {
        if let Some(name) = flag {
            return name.to_string();
        }
        self.agent
            .as_deref()
            .or(self.user.as_deref())
            .map(safe_agent)
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "cli".to_string())
    }

    /// Workspace discovery: flag > MEM7_WORKSPACE > nearest ancestor with mem7.yaml >
    /// $MEM7_DIR/workspace (Go mem7) > ~/.mem7/workspace. The first three name the
    /// project scope; the last two (or MEM7_USER_WORKSPACE) the user scope.
    pub fn workspace(&self, flag: Option<&Path>) -> PathBuf {
        self.project_workspace(flag)
            .unwrap_or_else(|| self.user_workspace())
    }

    /// The project scope's workspace: flag > MEM7_WORKSPACE > nearest ancestor of the
    /// working directory with mem7.yaml (as git finds `.git`). `None` outside a project.
    pub fn project_workspace(&self, flag: Option<&Path>) -> Option<PathBuf> {
        if let Some(dir) = flag {
            return Some(absolute(&self.cwd, dir));
        }
        if let Some(dir) = &self.workspace {
            return Some(absolute(&self.cwd, dir));
        }
        let mut dir = Some(self.cwd.as_path());
        while let Some(d) = dir {
            if d.join(store::CONFIG_FILE).is_file() {
                return Some(d.to_path_buf());
            }
            dir = d.parent();
        }
        None
    }

    /// Why a command landed on the workspace at `root`, when nobody named it with
    /// `--workspace`: "MEM7_WORKSPACE", "the nearest folder holding mem7.yaml", "your own
    /// workspace"… `None` when the flag named it (the person said it just now).
    pub fn workspace_origin(&self, flag: Option<&Path>, root: &Path) -> Option<String> {
        if flag.is_some_and(|f| same_dir(&absolute(&self.cwd, f), root)) {
            return None;
        }
        let project = self.project_workspace(flag);
        let why = if project
            .as_deref()
            .is_some_and(|p| same_dir(&local_workspace(p), root))
        {
            "this checkout's local scope".to_string()
        } else if project.as_deref().is_some_and(|p| same_dir(p, root)) {
            if flag.is_some() {
                return None;
            } else if self.workspace.is_some() {
                "from MEM7_WORKSPACE".to_string()
            } else {
                "the nearest folder holding mem7.yaml".to_string()
            }
        } else if self.user_workspace.is_some() {
            "your own workspace, MEM7_USER_WORKSPACE".to_string()
        } else if self.legacy_dir.is_some() {
            "your own workspace, under MEM7_DIR".to_string()
        } else {
            "your own workspace, the default".to_string()
        };
        Some(why)
    }

    /// The user scope's workspace: MEM7_USER_WORKSPACE > $MEM7_DIR/workspace (Go mem7) >
    /// ~/.mem7/workspace.
    pub fn user_workspace(&self) -> PathBuf {
        if let Some(dir) = &self.user_workspace {
            return absolute(&self.cwd, dir);
        }
        if let Some(legacy) = &self.legacy_dir {
            return absolute(&self.cwd, legacy).join("workspace");
        }
        match &self.home {
            Some(home) => home.join(".mem7").join("workspace"),
            None => self.cwd.join(".mem7-workspace"),
        }
    }

    /// Every scope's workspace, narrowest first, whether it exists or not: the local one
    /// (`.mem7/local` inside the project's, never synced), the project's, the user's.
    /// Outside a project (or in the user's own workspace) the local scope is this
    /// machine's: `.mem7/local` inside the user's workspace, which git ignores too, so
    /// what stays on this machine (a captured session trail, `local:` notes) never
    /// leaves it with the user's sync.
    pub fn scope_roots(&self, flag: Option<&Path>) -> Vec<(Level, PathBuf)> {
        let user = self.user_workspace();
        let mut roots = Vec::with_capacity(3);
        match self.project_workspace(flag) {
            Some(project) if !same_dir(&project, &user) => {
                roots.push((Level::Local, local_workspace(&project)));
                roots.push((Level::Project, project));
            }
            // Only beside a user workspace that exists: a local scope is never made
            // inside a workspace nobody created.
            _ if store::is_workspace(&user) => roots.push((Level::Local, local_workspace(&user))),
            _ => {}
        }
        roots.push((Level::User, user));
        roots
    }
}

/// The local scope's workspace of a project workspace: inside its index directory,
/// which git ignores, so it belongs to this checkout alone.
pub fn local_workspace(project: &Path) -> PathBuf {
    project.join(store::INDEX_DIR).join("local")
}

/// Whether two paths name one directory (either may not exist yet).
fn same_dir(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// A name from the environment (or an MCP client) made into a valid agent name: odd
/// characters become `-`, and it is cut to a safe length. Empty when nothing is left.
pub fn safe_agent(raw: &str) -> String {
    // A name that looks like a credential is kept whole, so the write's credential
    // check sees all of it and refuses it (cut first, a token's tail got through).
    if crate::text::secret::find(raw.trim()).is_some() {
        return raw.trim().to_string();
    }
    let safe: String = raw
        .trim()
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || " _-.@+/()".contains(c) {
                c
            } else {
                '-'
            }
        })
        .take(crate::core::validate::MAX_AGENT_BYTES / 4)
        .collect();
    safe.trim().to_string()
}

pub(crate) fn absolute(cwd: &Path, p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        cwd.join(p)
    }
}
