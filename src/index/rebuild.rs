//! A full rebuild of the index into a fresh generation, in memory that does not grow with
//! the workspace: events are staged in a temporary SQLite table (on disk), read back
//! sorted by key and the fold's order, and folded one key at a time.
//!
//! The fold of one key depends on that key's events only, except for the Go mem7
//! forgets of a whole entity or of every key with some tags (`forget_entity`,
//! `forget_tagged`), which may reach any key. Those are rare (Go workspaces only) and
//! are held in memory and merged, in the fold's order, into the stream of every key
//! they can touch; the plan (`core::change::plan`) decides per key what they close,
//! exactly as the in-memory fold does. So the versions are those of
//! `core::fold::fold_all` over every event sorted by `core::event_order`
//! (`tests/it/properties.rs` checks this on random event sets).
//!
//! What stays in memory: one file's parse at a time, one key's believed versions, the
//! cross-key forgets, SQLite's caches (bounded below), SQLite's sorter (it spills to
//! temporary files), and tantivy's writer budget.

use std::fs;
use std::path::Path;

use rusqlite::{Connection, params};

use super::{
    Ahead, CURRENT, INSERT_VERSION, Index, Progress, RebuildStats, SCHEMA_VERSION, Warning,
    embeddings, file_events, fill_key_words, fulltext, fulltext_dir, insert_file_row,
    insert_problems, insert_version, load_file, note_ahead, refresh_head, schema, set_last,
    set_meta,
};
use crate::core::chain::ChainHash;
use crate::core::fold::belongs_to_entity;
use crate::core::time::{TxTime, ValidTime};
use crate::core::{Event, Fold, Op, Source, StoreOp, ValidEnd, Version, event_order};
use crate::error::{Error, Result};
use crate::format;
use crate::store::{FileStat, Workspace};

/// SQLite's page cache while building (KiB, as `PRAGMA cache_size` takes a negative
/// number): enough for the bulk insert, fixed whatever the workspace's size.
const BUILD_CACHE_KIB: i64 = 16 * 1024;

/// Progress is reported every this many events folded.
const PROGRESS_EVERY: u64 = 4096;

impl Index {
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
        let (conn, mut stats) = build_generation(ws, &scan, &path, progress, ahead_after)?;
        conn.execute_batch("PRAGMA journal_mode = WAL;")?;
        drop(conn);
        if let Ok(f) = fs::File::open(&path) {
            f.sync_all().map_err(|e| Error::io(&path, e))?;
        }
        // The vector files of the generation being replaced go with it; links to them
        // are kept for the new one (checked against it once it is open, below).
        super::vectors::carry::link(&dir, &fulltext_dir(&path));
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
            Error::internal(
                format!(
                    "the rebuilt index at {} could not be opened",
                    path.display()
                ),
                "check that the workspace's .mem7/ directory is writable",
            )
        })?;
        super::vectors::carry::settle(&index);
        Ok((index, stats))
    }
}

/// The staging table: one row per event that names a key (stores and forgets), with
/// everything needed to rebuild the event.
const STAGE: &str = "
CREATE TEMP TABLE stage (
    key        TEXT NOT NULL,
    tx         INTEGER NOT NULL,
    content    BLOB NOT NULL,
    file       TEXT NOT NULL,
    line       INTEGER NOT NULL,
    hash       TEXT NOT NULL,
    store      INTEGER NOT NULL, -- 0 forget, 1 store, 2 add (a value of a key of many)
    value      TEXT NOT NULL,    -- a forget's: the entry it names, or empty
    tags       TEXT NOT NULL,
    agent      TEXT NOT NULL,
    valid_from INTEGER NOT NULL,
    end_kind   INTEGER NOT NULL,
    valid_to   INTEGER NOT NULL,
    tier       INTEGER
);
";

/// Ties (the same entry twice: same instant, same bytes) keep the order of a stable sort
/// of files by name and entries by line, as the in-memory fold's sort does.
const STAGED_IN_ORDER: &str =
    "SELECT key, tx, content, file, line, hash, store, value, tags, agent,
       valid_from, end_kind, valid_to, tier
  FROM temp.stage ORDER BY key, tx, content, file, line";

