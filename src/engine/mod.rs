//! The imperative shell: ties the workspace, the pure core and the index together.
//! It takes every setting (workspace root, clock reading, chain key) as an argument;
//! it never reads the environment and never prints.

mod api;
mod context;
mod decide;
mod deferred;
mod fresh;
mod full_text;
mod held;
mod import;
mod names;
mod note;
pub mod scopes;
mod semantic;
mod spill;
mod tiered;
mod weights;
mod write;

pub use crate::index::fusion::reciprocal_rank as fuse;
pub use api::*;
pub use context::{Context, ContextRequest};
pub use deferred::Filler;
pub use fresh::FreshCheck;
pub use held::entry_agent;
pub use import::{validate_import, validate_record};
pub use note::Note;
pub use scopes::{Answered, Ask, Find, Held, Layer, ReadAt, Scoped, ScopedHit, Scopes};
pub use semantic::FillStats;
pub use write::{Checked, check, validate_store};

use std::path::Path;

use crate::core::chain::{ChainHash, ChainKey};
use crate::core::change::Change;
use crate::core::temporal::{self, Period};
use crate::core::time::{TxTime, ValidTime};
use crate::core::{EntryOp, Event, Op, Source, StoreOp, Tier, ValidEnd, Version, change, validate};
use crate::error::{Error, Result};
use crate::format::{EntryDraft, render_entry};
use crate::index::{CatchUpReport, Index, Planned, RebuildStats};
use crate::store::Workspace;

/// A validated store request (built by the CLI or the MCP server).
#[derive(Clone, Debug, Default)]
pub struct StoreRequest {
    pub key: String,
    pub value: String,
    pub valid_from: Option<ValidTime>,
    pub valid_to: Option<ValidEnd>,
    pub tags: Vec<String>,
    pub agent: String,
    /// Write even if the key or value looks like a credential (recorded in the entry).
    pub allow_secret: bool,
    /// The tier asked for (`tier:`); [`check`] turns it into the tier recorded, from
    /// `by` and the ceiling of the workspace written to. `None`: the writer named none.
    pub tier: Option<Tier>,
    /// Who writes: a person's tier is recorded as asked, a model's within the ceiling.
    pub by: crate::core::tier::Writer,
}

/// What a store did.
#[derive(Clone, Debug)]
pub enum StoreOutcome {
    /// An entry was written; `version` is the new version.
    Stored { version: Version, closed: usize },
    /// A confirmation: the value already holds; nothing was written.
    Unchanged { version: Version },
}

/// What an import record asks for. Every op but `Store` uses only `req.key` (the key,
/// or the entity), `req.tags` (`ForgetTagged`) and `req.agent` of the record's request.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ImportOp {
    /// A store with the rules of `mem7 store`.
    #[default]
    Store,
    /// `mem7 forget KEY`: every version of the key stops being believed.
    Forget,
    /// The key `entity` and every `entity:…` key stop being believed (a Go mem7 delete
    /// of a whole entity, as `mem7 export --history` writes it).
    ForgetEntity,
    /// Every believed version carrying all of `tags` stops being believed (Go mem7
    /// `delete_tags`).
    ForgetTagged,
}

/// One record of a bulk import.
#[derive(Clone, Debug)]
pub struct ImportRecord {
    pub op: ImportOp,
    pub req: StoreRequest,
    /// A `recorded` equal to the previous record's is kept (not raised by 1µs) when the
    /// fold's order is certain to keep the records' order (`mem7 export --history`
    /// records; see `place`).
    pub keep_ties: bool,
    /// The transaction time to record (migrating history); else "now".
    pub recorded: Option<TxTime>,
    /// 1-based line of the record in its input, for error messages.
    pub line: usize,
    /// A forget of one value: the hash of the entry whose value it forgets.
    pub entry: Option<String>,
    /// A store's entry hash in the workspace it was exported from (`hash` of `export
    /// --history`), so that a later record's forget of that one value finds it here.
    pub origin: Option<String>,
}

