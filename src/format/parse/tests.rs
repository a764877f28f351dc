//! The readers' tests: both readers agree, hashes match what was written, and every
//! kind of problem (torn tails, conflicts, foreign text) is found where it is.

use super::*;
use crate::core::time::{TxTime, ValidTime};
use crate::format::{EntryDraft, render_entry};

fn draft(value: &str) -> EntryDraft<'_> {
    EntryDraft {
        key: "k",
        op: crate::core::EntryOp::Store,
        valid_from: Some(ValidTime::from_micros(0)),
        valid_to: None,
        recorded: TxTime::from_micros(0),
        agent: "t",
        tags: &[],
        tier: None,
        entry: None,
        secret_allowed: false,
        accepts: &[],
        value: Some(value),
    }
}

#[test]
fn entries_of_one_chunk_and_more_hash_alike_on_both_readers() {
    // Under 1 KiB with its link an entry is hashed in one call; longer ones go
    // through a `Hasher`. Plain and keyed, the chain reader agrees with the full one
    // and with the hash the writer recorded.
    for key in [ChainKey::Plain, ChainKey::Keyed([7; 32])] {
        let mut file = String::new();
        let mut prev = ChainHash::GENESIS;
        let mut recorded = Vec::new();
        for value in ["short".to_string(), "long ".repeat(400), "x".repeat(900)] {
            let (text, hash) = render_entry(&draft(&value), prev, &key);
            file.push_str(&text);
            file.push('\n');
            recorded.push(hash);
            prev = hash;
        }
        let chain = parse_chain(&file, &key);
        let full = parse_file(&file, &key);
        assert_eq!(chain.entries.len(), 3);
        for ((c, f), want) in chain.entries.iter().zip(&full.entries).zip(&recorded) {
            assert_eq!(c.link.computed, f.computed);
            assert_eq!(c.link.computed, *want);
            assert_eq!(c.link.claimed, Some(*want));
        }
    }
}

#[test]
fn written_entries_read_back_with_their_hash() {
    for value in [
        "",
        "\n",
        "plain",
        "a\n\n## b\n---\n```mem7\n",
        "x\r\ny",
        "\u{0}nul",
        " lead",
        "trail ",
    ] {
        let (text, hash) = render_entry(&draft(value), ChainHash::GENESIS, &ChainKey::Plain);
        let parsed = parse_file(&text, &ChainKey::Plain);
        assert!(
            parsed.problems.is_empty(),
            "{value:?}: {:?}",
            parsed.problems
        );
        assert_eq!(parsed.entries.len(), 1, "{value:?}");
        let e = &parsed.entries[0];
        assert_eq!(e.value.as_deref(), Some(value));
        assert_eq!(e.computed, hash);
        assert_eq!(e.fields.hash.as_deref(), Some(hash.to_hex().as_str()));
        assert!(parsed.clean_tail);
    }
}

#[test]
fn crlf_files_hash_the_same() {
    let (text, hash) = render_entry(&draft("a\nb"), ChainHash::GENESIS, &ChainKey::Plain);
    let crlf = text.replace('\n', "\r\n");
    let parsed = parse_file(&crlf, &ChainKey::Plain);
    assert_eq!(parsed.entries[0].computed, hash);
    assert_eq!(parsed.entries[0].value.as_deref(), Some("a\nb"));
}

/// The fast path looks for carriage returns as it finds line feeds, block by block: a
/// lone one at any byte (in a value, a heading, an envelope line, a hash, before the
/// file's last feed) still sends the file to the general scanner, and both readers then
/// agree. One before a line feed ends that line as a line feed alone would.
#[test]
fn a_single_carriage_return_anywhere_is_read_as_the_scanner_reads_it() {
    let file = two_entries();
    assert!(canonical_chain(&file, &ChainKey::Plain, &mut ChainScratch::default()).is_some());
    for at in 0..=file.len() {
        let mut with_cr = file.clone();
        with_cr.insert(at, '\r');
        assert!(
            canonical_chain(&with_cr, &ChainKey::Plain, &mut ChainScratch::default()).is_none(),
            "a carriage return at byte {at} was not seen"
        );
        let (_, chain) = both(&with_cr);
        if file[at..].starts_with('\n') {
            assert_eq!(chain.entries.len(), 2, "{with_cr}");
        }
    }
}

