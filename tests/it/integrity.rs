//! Integrity through the binary: the tamper matrix for `mem7 verify`, `mem7 seal`, keyed
//! chains, git merges with real git, and writers killed mid-stream.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::world::{self, Sandbox};
use mem7::core::chain::ChainKey;
use mem7::core::time::TxTime;
use mem7::engine::{Engine, StoreRequest};

const NOW: &str = "2026-06-01T00:00:00Z";

/// A workspace of 300 entries over five days, written once per build of this test
/// binary through the engine, in Cargo's scratch directory for tests (not in `/tmp`,
/// where one copy per test process used to pile up under nextest). Test processes of one
/// build share it: each builds it aside and renames it into place, and the first rename
/// wins; templates of other builds are removed.
fn template() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let scratch = Path::new(env!("CARGO_TARGET_TMPDIR"));
        let exe = std::env::current_exe().unwrap();
        let stamp = std::fs::metadata(&exe)
            .and_then(|m| m.modified())
            .map(|t| t.duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos())
            .unwrap();
        let name = format!("integrity-template-{stamp}");
        let dir = scratch.join(&name);
        if dir.join("memory").is_dir() {
            return dir;
        }
        let aside = scratch.join(format!("{name}.{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&aside);
        mem7::store::init(&aside).unwrap();
        let mut engine = Engine::open(&aside, ChainKey::Plain).unwrap();
        let start = TxTime::parse("2026-03-01T00:00:00Z").unwrap().micros();
        for i in 0..300i64 {
            let req = StoreRequest {
                key: format!("fact:{}", i % 40),
                value: format!("value number {i}\nsecond line {i}"),
                valid_from: None,
                valid_to: None,
                tags: vec![format!("t{}", i % 3)],
                agent: "template".into(),
                allow_secret: false,
                tier: None,
                by: mem7::core::Writer::Person,
            };
            engine
                .store(&req, TxTime::from_micros(start + i * 25 * 60 * 1_000_000))
                .unwrap();
        }
        drop(engine);
        if std::fs::rename(&aside, &dir).is_err() {
            // Another test process of this build got there first: theirs is the same.
            std::fs::remove_dir_all(&aside).unwrap();
        }
        for e in std::fs::read_dir(scratch).unwrap().flatten() {
            let other = e.file_name().to_string_lossy().into_owned();
            if other.starts_with("integrity-template-") && !other.starts_with(&name) {
                // Best effort: a template of an older build, or one being built by a
                // process of another build that will rename it or fail on its own.
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
        dir
    })
}

/// A sandbox holding a copy of the template workspace.
fn tampered() -> Sandbox {
    let s = Sandbox::bare();
    for (rel, bytes) in world::snapshot(template()) {
        let path = s.ws.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }
    s
}

fn day_files(s: &Sandbox) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(s.memory_dir())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    files.sort();
    files
}

fn rel(s: &Sandbox, p: &Path) -> String {
    p.strip_prefix(&s.ws)
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

/// Line numbers (1-based) of the entry headings in a file.
fn headings(path: &Path) -> Vec<usize> {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .enumerate()
        .filter(|(_, l)| l.starts_with("## "))
        .map(|(i, _)| i + 1)
        .collect()
}

/// (file, line, kind) of every finding of `mem7 verify --json`, and the exit code.
fn findings(s: &Sandbox) -> (i32, Vec<(String, u32, String)>) {
    let r = s.run(&["verify", "--json"], Some(NOW));
    assert!(
        r.code == 0 || r.code == 1,
        "verify failed to run: {}",
        r.stderr
    );
    let list = r
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["file"].as_str().unwrap().to_string(),
                f["line"].as_u64().unwrap() as u32,
                f["kind"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    (r.code, list)
}

fn edit(path: &Path, f: impl FnOnce(&mut Vec<String>)) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines: Vec<String> = text.split('\n').map(str::to_string).collect();
    f(&mut lines);
    std::fs::write(path, lines.join("\n")).unwrap();
}

#[test]
fn a_clean_workspace_verifies() {
    let s = tampered();
    let r = s.run(&["verify"], Some(NOW));
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("verified: 300 entries"), "{}", r.stdout);
    let head = r
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("head "))
        .unwrap()
        .to_string();
    assert_eq!(head.len(), 64);
    assert_eq!(
        s.run(&["verify", "--expect-head", &head], Some(NOW)).code,
        0
    );
    let r = s.run(&["verify", "--expect-head", &"0".repeat(64)], Some(NOW));
    assert_eq!(r.code, 1);
    assert!(r.stdout.contains("head-mismatch"), "{}", r.stdout);
    assert_eq!(
        s.run(&["verify", "--expect-head", "nonsense"], Some(NOW))
            .code,
        2
    );
    assert_eq!(findings(&s), (0, vec![]));
}

#[test]
fn one_changed_byte_in_any_field_or_the_value_is_found_at_its_entry() {
    let fields = [
        "op:",
        "valid_from:",
        "recorded:",
        "agent:",
        "tags:",
        "prev:",
        "hash:",
        "> value",
    ];
    for (n, field) in fields.iter().enumerate() {
        let s = tampered();
        let files = day_files(&s);
        let file = &files[n % files.len()];
        let heads = headings(file);
        let entry_line = heads[(n * 7 + 3) % heads.len()];
        edit(file, |lines| {
            let at = (entry_line..lines.len())
                .find(|&i| lines[i].starts_with(field))
                .unwrap();
            let line = &mut lines[at];
            let last = line.pop().unwrap();
            line.push(if last == '7' { '8' } else { '7' });
        });
        let (code, found) = findings(&s);
        assert_eq!(code, 1, "{field}: {found:?}");
        let here: Vec<&(String, u32, String)> = found
            .iter()
            .filter(|f| f.0 == rel(&s, file) && f.1 as usize == entry_line)
            .collect();
        assert!(
            here.iter().any(|f| f.2 == "changed"),
            "{field}: expected `changed` at {}:{entry_line}, got {found:?}",
            rel(&s, file)
        );
        assert_eq!(
            here.len(),
            found.len(),
            "{field}: findings elsewhere too: {found:?}"
        );
    }
}

