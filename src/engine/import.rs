//! `mem7 import`: many records applied as successive stores under one lock, in memory
//! that does not grow with the input.
//!
//! Each record is planned against the index inside a scratch transaction that is never
//! committed (`index::Scratch`: the same `apply_event` a catch-up runs, so the versions
//! believed after the records before it are in SQLite, not in memory); its entry is
//! rendered, chained to the one before, and written to a spill file per day file in a
//! temporary directory under `.mem7/`. Any error (a refused period, a time out of range,
//! an unreadable record) returns before a memory file is touched: the scratch
//! transaction rolls back and the spill directory is deleted. Otherwise the spill files
//! are appended to their day files (in name order, which is time order; each in blocks,
//! with one `sync_data`), and one catch-up applies the appended entries for good, as
//! after any append. A crash during the appends leaves the index behind the files, which
//! the next command catches up as usual.

use super::decide::{confirmed, plan_unwritten, store_draft, store_op};
use super::held::Held;
use super::spill::{Spill, append_spill};
use super::write::refuse_over_rule;
use super::{Engine, ImportOp, ImportOutcome, ImportRecord, step_past, validate_store};
use crate::core::EntryOp;
use crate::core::chain::{ChainHash, ChainKey};
use crate::core::temporal::Period;
use crate::core::time::TxTime;
use crate::core::{Event, Op, Source, ValidEnd, Version, validate};
use crate::error::{Error, Result};
use crate::format::{EntryDraft, render_entry};
use crate::index::{ImportedFile, Scratch};
use crate::store::Workspace;

/// Checks every record of an import; the error names the first bad record's line.
pub fn validate_import(records: &[ImportRecord], config: &crate::config::Config) -> Result<()> {
    records.iter().try_for_each(|r| validate_record(r, config))
}

/// Checks one import record (the rules of its op), naming its line in the error.
pub fn validate_record(r: &ImportRecord, config: &crate::config::Config) -> Result<()> {
    let checked = match r.op {
        ImportOp::Store => validate_store(&r.req, config),
        ImportOp::Forget | ImportOp::ForgetEntity => validate::lookup_key(&r.req.key)
            .and_then(|()| validate::agent(&r.req.agent))
            .map_err(Error::from),
        ImportOp::ForgetTagged => r
            .req
            .tags
            .iter()
            .try_for_each(|t| validate::tag(t))
            .and_then(|()| validate::agent(&r.req.agent))
            .and_then(|()| {
                let max = config.max_value_bytes();
                validate::entry_size("", &r.req.tags, max)
            })
            .map_err(Error::from),
    };
    checked.map_err(|e| at_line(r.line, e))
}

/// Prefixes an input error with `line N:`.
fn at_line(line: usize, e: Error) -> Error {
    match e {
        Error::Input { problem, hint } => Error::Input {
            problem: format!("line {line}: {problem}"),
            hint,
        },
        Error::Credential { what, kind } => Error::Credential {
            what: format!("{what} of line {line}"),
            kind,
        },
        other => other,
    }
}

impl Engine {
    /// Applies records as successive stores (same rules as `store`) under one lock, with
    /// one append and fsync per file and one index update at the end. Every record is
    /// checked before anything is written: a bad record stops the import and names its
    /// line, and nothing changes.
    pub fn import(&mut self, records: &[ImportRecord], now: TxTime) -> Result<ImportOutcome> {
        validate_import(records, self.ws.config())?;
        self.import_each(&mut records.iter().cloned().map(Ok), now)
    }

