//! The full-text index follows the version table: SQLite is the record; tantivy catches
//! up from it on the next search (the versions past the last one it holds, and the
//! older ones a write changed, listed in `fulltext_dirty`).

use std::fs;
use std::path::Path;

use rusqlite::Connection;

use super::{Index, fulltext, row_version, set_meta};
use crate::core::Version;
use crate::error::{Error, Result};

impl Index {
    /// Whether the full-text index lags behind the version table.
    pub fn fulltext_pending(&self) -> Result<bool> {
        if !self.fulltext_built() {
            return Ok(true);
        }
        let max = self.fulltext_recorded()?;
        let pending: bool = self.conn.query_row(
            "SELECT EXISTS (SELECT 1 FROM versions WHERE id > ?1) OR EXISTS (SELECT 1 FROM fulltext_dirty)",
            [max],
            |r| r.get(0),
        )?;
        Ok(pending)
    }

    /// The last version id SQLite records the full-text index as holding.
    fn fulltext_recorded(&self) -> Result<i64> {
        Ok(self
            .meta("fulltext_max_id")?
            .and_then(|v| v.parse().ok())
            .unwrap_or(0))
    }

    /// Brings the full-text index up to date with the version table (callers hold the
    /// workspace lock: tantivy takes one writer at a time). Rebuilds it when missing.
    /// Returns how many versions it indexed.
    pub fn refresh_fulltext(&mut self, merges: fulltext::Merges) -> Result<usize> {
        let Some(catch_up) = self.plan_fulltext(merges)? else {
            return Ok(0);
        };
        catch_up.commit()?;
        self.record_fulltext(catch_up)
    }

    /// What the full-text index lacks: `None` when nothing (or when it was missing, and
    /// was built here). [`TextCatchUp::commit`] needs no connection, so it can run on a
    /// thread of its own meanwhile; then [`Index::record_fulltext`] records it.
    pub fn plan_fulltext(&mut self, merges: fulltext::Merges) -> Result<Option<TextCatchUp>> {
        let Some(ft) = fulltext::FullText::open_to_write(&self.fulltext_dir, merges)? else {
            build_fulltext(&self.conn, &self.fulltext_dir)?;
            return Ok(None);
        };
        let recorded = self.fulltext_recorded()?;
        // A commit names the last version it holds: a process stopped between tantivy's
        // commit and recording it here left the record behind.
        let max = recorded.max(ft.committed_upto().unwrap_or(0));
        let changed: Vec<(i64, Version)> = {
            // Two lookups by id, not one `OR`: SQLite answers `id > ?1 OR id IN (…)` by
            // scanning the whole table (a few hundred ms at a million versions, on the
            // first search after every catch-up).
            let mut stmt = self.conn.prepare(
                "SELECT * FROM versions WHERE id > ?1
                 UNION ALL
                 SELECT * FROM versions WHERE id <= ?1 AND id IN (SELECT id FROM fulltext_dirty)
                 ORDER BY id",
            )?;
            let rows = stmt.query_map([max], |r| Ok((r.get("id")?, row_version(r)?)))?;
            rows.collect::<rusqlite::Result<_>>()?
        };
        let upto = changed
            .iter()
            .map(|(id, _)| *id)
            .max()
            .unwrap_or(max)
            .max(max);
        if changed.is_empty() && upto == recorded {
            return Ok(None);
        }
        Ok(Some(TextCatchUp {
            ft,
            merges,
            held: max,
            changed,
            upto,
        }))
    }

    /// Records a committed catch-up ([`Index::plan_fulltext`]); how many versions it
    /// indexed.
    pub fn record_fulltext(&mut self, done: TextCatchUp) -> Result<usize> {
        let tx = self.conn.transaction()?;
        set_meta(&tx, "fulltext_max_id", &done.upto.to_string())?;
        tx.execute("DELETE FROM fulltext_dirty WHERE id <= ?1", [done.upto])?;
        tx.commit()?;
        Ok(done.changed.len())
    }
}

/// The versions the full-text index lacks, and the index to commit them to.
pub struct TextCatchUp {
    ft: fulltext::FullText,
    merges: fulltext::Merges,
    /// The last version id the index held before.
    held: i64,
    changed: Vec<(i64, Version)>,
    /// The last version id it holds after.
    upto: i64,
}

impl TextCatchUp {
    /// The versions to add, when they are only additions (past the last version the
    /// index held): a search can score those beside the index (`fulltext/tail.rs`). None
    /// when a write changed an older version the index holds, whose copy there is stale.
    pub fn additions(&self) -> Option<&[(i64, Version)]> {
        (self.changed.iter().all(|(id, _)| *id > self.held) && !self.changed.is_empty())
            .then_some(self.changed.as_slice())
    }

    /// Adds the versions to the full-text index and commits, naming the last one.
    pub fn commit(&self) -> Result<()> {
        if self.changed.is_empty() {
            return Ok(());
        }
        let writer = self.ft.writer(self.merges)?;
        for (id, v) in &self.changed {
            // A version past the last one the index holds was never in it: deleting it
            // first cost each commit a lookup in every segment (a fifth of it).
            if *id <= self.held {
                self.ft.delete(&writer, *id as u64);
            }
            self.ft.add(&writer, *id as u64, v)?;
        }
        self.ft.commit_upto(writer, self.upto)
    }
}

/// Builds the full-text index of every version from scratch into `dir`.
fn build_fulltext(conn: &Connection, dir: &Path) -> Result<()> {
    if dir.exists() {
        fs::remove_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    }
    let ft = fulltext::FullText::create(dir)?;
    let writer = ft.writer(fulltext::Merges::Now)?;
    let mut stmt = conn.prepare("SELECT * FROM versions")?;
    let mut rows = stmt.query([])?;
    let mut max_id = 0i64;
    while let Some(r) = rows.next()? {
        let id: i64 = r.get("id")?;
        ft.add(&writer, id as u64, &row_version(r)?)?;
        max_id = max_id.max(id);
    }
    ft.commit(writer)?;
    conn.execute(
        "INSERT OR REPLACE INTO meta (k, v) VALUES ('fulltext_max_id', ?1)",
        [max_id.to_string()],
    )?;
    conn.execute("DELETE FROM fulltext_dirty", [])?;
    Ok(())
}