fn stage_event(stmt: &mut rusqlite::CachedStatement<'_>, ev: &Event) -> rusqlite::Result<()> {
    let (key, store, forgotten) = match &ev.op {
        Op::Store(s) => (s.key.as_str(), Some(s), None),
        Op::Forget { key, entry } => (key.as_str(), None, entry.as_deref()),
        _ => unreachable!("only keyed events are staged"),
    };
    let (end_kind, valid_to) = match store.map(|s| s.valid_to) {
        None | Some(ValidEnd::Open) => (0, 0),
        Some(ValidEnd::Infinity) => (1, 0),
        Some(ValidEnd::At(t)) => (2, t.micros()),
    };
    stmt.execute(params![
        key,
        ev.tx.micros(),
        &ev.content.0[..],
        ev.source.file,
        ev.source.line,
        ev.source.hash,
        store.map_or(0, |s| if s.many { 2 } else { 1 }),
        store.map_or(forgotten.unwrap_or_default(), |s| s.value.as_str()),
        store.map_or(String::new(), |s| crate::core::read_rule::stored_tags(
            &s.tags
        )),
        store.map_or("", |s| s.agent.as_str()),
        store.map_or(0, |s| s.valid_from.micros()),
        end_kind,
        valid_to,
        super::tier_code(store.and_then(|s| s.tier)),
    ])?;
    Ok(())
}

/// The key of a staged event (a store or a forget of one key).
fn staged_key(ev: &Event) -> &str {
    match &ev.op {
        Op::Store(s) => &s.key,
        Op::Forget { key, .. } => key,
        _ => "",
    }
}

fn staged_event(r: &rusqlite::Row<'_>) -> rusqlite::Result<Event> {
    let key: String = r.get(0)?;
    let content: Vec<u8> = r.get(2)?;
    let mut c = [0u8; 32];
    if content.len() == 32 {
        c.copy_from_slice(&content);
    }
    let kind: i64 = r.get(6)?;
    let op = if kind > 0 {
        Op::Store(StoreOp {
            key,
            value: r.get(7)?,
            tags: crate::core::read_rule::tags_of_stored(&r.get::<_, String>(8)?),
            agent: r.get(9)?,
            valid_from: ValidTime::from_micros(r.get(10)?),
            valid_to: match r.get::<_, i64>(11)? {
                0 => ValidEnd::Open,
                1 => ValidEnd::Infinity,
                _ => ValidEnd::At(ValidTime::from_micros(r.get(12)?)),
            },
            tier: super::tier_from_code(r.get(13)?),
            many: kind == 2,
        })
    } else {
        let entry: String = r.get(7)?;
        Op::Forget {
            key,
            entry: (!entry.is_empty()).then_some(entry),
        }
    };
    Ok(Event {
        tx: TxTime::from_micros(r.get(1)?),
        op,
        source: Source {
            file: r.get(3)?,
            line: r.get(4)?,
            hash: r.get(5)?,
        },
        content: ChainHash(c),
    })
}

/// Whether a cross-key event (a forget of an entity or of tags) can touch `key`. A
/// tagged forget is decided by the plan, from the key's believed versions.
fn reaches(ev: &Event, key: &str) -> bool {
    match &ev.op {
        Op::ForgetEntity { entity } => belongs_to_entity(key, entity),
        Op::ForgetTagged { tags } => !tags.is_empty(),
        _ => false,
    }
}

/// Folds one key's events (in the fold's order) merged with the cross-key events that
/// can reach it; hands every version to `sink` and every anomaly to `warn`.
fn fold_key(
    key: &str,
    events: &mut dyn Iterator<Item = rusqlite::Result<Event>>,
    cross: &[Event],
    sink: &mut dyn FnMut(Version),
    warn: &mut dyn FnMut(Warning),
) -> rusqlite::Result<()> {
    let mut fold = Fold::new();
    let mut reaching = cross.iter().filter(|c| reaches(c, key)).peekable();
    let mut apply = |fold: &mut Fold, ev: &Event| {
        if let Some(a) = fold.apply(ev, &mut |v| sink(v)) {
            warn(Warning {
                file: a.source.file,
                line: a.source.line,
                message: a.message,
            });
        }
    };
    for ev in events {
        let ev = ev?;
        while let Some(c) = reaching.next_if(|c| event_order(c, &ev).is_lt()) {
            apply(&mut fold, c);
        }
        apply(&mut fold, &ev);
    }
    for c in reaching {
        apply(&mut fold, c);
    }
    fold.finish(&mut |v| sink(v));
    Ok(())
}

