//! The imperative shell: ties the workspace, the pure core and the index together.
//! It takes every setting (workspace root, clock reading, chain key) as an argument;
//! it never reads the environment and never prints.

mod import;
mod semantic;

pub use import::{validate_import, validate_record};
pub use semantic::{FillStats, fuse};

use std::path::Path;

use crate::core::chain::{ChainHash, ChainKey};
use crate::core::temporal::{self, Period};
use crate::core::time::{TxTime, ValidTime};
use crate::core::{Event, Op, Source, StoreOp, ValidEnd, Version, change, secret, validate};
use crate::error::{Error, Result};
use crate::format::{EntryDraft, render_entry};
use crate::index::{Index, RebuildStats, SyncReport};
use crate::store::Workspace;

/// A validated store request (built by the CLI or the MCP server).
#[derive(Clone, Debug)]
pub struct StoreRequest {
    pub key: String,
    pub value: String,
    pub valid_from: Option<ValidTime>,
    pub valid_to: Option<ValidEnd>,
    pub tags: Vec<String>,
    pub agent: String,
    /// Write even if the key or value looks like a credential (recorded in the entry).
    pub allow_secret: bool,
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
}

/// What an import did.
#[derive(Clone, Debug, Default)]
pub struct ImportOutcome {
    pub stored: usize,
    /// Forget records written (`forget`, `forget_entity`, `forget_tagged`).
    pub forgot: usize,
    pub unchanged: usize,
    pub files: usize,
    /// Lines of `keep_ties` records that tied with an entry they do not commute with in
    /// an order the fold would not keep, and so were recorded 1µs later.
    pub raised_ties: Vec<usize>,
}

/// What a catch-up did.
#[derive(Clone, Debug, Default)]
pub struct CatchUp {
    /// Entries applied (or the rebuild and its reason), and problems found.
    pub sync: SyncReport,
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

/// The similarity (cosine, all-MiniLM-L6-v2) from which a new key and value name an
/// existing fact as a look-alike slot. Measured by `just rank-eval` on ten drifted facts
/// and eight new ones: at 0.40, 9 of 10 look-alikes are named and 8 of 8 new facts are
/// left alone (the nearest new fact was at 0.34; docs/agents.md).
pub const SIMILAR_SLOT: f32 = 0.40;

/// An existing key that looks like the same slot as a new one, and why.
#[derive(Clone, Debug, PartialEq)]
pub struct LookAlike {
    pub key: String,
    pub why: String,
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
    sync: SyncReport,
    embed: semantic::EmbedState,
    /// The last clock reading a caller gave: catch-ups note the entries they apply that
    /// were recorded more than [`AHEAD_TOLERANCE_MICROS`] ahead of it.
    clock: Option<TxTime>,
}

pub use crate::core::time::{AHEAD_TOLERANCE_MICROS, ahead_threshold};

/// A catch-up of at least this many entries checkpoints the index's write-ahead log
/// (see [`Index::checkpoint`]); a few appended entries leave it to SQLite.
const LARGE_CATCH_UP: usize = 1000;

impl Engine {
    /// Opens the workspace at `root` and brings its index up to date.
    pub fn open(root: &Path, key: ChainKey) -> Result<Engine> {
        Self::open_inner(root, key, None)
    }

    /// [`Engine::open`] with this machine's clock reading, so that the catch-up notes
    /// entries recorded ahead of it ([`SyncReport::ahead`]).
    pub fn open_at(root: &Path, key: ChainKey, now: TxTime) -> Result<Engine> {
        Self::open_inner(root, key, Some(now))
    }

    fn open_inner(root: &Path, key: ChainKey, clock: Option<TxTime>) -> Result<Engine> {
        let ws = Workspace::open(root)?;
        let dir = ws.index_dir()?;
        let scan = ws.scan()?;
        if let Some(index) = Index::open(&dir)? {
            match index.is_fresh(&scan) {
                Ok(true) => {
                    return Ok(Engine {
                        ws,
                        index,
                        key,
                        sync: SyncReport::default(),
                        embed: Default::default(),
                        clock,
                    });
                }
                Ok(false) => {}
                // A damaged index is rebuilt below, never trusted.
                Err(e) if crate::index::is_damage(&e) => {}
                Err(e) => return Err(e),
            }
        }
        let _lock = ws.lock()?;
        let (index, sync) = refresh_locked(&ws, clock.map(ahead_threshold))?;
        Ok(Engine {
            ws,
            index,
            key,
            sync,
            embed: Default::default(),
            clock,
        })
    }

