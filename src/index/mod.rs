//! The derived index: a SQLite database of every version, rebuilt from the markdown
//! whenever it is missing, old or disagrees with the files, and caught up incrementally
//! when entries were only appended.
//!
//! Generations: each full rebuild writes a fresh `index-<id>.sqlite` and then swaps the
//! one-line `CURRENT` file to name it, so readers see the old index or the new one,
//! never half of one. The index never writes the workspace.

pub mod embeddings;
pub mod fulltext;
mod schema;
mod stem;
pub mod vectors;

use std::collections::HashMap;
use std::fs;
use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, Transaction, params};

use crate::core::chain::{ChainHash, ChainKey};
use crate::core::change::{self, Scope};
use crate::core::time::{TxTime, ValidTime};
use crate::core::{Event, Fold, Source, Version, event_order};
use crate::error::{Error, Result};
use crate::format::{self, ParsedFile, ProblemKind};
use crate::store::{FileStat, Workspace};

pub use schema::SCHEMA_VERSION;

const CURRENT: &str = "CURRENT";
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// A problem found while reading the workspace, located in a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning {
    pub file: String,
    pub line: u32,
    pub message: String,
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}", self.file, self.line, self.message)
    }
}

/// What bringing the index up to date did.
#[derive(Clone, Debug, Default)]
pub struct SyncReport {
    /// Set when a full rebuild ran, with the reason.
    pub rebuilt: Option<String>,
    /// Entries applied incrementally.
    pub applied: usize,
    /// Problems in the files that were read.
    pub warnings: Vec<Warning>,
    /// Torn tails moved aside: (memory file, where its bytes went).
    pub set_aside: Vec<(String, String)>,
    /// Entries applied that were recorded ahead of the caller's clock (see
    /// `core::time::ahead_threshold`), in the order applied.
    pub ahead: Vec<Ahead>,
}

/// An entry recorded ahead of this machine's clock (pulled from a machine whose clock
/// runs fast, or written with a `MEM7_NOW` in the future).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ahead {
    pub file: String,
    pub line: u32,
    pub recorded: TxTime,
}

impl Ahead {
    /// "memory/…:3 was recorded 2026-12-05T00:00:00Z, 3 days 13 hours ahead of this
    /// machine's clock"
    pub fn describe(&self, now: TxTime) -> String {
        format!(
            "{}:{} was recorded {}, {} ahead of this machine's clock ({now})",
            self.file,
            self.line,
            self.recorded,
            span_text(self.recorded.micros().saturating_sub(now.micros()))
        )
    }
}

/// What to tell a person about entries recorded ahead of `now`: one line each, at most
/// `AHEAD_LINES` of them, then how many more (a pull from a machine far ahead can bring
/// hundreds).
pub fn describe_ahead(ahead: &[Ahead], now: TxTime) -> Vec<String> {
    const AHEAD_LINES: usize = 5;
    let mut lines: Vec<String> = ahead
        .iter()
        .take(AHEAD_LINES)
        .map(|a| a.describe(now))
        .collect();
    if ahead.len() > AHEAD_LINES {
        lines.push(format!(
            "{} more entries were recorded ahead of this machine's clock; `mem7 verify` lists them all",
            ahead.len() - AHEAD_LINES
        ));
    }
    lines
}

/// A duration in words, to the two largest units ("3 days 13 hours", "7 minutes").
pub fn span_text(micros: i64) -> String {
    let secs = (micros / 1_000_000).max(0);
    let units = [
        ("day", 86_400),
        ("hour", 3_600),
        ("minute", 60),
        ("second", 1),
    ];
    let mut parts = Vec::new();
    let mut rest = secs;
    for (name, size) in units {
        let n = rest / size;
        if n > 0 && parts.len() < 2 {
            parts.push(format!("{n} {name}{}", if n == 1 { "" } else { "s" }));
            rest -= n * size;
        } else if !parts.is_empty() {
            break;
        }
    }
    if parts.is_empty() {
        "less than a second".to_string()
    } else {
        parts.join(" ")
    }
}

/// What `verify --index` found.
#[derive(Clone, Debug, Default)]
pub struct IndexCheck {
    /// Versions the markdown implies that the index lacks, and the other way round.
    pub missing: Vec<Version>,
    pub extra: Vec<Version>,
    /// Files whose recorded fingerprint differs from the file (name, what differs).
    pub files: Vec<(String, String)>,
    /// The chain head the index recorded, and the markdown's.
    pub head: Option<(ChainHash, ChainHash)>,
    /// How many versions the markdown implies.
    pub expected_versions: usize,
}

impl IndexCheck {
    /// Whether the index matches the markdown.
    pub fn matches(&self) -> bool {
        self.missing.is_empty()
            && self.extra.is_empty()
            && self.files.is_empty()
            && self.head.is_none()
    }
}

/// Where a rebuild is.
#[derive(Clone, Copy, Debug)]
pub enum Progress {
    /// Reading and parsing memory files.
    Reading { done: u64, total: u64 },
    /// Folding entries into versions (and feeding the full-text index).
    Folding { done: u64, total: u64 },
    /// Building SQLite indexes and committing the full-text index.
    Finishing,
}

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
}

