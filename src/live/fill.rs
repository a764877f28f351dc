//! The background vector fill of the long-running front ends (`mem7 watch`, the MCP
//! server). A server's fill never holds the engine: it lists what waits and embeds on
//! connections and a model of its own ([`Filler`]), a text at a time, and before each
//! text waits until no request is in flight; it also finishes the look-alike checks its
//! stores left for after their answer. `mem7 watch`, whose engine nobody else waits for,
//! fills at one go.

use crate::engine::{FillStats, Filler};
use crate::error::Result;
use crate::front::session::Session;

/// Texts a server's fill lists per round (each round reads what waits anew, without the
/// engine; they are embedded one at a time).
pub const FILL_STEP: usize = 256;

/// A server's fill: the filler kept between wakes (its model loaded once).
#[derive(Default)]
pub struct Background {
    filler: Option<Filler>,
}

impl Background {
    /// Fills in every missing vector without holding the engine, yielding to requests
    /// between texts, `round` texts listed at a time; first the texts that look-alike
    /// checks wait for, which are then settled. `None` when meaning search is off.
    /// `between` runs between texts (when no request is in flight).
    pub fn fill(
        &mut self,
        session: &Session,
        round: usize,
        between: &mut dyn FnMut(),
    ) -> Option<Result<FillStats>> {
        let mut total: Option<FillStats> = None;
        loop {
            let start = std::time::Instant::now();
            let wanted = {
                let mut engine = session.engine();
                if self.filler.as_ref().is_none_or(|f| !f.serves(&engine)) {
                    self.filler = match engine.filler() {
                        Ok(f) => f,
                        Err(e) => return Some(Err(e)),
                    };
                }
                // The name checks stores left need no vector: at once.
                if let Err(e) = engine.settle_names() {
                    return Some(Err(e));
                }
                engine.take_wanted_texts()
            };
            session.slow("fill: wanted texts", start);
            let Some(filler) = self.filler.as_mut() else {
                return total.map(Ok);
            };
            for text in &wanted {
                session.wait_for_requests();
                let hash = *blake3::hash(text.as_bytes()).as_bytes();
                if let Err(e) = filler.embed_one(hash, text) {
                    return Some(Err(e));
                }
            }
            let (missing, kept) = match filler.waiting(round) {
                Ok(w) => w,
                Err(e) => return Some(Err(e)),
            };
            let sum = total.get_or_insert_with(|| FillStats {
                missing,
                computed: 0,
                model: filler.model().to_string(),
            });
            for (hash, text) in &kept {
                session.wait_for_requests();
                between();
                if let Err(e) = filler.embed_one(*hash, text) {
                    return Some(Err(e));
                }
                sum.computed += 1;
            }
            // The checks whose vectors are all cached now say what they found.
            let start = std::time::Instant::now();
            if let Err(e) = session.engine().settle_deferred() {
                return Some(Err(e));
            }
            session.slow("fill: settle", start);
            if kept.is_empty() || kept.len() >= missing {
                return total.map(Ok);
            }
        }
    }
}

/// Fills in every missing vector through the engine, `step` texts at a time (all at
/// once with `None`: for a front end whose engine nobody else waits for). `None` when meaning search is off;
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
