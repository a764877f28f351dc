//! The door into the engine: the reads every front end (CLI, MCP, page, context block)
//! makes, as typed requests, and the types their answers come in. Front ends never touch
//! `index`; what they need of it is named here (`tests/it/layout.rs` holds them to that).
//!
//! A read names its clocks once: [`Engine::clocks`] resolves them in one step (`as_of`
//! defaults to "what mem7 believes now", which includes entries recorded ahead of this
//! machine's clock), and every read takes the resolved [`Clocks`].

use super::*;

pub use crate::index::fulltext::{SearchMode, SearchRequest};
pub use crate::index::load_file;
pub use crate::index::query::question_parts;
pub use crate::index::{
    AHEAD_KEPT, Ahead, IndexCheck, Progress, RebuildReason, SearchHit, Warning,
};

/// The two clocks of a read, resolved: the valid time asked about, and the transaction
/// time whose beliefs answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Clocks {
    pub valid_at: ValidTime,
    pub as_of: TxTime,
}

/// What narrows a read besides its clocks: a key prefix and tags a version must all
/// carry (every version when empty).
#[derive(Clone, Copy, Debug, Default)]
pub struct Narrow<'a> {
    pub prefix: Option<&'a str>,
    pub tags: &'a [String],
}

impl<'a> Narrow<'a> {
    /// Versions carrying every tag of `tags`, under any key.
    pub fn tagged(tags: &'a [String]) -> Narrow<'a> {
        Narrow { prefix: None, tags }
    }
}

/// A page of rows: `limit` rows after the first `offset`. A page costs its rows, not the
/// whole read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    pub offset: usize,
    pub limit: usize,
}

/// The clock a timeline is ordered by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimelineClock {
    /// When facts held: believed versions by `valid_from`.
    Valid,
    /// When mem7 learned them: every version by `tx_from`.
    Recorded,
}

impl TimelineClock {
    /// `Recorded` for a timeline by transaction time (`by_tx`), else `Valid`.
    pub fn by_tx(by_tx: bool) -> TimelineClock {
        if by_tx {
            TimelineClock::Recorded
        } else {
            TimelineClock::Valid
        }
    }
}

/// The versions that start (on `clock`) in [`since`, `until`), of keys under `prefix`.
#[derive(Clone, Copy, Debug)]
pub struct Timeline<'a> {
    pub clock: TimelineClock,
    /// Inclusive; `None` is the beginning of time.
    pub since: Option<ValidTime>,
    /// Exclusive; `None` is the end of time.
    pub until: Option<ValidTime>,
    pub prefix: Option<&'a str>,
    pub window: Option<Window>,
}

impl Engine {
    /// A read's clocks in one step: `valid_at` as given, `as_of` as given or else
    /// [`Engine::believed_now`].
    pub fn clocks(
        &self,
        valid_at: ValidTime,
        as_of: Option<TxTime>,
        now: TxTime,
    ) -> Result<Clocks> {
        Ok(Clocks {
            valid_at,
            as_of: self.as_of(as_of, now)?,
        })
    }

    /// The versions of `key` valid at the read's clocks, only those carrying every tag of
    /// `tags` (all of them when `tags` is empty).
    pub fn recall(&self, key: &str, tags: &[String], at: Clocks) -> Result<Vec<Version>> {
        let mut versions = self.index.recall(key, at.valid_at, at.as_of)?;
        versions.retain(|v| v.has_tags(tags));
        Ok(versions)
    }

    /// Every key's versions valid at the read's clocks, narrowed, by key (the rows of
    /// `window` only, when given).
    pub fn list(&self, narrow: Narrow, at: Clocks, window: Option<Window>) -> Result<Vec<Version>> {
        self.index.list_window(
            narrow.prefix,
            narrow.tags,
            at.valid_at,
            at.as_of,
            window.map(|w| (w.offset, w.limit)),
        )
    }

    /// Every version of `key` ever recorded (only those believed at `as_of`, when given),
    /// in the order mem7 learned them.
    pub fn history(&self, key: &str, as_of: Option<TxTime>) -> Result<Vec<Version>> {
        self.index.history(key, as_of)
    }

    /// The versions a timeline shows (see [`Timeline`]).
    pub fn timeline(&self, t: &Timeline) -> Result<Vec<Version>> {
        self.index.timeline_window(
            t.clock == TimelineClock::Recorded,
            t.since.map(|t| t.micros()),
            t.until.map(|t| t.micros()),
            t.prefix,
            t.window.map(|w| (w.offset, w.limit)),
        )
    }

    /// Each version valid at the read's clocks, by key, handed to `f` as it is read (an
    /// export of any size in the memory of one version).
    pub fn each_version(&self, at: Clocks, f: &mut dyn FnMut(Version) -> Result<()>) -> Result<()> {
        self.index.list_each(at.valid_at, at.as_of, f)
    }

    /// The versions recorded or retracted in (`since`, `until`]: what changed.
    pub fn changed_between(&self, since: TxTime, until: TxTime) -> Result<Vec<Version>> {
        self.index.changed_between(since, until)
    }

    /// The versions of `key` believed now, by `valid_from`.
    pub fn believed(&self, key: &str) -> Result<Vec<Version>> {
        self.index.believed(key)
    }

    /// The problems found in the memory files by the catch-ups so far (they stay until
    /// the files are fixed).
    pub fn problems(&self) -> Result<Vec<Warning>> {
        self.index.warnings()
    }
}