#[test]
fn a_deleted_entry_is_reported_at_the_entry_after_it() {
    let s = tampered();
    let file = &day_files(&s)[1];
    let heads = headings(file);
    edit(file, |lines| {
        lines.drain(heads[4] - 1..heads[5] - 1);
    });
    let (code, found) = findings(&s);
    assert_eq!(code, 1);
    assert_eq!(
        found,
        [(rel(&s, file), heads[4] as u32, "removed".to_string())]
    );
}

#[test]
fn swapped_entries_are_reported_as_reordered() {
    let s = tampered();
    let file = &day_files(&s)[2];
    let heads = headings(file);
    let (a, b, c) = (heads[2] - 1, heads[3] - 1, heads[4] - 1);
    edit(file, |lines| {
        let first: Vec<String> = lines[a..b].to_vec();
        let second: Vec<String> = lines[b..c].to_vec();
        let swapped: Vec<String> = second.into_iter().chain(first).collect();
        lines.splice(a..c, swapped);
    });
    let (code, found) = findings(&s);
    assert_eq!(code, 1);
    assert_eq!(
        found,
        [(rel(&s, file), heads[2] as u32, "reordered".to_string())]
    );
}

#[test]
fn a_hand_written_entry_is_unsealed_until_sealed() {
    let s = tampered();
    let file = &day_files(&s)[0];
    let heads = headings(file);
    let insert_at = heads[3] - 1;
    edit(file, |lines| {
        let hand = "## fact:by_hand\n\n```mem7\nop: store\nrecorded: 2026-03-01T00:30:00Z\nagent: a person\n```\n\n> added by hand\n\n---\n";
        lines.splice(insert_at..insert_at, hand.split('\n').map(str::to_string));
    });
    let (code, found) = findings(&s);
    assert_eq!(code, 1);
    assert_eq!(
        found,
        [(rel(&s, file), heads[3] as u32, "unsealed".to_string())]
    );

    // `seal` accepts it: verify is clean, the edit stays visible, a second seal is a no-op.
    let r = s.ok(&["seal", "--agent", "reviewer"], Some(NOW));
    assert!(r.stdout.contains("sealed 1 entry"), "{}", r.stdout);
    assert_eq!(findings(&s), (0, vec![]));
    let text = std::fs::read_to_string(file).unwrap();
    assert!(text.contains("> added by hand"));
    let r = s.ok(&["seal"], Some(NOW));
    assert!(r.stdout.contains("nothing to seal"), "{}", r.stdout);
    // The hand-written fact is memory like any other.
    let r = s.ok(&["recall", "fact:by_hand", "--json"], Some(NOW));
    assert_eq!(r.json()[0]["value"], "added by hand");
}

