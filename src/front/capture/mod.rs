//! Capture's shell (docs/capture.md): a hook's events written as facts
//! without ever waiting. Each write goes to the scope its key says (the session trail
//! to the local scope, project facts to the project's) through a workspace opened
//! [`crate::store::Workspace::without_waiting`]: when the writers' lock is held (a long
//! import), the index needs a rebuild or `mem7.yaml` does not read, the write goes to
//! the spool ([`spool`]) instead, which the next hook that can write, or `mem7 capture
//! drain`, applies. With no workspace at all it is dropped, with a line in the log.
//! Git is asked what an agent's output only names ([`git`]). Nothing here prints.

pub mod git;
pub mod spool;
pub mod turns;

use std::io::Write as _;
use std::path::{Path, PathBuf};

use spool::Record;

use super::env::Env;
use super::workspaces;
use crate::capture::facts::{self, Write};
use crate::capture::{Client, Kind, Settings, TAG, trail};
use crate::core::Tier;
use crate::core::time::{TxTime, ValidTime};
use crate::engine::Scopes;
use crate::engine::{Engine, Narrow, StoreOutcome, StoreRequest};
use crate::error::{Error, Result};

/// The log of what capture could not do, in the hook's workspace.
pub fn log_path(env: &Env, flag: Option<&Path>) -> PathBuf {
    let home = env.workspace(flag);
    if home.is_dir() {
        return home.join(crate::store::INDEX_DIR).join("capture.log");
    }
    // No workspace at all: the user's state folder, as XDG places logs.
    match &env.home {
        Some(h) => h.join(".local/state/mem7/capture.log"),
        None => env.cwd.join(".mem7-capture.log"),
    }
}

/// The log grows to this size, then the older half is kept as `capture.log.1`.
const MAX_LOG_BYTES: u64 = 1 << 20;

/// Appends one line to the capture log (best effort: a log that cannot be written is
/// one more thing a hook does not stop for).
pub fn log(env: &Env, flag: Option<&Path>, now: TxTime, line: &str) {
    let path = log_path(env, flag);
    let _ = (|| -> std::io::Result<()> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        if std::fs::metadata(&path).is_ok_and(|m| m.len() > MAX_LOG_BYTES) {
            std::fs::rename(&path, path.with_extension("log.1"))?;
        }
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)?;
        let line: String = line.chars().filter(|c| *c != '\n').take(2000).collect();
        writeln!(f, "{} {line}", facts::stamp(now.micros()))
    })();
}

/// The capture settings in force: the user's own (`capture:` in their workspace's
/// mem7.yaml), narrowed by the project's (a project can turn kinds off, never on).
/// An error when either file does not read: the caller then spools everything, and
/// the settings are applied when the spool is drained.
pub fn settings(env: &Env, flag: Option<&Path>) -> std::result::Result<Settings, String> {
    let mut found = Settings::default();
    let user = env.user_workspace();
    let roots = [
        Some(user.clone()),
        env.project_workspace(flag).filter(|p| *p != user),
    ];
    for (i, root) in roots.into_iter().flatten().enumerate() {
        if !root.join(crate::store::CONFIG_FILE).is_file() {
            continue;
        }
        let ws = super::owners::open_quietly(env, &root).map_err(|e| e.to_string())?;
        let s = from_config(&ws.config().capture);
        found = if i == 0 { s } else { found.narrowed(&s) };
    }
    Ok(found)
}

/// `capture:` of one mem7.yaml as settings (unknown kind words are left out; `mem7
/// capture status` names them).
pub fn from_config(c: &crate::config::CaptureSettings) -> Settings {
    let off = if c.enabled == Some(false) {
        Kind::ALL.to_vec()
    } else {
        c.off
            .iter()
            .flatten()
            .filter_map(|w| Kind::parse(w.trim()))
            .collect()
    };
    Settings {
        off,
        share: c.share.unwrap_or(true),
    }
}

/// What recording did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    pub written: usize,
    pub unchanged: usize,
    /// Put in the spool (or left there) for later.
    pub spooled: usize,
    /// Dropped: no workspace, a kind turned off since it was spooled, a value a
    /// store refuses, a spool line that does not read.
    pub dropped: usize,
    /// Why writes were spooled or dropped, one line each.
    pub why: Vec<String>,
}

