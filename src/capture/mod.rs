//! Capture: what an agent and git already did, turned into facts by rules with no model
//! (docs/capture.md). A hook's JSON becomes [`Event`]s (`payload.rs`, the
//! one module that knows the clients' wire shapes), a shell command and its output are
//! read by `shell.rs`, events become [`facts::Write`]s with their keys, tags and the
//! rule that folds each into what its key holds (`facts.rs`), and the next session's
//! block reads them back as "where this checkout left off" (`trail.rs`). With a chat
//! model configured, `turn.rs` reads a turn's text and the model's facts. Every string
//! passes `redact.rs` first: private text and credentials never get through.
//!
//! Pure: nothing here reads the clock, the environment or a file, or runs git. The
//! shell that does (spooling, the writers' lock, asking git about a commit) is
//! `front/capture.rs`.

pub mod facts;
pub mod payload;
pub mod redact;
pub mod shell;
pub mod trail;
pub mod turn;

/// The tag every captured fact carries.
pub const TAG: &str = "captured";

/// Whether a version is a captured one (the context block shows those in its own
/// section, not among the facts a person stored).
pub fn is_captured(v: &crate::core::Version) -> bool {
    v.tags.iter().any(|t| t == TAG)
}

/// Who sent an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Client {
    ClaudeCode,
    Codex,
    Git,
}

impl Client {
    /// The word in commands (`mem7 hook claude-code`), values and agent names.
    pub fn as_str(self) -> &'static str {
        match self {
            Client::ClaudeCode => "claude-code",
            Client::Codex => "codex",
            Client::Git => "git",
        }
    }
}

/// The kinds of captured facts; each can be turned off (`capture:` in mem7.yaml).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    Sessions,
    Files,
    Commands,
    Commits,
    Merges,
    Pushes,
    Branches,
    Prs,
    Subagents,
    /// Facts a chat model drew from a turn (only with `capture.model` set).
    Turns,
}

impl Kind {
    pub const ALL: [Kind; 10] = [
        Kind::Sessions,
        Kind::Files,
        Kind::Commands,
        Kind::Commits,
        Kind::Merges,
        Kind::Pushes,
        Kind::Branches,
        Kind::Prs,
        Kind::Subagents,
        Kind::Turns,
    ];

    /// The word in `capture:` settings and in the kind's tag.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Sessions => "sessions",
            Kind::Files => "files",
            Kind::Commands => "commands",
            Kind::Commits => "commits",
            Kind::Merges => "merges",
            Kind::Pushes => "pushes",
            Kind::Branches => "branches",
            Kind::Prs => "prs",
            Kind::Subagents => "subagents",
            Kind::Turns => "turns",
        }
    }

    /// Reads the word; `None` for anything else.
    pub fn parse(word: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.as_str() == word)
    }

    /// Whether the kind is about the project (shared through its workspace when
    /// sharing is on) rather than a person's session trail (always local).
    pub fn is_project_fact(self) -> bool {
        matches!(
            self,
            Kind::Commits | Kind::Merges | Kind::Pushes | Kind::Prs
        )
    }
}

/// Which kinds are captured, and whether project facts go to the project's scope.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    pub off: Vec<Kind>,
    /// Project facts (commits, merges, pushes, pull requests) go to the project scope;
    /// off: they stay in the local scope with the session trail.
    pub share: bool,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            off: Vec::new(),
            share: true,
        }
    }
}

impl Settings {
    pub fn captures(&self, kind: Kind) -> bool {
        !self.off.contains(&kind)
    }

    /// These settings narrowed by `other`'s: a kind either turns off is off, and
    /// sharing needs both. A project's settings can only narrow the user's.
    pub fn narrowed(&self, other: &Settings) -> Settings {
        let mut off = self.off.clone();
        for k in &other.off {
            if !off.contains(k) {
                off.push(*k);
            }
        }
        off.sort();
        Settings {
            off,
            share: self.share && other.share,
        }
    }
}

/// One thing that happened, as the rules read it from a hook.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// A session started (`source`: startup, resume, clear, compact).
    SessionStart { source: Option<String> },
    /// A session ended (`reason`: the client's word).
    SessionEnd { reason: Option<String> },
    /// A file was edited or written (its path as the client gave it).
    Touched { path: String },
    /// What a shell command did.
    Shell(shell::Did),
    /// A subagent task: started, finished or failed.
    Task(Task),
    /// A commit, as git describes it (asked by the hook, not parsed from an agent's
    /// output).
    Commit(Commit),
    /// The checkout is on `branch` now (after a switch, or at a session's start).
    Branch { branch: String },
    /// A merge or pull moved `branch` forward without a merge commit.
    FastForward {
        branch: String,
        to: String,
        commits: usize,
    },
}

/// A subagent task.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Task {
    /// The client's id for it (the agent's id, else the tool call's).
    pub id: String,
    /// The kind of subagent (`Explore`, `general-purpose`).
    pub agent: Option<String>,
    pub description: Option<String>,
    pub state: TaskState,
    /// The first line of its answer or error, bounded.
    pub summary: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskState {
    Running,
    Done,
    Failed,
}

/// A commit as git describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Commit {
    /// The full hash.
    pub hash: String,
    /// The committer's time, in microseconds since the epoch.
    pub time: i64,
    pub subject: Option<String>,
    /// The branch HEAD is on (`None` when detached).
    pub branch: Option<String>,
    /// The files it changed (against its first parent), at most [`facts::MAX_ITEMS`].
    pub files: Vec<String>,
    /// How many files it changed in all.
    pub file_count: usize,
    /// How many parents it has (2 or more: a merge).
    pub parents: usize,
    /// The commit it replaced (`git commit --amend`, a rebase).
    pub rewrote: Option<String>,
}
