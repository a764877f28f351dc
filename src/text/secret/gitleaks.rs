//! gitleaks' maintained rule set, run as gitleaks runs it.
//!
//! `gitleaks.json` is gitleaks' default configuration (`config/gitleaks.toml`, MIT),
//! converted by `scripts/vendor-gitleaks`; `gitleaks-NOTICE.md` names its commit and
//! checksum and carries the licence. It is parsed once, the first time a text is scanned.
//!
//! Semantics kept from gitleaks (`detect/detect.go`):
//!
//! - **keywords**: a rule runs only if the text, lower-cased, contains one of its
//!   keywords; all keywords are looked for in one pass (Aho–Corasick), and a rule's regex
//!   is compiled the first time one of its keywords occurs;
//! - **secret**: the rule's `secretGroup`, else its first non-empty capture group, else
//!   the whole match;
//! - **entropy**: a finding whose secret has Shannon entropy at or below the rule's
//!   `entropy` is dropped;
//! - **allowlists**: the global allowlist and the rule's own (regexes on the secret, the
//!   match or the line; stop words in the secret; `OR` or `AND`) drop a finding.
//!
//! The regexes are Go RE2 syntax. They are compiled as byte regexes without Unicode
//! classes, which is what Go's `\w`, `\s`, `\b` and `(?i)` mean; the few that Rust's
//! `regex` rejects are skipped and listed by a test (`SKIPPED`).
//!
//! mem7's own choices on top: the rules in [`LEFT_OUT`] are not run (with the reason),
//! rules of gitleaks' `name = value` template do not run on the joined-lines view (joining
//! lines makes up assignments nobody wrote, as for mem7's own assignment rule), and rules
//! that gitleaks limits to a file path (`*.tf`, `nuget.config`) run on any text, since a
//! fact has no path: it may be a line copied from such a file.

use std::sync::{LazyLock, OnceLock};

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};
use regex::bytes::{Regex, RegexBuilder};
use serde::Deserialize;

use super::Pass;
use super::assign::entropy;

/// The vendored rules (see `gitleaks-NOTICE.md`).
const DATA: &str = include_str!("gitleaks.json");

/// Rules of the vendored set that mem7 does not run, and why.
pub(super) const LEFT_OUT: &[(&str, &str)] = &[
    (
        "generic-api-key",
        "mem7's own assignment rule (assign.rs) covers `name = value` with no false alarm \
         on the ordinary catalogue; this rule raised 4 there (paging tokens and cursors, a \
         commit id after `key …:`)",
    ),
    (
        "asana-client-id",
        "an OAuth client id is not a secret, and Asana's task and project ids have the \
         same 16-digit shape (`Asana project: 1206543210987654`)",
    ),
    (
        "discord-client-id",
        "an OAuth client id is not a secret, and every Discord user, channel and message \
         id has the same 18-digit shape",
    ),
];

/// Allowlists mem7 adds to a rule (regexes on the secret), and why: the narrowing that
/// keeps ordinary facts from being refused.
pub(super) const NARROWED: &[(&str, &str, &str)] = &[(
    "sourcegraph-access-token",
    r"^[0-9a-fA-F]{40}$",
    "its legacy form is a bare 40-hex value, which is what a git commit id or a SHA-1 \
     looks like: a fact naming Sourcegraph and a commit was refused. `sgp_…` tokens are \
     still found",
)];

/// Rules whose regex Rust's `regex` crate cannot compile (Go-only syntax); the test
/// `gitleaks_rules_compile` keeps this list exact.
pub(super) const SKIPPED: &[&str] = &[];

/// The part of gitleaks' generated `name = value` rules that says "an assignment".
const ASSIGNMENT_TEMPLATE: &str = r#"(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)"#;

#[derive(Deserialize)]
struct Data {
    source: Source,
    allowlist: AllowlistData,
    rules: Vec<RuleData>,
}

/// Where the vendored rules come from.
#[derive(Deserialize)]
#[cfg_attr(not(test), expect(dead_code, reason = "checked by the tests"))]
pub(super) struct Source {
    pub(super) commit: String,
    pub(super) version: String,
    pub(super) sha256: String,
}

#[derive(Deserialize)]
struct RuleData {
    id: String,
    regex: String,
    #[serde(default)]
    keywords: Vec<String>,
    #[serde(default)]
    entropy: f64,
    #[serde(default, rename = "secretGroup")]
    secret_group: usize,
    #[serde(default)]
    allowlists: Vec<AllowlistData>,
}

#[derive(Deserialize)]
struct AllowlistData {
    #[serde(default)]
    regexes: Vec<String>,
    #[serde(default)]
    stopwords: Vec<String>,
    #[serde(default, rename = "regexTarget")]
    target: Target,
    #[serde(default)]
    condition: Condition,
}