/// Records `writes` (seen by `client`), after the writes the spool holds (at most
/// `from_spool` of them; all with `None`). `wait`: a person's `mem7 capture drain`
/// waits for the lock; a hook never does.
pub fn record(
    env: &Env,
    flag: Option<&Path>,
    (client, writes): (Client, Vec<Write>),
    from_spool: Option<usize>,
    wait: bool,
) -> Report {
    let mut report = Report::default();
    let now = match env.now() {
        Ok(now) => now,
        Err(e) => {
            report.dropped += writes.len();
            report
                .why
                .push(format!("dropped {} writes: {e}", writes.len()));
            return report;
        }
    };
    let home = env.workspace(flag);
    let any_workspace = env
        .scope_roots(flag)
        .iter()
        .any(|(_, root)| crate::store::is_workspace(root));
    let claimed = if any_workspace {
        spool::claim(&home)
    } else {
        Vec::new()
    };
    let (mut queue, later) = read_claimed(&claimed, from_spool, &mut report);
    queue.extend(writes.into_iter().map(|write| Record { client, write }));
    if !any_workspace {
        report.dropped += queue.len();
        if !queue.is_empty() {
            report.why.push(format!(
                "dropped {} writes: no workspace at {} (run `mem7 init`)",
                queue.len(),
                home.display()
            ));
        }
        return report;
    }
    let settings = settings(env, flag);
    let mut recorder = Recorder {
        env,
        flag,
        now,
        wait,
        engines: Vec::new(),
    };
    let mut rest: Vec<Record> = Vec::new();
    let mut stopped: Option<String> = settings
        .as_ref()
        .err()
        .map(|e| format!("mem7.yaml does not read ({e})"));
    for r in queue {
        if stopped.is_some() {
            rest.push(r);
            continue;
        }
        if let Ok(s) = &settings
            && !s.captures(r.write.kind)
        {
            report.dropped += 1;
            continue;
        }
        match recorder.apply(&r) {
            Ok(true) => report.written += 1,
            Ok(false) => report.unchanged += 1,
            Err(Failure::Later(why)) => {
                stopped = Some(why);
                rest.push(r);
            }
            Err(Failure::Drop(why)) => {
                report.dropped += 1;
                report
                    .why
                    .push(format!("dropped the write of `{}`: {why}", r.write.key));
            }
        }
    }
    rest.extend(later);
    if !rest.is_empty() {
        spool_rest(&home, &rest, stopped, &mut report);
    }
    for path in claimed {
        let _ = std::fs::remove_file(path);
    }
    report
}

/// The records of the claimed spool files: those this run applies (the first
/// `from_spool`, or all) and those left for later; lines that do not read are dropped.
fn read_claimed(
    claimed: &[PathBuf],
    from_spool: Option<usize>,
    report: &mut Report,
) -> (Vec<Record>, Vec<Record>) {
    let mut queue: Vec<Record> = Vec::new();
    let mut later: Vec<Record> = Vec::new();
    for path in claimed {
        let (records, bad) = spool::read(path);
        if bad > 0 {
            report.dropped += bad;
            report
                .why
                .push(format!("dropped {bad} spool lines that do not read"));
        }
        for r in records {
            if from_spool.is_none_or(|n| queue.len() < n) {
                queue.push(r);
            } else {
                later.push(r);
            }
        }
    }
    (queue, later)
}

/// Spools the writes this run did not apply (`stopped` says why), or drops them when the
/// spool does not take them.
fn spool_rest(home: &Path, rest: &[Record], stopped: Option<String>, report: &mut Report) {
    let why = stopped.unwrap_or_else(|| "the spool holds more than one run applies".into());
    match spool::append(home, rest) {
        Ok(()) => {
            report.spooled += rest.len();
            report.why.push(format!(
                "spooled {} writes in {}: {why}",
                rest.len(),
                spool::dir(home).display()
            ));
        }
        Err(e) => {
            report.dropped += rest.len();
            report.why.push(format!(
                "dropped {} writes ({why}); the spool: {e}",
                rest.len()
            ));
        }
    }
}

/// After an ordinary write (`mem7 store`): applies what hooks spooled, when anything
/// waits (`None` when nothing did). Nothing it meets fails the write it follows.
pub fn drain_waiting(env: &Env, flag: Option<&Path>) -> Option<Report> {
    (spool::waiting(&env.workspace(flag)).0 > 0)
        .then(|| record(env, flag, (Client::Git, Vec::new()), None, true))
}

