//! The engine's side of the full-text index: the catch-up a search plans, commits and
//! records (its commit may run beside the meaning side, `semantic.rs`), the one a
//! server commits on a quiet moment, and the merge of the segments its commits left.

use super::Engine;
use crate::error::Result;

/// A full-text catch-up planned under the workspace lock, which it keeps until recorded
/// ([`Engine::plan_full_text`]).
pub(crate) type PlannedText = (crate::store::WorkspaceLock, crate::index::TextCatchUp);

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