#[test]
fn a_torn_tail_is_reported_then_set_aside_by_the_next_write() {
    let s = tampered();
    let files = day_files(&s);
    let file = files.last().unwrap();
    let heads = headings(file);
    let last = *heads.last().unwrap();
    let text = std::fs::read_to_string(file).unwrap();
    let offset: usize = text
        .split_inclusive('\n')
        .take(last - 1)
        .map(str::len)
        .sum();
    let cut = offset + (text.len() - offset) / 2;
    std::fs::write(file, &text[..cut]).unwrap();
    let (code, found) = findings(&s);
    assert_eq!(code, 1);
    assert_eq!(
        found,
        [(rel(&s, file), last as u32, "truncated".to_string())]
    );

    let r = s.ok(&["store", "after:crash", "continues"], Some(NOW));
    assert!(r.stderr.contains("set aside"), "{}", r.stderr);
    let aside: Vec<PathBuf> = std::fs::read_dir(s.memory_dir().join("torn"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(aside.len(), 1);
    assert_eq!(
        std::fs::read_to_string(&aside[0]).unwrap(),
        text[offset..cut]
    );
    // The torn entry never counted: the chain continues from the last complete entry.
    assert_eq!(findings(&s), (0, vec![]));
}

#[test]
fn a_removed_earlier_file_is_named() {
    let s = tampered();
    let files = day_files(&s);
    std::fs::remove_file(&files[1]).unwrap();
    let (code, found) = findings(&s);
    assert_eq!(code, 1);
    assert_eq!(found, [(rel(&s, &files[2]), 1, "file-removed".to_string())]);
}

#[test]
fn crlf_line_endings_still_verify() {
    let s = tampered();
    for f in day_files(&s) {
        let text = std::fs::read_to_string(&f).unwrap();
        std::fs::write(&f, text.replace('\n', "\r\n")).unwrap();
    }
    assert_eq!(findings(&s), (0, vec![]));
    let r = s.ok(&["recall", "fact:1", "--json"], Some(NOW));
    assert_eq!(r.json()[0]["value"], "value number 281\nsecond line 281");
}

#[test]
fn keyed_chains_need_the_key_and_cannot_be_resealed_without_it() {
    let s = Sandbox::new();
    let keyed = |args: &[&str], key: &str| {
        let out = s
            .command(args, Some(NOW))
            .env("MEM7_CHAIN_KEY", key)
            .output()
            .unwrap();
        world::finish(out)
    };
    for i in 0..5 {
        let r = keyed(
            &["store", &format!("k{i}"), &format!("v{i}")],
            "correct horse battery staple",
        );
        assert_eq!(r.code, 0, "{}", r.stderr);
    }
    assert_eq!(keyed(&["verify"], "correct horse battery staple").code, 0);
    // Without the key: a clear message, not five broken entries.
    let r = s.run(&["verify"], Some(NOW));
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("keyed") && r.stderr.contains("MEM7_CHAIN_KEY"),
        "{}",
        r.stderr
    );
    // A forger without the key edits a value and seals: the key holder sees it.
    let file = day_files(&s).pop().unwrap();
    let text = std::fs::read_to_string(&file)
        .unwrap()
        .replace("> v2", "> forged");
    std::fs::write(&file, text).unwrap();
    let r = keyed(&["seal", "--agent", "forger"], "wrong key");
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = keyed(&["verify"], "correct horse battery staple");
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(r.stdout.contains("changed"), "{}", r.stdout);
}

// ---------------------------------------------------------------------------------------
// git

fn at(s: &Sandbox, ws: &Path, args: &[&str], now: &str) -> world::Run {
    let out = s
        .command(args, Some(now))
        .env("MEM7_WORKSPACE", ws)
        .output()
        .unwrap();
    let r = world::finish(out);
    assert_eq!(
        r.code,
        0,
        "mem7 {args:?} in {}: {}{}",
        ws.display(),
        r.stdout,
        r.stderr
    );
    r
}

#[test]
fn two_clones_merge_and_verify_as_a_merge() {
    let s = Sandbox::new();
    let a = s.ws.clone();
    at(
        &s,
        &a,
        &["store", "base:fact", "shared start"],
        "2026-05-01T08:00:00Z",
    );
    s.git(&a, &["init", "-q", "-b", "main"]);
    s.git(&a, &["add", "-A"]);
    s.git(&a, &["commit", "-qm", "base"]);
    // Without mem7's driver, verify says how to get entry-wise merges.
    let r = at(&s, &a, &["verify"], "2026-05-01T08:30:00Z");
    assert!(r.stderr.contains("mem7 setup-git"), "{}", r.stderr);
    at(&s, &a, &["setup-git"], "2026-05-01T08:30:00Z");
    let r = at(&s, &a, &["verify"], "2026-05-01T08:30:00Z");
    assert!(!r.stderr.contains("setup-git"), "{}", r.stderr);
    let b = s.dir.path().join("clone");
    s.git(
        s.dir.path(),
        &["clone", "-q", a.to_str().unwrap(), b.to_str().unwrap()],
    );

    // Both sides append to the same day's file (and one key on both sides).
    at(
        &s,
        &a,
        &["store", "a:only", "from A"],
        "2026-05-01T09:00:00Z",
    );
    at(
        &s,
        &a,
        &["store", "shared:key", "A's value"],
        "2026-05-01T10:00:00Z",
    );
    s.git(&a, &["commit", "-qam", "A learns"]);
    at(
        &s,
        &b,
        &["store", "b:only", "from B"],
        "2026-05-01T09:30:00Z",
    );
    at(
        &s,
        &b,
        &["store", "shared:key", "B's value"],
        "2026-05-01T11:00:00Z",
    );
    s.git(&b, &["add", "-A"]);
    s.git(&b, &["commit", "-qm", "B learns"]);

    s.git(
        &a,
        &[
            "pull",
            "-q",
            "--no-rebase",
            "--no-edit",
            b.to_str().unwrap(),
            "main",
        ],
    );
    let r = at(&s, &a, &["verify", "--json"], "2026-05-02T00:00:00Z");
    let findings = r.json();
    let kinds: Vec<&str> = findings
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["kind"].as_str().unwrap())
        .collect();
    assert!(
        kinds.iter().all(|k| *k == "merge"),
        "a merge is never tampering: {findings}"
    );
    assert!(!kinds.is_empty(), "the merge is reported as a merge");
    // In words a person reads: the file and line of the entry both sides continued.
    for f in findings.as_array().unwrap() {
        let message = f["message"].as_str().unwrap();
        assert!(
            message.contains("continues from the entry at memory/") && !message.contains('#'),
            "{message}"
        );
    }

    let r = at(&s, &a, &["list", "--json"], "2026-05-02T00:00:00Z");
    let keys: Vec<&str> = r
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["key"].as_str().unwrap())
        .map(|k| Box::leak(k.to_string().into_boxed_str()) as &str)
        .collect();
    assert_eq!(keys, ["a:only", "b:only", "base:fact", "shared:key"]);
    let r = at(
        &s,
        &a,
        &["history", "shared:key", "--json"],
        "2026-05-02T00:00:00Z",
    );
    let h = r.json();
    let tx: Vec<(&str, &str)> = h
        .as_array()
        .unwrap()
        .iter()
        .map(|v| (v["value"].as_str().unwrap(), v["tx_from"].as_str().unwrap()))
        .collect();
    assert_eq!(tx.first().map(|t| t.0), Some("A's value"));
    assert_eq!(
        tx.last().map(|t| t.0),
        Some("B's value"),
        "transaction-time order across both sides: {tx:?}"
    );
    let r = at(
        &s,
        &a,
        &["recall", "shared:key", "--json"],
        "2026-05-02T00:00:00Z",
    );
    assert_eq!(r.json()[0]["value"], "B's value");

    // The next write after the merge chains on, and a seal quiets the merge warnings.
    at(
        &s,
        &a,
        &["store", "after:merge", "yes"],
        "2026-05-02T00:00:00Z",
    );
    at(
        &s,
        &a,
        &["seal", "--agent", "merger"],
        "2026-05-02T00:00:01Z",
    );
    let r = at(&s, &a, &["verify", "--json"], "2026-05-02T00:00:02Z");
    assert_eq!(r.json(), serde_json::json!([]));
}

