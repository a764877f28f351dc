//! A shell command an agent ran and what it printed, read by rules (no model): the
//! commits, pushes, merges, branch switches and pull requests it made, and whether the
//! checks it ran (tests, builds, linters) passed. Only the command and its output are
//! looked at; nothing is run here (the caller asks git for what the output only names).

use std::sync::LazyLock;

use regex::Regex;

use super::redact;

/// What one shell command did, as far as its words and output tell.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Did {
    /// `git commit` made a commit: `[branch hash] subject`.
    Commit {
        rev: String,
        branch: Option<String>,
        subject: Option<String>,
    },
    /// `git merge` or `git pull` may have made a merge commit (git is asked which).
    Merge,
    /// `git push` updated these branches of `remote`.
    Push { remote: String, refs: Vec<Pushed> },
    /// `git checkout` or `git switch` may have changed the branch (git is asked which).
    Switch,
    /// `gh pr create` opened a pull request.
    PullRequest { url: String, title: Option<String> },
    /// A check (tests, a build, a linter) ran; `outcome` says how it went.
    Check { command: String, outcome: Outcome },
}

/// One branch a push updated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pushed {
    /// The remote branch.
    pub branch: String,
    /// The commit pushed, when the output names it (`a..b` names `b`).
    pub rev: Option<String>,
    /// The remote refused it (`! [rejected]`).
    pub rejected: bool,
}

/// How a check went.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    pub failed: bool,
    /// The runner's own summary line (`test result: FAILED. 3 passed; 1 failed`), made
    /// safe by [`redact::field`].
    pub summary: Option<String>,
    /// Up to [`MAX_FAILING`] names of failing tests.
    pub failing: Vec<String>,
}

/// The most failing test names kept.
pub const MAX_FAILING: usize = 5;

/// The longest command text kept, in characters.
pub const MAX_COMMAND_CHARS: usize = 120;

/// What `command` did, given its output and (when the client says) its exit code.
/// A check whose outcome neither the exit code nor a runner's summary tells is left
/// out: an unknown is not a fact.
pub fn read(command: &str, output: &str, exit: Option<i32>) -> Vec<Did> {
    let command = redact::strip_private(command);
    // Colours (vitest and jest print them in CI) would split a summary line.
    let output = &ANSI
        .replace_all(&redact::strip_private(output), "")
        .into_owned();
    let mut did = Vec::new();
    let segments = segments(&command);
    for words in &segments {
        let Some((program, rest)) = words.split_first() else {
            continue;
        };
        let sub = rest
            .iter()
            .find(|w| !w.starts_with('-'))
            .map(String::as_str);
        match (program.as_str(), sub) {
            ("git", Some("commit")) => {
                if let Some(commit) = commit_line(output) {
                    did.push(commit);
                }
            }
            ("git", Some("merge" | "pull")) => did.push(Did::Merge),
            ("git", Some("push")) => {
                if let Some(push) = push_lines(rest, output) {
                    did.push(push);
                }
            }
            ("git", Some("checkout" | "switch")) => did.push(Did::Switch),
            ("gh", Some("pr")) if rest.iter().any(|w| w == "create") => {
                if let Some(url) = PR_URL.find(output) {
                    let title =
                        flag_value(rest, &["--title", "-t"]).and_then(|t| redact::field(&t));
                    did.push(Did::PullRequest {
                        url: url.as_str().to_string(),
                        title,
                    });
                }
            }
            _ => {}
        }
    }
    // The first check of the command line names it (`cargo test 2>&1 | tail` is
    // `cargo test`); the exit code of a pipeline is its last command's, so a runner's
    // summary overrides it.
    if let Some(words) = segments.iter().find(|w| is_check(w)) {
        let text = words.join(" ");
        if let Some(command) = redact::clean(&text, MAX_COMMAND_CHARS) {
            let summary = summarise(output);
            let failed = match (&summary, exit) {
                (Some(s), _) => s.failed,
                (None, Some(code)) => code != 0,
                (None, None) => {
                    return did;
                }
            };
            let (summary, failing) = summary.map_or((None, Vec::new()), |s| (s.line, s.failing));
            did.push(Did::Check {
                command,
                outcome: Outcome {
                    failed,
                    summary: summary.and_then(|l| redact::field(&l)),
                    failing: failing.iter().filter_map(|n| redact::field(n)).collect(),
                },
            });
        }
    }
    did
}

