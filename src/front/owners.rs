//! Whose settings count (docs/integrity.md, "Settings have owners"). The user's own
//! workspace's `mem7.yaml` is the user's word. Any other workspace's (a project's, a
//! checkout's) is the words of whoever last committed it: it counts as far as
//! [`crate::config::Config::owned`] lets it against the user's own settings, and what it
//! widens counts only once the user approved that content on this machine (`mem7
//! allow`), as `direnv allow` or git's `safe.directory` do.
//!
//! Approvals live outside every repository, in `$XDG_CONFIG_HOME/mem7/allowed` (else
//! `~/.config/mem7/allowed`): one line per workspace, the blake3 hash of the approved
//! `mem7.yaml` and the workspace's canonical path. A changed file has another hash, so
//! a pull that changes it withdraws the approval by itself.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use super::env::Env;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::store::{Owner, Workspace};

/// The workspaces whose ignored settings this process has already named (once per
/// command, not once per opening).
static SAID: Mutex<Option<HashSet<PathBuf>>> = Mutex::new(None);

/// Set by front ends that must print nothing their host does not expect (hooks).
static QUIET: AtomicBool = AtomicBool::new(false);

/// Says nothing on standard error about ignored settings from now on (a hook's process).
pub fn quiet() {
    QUIET.store(true, Ordering::Relaxed);
}

/// Opens the workspace at `root` with its settings counted as their owner lets them,
/// and says once per process which settings of an unapproved `mem7.yaml` were ignored
/// and how to approve them.
pub fn open(env: &Env, root: &Path) -> Result<Workspace> {
    let ws = open_quietly(env, root)?;
    if !ws.ignored_settings().is_empty() && !QUIET.load(Ordering::Relaxed) {
        let mut said = SAID.lock().unwrap_or_else(|e| e.into_inner());
        if said
            .get_or_insert_with(HashSet::new)
            .insert(canonical(root))
        {
            eprintln!("mem7: warning: {}", ignored_line(&ws));
        }
    }
    Ok(ws)
}

/// [`open`] without the warning.
pub fn open_quietly(env: &Env, root: &Path) -> Result<Workspace> {
    if is_users_own(env, root) {
        return Workspace::open_as(root, &Owner::Own);
    }
    let user = user_config(env);
    let approvals = read_approvals(env);
    let here = canonical(root);
    let approved = |hash: &str| approvals.iter().any(|(h, p)| h == hash && *p == here);
    Workspace::open_as(
        root,
        &Owner::Project {
            user: &user,
            approved: &approved,
        },
    )
}

/// The line that names what an unapproved `mem7.yaml` widens and how to approve it.
pub fn ignored_line(ws: &Workspace) -> String {
    let what: Vec<String> = ws
        .ignored_settings()
        .iter()
        .map(super::said::ignored)
        .collect();
    format!(
        "{} asks for settings that widen what mem7 may do here, ignored until you approve the file on this machine: {}. Read it, then run `mem7 allow {}`",
        ws.root().join(crate::store::CONFIG_FILE).display(),
        what.join("; "),
        shell_path(ws.root())
    )
}

/// Whether `root` is the user's own workspace.
pub fn is_users_own(env: &Env, root: &Path) -> bool {
    canonical(root) == canonical(&env.user_workspace())
}

/// The user's own settings: their workspace's `mem7.yaml` (defaults when it is missing
/// or unreadable; its own commands say what is wrong with it).
pub fn user_config(env: &Env) -> Config {
    let path = env.user_workspace().join(crate::store::CONFIG_FILE);
    std::fs::read_to_string(path)
        .ok()
        .and_then(|text| Config::parse(&text).ok())
        .unwrap_or_default()
}

/// Where approvals are kept.
pub fn approvals_file(env: &Env) -> PathBuf {
    let base = env
        .config_home
        .clone()
        .or_else(|| env.home.as_ref().map(|h| h.join(".config")))
        .unwrap_or_else(|| env.cwd.join(".config"));
    base.join("mem7").join("allowed")
}

