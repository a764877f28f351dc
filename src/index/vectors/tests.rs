//! The vector set's unit tests: sign bits on every path, loading, topping up, the file.

use super::*;

fn unit(seed: u64, dim: usize) -> Vec<f32> {
    let mut x = seed | 1;
    let mut v: Vec<f32> = (0..dim)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % 20_001) as f32 / 10_000.0 - 1.0
        })
        .collect();
    crate::embed::normalize(&mut v);
    v
}

#[test]
fn sign_bits_count_differences_on_every_path() {
    for dim in [1, 63, 64, 65, 384, 1000] {
        let (a, b) = (unit(dim as u64, dim), unit(dim as u64 + 7, dim));
        let naive = a
            .iter()
            .zip(&b)
            .filter(|(x, y)| (**x > 0.0) != (**y > 0.0))
            .count();
        let (mut ba, mut bb) = (Vec::new(), Vec::new());
        sign_bits(&a, &mut ba);
        sign_bits(&b, &mut bb);
        assert_eq!(ba.len(), dim.div_ceil(64), "dim {dim}");
        assert_eq!(differing_portable(&ba, &bb) as usize, naive, "dim {dim}");
        assert_eq!(pick_differing()(&ba, &bb) as usize, naive, "dim {dim}");
    }
}

#[test]
fn sign_agreement_shortlists_the_exact_nearest() {
    let dim = 384;
    // Odd seeds: `unit` makes a seed odd, so 2k and 2k + 1 would give the same row.
    let rows: Vec<Vec<f32>> = (0..2000).map(|i| unit(1001 + 2 * i, dim)).collect();
    let mut v = Vectors::empty("m", Path::new(""), Stamp::default());
    for (i, r) in rows.iter().enumerate() {
        v.push(i as u64 + 1, [i as u8; 32], r);
    }
    // Queries near a row: that row, the exact nearest, is within the 64 rows whose
    // signs agree most with the query's.
    for target in [1usize, 42, 777, 1999] {
        let mut q = rows[target - 1].clone();
        q.iter_mut()
            .zip(unit(100_001 + 2 * target as u64, dim))
            .for_each(|(a, b)| *a += 0.8 * b);
        crate::embed::normalize(&mut q);
        let query = Query::new(&q);
        let exact_best = (1..=2000u64)
            .max_by(|a, b| {
                let s = |id| v.similarity(id, &query).unwrap();
                s(*a).total_cmp(&s(*b))
            })
            .unwrap();
        assert_eq!(exact_best, target as u64);
        let mut by_signs: Vec<u64> = (1..=2000).collect();
        by_signs.sort_by_key(|id| std::cmp::Reverse(v.agreeing_signs(*id, &query).unwrap()));
        let place = by_signs.iter().position(|id| *id == exact_best).unwrap();
        assert!(place < 64, "row {target} came {place}th by signs");
    }
    assert_eq!(
        v.similarity(9999, &query_of(&rows[0])),
        None,
        "no row for that id"
    );
}

fn query_of(v: &[f32]) -> Query {
    Query::new(v)
}
/// The origin of the cache the test sets are made from.
const ORIGIN: u64 = 12345;

/// Every answer `v` gives, for comparing two sets.
fn answers(v: &Vectors, ids: u64, query: &Query) -> Vec<(Option<u32>, Option<u32>)> {
    (0..=ids)
        .map(|id| {
            (
                v.agreeing_signs(id, query),
                v.similarity(id, query).map(f32::to_bits),
            )
        })
        .collect()
}

