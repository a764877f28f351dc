//! The SQLite schema of the derived index. Bumping `SCHEMA_VERSION` makes every older
//! index rebuild itself from the markdown on the next start.

/// Version of the layout below (9: the keys beyond ASCII in `key_odd`; 10: keys filed
/// under their compounds too in `key_words`, and the full-text key field stemmed with
/// its compounds, `index::keyparts`: an older index is rebuilt, as for any new schema).
pub const SCHEMA_VERSION: i64 = 10;

/// Tables, created empty before a rebuild fills them.
pub const TABLES: &str = "
CREATE TABLE meta (
    k TEXT PRIMARY KEY,
    v TEXT NOT NULL
) WITHOUT ROWID;

-- One row per memory file: the cheap fingerprint (size, mtime) and, to tell an append
-- from an edit, how many entries were folded and a running digest over their hashes.
CREATE TABLE files (
    name     TEXT PRIMARY KEY,
    size     INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    entries  INTEGER NOT NULL,
    digest   BLOB NOT NULL,
    head     TEXT NOT NULL,
    newlines INTEGER NOT NULL,
    torn_at  INTEGER
) WITHOUT ROWID;

-- Every version with its four clocks. Open ends are i64::MAX, so period tests are
-- plain comparisons. Tags are stored as \\x1f-delimited text: \\x1f tag \\x1f tag \\x1f.
CREATE TABLE versions (
    id         INTEGER PRIMARY KEY,
    key        TEXT NOT NULL,
    value      TEXT NOT NULL,
    tags       TEXT NOT NULL,
    agent      TEXT NOT NULL,
    valid_from INTEGER NOT NULL,
    valid_to   INTEGER NOT NULL,
    tx_from    INTEGER NOT NULL,
    tx_to      INTEGER NOT NULL,
    file       TEXT NOT NULL,
    line       INTEGER NOT NULL,
    hash       TEXT NOT NULL,
    tier       INTEGER  -- NULL unspecified, 1 inferred, 2 asserted (index::tier_code)
);

-- Versions whose clocks changed after the full-text index took them (tantivy catches
-- up from here; a trigger fills it).
CREATE TABLE fulltext_dirty (
    id INTEGER PRIMARY KEY
);

-- What the last fold could not read (torn tails, malformed entries).
CREATE TABLE problems (
    file    TEXT NOT NULL,
    line    INTEGER NOT NULL,
    message TEXT NOT NULL
);
";

/// Indexes (and `key_slots`, derived from the keys), created after a rebuild's bulk
/// insert (faster than maintaining them row by row), then kept by triggers.
pub const INDEXES: &str = "
CREATE INDEX versions_by_key ON versions (key, tx_to, valid_from);
-- Every key under its slot: the key in lower case without `_ - . :`, as
-- text::names::normalize makes it for ASCII keys (SQLite's lower() knows ASCII only), so
-- a store of a new key finds the keys of the same slot by one lookup, not a scan.
CREATE TABLE key_slots (
    slot TEXT NOT NULL,
    key  TEXT NOT NULL,
    PRIMARY KEY (slot, key)
) WITHOUT ROWID;
INSERT OR IGNORE INTO key_slots (slot, key)
    SELECT lower(replace(replace(replace(replace(key, '_', ''), '-', ''), '.', ''), ':', '')), key
    FROM (SELECT DISTINCT key FROM versions);
CREATE TRIGGER versions_key_slot AFTER INSERT ON versions
BEGIN
    INSERT OR IGNORE INTO key_slots (slot, key) VALUES (
        lower(replace(replace(replace(replace(new.key, '_', ''), '-', ''), '.', ''), ':', '')),
        new.key);
END;
-- The keys with a character beyond ASCII: a miss's near-key hint finds ASCII keys by
-- their slots (index/near.rs), but SQLite's lower() does not fold these as Rust does, so
-- the hint compares each of them itself (there are usually none or a few).
CREATE TABLE key_odd (
    key TEXT PRIMARY KEY
) WITHOUT ROWID;
INSERT OR IGNORE INTO key_odd (key)
    SELECT key FROM key_slots WHERE length(key) <> length(CAST(key AS BLOB));
CREATE TRIGGER versions_key_odd AFTER INSERT ON versions
WHEN length(new.key) <> length(CAST(new.key AS BLOB))
BEGIN
    INSERT OR IGNORE INTO key_odd (key) VALUES (new.key);
END;
-- Every key under the stems of its words (text::drift::KeyWords::stems), so that a
-- store of a new key compares it with the keys that share a word, not with every key.
-- Filled by the index code (the stems are Rust's), not by a trigger.
CREATE TABLE key_words (
    word TEXT NOT NULL,
    key  TEXT NOT NULL,
    PRIMARY KEY (word, key)
) WITHOUT ROWID;
CREATE INDEX versions_by_tx ON versions (tx_from);
CREATE INDEX versions_by_valid ON versions (valid_from);
CREATE TRIGGER versions_tx_to_changed AFTER UPDATE OF tx_to ON versions
BEGIN
    INSERT OR IGNORE INTO fulltext_dirty (id) VALUES (new.id);
END;
";