/// The simple commands of a command line, each as its words (quotes removed), with
/// leading `VAR=value` assignments, wrappers (`time`, `env`, `timeout N`, `nice`) and
/// redirections left out.
pub fn segments(command: &str) -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = Vec::new();
    let mut words: Vec<String> = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = command.chars().peekable();
    let end_word = |words: &mut Vec<String>, word: &mut String, in_word: &mut bool| {
        if *in_word {
            words.push(std::mem::take(word));
            *in_word = false;
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                for d in chars.by_ref() {
                    if d == '\'' {
                        break;
                    }
                    word.push(d);
                }
            }
            '"' => {
                in_word = true;
                while let Some(d) = chars.next() {
                    match d {
                        '"' => break,
                        '\\' => {
                            if let Some(e) = chars.next() {
                                word.push(e);
                            }
                        }
                        _ => word.push(d),
                    }
                }
            }
            '\\' => {
                in_word = true;
                if let Some(e) = chars.next()
                    && e != '\n'
                {
                    word.push(e);
                }
            }
            ';' | '|' | '&' | '\n' | '(' | ')' => {
                // `2>&1` is a redirection, not a separator.
                if c == '&' && word.ends_with('>') {
                    word.push(c);
                    continue;
                }
                end_word(&mut words, &mut word, &mut in_word);
                if !words.is_empty() {
                    out.push(std::mem::take(&mut words));
                }
            }
            c if c.is_whitespace() => end_word(&mut words, &mut word, &mut in_word),
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    end_word(&mut words, &mut word, &mut in_word);
    if !words.is_empty() {
        out.push(words);
    }
    out.into_iter()
        .map(simple)
        .filter(|w| !w.is_empty())
        .collect()
}

/// A simple command without assignments, wrappers and redirections.
fn simple(words: Vec<String>) -> Vec<String> {
    let mut kept: Vec<String> = Vec::with_capacity(words.len());
    let mut target = false;
    for w in words {
        if std::mem::take(&mut target) {
            continue;
        }
        if is_redirection(&w) {
            // `> out.txt`: the operator alone takes the next word as its target.
            target = w
                .trim_start_matches(|c: char| c.is_ascii_digit())
                .trim_start_matches(['>', '<', '&'])
                .is_empty();
            continue;
        }
        kept.push(w);
    }
    let mut words = kept;
    loop {
        match words.first().map(String::as_str) {
            Some(w) if is_assignment(w) => {
                words.remove(0);
            }
            Some("time" | "env" | "nice" | "command" | "exec" | "sudo") => {
                words.remove(0);
            }
            Some("timeout") => {
                words.remove(0);
                while words.first().is_some_and(|w| w.starts_with('-')) {
                    words.remove(0);
                }
                if !words.is_empty() {
                    words.remove(0);
                }
            }
            _ => return words,
        }
    }
}

fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

fn is_redirection(word: &str) -> bool {
    let w = word.trim_start_matches(|c: char| c.is_ascii_digit());
    w.starts_with('>') || w.starts_with('<') || w.starts_with("&>")
}

/// Whether a simple command runs tests, a build or a linter: the commands whose
/// failures and later passes are facts. Others (`grep` finding nothing, `ls` of a
/// missing file) fail as a way of answering, and are not.
pub fn is_check(words: &[String]) -> bool {
    let w: Vec<&str> = words.iter().map(String::as_str).collect();
    let sub = |i: usize| w.get(i).copied().unwrap_or("");
    match w.first().copied().unwrap_or("") {
        "cargo" => {
            matches!(
                sub(1),
                "test" | "nextest" | "build" | "check" | "clippy" | "doc" | "bench"
            ) || (sub(1) == "fmt" && w.contains(&"--check"))
        }
        "just" | "make" | "pytest" | "jest" | "vitest" | "tsc" | "mypy" | "eslint" | "tox"
        | "nox" | "phpunit" | "rspec" | "ctest" | "mocha" | "ava" => true,
        "ruff" => sub(1) == "check",
        "go" => matches!(sub(1), "test" | "build" | "vet"),
        "python" | "python3" => sub(1) == "-m" && matches!(sub(2), "pytest" | "unittest"),
        "uv" | "poetry" | "pipenv" | "hatch" => sub(1) == "run" && is_check(&words[2..]),
        "npm" | "yarn" | "pnpm" | "bun" => {
            let script = if sub(1) == "run" { sub(2) } else { sub(1) };
            script == "test"
                || script.starts_with("test:")
                || matches!(script, "build" | "lint" | "typecheck" | "check")
        }
        "npx" | "bunx" => is_check(&words[1..]),
        "mvn" | "gradle" | "./gradlew" => w
            .iter()
            .any(|x| matches!(*x, "test" | "verify" | "build" | "check")),
        "dotnet" => matches!(sub(1), "test" | "build"),
        "bundle" => sub(1) == "exec" && is_check(&words[2..]),
        _ => false,
    }
}

