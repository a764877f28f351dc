//! A transaction on the index that an import plans in: each record is planned against
//! the versions believed after the records before it, in SQL, with the same
//! `apply_event` a catch-up runs, so what it holds does not grow with the import. Its
//! entries are applied with the sources they will have once appended (file, line,
//! hash), so after the append the import hands the transaction to the index
//! ([`Scratch::record_import`]), which checks the appended files against what was
//! planned and commits: the plans are executed once, never planned again. When the
//! files are not what was planned, or the process dies before the commit, the
//! transaction rolls back and a catch-up applies the appended entries as after any append.

use std::hash::{Hash, Hasher};

use rusqlite::{OptionalExtension, Transaction};

use super::catch_up::{comes_after, finish, last_applied};
use super::{
    CatchUpReport, Index, Warning, apply_event, believed_in, file_digest, file_events,
    insert_file_row, note_ahead,
};
use crate::core::time::TxTime;
use crate::core::{Event, Version, event_order};
use crate::error::Result;
use crate::store::{FileStat, Workspace};

/// SQLite's page cache while an import plans (KiB): the planned changes stay in it, and
/// spill into the write-ahead log (discarded by a rollback) beyond it.
const PLAN_CACHE_KIB: i64 = 16 * 1024;

/// Planning state for an import (see the module's documentation).
pub struct Scratch<'a> {
    tx: Transaction<'a>,
    /// What applying the planned events reported (a plan a catch-up would also refuse),
    /// by file, to be recorded as a catch-up records them.
    warnings: std::cell::RefCell<Vec<Warning>>,
}

/// What an import appended to one day file, as planned: how many entries and a check
/// over their places ([`ImportCheck`]), and the file's fingerprint after the append.
pub struct ImportedFile {
    pub stat: FileStat,
    pub check: ImportCheck,
}

/// A running check over the entries planned for one file: their count, and a hash of
/// each one's line, recorded hash, time and content, in order. The same check over the
/// entries read back from the file tells whether they are the ones planned, where they
/// were planned, in O(1) memory per file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ImportCheck {
    pub entries: usize,
    digest: u64,
}

impl ImportCheck {
    /// Counts an event in.
    pub fn add(&mut self, ev: &Event) {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        (
            self.digest,
            ev.source.line,
            &ev.source.hash,
            ev.tx,
            ev.content.0,
        )
            .hash(&mut h);
        self.digest = h.finish();
        self.entries += 1;
    }
}

impl Index {
    /// Opens a scratch transaction (the caller holds the writers' lock).
    pub fn scratch(&mut self) -> Result<Scratch<'_>> {
        // Every insert fires triggers, so SQLite keeps a statement journal (each page a
        // statement changes, copied first); in a temporary file that was a `pwrite` per
        // page (over a million at 100k versions, a third of the import). In memory it
        // holds one statement's pages and is emptied after each.
        self.conn.execute_batch(&format!(
            "PRAGMA cache_size = -{PLAN_CACHE_KIB}; PRAGMA temp_store = MEMORY;"
        ))?;
        Ok(Scratch {
            tx: self.conn.transaction()?,
            warnings: Default::default(),
        })
    }
}

impl Scratch<'_> {
    /// The versions of `key` believed after every event applied so far.
    pub fn believed(&self, key: &str) -> Result<Vec<Version>> {
        Ok(believed_in(&self.tx, key)?
            .into_iter()
            .map(|(_, v)| v)
            .collect())
    }

    /// Applies a planned event (as a catch-up would).
    pub fn apply(&self, ev: &Event) -> Result<()> {
        if let Some(w) = apply_event(&self.tx, ev)? {
            self.warnings.borrow_mut().push(w);
        }
        Ok(())
    }

    /// Records an import whose entries were appended to `files` (in name order) and
    /// commits what was planned, as the catch-up after the append would have recorded
    /// it: each file read again for its fingerprint row (digest, head, problems), its
    /// new entries checked to be the ones planned, at the lines planned, in the fold's
    /// order after everything applied before. `Ok(None)` when they are not (a file
    /// changed by another hand meanwhile): the transaction rolls back, and the caller's
    /// catch-up applies the files as they are.
    pub fn record_import(
        self,
        ws: &Workspace,
        files: &[ImportedFile],
        ahead_after: Option<TxTime>,
    ) -> Result<Option<CatchUpReport>> {
        let tx = self.tx;
        let mut planned_warnings = self.warnings.into_inner();
        let mut report = CatchUpReport::default();
        // The last entry applied before the import (as a catch-up starts from it):
        // every planned entry must come after it.
        let mut last = last_applied(&tx)?;
        let mut last_event: Option<Event> = None;
        for file in files {
            let name = &file.stat.name;
            let row: Option<(i64, Vec<u8>)> = tx
                .query_row(
                    "SELECT entries, digest FROM files WHERE name = ?1",
                    [name],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .optional()?;
            let parsed = super::load_file(ws, name)?;
            let known = row.as_ref().map_or(0, |r| r.0 as usize);
            if parsed.entries.len() != known + file.check.entries
                || row.is_some_and(|(_, d)| d != file_digest(&parsed, known))
            {
                return Ok(None);
            }
            let mut events = Vec::new();
            file_events(name, &parsed, known, &mut events, &mut report.warnings);
            let mut check = ImportCheck::default();
            events.iter().for_each(|ev| check.add(ev));
            let in_order = events.windows(2).all(|w| event_order(&w[0], &w[1]).is_lt())
                && events.first().is_none_or(|first| comes_after(first, last));
            if check != file.check || !in_order {
                return Ok(None);
            }
            report
                .warnings
                .extend(planned_warnings.extract_if(.., |w| w.file == *name));
            for ev in &events {
                note_ahead(ev, ahead_after, &mut report.ahead);
            }
            report.applied += events.len();
            tx.execute("DELETE FROM problems WHERE file = ?1", [name])?;
            insert_file_row(&tx, &file.stat, &parsed)?;
            if let Some(e) = events.pop() {
                last = Some((e.tx, e.content.0));
                last_event = Some(e);
            }
        }
        if !planned_warnings.is_empty() {
            return Ok(None);
        }
        finish(tx, last_event.as_ref(), &report.warnings)?;
        Ok(Some(report))
    }
}
