//! The keys a new key is compared with for drift: those filed under its words' stems
//! (`key_words`, filled by `index/mod.rs`), those sharing the most words first.

use rusqlite::Connection;

use super::Index;
use crate::error::Result;

impl Index {
    /// The keys filed under any of `stems` (`key_words`), those sharing the most words
    /// first (then by key), at most `limit`: the keys a new key is compared with for
    /// drift.
    ///
    /// Counted here rather than by SQLite's `GROUP BY … ORDER BY count(*)`: a common
    /// word (a project's name) files thousands of keys at 100k facts, and grouping them
    /// in a temporary B-tree was a third of a new key's store. The words' lists are
    /// merged in key order instead, copying only the keys kept.
    pub fn keys_sharing_words(&self, stems: &[String], limit: usize) -> Result<Vec<String>> {
        Ok(keys_sharing_words(&self.conn, stems, limit)?)
    }
}

/// [`Index::keys_sharing_words`] on a connection: each word's keys are read in key
/// order off the primary key, side by side, and a key met under `n` of the words is
/// counted once it has been passed; the first `limit` keys of each count are kept.
fn keys_sharing_words(
    conn: &Connection,
    stems: &[String],
    limit: usize,
) -> rusqlite::Result<Vec<String>> {
    use rusqlite::fallible_streaming_iterator::FallibleStreamingIterator;
    let mut words: Vec<&str> = stems.iter().map(String::as_str).collect();
    words.sort_unstable();
    words.dedup();
    let mut stmts = Vec::with_capacity(words.len());
    for _ in &words {
        stmts.push(conn.prepare_cached("SELECT key FROM key_words WHERE word = ?1 ORDER BY key")?);
    }
    let mut lists = Vec::with_capacity(words.len());
    for (stmt, word) in stmts.iter_mut().zip(&words) {
        let mut rows = stmt.query([word])?;
        rows.advance()?;
        lists.push(rows);
    }
    // `kept[n - 1]`: the first keys (in key order) filed under `n` of the words.
    let mut kept: Vec<Vec<String>> = vec![Vec::new(); words.len()];
    let mut at = Vec::with_capacity(words.len());
    loop {
        at.clear();
        let mut least: Option<&[u8]> = None;
        for (i, rows) in lists.iter().enumerate() {
            let Some(row) = rows.get() else { continue };
            // Bytes, as SQLite's BINARY collation orders them: read from each list's
            // head once a round, and checked as text only when kept.
            let key = row.get_ref(0)?.as_bytes()?;
            match least.map(|l| key.cmp(l)) {
                None | Some(std::cmp::Ordering::Less) => {
                    least = Some(key);
                    at.clear();
                    at.push(i);
                }
                Some(std::cmp::Ordering::Equal) => at.push(i),
                Some(std::cmp::Ordering::Greater) => {}
            }
        }
        let Some(key) = least else { break };
        let same = &mut kept[at.len() - 1];
        if same.len() < limit {
            let key = std::str::from_utf8(key).map_err(|e| {
                rusqlite::Error::FromSqlConversionFailure(0, rusqlite::types::Type::Text, e.into())
            })?;
            same.push(key.to_string());
        }
        for &i in &at {
            lists[i].advance()?;
        }
    }
    Ok(kept.into_iter().rev().flatten().take(limit).collect())
}

#[cfg(test)]
mod tests {
    use super::keys_sharing_words;
    use proptest::prelude::*;

    proptest! {
        /// Counting in Rust orders and cuts the keys as the `GROUP BY` it replaced.
        #[test]
        fn keys_sharing_words_agrees_with_sqlite_grouping(
            filed in proptest::collection::btree_set((0u8..6, 0u8..40), 0..120),
            asked in proptest::collection::vec(0u8..8, 0..6),
            limit in 0usize..30,
        ) {
            let conn = rusqlite::Connection::open_in_memory().unwrap();
            conn.execute_batch(
                "CREATE TABLE key_words (word TEXT NOT NULL, key TEXT NOT NULL,
                 PRIMARY KEY (word, key)) WITHOUT ROWID;",
            )
            .unwrap();
            for (w, k) in &filed {
                conn.execute(
                    "INSERT INTO key_words (word, key) VALUES (?1, ?2)",
                    [format!("w{w}"), format!("k{k}:x")],
                )
                .unwrap();
            }
            let stems: Vec<String> = asked.iter().map(|w| format!("w{w}")).collect();
            let mut distinct = stems.clone();
            distinct.sort();
            distinct.dedup();
            let expected: Vec<String> = if distinct.is_empty() {
                Vec::new()
            } else {
                let marks = vec!["?"; distinct.len()].join(", ");
                let sql = format!(
                    "SELECT key FROM key_words WHERE word IN ({marks})
                     GROUP BY key ORDER BY count(*) DESC, key LIMIT {limit}"
                );
                let mut stmt = conn.prepare(&sql).unwrap();
                stmt.query_map(rusqlite::params_from_iter(&distinct), |r| r.get(0))
                    .unwrap()
                    .collect::<rusqlite::Result<_>>()
                    .unwrap()
            };
            prop_assert_eq!(keys_sharing_words(&conn, &stems, limit).unwrap(), expected);
        }
    }
}
