//! The embedding cache: vectors keyed by (blake3 of the embedded text, model, dimension),
//! in `.mem7/embeddings.sqlite`. Unlike the index generations it is never rebuilt or
//! swapped: computing embeddings costs time or money, so rebuilds keep them.
//!
//! Today it is filled from a Go mem7 `index.db` (one row per entity and predicate, with
//! a float32 `embedding` BLOB); the embedding providers will fill it too.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags, params};

use crate::error::Result;

/// The file name of the cache inside `.mem7/`.
pub const FILE: &str = "embeddings.sqlite";
/// The model name recorded for vectors imported from a Go mem7 index without one.
pub const LEGACY_MODEL: &str = "mem7-go";

/// The size past which a closing connection empties the cache's write-ahead log into
/// the file (see [`EmbeddingCache::open`]).
const WAL_LIMIT: u64 = 256 * 1024;

/// The writes the journal of added texts keeps ([`EmbeddingCache::added_since`]): a set
/// of vectors further behind looks every waiting text up again.
const JOURNAL_WRITES: u64 = 4096;

/// The table of vectors. A rowid table: its primary key is an index of its own (a
/// model's texts, listed or looked up without reading a vector), and a lookup reads one
/// row. The vector (1.5 KB at 384 dimensions) does not fit a 4 KB page's share for a
/// row, so in a table keyed by the primary key itself (`WITHOUT ROWID`, the layout
/// before) every row overflowed, each step down the tree read whole rows, and the file
/// was 2.3 times larger (4.6 KB a vector at 10k facts, against 2 KB).
const TABLE: &str = "CREATE TABLE IF NOT EXISTS embeddings (
                 text_hash BLOB NOT NULL,
                 model     TEXT NOT NULL,
                 dim       INTEGER NOT NULL,
                 vector    BLOB NOT NULL,
                 PRIMARY KEY (model, text_hash, dim)
             );";

/// How long a connection waits for another connection's write to end.
const BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// The cache.
pub struct EmbeddingCache {
    conn: Connection,
    /// The write-ahead log's path.
    wal: PathBuf,
}

impl EmbeddingCache {
    /// Opens (creating if needed) the cache in the index directory.
    ///
    /// A search that embeds a new query, and a store that embeds a new key, add a vector
    /// or two. Copying them from the write-ahead log into the file when the connection
    /// closes (SQLite's default) costs two fsyncs in every such process, a good part of a
    /// whole search; they stay in the log instead, which is emptied when a connection
    /// closes with more than `WAL_LIMIT` bytes in it. The log is kept short because the
    /// first connection of every process reads all of it.
    pub fn open(index_dir: &Path) -> Result<EmbeddingCache> {
        let path = index_dir.join(FILE);
        let mut conn = Connection::open(&path)?;
        conn.busy_timeout(BUSY_TIMEOUT)?;
        conn.set_db_config(
            rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE,
            true,
        )?;
        conn.execute_batch(
            "PRAGMA journal_mode = WAL;
             PRAGMA synchronous = NORMAL;",
        )?;
        move_to_rowid_table(&mut conn)?;
        conn.execute_batch(&format!(
            "{TABLE}
             CREATE TABLE IF NOT EXISTS stamp (origin INTEGER NOT NULL, writes INTEGER NOT NULL);
             -- Which texts each recent write added ([`EmbeddingCache::added_since`]): one
             -- row per journaled write, one per text it added.
             CREATE TABLE IF NOT EXISTS journal (writes INTEGER PRIMARY KEY);
             CREATE TABLE IF NOT EXISTS added (
                 writes    INTEGER NOT NULL,
                 text_hash BLOB NOT NULL,
                 model     TEXT NOT NULL
             );
             CREATE INDEX IF NOT EXISTS added_by_writes ON added (writes);"
        ))?;
        let mut wal = path.into_os_string();
        wal.push("-wal");
        Ok(EmbeddingCache {
            conn,
            wal: wal.into(),
        })
    }

    /// The vector for `text` under `model`, if cached.
    pub fn get(&self, text: &str, model: &str) -> Result<Option<Vec<f32>>> {
        self.get_hash(blake3::hash(text.as_bytes()).as_bytes(), model)
    }

    /// Stores a vector for `text` under `model` (keeps an existing one).
    pub fn put(&self, text: &str, model: &str, vector: &[f32]) -> Result<bool> {
        let hash = blake3::hash(text.as_bytes());
        let bytes: Vec<u8> = vector.iter().flat_map(|f| f.to_le_bytes()).collect();
        let n = self.conn.execute(
            "INSERT OR IGNORE INTO embeddings (text_hash, model, dim, vector) VALUES (?1, ?2, ?3, ?4)",
            params![hash.as_bytes().as_slice(), model, vector.len() as i64, bytes],
        )?;
        Ok(n > 0)
    }