/// What an import did.
#[derive(Clone, Debug, Default)]
pub struct ImportOutcome {
    pub stored: usize,
    /// Forget records written (`forget`, `forget_entity`, `forget_tagged`).
    pub forgot: usize,
    pub unchanged: usize,
    /// Records recorded at or before the workspace's last transaction whose entries the
    /// workspace already holds (an import of its own export): skipped.
    pub held: usize,
    pub files: usize,
    /// Records whose tier was above what agents and imports may record
    /// (`trust.agents`), written at that ceiling instead.
    pub lowered: usize,
    /// Lines of `keep_ties` records that tied with an entry they do not commute with in
    /// an order the fold would not keep, and so were recorded 1µs later.
    pub raised_ties: Vec<usize>,
}

/// What a catch-up did.
#[derive(Clone, Debug, Default)]
pub struct CatchUp {
    /// Entries applied (or the rebuild and its reason), and problems found.
    pub report: CatchUpReport,
    /// Versions added to the full-text index.
    pub indexed: usize,
}

/// What a seal did.
#[derive(Clone, Debug)]
pub enum SealOutcome {
    /// A seal entry was written, accepting these findings.
    Sealed {
        accepted: Vec<crate::verify::Finding>,
        source: Source,
    },
    /// The chain verified; nothing was written.
    NothingToSeal { entries: usize },
}

/// An existing key that looks like the same slot as a new one, and why.
#[derive(Clone, Debug, PartialEq)]
pub struct LookAlike {
    pub key: String,
    pub why: Alike,
}

/// Why a key looks like the same slot as another, as data (`front::said::alike` words
/// it for a person or a model).
#[derive(Clone, Debug, PartialEq)]
pub enum Alike {
    /// The same key ignoring case and separators.
    SameIgnoringCase,
    /// The new key mixes scripts or uses full-width letters, and this is the ASCII key
    /// it looks like.
    AsciiTwin,
    /// Their words name the same slot.
    Words(crate::text::drift::SameBy),
    /// The words left after pairing (`mine`, `theirs`) are near in meaning (cosine
    /// `near`), and so are the keys.
    NearWords {
        mine: String,
        theirs: String,
        near: f32,
    },
    /// One key names by `specific` what the other's generic `generic` did, and the keys
    /// are near in meaning (cosine `near`).
    Qualifier {
        generic: String,
        specific: String,
        near: f32,
    },
}

/// What `rekey` moves (or would move).
#[derive(Clone, Debug)]
pub struct RekeyPlan {
    /// The versions of FROM believed now, each moved to TO with its valid period.
    pub moved: Vec<Version>,
    /// What TO believes now over those periods: the move supersedes it there.
    pub displaced: Vec<Version>,
}

/// What a forget did.
#[derive(Clone, Debug)]
pub enum ForgetOutcome {
    /// An entry was written; this many versions stopped being believed.
    Forgotten { closed: usize, source: Source },
    /// Nothing was believed about the key; nothing was written.
    NothingBelieved,
}

/// An open workspace with an up-to-date index.
pub struct Engine {
    ws: Workspace,
    index: Index,
    key: ChainKey,
    caught_up: CatchUpReport,
    embed: semantic::EmbedState,
    /// What a server's stores leave to its background work ([`background`]).
    deferred: deferred::Deferred,
    /// The last clock reading a caller gave: catch-ups note the entries they apply that
    /// were recorded more than [`AHEAD_TOLERANCE_MICROS`] ahead of it.
    clock: Option<TxTime>,
    /// How the last check that the index is current went.
    fresh: Option<FreshCheck>,
}

pub use crate::core::time::{AHEAD_TOLERANCE_MICROS, ahead_threshold};

/// A catch-up of at least this many entries checkpoints the index's write-ahead log
/// (see [`Index::checkpoint`]); a few appended entries leave it to SQLite.
const LARGE_CATCH_UP: usize = 1000;

/// The most memory a writer that must not wait ([`Workspace::without_waiting`]) rebuilds
/// an index for: about ten thousand versions, a fraction of a second.
const QUICK_REBUILD_BYTES: u64 = 4 << 20;

impl Engine {
    /// Opens the workspace at `root` and brings its index up to date.
    pub fn open(root: &Path, key: ChainKey) -> Result<Engine> {
        Self::open_inner(root, key, None)
    }