#[test]
fn an_edited_line_shows_in_git_diff_and_verify_at_the_same_place() {
    let s = Sandbox::new();
    for i in 0..6 {
        s.ok(
            &["store", &format!("k{i}"), &format!("value {i}")],
            Some(&format!("2026-05-01T0{i}:00:00Z")),
        );
    }
    s.git(&s.ws, &["init", "-q", "-b", "main"]);
    s.git(&s.ws, &["add", "-A"]);
    s.git(&s.ws, &["commit", "-qm", "memory"]);
    let file = s.memory_dir().join("2026-05-01.md");
    let text = std::fs::read_to_string(&file)
        .unwrap()
        .replace("> value 3", "> value three");
    std::fs::write(&file, text).unwrap();
    let diff = s.git(&s.ws, &["diff", "-U0"]);
    let hunk = diff.lines().find(|l| l.starts_with("@@")).unwrap();
    let changed_line: usize = hunk
        .split('+')
        .nth(1)
        .unwrap()
        .split([' ', ','])
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let (code, found) = findings(&s);
    assert_eq!(code, 1);
    assert_eq!(found.len(), 1);
    let (f, entry_line, kind) = &found[0];
    assert_eq!(
        (f.as_str(), kind.as_str()),
        ("memory/2026-05-01.md", "changed")
    );
    let lines: Vec<&str> = std::fs::read_to_string(&file)
        .unwrap()
        .lines()
        .map(|l| Box::leak(l.to_string().into_boxed_str()) as &str)
        .collect();
    let entry_end = (*entry_line as usize..=lines.len())
        .find(|&n| lines[n - 1] == "---")
        .unwrap();
    assert!(
        (*entry_line as usize..=entry_end).contains(&changed_line),
        "diff line {changed_line} outside entry {entry_line}..{entry_end}"
    );
}

// ---------------------------------------------------------------------------------------
// crashes

#[test]
fn writers_killed_mid_stream_lose_no_acknowledged_store() {
    use std::os::unix::process::CommandExt;
    let s = Sandbox::new();
    let acks = s.dir.path().join("acks");
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for round in 0..4 {
        let script = format!(
            "i=0; while true; do i=$((i+1)); \"$MEM7\" store crash:r{round}k$i \"round {round} value $i\" >/dev/null && echo r{round}k$i >> {acks}; done",
            acks = acks.display()
        );
        let mut child = s.shell(&script).process_group(0).spawn().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(300 + next() % 700));
        // SIGKILL the whole group (the shell loop and whichever `mem7 store` is running).
        let pgid = child.id() as libc::pid_t;
        assert!(pgid > 1);
        // SAFETY: killpg with the group the child leads; no memory is involved.
        unsafe {
            libc::killpg(pgid, libc::SIGKILL);
        }
        let _ = child.wait();
    }
    let acked = std::fs::read_to_string(&acks).unwrap_or_default();
    let acked: Vec<&str> = acked.lines().collect();
    assert!(
        acked.len() >= 4,
        "the writers made progress: {}",
        acked.len()
    );
    // Whatever verify says of the tail, every acknowledged store is there.
    let r = s.run(&["verify", "--json"], None);
    assert!(r.code == 0 || r.code == 1, "{}", r.stderr);
    for f in r.json().as_array().unwrap() {
        assert_eq!(f["kind"], "truncated", "only a torn tail may appear: {f}");
    }
    let r = s.ok(&["list", "--prefix", "crash:", "--json"], None);
    let stored: std::collections::HashSet<String> = r
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            v["key"]
                .as_str()
                .unwrap()
                .trim_start_matches("crash:")
                .to_string()
        })
        .collect();
    for k in &acked {
        assert!(
            stored.contains(*k),
            "acknowledged store {k} is missing; stored {} of {} acked; files:\n{}",
            stored.len(),
            acked.len(),
            world::snapshot(&s.ws)
                .iter()
                .map(|(n, b)| format!("== {n}\n{}", String::from_utf8_lossy(b)))
                .collect::<Vec<_>>()
                .join("\n")
                .chars()
                .take(3000)
                .collect::<String>()
        );
    }
    // The next write leaves a clean chain.
    s.ok(&["store", "crash:after", "clean"], None);
    let r = s.run(&["verify"], None);
    assert_eq!(r.code, 0, "{}", r.stdout);
}

#[test]
fn two_torn_tails_at_one_offset_are_both_kept() {
    let s = Sandbox::new();
    s.ok(&["store", "k", "v"], Some("2026-05-01T00:00:00Z"));
    let file = s.memory_dir().join("2026-05-01.md");
    let clean = std::fs::read_to_string(&file).unwrap();
    for attempt in ["first", "second"] {
        std::fs::write(
            &file,
            format!("{clean}## torn\n\n```mem7\nop: store\nagent: {attempt}\n"),
        )
        .unwrap();
        let r = s.run(&["verify", "--json"], Some(NOW));
        assert_eq!(r.code, 1);
        assert!(
            r.stderr.contains("BROKEN: ") && r.stderr.contains(", 1 problem, 0 warnings"),
            "{}",
            r.stderr
        );
        s.ok(&["store", "k", attempt], Some(NOW));
        // Back to a clean file for the next tear at the same offset.
        std::fs::write(&file, &clean).unwrap();
    }
    let torn: Vec<String> = std::fs::read_dir(s.memory_dir().join("torn"))
        .unwrap()
        .flatten()
        .map(|e| std::fs::read_to_string(e.path()).unwrap())
        .collect();
    assert_eq!(torn.len(), 2, "{torn:?}");
    assert!(
        torn.iter().any(|t| t.contains("agent: first"))
            && torn.iter().any(|t| t.contains("agent: second"))
    );
}

