//! Keeping a generation in step with appended entries: the catch-up from changed files,
//! the writer's own append (`record_append`), and `apply_event`, which executes one
//! event's plan (`core::change::plan`) on the version table by row id.

use crate::core::read_rule::OPEN;
use rusqlite::{OptionalExtension, Transaction, params};

use super::{
    AHEAD_KEPT, Ahead, CatchUpReport, INSERT_VERSION, Index, RebuildReason, Warning, digest_step,
    file_digest, file_events, insert_file_row, insert_key_words, insert_problems, insert_version,
    load_file, refresh_head, row_version, set_last, set_meta,
};
use crate::core::chain::ChainHash;
use crate::core::change::{self, Change, Scope};
use crate::core::time::TxTime;
use crate::core::{Event, Version, event_order};
use crate::error::Result;
use crate::store::{FileStat, ScanStamp, Workspace, file_mark};

impl Index {
    /// Applies appended entries; `Ok(Err(reason))` when only a rebuild can help. Entries
    /// recorded after `ahead_after` are listed in the report.
    ///
    /// Changed files are read one at a time, in name order (which is time order: a day
    /// file holds the entries recorded that day), and their new entries applied in one
    /// SQLite transaction; so a catch-up after a large import holds one file's parse, not
    /// the import. The new entries of each file, sorted by the fold's order, must all
    /// come after every entry applied before them; when they do not (a merge brought in
    /// entries recorded earlier, a hand-moved entry), the transaction is dropped and only
    /// a rebuild can place them.
    pub fn catch_up(
        &mut self,
        ws: &Workspace,
        scan: &[FileStat],
        ahead_after: Option<TxTime>,
    ) -> Result<std::result::Result<CatchUpReport, RebuildReason>> {
        if self.held_due(ahead_after)? {
            return Ok(Err(RebuildReason::HeldDue));
        }
        let stored = self.files()?;
        if let Some(gone) = stored.keys().find(|n| !scan.iter().any(|s| &s.name == *n)) {
            return Ok(Err(RebuildReason::Removed(gone.clone())));
        }
        let mut report = CatchUpReport::default();
        let mut last = last_applied(&self.conn)?;
        let mut last_event: Option<Event> = None;
        let tx = self.conn.transaction()?;
        for file in scan {
            let row = stored.get(&file.name);
            if row.is_some_and(|r| r.size == file.size && r.mtime_ns == file.mtime_ns) {
                continue;
            }
            let parsed = load_file(ws, &file.name)?;
            let known = row.map_or(0, |r| r.entries);
            if parsed.entries.len() < known {
                return Ok(Err(RebuildReason::LostEntries(file.name.clone())));
            }
            if let Some(r) = row
                && file_digest(&parsed, known) != r.digest
            {
                return Ok(Err(RebuildReason::Edited(file.name.clone())));
            }
            // Whether a Go mem7 fact shares its key with another one is known only from
            // all of them: a rebuild reads them all (Go workspaces are small).
            if parsed.entries[known..].iter().any(|e| e.legacy) {
                return Ok(Err(RebuildReason::GoEntries(file.name.clone())));
            }
            let mut events = Vec::new();
            file_events(
                &file.name,
                &parsed,
                known,
                &mut events,
                &mut report.warnings,
            );
            super::hold_apart(&tx, &mut events, ahead_after, &mut report.held)?;
            events.sort_by(event_order);
            // The fold's order is (recorded, content): an entry that sorts before one
            // already applied can only be placed by folding again.
            if let Some(first) = events.first()
                && !comes_after(first, last)
            {
                let what = if report.applied == 0 {
                    "entries already indexed"
                } else {
                    "entries of an earlier file"
                };
                return Ok(Err(RebuildReason::OutOfOrder {
                    at: format!("{}:{}", first.source.file, first.source.line),
                    before: what,
                }));
            }
            for ev in &events {
                if let Some(w) = apply_event(&tx, ev)? {
                    report.warnings.push(w);
                }
                note_ahead(ev, ahead_after, &mut report.ahead);
                report.applied += 1;
            }
            if let Some(e) = events.pop() {
                last = Some((e.tx, e.content.0));
                last_event = Some(e);
            }
            tx.execute("DELETE FROM problems WHERE file = ?1", [&file.name])?;
            insert_file_row(&tx, file, &parsed)?;
        }
        finish(tx, last_event.as_ref(), &report.warnings)?;
        Ok(Ok(report))
    }

