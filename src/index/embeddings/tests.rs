//! The embedding cache's tests: the stamp and the journal across connections, lookups
//! per model, and the move of a cache of the layout before.

use super::*;

#[test]
fn the_stamp_counts_writes_across_connections_and_differs_between_caches() {
    let (one, two) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut a = EmbeddingCache::open(one.path()).unwrap();
    let reader = EmbeddingCache::open(one.path()).unwrap();
    assert_eq!(a.stamp().unwrap(), Stamp::default(), "never written to");
    a.put_many("m", &[([1; 32], vec![1.0, 0.0])]).unwrap();
    let first = reader.stamp().unwrap();
    assert_eq!(first.writes, 1, "another connection sees the write");
    assert_ne!(first.origin, 0);
    a.put_many("m", &[([2; 32], vec![0.0, 1.0])]).unwrap();
    a.prune("m", &HashSet::from([[1; 32]])).unwrap();
    let third = Stamp { writes: 3, ..first };
    assert_eq!(reader.stamp().unwrap(), third);
    drop((a, reader));
    assert_eq!(
        EmbeddingCache::open(one.path()).unwrap().stamp().unwrap(),
        third,
        "kept across restarts"
    );

    // A cache made again (deleted, then filled) is another cache: vector files made
    // from the first one must not be taken for its.
    let mut b = EmbeddingCache::open(two.path()).unwrap();
    b.put_many("m", &[([1; 32], vec![1.0, 0.0])]).unwrap();
    assert_ne!(b.stamp().unwrap().origin, first.origin);
}

/// A cache of the layout before (`WITHOUT ROWID`), as a mem7 before made it.
fn cache_of_the_layout_before(dir: &Path, rows: usize) {
    let conn = Connection::open(dir.join(FILE)).unwrap();
    conn.execute_batch(
        "PRAGMA journal_mode = WAL;
         CREATE TABLE embeddings (
             text_hash BLOB NOT NULL, model TEXT NOT NULL, dim INTEGER NOT NULL,
             vector BLOB NOT NULL, PRIMARY KEY (text_hash, model, dim)
         ) WITHOUT ROWID;
         CREATE INDEX embeddings_by_model ON embeddings (model, text_hash);
         CREATE TABLE stamp (origin INTEGER NOT NULL, writes INTEGER NOT NULL);
         INSERT INTO stamp (rowid, origin, writes) VALUES (1, 77, 5);",
    )
    .unwrap();
    let mut put = conn
        .prepare("INSERT INTO embeddings VALUES (?1, ?2, 384, ?3)")
        .unwrap();
    for i in 0..rows {
        let hash = *blake3::hash(&i.to_le_bytes()).as_bytes();
        let vector: Vec<u8> = (0..384)
            .flat_map(|d| ((i + d) as f32).to_le_bytes())
            .collect();
        put.execute(params![hash.as_slice(), ["m", "other"][i % 2], vector])
            .unwrap();
    }
}

fn layout(dir: &Path) -> String {
    Connection::open(dir.join(FILE))
        .unwrap()
        .query_row(
            "SELECT sql FROM sqlite_master WHERE name = 'embeddings'",
            [],
            |r| r.get(0),
        )
        .unwrap()
}

#[test]
fn a_cache_of_the_layout_before_is_moved_with_every_vector_and_its_stamp() {
    let dir = tempfile::tempdir().unwrap();
    cache_of_the_layout_before(dir.path(), 600);
    let size_before = std::fs::metadata(dir.path().join(FILE)).unwrap().len();
    let cache = EmbeddingCache::open(dir.path()).unwrap();
    assert!(!layout(dir.path()).contains("WITHOUT ROWID"), "moved");
    assert_eq!(cache.len().unwrap(), 600);
    assert_eq!(
        cache.stamp().unwrap(),
        Stamp {
            origin: 77,
            writes: 5
        },
        "the same vectors: a vector file made from them stays good"
    );
    for i in [0usize, 1, 299, 599] {
        let hash = *blake3::hash(&i.to_le_bytes()).as_bytes();
        let model = ["m", "other"][i % 2];
        let want: Vec<f32> = (0..384).map(|d| (i + d) as f32).collect();
        assert_eq!(cache.get_hash(&hash, model).unwrap(), Some(want));
        assert!(cache.has_hash(&hash, model).unwrap());
        assert!(!cache.has_hash(&hash, ["other", "m"][i % 2]).unwrap());
    }
    assert_eq!(cache.hashes_for("m").unwrap().len(), 300);
    let mut seen = 0;
    cache
        .for_each_of("other", &mut |_, v| seen += v.len())
        .unwrap();
    assert_eq!(seen, 300 * 384 * 4);
    drop(cache);
    let size_after = std::fs::metadata(dir.path().join(FILE)).unwrap().len();
    assert!(
        size_after * 2 < size_before,
        "the freed pages went back: {size_before} → {size_after} bytes"
    );
    // Opened again, nothing moves; a write keeps one row per text.
    let mut cache = EmbeddingCache::open(dir.path()).unwrap();
    let hash = *blake3::hash(&0usize.to_le_bytes()).as_bytes();
    assert_eq!(cache.put_many("m", &[(hash, vec![0.0; 384])]).unwrap(), 0);
    assert_eq!(cache.len().unwrap(), 600);
}