#[test]
fn torn_tail_and_conflicts_are_reported() {
    let (text, _) = render_entry(&draft("v"), ChainHash::GENESIS, &ChainKey::Plain);
    let torn = &text[..text.len() - 10];
    let parsed = parse_file(&format!("{text}\n{torn}"), &ChainKey::Plain);
    assert_eq!(parsed.entries.len(), 1);
    assert_eq!(parsed.problems[0].kind, ProblemKind::Torn);
    assert!(!parsed.clean_tail);

    let conflicted = format!("<<<<<<< HEAD\n{text}=======\n{text}>>>>>>> other\n");
    let parsed = parse_file(&conflicted, &ChainKey::Plain);
    assert!(
        parsed
            .problems
            .iter()
            .any(|p| p.kind == ProblemKind::Conflict && p.line == 1)
    );
}

/// Two entries as mem7 writes them, linked, with the blank line mem7 puts after each.
fn two_entries() -> String {
    let (a, h) = render_entry(&draft("one"), ChainHash::GENESIS, &ChainKey::Plain);
    let (b, _) = render_entry(&draft("two"), h, &ChainKey::Plain);
    format!("{a}\n{b}\n")
}

/// Both readers (and, when it takes the file, the fast path) give the same chain.
fn both(text: &str) -> (ParsedFile, ChainFile) {
    let full = parse_file(text, &ChainKey::Plain);
    let general = scan_chain(text, &ChainKey::Plain);
    if let Some(fast) = canonical_chain(text, &ChainKey::Plain, &mut ChainScratch::default()) {
        assert_eq!(fast, general, "fast path and scanner differ on:\n{text}");
    }
    assert_eq!(parse_chain(text, &ChainKey::Plain), general);
    assert_eq!(general.problems, full.problems, "{text}");
    assert_eq!(general.torn_tail, full.torn_tail, "{text}");
    assert_eq!(general.entries.len(), full.entries.len(), "{text}");
    for (c, f) in general.entries.iter().zip(&full.entries) {
        assert_eq!(
            (c.link.line, c.link.computed),
            (f.line, f.computed),
            "{text}"
        );
    }
    (full, general)
}

fn kinds(problems: &[Problem]) -> Vec<(u32, &'static str)> {
    problems
        .iter()
        .map(|p| {
            let kind = match p.kind {
                ProblemKind::Conflict => "conflict",
                ProblemKind::Torn => "torn",
                ProblemKind::Malformed => "malformed",
                ProblemKind::Foreign(_) => "foreign",
            };
            (p.line, kind)
        })
        .collect()
}

#[test]
fn text_outside_entries_is_foreign_at_its_first_line() {
    let file = two_entries();
    let second = file[1..].find("## k").map(|i| i + 1).unwrap();
    let line_of = |at: usize| file[..at].matches('\n').count() as u32 + 1;
    // The fast path reads the file as written (so the comparisons below test it).
    assert!(canonical_chain(&file, &ChainKey::Plain, &mut ChainScratch::default()).is_some());
    let (before, after) = file.split_at(second);
    let end = line_of(file.len()); // the line after the last entry's blank line
    for (name, text, want) in [
        (
            "prose between entries",
            format!("{before}a note\nmore of it\n\n{after}"),
            vec![(line_of(second), "foreign")],
        ),
        (
            "a heading without an envelope",
            format!("{before}## notes\n\nsome text\n\n{after}"),
            vec![(line_of(second), "foreign")],
        ),
        (
            "a lone heading before an entry",
            format!("{before}## notes\n\n{after}"),
            vec![(line_of(second), "foreign")],
        ),
        (
            "an HTML comment",
            format!("{before}<!-- reviewed -->\n\n{after}"),
            vec![(line_of(second), "foreign")],
        ),
        (
            "text before the first entry",
            format!("# Memory\n\n{file}"),
            vec![(1, "foreign")],
        ),
        (
            "text after the last entry",
            format!("{file}trailing words"),
            vec![(end, "foreign")],
        ),
        (
            "a heading and prose after the last entry",
            format!("{file}## later\n\ntext\n"),
            vec![(end, "foreign")],
        ),
        (
            "a stray fence and rule",
            format!("{file}```mem7\n---\n"),
            vec![(end, "foreign")],
        ),
        (
            "blank lines only",
            format!("\n \n{before}\n\t\n\n{after}\n  \n"),
            vec![],
        ),
    ] {
        let (full, chain) = both(&text);
        assert_eq!(kinds(&full.problems), want, "{name}:\n{text}");
        assert_eq!(chain.entries.len(), 2, "{name}");
        assert_eq!(full.torn_tail, None, "{name}");
    }
}