    /// Opens the workspace at `root` and rebuilds its index from the markdown, whatever
    /// state it was in (`mem7 reindex`).
    pub fn open_rebuilt(
        root: &Path,
        key: ChainKey,
        progress: &mut dyn FnMut(crate::index::Progress),
    ) -> Result<(Engine, RebuildStats)> {
        let ws = Workspace::open(root)?;
        let _lock = ws.lock()?;
        let (index, stats) = Index::rebuild_with_progress(&ws, progress, None)?;
        Ok((
            Engine {
                ws,
                index,
                key,
                sync: SyncReport::default(),
                embed: Default::default(),
                clock: None,
            },
            stats,
        ))
    }

    /// What opening had to do to the index (rebuild, catch-up, warnings).
    pub fn sync_report(&self) -> &SyncReport {
        &self.sync
    }

    /// The entries recorded ahead of the clock that catch-ups met since the last call
    /// (each is reported once, by whoever takes it).
    pub fn take_ahead(&mut self) -> Vec<crate::index::Ahead> {
        std::mem::take(&mut self.sync.ahead)
    }

    /// The workspace.
    pub fn workspace(&self) -> &Workspace {
        &self.ws
    }

    /// The index (read side).
    pub fn index(&self) -> &Index {
        &self.index
    }
}

/// A store request that passed [`validate_store`]. [`check`] is the only way to make
/// one, so [`Engine::store_checked`] takes it without checking it again: a request is
/// validated once per write, however many layers it passes.
#[derive(Clone, Debug)]
pub struct Checked(StoreRequest);

impl std::ops::Deref for Checked {
    type Target = StoreRequest;
    fn deref(&self) -> &StoreRequest {
        &self.0
    }
}

/// Validates a store request against the workspace's settings (see [`validate_store`]).
pub fn check(req: StoreRequest, config: &crate::config::Config) -> Result<Checked> {
    validate_store(&req, config)?;
    Ok(Checked(req))
}

/// Checks a store request against the workspace's settings, before anything (even the
/// index) is opened: bad input never changes anything on disk.
pub fn validate_store(req: &StoreRequest, config: &crate::config::Config) -> Result<()> {
    validate::key(&req.key)?;
    for t in &req.tags {
        validate::tag(t)?;
    }
    validate::agent(&req.agent)?;
    validate::value_size(&req.value, config.max_value_bytes())?;
    if let (Some(from), Some(ValidEnd::At(to))) = (req.valid_from, req.valid_to)
        && to <= from
    {
        return Err(period_error(from, to));
    }
    if !req.allow_secret {
        for (what, text) in [("key", req.key.as_str()), ("value", req.value.as_str())] {
            if let Some(f) = secret::find(text) {
                return Err(Error::input(
                    format!(
                        "the {what} looks like a credential ({}); mem7 refuses to write secrets into files that may be pushed to git",
                        f.kind
                    ),
                    "keep secrets in a secret manager and store where to find them instead; if this is not a secret, pass --allow-secret (the entry will say so)",
                ));
            }
        }
    }
    Ok(())
}

impl Engine {
    /// Stores a fact at transaction time `now` (raised to stay monotonic), checking the
    /// request first ([`check`]).
    pub fn store(&mut self, req: &StoreRequest, now: TxTime) -> Result<StoreOutcome> {
        let checked = check(req.clone(), self.ws.config())?;
        self.store_checked(&checked, now)
    }

    /// Stores a request the front end already checked.
    pub fn store_checked(&mut self, req: &Checked, now: TxTime) -> Result<StoreOutcome> {
        let req: &StoreRequest = req;
        self.clock = Some(now);
        let _lock = self.ws.lock()?;
        self.refresh()?;
        let tx = self.next_tx(now)?;
        let believed = self.index.believed(&req.key)?;
        let periods: Vec<Period> = believed.iter().map(Version::period).collect();
        // Valid time is world time: without `valid_from` a fact holds from this
        // machine's clock, even when the transaction time had to move past an entry
        // recorded ahead of it (DESIGN §2, docs/temporal.md "Clocks that disagree").
        let clock = now.as_valid();
        if let Some(i) = confirmed(req, &believed, &periods, clock) {
            return Ok(StoreOutcome::Unchanged {
                version: believed[i].clone(),
            });
        }
        let from = req.valid_from.unwrap_or(clock);
        let end = req.valid_to.unwrap_or(ValidEnd::Open);
        let op = store_op(req, from, end);
        // The same plan the index executes when it applies the entry: it decides what
        // this store closes and which version it starts.
        let planned = Event {
            tx,
            op: op.clone(),
            source: Source::default(),
            content: ChainHash::GENESIS,
        };
        let mut change =
            change::plan(&planned, tx, &believed).map_err(|e| period_error(e.from, e.to))?;
        let source = self.append(&store_draft(req, from, tx), tx, op)?;
        let mut version = change.start.pop().expect("a store starts a version");
        version.source = source;
        Ok(StoreOutcome::Stored {
            version,
            closed: change.close.len(),
        })
    }