    /// The vector stored for a text hash under `model`, if any.
    pub fn get_hash(&self, hash: &[u8; 32], model: &str) -> Result<Option<Vec<f32>>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT vector FROM embeddings WHERE model = ?2 AND text_hash = ?1 LIMIT 1",
        )?;
        let mut rows = stmt.query(params![hash.as_slice(), model])?;
        Ok(match rows.next()? {
            Some(row) => Some(floats(row.get_ref(0)?.as_blob()?)),
            None => None,
        })
    }

    /// Whether a vector of `model` is cached for the text with this hash (reads no vector:
    /// a refresh asks this of every version still waiting, at each change of the cache).
    pub fn has_hash(&self, hash: &[u8; 32], model: &str) -> Result<bool> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT 1 FROM embeddings WHERE model = ?2 AND text_hash = ?1 LIMIT 1",
        )?;
        Ok(stmt.exists(params![hash.as_slice(), model])?)
    }

    /// Calls `f` with the text hash and the raw little-endian `f32` bytes of every vector
    /// of `model`, without copying them out first. In the table's order (`NOT INDEXED`):
    /// the primary key's order would read the rows at random.
    pub fn for_each_of(&self, model: &str, f: &mut dyn FnMut(&[u8; 32], &[u8])) -> Result<()> {
        let mut stmt = self
            .conn
            .prepare("SELECT text_hash, vector FROM embeddings NOT INDEXED WHERE model = ?1")?;
        let mut rows = stmt.query([model])?;
        while let Some(row) = rows.next()? {
            if let Ok(hash) = <&[u8; 32]>::try_from(row.get_ref(0)?.as_blob()?) {
                f(hash, row.get_ref(1)?.as_blob()?);
            }
        }
        Ok(())
    }

    /// The text hashes that have a vector under `model`.
    pub fn hashes_for(&self, model: &str) -> Result<HashSet<[u8; 32]>> {
        let mut stmt = self
            .conn
            .prepare("SELECT text_hash FROM embeddings WHERE model = ?1")?;
        let mut rows = stmt.query([model])?;
        let mut out = HashSet::new();
        while let Some(row) = rows.next()? {
            if let Ok(hash) = <[u8; 32]>::try_from(row.get_ref(0)?.as_blob()?) {
                out.insert(hash);
            }
        }
        Ok(out)
    }

    /// Stores vectors for text hashes under `model` in one transaction (keeps existing
    /// ones). Returns how many were new.
    pub fn put_many(&mut self, model: &str, items: &[([u8; 32], Vec<f32>)]) -> Result<usize> {
        let tx = self.conn.transaction()?;
        let mut added = Vec::new();
        {
            let mut stmt = tx.prepare_cached(
                "INSERT OR IGNORE INTO embeddings (text_hash, model, dim, vector) VALUES (?1, ?2, ?3, ?4)",
            )?;
            for (hash, vector) in items {
                let bytes: Vec<u8> = vector.iter().flat_map(|f| f.to_le_bytes()).collect();
                if stmt.execute(params![hash.as_slice(), model, vector.len() as i64, bytes])? > 0 {
                    added.push(hash);
                }
            }
        }
        let writes = bump(&tx)?;
        tx.execute("INSERT INTO journal (writes) VALUES (?1)", [writes])?;
        {
            let mut stmt = tx.prepare_cached(
                "INSERT INTO added (writes, text_hash, model) VALUES (?1, ?2, ?3)",
            )?;
            for hash in &added {
                stmt.execute(params![writes, hash.as_slice(), model])?;
            }
        }
        if (writes as u64).is_multiple_of(256) {
            let before = writes - JOURNAL_WRITES as i64;
            tx.execute("DELETE FROM journal WHERE writes <= ?1", [before])?;
            tx.execute("DELETE FROM added WHERE writes <= ?1", [before])?;
        }
        tx.commit()?;
        Ok(added.len())
    }

    /// Drops every vector that is not of `model` or not of one of `keep` (the texts the
    /// workspace holds). Returns how many went.
    pub fn prune(&mut self, model: &str, keep: &HashSet<[u8; 32]>) -> Result<usize> {
        let tx = self.conn.transaction()?;
        let mut gone = tx.execute("DELETE FROM embeddings WHERE model <> ?1", [model])?;
        let stale: Vec<Vec<u8>> = {
            let mut stmt = tx.prepare("SELECT text_hash FROM embeddings WHERE model = ?1")?;
            let rows = stmt.query_map([model], |r| r.get::<_, Vec<u8>>(0))?;
            rows.filter_map(|r| r.ok())
                .filter(|h| <[u8; 32]>::try_from(h.as_slice()).map_or(true, |h| !keep.contains(&h)))
                .collect()
        };
        {
            let mut del =
                tx.prepare("DELETE FROM embeddings WHERE text_hash = ?1 AND model = ?2")?;
            for h in &stale {
                gone += del.execute(params![h, model])?;
            }
        }
        bump(&tx)?;
        tx.commit()?;
        if gone > 0 {
            let _ = self.conn.execute_batch("VACUUM");
        }
        Ok(gone)
    }

    /// The texts given a vector of `model` by the write transactions after the `after`th
    /// up to the `upto`th (as [`EmbeddingCache::stamp`] counts them), without looking at
    /// any other: what a set of vectors whose stamp was `after` must look up again.
    /// `None` when the journal does not cover each of those writes (it keeps the
    /// last 4,096, and only writes of [`EmbeddingCache::put_many`] are in it):
    /// then every waiting text must be looked up.
    pub fn added_since(
        &self,
        after: u64,
        upto: u64,
        model: &str,
    ) -> Result<Option<HashSet<[u8; 32]>>> {
        if upto < after {
            return Ok(None);
        }
        let (after, upto) = (after as i64, upto as i64);
        let covered: i64 = self.conn.query_row(
            "SELECT count(*) FROM journal WHERE writes > ?1 AND writes <= ?2",
            [after, upto],
            |r| r.get(0),
        )?;
        if covered != upto - after {
            return Ok(None);
        }
        let mut stmt = self.conn.prepare_cached(
            "SELECT text_hash FROM added WHERE writes > ?1 AND writes <= ?2 AND model = ?3",
        )?;
        let mut rows = stmt.query(params![after, upto, model])?;
        let mut out = HashSet::new();
        while let Some(row) = rows.next()? {
            if let Ok(hash) = <[u8; 32]>::try_from(row.get_ref(0)?.as_blob()?) {
                out.insert(hash);
            }
        }
        Ok(Some(out))
    }

    /// Which cache this is and how many times it has been written to, by any process:
    /// every write transaction counts itself in the `stamp` table. Unlike `PRAGMA
    /// data_version` it means the same in every process and survives restarts, so a
    /// vector file can say which cache, and which state of it, it was made from.
    pub fn stamp(&self) -> Result<Stamp> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT origin, writes FROM stamp WHERE rowid = 1")?;
        let mut rows = stmt.query([])?;
        Ok(match rows.next()? {
            Some(row) => Stamp {
                origin: row.get::<_, i64>(0)? as u64,
                writes: row.get::<_, i64>(1)? as u64,
            },
            None => Stamp::default(),
        })
    }

    /// How many vectors the cache holds.
    pub fn len(&self) -> Result<usize> {
        Ok(self
            .conn
            .query_row("SELECT count(*) FROM embeddings", [], |r| {
                r.get::<_, i64>(0)
            })? as usize)
    }

    /// Whether the cache is empty.
    pub fn is_empty(&self) -> Result<bool> {
        Ok(self.len()? == 0)
    }

    /// Carries the vectors of a Go mem7 `index.db` over, keyed by the hash of the text
    /// they embed. Returns how many were new. Columns are found by name, so the Go
    /// versions that named the text `content`, `value` or `body` all work.
    pub fn import_legacy(&self, legacy_db: &Path) -> Result<usize> {
        let legacy = Connection::open_with_flags(legacy_db, OpenFlags::SQLITE_OPEN_READ_ONLY)?;
        let mut added = 0;
        for table in tables(&legacy)? {
            let cols = columns(&legacy, &table)?;
            let has = |c: &str| cols.iter().any(|x| x.eq_ignore_ascii_case(c));
            let Some(text_col) = ["content", "value", "body", "text"]
                .into_iter()
                .find(|c| has(c))
            else {
                continue;
            };
            if !has("embedding") {
                continue;
            }
            let model_col = if has("model") { "model" } else { "NULL" };
            let sql = format!(
                "SELECT \"{text_col}\", embedding, {model_col} FROM \"{}\" WHERE embedding IS NOT NULL",
                table.replace('"', "")
            );
            let mut stmt = legacy.prepare(&sql)?;
            // Rows with no text or a vector that is not a float32 BLOB are skipped.
            let rows = stmt.query_map([], |r| {
                let text: Option<String> = r.get(0).ok();
                let blob = match r.get_ref(1)? {
                    rusqlite::types::ValueRef::Blob(b) => Some(b.to_vec()),
                    _ => None,
                };
                let model: Option<String> = r.get(2).ok().flatten();
                Ok((text, blob, model))
            })?;
            self.conn.execute_batch("BEGIN")?;
            for row in rows {
                let (Some(text), Some(blob), model) = row? else {
                    continue;
                };
                if blob.is_empty() || blob.len() % 4 != 0 {
                    continue;
                }
                let model = model
                    .filter(|m| !m.is_empty())
                    .unwrap_or_else(|| LEGACY_MODEL.to_string());
                if self.put(&text, &model, &floats(&blob))? {
                    added += 1;
                }
            }
            if added > 0 {
                bump(&self.conn)?;
            }
            self.conn.execute_batch("COMMIT")?;
        }
        Ok(added)
    }
}