    /// [`Engine::open`] with this machine's clock reading, so that the catch-up notes
    /// entries recorded ahead of it ([`CatchUpReport::ahead`]).
    pub fn open_at(root: &Path, key: ChainKey, now: TxTime) -> Result<Engine> {
        Self::open_inner(root, key, Some(now))
    }

    /// [`Engine::open_at`] for a workspace already open (a front end that read its
    /// settings first, to check a request before anything is created).
    pub fn open_workspace_at(ws: Workspace, key: ChainKey, now: TxTime) -> Result<Engine> {
        Self::open_opened(ws, key, Some(now))
    }

    fn open_inner(root: &Path, key: ChainKey, clock: Option<TxTime>) -> Result<Engine> {
        Self::open_opened(Workspace::open(root)?, key, clock)
    }

    fn open_opened(ws: Workspace, key: ChainKey, clock: Option<TxTime>) -> Result<Engine> {
        let dir = ws.index_dir()?;
        let mut checked = None;
        if let Some(index) = Index::open(&dir)? {
            match fresh::check(&ws, &index, true) {
                // An entry held apart that the clock has now reached is folded in below.
                Ok(check) if check.fresh() && !index.held_due(clock.map(ahead_threshold))? => {
                    return Ok(Engine {
                        ws,
                        index,
                        key,
                        caught_up: CatchUpReport::default(),
                        embed: Default::default(),
                        deferred: Default::default(),
                        clock,
                        fresh: Some(check),
                    });
                }
                Ok(check) => checked = Some(check),
                // A damaged index is rebuilt below, never trusted.
                Err(e) if crate::index::is_damage(&e) => {}
                Err(e) => return Err(e),
            }
        }
        let _lock = ws.lock()?;
        let (index, caught_up) = refresh_locked(&ws, clock.map(ahead_threshold))?;
        Ok(Engine {
            ws,
            index,
            key,
            caught_up,
            embed: Default::default(),
            deferred: Default::default(),
            clock,
            fresh: checked,
        })
    }

    /// Opens the workspace at `root` and rebuilds its index from the markdown, whatever
    /// state it was in (`mem7 reindex`).
    pub fn open_rebuilt(
        root: &Path,
        (key, clock): (ChainKey, Option<TxTime>),
        progress: &mut dyn FnMut(crate::index::Progress),
    ) -> Result<(Engine, RebuildStats)> {
        let ws = Workspace::open(root)?;
        let _lock = ws.lock()?;
        // With the clock, entries recorded more than a century ahead of it are held apart,
        // as by any catch-up.
        let (index, stats) =
            Index::rebuild_with_progress(&ws, progress, clock.map(ahead_threshold))?;
        Ok((
            Engine {
                ws,
                index,
                key,
                caught_up: CatchUpReport {
                    held: stats.held.clone(),
                    ..CatchUpReport::default()
                },
                embed: Default::default(),
                deferred: Default::default(),
                clock,
                fresh: None,
            },
            stats,
        ))
    }

    /// How the last check that the index is current went (`None` after a rebuild).
    pub fn fresh_check(&self) -> Option<FreshCheck> {
        self.fresh
    }

    /// What opening had to do to the index (rebuild, catch-up, warnings).
    pub fn catch_up_report(&self) -> &CatchUpReport {
        &self.caught_up
    }

    /// The entries recorded ahead of the clock that catch-ups met since the last call
    /// (each is reported once, by whoever takes it).
    pub fn take_ahead(&mut self) -> Vec<crate::index::Ahead> {
        std::mem::take(&mut self.caught_up.ahead)
    }

    /// The entries held apart since the last call (recorded more than a century ahead of the
    /// clock; see `core::time::HOLD_APART_MICROS`), each once.
    pub fn take_held(&mut self) -> Vec<crate::index::Ahead> {
        std::mem::take(&mut self.caught_up.held)
    }

    /// The workspace.
    pub fn workspace(&self) -> &Workspace {
        &self.ws
    }

    /// The index (read side), for the benchmarks; front ends read through the door
    /// (`engine/api.rs`).
    #[doc(hidden)]
    pub fn index(&self) -> &Index {
        &self.index
    }
}