#[test]
fn a_run_of_foreign_text_is_known_by_its_bytes() {
    let file = two_entries();
    let digest = |note: &str| {
        let (full, _) = both(&format!("{file}{note}"));
        match full.problems[..] {
            [
                Problem {
                    kind: ProblemKind::Foreign(d),
                    ..
                },
            ] => d,
            _ => panic!("{:?}", full.problems),
        }
    };
    let note = "a note\n\nin two paragraphs\n";
    // One run from its first to its last non-blank line, whatever surrounds it and
    // whatever the line endings.
    assert_eq!(digest(note), digest(&format!("\n\n{note}\n\n")));
    assert_eq!(digest(note), digest("a note\r\n\r\nin two paragraphs"));
    assert_eq!(
        digest(note),
        foreign_digest(["a note", "", "in two paragraphs"])
    );
    assert_ne!(digest(note), digest("a note\n\nin two paragraphs!\n"));
    assert_ne!(digest(note), digest("a note\n\nin two paragraphs \n"));
}

#[test]
fn every_cut_of_an_entry_is_a_torn_tail_at_its_heading() {
    let file = two_entries();
    let (third, _) = render_entry(
        &draft("three\nlines\n"),
        ChainHash([1; 32]),
        &ChainKey::Plain,
    );
    let heading_line = file.matches('\n').count() as u32 + 1;
    // Everything short of the terminator's last byte: inside the heading, before the
    // fence, inside it, inside the envelope, inside the value, inside `---`.
    let complete = third.len() - "\n".len();
    for cut in 1..complete {
        let text = format!("{file}{}", &third[..cut]);
        let (full, chain) = both(&text);
        let at = &third[..cut].escape_debug().to_string();
        assert_eq!(
            kinds(&full.problems),
            [(heading_line, "torn")],
            "cut {cut}: {at}"
        );
        assert_eq!(full.torn_tail, Some(file.len()), "cut {cut}: {at}");
        assert_eq!(chain.entries.len(), 2);
        assert!(!full.clean_tail);
    }
    for cut in [complete, third.len()] {
        let (full, _) = both(&format!("{file}{}", &third[..cut]));
        assert!(
            full.problems.is_empty() && full.torn_tail.is_none(),
            "{cut}"
        );
        assert_eq!(full.entries.len(), 3);
    }
}

#[test]
fn a_heading_fragment_is_torn_only_at_the_end_of_the_file() {
    let file = two_entries();
    let end = file.matches('\n').count() as u32 + 1;
    for (fragment, torn) in [
        ("#", true),
        ("##", true),
        ("## k", true),
        ("## k\n", true),
        ("## k\n\n", true),
        ("## k\n \n\t", true),
        ("## k\n\n`", true),
        ("## k\n\n```me", true),
        ("## k\r\n\r\n```me", true),
        // Not what a cut write leaves: a complete line after the heading that is not
        // the fence, or more than a heading.
        ("## k\n\n```me\n", false),
        ("## k\n\n```js", false),
        ("## k\nprose", false),
        ("#\n", false),
        ("### k", false),
        ("# k", false),
    ] {
        let (full, _) = both(&format!("{file}{fragment}"));
        let want = if torn { "torn" } else { "foreign" };
        assert_eq!(kinds(&full.problems), [(end, want)], "{fragment:?}");
        assert_eq!(full.torn_tail.is_some(), torn, "{fragment:?}");
    }
    // A torn heading with foreign text before it: both, and only the heading is the tail.
    let text = format!("{file}a note\n\n## k\n");
    let (full, _) = both(&text);
    assert_eq!(kinds(&full.problems), [(end, "foreign"), (end + 2, "torn")]);
    assert_eq!(full.torn_tail, Some(file.len() + "a note\n\n".len()));
}