#[test]
fn a_torn_entry_in_the_middle_says_to_delete_it_by_hand() {
    let s = Sandbox::new();
    s.ok(&["store", "a", "1"], Some("2026-05-01T00:00:00Z"));
    let file = s.memory_dir().join("2026-05-01.md");
    let text = std::fs::read_to_string(&file).unwrap();
    // An interrupted write with a complete entry after it (e.g. restored from a backup).
    std::fs::write(
        &file,
        format!("## torn\n\n```mem7\nop: store\n```\n\n> no terminator\n\n{text}"),
    )
    .unwrap();
    let r = s.run(&["verify"], Some(NOW));
    assert_eq!(r.code, 1);
    assert!(r.stdout.contains("delete them by hand"), "{}", r.stdout);
    let r = s.run(&["seal"], Some(NOW));
    assert_eq!(
        r.code, 2,
        "seal cannot accept what never became an entry: {}",
        r.stdout
    );
}

#[test]
fn keyed_writes_keep_the_index_consistent_for_processes_without_the_key() {
    let s = Sandbox::new();
    let keyed = |args: &[&str]| {
        let out = s
            .command(args, Some(NOW))
            .env("MEM7_CHAIN_KEY", "k3y")
            .output()
            .unwrap();
        world::finish(out)
    };
    for i in 0..3 {
        assert_eq!(keyed(&["store", &format!("k{i}"), "v"]).code, 0);
    }
    let r = keyed(&["verify", "--index"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    // A process without the key reads the same index without rebuilding it.
    let r = s.ok(
        &[
            "list",
            "--valid-at",
            "2026-07-01",
            "--as-of",
            "2026-07-01",
            "--json",
        ],
        Some(NOW),
    );
    assert!(!r.stderr.contains("reindexed"), "{}", r.stderr);
    assert_eq!(r.json().as_array().unwrap().len(), 3);
}

/// A workspace with two entries in one day file; the file and its text.
fn two_entries() -> (Sandbox, PathBuf, String) {
    let s = Sandbox::new();
    s.ok(&["store", "a", "1"], Some("2026-05-01T00:00:00Z"));
    s.ok(&["store", "b", "2"], Some("2026-05-01T01:00:00Z"));
    let file = s.memory_dir().join("2026-05-01.md");
    let text = std::fs::read_to_string(&file).unwrap();
    (s, file, text)
}

/// The 1-based line at byte `at` of `text`.
fn line_at(text: &str, at: usize) -> u32 {
    text[..at].matches('\n').count() as u32 + 1
}

#[test]
fn text_that_belongs_to_no_entry_is_foreign_text_at_its_line() {
    // Every sandbox writes the same bytes (same clock, same agent).
    let (_, _, t) = two_entries();
    let b = t.find("\n## b").unwrap() + 1;
    let (head, tail) = t.split_at(b);
    let cases = [
        (
            "prose between entries",
            format!("{head}A note a person wrote.\nIt has two lines.\n\n{tail}"),
            b,
        ),
        (
            "a heading without an envelope",
            format!("{head}## Decisions\n\nWe chose Postgres.\n\n{tail}"),
            b,
        ),
        (
            "an HTML comment",
            format!("{head}<!-- reviewed by alice -->\n\n{tail}"),
            b,
        ),
        ("text before the first entry", format!("# Memory\n\n{t}"), 0),
        (
            "text after the last entry",
            format!("{t}trailing words\n"),
            t.len(),
        ),
        (
            "a heading and prose after the last entry",
            format!("{t}## Later\n\nmore prose"),
            t.len(),
        ),
    ];
    for (name, edited, at) in cases {
        let (s, file, text) = two_entries();
        assert_eq!(text, t);
        std::fs::write(&file, &edited).unwrap();
        let (code, found) = findings(&s);
        assert_eq!(code, 1, "{name}");
        assert_eq!(
            found,
            [(
                rel(&s, &file),
                line_at(&edited, at),
                "foreign text".to_string()
            )],
            "{name}"
        );
        let r = s.run(&["verify"], Some(NOW));
        assert!(
            r.stdout.contains("outside any entry"),
            "{name}: {}",
            r.stdout
        );
        // The index reads the file as before: the text changes no memory.
        let r = s.ok(&["recall", "b", "--json"], Some(NOW));
        assert_eq!(r.json()[0]["value"], "2", "{name}");
        assert!(!r.stderr.contains("warning"), "{name}: {}", r.stderr);
    }
    // Blank lines (empty, or spaces and tabs) between and around entries are no finding.
    let (s, file, _) = two_entries();
    std::fs::write(&file, format!("\n  \n{head}\t\n\n{tail}\n \n")).unwrap();
    assert_eq!(findings(&s), (0, vec![]));
}

#[test]
fn a_tail_torn_anywhere_is_truncated_and_set_aside_whole() {
    // What mem7 writes for one entry, cut at every kind of place.
    let (s, _, clean) = two_entries();
    s.ok(&["store", "k2", "a value"], Some("2026-05-01T02:00:00Z"));
    let file = s.memory_dir().join("2026-05-01.md");
    let entry = std::fs::read_to_string(&file).unwrap()[clean.len()..].to_string();
    assert!(entry.starts_with("## k2\n\n```mem7\n"), "{entry}");
    let after = |marker: &str| entry.find(marker).unwrap() + marker.len();
    let cuts = [
        ("inside the heading", 4),
        ("after the heading", after("## k2")),
        ("after the heading's line feed", after("## k2\n")),
        ("before the fence", after("## k2\n\n")),
        ("inside the fence", after("## k2\n\n```me")),
        ("inside the envelope", after("op: sto")),
        ("inside the value", after("> a va")),
        ("inside the terminator", after("\n--")),
    ];
    for (name, cut) in cuts {
        let (s, file, clean) = two_entries();
        let fragment = &entry[..cut];
        std::fs::write(&file, format!("{clean}{fragment}")).unwrap();
        let (code, found) = findings(&s);
        assert_eq!(code, 1, "{name}");
        let line = line_at(&clean, clean.len());
        assert_eq!(
            found,
            [(rel(&s, &file), line, "truncated".to_string())],
            "{name}: {fragment:?}"
        );

        // The next write moves exactly the fragment aside (from another day's file too),
        // and the chain continues cleanly from the last complete entry.
        let r = s.ok(&["store", "c", "3"], Some(NOW));
        assert!(r.stderr.contains("set aside"), "{name}: {}", r.stderr);
        let aside: Vec<PathBuf> = std::fs::read_dir(s.memory_dir().join("torn"))
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
        assert_eq!(aside.len(), 1, "{name}");
        assert_eq!(
            std::fs::read_to_string(&aside[0]).unwrap(),
            fragment,
            "{name}"
        );
        assert_eq!(std::fs::read_to_string(&file).unwrap(), clean, "{name}");
        assert_eq!(findings(&s), (0, vec![]), "{name}");
    }
}

#[test]
fn seal_accepts_foreign_text_until_it_is_edited() {
    let (s, file, text) = two_entries();
    let b = text.find("\n## b").unwrap() + 1;
    let note = "Note from alice: `b` is provisional.\n\nAsk before relying on it.";
    let edited = format!("{}{note}\n\n{}", &text[..b], &text[b..]);
    std::fs::write(&file, &edited).unwrap();
    let line = line_at(&edited, b);
    let (code, found) = findings(&s);
    assert_eq!((code, found.len()), (1, 1), "{found:?}");

    let r = s.ok(&["seal", "--agent", "alice"], Some(NOW));
    assert!(
        r.stdout.contains("sealed 1 run of foreign text")
            && r.stdout
                .contains(&format!("memory/2026-05-01.md:{line} (foreign text)")),
        "{}",
        r.stdout
    );
    assert_eq!(findings(&s), (0, vec![]));
    // The seal records the run by the digest of its lines, and names it for people.
    let digest = mem7::format::foreign_digest(note.split('\n')).to_hex();
    let seal = std::fs::read_to_string(s.memory_dir().join("2026-06-01.md")).unwrap();
    assert!(seal.contains(&format!("accepts: [{digest}]")), "{seal}");
    assert!(
        seal.contains(&format!(
            "> - memory/2026-05-01.md:{line} (foreign text): {digest}"
        )),
        "{seal}"
    );
    let r = s.ok(&["seal"], Some(NOW));
    assert!(r.stdout.contains("nothing to seal"), "{}", r.stdout);

    // Editing the accepted text, even by one byte, makes it foreign again.
    std::fs::write(&file, edited.replace("provisional.", "provisional!")).unwrap();
    assert_eq!(
        findings(&s),
        (1, vec![(rel(&s, &file), line, "foreign text".to_string())])
    );
}

#[test]
fn writes_never_go_through_a_link_and_verify_names_every_irregular_file() {
    let s = Sandbox::new();
    s.ok(&["store", "seed:1", "s"], Some("2026-03-01T10:00:00Z"));
    let seed = std::fs::read(s.memory_dir().join("2026-03-01.md")).unwrap();
    let outside = s.dir.path().join("outside.txt");
    std::os::unix::fs::symlink(&outside, s.memory_dir().join("2026-03-02.md")).unwrap();

    // A store on the linked day is refused, and nothing is written anywhere.
    let r = s.run(
        &["store", "victim:1", "hello"],
        Some("2026-03-02T10:00:00Z"),
    );
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("memory/2026-03-02.md"), "{}", r.stderr);
    assert!(r.stderr.contains("symbolic link"), "{}", r.stderr);
    assert!(!outside.exists(), "the entry went through the link");
    assert_eq!(
        std::fs::read(s.memory_dir().join("2026-03-01.md")).unwrap(),
        seed
    );
    assert_eq!(s.run(&["recall", "victim:1"], None).stdout, "");

    // verify names the link, where it points, and fails.
    let v = s.run(&["verify", "--json"], None);
    assert_eq!(v.code, 1, "{}{}", v.stdout, v.stderr);
    assert!(v.stdout.contains("\"link\""), "{}", v.stdout);
    assert!(
        v.stdout.contains(&outside.display().to_string()),
        "{}",
        v.stdout
    );

    // A FIFO is named too, and a store on its day neither hangs nor writes.
    std::fs::remove_file(s.memory_dir().join("2026-03-02.md")).unwrap();
    let fifo = s.memory_dir().join("2026-03-03.md");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let r = s.run(
        &["store", "victim:2", "hello"],
        Some("2026-03-03T10:00:00Z"),
    );
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("FIFO"), "{}", r.stderr);
    let v = s.run(&["verify"], None);
    assert_eq!(v.code, 1);
    assert!(v.stdout.contains("special-file"), "{}", v.stdout);
    std::fs::remove_file(&fifo).unwrap();

    // A torn tail is never set aside through a linked `memory/torn`.
    let elsewhere = s.dir.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, s.memory_dir().join("torn")).unwrap();
    let day = s.memory_dir().join("2026-03-01.md");
    let mut torn = seed.clone();
    torn.extend_from_slice(b"\n## half:written\n\n```mem7\nop: sto");
    std::fs::write(&day, &torn).unwrap();
    let r = s.run(&["store", "after:1", "x"], Some("2026-03-01T11:00:00Z"));
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("memory/torn"), "{}", r.stderr);
    assert!(std::fs::read_dir(&elsewhere).unwrap().next().is_none());
    assert_eq!(
        std::fs::read(&day).unwrap(),
        torn,
        "the torn tail stays in place"
    );
    // With the link gone, the same store sets the tail aside and goes through.
    std::fs::remove_file(s.memory_dir().join("torn")).unwrap();
    s.ok(&["store", "after:1", "x"], Some("2026-03-01T11:00:00Z"));
    assert_eq!(s.run(&["verify"], None).code, 0);
}