/// Builds a whole index generation (SQLite and full text) at `path`.
fn build_generation(
    ws: &Workspace,
    scan: &[FileStat],
    path: &Path,
    progress: &mut dyn FnMut(Progress),
    ahead_after: Option<TxTime>,
) -> Result<(Connection, RebuildStats)> {
    let mut conn = open_generation(path)?;

    let mut stats = RebuildStats {
        files: scan.len(),
        ..RebuildStats::default()
    };
    let tx = conn.transaction()?;
    // 1. Read every file once: its `files` row, its keyed events into the staging table,
    // the cross-key ones into memory; the last event in the fold's order.
    let (last, mut cross, staged) = stage_files(ws, scan, &tx, progress, ahead_after, &mut stats)?;
    cross.sort_by(event_order);
    // The ahead list is in the fold's order, as a sorted fold would meet them.
    stats.ahead.sort_by_key(|a: &Ahead| a.recorded);

    // 2. Fold key by key, feeding SQLite and the full-text index.
    let ft_dir = fulltext_dir(path);
    if ft_dir.exists() {
        fs::remove_dir_all(&ft_dir).map_err(|e| Error::io(&ft_dir, e))?;
    }
    let ft = fulltext::FullText::create(&ft_dir)?;
    let ft_writer = ft.bulk_writer()?;
    let mut max_id = 0i64;
    let mut versions = 0usize;
    let mut fold_warnings = Vec::new();
    {
        let mut insert = tx.prepare_cached(INSERT_VERSION)?;
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
        let mut read = tx.prepare(STAGED_IN_ORDER)?;
        let mut rows = read.query_map([], staged_event)?.peekable();
        let mut done = 0u64;
        while let Some(first) = rows.next() {
            let first = first?;
            let key = staged_key(&first).to_string();
            let mut group = std::iter::once(Ok(first)).chain(std::iter::from_fn(|| {
                rows.next_if(|r| r.as_ref().map_or(true, |e| staged_key(e) == key))
            }));
            let mut counted = group.by_ref().inspect(|_| {
                done += 1;
                if done.is_multiple_of(PROGRESS_EVERY) {
                    progress(Progress::Folding {
                        done,
                        total: staged,
                    });
                }
            });
            fold_key(&key, &mut counted, &cross, &mut sink, &mut |w| {
                fold_warnings.push(w)
            })?;
        }
        drop(rows);
        drop(read);
        // Cross-key events reach only keys that have events of their own (a forget
        // closes, it never starts a version), so every key was folded above.
        result?;
    }
    tx.execute_batch("DROP TABLE temp.stage")?;
    stats.versions = versions;
    stats.warnings.extend(fold_warnings);
    if let Some(last) = &last {
        set_last(&tx, last)?;
    }
    set_meta(&tx, "schema", &SCHEMA_VERSION.to_string())?;
    set_meta(&tx, "fulltext_max_id", &max_id.to_string())?;
    insert_problems(&tx, &stats.warnings)?;
    refresh_head(&tx)?;
    super::catch_up::refresh_stamp(&tx)?;
    tx.commit()?;
    progress(Progress::Finishing);
    conn.execute_batch(schema::INDEXES)?;
    fill_key_words(&conn)?;
    ft.commit(ft_writer)?;
    Ok((conn, stats))
}

/// A new, empty generation at `path`, set up for one bulk build: the sorter and the
/// staging table spill to temporary files (temp_store = FILE), so memory stays at the
/// caches' size however many events there are.
fn open_generation(path: &Path) -> Result<Connection> {
    let _ = fs::remove_file(path);
    let conn = Connection::open(path)?;
    conn.execute_batch(&format!(
        "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA temp_store = FILE;
         PRAGMA cache_size = -{BUILD_CACHE_KIB}; PRAGMA temp.cache_size = -{BUILD_CACHE_KIB};"
    ))?;
    conn.execute_batch(schema::TABLES)?;
    conn.execute_batch(STAGE)?;
    Ok(conn)
}

/// Step 1 of a build: reads every file once, writing its `files` row and its keyed events
/// into the staging table; answers the last event in the fold's order, the cross-key
/// events (kept in memory) and how many events were staged.
fn stage_files(
    ws: &Workspace,
    scan: &[FileStat],
    tx: &rusqlite::Transaction<'_>,
    progress: &mut dyn FnMut(Progress),
    ahead_after: Option<TxTime>,
    stats: &mut RebuildStats,
) -> Result<(Option<Event>, Vec<Event>, u64)> {
    let mut last: Option<Event> = None;
    let mut cross: Vec<Event> = Vec::new();
    let mut staged = 0u64;
    {
        let mut stage = tx.prepare_cached(
            "INSERT INTO temp.stage VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
        )?;
        let mut legacy_keys = format::LegacyKeys::default();
        for (n, file) in scan.iter().enumerate() {
            progress(Progress::Reading {
                done: n as u64 + 1,
                total: scan.len() as u64,
            });
            let parsed = load_file(ws, &file.name)?;
            stats.entries += parsed.entries.len();
            insert_file_row(tx, file, &parsed)?;
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
            super::hold_apart(tx, &mut events, ahead_after, &mut stats.held)?;
            for ev in events {
                note_ahead(&ev, ahead_after, &mut stats.ahead);
                match &ev.op {
                    Op::Store(_) | Op::Forget { .. } => {
                        stage_event(&mut stage, &ev)?;
                        staged += 1;
                    }
                    Op::ForgetEntity { .. } | Op::ForgetTagged { .. } => cross.push(ev.clone()),
                    Op::Seal => {}
                }
                if last.as_ref().is_none_or(|l| event_order(l, &ev).is_lt()) {
                    last = Some(ev);
                }
            }
        }
    }
    Ok((last, cross, staged))
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