#[test]
fn a_vector_file_gives_back_the_set_and_takes_rows_added_after_it() {
    let dir = tempfile::tempdir().unwrap();
    let generation = dir.path().join("index-1-2.tantivy");
    let dim = 70; // sign bits in two words, the last one partly used
    let stamp = Stamp {
        origin: ORIGIN,
        writes: 7,
    };
    let mut v = Vectors::empty("m", &generation, stamp);
    for id in 1..=300u64 {
        if id % 3 == 0 {
            v.missing.push((id, [id as u8; 32]));
        } else {
            v.push(id, [id as u8; 32], &unit(id, dim));
        }
        v.max_id = id;
    }
    v.save().unwrap();
    let query = Query::new(&unit(12345, dim));
    let mut back = Vectors::open(&generation, "m", ORIGIN, 0).expect("the file reads back");
    assert_eq!(back.mapped_rows(), 200);
    assert_eq!((back.len(), back.missing(), back.max_id), (200, 100, 300));
    assert_eq!(back.cache_stamp, stamp);
    assert_eq!(back.missing, v.missing);
    assert_eq!(answers(&back, 320, &query), answers(&v, 320, &query));

    // Rows added to a mapped set live after the mapped ones, and a file written from
    // both holds all of them.
    for id in 301..=320u64 {
        v.push(id, [id as u8; 32], &unit(id, dim));
        back.push(id, [id as u8; 32], &unit(id, dim));
        back.max_id = id;
    }
    assert_eq!(answers(&back, 320, &query), answers(&v, 320, &query));
    back.save().unwrap();
    let again = Vectors::open(&generation, "m", ORIGIN, 0).unwrap();
    assert_eq!(again.mapped_rows(), 220);
    assert_eq!(answers(&again, 320, &query), answers(&v, 320, &query));
    assert!(
        Vectors::open(&generation, "other", ORIGIN, 0).is_none(),
        "another model's file"
    );
    assert!(
        Vectors::open(&generation, "m", ORIGIN + 1, 0).is_none(),
        "made from another cache"
    );
}

#[test]
fn rows_added_to_a_mapped_set_go_to_its_tail_and_a_stale_tail_is_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let generation = dir.path().join("index-1-2.tantivy");
    let path = file_path(&generation, "m");
    let tail = path.with_extension(format!(
        "{}.tail",
        path.extension().unwrap().to_string_lossy()
    ));
    let stamp = Stamp {
        origin: ORIGIN,
        writes: 3,
    };
    // Enough rows that RESAVE_AFTER more are under a sixty-fourth of them.
    let (base, dim) = (70_000u64, 8);
    let mut v = Vectors::empty("m", &generation, stamp);
    for id in 1..=base {
        v.push(id, [id as u8; 32], &unit(id, dim));
    }
    v.max_id = base;
    v.save().unwrap();
    let mut back = Vectors::open(&generation, "m", ORIGIN, 0).unwrap();
    let added = base + RESAVE_AFTER as u64;
    for id in base + 1..=added {
        v.push(id, [id as u8; 32], &unit(id, dim));
        back.push(id, [id as u8; 32], &unit(id, dim));
        back.max_id = id;
    }
    v.missing.push((added + 1, [9; 32]));
    v.max_id = added + 1;
    back.missing.push((added + 1, [9; 32]));
    back.max_id = added + 1;
    back.save_if_due();
    assert!(tail.is_file(), "the added rows went to the tail");
    let query = Query::new(&unit(777, dim));
    let again = Vectors::open(&generation, "m", ORIGIN, 0).unwrap();
    assert_eq!(
        again.mapped_rows(),
        base as usize,
        "the file itself was kept"
    );
    assert_eq!((again.len(), again.missing()), (added as usize, 1));
    assert_eq!(again.max_id, added + 1);
    let ids = added + 2;
    assert_eq!(answers(&again, ids, &query), answers(&v, ids, &query));

    // A tail of a file since replaced is not taken, even put back by hand.
    let kept = std::fs::read(&tail).unwrap();
    let mut other = Vectors::empty("m", &generation, stamp);
    for id in 1..=10u64 {
        other.push(id, [id as u8; 32], &unit(id + 5, dim));
    }
    other.max_id = 10;
    other.save().unwrap();
    assert!(!tail.exists(), "a whole write removes the tail");
    std::fs::write(&tail, &kept).unwrap();
    let replaced = Vectors::open(&generation, "m", ORIGIN, 0).unwrap();
    assert_eq!((replaced.len(), replaced.max_id), (10, 10));
    assert_eq!(
        answers(&replaced, ids, &query),
        answers(&other, ids, &query)
    );
}