impl Drop for EmbeddingCache {
    /// Empties a long write-ahead log into the file (see [`EmbeddingCache::open`]). Not
    /// waiting for readers: when one holds the log, a later connection empties it.
    fn drop(&mut self) {
        if std::fs::metadata(&self.wal).is_ok_and(|m| m.len() > WAL_LIMIT) {
            let _ = self.conn.busy_timeout(std::time::Duration::ZERO);
            let _ = self
                .conn
                .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()));
        }
    }
}

/// A cache's identity and write count (see [`EmbeddingCache::stamp`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stamp {
    /// A random number drawn at the cache's first write, never 0: a cache deleted and
    /// made again has another. 0 for a cache never written to.
    pub origin: u64,
    /// Write transactions since.
    pub writes: u64,
}

/// Moves a cache of the layout before ([`TABLE`] says why) to the rowid table, in one
/// transaction: the same vectors, and the same stamp, so a vector file made from the
/// cache stays good. Then gives the freed pages back to the file system, unless another
/// connection is reading (the file then keeps them for the vectors to come). Once per
/// cache, by the first process to open it; one that opens it meanwhile waits for the
/// transaction and finds the table moved. A mem7 from before reads and writes the moved
/// table as its own: the same columns, unique on the same three.
fn move_to_rowid_table(conn: &mut Connection) -> Result<()> {
    fn before(conn: &Connection) -> rusqlite::Result<bool> {
        let mut stmt = conn.prepare(
            "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'embeddings'",
        )?;
        let mut rows = stmt.query([])?;
        Ok(match rows.next()? {
            Some(row) => row
                .get::<_, String>(0)?
                .to_ascii_uppercase()
                .contains("WITHOUT ROWID"),
            None => false,
        })
    }
    if !before(conn)? {
        return Ok(());
    }
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    if !before(&tx)? {
        return Ok(());
    }
    tx.execute_batch(&format!(
        "ALTER TABLE embeddings RENAME TO embeddings_before;
         {TABLE}
         INSERT INTO embeddings (text_hash, model, dim, vector)
             SELECT text_hash, model, dim, vector FROM embeddings_before;
         DROP TABLE embeddings_before;"
    ))?;
    tx.commit()?;
    // Tried once: waiting out a reader (the busy timeout) would stall this process for
    // as long as the reader reads, for pages the file can keep.
    conn.busy_timeout(std::time::Duration::ZERO)?;
    if conn.execute_batch("VACUUM").is_ok() {
        let _ = conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()));
    }
    conn.busy_timeout(BUSY_TIMEOUT)?;
    Ok(())
}