/// Every approval: (hash, canonical workspace path).
fn read_approvals(env: &Env) -> Vec<(String, PathBuf)> {
    let Ok(text) = std::fs::read_to_string(approvals_file(env)) else {
        return Vec::new();
    };
    text.lines()
        .filter_map(|line| {
            let (hash, path) = line.split_once(' ')?;
            Some((hash.to_string(), PathBuf::from(path)))
        })
        .collect()
}

/// What [`allow`] did.
#[derive(Debug, PartialEq, Eq)]
pub enum Allowed {
    /// The user's own workspace: its settings are the user's; nothing to approve.
    Own,
    /// The content with this hash is approved (it was already, when `already`).
    Approved { hash: String, already: bool },
}

/// Approves the current `mem7.yaml` of the workspace at `root` on this machine, or
/// (`revoke`) withdraws any approval of it. Returns what was done.
pub fn allow(env: &Env, root: &Path, revoke: bool) -> Result<Option<Allowed>> {
    let ws = open_quietly(env, root)?;
    if is_users_own(env, root) {
        return Ok(Some(Allowed::Own));
    }
    let here = canonical(root);
    let mut approvals = read_approvals(env);
    let had = approvals.len();
    let already = approvals
        .iter()
        .any(|(h, p)| h == ws.settings_hash() && *p == here);
    approvals.retain(|(_, p)| *p != here);
    if revoke {
        if approvals.len() != had {
            write_approvals(env, &approvals)?;
        }
        return Ok(None);
    }
    if ws.settings_hash().is_empty() {
        return Err(Error::input(
            format!("{} has no mem7.yaml to approve", root.display()),
            "a workspace without one uses your own settings already",
        ));
    }
    approvals.push((ws.settings_hash().to_string(), here));
    if !already {
        write_approvals(env, &approvals)?;
    }
    Ok(Some(Allowed::Approved {
        hash: ws.settings_hash().to_string(),
        already,
    }))
}

/// Records the approval of exactly these bytes of `root`'s `mem7.yaml` (what `mem7 init`
/// just wrote: the user's own act on this machine).
pub fn allow_written(env: &Env, root: &Path, bytes: &[u8]) -> Result<()> {
    if is_users_own(env, root) {
        return Ok(());
    }
    let here = canonical(root);
    let mut approvals = read_approvals(env);
    approvals.retain(|(_, p)| *p != here);
    approvals.push((crate::store::settings_hash(bytes), here));
    write_approvals(env, &approvals)
}

/// Whether the current `mem7.yaml` of `root` is approved (or needs no approval).
pub fn is_approved(env: &Env, root: &Path) -> bool {
    open_quietly(env, root)
        .is_ok_and(|ws| !matches!(ws.standing(), crate::config::Standing::Unapproved))
}

/// Writes the list of approvals, leaving out those of folders that are gone: every
/// `mem7 init` adds one, scratch workspaces come and go, and each write to a project's
/// workspace reads the whole list. Dropping one fails closed: a folder made again at
/// that path, or a drive mounted again, asks for its approval anew.
fn write_approvals(env: &Env, approvals: &[(String, PathBuf)]) -> Result<()> {
    let path = approvals_file(env);
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let mut text = String::new();
    for (hash, p) in approvals.iter().filter(|(_, p)| p.is_dir()) {
        text.push_str(&format!("{hash} {}\n", p.display()));
    }
    // Temp file, then rename: a reader sees the old list or the new one.
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(|e| Error::io(dir, e))?;
    std::io::Write::write_all(&mut tmp, text.as_bytes()).map_err(|e| Error::io(&path, e))?;
    tmp.as_file().sync_all().map_err(|e| Error::io(&path, e))?;
    tmp.persist(&path).map_err(|e| Error::io(&path, e.error))?;
    Ok(())
}

fn canonical(p: &Path) -> PathBuf {
    p.canonicalize().unwrap_or_else(|_| p.to_path_buf())
}

/// A path as a person would type it in a shell (quoted when it needs to be).
fn shell_path(p: &Path) -> String {
    let s = p.display().to_string();
    if s.chars()
        .all(|c| c.is_alphanumeric() || "/._-~+".contains(c))
    {
        s
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}
