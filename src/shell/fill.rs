//! The background vector fill of the long-running front ends (`mem7 watch`, the MCP
//! server): missing vectors computed a step at a time, the engine released between steps
//! so that requests are not kept waiting behind a long fill.

use super::Session;
use crate::engine::FillStats;
use crate::error::Result;

/// Texts embedded per step, between which requests get the engine.
pub const FILL_STEP: usize = 32;

/// Fills in every missing vector, [`FILL_STEP`] texts at a time. `None` when meaning
/// search is off; else what was computed in all (`missing` as the first step counted
/// it), or the provider's error (what was computed before it stays cached).
pub fn in_steps(session: &Session) -> Option<Result<FillStats>> {
    let mut total: Option<FillStats> = None;
    loop {
        let mut engine = session.engine();
        if engine.embedding_model().is_none() {
            return total.map(Ok);
        }
        let step = match engine.fill_embeddings(Some(FILL_STEP), &mut |_, _| {}) {
            Ok(step) => step,
            Err(e) => return Some(Err(e)),
        };
        drop(engine);
        let done = step.computed == 0 || step.computed >= step.missing;
        let sum = total.get_or_insert_with(|| FillStats {
            missing: step.missing,
            computed: 0,
            model: step.model.clone(),
        });
        sum.computed += step.computed;
        sum.model = step.model;
        if done {
            return total.map(Ok);
        }
    }
}

/// What a fill says, once: a provider failure is said when it first happens and again
/// only when it changes, and forgotten after a fill that works.
#[derive(Default)]
pub struct LastError(String);

impl LastError {
    /// Whether `e` is news (and remembers it).
    pub fn is_new(&mut self, e: &crate::error::Error) -> bool {
        let text = e.to_string();
        if self.0 == text {
            return false;
        }
        self.0 = text;
        true
    }

    /// A fill worked.
    pub fn clear(&mut self) {
        self.0.clear();
    }
}