    /// Stops believing every version of `key` at `now`.
    pub fn forget(&mut self, key: &str, agent: &str, now: TxTime) -> Result<ForgetOutcome> {
        validate::lookup_key(key)?;
        validate::agent(agent)?;
        self.clock = Some(now);
        let _lock = self.ws.lock()?;
        self.refresh()?;
        let believed = self.index.believed(key)?;
        if believed.is_empty() {
            return Ok(ForgetOutcome::NothingBelieved);
        }
        let tx = self.next_tx(now)?;
        let draft = EntryDraft {
            key,
            op: "forget",
            valid_from: None,
            valid_to: None,
            recorded: tx,
            agent,
            tags: &[],
            secret_allowed: false,
            accepts: &[],
            value: None,
        };
        let source = self.append(
            &draft,
            tx,
            Op::Forget {
                key: key.to_string(),
            },
        )?;
        Ok(ForgetOutcome::Forgotten {
            closed: believed.len(),
            source,
        })
    }

    /// Plans moving every believed version of `from` to `to` (`mem7 rekey`): the
    /// versions that move, and what `to` believes now over their valid periods (which
    /// the move supersedes). Writes nothing.
    pub fn plan_rekey(&self, from: &str, to: &str) -> Result<RekeyPlan> {
        validate::lookup_key(from)?;
        validate::key(to)?;
        if from == to {
            return Err(Error::input(
                format!("`{from}` is both the key to move and the key to move it to"),
                "give two different keys: mem7 rekey FROM TO",
            ));
        }
        let moved = self.index.believed(from)?;
        if moved.is_empty() {
            let near = self.near_keys_by_name(from)?;
            return Err(Error::input(
                format!("nothing is believed about `{from}`, so there is nothing to move"),
                match near.first() {
                    Some(n) => format!(
                        "did you mean `{}`? (`mem7 list --prefix` shows keys)",
                        n.key
                    ),
                    None => "`mem7 list --prefix` shows the keys there are".to_string(),
                },
            ));
        }
        let displaced = self
            .index
            .believed(to)?
            .into_iter()
            .filter(|t| moved.iter().any(|m| m.period().overlaps(t.period())))
            .collect();
        Ok(RekeyPlan { moved, displaced })
    }

    /// Moves every believed version of `from` to `to` by the ordinary write rules: each
    /// is stored under `to` with its own valid period (superseding what `to` held over
    /// it; `to` keeps its values outside), then `from` is forgotten. All appended
    /// entries: both keys stay readable `as_of` before.
    pub fn rekey(&mut self, from: &str, to: &str, agent: &str, now: TxTime) -> Result<RekeyPlan> {
        validate::agent(agent)?;
        let plan = self.plan_rekey(from, to)?;
        for v in &plan.moved {
            let req = StoreRequest {
                key: to.to_string(),
                value: v.value.clone(),
                valid_from: Some(v.valid_from),
                valid_to: Some(if v.valid_to.is_infinite() {
                    ValidEnd::Infinity
                } else {
                    ValidEnd::At(v.valid_to)
                }),
                tags: v.tags.clone(),
                agent: agent.to_string(),
                // The value is already in the memory files; moving it adds no secret.
                allow_secret: secret::find(&v.value).is_some(),
            };
            self.store(&req, now)?;
        }
        self.forget(from, agent, now)?;
        Ok(plan)
    }

