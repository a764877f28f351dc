//! Where a checkout left off: the lines that open the next session's context block,
//! read from the captured facts of that checkout (its sessions, what they committed,
//! pushed and opened, the checks still failing, the files touched, subagent tasks
//! still running). Bounded: at most [`MAX_LINES`] lines of at most [`MAX_LINE_CHARS`].

use super::facts::parse_list;
use super::redact::cut;
use crate::core::Version;

/// The most lines the section holds.
pub const MAX_LINES: usize = 12;
/// The longest line, in characters.
pub const MAX_LINE_CHARS: usize = 300;
/// The most items a line names (commits, files).
const MAX_NAMED: usize = 6;

/// The section's lines (each a markdown list item, without its line feed) for
/// `checkout`'s id, from the captured versions believed now (all scopes, carrying its
/// checkout tag). Empty when no session of this checkout was captured.
pub fn left_off(versions: &[Version], checkout: &str) -> Vec<String> {
    let tag = format!("checkout:{checkout}");
    let mine: Vec<&Version> = versions.iter().filter(|v| v.tags.contains(&tag)).collect();
    let mut sessions: Vec<&Version> = mine
        .iter()
        .copied()
        .filter(|v| v.key.starts_with("local:session:") && v.key.matches(':').count() == 2)
        .collect();
    if sessions.is_empty() {
        return Vec::new();
    }
    sessions.sort_by_key(|v| std::cmp::Reverse((v.valid_from, v.tx_from)));
    let last = sessions[0];
    let sid = &last.key["local:session:".len()..];
    let since = last.valid_from;
    let mut lines = vec![format!("Last session: {}", last.value)];
    let after = |v: &&&Version| v.valid_from >= since;
    let with = |part: &str| -> Vec<&Version> {
        let mut found: Vec<&Version> = mine
            .iter()
            .copied()
            .filter(|v| v.key.contains(part))
            .filter(|v| after(&v))
            .collect();
        found.sort_by_key(|v| (v.valid_from, v.tx_from));
        found
    };
    let commits = with("git:commit:");
    if !commits.is_empty() {
        lines.push(named(
            &format!("Committed since ({})", commits.len()),
            commits
                .iter()
                .map(|v| v.value.split(" — ").next().unwrap_or(&v.value).to_string()),
        ));
    }
    let pushes = with("git:push:");
    if !pushes.is_empty() {
        lines.push(named("Pushed", pushes.iter().map(|v| v.value.clone())));
    }
    let prs = with("git:pr:");
    if !prs.is_empty() {
        lines.push(named(
            "Pull requests",
            prs.iter().map(|v| {
                v.value
                    .trim_start_matches("opened pull request ")
                    .to_string()
            }),
        ));
    }
    let mut failing: Vec<&Version> = mine
        .iter()
        .copied()
        .filter(|v| v.key.contains(":check:") && v.value.starts_with("failing:"))
        .collect();
    failing.sort_by_key(|v| v.valid_from);
    for v in failing.iter().rev().take(3) {
        lines.push(format!(
            "Still failing: {}",
            v.value.trim_start_matches("failing: ")
        ));
    }
    if let Some(files) = mine
        .iter()
        .find(|v| v.key == format!("local:session:{sid}:files"))
    {
        let (total, items) = parse_list(&files.value);
        lines.push(named(
            &format!("Files touched ({total})"),
            items.into_iter(),
        ));
    }
    let open: Vec<&Version> = mine
        .iter()
        .copied()
        .filter(|v| v.key.contains(":task:") && v.value.starts_with("running:"))
        .collect();
    if !open.is_empty() {
        lines.push(named(
            &format!("Subagent tasks still running ({})", open.len()),
            open.iter()
                .map(|v| v.value.trim_start_matches("running: ").to_string()),
        ));
    }
    if let Some(before) = sessions.get(1) {
        lines.push(format!("Before that: {}", before.value));
    }
    lines
        .into_iter()
        .take(MAX_LINES)
        .map(|l| format!("- {}", cut(&l.replace('\n', " "), MAX_LINE_CHARS)))
        .collect()
}

