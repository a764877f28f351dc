//! Events become writes: the key each kind goes under, its tags, its value, and the
//! rule that folds a write into what the key already holds ([`decide`]), so that the
//! same event seen twice (a retried hook; a commit seen by git's hook and by the
//! agent's shell) writes once, and a list (the files a session touched) grows in one
//! fact instead of one per edit.
//!
//! | kind | key | scope |
//! |---|---|---|
//! | sessions | `local:session:<id>` | local |
//! | files | `local:session:<id>:files` | local |
//! | subagents | `local:session:<id>:task:<task>` | local |
//! | commands | `local:checkout:<checkout>:check:<command>` | local |
//! | branches | `local:checkout:<checkout>:branch` | local |
//! | merges (fast-forward) | `local:checkout:<checkout>:fast-forward` | local |
//! | commits, merges | `git:commit:<hash12>` | project (`local:git:…` unshared) |
//! | pushes | `git:push:<remote>/<branch>` | project |
//! | prs | `git:pr:<host>/<owner>/<repo>/pull/<n>` | project |

use super::{Client, Commit, Event, Kind, Settings, TAG, Task, TaskState, redact, shell};
use crate::core::Version;

/// The most items a list value names (the count goes on).
pub const MAX_ITEMS: usize = 40;

/// Where an event was seen: by which client, in which session and checkout, when.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Origin {
    pub client: Client,
    pub session: Option<String>,
    pub checkout: Checkout,
    /// The branch the checkout is on, when the hook asked git.
    pub branch: Option<String>,
    /// Microseconds since the epoch.
    pub now: i64,
}

/// A checkout: a work tree on this machine, named in tags by a hash of its path (the
/// path itself stays in the local scope's values).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checkout {
    pub path: String,
    pub id: String,
}

impl Checkout {
    pub fn new(path: &str) -> Checkout {
        let hash = blake3::hash(path.as_bytes()).to_hex();
        Checkout {
            path: path.to_string(),
            id: hash[..10].to_string(),
        }
    }

    /// The tag every captured fact of this checkout carries.
    pub fn tag(&self) -> String {
        format!("checkout:{}", self.id)
    }

    /// A path as a fact names it: relative to the checkout when inside it.
    pub fn relative(&self, path: &str) -> String {
        let root = self.path.trim_end_matches('/');
        match path.strip_prefix(root).and_then(|p| p.strip_prefix('/')) {
            Some(rel) if !rel.is_empty() => rel.to_string(),
            _ => path.to_string(),
        }
    }
}

/// One write a captured event asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Write {
    pub kind: Kind,
    pub key: String,
    pub tags: Vec<String>,
    /// When it happened (the valid time it starts at), microseconds since the epoch.
    pub at: i64,
    pub rule: Rule,
}

/// How a write folds into what its key holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Rule {
    /// An event that happens once (a commit, a pull request): a later report of it
    /// changes nothing.
    Once(String),
    /// The state now (a check's, a push's, the branch's): written unless it holds
    /// already, or a later state was recorded; with `after`, only when the state held
    /// starts with it (a pass is a fact only after a failure).
    State {
        value: String,
        after: Option<String>,
    },
    /// A list that grows (the files a session touched): the items not yet named are
    /// added, keeping the fact's start.
    Grow { title: String, items: Vec<String> },
    /// An end added to a fact (a session's): once; `base` stands in for a start
    /// never seen.
    End { base: String, end: String },
    /// A subagent task's state; a report without a description keeps the one known.
    Task {
        state: TaskState,
        agent: Option<String>,
        description: Option<String>,
        summary: Option<String>,
    },
}

/// The writes `events` ask for, of the kinds `settings` captures.
pub fn writes(events: &[Event], origin: &Origin, settings: &Settings) -> Vec<Write> {
    let mut w = Writes {
        origin,
        settings,
        session: origin.session.as_deref(),
        share: if settings.share { "" } else { "local:" },
        client: origin.client.as_str(),
        place: redact::field(&origin.checkout.path).unwrap_or_else(|| "a checkout".into()),
        out: Vec::new(),
    };
    for event in events {
        match event {
            Event::SessionStart { .. } => w.session_start(),
            Event::SessionEnd { reason } => w.session_end(reason.as_deref()),
            Event::Touched { path } => w.touched(path),
            Event::Task(task) => w.task(task),
            Event::Shell(shell::Did::Check { command, outcome }) => w.check(command, outcome),
            Event::Shell(shell::Did::Push { remote, refs }) => w.pushes(remote, refs),
            Event::Shell(shell::Did::PullRequest { url, title }) => {
                w.pull_request(url, title.as_deref())
            }
            Event::Commit(c) => w.commit(c),
            Event::Branch { branch } => w.branch(branch),
            Event::FastForward {
                branch,
                to,
                commits,
            } => w.fast_forward(branch, to, *commits),
            // What the hook's shell resolves with git first (a commit named by its
            // output, a merge, a switch) arrives as Commit and Branch events.
            Event::Shell(shell::Did::Commit { .. } | shell::Did::Merge | shell::Did::Switch) => {}
        }
    }
    w.out
}