    /// Accepts, under the writer's name, every entry `verify` reports as changed,
    /// inserted, reordered, unlinked or merged, and every run of foreign text: appends a
    /// `seal` entry that records the accepted entries' hashes and the runs' digests so
    /// that `verify` is clean afterwards. Nothing is rewritten; the edit stays visible
    /// in the files and in git.
    pub fn seal(&mut self, agent: &str, now: TxTime) -> Result<SealOutcome> {
        validate::agent(agent)?;
        self.clock = Some(now);
        let _lock = self.ws.lock()?;
        self.refresh()?;
        self.set_aside_torn()?;
        let report = crate::verify::verify_locked(&self.ws, &self.key, None)?;
        if let Some(f) = report
            .findings
            .iter()
            .find(|f| matches!(f.kind, "conflict" | "unreadable" | "truncated"))
        {
            return Err(Error::input(
                format!("{}:{}: {}", f.file, f.line, f.message),
                "fix this by hand first (seal accepts entries as they are; it cannot accept what it cannot read)",
            ));
        }
        let mut seen = std::collections::HashSet::new();
        let accepted: Vec<&crate::verify::Finding> = crate::verify::acceptable(&report)
            .into_iter()
            .filter(|f| f.computed.is_some_and(|h| seen.insert(h)))
            .collect();
        if accepted.is_empty() {
            return Ok(SealOutcome::NothingToSeal {
                entries: report.entries,
            });
        }
        let hashes: Vec<ChainHash> = accepted.iter().filter_map(|f| f.computed).collect();
        let mut body = format!(
            "Sealed by {agent}: accepted {} as they are now.\n",
            crate::verify::count_accepted(accepted.iter().copied())
        );
        for f in &accepted {
            // Foreign text has no key.
            let key = if f.key.is_empty() {
                String::new()
            } else {
                format!(" `{}`", f.key)
            };
            body.push_str(&format!(
                "\n- {}:{}{key} ({}): {}",
                f.file,
                f.line,
                f.kind,
                f.computed.map(|h| h.to_hex()).unwrap_or_default()
            ));
        }
        let tx = self.next_tx(now)?;
        let draft = EntryDraft {
            key: "mem7:seal",
            op: "seal",
            valid_from: None,
            valid_to: None,
            recorded: tx,
            agent,
            tags: &[],
            secret_allowed: false,
            accepts: &hashes,
            value: Some(&body),
        };
        let source = self.append(&draft, tx, Op::Seal)?;
        Ok(SealOutcome::Sealed {
            accepted: accepted.iter().map(|f| (*f).clone()).collect(),
            source,
        })
    }

    /// Moves incomplete entries at the ends of files aside (see `Workspace::set_aside`)
    /// so a write never lands after a torn tail.
    fn set_aside_torn(&mut self) -> Result<()> {
        let torn = self.index.torn_tails()?;
        if torn.is_empty() {
            return Ok(());
        }
        for (file, offset) in torn {
            let aside = self.ws.set_aside(&file, offset)?;
            self.sync.set_aside.push((file, aside));
        }
        self.refresh()
    }

    /// Brings the index (versions and full text) up to date with the files, for a
    /// long-running process: follows another process's rebuild to the new generation.
    /// `now` is this machine's clock: entries recorded ahead of it are noted.
    pub fn catch_up(&mut self, now: TxTime) -> Result<CatchUp> {
        self.clock = Some(now);
        let dir = self.ws.index_dir()?;
        if !self.index.is_current(&dir)
            && let Some(index) = Index::open(&dir)?
        {
            self.index = index;
        }
        let scan = self.ws.scan()?;
        let stale = !self.index.is_fresh(&scan).unwrap_or(false);
        if !stale && !self.index.fulltext_pending()? {
            return Ok(CatchUp::default());
        }
        let _lock = self.ws.lock()?;
        self.sync = SyncReport::default();
        self.refresh()?;
        let sync = std::mem::take(&mut self.sync);
        let indexed = if self.index.fulltext_pending()? {
            self.index.sync_fulltext()?
        } else {
            0
        };
        Ok(CatchUp { sync, indexed })
    }