    /// Records an entry this process just appended: executes the change the writer
    /// planned for it ([`Planned`], never planned again here) and advances the file's
    /// fingerprint without re-reading the file.
    pub fn record_append(
        &mut self,
        (event, planned): (&Event, Planned),
        file: &FileStat,
        entry_hash: ChainHash,
        digest_hash: ChainHash,
        entry_start: u64,
        added_newlines: usize,
    ) -> Result<()> {
        let tx = self.conn.transaction()?;
        execute(&tx, event.tx, planned.change, &planned.believed)?;
        set_last(&tx, event)?;
        let row: Option<(i64, Vec<u8>, i64, i64, i64)> = tx
            .query_row(
                "SELECT entries, digest, newlines, size, mtime_ns FROM files WHERE name = ?1",
                [&file.name],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
            )
            .optional()?;
        // The stamp of the files' fingerprints: this file's old one out, its new one in.
        if let Some(mut stamp) = stored_stamp(&tx)? {
            if let Some((_, _, _, size, mtime_ns)) = row {
                stamp.remove(file_mark(&file.name, size as u64, mtime_ns));
            }
            stamp.add(file.mark());
            set_meta(&tx, STAMP, &stamp.to_text())?;
        }
        let (entries, digest, newlines) = match row.map(|(n, d, l, _, _)| (n, d, l)) {
            Some((n, d, l)) if d.len() == 32 => {
                let mut a = [0u8; 32];
                a.copy_from_slice(&d);
                (n as usize, a, l as usize)
            }
            _ => (0, [0u8; 32], 0),
        };
        tx.execute(
            "INSERT OR REPLACE INTO files (name, size, mtime_ns, entries, digest, head, newlines)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![
                file.name,
                file.size as i64,
                file.mtime_ns,
                (entries + 1) as i64,
                digest_step(digest, digest_hash, entry_start).to_vec(),
                entry_hash.to_hex(),
                (newlines + added_newlines) as i64
            ],
        )?;
        refresh_head(&tx)?;
        if stored_stamp(&tx)?.is_none() {
            refresh_stamp(&tx)?;
        }
        tx.commit()?;
        Ok(())
    }
}

/// The meta row holding the stamp of the `files` table ([`ScanStamp`]).
pub(super) const STAMP: &str = "scan_stamp";

/// The stamp the index holds, if any.
pub(super) fn stored_stamp(tx: &rusqlite::Connection) -> rusqlite::Result<Option<ScanStamp>> {
    Ok(tx
        .query_row("SELECT v FROM meta WHERE k = ?1", [STAMP], |r| {
            r.get::<_, String>(0)
        })
        .optional()?
        .and_then(|t| ScanStamp::parse(&t)))
}

/// The last entry applied, in the fold's order: (recorded, content). Entries of a
/// catch-up (or of an import's plan) must all come after it.
pub(super) fn last_applied(
    conn: &rusqlite::Connection,
) -> rusqlite::Result<Option<(TxTime, [u8; 32])>> {
    let meta = |k: &str| -> rusqlite::Result<Option<String>> {
        conn.query_row("SELECT v FROM meta WHERE k = ?1", [k], |r| r.get(0))
            .optional()
    };
    let Some(micros) = meta("last_tx")?.and_then(|v| v.parse().ok()) else {
        return Ok(None);
    };
    let content = meta("last_content")?
        .and_then(|h| ChainHash::from_hex(&h))
        .unwrap_or(ChainHash([0xff; 32]));
    Ok(Some((TxTime::from_micros(micros), content.0)))
}

/// Whether `ev` sorts after `last` in the fold's order (every entry does when nothing
/// was applied yet).
pub(super) fn comes_after(ev: &Event, last: Option<(TxTime, [u8; 32])>) -> bool {
    last.is_none_or(|l| (ev.tx, ev.content.0) > l)
}

/// Ends a catch-up's transaction (or an import's, recorded): the last entry applied,
/// the head, the files' stamp and the problems found, then the commit.
pub(super) fn finish(
    tx: Transaction<'_>,
    last_event: Option<&Event>,
    warnings: &[Warning],
) -> rusqlite::Result<()> {
    if let Some(last) = last_event {
        set_last(&tx, last)?;
    }
    refresh_head(&tx)?;
    refresh_stamp(&tx)?;
    insert_problems(&tx, warnings)?;
    tx.commit()
}

/// Stamps the `files` table as it now is (after a catch-up or a rebuild: one row per
/// file read, as those already did).
pub(super) fn refresh_stamp(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    let mut stamp = ScanStamp::default();
    let mut stmt = tx.prepare_cached("SELECT name, size, mtime_ns FROM files")?;
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        let name: String = r.get(0)?;
        stamp.add(file_mark(&name, r.get::<_, i64>(1)? as u64, r.get(2)?));
    }
    set_meta(tx, STAMP, &stamp.to_text())
}

pub(super) fn believed_in(
    tx: &rusqlite::Connection,
    key: &str,
) -> rusqlite::Result<Vec<(i64, Version)>> {
    let mut stmt = tx.prepare_cached(
        "SELECT * FROM versions WHERE key = ?1 AND tx_to = ?2 ORDER BY valid_from, id",
    )?;
    let rows = stmt.query_map(params![key, OPEN], |r| Ok((r.get("id")?, row_version(r)?)))?;
    rows.collect()
}

pub(super) fn close_version(tx: &Transaction<'_>, id: i64, at: TxTime) -> rusqlite::Result<()> {
    tx.prepare_cached("UPDATE versions SET tx_to = ?2 WHERE id = ?1")?
        .execute(params![id, at.micros()])?;
    Ok(())
}