#[test]
fn a_vector_file_that_does_not_hold_together_is_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let generation = dir.path().join("index-1-2.tantivy");
    let path = file_path(&generation, "m");
    let mut v = Vectors::empty(
        "m",
        &generation,
        Stamp {
            origin: ORIGIN,
            writes: 1,
        },
    );
    for id in 1..=50u64 {
        v.push(id, [id as u8; 32], &unit(id, 384));
    }
    v.missing.push((51, [7; 32]));
    v.max_id = 51;
    v.save().unwrap();
    let good = std::fs::read(&path).unwrap();
    assert!(Vectors::open(&generation, "m", ORIGIN, 0).is_some());
    let layout = file::Layout::read(&good, *b"mem7vec\x03").unwrap();
    let broken: Vec<(&str, Vec<u8>)> = vec![
        ("cut short", good[..good.len() - 1].to_vec()),
        ("one byte more", [&good[..], &[0]].concat()),
        ("empty", Vec::new()),
        ("another magic", [&b"mem7vec\x01"[..], &good[8..]].concat()),
        ("a row number past the rows", {
            let mut b = good.clone();
            let at = layout.row_of.start + 4 * 10;
            b[at..at + 4].copy_from_slice(&60u32.to_le_bytes());
            b
        }),
        ("a dimension that does not match the sizes", {
            let mut b = good.clone();
            b[8..16].copy_from_slice(&383u64.to_le_bytes());
            b
        }),
        ("a largest id past the row map", {
            let mut b = good.clone();
            b[24..32].copy_from_slice(&1_000_000_000_000u64.to_le_bytes());
            b
        }),
        ("a missing version that has a row", {
            let mut b = good.clone();
            let at = layout.missing.start;
            b[at..at + 8].copy_from_slice(&5u64.to_le_bytes());
            b
        }),
        ("a missing version past the largest id", {
            let mut b = good.clone();
            let at = layout.missing.start;
            b[at..at + 8].copy_from_slice(&u64::MAX.to_le_bytes());
            b
        }),
    ];
    for (what, bytes) in broken {
        std::fs::write(&path, &bytes).unwrap();
        assert!(
            Vectors::open(&generation, "m", ORIGIN, 0).is_none(),
            "{what} was taken"
        );
    }
}

#[test]
fn a_version_is_as_near_as_its_nearest_row_and_its_file_keeps_every_row() {
    let dir = tempfile::tempdir().unwrap();
    let generation = dir.path().join("index-1-2.tantivy");
    let dim = 70;
    let seed = |id: u64, k: usize| 1001 + 2 * (8 * id + k as u64);
    let stamp = Stamp {
        origin: ORIGIN,
        writes: 1,
    };
    let mut v = Vectors::empty("m", &generation, stamp);
    v.sentences = 4;
    for id in 1..=60u64 {
        // Versions of one to four rows: the whole text's, then up to three sentences'.
        let t = Texts {
            id,
            whole: [id as u8; 32],
            sentences: (0..id % 4)
                .map(|k| [id as u8, k as u8 + 1].repeat(16).try_into().unwrap())
                .collect(),
        };
        let rows: Vec<Vec<f32>> = (0..t.rows()).map(|k| unit(seed(id, k), dim)).collect();
        v.push_rows(&t, &rows);
        v.max_id = id;
    }
    assert_eq!((v.len(), v.rows()), (60, 60 + 15 * (1 + 2 + 3)));
    // A query equal to version 7's third row (its second sentence) finds it at 1.
    let query = Query::new(&unit(seed(7, 2), dim));
    assert!((v.similarity(7, &query).unwrap() - 1.0).abs() < 1e-5);
    for id in 1..=60u64 {
        let best = (0..=(id % 4) as usize)
            .map(|k| dot(&unit(seed(id, k), dim), &unit(seed(7, 2), dim)))
            .fold(f32::MIN, f32::max);
        assert_eq!(v.similarity(id, &query), Some(best), "version {id}");
    }
    v.save().unwrap();
    let back = Vectors::open(&generation, "m", ORIGIN, 4).expect("the file reads back");
    assert_eq!((back.len(), back.mapped_rows()), (60, v.rows()));
    assert_eq!(answers(&back, 61, &query), answers(&v, 61, &query));
    let ids: Vec<u64> = (0..=61).collect();
    let read = back.similarities(&ids, &query);
    let one_by_one: Vec<Option<f32>> = ids.iter().map(|id| v.similarity(*id, &query)).collect();
    assert_eq!(
        read, one_by_one,
        "positional reads take the nearest row too"
    );
    assert!(
        Vectors::open(&generation, "m", ORIGIN, 0).is_none(),
        "a set made with other sentence rows is not taken"
    );
}