/// Why a write was not made.
enum Failure {
    /// It may succeed later (the lock, the index, the settings): spool it.
    Later(String),
    /// It never will (a refused value): drop it.
    Drop(String),
}

/// The engines of the scopes written so far.
struct Recorder<'a> {
    env: &'a Env,
    flag: Option<&'a Path>,
    now: TxTime,
    wait: bool,
    engines: Vec<(PathBuf, Engine)>,
}

impl Recorder<'_> {
    /// Applies one write; `true` when an entry was written.
    fn apply(&mut self, r: &Record) -> std::result::Result<bool, Failure> {
        let later = |e: Error| Failure::Later(e.to_string());
        let target =
            workspaces::write_target(self.env, self.flag, &r.write.key, None).map_err(later)?;
        let root = target.root.clone();
        let at = match self.engines.iter().position(|(p, _)| *p == root) {
            Some(i) => i,
            None => {
                // Captured writes are made by mem7's own rules from redacted text; the
                // engine checks each as it writes, so the local scope is made first.
                target.ready().map_err(later)?;
                let ws = super::owners::open_quietly(self.env, &root).map_err(later)?;
                let ws = if self.wait { ws } else { ws.without_waiting() };
                let key = self.env.chain_key().map_err(later)?;
                let engine = Engine::open_workspace_at(ws, key, self.now).map_err(later)?;
                self.engines.push((root, engine));
                self.engines.len() - 1
            }
        };
        let engine = &mut self.engines[at].1;
        let w = &r.write;
        let agent = format!("mem7 hook ({})", r.client.as_str());
        let outcome = engine.store_from(&w.key, self.now, |believed| {
            let (value, from) = facts::decide(&w.rule, w.at, believed)?;
            Some(StoreRequest {
                key: w.key.clone(),
                value,
                valid_from: Some(ValidTime::from_micros(from)),
                valid_to: None,
                tags: w.tags.clone(),
                agent: agent.clone(),
                allow_secret: false,
                // Observed, not stated by a person: never a standing rule.
                tier: Some(Tier::Inferred),
                by: crate::core::Writer::Model,
            })
        });
        match outcome {
            Ok(Some(StoreOutcome::Stored { .. })) => Ok(true),
            Ok(Some(StoreOutcome::Unchanged { .. }) | None) => Ok(false),
            Err(e @ (Error::Input { .. } | Error::Credential { .. })) => {
                Err(Failure::Drop(e.to_string()))
            }
            Err(e) => Err(Failure::Later(e.to_string())),
        }
    }
}

/// The lines of "where this checkout left off" for the checkout at `dir`, from every
/// open scope, read at `now`.
pub fn left_off(scopes: &Scopes<'_>, dir: &Path, now: TxTime) -> Result<Vec<String>> {
    let engines = scopes.engines();
    let checkout = facts::Checkout::new(&git::checkout_of(dir).display().to_string());
    let tags = [TAG.to_string(), checkout.tag()];
    let mut versions = Vec::new();
    for e in engines {
        let at = e.clocks(now.as_valid(), None, now)?;
        versions.extend(e.list(Narrow::tagged(&tags), at, None)?);
    }
    Ok(trail::left_off(&versions, &checkout.id))
}

/// What `mem7 capture status` reports.
#[derive(Clone, Debug)]
pub struct Status {
    pub settings: std::result::Result<Settings, String>,
    /// Each scope's workspace and whether it exists.
    pub scopes: Vec<(crate::core::level::Level, PathBuf, bool)>,
    pub spool: PathBuf,
    pub waiting: usize,
    pub log: PathBuf,
    /// The log's last lines.
    pub log_tail: Vec<String>,
}

/// What is captured where, what waits in the spool, what the log said last.
pub fn status(env: &Env, flag: Option<&Path>) -> Status {
    let home = env.workspace(flag);
    let log = log_path(env, flag);
    let log_tail = std::fs::read_to_string(&log)
        .map(|t| {
            let lines: Vec<String> = t.lines().map(str::to_string).collect();
            lines[lines.len().saturating_sub(5)..].to_vec()
        })
        .unwrap_or_default();
    Status {
        settings: settings(env, flag),
        scopes: env
            .scope_roots(flag)
            .into_iter()
            .map(|(l, r)| {
                let exists = crate::store::is_workspace(&r);
                (l, r, exists)
            })
            .collect(),
        spool: spool::dir(&home),
        waiting: spool::waiting(&home).0,
        log,
        log_tail,
    }
}