/// An open index generation.
pub struct Index {
    conn: Connection,
    /// Where this generation's full-text index lives (`index-<id>.tantivy/`).
    fulltext_dir: std::path::PathBuf,
    /// The full-text index, opened on first use and kept for later searches.
    fulltext: std::sync::OnceLock<fulltext::FullText>,
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
    conn.execute_batch("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = OFF;")
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

fn tags_text(tags: &[String]) -> String {
    if tags.is_empty() {
        return String::new();
    }
    let mut s = String::from("\u{1f}");
    for t in tags {
        s.push_str(&t.replace('\u{1f}', ""));
        s.push('\u{1f}');
    }
    s
}

fn tags_from_text(text: &str) -> Vec<String> {
    text.split('\u{1f}')
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// Reads and parses a memory file; a git conflict stops everything.
///
/// The index always hashes with the plain key: its per-file digests only detect edits,
/// and must not depend on whether a process has `MEM7_CHAIN_KEY` (only `verify` does).
pub fn load_file(ws: &Workspace, name: &str) -> Result<ParsedFile> {
    let text = ws.read(name)?;
    let parsed = format::parse_file(&text, &ChainKey::Plain);
    if let Some(p) = parsed
        .problems
        .iter()
        .find(|p| p.kind == ProblemKind::Conflict)
    {
        return Err(Error::Conflict {
            file: name.to_string(),
            line: p.line,
        });
    }
    Ok(parsed)
}

/// Turns a parsed file into events and warnings.
fn file_events(
    name: &str,
    parsed: &ParsedFile,
    skip: usize,
    events: &mut Vec<Event>,
    warnings: &mut Vec<Warning>,
) {
    for p in &parsed.problems {
        // Foreign text changes no memory; `verify` reports it, and only verify knows
        // which runs a seal accepted, so the index does not warn about them for ever.
        if matches!(p.kind, ProblemKind::Foreign(_)) {
            continue;
        }
        warnings.push(Warning {
            file: name.to_string(),
            line: p.line,
            message: p.message.clone(),
        });
    }
    for entry in parsed.entries.iter().skip(skip) {
        match entry.to_event(name) {
            Ok(Some(ev)) => events.push(ev),
            Ok(None) => {}
            Err(message) => warnings.push(Warning {
                file: name.to_string(),
                line: entry.line,
                message: format!("entry `{}` skipped: {message}", entry.key),
            }),
        }
    }
}

fn file_digest(parsed: &ParsedFile, upto: usize) -> [u8; 32] {
    parsed.entries[..upto]
        .iter()
        .fold([0u8; 32], |d, e| digest_step(d, e.computed, e.start as u64))
}

/// The hash a new entry links to after this file's last entry.
fn entry_head(entry: &format::ParsedEntry) -> ChainHash {
    entry
        .fields
        .hash
        .as_deref()
        .and_then(|h| ChainHash::from_hex(h.trim()))
        .unwrap_or(entry.computed)
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

    /// Full rebuild into a fresh generation, then an atomic swap.
    pub fn rebuild(ws: &Workspace) -> Result<(Index, RebuildStats)> {
        Self::rebuild_with_progress(ws, &mut |_| {}, None)
    }

    /// [`Index::rebuild`], reporting progress (for a progress bar).
    /// Entries recorded after `ahead_after` are listed in the stats.
    pub fn rebuild_with_progress(
        ws: &Workspace,
        progress: &mut dyn FnMut(Progress),
        ahead_after: Option<TxTime>,
    ) -> Result<(Index, RebuildStats)> {
        let dir = ws.index_dir()?;
        let scan = ws.scan()?;
        let name = format!(
            "index-{}-{}.sqlite",
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0),
            std::process::id()
        );
        let path = dir.join(&name);
        // Stream file by file (memory bounded by one day's file plus what is believed);
        // when files are out of order (a hand-moved entry), fold them all sorted instead.
        let (conn, mut stats) =
            match build_generation(ws, &scan, &path, progress, true, ahead_after)? {
                Some(built) => built,
                None => build_generation(ws, &scan, &path, progress, false, ahead_after)?
                    .ok_or_else(|| Error::input("the rebuild gave up", "report this as a bug"))?,
            };
        conn.execute_batch("PRAGMA journal_mode = WAL;")?;
        drop(conn);
        if let Ok(f) = fs::File::open(&path) {
            f.sync_all().map_err(|e| Error::io(&path, e))?;
        }
        // The vector files of the generation being replaced go with it; links to them
        // are kept for the new one (checked against it once it is open, below).
        vectors::carry::link(&dir, &fulltext_dir(&path));
        swap_current(&dir, &name)?;
        // A Go mem7 index's vectors are carried into the (rebuild-proof) cache.
        if let Some(legacy) = embeddings::legacy_index_for(ws.root()) {
            match embeddings::EmbeddingCache::open(&dir).and_then(|c| c.import_legacy(&legacy)) {
                Ok(_) => {}
                Err(e) => stats.warnings.push(Warning {
                    file: legacy.display().to_string(),
                    line: 0,
                    message: format!("could not carry over the Go mem7 embeddings: {e}"),
                }),
            }
        }
        let index = Index::open(&dir)?.ok_or_else(|| {
            Error::input(
                format!(
                    "the rebuilt index at {} could not be opened",
                    path.display()
                ),
                "check that the workspace's .mem7/ directory is writable",
            )
        })?;
        vectors::carry::settle(&index);
        Ok((index, stats))
    }

    /// Applies appended entries; `Ok(Err(reason))` when only a rebuild can help. Entries
    /// recorded after `ahead_after` are listed in the report.
    pub fn catch_up(
        &mut self,
        ws: &Workspace,
        scan: &[FileStat],
        ahead_after: Option<TxTime>,
    ) -> Result<std::result::Result<SyncReport, String>> {
        let stored = self.files()?;
        if let Some(gone) = stored.keys().find(|n| !scan.iter().any(|s| &s.name == *n)) {
            return Ok(Err(format!("{gone} was removed")));
        }
        let mut report = SyncReport::default();
        let mut events = Vec::new();
        let mut changed = Vec::new();
        for file in scan {
            let row = stored.get(&file.name);
            if row.is_some_and(|r| r.size == file.size && r.mtime_ns == file.mtime_ns) {
                continue;
            }
            let parsed = load_file(ws, &file.name)?;
            let known = row.map_or(0, |r| r.entries);
            if parsed.entries.len() < known {
                return Ok(Err(format!("{} lost entries", file.name)));
            }
            if let Some(r) = row
                && file_digest(&parsed, known) != r.digest
            {
                return Ok(Err(format!("{} was edited", file.name)));
            }
            // Whether a Go mem7 fact shares its key with another one is known only from
            // all of them: a rebuild reads them all (Go workspaces are small).
            if parsed.entries[known..].iter().any(|e| e.legacy) {
                return Ok(Err(format!("{} has new Go mem7 entries", file.name)));
            }
            file_events(
                &file.name,
                &parsed,
                known,
                &mut events,
                &mut report.warnings,
            );
            changed.push((file.clone(), parsed));
        }
        events.sort_by(event_order);
        // The fold's order is (recorded, content): an entry that sorts before the last
        // one applied (a merge brought in entries recorded earlier, or at the same
        // instant with a smaller hash) can only be placed by folding again.
        if let (Some(first), Some(last_tx)) = (events.first(), self.last_tx()?) {
            let last_content = self
                .meta("last_content")?
                .and_then(|h| ChainHash::from_hex(&h))
                .unwrap_or(ChainHash([0xff; 32]));
            if (first.tx, first.content.0) <= (last_tx, last_content.0) {
                return Ok(Err(format!(
                    "{}:{} sorts before entries already indexed (a merge?)",
                    first.source.file, first.source.line
                )));
            }
        }
        let tx = self.conn.transaction()?;
        for ev in &events {
            if let Some(w) = apply_event(&tx, ev)? {
                report.warnings.push(w);
            }
            note_ahead(ev, ahead_after, &mut report.ahead);
            report.applied += 1;
        }
        if let Some(last) = events.last() {
            set_last(&tx, last)?;
        }
        for (file, parsed) in &changed {
            tx.execute("DELETE FROM problems WHERE file = ?1", [&file.name])?;
            insert_file_row(&tx, file, parsed)?;
        }
        refresh_head(&tx)?;
        insert_problems(&tx, &report.warnings)?;
        tx.commit()?;
        Ok(Ok(report))
    }

    /// Records an entry this process just appended: applies its event and advances the
    /// file's fingerprint without re-reading the file.
    pub fn record_append(
        &mut self,
        event: &Event,
        file: &FileStat,
        entry_hash: ChainHash,
        digest_hash: ChainHash,
        entry_start: u64,
        added_newlines: usize,
    ) -> Result<Option<Warning>> {
        let tx = self.conn.transaction()?;
        let warning = apply_event(&tx, event)?;
        set_last(&tx, event)?;
        let row: Option<(i64, Vec<u8>, i64)> = tx
            .query_row(
                "SELECT entries, digest, newlines FROM files WHERE name = ?1",
                [&file.name],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .optional()?;
        let (entries, digest, newlines) = match row {
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
        tx.commit()?;
        Ok(warning)
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

    /// Whether the full-text index lags behind the version table.
    pub fn fulltext_pending(&self) -> Result<bool> {
        if !self.fulltext_dir.join("meta.json").is_file() {
            return Ok(true);
        }
        let max: i64 = self
            .meta("fulltext_max_id")?
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        let pending: bool = self.conn.query_row(
            "SELECT EXISTS (SELECT 1 FROM versions WHERE id > ?1) OR EXISTS (SELECT 1 FROM fulltext_dirty)",
            [max],
            |r| r.get(0),
        )?;
        Ok(pending)
    }

    /// Brings the full-text index up to date with the version table (callers hold the
    /// workspace lock: tantivy takes one writer at a time). Rebuilds it when missing.
    pub fn sync_fulltext(&mut self) -> Result<usize> {
        let Some(ft) = fulltext::FullText::open(&self.fulltext_dir) else {
            build_fulltext(&self.conn, &self.fulltext_dir)?;
            return Ok(0);
        };
        let max: i64 = self
            .meta("fulltext_max_id")?
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
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
        if changed.is_empty() {
            return Ok(0);
        }
        let mut writer = ft.writer()?;
        for (id, v) in &changed {
            ft.delete(&writer, *id as u64);
            ft.add(&writer, *id as u64, v)?;
        }
        ft.commit(&mut writer)?;
        let new_max = changed
            .iter()
            .map(|(id, _)| *id)
            .max()
            .unwrap_or(max)
            .max(max);
        let tx = self.conn.transaction()?;
        set_meta(&tx, "fulltext_max_id", &new_max.to_string())?;
        tx.execute("DELETE FROM fulltext_dirty WHERE id <= ?1", [new_max])?;
        tx.commit()?;
        Ok(changed.len())
    }

    /// Runs a full-text search (the full-text index must be current).
    pub fn search(&self, req: &fulltext::SearchRequest) -> Result<Vec<SearchHit>> {
        let (hits, snippets) = self.fulltext()?.search(req)?;
        let mut out = Vec::with_capacity(hits.len());
        for hit in hits {
            let Some(version) = self.version(hit.id)? else {
                continue;
            };
            let snippet = snippets.snippet(&version.value);
            out.push(SearchHit {
                id: hit.id,
                score: hit.score,
                snippet: snippet.fragment().to_string(),
                highlights: snippet.highlighted().to_vec(),
                lexical_rank: None,
                semantic_rank: None,
                similarity: None,
                version,
            });
        }
        Ok(out)
    }

    /// Meaning search: the versions passing `req`'s filters nearest `query`, best first,
    /// scored by cosine similarity. The snippet is the value's beginning.
    pub fn nearest(
        &self,
        req: &fulltext::SearchRequest,
        vectors: std::sync::Arc<vectors::Vectors>,
        query: std::sync::Arc<vectors::Query>,
    ) -> Result<Vec<SearchHit>> {
        let hits = self.fulltext()?.nearest(req, vectors, query)?;
        let mut out = Vec::with_capacity(hits.len());
        for hit in hits {
            let Some(version) = self.version(hit.id)? else {
                continue;
            };
            let mut end = version.value.len().min(160);
            while !version.value.is_char_boundary(end) {
                end -= 1;
            }
            out.push(SearchHit {
                id: hit.id,
                score: hit.score,
                snippet: version.value[..end].to_string(),
                highlights: Vec::new(),
                lexical_rank: None,
                semantic_rank: None,
                similarity: Some(hit.score),
                version,
            });
        }
        Ok(out)
    }

    fn version(&self, id: u64) -> Result<Option<Version>> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT * FROM versions WHERE id = ?1")?;
        let mut rows = stmt.query([id as i64])?;
        Ok(match rows.next()? {
            Some(row) => Some(row_version(row)?),
            None => None,
        })
    }

    /// The generation's identity (its full-text directory, unique per generation).
    pub fn generation(&self) -> &Path {
        &self.fulltext_dir
    }

    /// The id and embedded-text hash of every version with an id above `after`.
    pub fn texts_after(&self, after: u64) -> Result<Vec<(u64, [u8; 32])>> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT id, key, value FROM versions WHERE id > ?1 ORDER BY id")?;
        let mut rows = stmt.query([after as i64])?;
        let mut out = Vec::new();
        while let Some(row) = rows.next()? {
            let id: i64 = row.get(0)?;
            let key = row.get_ref(1)?.as_str()?;
            let value = row.get_ref(2)?.as_str()?;
            out.push((id as u64, vectors::text_hash(key, value)));
        }
        Ok(out)
    }

    /// Calls `f` with the key and value of every version (repeats included: sorting them
    /// out in SQL costs more than hashing them twice).
    pub fn for_each_text(&self, f: &mut dyn FnMut(&str, &str)) -> Result<()> {
        let mut stmt = self.conn.prepare("SELECT key, value FROM versions")?;
        let mut rows = stmt.query([])?;
        while let Some(row) = rows.next()? {
            f(row.get_ref(0)?.as_str()?, row.get_ref(1)?.as_str()?);
        }
        Ok(())
    }

    fn fulltext(&self) -> Result<&fulltext::FullText> {
        if let Some(ft) = self.fulltext.get() {
            return Ok(ft);
        }
        let ft = fulltext::FullText::open(&self.fulltext_dir)
            .ok_or_else(|| Error::input("the full-text index is missing", "run `mem7 reindex`"))?;
        Ok(self.fulltext.get_or_init(|| ft))
    }

    /// Versions in the order of one clock: `valid` lists what is believed now by when
    /// it held; `tx` lists every version by when mem7 recorded it.
    pub fn timeline(
        &self,
        by_tx: bool,
        since: Option<i64>,
        until: Option<i64>,
        key_prefix: Option<&str>,
    ) -> Result<Vec<Version>> {
        self.timeline_window(by_tx, since, until, key_prefix, None)
    }

    /// [`Index::timeline`], only the rows in `window` (offset, limit): a page costs its
    /// rows, not the whole timeline.
    pub fn timeline_window(
        &self,
        by_tx: bool,
        since: Option<i64>,
        until: Option<i64>,
        key_prefix: Option<&str>,
        window: Option<(usize, usize)>,
    ) -> Result<Vec<Version>> {
        let col = if by_tx { "tx_from" } else { "valid_from" };
        let mut sql = format!("SELECT * FROM versions WHERE {col} >= ?1 AND {col} < ?2");
        if !by_tx {
            sql.push_str(&format!(" AND tx_to = {}", i64::MAX));
        }
        let mut args: Vec<rusqlite::types::Value> = vec![
            since.unwrap_or(i64::MIN).into(),
            until.unwrap_or(i64::MAX).into(),
        ];
        if let Some(p) = key_prefix.filter(|p| !p.is_empty()) {
            args.push(p.to_string().into());
            sql.push_str(" AND key >= ?3 AND key < ?3 || char(1114111)");
        }
        sql.push_str(&format!(" ORDER BY {col}, key, id"));
        push_window(&mut sql, window);
        self.query(&sql, rusqlite::params_from_iter(args))
    }

    /// Compares what the index holds with what a fold of the markdown gives: every
    /// version, each file's fingerprint, and the chain head.
    pub fn check_against(&self, ws: &Workspace) -> Result<IndexCheck> {
        let scan = ws.scan()?;
        let mut events = Vec::new();
        let mut warnings = Vec::new();
        let mut expected_files = HashMap::new();
        let mut head = ChainHash::GENESIS;
        for file in &scan {
            let parsed = load_file(ws, &file.name)?;
            file_events(&file.name, &parsed, 0, &mut events, &mut warnings);
            if let Some(last) = parsed.entries.last() {
                head = entry_head(last);
            }
            expected_files.insert(
                file.name.clone(),
                (
                    file.size,
                    parsed.entries.len(),
                    file_digest(&parsed, parsed.entries.len()),
                ),
            );
        }
        events.sort_by(event_order);
        let (expected, _) = crate::core::fold::fold_all(&events);
        let order = |v: &Version| {
            (
                v.key.clone(),
                v.tx_from,
                v.valid_from,
                v.valid_to,
                v.tx_to,
                v.source.clone(),
                v.value.clone(),
                v.tags.clone(),
                v.agent.clone(),
            )
        };
        let mut want: Vec<_> = expected.iter().map(order).collect();
        let mut have: Vec<_> = self.all_versions()?.iter().map(order).collect();
        want.sort();
        have.sort();
        let mut check = IndexCheck {
            expected_versions: want.len(),
            ..IndexCheck::default()
        };
        let (mut i, mut j) = (0, 0);
        let to_version = |t: &(
            String,
            TxTime,
            ValidTime,
            ValidTime,
            TxTime,
            Source,
            String,
            Vec<String>,
            String,
        )| Version {
            key: t.0.clone(),
            tx_from: t.1,
            valid_from: t.2,
            valid_to: t.3,
            tx_to: t.4,
            source: t.5.clone(),
            value: t.6.clone(),
            tags: t.7.clone(),
            agent: t.8.clone(),
        };
        while i < want.len() || j < have.len() {
            match (want.get(i), have.get(j)) {
                (Some(a), Some(b)) if a == b => {
                    i += 1;
                    j += 1;
                }
                (Some(a), Some(b)) if a < b => {
                    check.missing.push(to_version(a));
                    i += 1;
                }
                (Some(_), Some(b)) | (None, Some(b)) => {
                    check.extra.push(to_version(b));
                    j += 1;
                }
                (Some(a), None) => {
                    check.missing.push(to_version(a));
                    i += 1;
                }
                (None, None) => break,
            }
        }
        let rows = self.files()?;
        for (name, (size, entries, digest)) in &expected_files {
            match rows.get(name) {
                None => check.files.push((name.clone(), "not in the index".into())),
                Some(r) if r.size != *size => check.files.push((
                    name.clone(),
                    format!("size {} in the index, {size} on disk", r.size),
                )),
                Some(r) if r.entries != *entries || r.digest != *digest => check.files.push((
                    name.clone(),
                    format!(
                        "{} entries in the index, {entries} on disk, or different content",
                        r.entries
                    ),
                )),
                Some(_) => {}
            }
        }
        for name in rows.keys().filter(|n| !expected_files.contains_key(*n)) {
            check
                .files
                .push((name.clone(), "in the index but not on disk".into()));
        }
        check.files.sort();
        let recorded = self.head()?;
        if recorded != head {
            check.head = Some((recorded, head));
        }
        Ok(check)
    }

    /// Every key that has a version, believed or not (sorted).
    pub fn all_keys(&self) -> Result<Vec<String>> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT DISTINCT key FROM versions ORDER BY key")?;
        let rows = stmt.query_map([], |r| r.get(0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Versions of `key` believed now (transaction time still open).
    pub fn believed(&self, key: &str) -> Result<Vec<Version>> {
        self.query(
            "SELECT * FROM versions WHERE key = ?1 AND tx_to = ?2 ORDER BY valid_from",
            params![key, i64::MAX],
        )
    }

    /// Every version believed now, of every key (sorted by key, then valid_from).
    pub fn all_believed(&self) -> Result<Vec<Version>> {
        self.query(
            "SELECT * FROM versions WHERE tx_to = ?1 ORDER BY key, valid_from, id",
            params![i64::MAX],
        )
    }

    /// The version(s) of `key` matching (`valid_at`, `as_of`).
    pub fn recall(&self, key: &str, valid_at: ValidTime, as_of: TxTime) -> Result<Vec<Version>> {
        self.query(
            "SELECT * FROM versions WHERE key = ?1 AND tx_to > ?3 AND tx_from <= ?3
               AND valid_from <= ?2 AND valid_to > ?2 ORDER BY valid_from, id",
            params![key, valid_at.micros(), as_of.micros()],
        )
    }

    /// Every version of `key` ever recorded (or believed at `as_of`), in transaction order.
    pub fn history(&self, key: &str, as_of: Option<TxTime>) -> Result<Vec<Version>> {
        match as_of {
            None => self.query(
                "SELECT * FROM versions WHERE key = ?1 ORDER BY tx_from, valid_from, id",
                params![key],
            ),
            Some(t) => self.query(
                "SELECT * FROM versions WHERE key = ?1 AND tx_from <= ?2 AND tx_to > ?2
                   ORDER BY tx_from, valid_from, id",
                params![key, t.micros()],
            ),
        }
    }

    /// Matching versions of every key, optionally under a prefix and carrying all `tags`.
    pub fn list(
        &self,
        prefix: Option<&str>,
        tags: &[String],
        valid_at: ValidTime,
        as_of: TxTime,
    ) -> Result<Vec<Version>> {
        self.list_window(prefix, tags, valid_at, as_of, None)
    }

    /// [`Index::list`], only the rows in `window` (offset, limit).
    pub fn list_window(
        &self,
        prefix: Option<&str>,
        tags: &[String],
        valid_at: ValidTime,
        as_of: TxTime,
        window: Option<(usize, usize)>,
    ) -> Result<Vec<Version>> {
        // A page walks the key index in order and stops after its rows; without the
        // hint SQLite filters by valid_from and sorts every match first (88 ms for a
        // first page at 100k versions, against under 1 ms).
        let hint = if window.is_some() {
            " INDEXED BY versions_by_key"
        } else {
            ""
        };
        let mut sql = format!(
            "SELECT * FROM versions{hint} WHERE tx_to > ?1 AND tx_from <= ?1 AND valid_from <= ?2 AND valid_to > ?2",
        );
        let mut args: Vec<rusqlite::types::Value> =
            vec![as_of.micros().into(), valid_at.micros().into()];
        if let Some(p) = prefix.filter(|p| !p.is_empty()) {
            args.push(p.to_string().into());
            // A range on the key index: every key with the prefix sorts in [p, p || U+10FFFF).
            sql.push_str(&format!(
                " AND key >= ?{n} AND key < ?{n} || char(1114111)",
                n = args.len()
            ));
        }
        for t in tags {
            args.push(format!("\u{1f}{t}\u{1f}").into());
            sql.push_str(&format!(" AND instr(tags, ?{}) > 0", args.len()));
        }
        sql.push_str(" ORDER BY key, valid_from, id");
        push_window(&mut sql, window);
        self.query(&sql, rusqlite::params_from_iter(args))
    }

    /// [`Index::list`] without a filter, one version at a time (sorted by key, then
    /// valid_from), so that an export never holds the whole answer in memory.
    pub fn list_each(
        &self,
        valid_at: ValidTime,
        as_of: TxTime,
        f: &mut dyn FnMut(Version) -> Result<()>,
    ) -> Result<()> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT * FROM versions WHERE tx_to > ?1 AND tx_from <= ?1 AND valid_from <= ?2 AND valid_to > ?2
              ORDER BY key, valid_from, id",
        )?;
        let rows = stmt.query_map(params![as_of.micros(), valid_at.micros()], row_version)?;
        for row in rows {
            f(row?)?;
        }
        Ok(())
    }

    /// Versions recorded or retracted in (`since`, `until`]: what changed in that
    /// stretch of transaction time, in the order it was recorded.
    pub fn changed_between(&self, since: TxTime, until: TxTime) -> Result<Vec<Version>> {
        self.query(
            "SELECT * FROM versions
              WHERE (tx_from > ?1 AND tx_from <= ?2) OR (tx_to > ?1 AND tx_to <= ?2)
              ORDER BY tx_from, key, id",
            params![since.micros(), until.micros()],
        )
    }

    /// Every version in the index (for consistency checks).
    pub fn all_versions(&self) -> Result<Vec<Version>> {
        self.query(
            "SELECT * FROM versions ORDER BY key, tx_from, valid_from, id",
            [],
        )
    }

    fn query(&self, sql: &str, args: impl rusqlite::Params) -> Result<Vec<Version>> {
        let mut stmt = self.conn.prepare_cached(sql)?;
        let rows = stmt.query_map(args, row_version)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

const INSERT_VERSION: &str = "INSERT INTO versions
    (key, value, tags, agent, valid_from, valid_to, tx_from, tx_to, file, line, hash)
    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)";

fn insert_version(
    stmt: &mut rusqlite::CachedStatement<'_>,
    v: &Version,
) -> rusqlite::Result<usize> {
    stmt.execute(params![
        v.key,
        v.value,
        tags_text(&v.tags),
        v.agent,
        v.valid_from.micros(),
        v.valid_to.micros(),
        v.tx_from.micros(),
        v.tx_to.micros(),
        v.source.file,
        v.source.line,
        v.source.hash,
    ])
}

fn row_version(r: &rusqlite::Row<'_>) -> rusqlite::Result<Version> {
    Ok(Version {
        key: r.get("key")?,
        value: r.get("value")?,
        tags: tags_from_text(&r.get::<_, String>("tags")?),
        agent: r.get("agent")?,
        valid_from: ValidTime::from_micros(r.get("valid_from")?),
        valid_to: ValidTime::from_micros(r.get("valid_to")?),
        tx_from: TxTime::from_micros(r.get("tx_from")?),
        tx_to: TxTime::from_micros(r.get("tx_to")?),
        source: Source {
            file: r.get("file")?,
            line: r.get("line")?,
            hash: r.get("hash")?,
        },
    })
}

fn set_meta(tx: &Transaction<'_>, k: &str, v: &str) -> rusqlite::Result<()> {
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

fn believed_in(tx: &Transaction<'_>, key: &str) -> rusqlite::Result<Vec<(i64, Version)>> {
    let mut stmt = tx.prepare_cached(
        "SELECT * FROM versions WHERE key = ?1 AND tx_to = ?2 ORDER BY valid_from, id",
    )?;
    let rows = stmt.query_map(params![key, i64::MAX], |r| {
        Ok((r.get("id")?, row_version(r)?))
    })?;
    rows.collect()
}

fn close_version(tx: &Transaction<'_>, id: i64, at: TxTime) -> rusqlite::Result<()> {
    tx.prepare_cached("UPDATE versions SET tx_to = ?2 WHERE id = ?1")?
        .execute(params![id, at.micros()])?;
    Ok(())
}

/// Applies one event to the version table: SQL finds the believed versions in the
/// event's scope, the core plans the change (`core::change::plan`, as for the
/// in-memory fold), and SQL executes it by row id.
fn apply_event(tx: &Transaction<'_>, ev: &Event) -> Result<Option<Warning>> {
    let candidates = match ev.op.scope() {
        Scope::Key(key) => believed_in(tx, key)?,
        Scope::Entity(entity) => believed_where(
            tx,
            "key = ?2 OR substr(key, 1, length(?2) + 1) = ?2 || ':'",
            vec![entity.to_string().into()],
        )?,
        // A coarse prefilter (a tag's text inside the tags column); the plan decides.
        Scope::Tagged(tags) => {
            let mut sql = String::from("1");
            let mut args: Vec<rusqlite::types::Value> = Vec::new();
            for t in tags {
                args.push(format!("\u{1f}{t}\u{1f}").into());
                sql.push_str(&format!(" AND instr(tags, ?{}) > 0", args.len() + 1));
            }
            believed_where(tx, &sql, args)?
        }
        Scope::Nothing => return Ok(None),
    };
    let (ids, believed): (Vec<i64>, Vec<Version>) = candidates.into_iter().unzip();
    let change = match change::plan(ev, ev.tx, &believed) {
        Ok(c) => c,
        Err(e) => {
            return Ok(Some(Warning {
                file: ev.source.file.clone(),
                line: ev.source.line,
                message: format!("ignored: {e}"),
            }));
        }
    };
    let mut insert = tx.prepare_cached(INSERT_VERSION)?;
    for v in &change.start {
        insert_version(&mut insert, v)?;
    }
    for &i in &change.close {
        close_version(tx, ids[i], ev.tx)?;
    }
    Ok(None)
}

/// Believed versions (with their row ids) matching an SQL condition on the versions
/// table; `?1` is taken by the open end, the condition's own arguments follow.
fn believed_where(
    tx: &Transaction<'_>,
    condition: &str,
    args: Vec<rusqlite::types::Value>,
) -> rusqlite::Result<Vec<(i64, Version)>> {
    let mut all: Vec<rusqlite::types::Value> = vec![i64::MAX.into()];
    all.extend(args);
    let mut stmt = tx.prepare_cached(&format!(
        "SELECT * FROM versions WHERE tx_to = ?1 AND ({condition}) ORDER BY key, valid_from, id"
    ))?;
    let rows = stmt.query_map(rusqlite::params_from_iter(all), |r| {
        Ok((r.get("id")?, row_version(r)?))
    })?;
    rows.collect()
}

/// `LIMIT … OFFSET …` for a window of rows (numbers, never text from a request).
fn push_window(sql: &mut String, window: Option<(usize, usize)>) {
    if let Some((offset, limit)) = window {
        sql.push_str(&format!(" LIMIT {limit} OFFSET {offset}"));
    }
}

/// Lists `ev` when it was recorded after `ahead_after`.
fn note_ahead(ev: &Event, ahead_after: Option<TxTime>, ahead: &mut Vec<Ahead>) {
    if ahead_after.is_some_and(|t| ev.tx > t) {
        ahead.push(Ahead {
            file: ev.source.file.clone(),
            line: ev.source.line,
            recorded: ev.tx,
        });
    }
}

/// Builds a whole index generation (SQLite and full text) at `path`. When `streaming`,
/// files are folded one at a time and `None` comes back as soon as one holds an entry
/// recorded before an entry of an earlier file (the caller then builds sorted).
fn build_generation(
    ws: &Workspace,
    scan: &[FileStat],
    path: &Path,
    progress: &mut dyn FnMut(Progress),
    streaming: bool,
    ahead_after: Option<TxTime>,
) -> Result<Option<(Connection, RebuildStats)>> {
    let _ = fs::remove_file(path);
    let mut conn = Connection::open(path)?;
    conn.execute_batch(
        "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA temp_store = MEMORY; PRAGMA cache_size = -65536;",
    )?;
    conn.execute_batch(schema::TABLES)?;

    let mut stats = RebuildStats {
        files: scan.len(),
        ..RebuildStats::default()
    };
    // The full-text index is fed as versions are folded: tantivy's indexing threads
    // work while this thread writes SQLite.
    let ft_dir = fulltext_dir(path);
    if ft_dir.exists() {
        fs::remove_dir_all(&ft_dir).map_err(|e| Error::io(&ft_dir, e))?;
    }
    let ft = fulltext::FullText::create(&ft_dir)?;
    let mut ft_writer = ft.bulk_writer()?;
    let mut max_id = 0i64;
    let tx = conn.transaction()?;
    let mut versions = 0usize;
    let mut last: Option<Event> = None;
    let mut fold_warnings = Vec::new();
    {
        let mut insert = tx.prepare_cached(INSERT_VERSION)?;
        let mut fold = Fold::new();
        let mut result: Result<()> = Ok(());
        let mut sink = |v: Version| {
            if result.is_ok() {
                result = insert_version(&mut insert, &v)
                    .map_err(Error::from)
                    .and_then(|_| {
                        max_id = tx.last_insert_rowid();
                        ft.add(&ft_writer, max_id as u64, &v)
                    });
                versions += 1;
            }
        };
        let ahead = &mut stats.ahead;
        let mut apply = |events: &[Event], fold: &mut Fold, sink: &mut dyn FnMut(Version)| {
            for ev in events {
                note_ahead(ev, ahead_after, ahead);
                if let Some(a) = fold.apply(ev, &mut |v| sink(v)) {
                    fold_warnings.push(Warning {
                        file: a.source.file,
                        line: a.source.line,
                        message: a.message,
                    });
                }
            }
        };
        let mut all = Vec::new();
        let mut legacy_keys = format::LegacyKeys::default();
        for (n, file) in scan.iter().enumerate() {
            progress(Progress::Reading {
                done: n as u64 + 1,
                total: scan.len() as u64,
            });
            let parsed = load_file(ws, &file.name)?;
            stats.entries += parsed.entries.len();
            insert_file_row(&tx, file, &parsed)?;
            let mut events = Vec::new();
            file_events(&file.name, &parsed, 0, &mut events, &mut stats.warnings);
            for (line, message) in legacy_keys.note(&file.name, &parsed.entries) {
                let file = file.name.clone();
                stats.warnings.push(Warning {
                    file,
                    line,
                    message,
                });
            }
            drop(parsed);
            if !streaming {
                all.extend(events);
                continue;
            }
            events.sort_by(event_order);
            let in_order = match (events.first(), &last) {
                (Some(first), Some(prev)) => event_order(prev, first).is_lt(),
                _ => true,
            };
            if !in_order {
                return Ok(None);
            }
            apply(&events, &mut fold, &mut sink);
            if let Some(e) = events.pop() {
                last = Some(e);
            }
        }
        if !streaming {
            all.sort_by(event_order);
            for (n, chunk) in all.chunks(4096).enumerate() {
                progress(Progress::Folding {
                    done: (n * 4096) as u64,
                    total: all.len() as u64,
                });
                apply(chunk, &mut fold, &mut sink);
            }
            last = all.pop();
        }
        fold.finish(&mut sink);
        result?;
    }
    stats.versions = versions;
    stats.warnings.extend(fold_warnings);
    if let Some(last) = &last {
        set_last(&tx, last)?;
    }
    set_meta(&tx, "schema", &SCHEMA_VERSION.to_string())?;
    set_meta(&tx, "fulltext_max_id", &max_id.to_string())?;
    insert_problems(&tx, &stats.warnings)?;
    refresh_head(&tx)?;
    tx.commit()?;
    progress(Progress::Finishing);
    conn.execute_batch(schema::INDEXES)?;
    ft.commit(&mut ft_writer)?;
    drop(ft_writer);
    Ok(Some((conn, stats)))
}

/// Points `CURRENT` at `name` atomically, then removes older generations.
fn swap_current(dir: &Path, name: &str) -> Result<()> {
    let tmp = dir.join(format!("{CURRENT}.{}.tmp", std::process::id()));
    let target = dir.join(CURRENT);
    {
        use std::io::Write;
        let mut f = fs::File::create(&tmp).map_err(|e| Error::io(&tmp, e))?;
        f.write_all(format!("{name}\n").as_bytes())
            .and_then(|_| f.sync_all())
            .map_err(|e| Error::io(&tmp, e))?;
    }
    fs::rename(&tmp, &target).map_err(|e| Error::io(&target, e))?;
    if let Ok(d) = fs::File::open(dir) {
        let _ = d.sync_all();
    }
    remove_old_generations(dir, name);
    Ok(())
}

fn remove_old_generations(dir: &Path, keep: &str) {
    let keep = keep.strip_suffix(".sqlite").unwrap_or(keep);
    let Ok(read) = fs::read_dir(dir) else { return };
    for item in read.flatten() {
        let n = item.file_name();
        let Some(n) = n.to_str() else { continue };
        let generation = n.split('.').next().unwrap_or(n);
        if n.starts_with("index-") && generation != keep {
            let path = item.path();
            let _ = if path.is_dir() {
                fs::remove_dir_all(&path)
            } else {
                fs::remove_file(&path)
            };
        }
    }
}

/// The full-text index directory of the generation whose SQLite file is `db`.
fn fulltext_dir(db: &Path) -> std::path::PathBuf {
    db.with_extension("tantivy")
}

/// Builds the full-text index of every version from scratch into `dir`.
fn build_fulltext(conn: &Connection, dir: &Path) -> Result<()> {
    if dir.exists() {
        fs::remove_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    }
    let ft = fulltext::FullText::create(dir)?;
    let mut writer = ft.writer()?;
    let mut stmt = conn.prepare("SELECT * FROM versions")?;
    let mut rows = stmt.query([])?;
    let mut max_id = 0i64;
    while let Some(r) = rows.next()? {
        let id: i64 = r.get("id")?;
        ft.add(&writer, id as u64, &row_version(r)?)?;
        max_id = max_id.max(id);
    }
    ft.commit(&mut writer)?;
    conn.execute(
        "INSERT OR REPLACE INTO meta (k, v) VALUES ('fulltext_max_id', ?1)",
        [max_id.to_string()],
    )?;
    conn.execute("DELETE FROM fulltext_dirty", [])?;
    Ok(())
}
