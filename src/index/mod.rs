//! The derived index: a SQLite database of every version, rebuilt from the markdown
//! whenever it is missing, old or disagrees with the files, and caught up incrementally
//! when entries were only appended.
//!
//! Generations: each full rebuild writes a fresh `index-<id>.sqlite` and then swaps the
//! one-line `CURRENT` file to name it, so readers see the old index or the new one,
//! never half of one. The index never writes the workspace.

mod apart;
mod catch_up;
mod check;
pub mod dates;
pub mod embeddings;
mod files;
mod follow;
pub mod fulltext;
pub mod fusion;
mod key_words;
mod keyparts;
mod near;
mod queries;
pub mod query;
mod rebuild;
mod report;
mod schema;
mod scratch;
mod stem;
pub mod vectors;
mod vouched;

use std::collections::HashMap;
use std::fs;
use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, Transaction, params};

use crate::core::chain::{ChainHash, ChainKey};
use crate::core::time::{TxTime, ValidTime};
use crate::core::{Event, Source, Tier, Version};
use crate::error::{Error, Result};
use crate::format::{self, ParsedFile, ProblemKind};
use crate::store::{FileStat, Workspace};

use apart::hold_apart;
pub use catch_up::{Believed, Planned};
use catch_up::{apply_event, believed_in, note_ahead};
pub use check::IndexCheck;
pub use files::load_file;
use files::{entry_head, file_digest, file_events};
pub use follow::TextCatchUp;
pub use report::{AHEAD_KEPT, Ahead, CatchUpReport, Progress, RebuildReason, Warning};
pub use schema::SCHEMA_VERSION;
pub use scratch::{ImportCheck, ImportedFile, Scratch};

const CURRENT: &str = "CURRENT";
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// One search result.
#[derive(Clone, Debug)]
pub struct SearchHit {
    /// The version's id in this index generation.
    pub id: u64,
    pub version: Version,
    pub score: f32,
    /// A fragment of the value around the matches.
    pub snippet: String,
    /// Byte ranges of the matched words within `snippet`.
    pub highlights: Vec<std::ops::Range<usize>>,
    /// The hit's place (from 1) among the word matches, in a hybrid search.
    pub lexical_rank: Option<usize>,
    /// Its place among the nearest in meaning, in a hybrid search.
    pub semantic_rank: Option<usize>,
    /// Its cosine similarity to the query, when the meaning side saw it.
    pub similarity: Option<f32>,
}

/// Counts from a full rebuild.
#[derive(Clone, Debug, Default)]
pub struct RebuildStats {
    pub files: usize,
    pub entries: usize,
    pub versions: usize,
    pub warnings: Vec<Warning>,
    /// Entries recorded after the `ahead_after` the rebuild was given.
    pub ahead: Vec<Ahead>,
    /// Entries held apart, recorded more than a century after the clock.
    pub held: Vec<Ahead>,
}

/// An open index generation.
pub struct Index {
    conn: Connection,
    /// Where this generation's full-text index lives (`index-<id>.tantivy/`).
    fulltext_dir: std::path::PathBuf,
    /// The full-text index, opened on first use and kept for later searches.
    fulltext: std::sync::OnceLock<fulltext::FullText>,
    /// No marker of another boot was found beside it ([`fulltext::nosync::unmarked`]).
    unmarked: std::sync::atomic::AtomicBool,
}

/// The fingerprint row of one file.
#[derive(Clone, Debug)]
struct FileRow {
    size: u64,
    mtime_ns: i64,
    entries: usize,
    digest: [u8; 32],
}

fn configure(conn: &Connection) -> rusqlite::Result<()> {
    conn.busy_timeout(BUSY_TIMEOUT)?;
    persist_wal(conn);
    // With the log kept, the checkpoint a closing connection makes must also empty it:
    // the next process cannot tell copied frames from new ones and reads them all (a
    // store then read megabytes of the log once a few hundred writes had gone by).
    // `journal_size_limit` 0 makes that checkpoint truncate the log to nothing.
    conn.execute_batch(
        "PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = OFF; PRAGMA journal_size_limit = 0;",
    )
}