/// What an allowlist's regexes are matched against.
#[derive(Deserialize, Default, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
enum Target {
    #[default]
    Secret,
    Match,
    Line,
}

#[derive(Deserialize, Default, Clone, Copy, PartialEq, Eq)]
enum Condition {
    #[default]
    #[serde(rename = "OR")]
    Or,
    #[serde(rename = "AND")]
    And,
}

/// The parsed rule set, with its keyword automaton.
pub(super) struct Catalogue {
    #[cfg_attr(not(test), expect(dead_code, reason = "checked by the tests"))]
    pub(super) source: Source,
    pub(super) rules: Vec<GitleaksRule>,
    global: Allowlist,
    keywords: AhoCorasick,
    /// The rules of each keyword (by the automaton's pattern id).
    keyword_rules: Vec<Vec<usize>>,
    /// Rules without keywords, which always run.
    always: Vec<usize>,
}

pub(super) struct GitleaksRule {
    #[cfg_attr(not(test), expect(dead_code, reason = "named by the tests"))]
    pub(super) id: String,
    /// The name given in a finding: `gitleaks rule <id>`.
    kind: String,
    pub(super) pattern: String,
    regex: OnceLock<Option<Regex>>,
    entropy: f64,
    secret_group: usize,
    allowlists: Vec<Allowlist>,
    /// Runs on the joined-lines view too.
    joined: bool,
    /// Not in [`LEFT_OUT`] or [`SKIPPED`].
    #[cfg_attr(not(test), expect(dead_code, reason = "checked by the tests"))]
    pub(super) runs: bool,
}

pub(super) struct Allowlist {
    patterns: Vec<String>,
    regexes: OnceLock<Vec<Regex>>,
    stopwords: Vec<String>,
    stopword_automaton: OnceLock<Option<AhoCorasick>>,
    target: Target,
    condition: Condition,
}

pub(super) static CATALOGUE: LazyLock<Catalogue> = LazyLock::new(load);

fn load() -> Catalogue {
    // The data is vendored and checked by the tests: a failure is a bug in the build.
    let data: Data = serde_json::from_str(DATA).expect("gitleaks.json parses");
    let mut words: Vec<String> = Vec::new();
    let mut keyword_rules: Vec<Vec<usize>> = Vec::new();
    let mut always = Vec::new();
    let mut rules = Vec::with_capacity(data.rules.len());
    for (i, r) in data.rules.into_iter().enumerate() {
        let runs = !LEFT_OUT.iter().any(|(id, _)| *id == r.id) && !SKIPPED.contains(&r.id.as_str());
        if runs {
            if r.keywords.is_empty() {
                always.push(i);
            }
            for k in &r.keywords {
                let k = k.to_ascii_lowercase();
                match words.iter().position(|w| *w == k) {
                    Some(at) => keyword_rules[at].push(i),
                    None => {
                        words.push(k);
                        keyword_rules.push(vec![i]);
                    }
                }
            }
        }
        let mut allowlists: Vec<Allowlist> = r.allowlists.into_iter().map(Allowlist::new).collect();
        for (id, regex, _) in NARROWED {
            if *id == r.id {
                allowlists.push(Allowlist::new(AllowlistData {
                    regexes: vec![(*regex).to_owned()],
                    stopwords: Vec::new(),
                    target: Target::Secret,
                    condition: Condition::Or,
                }));
            }
        }
        rules.push(GitleaksRule {
            kind: format!("gitleaks rule {}", r.id),
            joined: !r.regex.contains(ASSIGNMENT_TEMPLATE),
            id: r.id,
            pattern: r.regex,
            regex: OnceLock::new(),
            entropy: r.entropy,
            secret_group: r.secret_group,
            allowlists,
            runs,
        });
    }
    let keywords = AhoCorasick::builder()
        .ascii_case_insensitive(true)
        .match_kind(MatchKind::Standard)
        // A contiguous NFA builds in a third of the time of a DFA (0.7 ms against 2.4)
        // and searches a 100-byte fact in 0.4 µs against 0.25: most processes (one CLI
        // command) scan a few texts.
        .kind(Some(AhoCorasickKind::ContiguousNFA))
        .build(&words)
        .expect("keyword automaton builds");
    Catalogue {
        source: data.source,
        rules,
        global: Allowlist::new(data.allowlist),
        keywords,
        keyword_rules,
        always,
    }
}

/// Compiles a gitleaks (Go RE2) pattern: bytes, ASCII classes, as Go reads them.
pub(super) fn compile_go(pattern: &str) -> Result<Regex, regex::Error> {
    RegexBuilder::new(pattern)
        .unicode(false)
        .size_limit(1 << 24)
        .build()
}

impl GitleaksRule {
    /// The compiled regex, `None` if Rust cannot compile it.
    pub(super) fn regex(&self) -> Option<&Regex> {
        self.regex
            .get_or_init(|| compile_go(&self.pattern).ok())
            .as_ref()
    }