/// A test runner's or compiler's summary of a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Summary {
    pub failed: bool,
    pub line: Option<String>,
    pub failing: Vec<String>,
}

/// The counts of a `test result:` line, in its order.
const CARGO_COUNTS: [&str; 5] = ["passed", "failed", "ignored", "measured", "filtered out"];

macro_rules! re {
    ($name:ident, $pattern:expr) => {
        static $name: LazyLock<Regex> =
            LazyLock::new(|| Regex::new($pattern).expect("a valid pattern"));
    };
}

re!(
    TIMING,
    r";? *(?:finished )?in [\d.]+m?s\b|\s+[\d.]+s$|\[\s*[\d.]+s\]"
);
re!(ANSI, r"\x1b\[[0-9;?]*[A-Za-z]");
re!(FAILED_COUNT, r"\b[1-9]\d* (?:failed|errors?|timed out)\b");
re!(
    NEXTEST_RESULT,
    r"(?m)^\s*Summary \[[^\]]*\] (.*\btests? run:.*)$"
);
re!(
    CARGO_COUNT,
    r"(\d+) (passed|failed|ignored|measured|filtered out)"
);
re!(CARGO_RESULT, r"(?m)^test result: (ok|FAILED)\..*$");
re!(CARGO_FAILING, r"(?m)^---- (\S+) stdout ----$");
re!(CARGO_ERROR, r"(?m)^error(\[E\d+\])?: .*$");
re!(
    PYTEST_RESULT,
    r"(?m)^=*\s*((?:\d+ \w+(?:, )?)+ in [\d.]+s(?: \([^)]*\))?|no tests ran in [\d.]+s)\s*=*$"
);
re!(PYTEST_FAILING, r"(?m)^(?:FAILED|ERROR) (\S+)");
re!(
    JEST_RESULT,
    r"(?m)^\s*Tests:?\s+(.*\b(?:passed|failed|total)\b.*)$"
);
re!(GO_FAILING, r"(?m)^\s*--- FAIL: (\S+)");
re!(GO_FAIL_PACKAGE, r"(?m)^FAIL[ \t]+(\S+)");
re!(GO_OK_PACKAGE, r"(?m)^ok[ \t]+\S+.*$");
re!(NPM_ERROR, r"(?m)^npm (?:ERR!|error) .*$");
re!(
    COMMIT_LINE,
    r"(?m)^\[(.+?) (?:\(root-commit\) )?([0-9a-f]{7,40})\] ?(.*)$"
);
re!(PUSH_TO, r"(?m)^To (\S+)$");
re!(
    PUSH_REF,
    r"(?m)^ ([ +*=!-]) (\[[^\]]+\]|\S+)\s+(\S+) -> (\S+)"
);
re!(PR_URL, r"https://[^\s/]+/[^\s/]+/[^\s/]+/pull/\d+");

/// The summary a test runner or compiler printed, if any: cargo test and nextest,
/// pytest, jest and vitest, go test, npm, rustc's `error:` lines. Timings are left out
/// of the line, so that the same failure twice reads the same.
pub fn summarise(output: &str) -> Option<Summary> {
    summary_with_timing(output).map(|mut s| {
        s.line = s
            .line
            .map(|l| TIMING.replace_all(&l, "").trim().to_string())
            .filter(|l| !l.is_empty());
        s
    })
}