    /// [`Engine::import`] of records read one at a time (see the module's
    /// documentation): an `Err` from `records` stops the import with nothing written.
    pub fn import_each(
        &mut self,
        records: &mut dyn Iterator<Item = Result<ImportRecord>>,
        now: TxTime,
    ) -> Result<ImportOutcome> {
        self.clock = Some(now);
        let _lock = self.ws.lock()?;
        self.refresh()?;
        // A torn tail is set aside before the append, which moves the lines planned for
        // its file: such an import is applied by the catch-up after it instead.
        let torn = !self.index.torn_tails()?.is_empty();
        let start = (self.index.last_tx()?, self.index.head()?);
        let mut spill = Spill::new(&self.ws.index_dir()?)?;
        let scratch = self.index.scratch()?;
        let mut outcome = plan_import(
            &self.ws, &self.key, &scratch, start, records, now, &mut spill,
        )?;
        spill.finish()?;
        outcome.files = spill.files.len();
        if torn || !spill.exact {
            drop(scratch);
            self.set_aside_torn()?;
            append_spill(&self.ws, &spill)?;
        } else {
            let appended = append_spill(&self.ws, &spill)?;
            let files: Vec<ImportedFile> = appended
                .into_iter()
                .map(|(stat, check)| ImportedFile { stat, check })
                .collect();
            // The plans made above are executed as they are, once: the index checks the
            // appended files against them and commits the planning transaction.
            let ahead_after = self.clock.map(super::ahead_threshold);
            if let Some(report) = scratch.record_import(&self.ws, &files, ahead_after)? {
                self.caught_up.warnings.extend(report.warnings);
                self.caught_up.ahead.extend(report.ahead);
                self.caught_up.applied += report.applied;
            }
        }
        drop(spill);
        // What the import did not record (everything, after a torn tail or when the
        // files were not as planned; else nothing) is caught up as after any append.
        self.refresh()?;
        self.index.checkpoint()?;
        Ok(outcome)
    }
}

/// Plans every record against a scratch transaction and writes its entry to `spill`;
/// `start` is the workspace's last transaction time and chain head.
fn plan_import(
    ws: &Workspace,
    key: &ChainKey,
    scratch: &Scratch<'_>,
    start: (Option<TxTime>, ChainHash),
    records: &mut dyn Iterator<Item = Result<ImportRecord>>,
    now: TxTime,
    spill: &mut Spill,
) -> Result<ImportOutcome> {
    let (mut last, mut prev) = start;
    let workspace_last = last;
    let mut previous_recorded: Option<TxTime> = None;
    let config = ws.config().clone();
    let mut tie = TieGroup::default();
    let mut outcome = ImportOutcome::default();
    // Read from the files the first time a record could already be there.
    let mut held: Option<Held> = None;
    let ceiling = config.agent_ceiling()?;
    // Entry hashes where the records come from → the hashes of the entries written
    // (or already held) here, for the forgets of one value that name them.
    let mut renamed: std::collections::HashMap<String, String> = Default::default();
    for r in records {
        let mut r = r?;
        validate_record(&r, &config)?;
        let many = config.is_many(&r.req.key);
        refuse_far_ahead(&r, now)?;
        if let Some(t) = r.recorded {
            if held_or_out_of_order(
                ws,
                &mut held,
                &r,
                t,
                many,
                workspace_last,
                previous_recorded,
            )? {
                if let Some(origin) = &r.origin {
                    renamed.insert(origin.clone(), origin.clone());
                }
                outcome.held += 1;
                previous_recorded = Some(t);
                continue;
            }
            previous_recorded = Some(t);
        }
        name_forgotten_entry(&mut r, &renamed, scratch)?;
        // A record's tier is decided by the one tier rule, as any write's (a record
        // the workspace already holds was skipped above, as it stands): an import is
        // not the person's word, so it records within the ceiling, `inferred` when it
        // names none, and never a standing rule.
        let asked = r.req.tier;
        r.req.tier = crate::core::tier::recorded(
            r.req.by,
            asked,
            crate::core::tier::rule_shaped(&r.req.key, &r.req.tags),
            ceiling,
        );
        if asked.is_some_and(|a| r.req.tier < Some(a)) {
            outcome.lowered += 1;
        }
        if r.op == ImportOp::Forget {
            let believed = scratch.believed(&r.req.key)?;
            refuse_over_rule(r.req.by, &r.req.key, &believed).map_err(|e| at_line(r.line, e))?;
        }
        // Like `now`, a time not after the last transaction is raised past it; the
        // record's own clock (`recorded`, else now) stays its default valid_from.
        let wanted = r.recorded.unwrap_or(now);
        let tx = step_past(last, wanted).map_err(|e| at_line(r.line, e))?;
        // Each record either stops believing (a forget) or is a store; both are then
        // placed, noted, applied and spilled alike.
        let (op, scope, placed, forgets) = if r.op != ImportOp::Store {
            let (op, scope, placed) = forget_entry(&r, &tie, wanted, tx, prev, key)?;
            (op, scope, placed, true)
        } else {
            match store_entry(&r, scratch, many, &tie, wanted, tx, prev, key)? {
                Some((op, scope, placed)) => (op, scope, placed, false),
                None => {
                    outcome.unchanged += 1;
                    continue;
                }
            }
        };
        let (tx, text, hash, content) = placed;
        if let Some(origin) = &r.origin {
            renamed.insert(origin.clone(), hash.to_hex());
        }
        if r.keep_ties && tx != wanted && last == Some(wanted) {
            outcome.raised_ties.push(r.line);
        }
        tie.note(tx, scope, content);
        last = Some(tx);
        prev = hash;
        let day = Workspace::day_file(&tx.utc_day());
        let line = spill.next_line(ws, &day)?;
        let ev = staged_event(&day, line, &text).unwrap_or_else(|| {
            // Not read back as the event planned (never seen): the catch-up after
            // the append reads the file instead of taking the plan.
            spill.exact = false;
            Event {
                tx,
                op,
                source: Source::default(),
                content,
            }
        });
        scratch.apply(&ev)?;
        spill.write(&day, &text, &ev)?;
        if forgets {
            outcome.forgot += 1;
        } else {
            outcome.stored += 1;
        }
    }
    Ok(outcome)
}