/// The writes of one batch of events, gathered event by event: one method per event.
struct Writes<'a> {
    origin: &'a Origin,
    settings: &'a Settings,
    session: Option<&'a str>,
    /// The key prefix of facts the settings share (`local:` when they do not).
    share: &'static str,
    client: &'a str,
    /// The checkout's path, as people read it.
    place: String,
    out: Vec<Write>,
}

/// The first 8 characters of a session id.
fn short(s: &str) -> String {
    s.chars().take(8).collect::<String>()
}

impl Writes<'_> {
    /// Adds a write of a kind the settings capture, under a valid key.
    fn push(&mut self, kind: Kind, key: String, tags: Vec<String>, at: i64, rule: Rule) {
        if self.settings.captures(kind) && crate::core::validate::key(&key).is_ok() {
            self.out.push(Write {
                kind,
                key,
                tags,
                at,
                rule,
            });
        }
    }

    /// The tags of a fact about the checkout.
    fn checkout_tags(&self, kind: Kind) -> Vec<String> {
        vec![
            TAG.to_string(),
            kind.as_str().to_string(),
            self.origin.checkout.tag(),
        ]
    }

    /// The tags of a fact about session `sid`.
    fn session_tags(&self, kind: Kind, sid: &str) -> Vec<String> {
        let mut t = self.checkout_tags(kind);
        t.push(format!("session:{sid}"));
        t
    }

    /// The fact "on branch …" of the checkout.
    fn branch(&mut self, branch: &str) {
        self.push(
            Kind::Branches,
            format!("local:checkout:{}:branch", self.origin.checkout.id),
            self.checkout_tags(Kind::Branches),
            self.origin.now,
            Rule::State {
                value: format!("on branch {branch}"),
                after: None,
            },
        );
    }

    /// A session started: the session's fact, and the branch it started on.
    fn session_start(&mut self) {
        let Some(sid) = self.session else { return };
        let origin = self.origin;
        let branch = origin
            .branch
            .as_deref()
            .map_or(String::new(), |b| format!(" on branch {b}"));
        let value = format!(
            "{} session {} in {}{branch}, started {}",
            self.client,
            short(sid),
            self.place,
            stamp(origin.now)
        );
        self.push(
            Kind::Sessions,
            format!("local:session:{sid}"),
            self.session_tags(Kind::Sessions, sid),
            origin.now,
            Rule::Once(value),
        );
        if let Some(b) = &origin.branch {
            self.branch(b);
        }
    }

    /// A session ended: its fact gains its end.
    fn session_end(&mut self, reason: Option<&str>) {
        let Some(sid) = self.session else { return };
        let why = reason.map_or(String::new(), |r| format!(" ({r})"));
        let rule = Rule::End {
            base: format!("{} session {} in {}", self.client, short(sid), self.place),
            end: format!("; ended {}{why}", stamp(self.origin.now)),
        };
        self.push(
            Kind::Sessions,
            format!("local:session:{sid}"),
            self.session_tags(Kind::Sessions, sid),
            self.origin.now,
            rule,
        );
    }

    /// A file edited or written: the session's list of files grows.
    fn touched(&mut self, path: &str) {
        let Some(sid) = self.session else { return };
        let Some(path) = redact::field(&self.origin.checkout.relative(path)) else {
            return;
        };
        let title = format!(
            "files edited or written in {} session {}",
            self.client,
            short(sid)
        );
        self.push(
            Kind::Files,
            format!("local:session:{sid}:files"),
            self.session_tags(Kind::Files, sid),
            self.origin.now,
            Rule::Grow {
                title,
                items: vec![path],
            },
        );
    }

    /// A subagent's task: its fact in the session.
    fn task(&mut self, task: &Task) {
        let Some(sid) = self.session else { return };
        self.push(
            Kind::Subagents,
            format!("local:session:{sid}:task:{}", task.id),
            self.session_tags(Kind::Subagents, sid),
            self.origin.now,
            task_rule(task),
        );
    }

    /// A check command ran: it is failing, or passing again.
    fn check(&mut self, command: &str, outcome: &shell::Outcome) {
        let key = format!(
            "local:checkout:{}:check:{}",
            self.origin.checkout.id,
            command_slug(command)
        );
        let mut tags = self.checkout_tags(Kind::Commands);
        if let Some(sid) = self.session {
            tags.push(format!("session:{sid}"));
        }
        let mut detail = outcome
            .summary
            .clone()
            .map_or(String::new(), |s| format!(" — {s}"));
        if !outcome.failing.is_empty() {
            detail.push_str(&format!("; failing: {}", outcome.failing.join(", ")));
        }
        let rule = if outcome.failed {
            Rule::State {
                value: format!("failing: `{command}`{detail}"),
                after: None,
            }
        } else {
            Rule::State {
                value: format!("passing again: `{command}`{detail}"),
                after: Some("failing:".into()),
            }
        };
        self.push(Kind::Commands, key, tags, self.origin.now, rule);
    }

    /// A push: where each pushed branch stands on the remote.
    fn pushes(&mut self, remote: &str, refs: &[shell::Pushed]) {
        for r in refs {
            let Some(branch) = redact::field(&r.branch) else {
                continue;
            };
            let value = match (&r.rev, r.rejected) {
                (_, true) => format!("push of {branch} to {remote} rejected"),
                (Some(rev), false) => format!("{remote}/{branch} at {}", abbrev(rev)),
                (None, false) => format!("{remote}/{branch} pushed"),
            };
            self.push(
                Kind::Pushes,
                format!(
                    "{}git:push:{}/{}",
                    self.share,
                    key_word(remote),
                    key_word(&branch)
                ),
                self.checkout_tags(Kind::Pushes),
                self.origin.now,
                Rule::State { value, after: None },
            );
        }
    }

    /// A pull request opened.
    fn pull_request(&mut self, url: &str, title: Option<&str>) {
        let Some(url) = redact::field(url) else {
            return;
        };
        let path = url.trim_start_matches("https://");
        let title = title.map_or(String::new(), |t| format!(": {t}"));
        let branch = self
            .origin
            .branch
            .as_deref()
            .map_or(String::new(), |b| format!(" (from {b})"));
        self.push(
            Kind::Prs,
            format!("{}git:pr:{path}", self.share),
            self.checkout_tags(Kind::Prs),
            self.origin.now,
            Rule::Once(format!("opened pull request {url}{title}{branch}")),
        );
    }

    /// A commit (a merge when it has two parents or more).
    fn commit(&mut self, c: &Commit) {
        let kind = if c.parents >= 2 {
            Kind::Merges
        } else {
            Kind::Commits
        };
        self.push(
            kind,
            format!("{}git:commit:{}", self.share, abbrev(&c.hash)),
            self.checkout_tags(kind),
            // The commit's own time, unless a clock ahead of this one made it.
            c.time.min(self.origin.now),
            Rule::Once(commit_value(c)),
        );
    }

    /// A branch fast-forwarded.
    fn fast_forward(&mut self, branch: &str, to: &str, commits: usize) {
        self.push(
            Kind::Merges,
            format!("local:checkout:{}:fast-forward", self.origin.checkout.id),
            self.checkout_tags(Kind::Merges),
            self.origin.now,
            Rule::State {
                value: format!(
                    "{branch} fast-forwarded to {} ({commits} commit{})",
                    abbrev(to),
                    if commits == 1 { "" } else { "s" }
                ),
                after: None,
            },
        );
    }
}

