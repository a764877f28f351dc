//! The background vector fill of the long-running front ends (`mem7 watch`, the MCP
//! server): missing vectors computed a step at a time for a server, the engine released
//! between steps so that requests are not kept waiting behind a long fill; at one go for
//! `mem7 watch`, whose engine nobody else waits for.

use super::session::Session;
use crate::engine::FillStats;
use crate::error::Result;

/// Texts embedded per step, between which requests get the engine.
pub const FILL_STEP: usize = 32;

/// Fills in every missing vector, `step` texts at a time (all at once with `None`: for
/// a front end whose engine nobody else waits for). `None` when meaning search is off;
/// else what was computed in all (`missing` as the first step counted it), or the
/// provider's error (what was computed before it stays cached).
pub fn in_steps(session: &Session, step: Option<usize>) -> Option<Result<FillStats>> {
    let mut total: Option<FillStats> = None;
    loop {
        let mut engine = session.engine();
        if engine.embedding_model().is_none() {
            return total.map(Ok);
        }
        let got = match engine.fill_embeddings(step, &mut |_, _| {}) {
            Ok(got) => got,
            Err(e) => return Some(Err(e)),
        };
        drop(engine);
        let done = got.computed == 0 || got.computed >= got.missing;
        let sum = total.get_or_insert_with(|| FillStats {
            missing: got.missing,
            computed: 0,
            model: got.model.clone(),
        });
        sum.computed += got.computed;
        sum.model = got.model;
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
