//! A transaction on the index that is never committed: an import plans each record
//! against the versions believed after the records before it, in SQL, with the same
//! `apply_event` a catch-up runs, so what it holds does not grow with the import. It is
//! rolled back when dropped; the catch-up after the append applies the entries for good.

use rusqlite::Transaction;

use super::{Index, apply_event, believed_in};
use crate::core::{Event, Version};
use crate::error::Result;

/// SQLite's page cache while an import plans (KiB): the planned changes stay in it, and
/// spill into the write-ahead log (discarded by the rollback) beyond it.
const PLAN_CACHE_KIB: i64 = 16 * 1024;

/// Planning state for an import (see the module's documentation).
pub struct Scratch<'a> {
    tx: Transaction<'a>,
}

impl Index {
    /// Opens a scratch transaction (the caller holds the writers' lock).
    pub fn scratch(&mut self) -> Result<Scratch<'_>> {
        self.conn
            .execute_batch(&format!("PRAGMA cache_size = -{PLAN_CACHE_KIB};"))?;
        Ok(Scratch {
            tx: self.conn.transaction()?,
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
        apply_event(&self.tx, ev)?;
        Ok(())
    }
}