/// Refuses a record `recorded` more than a century ahead of this machine's clock.
fn refuse_far_ahead(r: &ImportRecord, now: TxTime) -> Result<()> {
    if let Some(t) = r.recorded
        && t > crate::core::time::hold_after(crate::core::time::ahead_threshold(now))
    {
        return Err(at_line(
            r.line,
            Error::input(
                format!(
                    "recorded {t} is more than a century ahead of this machine's clock ({now})"
                ),
                "an import records nothing the clock has not reached: fix the record's `recorded`, or the clock",
            ),
        ));
    }
    Ok(())
}

/// Whether the workspace already holds record `r`, recorded at `t` (then it writes
/// nothing); a record it does not hold is refused when `t` is before the workspace's last
/// transaction or the previous record's.
fn held_or_out_of_order(
    ws: &Workspace,
    held: &mut Option<Held>,
    r: &ImportRecord,
    t: TxTime,
    many: bool,
    workspace_last: Option<TxTime>,
    previous_recorded: Option<TxTime>,
) -> Result<bool> {
    // A record whose entry the workspace already holds (its own export read
    // back, a rerun) writes nothing, whatever its time.
    if workspace_last.is_some_and(|w| t <= w) {
        let held = match held {
            Some(h) => h,
            None => held.insert(Held::load(ws, t)?),
        };
        if held.holds(r, t, many) {
            return Ok(true);
        }
    }
    let problem = match (workspace_last, previous_recorded) {
        (Some(w), _) if t < w => Some(format!(
            "recorded {t} is before the workspace's last transaction ({w})"
        )),
        (_, Some(p)) if t < p => Some(format!(
            "recorded {t} is before the previous record's ({p})"
        )),
        _ => None,
    };
    if let Some(problem) = problem {
        return Err(at_line(
            r.line,
            Error::input(
                problem,
                "records with `recorded` must be in time order and not before what the workspace already holds",
            ),
        ));
    }
    Ok(false)
}