/// Applies one event to the version table: SQL finds the believed versions in the
/// event's scope, the core plans the change (`core::change::plan`, as for the
/// in-memory fold), and SQL executes it by row id.
pub(super) fn apply_event(tx: &Transaction<'_>, ev: &Event) -> Result<Option<Warning>> {
    let candidates = match ev.op.scope() {
        Scope::Key(key) => believed_in(tx, key)?,
        Scope::Entity(entity) => believed_where(
            tx,
            "key = ?2 OR substr(key, 1, length(?2) + 1) = ?2 || ':'",
            vec![entity.to_string().into()],
        )?,
        // The versions carrying every tag (the same rule as a read's); the plan decides.
        Scope::Tagged(tags) => {
            let mut sql = String::from("1");
            let mut args: Vec<rusqlite::types::Value> = Vec::new();
            // (?1 is the open end `believed_where` binds.)
            super::queries::push_carries(&mut sql, &mut args, tags, 1);
            believed_where(tx, &sql, args)?
        }
        Scope::Nothing => return Ok(None),
    };
    let believed = Believed::from(candidates);
    let change = match change::plan(ev, ev.tx, &believed.versions) {
        Ok(c) => c,
        Err(e) => {
            return Ok(Some(Warning {
                file: ev.source.file.clone(),
                line: ev.source.line,
                message: format!("ignored: {e}"),
            }));
        }
    };
    execute(tx, ev.tx, change, &believed)?;
    Ok(None)
}

/// Versions believed now, with the rows they are in: what a plan's `close` indices
/// point into.
#[derive(Clone, Debug, Default)]
pub struct Believed {
    ids: Vec<i64>,
    pub versions: Vec<Version>,
}

impl From<Vec<(i64, Version)>> for Believed {
    fn from(rows: Vec<(i64, Version)>) -> Believed {
        let (ids, versions) = rows.into_iter().unzip();
        Believed { ids, versions }
    }
}

/// A change the writer planned (`core::change::plan`) against [`Believed`] read under
/// the writers' lock, to be executed as it is when the entry is recorded.
#[derive(Clone, Debug)]
pub struct Planned {
    pub change: Change,
    pub believed: Believed,
}

impl Index {
    /// The versions of `key` believed now, with their rows (for a write to plan against
    /// under the writers' lock, and hand its plan to [`Index::record_append`]).
    pub fn believed_rows(&self, key: &str) -> Result<Believed> {
        Ok(Believed::from(believed_in(&self.conn, key)?))
    }
}

/// Executes a planned change at transaction time `at`: inserts the versions it starts,
/// files a new key under its words, and closes the rows it closes.
fn execute(tx: &Transaction<'_>, at: TxTime, change: Change, believed: &Believed) -> Result<()> {
    let Believed {
        ids,
        versions: believed,
    } = believed;
    let mut insert = tx.prepare_cached(INSERT_VERSION)?;
    for v in &change.start {
        insert_version(&mut insert, v)?;
    }
    // A key nothing was believed of may be new to the index: file it under its words.
    let mut filed: Vec<&str> = Vec::new();
    for v in &change.start {
        if !filed.contains(&v.key.as_str()) && !believed.iter().any(|b| b.key == v.key) {
            insert_key_words(tx, &v.key)?;
            filed.push(&v.key);
        }
    }
    for &i in &change.close {
        close_version(tx, ids[i], at)?;
    }
    Ok(())
}

/// Believed versions (with their row ids) matching an SQL condition on the versions
/// table; `?1` is taken by the open end, the condition's own arguments follow.
pub(super) fn believed_where(
    tx: &Transaction<'_>,
    condition: &str,
    args: Vec<rusqlite::types::Value>,
) -> rusqlite::Result<Vec<(i64, Version)>> {
    let mut all: Vec<rusqlite::types::Value> = vec![OPEN.into()];
    all.extend(args);
    let mut stmt = tx.prepare_cached(&format!(
        "SELECT * FROM versions WHERE tx_to = ?1 AND ({condition}) ORDER BY key, valid_from, id"
    ))?;
    let rows = stmt.query_map(rusqlite::params_from_iter(all), |r| {
        Ok((r.get("id")?, row_version(r)?))
    })?;
    rows.collect()
}

/// Lists `ev` when it was recorded after `ahead_after`, while the list holds fewer than
/// [`AHEAD_KEPT`] (a workspace written with a clock years ahead would otherwise make a
/// catch-up or a rebuild hold one row per entry).
pub(super) fn note_ahead(ev: &Event, ahead_after: Option<TxTime>, ahead: &mut Vec<Ahead>) {
    if ahead.len() < AHEAD_KEPT && ahead_after.is_some_and(|t| ev.tx > t) {
        ahead.push(Ahead {
            file: ev.source.file.clone(),
            line: ev.source.line,
            recorded: ev.tx,
        });
    }
}
