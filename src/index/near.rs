//! The keys a miss's near-key hint chooses from, found by index rather than by reading
//! every key: a bounded edit-distance walk over `key_slots`, the key's own slot, and the
//! few keys beyond ASCII (`key_odd`), which SQLite cannot lower-case as Rust does.

use std::collections::BTreeSet;

use super::Index;
use crate::error::Result;
use crate::text::names;

/// Seeks the walk may take before reading every key is the cheaper way: each costs a
/// few microseconds, reading a key about a tenth of one.
const MAX_SEEKS: usize = 20_000;

impl Index {
    /// Every key that [`names::near_keys`] could choose for `key` (a superset of its
    /// answer over all keys, so it gives the same answer over these), or `None` when the
    /// keys are so dense around `key` that the caller should read them all.
    ///
    /// Why a superset: for an ASCII key `k`, `key_slots` holds `k` lower-cased without
    /// `_ - . :`, and dropping the same characters from both sides never lengthens an
    /// edit distance; so every key within the edit budget of `key` (lower-cased) has a
    /// slot within the budget of `key`'s own, which the walk finds. A key that is the
    /// same ignoring case and separators has `key`'s slot (looked up directly, as ASCII
    /// twins are folded into it). Keys beyond ASCII are all taken.
    pub fn near_key_candidates(&self, key: &str) -> Result<Option<Vec<String>>> {
        let lower = key.to_lowercase();
        let budget = names::edit_budget(lower.chars().count());
        let slot: Vec<char> = lower
            .chars()
            .filter(|c| !matches!(c, '_' | '-' | '.' | ':'))
            .collect();
        let mut from = self
            .conn
            .prepare_cached("SELECT slot FROM key_slots WHERE slot >= ?1 ORDER BY slot LIMIT 1")?;
        let mut after = self
            .conn
            .prepare_cached("SELECT slot FROM key_slots WHERE slot > ?1 ORDER BY slot LIMIT 1")?;
        let walked = names::within_edits(&slot, budget, MAX_SEEKS, |at, inclusive| {
            let stmt = if inclusive { &mut from } else { &mut after };
            stmt.query_row([at], |r| r.get::<_, String>(0))
                .map(Some)
                .or_else(|e| match e {
                    rusqlite::Error::QueryReturnedNoRows => Ok(None),
                    e => Err(e),
                })
        })?;
        let Some(slots) = walked else {
            return Ok(None);
        };
        let mut keys = BTreeSet::new();
        let mut of_slot = self
            .conn
            .prepare_cached("SELECT key FROM key_slots WHERE slot = ?1")?;
        for s in slots
            .iter()
            .map(String::as_str)
            .chain([names::normalize(key).as_str()])
        {
            for k in of_slot.query_map([s], |r| r.get::<_, String>(0))? {
                keys.insert(k?);
            }
        }
        let mut odd = self.conn.prepare_cached("SELECT key FROM key_odd")?;
        for k in odd.query_map([], |r| r.get::<_, String>(0))? {
            keys.insert(k?);
        }
        Ok(Some(keys.into_iter().collect()))
    }
}