/// Renames the entry a forget of one value names (where the record comes from) to the
/// entry here, refusing one that wrote no value believed here.
fn name_forgotten_entry(
    r: &mut ImportRecord,
    renamed: &std::collections::HashMap<String, String>,
    scratch: &Scratch<'_>,
) -> Result<()> {
    // A forget of one value names the entry that wrote it where the record
    // comes from: the same entry here may have another hash (another chain).
    if r.op == ImportOp::Forget
        && let Some(named) = r.entry.take()
    {
        let here = renamed.get(&named).cloned().unwrap_or(named);
        let known = renamed.values().any(|h| *h == here)
            || scratch
                .believed(&r.req.key)?
                .iter()
                .any(|v| v.source.hash == here);
        if !known {
            return Err(at_line(
                r.line,
                Error::input(
                    format!(
                        "the forget names entry {here}, which wrote no value of `{}` believed here",
                        r.req.key
                    ),
                    "give the `hash` of an entry this workspace holds (or one a `store` record of this import carries)",
                ),
            ));
        }
        r.entry = Some(here);
    }
    Ok(())
}

/// The entry a forget record writes: its op, the key it scopes, and where it is placed.
fn forget_entry<'r>(
    r: &'r ImportRecord,
    tie: &TieGroup,
    wanted: TxTime,
    tx: TxTime,
    prev: ChainHash,
    key: &ChainKey,
) -> Result<(Op, Option<&'r str>, Placed)> {
    let req = &r.req;
    let (op, name) = match r.op {
        ImportOp::Forget => (
            Op::Forget {
                key: req.key.clone(),
                entry: r.entry.clone(),
            },
            EntryOp::Forget,
        ),
        ImportOp::ForgetEntity => (
            Op::ForgetEntity {
                entity: req.key.clone(),
            },
            EntryOp::ForgetEntity,
        ),
        _ => (
            Op::ForgetTagged {
                tags: req.tags.clone(),
            },
            EntryOp::ForgetTagged,
        ),
    };
    let heading = match r.op {
        ImportOp::ForgetTagged => "mem7:forget_tagged",
        _ => req.key.as_str(),
    };
    let tags: &[String] = match r.op {
        ImportOp::ForgetTagged => &req.tags,
        _ => &[],
    };
    let draft = |recorded: TxTime| EntryDraft {
        key: heading,
        op: name,
        valid_from: None,
        valid_to: None,
        recorded,
        agent: &req.agent,
        tier: None,
        tags,
        entry: match r.op {
            ImportOp::Forget => r.entry.as_deref(),
            _ => None,
        },
        secret_allowed: false,
        accepts: &[],
        value: None,
    };
    // Every op's entry passes the credential check, as every store does.
    draft(tx)
        .refuse_credentials()
        .map_err(|e| at_line(r.line, e))?;
    let scope = (r.op == ImportOp::Forget).then_some(req.key.as_str());
    let placed = place(tie, r, wanted, tx, scope, draft, prev, key);
    Ok((op, scope, placed))
}

/// The entry a store record writes, or `None` when what is believed already says it.
#[allow(clippy::too_many_arguments)]
fn store_entry<'r>(
    r: &'r ImportRecord,
    scratch: &Scratch<'_>,
    many: bool,
    tie: &TieGroup,
    wanted: TxTime,
    tx: TxTime,
    prev: ChainHash,
    key: &ChainKey,
) -> Result<Option<(Op, Option<&'r str>, Placed)>> {
    let req = &r.req;
    let believed = scratch.believed(&req.key)?;
    let periods: Vec<Period> = believed.iter().map(Version::period).collect();
    if confirmed(req, &believed, &periods, wanted.as_valid(), many).is_some() {
        return Ok(None);
    }
    let from = req.valid_from.unwrap_or(wanted.as_valid());
    let end = req.valid_to.unwrap_or(ValidEnd::Open);
    let op = store_op(req, from, end, many);
    // The plan the index will execute (an empty period is refused before
    // anything is written).
    let planned = plan_unwritten(&op, tx, &believed).map_err(|e| at_line(r.line, e))?;
    // A record that restates what is believed (a rerun) writes nothing.
    if planned.restates(&believed).is_some() {
        return Ok(None);
    }
    refuse_over_rule(req.by, &req.key, &believed).map_err(|e| at_line(r.line, e))?;
    store_draft(req, from, tx, many)
        .refuse_credentials()
        .map_err(|e| at_line(r.line, e))?;
    // Only a record that is written takes a transaction time.
    let scope = Some(req.key.as_str());
    let placed = place(
        tie,
        r,
        wanted,
        tx,
        scope,
        |t| store_draft(req, from, t, many),
        prev,
        key,
    );
    Ok(Some((op, scope, placed)))
}