impl Engine {
    /// Moves incomplete entries at the ends of files aside (see `Workspace::set_aside`)
    /// so a write never lands after a torn tail.
    fn set_aside_torn(&mut self) -> Result<()> {
        let torn = self.index.torn_tails()?;
        if torn.is_empty() {
            return Ok(());
        }
        for (file, offset) in torn {
            let aside = self.ws.set_aside(&file, offset)?;
            self.caught_up.set_aside.push((file, aside));
        }
        self.refresh()
    }

    /// Brings the index (versions and full text) up to date with the files, for a
    /// long-running process: follows another process's rebuild to the new generation.
    /// `now` is this machine's clock: entries recorded ahead of it are noted.
    pub fn catch_up(&mut self, now: TxTime) -> Result<CatchUp> {
        self.catch_up_with(now, true, true)
    }

    /// [`Engine::catch_up`] for a request of a long-running server: the versions only.
    /// The full-text index is left to the next search, which brings it up to date
    /// first: committing it costs a dozen `fdatasync`s, so a server that wrote it after
    /// every store spent most of each store there.
    pub fn catch_up_versions(&mut self, now: TxTime) -> Result<CatchUp> {
        self.catch_up_with(now, false, true)
    }

    /// [`Engine::catch_up`] (with the full text when `full_text`) that checks every day
    /// file, whatever a watcher says: the periodic reconcile of a long-running process,
    /// which catches what inotify cannot see (a write through a hard link outside
    /// `memory/`, or through a memory map).
    pub fn reconcile(&mut self, now: TxTime, full_text: bool) -> Result<CatchUp> {
        self.catch_up_with(now, full_text, false)
    }

    /// The catch-up, taking a watcher's word on what changed when `trust_watcher`.
    fn catch_up_with(
        &mut self,
        now: TxTime,
        full_text: bool,
        trust_watcher: bool,
    ) -> Result<CatchUp> {
        self.clock = Some(now);
        let dir = self.ws.index_dir()?;
        if !self.index.is_current(&dir)
            && let Some(index) = Index::open(&dir)?
        {
            self.index = index;
        }
        let check = fresh::check(&self.ws, &self.index, trust_watcher);
        let stale = !check.as_ref().is_ok_and(|c| c.fresh());
        self.fresh = check.ok();
        let text_behind = full_text && self.index.fulltext_pending()?;
        if !stale && !text_behind {
            return Ok(CatchUp::default());
        }
        let _lock = self.ws.lock()?;
        self.caught_up = CatchUpReport::default();
        self.refresh_checking(trust_watcher)?;
        let report = std::mem::take(&mut self.caught_up);
        let indexed = if full_text && self.index.fulltext_pending()? {
            self.index.refresh_fulltext(self.merges())?
        } else {
            0
        };
        Ok(CatchUp { report, indexed })
    }

    /// Checks the index against the markdown; on any difference, rebuilds it. Returns
    /// what differed (empty when the index was right).
    pub fn check_index(&mut self) -> Result<crate::index::IndexCheck> {
        // Under the lock, so that a write landing meanwhile is not taken for a mismatch.
        let _lock = self.ws.lock()?;
        let check = self.index.check_against(&self.ws)?;
        if !check.matches() {
            let (index, _) = Index::rebuild(&self.ws)?;
            self.index = index;
        }
        Ok(check)
    }

    /// Rebuilds the index from the markdown.
    pub fn reindex(&mut self) -> Result<RebuildStats> {
        let _lock = self.ws.lock()?;
        let (index, stats) = Index::rebuild(&self.ws)?;
        self.index = index;
        Ok(stats)
    }

    /// Under the lock: catch up with anything another process or a person changed.
    fn refresh(&mut self) -> Result<()> {
        self.refresh_checking(true)
    }

    /// [`Engine::refresh`], taking a watcher's word on what changed when `trust_watcher`.
    fn refresh_checking(&mut self, trust_watcher: bool) -> Result<()> {
        let check = fresh::check(&self.ws, &self.index, trust_watcher)?;
        self.fresh = Some(check);
        if check.fresh() && !self.index.held_due(self.clock.map(ahead_threshold))? {
            return Ok(());
        }
        let (index, report) = refresh_locked(&self.ws, self.clock.map(ahead_threshold))?;
        self.index = index;
        if report.applied >= LARGE_CATCH_UP && report.rebuilt.is_none() {
            self.index.checkpoint()?;
        }
        self.caught_up.warnings.extend(report.warnings);
        self.caught_up.ahead.extend(report.ahead);
        self.caught_up.held.extend(report.held);
        self.caught_up.applied += report.applied;
        if report.rebuilt.is_some() {
            self.caught_up.rebuilt = report.rebuilt;
        }
        Ok(())
    }

