//! Entries held apart: recorded more than a century ahead of the clock (see
//! `core::time::HOLD_APART_MICROS`), left out of the fold by catch-ups and rebuilds,
//! remembered in the meta table, and folded in by a rebuild once the clock is near.

use rusqlite::{OptionalExtension, Transaction};

use super::{Ahead, Index, set_meta};
use crate::core::chain::ChainHash;
use crate::core::time::TxTime;
use crate::error::Result;

impl Index {
    /// Whether an entry held apart is now within a century of the clock (`ahead_after` is the
    /// ahead threshold of it): then only a rebuild folds it in.
    pub fn held_due(&self, ahead_after: Option<TxTime>) -> Result<bool> {
        let (Some(after), Some(held)) = (ahead_after, self.meta(HELD_FROM)?) else {
            return Ok(false);
        };
        let held = TxTime::from_micros(held.parse().unwrap_or(i64::MIN));
        Ok(held <= crate::core::time::hold_after(after))
    }

    /// The hash an entry appended to `file` links to (`prev`): the last entry of the
    /// last file at or before it in name (time) order. That is the head, unless a later
    /// day file holds only entries held apart: a write then links where time puts it,
    /// and verify reads the held entry's link as a merge of two appenders.
    pub fn head_before(&self, file: &str) -> Result<ChainHash> {
        let head: Option<String> = self
            .conn
            .query_row(
                "SELECT head FROM files WHERE entries > 0 AND name <= ?1 ORDER BY name DESC LIMIT 1",
                [file],
                |r| r.get(0),
            )
            .optional()?;
        Ok(head
            .and_then(|h| ChainHash::from_hex(&h))
            .unwrap_or(ChainHash::GENESIS))
    }
}

/// The meta key of the earliest `recorded` of the entries held apart.
const HELD_FROM: &str = "held_from";

/// Leaves out of `events` those recorded after the hold bound of `ahead_after` (noted in
/// `held`), and records the earliest held in the index's meta (kept when `keep_old`).
pub(super) fn hold_apart(
    tx: &Transaction<'_>,
    events: &mut Vec<crate::core::Event>,
    ahead_after: Option<TxTime>,
    held: &mut Vec<Ahead>,
) -> rusqlite::Result<()> {
    let Some(bound) = ahead_after.map(crate::core::time::hold_after) else {
        return Ok(());
    };
    let before = held.len();
    events.retain(|ev| {
        if ev.tx > bound {
            held.push(Ahead {
                file: ev.source.file.clone(),
                line: ev.source.line,
                recorded: ev.tx,
            });
            false
        } else {
            true
        }
    });
    if let Some(first) = held[before..].iter().map(|a| a.recorded).min() {
        let known: Option<i64> = tx
            .query_row("SELECT v FROM meta WHERE k = ?1", [HELD_FROM], |r| {
                r.get::<_, String>(0)
            })
            .optional()?
            .and_then(|v| v.parse().ok());
        let from = known.map_or(first.micros(), |k| k.min(first.micros()));
        set_meta(tx, HELD_FROM, &from.to_string())?;
    }
    Ok(())
}