/// Runs `store` of each sample under its own key, on two threads; returns the samples
/// refused as credentials.
pub(crate) fn refused_by_store(s: &Sandbox, samples: &[String]) -> Vec<String> {
    let halves: Vec<&[String]> = samples.chunks(samples.len().div_ceil(2)).collect();
    std::thread::scope(|scope| {
        let handles: Vec<_> = halves
            .iter()
            .enumerate()
            .map(|(h, part)| {
                scope.spawn(move || {
                    let mut refused = Vec::new();
                    for (i, sample) in part.iter().enumerate() {
                        let key = format!("sample:{h}_{i}");
                        let r = s.run_stdin(&["store", &key, "-"], Some(NOW), sample);
                        match r.code {
                            0 => {}
                            2 if r.stderr.contains("looks like a credential") => {
                                assert!(
                                    !r.stderr.contains(sample.trim()),
                                    "the error quotes the secret: {}",
                                    r.stderr
                                );
                                refused.push(sample.clone());
                            }
                            _ => panic!("store of {sample:?}: {}{}", r.stdout, r.stderr),
                        }
                    }
                    refused
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    })
}

#[test]
fn the_credential_catalogue_is_refused_and_ordinary_facts_pass() {
    let s = Sandbox::new();
    let credentials = world::samples("credentials.txt");
    assert!(credentials.len() >= 60, "{} credentials", credentials.len());
    let refused = refused_by_store(&s, &credentials);
    let missed: Vec<&String> = credentials
        .iter()
        .filter(|c| !refused.contains(c))
        .collect();
    // Gated at what is measured (docs/integrity.md): every credential refused.
    eprintln!(
        "credentials refused by `mem7 store`: {} of {}",
        refused.len(),
        credentials.len()
    );
    assert!(
        missed.is_empty(),
        "{} of {} credentials refused; missed: {missed:#?}",
        refused.len(),
        credentials.len()
    );
    // What was refused reached no file.
    let memory = s.memory_text();
    for c in &refused {
        assert!(!memory.contains(c.as_str()), "{c:?} reached a memory file");
    }

    // The ordinary facts go through one import (all or nothing): a refused line is
    // counted, dropped, and the import run again.
    let ordinary = world::samples("ordinary.txt");
    assert!(ordinary.len() >= 500, "{} ordinary facts", ordinary.len());
    let false_alarms = refused_by_import(&ordinary);
    // Gated at what is measured: no ordinary fact refused.
    eprintln!(
        "ordinary facts refused by `mem7 import`: {} of {}",
        false_alarms.len(),
        ordinary.len()
    );
    assert!(
        false_alarms.is_empty(),
        "{} of {} ordinary facts refused: {false_alarms:#?}",
        false_alarms.len(),
        ordinary.len()
    );
}

/// Imports `ordinary` as one batch (all or nothing) into a new workspace: a line refused
/// as a credential is counted, dropped, and the import run again. Returns the refused
/// samples; checks that everything else was stored.
pub(crate) fn refused_by_import(ordinary: &[String]) -> Vec<String> {
    let o = Sandbox::new();
    let mut left: Vec<&String> = ordinary.iter().collect();
    let mut false_alarms = Vec::new();
    loop {
        let input: String = left
            .iter()
            .enumerate()
            .map(|(i, v)| {
                format!(
                    "{}\n",
                    serde_json::json!({"key": format!("fact:{i}"), "value": v})
                )
            })
            .collect();
        let r = o.run_stdin(&["import", "-"], Some(NOW), &input);
        if r.code == 0 {
            break;
        }
        assert_eq!(r.code, 2, "a refused import line: {}", r.stderr);
        let line: usize = r
            .stderr
            .split("line ")
            .nth(1)
            .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("import failed without a line: {}", r.stderr));
        assert!(r.stderr.contains("credential"), "{}", r.stderr);
        false_alarms.push(left.remove(line - 1).clone());
        assert!(
            false_alarms.len() <= 100,
            "too many false alarms: {false_alarms:#?}"
        );
    }
    let stored = o.ok(&["list", "--json"], Some(NOW)).strings("key");
    assert_eq!(stored.len(), ordinary.len() - false_alarms.len());
    false_alarms
}

#[test]
fn a_credential_in_a_tag_an_agent_or_an_import_op_is_refused_too() {
    let s = Sandbox::new();
    s.ok(&["store", "seed:1", "s"], Some(NOW));
    let before = s.snapshot();
    let token = "glpat-Xq3vB8kLm2NpR7sT1wYz";
    let r = s.run(&["store", "k:1", "v", "--tag", token], Some(NOW));
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("tag") && r.stderr.contains("credential"),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains(token), "the error quotes the token");
    let r = s.run(
        &["store", "k:1", "v", "--agent", &format!("bot {token}")],
        Some(NOW),
    );
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("agent"), "{}", r.stderr);
    for record in [
        format!("{{\"op\":\"forget\",\"key\":\"{token}\"}}"),
        format!("{{\"op\":\"forget_entity\",\"entity\":\"{token}\"}}"),
        format!("{{\"op\":\"forget_tagged\",\"tags\":[\"{token}\"]}}"),
        format!("{{\"key\":\"k:2\",\"value\":\"v\",\"agent\":\"ci {token}\"}}"),
    ] {
        let r = s.run_stdin(&["import", "-"], Some(NOW), &format!("{record}\n"));
        assert_eq!(r.code, 2, "{record}: {}{}", r.stdout, r.stderr);
        assert!(
            r.stderr.contains("line 1") && r.stderr.contains("credential"),
            "{}",
            r.stderr
        );
    }
    assert_eq!(s.snapshot(), before, "nothing written");
    // --allow-secret is the one way through, and the entry says so.
    s.ok(
        &["store", "k:1", "v", "--tag", token, "--allow-secret"],
        Some(NOW),
    );
    let memory = s.memory_text();
    assert!(memory.contains("secret: allowed"));
}

#[test]
fn import_notes_never_writes_a_credential_from_a_folder_name_a_tag_or_a_body() {
    let s = Sandbox::new();
    let notes = s.dir.path().join("notes");
    let token = "hf_QwErTyUiOpAsDfGhJkLzXcVbNm12345678";
    std::fs::create_dir_all(notes.join(token)).unwrap();
    std::fs::write(
        notes.join(token).join("deploy.md"),
        "---\ntitle: deploy\n---\nWe deploy on Fridays.\n",
    )
    .unwrap();
    std::fs::write(
        notes.join("tagged.md"),
        format!("---\ntitle: tagged\ntags: [ops, {token}]\n---\nPlain body.\n"),
    )
    .unwrap();
    std::fs::write(
        notes.join("body.md"),
        format!("---\ntitle: body\n---\nthe key is {token}\n"),
    )
    .unwrap();
    std::fs::write(
        notes.join("fine.md"),
        "---\ntitle: fine\n---\nNothing secret here.\n",
    )
    .unwrap();
    let before = s.snapshot();
    let r = s.run(
        &["import-notes", notes.to_str().unwrap(), "--write"],
        Some(NOW),
    );
    // A note that would write a credential is refused input: exit 2.
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert_eq!(s.snapshot(), before, "nothing written");
    let all = format!("{}{}", r.stdout, r.stderr);
    for f in ["deploy.md", "tagged.md", "body.md"] {
        assert!(all.contains(f) && all.contains("credential"), "{f}: {all}");
    }
    let r = s.run(
        &[
            "import-notes",
            notes.to_str().unwrap(),
            "--write",
            "--skip-bad",
        ],
        Some(NOW),
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let memory = s.memory_text();
    assert!(memory.contains("Nothing secret here"));
    assert!(!memory.contains(token), "a credential reached a file");
}

/// The commands the frozen workspace answered, in `expected.txt`'s order.
const FROZEN_READS: &[&[&str]] = &[
    &[
        "recall",
        "event7:host",
        "--valid-at",
        "2026-04-10",
        "--as-of",
        "2026-04-11",
    ],
    &["recall", "event7:host", "--valid-at", "2026-04-10"],
    &["recall", "event:deploy"],
    &["recall", "event:deploy", "--json"],
    &["recall", "decision:cache"],
    &["history", "event:deploy"],
    &["history", "team:cdn", "--json"],
    &["list"],
    &["list", "--json", "--prefix", "event"],
    &["search", "deploy", "--mode", "lexical"],
    &["context"],
    &["context", "which cache did we decide on"],
    &["recall", "scratch"],
    &["recall", "note"],
    &["verify"],
];

/// A workspace written before tiers and keys of many values (tests/fixtures/before-tiers,
/// made once by `make.sh` with the mem7 of 47207ee and never regenerated) verifies and
/// answers exactly as it did then: `event:*` and `decision:*` keys stored with `op:
/// store` still replace each other, and the only new thing in any answer is the JSON
/// versions' `tier`, null for every version (unspecified).
#[test]
fn a_workspace_from_before_tiers_answers_exactly_as_before() {
    let fixture = world::fixture("before-tiers");
    let s = Sandbox::bare();
    world::copy_dir(&fixture.join("workspace"), &s.ws);
    let before = world::snapshot(&s.ws.join("memory"));
    let mut text = String::new();
    let mut tiers = 0;
    let mut scopes = 0;
    for args in FROZEN_READS {
        let mut cmd = s.command(args, Some("2026-04-13T00:00:00Z"));
        cmd.env("MEM7_AGENT", "fixture")
            .env("MEM7_EMBED_PROVIDER", "none");
        let r = world::finish(cmd.output().unwrap());
        text.push_str(&format!("$ {}\n", shown(args)));
        for line in r.stdout.lines().chain(r.stderr.lines()) {
            // The additions: every version says it has no tier, and which scope
            // answered (the one workspace, named by MEM7_WORKSPACE: the project's).
            if line.trim() == "\"tier\": null," {
                tiers += 1;
                continue;
            }
            if line.trim() == "\"scope\": \"project\"" {
                scopes += 1;
                continue;
            }
            assert!(!line.contains("\"tier\""), "{line}");
            text.push_str(line);
            text.push('\n');
        }
        text.push_str(&format!("[exit {}]\n", r.code));
    }
    let expected = std::fs::read_to_string(fixture.join("expected.txt")).unwrap();
    // JSON's commas move with the added fields; everything else must be the same bytes.
    let commas = |t: &str| -> String {
        t.lines()
            .map(|l| format!("{}\n", l.trim_end_matches(',')))
            .collect()
    };
    assert_eq!(
        commas(&text),
        commas(&expected),
        "answers changed for an old workspace"
    );
    assert_eq!(tiers, 4, "each JSON version carries tier: null");
    assert_eq!(scopes, 4, "each JSON version says its scope");
    assert_eq!(
        world::snapshot(&s.ws.join("memory")),
        before,
        "reading wrote nothing"
    );
}

/// An argument list as `make.sh` echoed it (`$*`: words joined by spaces).
fn shown(args: &[&str]) -> String {
    args.join(" ")
}