    /// The transaction time of a write at `now`: `max(now, last + 1µs)`, so that
    /// transaction time stays monotonic per workspace whatever this machine's clock says.
    fn next_tx(&self, now: TxTime) -> Result<TxTime> {
        step_past(self.index.last_tx()?, now)
    }

    /// What a read with the default `as_of` asks about: "what mem7 believes now", which
    /// includes entries recorded ahead of this machine's clock (pulled from a machine
    /// whose clock runs fast, or written here after such an entry). So a store that
    /// reported success is always seen by the next default read.
    pub fn believed_now(&self, now: TxTime) -> Result<TxTime> {
        Ok(match self.index.last_tx()? {
            Some(last) if last > now => last,
            _ => now,
        })
    }

    /// The `as_of` of a read: the one given, else [`Engine::believed_now`] (front ends
    /// resolve both clocks at once with [`Engine::clocks`]).
    fn as_of(&self, given: Option<TxTime>, now: TxTime) -> Result<TxTime> {
        match given {
            Some(t) => Ok(t),
            None => self.believed_now(now),
        }
    }
}

/// `max(wanted, last + 1µs)`, refused when it would step past the last instant mem7
/// keeps (9999-12-31T23:59:59.999999Z): such an entry would name a day file no scan lists.
fn step_past(last: Option<TxTime>, wanted: TxTime) -> Result<TxTime> {
    let tx = match last {
        Some(l) if l >= wanted => l.checked_next(),
        _ => Some(wanted),
    };
    match tx {
        Some(tx) if tx.in_range() => Ok(tx),
        _ => Err(Error::input(
            format!(
                "a write at {wanted} would be recorded outside the times mem7 keeps ({}){}",
                crate::core::time::RANGE_TEXT,
                last.map(|l| format!("; the workspace's last entry is recorded at {l}"))
                    .unwrap_or_default()
            ),
            "write with a clock in years 1 to 9999 (check MEM7_NOW and the recorded times you import); nothing was written",
        )),
    }
}

/// With the lock held: open, catch up or rebuild the index. Entries applied that were
/// recorded after `ahead_after` are noted in the report.
fn refresh_locked(ws: &Workspace, ahead_after: Option<TxTime>) -> Result<(Index, CatchUpReport)> {
    let dir = ws.index_dir()?;
    let scan = ws.scan()?;
    let reason = match Index::open(&dir)? {
        Some(mut index) => match index.is_fresh(&scan).and_then(|fresh| {
            if fresh && !index.held_due(ahead_after)? {
                Ok(Ok(CatchUpReport::default()))
            } else {
                index.catch_up(ws, &scan, ahead_after)
            }
        }) {
            Ok(Ok(report)) => return Ok((index, report)),
            Ok(Err(reason)) => reason,
            Err(e) if crate::index::is_damage(&e) => RebuildReason::Damaged(e.to_string()),
            Err(e) => return Err(e),
        },
        None => RebuildReason::NoIndex,
    };
    if !ws.waits() && scan.iter().map(|f| f.size).sum::<u64>() > QUICK_REBUILD_BYTES {
        // A writer that must not wait (a hook) leaves a long rebuild to the next
        // command; a small workspace (a new local scope) is rebuilt in milliseconds.
        return Err(crate::store::busy(
            &dir,
            &format!("the index needs a rebuild ({reason})"),
        ));
    }
    let (index, stats) = Index::rebuild_with_progress(ws, &mut |_| {}, ahead_after)?;
    Ok((
        index,
        CatchUpReport {
            rebuilt: Some(reason),
            applied: stats.entries,
            warnings: stats.warnings,
            set_aside: Vec::new(),
            ahead: stats.ahead,
            held: stats.held,
        },
    ))
}