/// The event of a planned record as the catch-up would read it from `day` once
/// appended with its heading at `line`: read back from the entry's own text, so what
/// the index records is what a catch-up of the file would record.
fn staged_event(day: &str, line: u32, text: &str) -> Option<Event> {
    let parsed = crate::format::parse_file(text, &ChainKey::Plain);
    match (parsed.entries.as_slice(), parsed.problems.is_empty()) {
        ([entry], true) => {
            let mut ev = entry.to_event(day).ok()??;
            ev.source.line = line;
            Some(ev)
        }
        _ => None,
    }
}

/// The entries an import wrote at its last transaction time, each with the key it
/// touches (`None`: a forget of an entity or of tags, which may touch any key) and its
/// content hash (what orders entries recorded at one instant).
#[derive(Default)]
struct TieGroup {
    tx: Option<TxTime>,
    entries: Vec<(Option<String>, [u8; 32])>,
}

impl TieGroup {
    fn note(&mut self, tx: TxTime, scope: Option<&str>, content: ChainHash) {
        if self.tx != Some(tx) {
            self.tx = Some(tx);
            self.entries.clear();
        }
        self.entries.push((scope.map(str::to_string), content.0));
    }
}

/// Where a record's entry lands: its transaction time, text, chain hash and content hash.
type Placed = (TxTime, String, ChainHash, ChainHash);

/// Renders an import record's entry and decides its transaction time: `raised`, except
/// for a `keep_ties` record recorded at the instant of the entries just written, which
/// keeps that instant when the fold (which orders one instant's entries by content hash)
/// applies it after every one of them it does not commute with (stores and forgets of
/// other keys commute). So an exported history that held entries recorded at one
/// instant comes back with the same clocks whenever its order allows. Returns the time,
/// the text, the chain hash and the content hash.
#[allow(clippy::too_many_arguments)]
fn place<'a>(
    tie: &TieGroup,
    r: &ImportRecord,
    wanted: TxTime,
    raised: TxTime,
    scope: Option<&str>,
    draft: impl Fn(TxTime) -> EntryDraft<'a>,
    prev: ChainHash,
    key: &ChainKey,
) -> (TxTime, String, ChainHash, ChainHash) {
    let content = |text: &str, hash: ChainHash| match key {
        ChainKey::Plain => hash,
        ChainKey::Keyed(_) => crate::format::parse_file(text, &ChainKey::Plain)
            .entries
            .first()
            .map_or(hash, |e| e.computed),
    };
    if r.keep_ties && r.recorded == Some(wanted) && tie.tx == Some(wanted) {
        let (text, hash) = render_entry(&draft(wanted), prev, key);
        let own = content(&text, hash);
        let commutes = |other: &Option<String>| match (other.as_deref(), scope) {
            (Some(a), Some(b)) => a != b,
            _ => false,
        };
        if tie.entries.iter().all(|(s, c)| commutes(s) || *c < own.0) {
            return (wanted, text, hash, own);
        }
    }
    let (text, hash) = render_entry(&draft(raised), prev, key);
    let own = content(&text, hash);
    (raised, text, hash, own)
}