fn summary_with_timing(output: &str) -> Option<Summary> {
    let names = |re: &Regex| -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for c in re.captures_iter(output) {
            let name = c[1].to_string();
            if !names.contains(&name) {
                names.push(name);
            }
            if names.len() == MAX_FAILING {
                break;
            }
        }
        names
    };
    let results: Vec<&str> = CARGO_RESULT.find_iter(output).map(|m| m.as_str()).collect();
    if !results.is_empty() {
        // One line per test binary: their counts summed.
        let failed = results.iter().any(|l| l.contains("FAILED"));
        let mut sums = [0u64; 5];
        for l in &results {
            for c in CARGO_COUNT.captures_iter(l) {
                let at = CARGO_COUNTS.iter().position(|n| *n == &c[2]).unwrap_or(0);
                sums[at] += c[1].parse::<u64>().unwrap_or(0);
            }
        }
        let counts: Vec<String> = CARGO_COUNTS
            .iter()
            .zip(sums)
            .map(|(name, n)| format!("{n} {name}"))
            .collect();
        return Some(Summary {
            failed,
            line: Some(format!(
                "test result: {}. {}",
                if failed { "FAILED" } else { "ok" },
                counts.join("; ")
            )),
            failing: names(&CARGO_FAILING),
        });
    }
    if let Some(c) = NEXTEST_RESULT.captures_iter(output).last() {
        let line = c[1].trim().to_string();
        return Some(Summary {
            failed: FAILED_COUNT.is_match(&line),
            line: Some(line),
            failing: Vec::new(),
        });
    }
    if let Some(c) = PYTEST_RESULT.captures_iter(output).last() {
        let line = c[1].to_string();
        return Some(Summary {
            failed: FAILED_COUNT.is_match(&line),
            line: Some(line),
            failing: names(&PYTEST_FAILING),
        });
    }
    if let Some(c) = JEST_RESULT.captures_iter(output).last() {
        let line = format!("Tests: {}", c[1].trim());
        return Some(Summary {
            failed: FAILED_COUNT.is_match(&line),
            line: Some(line),
            failing: Vec::new(),
        });
    }
    let go_failing = names(&GO_FAILING);
    if let Some(c) = GO_FAIL_PACKAGE.captures(output) {
        return Some(Summary {
            failed: true,
            line: Some(format!("FAIL {}", &c[1])),
            failing: go_failing,
        });
    }
    if !go_failing.is_empty() {
        return Some(Summary {
            failed: true,
            line: None,
            failing: go_failing,
        });
    }
    if let Some(m) = CARGO_ERROR.find(output) {
        return Some(Summary {
            failed: true,
            line: Some(m.as_str().to_string()),
            failing: Vec::new(),
        });
    }
    if let Some(m) = NPM_ERROR.find(output) {
        return Some(Summary {
            failed: true,
            line: Some(m.as_str().to_string()),
            failing: Vec::new(),
        });
    }
    if let Some(m) = GO_OK_PACKAGE.find_iter(output).last() {
        return Some(Summary {
            failed: false,
            line: Some(m.as_str().split_whitespace().collect::<Vec<_>>().join(" ")),
            failing: Vec::new(),
        });
    }
    None
}

/// `git commit`'s first line: `[branch hash] subject`.
fn commit_line(output: &str) -> Option<Did> {
    let c = COMMIT_LINE.captures(output)?;
    let branch = match &c[1] {
        b if b.starts_with("detached HEAD") => None,
        b => redact::field(b),
    };
    Some(Did::Commit {
        rev: c[2].to_string(),
        branch,
        subject: redact::field(&c[3]),
    })
}

/// `git push`'s report: the refs it updated (or had refused), and the remote named on
/// the command line (else the `To` line's address, else `origin`).
fn push_lines(args: &[String], output: &str) -> Option<Did> {
    let refs: Vec<Pushed> = PUSH_REF
        .captures_iter(output)
        .map(|c| Pushed {
            branch: c[4].trim_start_matches("refs/heads/").to_string(),
            rev: c[2]
                .rsplit("..")
                .next()
                .filter(|r| !r.starts_with('['))
                .map(|r| r.trim_start_matches('.').to_string()),
            rejected: &c[1] == "!",
        })
        .collect();
    if refs.is_empty() {
        return None;
    }
    let named = args
        .iter()
        .skip_while(|w| *w != "push")
        .skip(1)
        .find(|w| !w.starts_with('-'));
    let remote = match named {
        Some(r) => r.clone(),
        None => PUSH_TO
            .captures(output)
            .map_or_else(|| "origin".to_string(), |c| c[1].to_string()),
    };
    Some(Did::Push {
        remote: redact::field(&remote).unwrap_or_else(|| "a remote".to_string()),
        refs,
    })
}

/// The value of a flag (`--title X`, `--title=X`, `-t X`) among the words.
fn flag_value(words: &[String], names: &[&str]) -> Option<String> {
    let mut it = words.iter();
    while let Some(w) = it.next() {
        for n in names {
            if w == n {
                return it.next().cloned();
            }
            if let Some(v) = w.strip_prefix(&format!("{n}=")) {
                return Some(v.to_string());
            }
        }
    }
    None
}

#[cfg(test)]
mod tests;
