//! The engine's side of the full-text index: the catch-up a search plans, commits and
//! records (its commit may run beside the meaning side, `semantic.rs`), the one a
//! server commits on a quiet moment, and the merge of the segments its commits left.

use super::Engine;
use crate::error::Result;

/// A full-text catch-up planned under the workspace lock, which it keeps until recorded
/// ([`Engine::plan_full_text`]).
pub(crate) type PlannedText = (crate::store::WorkspaceLock, crate::index::TextCatchUp);

/// The most new versions a server's search scores beside the full-text index rather
/// than commit them first (each is cut into tokens and scored on its own).
const TAIL_MAX: usize = 256;

impl Engine {
    /// Brings the full-text index up to date with the versions, when writes left it
    /// behind (a server's background work, so that the next search need not).
    /// One not built yet is left to the first search, which builds it whole.
    pub fn commit_full_text(&mut self) -> Result<()> {
        if !self.index.fulltext_built() {
            return Ok(());
        }
        self.refresh_fulltext()
    }

    /// The versions a server's search scores beside the full-text index rather than
    /// commit them first (`index/fulltext/tail.rs`): a commit costs tantivy 8–15 ms
    /// whatever it holds, and the server commits on its quiet moment. Only new versions,
    /// at most [`TAIL_MAX`], and not for a `raw` query; the catch-up they were planned in
    /// is then let go (with its lock). The command line, which has no quiet moment,
    /// commits: empty there.
    pub(crate) fn beside_the_index(
        &self,
        planned: &mut Option<PlannedText>,
        raw: bool,
    ) -> Vec<(i64, crate::core::Version)> {
        let tail = match planned.as_ref() {
            Some((_, c)) if self.deferred.background && !raw => c
                .additions()
                .filter(|a| a.len() <= TAIL_MAX)
                .map(<[_]>::to_vec)
                .unwrap_or_default(),
            _ => Vec::new(),
        };
        if !tail.is_empty() {
            *planned = None;
        }
        tail
    }

    /// Whether writes left a built full-text index behind (what
    /// [`Engine::commit_full_text`] would commit); false when the index cannot say, and
    /// the next search then commits, and reports what failed.
    pub fn full_text_behind(&self) -> bool {
        self.index.fulltext_built() && self.index.fulltext_pending().unwrap_or(false)
    }

    fn refresh_fulltext(&mut self) -> Result<()> {
        let planned = self.plan_full_text()?;
        self.finish_full_text(planned)
    }

    /// Commits and records a planned full-text catch-up, if any.
    pub(crate) fn finish_full_text(&mut self, planned: Option<PlannedText>) -> Result<()> {
        if let Some(planned) = planned {
            planned.1.commit()?;
            self.record_full_text(planned)?;
        }
        Ok(())
    }

    /// The full-text catch-up a search needs (after the index's own), with the lock it
    /// must be committed and recorded under ([`Engine::record_full_text`]); `None` when
    /// the full text is current.
    pub(crate) fn plan_full_text(&mut self) -> Result<Option<PlannedText>> {
        if !self.index.fulltext_pending()? {
            return Ok(None);
        }
        let lock = self.ws.lock()?;
        self.refresh()?;
        if !self.index.fulltext_pending()? {
            return Ok(None);
        }
        Ok(self.index.plan_fulltext(self.merges())?.map(|c| (lock, c)))
    }

    /// Records a committed catch-up of [`Engine::plan_full_text`], then lets go of its
    /// lock.
    pub(crate) fn record_full_text(&mut self, (lock, done): PlannedText) -> Result<()> {
        self.index.record_fulltext(done)?;
        self.deferred.unmerged = self.deferred.background;
        drop(lock);
        Ok(())
    }

    /// Merges the full-text index's small segments left by a server's commits (a
    /// server's background work on a quiet moment; its commits merge none).
    pub fn merge_full_text(&mut self) -> Result<bool> {
        if !self.deferred.unmerged || !self.index.fulltext_built() {
            return Ok(false);
        }
        let _lock = self.ws.lock()?;
        let merged = self.index.merge_fulltext()?;
        self.deferred.unmerged = false;
        Ok(merged)
    }
}