    /// Brings the full-text index up to date (under the lock, only when it lags).
    fn sync_fulltext(&mut self) -> Result<()> {
        if self.index.fulltext_pending()? {
            let _lock = self.ws.lock()?;
            self.refresh()?;
            if self.index.fulltext_pending()? {
                self.index.sync_fulltext()?;
            }
        }
        Ok(())
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
        let scan = self.ws.scan()?;
        if self.index.is_fresh(&scan)? {
            return Ok(());
        }
        let (index, sync) = refresh_locked(&self.ws, self.clock.map(ahead_threshold))?;
        self.index = index;
        if sync.applied >= LARGE_CATCH_UP && sync.rebuilt.is_none() {
            self.index.checkpoint()?;
        }
        self.sync.warnings.extend(sync.warnings);
        self.sync.ahead.extend(sync.ahead);
        self.sync.applied += sync.applied;
        if sync.rebuilt.is_some() {
            self.sync.rebuilt = sync.rebuilt;
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

    /// Existing keys near `key` by name: the same ignoring case and separators, or a
    /// small edit away.
    pub fn near_keys_by_name(&self, key: &str) -> Result<Vec<crate::core::names::NearKey>> {
        let keys = self.index.all_keys()?;
        Ok(crate::core::names::near_keys(
            key,
            keys.iter().map(String::as_str),
        ))
    }

    /// Existing keys near `key`, for a read that found nothing (docs/agents.md "Names
    /// that don't drift"): by name, and, when meaning search is on and vectors exist,
    /// the keys whose current value is nearest in meaning to the key's words.
    pub fn near_keys(
        &mut self,
        key: &str,
        now: TxTime,
    ) -> Result<Vec<crate::core::names::NearKey>> {
        let mut near = self.near_keys_by_name(key)?;
        let words = crate::embed::version_text(key, "");
        let meaning = self.near_in_meaning(words.trim_end_matches(": "), now, None)?;
        crate::core::names::merge(
            &mut near,
            meaning.into_iter().filter(|(k, _)| k != key).map(|(k, s)| {
                crate::core::names::NearKey {
                    key: k,
                    nearness: crate::core::names::Nearness::meaning(s),
                }
            }),
        );
        Ok(near)
    }

    /// For a store of `key` = `value`: when the key is new to the workspace, the existing
    /// keys that look like the same slot: the same ignoring case and separators, or
    /// (with the local model) a current fact whose key and value, embedded together as
    /// meaning search embeds versions, are within [`SIMILAR_SLOT`] of the new ones,
    /// compared with the vectors already cached. A store never calls a remote provider
    /// and never waits for vectors to be filled in. Empty for a known key.
    pub fn look_alikes(&mut self, key: &str, value: &str, now: TxTime) -> Result<Vec<LookAlike>> {
        if !self.index.history(key, None)?.is_empty() {
            return Ok(Vec::new());
        }
        let keys = self.index.all_keys()?;
        let mut out: Vec<LookAlike> =
            crate::core::names::same_slot(key, keys.iter().map(String::as_str))
                .into_iter()
                .map(|k| LookAlike {
                    key: k,
                    why: "same key ignoring case and separators".into(),
                })
                .collect();
        let text = crate::embed::version_text(key, value);
        for (k, s) in self.near_in_meaning_for_store(&text, now, SIMILAR_SLOT)? {
            if k != key && !out.iter().any(|l| l.key == k) {
                out.push(LookAlike {
                    key: k,
                    why: format!("its key and current value are near in meaning ({s:.2})"),
                });
            }
        }
        out.truncate(crate::core::names::MAX_NEAR);
        Ok(out)
    }

    /// The `as_of` of a read: the one given, else [`Engine::believed_now`].
    pub fn as_of(&self, given: Option<TxTime>, now: TxTime) -> Result<TxTime> {
        match given {
            Some(t) => Ok(t),
            None => self.believed_now(now),
        }
    }

    /// Renders, appends (durably) and indexes one entry; returns where it went.
    fn append(&mut self, draft: &EntryDraft<'_>, tx: TxTime, op: Op) -> Result<Source> {
        // Only now, with the write decided, move any torn tail out of the way.
        self.set_aside_torn()?;
        let prev = self.index.head()?;
        let (text, hash) = render_entry(draft, prev, &self.key);
        let file = Workspace::day_file(&tx.utc_day());
        let (known_size, newlines_before) = self.index.file_state(&file)?.unwrap_or((0, 0));
        let appended = self.ws.append(&file, &text)?;
        if appended.offset != known_size {
            // Someone outside the lock (an editor, git) changed the file since the index
            // looked at it: read it again instead of assuming only our entry was added.
            self.refresh()?;
            let line = self.index.line_of(&file, &hash.to_hex())?.unwrap_or(0);
            return Ok(Source {
                file,
                line,
                hash: hash.to_hex(),
            });
        }
        let source = Source {
            file: file.clone(),
            line: (newlines_before + appended.separator_newlines + 1) as u32,
            hash: hash.to_hex(),
        };
        let added = appended.separator_newlines + text.bytes().filter(|&b| b == b'\n').count() + 1;
        // The index's file digests use the plain hash whatever the chain key, so that a
        // process without the key agrees with this one about what the file holds.
        let digest_hash = match self.key {
            ChainKey::Plain => hash,
            ChainKey::Keyed(_) => crate::format::parse_file(&text, &ChainKey::Plain)
                .entries
                .first()
                .map_or(hash, |e| e.computed),
        };
        let event = Event {
            tx,
            op,
            source: source.clone(),
            content: digest_hash,
        };
        self.index.record_append(
            &event,
            &appended.stat,
            hash,
            digest_hash,
            appended.offset + appended.separator_newlines as u64,
            added,
        )?;
        Ok(source)
    }
}

/// The confirmation rule (DESIGN §2) for a request: no period given, and the value (with
/// the same tags) already holds at `tx` in a version that keeps the same end.
fn confirmed(
    req: &StoreRequest,
    believed: &[Version],
    periods: &[Period],
    clock: ValidTime,
) -> Option<usize> {
    if req.valid_from.is_some() || req.valid_to.is_some() {
        return None;
    }
    temporal::confirmation(periods, clock, |i| {
        believed[i].value == req.value && same_tags(&believed[i].tags, &req.tags)
    })
}

/// The entry a store request writes.
fn store_draft(req: &StoreRequest, from: ValidTime, tx: TxTime) -> EntryDraft<'_> {
    EntryDraft {
        key: &req.key,
        op: "store",
        valid_from: Some(from),
        valid_to: req.valid_to,
        recorded: tx,
        agent: &req.agent,
        tags: &req.tags,
        secret_allowed: req.allow_secret
            && (secret::find(&req.value).is_some() || secret::find(&req.key).is_some()),
        accepts: &[],
        value: Some(&req.value),
    }
}

/// The fold operation of a store request.
fn store_op(req: &StoreRequest, from: ValidTime, end: ValidEnd) -> Op {
    Op::Store(StoreOp {
        key: req.key.clone(),
        value: req.value.clone(),
        tags: req.tags.clone(),
        agent: req.agent.clone(),
        valid_from: from,
        valid_to: end,
    })
}

fn same_tags(a: &[String], b: &[String]) -> bool {
    let mut a: Vec<&String> = a.iter().collect();
    let mut b: Vec<&String> = b.iter().collect();
    a.sort();
    b.sort();
    a == b
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

fn period_error(from: ValidTime, to: ValidTime) -> Error {
    Error::input(
        format!("valid_to ({to}) must be after valid_from ({from})"),
        "give a valid_to later than valid_from, or `infinity`, or leave valid_to out to fill until the next known change",
    )
}

/// With the lock held: open, catch up or rebuild the index. Entries applied that were
/// recorded after `ahead_after` are noted in the report.
fn refresh_locked(ws: &Workspace, ahead_after: Option<TxTime>) -> Result<(Index, SyncReport)> {
    let dir = ws.index_dir()?;
    let scan = ws.scan()?;
    let reason = match Index::open(&dir)? {
        Some(mut index) => match index.is_fresh(&scan).and_then(|fresh| {
            if fresh {
                Ok(Ok(SyncReport::default()))
            } else {
                index.catch_up(ws, &scan, ahead_after)
            }
        }) {
            Ok(Ok(report)) => return Ok((index, report)),
            Ok(Err(reason)) => reason,
            Err(e) if crate::index::is_damage(&e) => format!("the index was damaged: {e}"),
            Err(e) => return Err(e),
        },
        None => "no usable index".to_string(),
    };
    let (index, stats) = Index::rebuild_with_progress(ws, &mut |_| {}, ahead_after)?;
    Ok((
        index,
        SyncReport {
            rebuilt: Some(reason),
            applied: stats.entries,
            warnings: stats.warnings,
            set_aside: Vec::new(),
            ahead: stats.ahead,
        },
    ))
}

impl Engine {
    /// The versions of `key` valid at `valid_at` as believed at `as_of`, only those
    /// carrying every tag of `tags` (all of them when `tags` is empty).
    pub fn recall(
        &self,
        key: &str,
        tags: &[String],
        valid_at: ValidTime,
        as_of: TxTime,
    ) -> Result<Vec<Version>> {
        let mut versions = self.index.recall(key, valid_at, as_of)?;
        versions.retain(|v| tags.iter().all(|t| v.tags.contains(t)));
        Ok(versions)
    }
}