/// Keeps the `-wal` and `-shm` files when the last connection closes. Every mem7
/// command is a short process; without this each one would create, size and delete both
/// files again, which costs more than the query it runs.
fn persist_wal(conn: &Connection) {
    let mut on: std::os::raw::c_int = 1;
    // SAFETY: the handle is valid for the life of `conn`, "main" is a NUL-terminated
    // schema name, and PERSIST_WAL reads and writes one int through the pointer.
    unsafe {
        rusqlite::ffi::sqlite3_file_control(
            conn.handle(),
            c"main".as_ptr(),
            rusqlite::ffi::SQLITE_FCNTL_PERSIST_WAL,
            (&mut on as *mut std::os::raw::c_int).cast(),
        );
    }
}

/// Whether an error means the index database itself is unusable (corrupt, not a
/// database, missing tables), so that rebuilding it is the cure.
pub fn is_damage(e: &Error) -> bool {
    match e {
        Error::Index(inner) => !is_contention(inner),
        _ => false,
    }
}

/// Whether an SQLite error is contention rather than damage.
fn is_contention(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

/// The running digest over a file's entries: `d' = blake3(d ‖ entry hash)`.
///
/// The entry's byte offset is part of it: text added before an entry shifts its line,
/// which the index records, so that must not look like an append.
fn digest_step(digest: [u8; 32], entry: ChainHash, start: u64) -> [u8; 32] {
    let mut h = blake3::Hasher::new();
    h.update(&digest);
    h.update(&entry.0);
    h.update(&start.to_le_bytes());
    *h.finalize().as_bytes()
}

impl Index {
    /// Opens the current generation, if there is a usable one.
    ///
    /// `Ok(None)` means there is nothing usable to open (no index yet, another schema, a
    /// damaged file): the caller rebuilds. Contention ("database is locked" after the busy
    /// timeout) is an error, never a reason to rebuild.
    pub fn open(dir: &Path) -> Result<Option<Index>> {
        let Ok(name) = fs::read_to_string(dir.join(CURRENT)) else {
            return Ok(None);
        };
        let name = name.trim();
        if name.is_empty() || name.contains('/') || name.contains("..") {
            return Ok(None);
        }
        let path = dir.join(name);
        if !path.is_file() {
            return Ok(None);
        }
        let opened = Connection::open_with_flags(
            &path,
            rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .and_then(|conn| configure(&conn).map(|_| conn))
        .and_then(|conn| {
            let index = Index {
                conn,
                fulltext_dir: fulltext_dir(&path),
                fulltext: std::sync::OnceLock::new(),
                unmarked: Default::default(),
            };
            index.meta("schema").map(|v| (index, v))
        });
        match opened {
            Ok((index, Some(v))) if v == SCHEMA_VERSION.to_string() => Ok(Some(index)),
            Ok(_) => Ok(None),
            Err(e) if is_contention(&e) => Err(Error::Index(e)),
            Err(_) => Ok(None),
        }
    }

    fn meta(&self, k: &str) -> rusqlite::Result<Option<String>> {
        self.conn
            .query_row("SELECT v FROM meta WHERE k = ?1", [k], |r| r.get(0))
            .optional()
    }

    fn files(&self) -> Result<HashMap<String, FileRow>> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT name, size, mtime_ns, entries, digest FROM files")?;
        let rows = stmt.query_map([], |r| {
            let digest: Vec<u8> = r.get(4)?;
            let mut d = [0u8; 32];
            if digest.len() == 32 {
                d.copy_from_slice(&digest);
            }
            Ok((
                r.get::<_, String>(0)?,
                FileRow {
                    size: r.get::<_, i64>(1)? as u64,
                    mtime_ns: r.get(2)?,
                    entries: r.get::<_, i64>(3)? as usize,
                    digest: d,
                },
            ))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Whether the index reflects exactly these files (by size and mtime).
    pub fn is_fresh(&self, scan: &[FileStat]) -> Result<bool> {
        // The stamp of the fingerprints the index holds: one value for every file, so
        // that a start-up with nothing changed reads one row, not one per file.
        if catch_up::stored_stamp(&self.conn)? == Some(crate::store::ScanStamp::of(scan)) {
            return Ok(true);
        }
        let files = self.files()?;
        Ok(files.len() == scan.len()
            && scan.iter().all(|s| {
                files
                    .get(&s.name)
                    .is_some_and(|f| f.size == s.size && f.mtime_ns == s.mtime_ns)
            }))
    }

    /// Moves everything in the write-ahead log into the database and truncates the log.
    /// After a large write (an import, a big catch-up) the log holds tens of megabytes,
    /// which every later process would otherwise read through page by page until SQLite
    /// checkpointed on its own; this makes the next command as fast as after a rebuild.
    /// Contention (a reader holding an old snapshot) only leaves part of the log for
    /// later, so it is not an error.
    pub fn checkpoint(&self) -> Result<()> {
        match self
            .conn
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        {
            Ok(()) => Ok(()),
            Err(e) if is_contention(&e) => Ok(()),
            Err(e) => Err(Error::Index(e)),
        }
    }

    /// The latest transaction time applied, if any.
    pub fn last_tx(&self) -> Result<Option<TxTime>> {
        Ok(self
            .meta("last_tx")?
            .and_then(|v| v.parse().ok())
            .map(TxTime::from_micros))
    }

    /// The hash the next entry links to (`prev`).
    pub fn head(&self) -> Result<ChainHash> {
        Ok(self
            .meta("head")?
            .and_then(|h| ChainHash::from_hex(&h))
            .unwrap_or(ChainHash::GENESIS))
    }

    /// Problems recorded by the last fold.
    pub fn warnings(&self) -> Result<Vec<Warning>> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT file, line, message FROM problems ORDER BY file, line")?;
        let rows = stmt.query_map([], |r| {
            Ok(Warning {
                file: r.get(0)?,
                line: r.get(1)?,
                message: r.get(2)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The size and line-feed count the index has recorded for `file`.
    pub fn file_state(&self, file: &str) -> Result<Option<(u64, usize)>> {
        Ok(self
            .conn
            .query_row(
                "SELECT size, newlines FROM files WHERE name = ?1",
                [file],
                |r| Ok((r.get::<_, i64>(0)? as u64, r.get::<_, i64>(1)? as usize)),
            )
            .optional()?)
    }

    /// Files that end in an incomplete entry: (file, byte offset where it begins).
    pub fn torn_tails(&self) -> Result<Vec<(String, u64)>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT name, torn_at FROM files WHERE torn_at IS NOT NULL ORDER BY name",
        )?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get::<_, i64>(1)? as u64)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The line of the entry with `hash` in `file`, if the index holds a version from it.
    pub fn line_of(&self, file: &str, hash: &str) -> Result<Option<u32>> {
        Ok(self
            .conn
            .query_row(
                "SELECT line FROM versions WHERE file = ?1 AND hash = ?2 LIMIT 1",
                [file, hash],
                |r| r.get(0),
            )
            .optional()?)
    }

    /// Whether this is still the generation `CURRENT` names (another process may have
    /// rebuilt the index since this one was opened).
    pub fn is_current(&self, dir: &Path) -> bool {
        let current = fs::read_to_string(dir.join(CURRENT)).unwrap_or_default();
        self.fulltext_dir
            .with_extension("sqlite")
            .file_name()
            .and_then(|n| n.to_str())
            == Some(current.trim())
    }

    /// Whether the generation's full-text index was built (it lags behind, at most).
    pub fn fulltext_built(&self) -> bool {
        // An index a crash of the machine may have torn is as good as none.
        self.fulltext_dir.join("meta.json").is_file()
            && fulltext::nosync::unmarked(&self.fulltext_dir, &self.unmarked)
    }

    /// Merges the small segments a server's commits left, on a quiet moment (callers
    /// hold the workspace lock); whether it did.
    pub fn merge_fulltext(&self) -> Result<bool> {
        let merged = match fulltext::FullText::open(&self.fulltext_dir) {
            Some(ft) => ft.merge_small()?,
            None => false,
        };
        fulltext::nosync::sync_all(&self.fulltext_dir)
            .map_err(|e| Error::io(&self.fulltext_dir, e))?;
        Ok(merged)
    }
}

const INSERT_VERSION: &str = "INSERT INTO versions
    (key, value, tags, agent, valid_from, valid_to, tx_from, tx_to, file, line, hash, tier)
    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)";

/// A tier as the index stores it: NULL when the entry names none.
pub(crate) fn tier_code(tier: Option<Tier>) -> Option<i64> {
    tier.map(|t| match t {
        Tier::Inferred => 1,
        Tier::Asserted => 2,
    })
}

/// The tier of a stored code (see [`tier_code`]).
pub(crate) fn tier_from_code(code: Option<i64>) -> Option<Tier> {
    match code? {
        1 => Some(Tier::Inferred),
        2 => Some(Tier::Asserted),
        _ => None,
    }
}

fn insert_version(
    stmt: &mut rusqlite::CachedStatement<'_>,
    v: &Version,
) -> rusqlite::Result<usize> {
    stmt.execute(params![
        v.key,
        v.value,
        crate::core::read_rule::stored_tags(&v.tags),
        v.agent,
        v.valid_from.micros(),
        v.valid_to.micros(),
        v.tx_from.micros(),
        v.tx_to.micros(),
        v.source.file,
        v.source.line,
        v.source.hash,
        tier_code(v.tier),
    ])
}

/// Files `key` under its words' stems (`key_words`).
fn insert_key_words(conn: &Connection, key: &str) -> rusqlite::Result<()> {
    let mut stmt =
        conn.prepare_cached("INSERT OR IGNORE INTO key_words (word, key) VALUES (?1, ?2)")?;
    for word in crate::text::drift::KeyWords::of(key).stems() {
        stmt.execute(params![word, key])?;
    }
    Ok(())
}

/// Files every key of a new index under its words' stems.
fn fill_key_words(conn: &Connection) -> rusqlite::Result<()> {
    let keys: Vec<String> = conn
        .prepare("SELECT key FROM key_slots")?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    let tx = conn.unchecked_transaction()?;
    for key in &keys {
        insert_key_words(&tx, key)?;
    }
    tx.commit()
}

fn row_version(r: &rusqlite::Row<'_>) -> rusqlite::Result<Version> {
    Ok(Version {
        key: r.get("key")?,
        value: r.get("value")?,
        tags: crate::core::read_rule::tags_of_stored(&r.get::<_, String>("tags")?),
        agent: r.get("agent")?,
        valid_from: ValidTime::from_micros(r.get("valid_from")?),
        valid_to: ValidTime::from_micros(r.get("valid_to")?),
        tx_from: TxTime::from_micros(r.get("tx_from")?),
        tx_to: TxTime::from_micros(r.get("tx_to")?),
        tier: tier_from_code(r.get("tier")?),
        source: Source {
            file: r.get("file")?,
            line: r.get("line")?,
            hash: r.get("hash")?,
        },
    })
}

pub(super) fn set_meta(tx: &Transaction<'_>, k: &str, v: &str) -> rusqlite::Result<()> {
    tx.execute("INSERT OR REPLACE INTO meta (k, v) VALUES (?1, ?2)", [k, v])?;
    Ok(())
}

fn set_last(tx: &Transaction<'_>, ev: &Event) -> rusqlite::Result<()> {
    set_meta(tx, "last_tx", &ev.tx.micros().to_string())?;
    set_meta(tx, "last_content", &ev.content.to_hex())
}

fn insert_file_row(
    tx: &Transaction<'_>,
    file: &FileStat,
    parsed: &ParsedFile,
) -> rusqlite::Result<()> {
    let head = parsed
        .entries
        .last()
        .map(entry_head)
        .unwrap_or(ChainHash::GENESIS);
    tx.execute(
        "INSERT OR REPLACE INTO files (name, size, mtime_ns, entries, digest, head, newlines, torn_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        params![
            file.name,
            file.size as i64,
            file.mtime_ns,
            parsed.entries.len() as i64,
            file_digest(parsed, parsed.entries.len()).to_vec(),
            head.to_hex(),
            parsed.newlines as i64,
            parsed.torn_tail.map(|t| t as i64)
        ],
    )?;
    Ok(())
}

/// The chain head: the last entry of the last file (by name) that has entries.
fn refresh_head(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    let head: Option<String> = tx
        .query_row(
            "SELECT head FROM files WHERE entries > 0 ORDER BY name DESC LIMIT 1",
            [],
            |r| r.get(0),
        )
        .optional()?;
    set_meta(
        tx,
        "head",
        &head.unwrap_or_else(|| ChainHash::GENESIS.to_hex()),
    )
}

fn insert_problems(tx: &Transaction<'_>, warnings: &[Warning]) -> rusqlite::Result<()> {
    let mut stmt =
        tx.prepare_cached("INSERT INTO problems (file, line, message) VALUES (?1, ?2, ?3)")?;
    for w in warnings {
        stmt.execute(params![w.file, w.line, w.message])?;
    }
    Ok(())
}

/// The full-text index directory of the generation whose SQLite file is `db`.
fn fulltext_dir(db: &Path) -> std::path::PathBuf {
    db.with_extension("tantivy")
}