/// Counts a write transaction (see [`EmbeddingCache::stamp`]); called inside it.
/// Returns the write's number.
fn bump(conn: &Connection) -> rusqlite::Result<i64> {
    conn.query_row(
        "INSERT OR REPLACE INTO stamp (rowid, origin, writes) VALUES (1,
             coalesce((SELECT origin FROM stamp WHERE rowid = 1),
                      abs(random() % 281474976710656) + 1),
             coalesce((SELECT writes FROM stamp WHERE rowid = 1), 0) + 1)
         RETURNING writes",
        [],
        |r| r.get(0),
    )
}

fn floats(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fn tables(conn: &Connection) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare("SELECT name FROM sqlite_master WHERE type = 'table'")?;
    let rows = stmt.query_map([], |r| r.get(0))?;
    rows.collect()
}

fn columns(conn: &Connection, table: &str) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare(&format!(
        "PRAGMA table_info(\"{}\")",
        table.replace('"', "")
    ))?;
    let rows = stmt.query_map([], |r| r.get::<_, String>(1))?;
    rows.collect()
}

/// Where a Go mem7 index sits for a workspace in the Go layout (`<MEM7_DIR>/workspace`
/// next to `<MEM7_DIR>/index.db`), if there is one.
pub fn legacy_index_for(workspace_root: &Path) -> Option<PathBuf> {
    let db = workspace_root.parent()?.join("index.db");
    (workspace_root.file_name()? == "workspace" && db.is_file()).then_some(db)
}

#[cfg(test)]
mod tests;