fn task_rule(task: &Task) -> Rule {
    Rule::Task {
        state: task.state,
        agent: task.agent.clone(),
        description: task.description.clone(),
        summary: task.summary.clone(),
    }
}

/// A commit's value: its short hash, branch, subject and files.
pub fn commit_value(c: &Commit) -> String {
    let mut v = if c.parents >= 2 {
        format!("merge {}", abbrev(&c.hash))
    } else {
        abbrev(&c.hash).to_string()
    };
    if let Some(b) = &c.branch {
        v.push_str(&format!(" on {b}"));
    }
    v.push_str(": ");
    v.push_str(c.subject.as_deref().unwrap_or("(subject not kept)"));
    if let Some(old) = &c.rewrote {
        v.push_str(&format!(" (rewrites {})", abbrev(old)));
    }
    if c.file_count > 0 {
        let more = c.file_count.saturating_sub(c.files.len());
        v.push_str(&format!(
            " — {} file{}: {}{}",
            c.file_count,
            if c.file_count == 1 { "" } else { "s" },
            c.files.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        ));
    }
    v
}

/// The first 12 characters of a hash.
pub fn abbrev(hash: &str) -> &str {
    &hash[..hash.len().min(12)]
}

/// A word of a key made from free text: key characters kept, others `-`, at most 60.
fn key_word(text: &str) -> String {
    let w: String = text
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || "_-.@+".contains(c) {
                c
            } else {
                '-'
            }
        })
        .take(60)
        .collect();
    let w = w.trim_matches('-').to_string();
    if w.is_empty() { "-".into() } else { w }
}