/// A Go mem7 entry with `body` (lines as they stand in the file).
fn go_entry(entity: &str, body: &str) -> String {
    format!(
        "## {entity}\n\n```mem7\nop: store\ncreated: 2025-01-10T09:00:00Z\nupdated: 2025-01-10T09:00:00Z\n```\n\n{body}\n\n---\n\n"
    )
}

#[test]
fn go_bodies_are_read_by_the_go_rule() {
    let quoted = "merge said:\n<<<<<<< HEAD\nport: 1\n||||||| base\nport: 0\n=======\nport: 2\n>>>>>>> other\nkept 2\n\\---\n## not a heading\n\\```mem7\n\\```";
    let text = format!("{}{}", go_entry("a", quoted), go_entry("b", "plain"));
    let (full, _) = both(&text);
    assert_eq!(kinds(&full.problems), [], "{text}");
    assert_eq!(full.entries.len(), 2);
    assert!(full.entries[0].legacy);
    assert_eq!(full.entries[0].value.as_deref(), Some(quoted));
    assert_eq!(full.entries[1].value.as_deref(), Some("plain"));

    // Only empty lines around a Go body go; a line of spaces stays, as it did there.
    let (full, _) = both(&go_entry("a", "  \nvalue\n\t"));
    assert_eq!(full.entries[0].value.as_deref(), Some("  \nvalue\n\t"));

    // The Go mem7 ended a body at any line that is `---` once trimmed; what follows
    // up to the next entry belongs to none.
    let text = go_entry("a", "one\n  ---  \ntwo");
    let (full, _) = both(&text);
    assert_eq!(full.entries[0].value.as_deref(), Some("one"));
    assert_eq!(kinds(&full.problems), [(11, "foreign")]);
    // In a current-format entry such a line is value text, as before.
    let text = "## k\n\n```mem7\nrecorded: 2026-01-01T00:00:00Z\n```\n\none\n  ---\ntwo\n\n---\n";
    let (full, _) = both(text);
    assert_eq!(full.entries[0].value.as_deref(), Some("one\n  ---\ntwo"));
}

#[test]
fn a_real_conflict_is_still_a_conflict() {
    let go = go_entry("a", "note");
    let region = |inner: &str| format!("<<<<<<< HEAD\n{inner}=======\nx\n>>>>>>> other\n");
    let current = "## k\n\n```mem7\nrecorded: 2026-01-01T00:00:00Z\n```\n\n";
    for (name, text) in [
        ("around entries", format!("{go}{}", region(&go))),
        ("between entries", format!("{go}{}{go}", region("y\n"))),
        ("around a heading", go_entry("a", &region("## b\n"))),
        ("around a fence", go_entry("a", &region("```\n"))),
        ("around a terminator", go_entry("a", &region("---\n"))),
        (
            "unclosed in a Go body",
            go_entry("a", "<<<<<<< HEAD\nx\n=======\ny"),
        ),
        (
            "without a separator",
            go_entry("a", "<<<<<<< HEAD\nx\n>>>>>>> other"),
        ),
        ("nested", go_entry("a", &region(&region("")))),
        (
            "a lone marker in a Go body",
            go_entry("a", &format!("{}\n=======", region("y\n"))),
        ),
        (
            "in a current entry's body",
            format!("{current}{}\n---\n", region("y\n")),
        ),
        (
            "in a Go envelope",
            format!(
                "## a\n\n```mem7\n{}```\n\nbody\n\n---\n",
                region("op: store\n")
            ),
        ),
    ] {
        let (full, _) = both(&text);
        assert!(
            kinds(&full.problems).iter().any(|(_, k)| *k == "conflict"),
            "{name}: {:?}\n{text}",
            full.problems
        );
    }
}