#[test]
fn a_cache_opened_while_another_connection_reads_it_is_moved_all_the_same() {
    let dir = tempfile::tempdir().unwrap();
    cache_of_the_layout_before(dir.path(), 50);
    // A reader of the layout before, in the middle of a read: the move waits for no
    // reader (WAL), and the file keeps its pages, since it cannot be vacuumed.
    let reader = Connection::open(dir.path().join(FILE)).unwrap();
    reader.execute_batch("BEGIN").unwrap();
    let n: i64 = reader
        .query_row("SELECT count(*) FROM embeddings", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 50);
    let cache = EmbeddingCache::open(dir.path()).unwrap();
    assert!(!layout(dir.path()).contains("WITHOUT ROWID"));
    assert_eq!(cache.len().unwrap(), 50);
    reader.execute_batch("COMMIT").unwrap();
    let n: i64 = reader
        .query_row("SELECT count(*) FROM embeddings", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 50, "the reader reads the moved table as its own");
}

#[test]
fn whether_a_text_is_cached_is_asked_per_model_and_agrees_with_its_vector() {
    let dir = tempfile::tempdir().unwrap();
    let mut cache = EmbeddingCache::open(dir.path()).unwrap();
    cache.put_many("m", &[([1; 32], vec![1.0, 0.0])]).unwrap();
    for (hash, model) in [([1; 32], "m"), ([1; 32], "other"), ([2; 32], "m")] {
        assert_eq!(
            cache.has_hash(&hash, model).unwrap(),
            cache.get_hash(&hash, model).unwrap().is_some(),
            "{model} {:?}",
            hash[0]
        );
    }
    assert!(cache.has_hash(&[1; 32], "m").unwrap());
    assert!(!cache.has_hash(&[1; 32], "other").unwrap());
}

#[test]
fn the_journal_names_what_each_write_added_and_owns_up_to_a_write_it_missed() {
    let dir = tempfile::tempdir().unwrap();
    let mut cache = EmbeddingCache::open(dir.path()).unwrap();
    let reader = EmbeddingCache::open(dir.path()).unwrap();
    cache.put_many("m", &[([1; 32], vec![1.0])]).unwrap();
    let one = reader.stamp().unwrap().writes;
    cache
        .put_many("m", &[([1; 32], vec![1.0]), ([2; 32], vec![2.0])])
        .unwrap();
    cache.put_many("other", &[([3; 32], vec![3.0])]).unwrap();
    let three = reader.stamp().unwrap().writes;
    assert_eq!(
        reader.added_since(one, three, "m").unwrap(),
        Some(HashSet::from([[2; 32]])),
        "only what was new, of the model asked about"
    );
    assert_eq!(
        reader.added_since(three, three, "m").unwrap(),
        Some(HashSet::new())
    );
    assert_eq!(
        reader.added_since(0, three, "other").unwrap(),
        Some(HashSet::from([[3; 32]]))
    );
    // A prune's write is not journaled: a set behind it must look everything up.
    cache.prune("m", &HashSet::from([[1; 32]])).unwrap();
    let four = reader.stamp().unwrap().writes;
    assert_eq!(reader.added_since(one, four, "m").unwrap(), None);
    assert_eq!(
        reader.added_since(four, three, "m").unwrap(),
        None,
        "a stamp from the future"
    );
    // The journal keeps the last writes only.
    for i in 0..JOURNAL_WRITES + 256 {
        cache.put_many("m", &[([9; 32], vec![i as f32])]).unwrap();
    }
    let now = reader.stamp().unwrap().writes;
    assert_eq!(reader.added_since(four, now, "m").unwrap(), None, "trimmed");
    assert_eq!(
        reader.added_since(now - 10, now, "m").unwrap(),
        Some(HashSet::new())
    );
}

#[test]
fn two_processes_opening_a_cache_of_the_layout_before_at_once_move_it_once() {
    let dir = tempfile::tempdir().unwrap();
    cache_of_the_layout_before(dir.path(), 400);
    // Each thread a connection of its own, as two processes would have: one moves the
    // table, the other waits for its transaction and finds it moved.
    let start = std::sync::Barrier::new(4);
    let counts: Vec<usize> = std::thread::scope(|s| {
        let opened: Vec<_> = (0..4)
            .map(|_| {
                s.spawn(|| {
                    start.wait();
                    EmbeddingCache::open(dir.path()).unwrap().len().unwrap()
                })
            })
            .collect();
        opened.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(counts, vec![400; 4]);
    assert!(!layout(dir.path()).contains("WITHOUT ROWID"));
    let conn = Connection::open(dir.path().join(FILE)).unwrap();
    let tables: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE name = 'embeddings_before'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(tables, 0, "nothing left over");
}