/// A command as the last part of a key: its first words, and a hash of the whole so
/// that two commands alike in their first words stay apart.
pub fn command_slug(command: &str) -> String {
    let words: Vec<String> = command.split_whitespace().take(4).map(key_word).collect();
    let hash = blake3::hash(command.as_bytes()).to_hex();
    format!("{}-{}", words.join("-"), &hash[..6])
}

/// An instant for a value: RFC 3339 to the second.
pub fn stamp(micros: i64) -> String {
    chrono::DateTime::from_timestamp_micros(micros)
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
        .unwrap_or_else(|| micros.to_string())
}

/// What to store for `rule` happening `at`, given the versions its key holds: the value
/// and its valid start, or `None` when nothing changes (the event was seen already, or
/// a later state stands).
pub fn decide(rule: &Rule, at: i64, believed: &[Version]) -> Option<(String, i64)> {
    let latest = believed.iter().max_by_key(|v| (v.valid_from, v.tx_from));
    let start = |fallback: i64| latest.map_or(fallback, |v| v.valid_from.micros());
    match rule {
        Rule::Once(value) => believed.is_empty().then(|| (value.clone(), at)),
        Rule::State { value, after } => {
            if let Some(prefix) = after
                && !latest.is_some_and(|v| v.value.starts_with(prefix.as_str()))
            {
                return None;
            }
            match latest {
                Some(v) if v.value == *value || at < v.valid_from.micros() => None,
                _ => Some((value.clone(), at)),
            }
        }
        Rule::Grow { title, items } => {
            let (mut total, mut listed) = latest.map_or((0, Vec::new()), |v| parse_list(&v.value));
            let mut added = false;
            for item in items {
                if listed.contains(item) {
                    continue;
                }
                added = true;
                total += 1;
                if listed.len() < MAX_ITEMS {
                    listed.push(item.clone());
                }
            }
            added.then(|| (render_list(title, total, &listed), start(at)))
        }
        Rule::End { base, end } => match latest {
            Some(v) if v.value.contains("; ended ") => None,
            Some(v) => Some((format!("{}{end}", v.value), start(at))),
            None => Some((format!("{base}{end}"), at)),
        },
        Rule::Task {
            state,
            agent,
            description,
            summary,
        } => {
            let known = latest.and_then(|v| task_description(&v.value));
            let description = description.clone().or(known);
            let value = task_value(
                *state,
                agent.as_deref(),
                description.as_deref(),
                summary.as_deref(),
            );
            match latest {
                Some(v) if v.value == value => None,
                // A late "running" never undoes an end already recorded.
                Some(v) if *state == TaskState::Running && !v.value.starts_with("running") => None,
                _ => Some((value, at)),
            }
        }
    }
}

/// A task's value: `running: Explore subagent — Map the parser`, then `done: … → what
/// it found`.
pub fn task_value(
    state: TaskState,
    agent: Option<&str>,
    description: Option<&str>,
    summary: Option<&str>,
) -> String {
    let word = match state {
        TaskState::Running => "running",
        TaskState::Done => "done",
        TaskState::Failed => "failed",
    };
    let mut v = format!("{word}: {} subagent", agent.unwrap_or("a"));
    if let Some(d) = description {
        v.push_str(&format!(" — {d}"));
    }
    if let Some(s) = summary {
        v.push_str(&format!(" → {s}"));
    }
    v
}

fn task_description(value: &str) -> Option<String> {
    let (_, rest) = value.split_once(" — ")?;
    Some(rest.split(" → ").next().unwrap_or(rest).to_string())
}

/// A list value: `title (n):` and one `- item` line per item named.
pub fn render_list(title: &str, total: usize, items: &[String]) -> String {
    let mut v = format!("{title} ({total}):");
    for i in items {
        v.push_str(&format!("\n- {i}"));
    }
    if total > items.len() {
        v.push_str(&format!("\n- … and {} more", total - items.len()));
    }
    v
}

/// [`render_list`]'s count and items, read back.
pub fn parse_list(value: &str) -> (usize, Vec<String>) {
    let mut lines = value.lines();
    let total = lines
        .next()
        .and_then(|l| l.strip_suffix("):"))
        .and_then(|l| l.rsplit_once(" ("))
        .and_then(|(_, n)| n.parse().ok())
        .unwrap_or(0);
    let items: Vec<String> = lines
        .filter_map(|l| l.strip_prefix("- "))
        .filter(|l| !l.starts_with("… and "))
        .map(str::to_string)
        .collect();
    (total.max(items.len()), items)
}

#[cfg(test)]
mod tests;