/// `title: a; b; c; … and n more`.
fn named(title: &str, items: impl Iterator<Item = String>) -> String {
    let items: Vec<String> = items.collect();
    let shown: Vec<&str> = items.iter().take(MAX_NAMED).map(String::as_str).collect();
    let more = items.len().saturating_sub(shown.len());
    let mut line = format!("{title}: {}", shown.join("; "));
    if more > 0 {
        line.push_str(&format!("; … and {more} more"));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::Source;
    use crate::core::time::{TxTime, ValidTime};

    fn v(key: &str, value: &str, from: i64, tags: &[&str]) -> Version {
        Version {
            key: key.into(),
            value: value.into(),
            tags: tags.iter().map(|t| t.to_string()).collect(),
            agent: "t".into(),
            valid_from: ValidTime::from_micros(from),
            valid_to: ValidTime::INFINITY,
            tx_from: TxTime::from_micros(from),
            tx_to: TxTime::INFINITY,
            tier: None,
            source: Source::default(),
        }
    }

    #[test]
    fn the_last_session_leads_with_what_it_did_and_what_is_left() {
        let here = ["captured", "checkout:c1"];
        let other = ["captured", "checkout:c2"];
        let versions = vec![
            v(
                "local:session:s0",
                "claude-code session s0 in /w on branch feat, started D0; ended E0",
                10,
                &here,
            ),
            v(
                "local:session:s1",
                "claude-code session s1 in /w on branch main, started D1; ended E1 (exit)",
                100,
                &here,
            ),
            v(
                "local:session:s9",
                "codex session s9 elsewhere",
                200,
                &other,
            ),
            v(
                "git:commit:aaaa",
                "aaaa on feat: old work — 1 file: x",
                20,
                &here,
            ),
            v(
                "git:commit:bbbb",
                "bbbb on main: Fix CRLF — 2 files: a, b",
                110,
                &here,
            ),
            v(
                "git:commit:cccc",
                "cccc on main: someone else's checkout",
                120,
                &other,
            ),
            v("git:push:origin/main", "origin/main at bbbb", 130, &here),
            v(
                "git:pr:github.com/a/b/pull/4",
                "opened pull request https://github.com/a/b/pull/4: Keep CRLF",
                140,
                &here,
            ),
            v(
                "local:checkout:c1:check:cargo-test-1",
                "failing: `cargo test` — test result: FAILED. 1 failed",
                150,
                &here,
            ),
            v(
                "local:checkout:c1:check:make-2",
                "passing again: `make`",
                150,
                &here,
            ),
            v(
                "local:session:s1:files",
                "files edited or written in claude-code session s1 (2):\n- src/a.rs\n- src/b.rs",
                105,
                &here,
            ),
            v(
                "local:session:s1:task:t1",
                "running: Explore subagent — Map the parser",
                106,
                &here,
            ),
            v(
                "local:session:s1:task:t2",
                "done: Plan subagent — Plan it → ok",
                107,
                &here,
            ),
        ];
        assert_eq!(
            left_off(&versions, "c1"),
            [
                "- Last session: claude-code session s1 in /w on branch main, started D1; ended E1 (exit)",
                "- Committed since (1): bbbb on main: Fix CRLF",
                "- Pushed: origin/main at bbbb",
                "- Pull requests: https://github.com/a/b/pull/4: Keep CRLF",
                "- Still failing: `cargo test` — test result: FAILED. 1 failed",
                "- Files touched (2): src/a.rs; src/b.rs",
                "- Subagent tasks still running (1): Explore subagent — Map the parser",
                "- Before that: claude-code session s0 in /w on branch feat, started D0; ended E0",
            ]
        );
        assert!(left_off(&versions, "c3").is_empty());
    }
}