    /// The start of the first match that survives the entropy check and the allowlists.
    pub(super) fn first_finding(&self, text: &str, global: &Allowlist) -> Option<usize> {
        let re = self.regex()?;
        let b = text.as_bytes();
        for caps in re.captures_iter(b) {
            let whole = caps.get(0)?;
            let matched = trim_newlines(whole.as_bytes());
            let secret = if self.secret_group > 0 {
                caps.get(self.secret_group).map(|m| m.as_bytes())
            } else {
                caps.iter()
                    .skip(1)
                    .flatten()
                    .map(|m| m.as_bytes())
                    .find(|s| !s.is_empty())
            }
            .unwrap_or(matched);
            if self.entropy != 0.0 && entropy(secret) <= self.entropy {
                continue;
            }
            let line = line_around(b, whole.start(), whole.end());
            let found = Found {
                secret,
                matched,
                line,
            };
            if global.allows(&found) || self.allowlists.iter().any(|a| a.allows(&found)) {
                continue;
            }
            return Some(whole.start());
        }
        None
    }
}

/// What an allowlist looks at.
pub(super) struct Found<'a> {
    secret: &'a [u8],
    matched: &'a [u8],
    line: &'a [u8],
}

impl Allowlist {
    fn new(data: AllowlistData) -> Allowlist {
        Allowlist {
            patterns: data.regexes,
            regexes: OnceLock::new(),
            stopwords: data.stopwords,
            stopword_automaton: OnceLock::new(),
            target: data.target,
            condition: data.condition,
        }
    }

    fn allows(&self, found: &Found) -> bool {
        let target = match self.target {
            Target::Secret => found.secret,
            Target::Match => found.matched,
            Target::Line => found.line,
        };
        let regex = || {
            self.regexes
                .get_or_init(|| {
                    // An allowlist regex Rust cannot compile allows nothing.
                    self.patterns
                        .iter()
                        .filter_map(|p| compile_go(p).ok())
                        .collect()
                })
                .iter()
                .any(|re| re.is_match(target))
        };
        let stopword = || {
            self.stopword_automaton
                .get_or_init(|| {
                    (!self.stopwords.is_empty()).then(|| {
                        AhoCorasick::builder()
                            .ascii_case_insensitive(true)
                            .build(&self.stopwords)
                            .expect("stop word automaton builds")
                    })
                })
                .as_ref()
                .is_some_and(|ac| ac.is_match(found.secret))
        };
        match self.condition {
            Condition::Or => regex() || stopword(),
            Condition::And => regex() && stopword(),
        }
    }
}

/// gitleaks trims line breaks off a match before it is judged.
fn trim_newlines(b: &[u8]) -> &[u8] {
    let start = b.iter().position(|&c| c != b'\n').unwrap_or(b.len());
    let end = b.iter().rposition(|&c| c != b'\n').map_or(start, |e| e + 1);
    &b[start..end]
}

/// The lines a match spans, without their line breaks.
fn line_around(b: &[u8], start: usize, end: usize) -> &[u8] {
    let from = b[..start]
        .iter()
        .rposition(|&c| c == b'\n')
        .map_or(0, |i| i + 1);
    let to = b[end..]
        .iter()
        .position(|&c| c == b'\n')
        .map_or(b.len(), |i| end + i);
    &b[from..to.max(from)]
}

/// The earliest finding of a gitleaks rule in one view of a text.
pub(super) fn find_gitleaks(text: &str, pass: Pass) -> Option<(&'static str, usize)> {
    let cat: &'static Catalogue = &CATALOGUE;
    let mut due = vec![0u64; cat.rules.len().div_ceil(64)];
    for m in cat.keywords.find_overlapping_iter(text) {
        for &r in &cat.keyword_rules[m.pattern().as_usize()] {
            due[r / 64] |= 1 << (r % 64);
        }
    }
    for &r in &cat.always {
        due[r / 64] |= 1 << (r % 64);
    }
    let mut best: Option<(&'static str, usize)> = None;
    for (word, bits) in due.iter().enumerate() {
        let mut bits = *bits;
        while bits != 0 {
            let r = word * 64 + bits.trailing_zeros() as usize;
            bits &= bits - 1;
            let rule = &cat.rules[r];
            if pass == Pass::Joined && !rule.joined {
                continue;
            }
            if let Some(at) = rule.first_finding(text, &cat.global)
                && best.is_none_or(|(_, b)| at < b)
            {
                best = Some((rule.kind.as_str(), at));
            }
        }
    }
    best
}

/// The global allowlist (for tests that run one rule).
#[cfg(test)]
pub(super) fn global() -> &'static Allowlist {
    &CATALOGUE.global
}
