//! Filling in vectors: every waiting text (`mem7 embed`, a server's steps), the few a
//! search embeds before it answers, and, with the local model, the newest first by a
//! time budget.

use super::*;

/// Versions a search embeds on the spot before answering, however long it takes. More
/// than this are filled by [`INLINE_FILL_BUDGET`] with the local model, and left to
/// `mem7 embed` (or the MCP server and `watch`, which fill them in the background) with
/// a remote provider.
const INLINE_FILL: usize = 64;

/// How long a search with the local model embeds waiting texts, the newest versions
/// first, before it answers with what it has (docs/internals/index.md "A burst of
/// stores"): after a burst of command-line stores, the facts just stored are searchable
/// by meaning at once, and each later search fills some more.
const INLINE_FILL_BUDGET: std::time::Duration = std::time::Duration::from_millis(400);

/// Texts a budgeted fill holds at most (it embeds far fewer within its budget).
const INLINE_FILL_KEEP: usize = 4096;

/// What filling in vectors did.
#[derive(Clone, Debug, Default)]
pub struct FillStats {
    /// Distinct texts that had no vector of the model.
    pub missing: usize,
    /// Vectors computed and cached now.
    pub computed: usize,
    /// The model's cache id.
    pub model: String,
}

impl Engine {
    /// Computes and caches a vector for every text of the workspace that has none of the
    /// configured model. `progress(done, total)` follows along. A provider failure stops
    /// the fill with an error; what was computed before it stays cached.
    ///
    /// `max` bounds the texts computed in this call (a server fills in steps, releasing
    /// the engine between them); `FillStats::missing` still counts them all.
    pub fn fill_embeddings(
        &mut self,
        max: Option<usize>,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<FillStats> {
        self.fill_waiting(Take::All(max), &mut |_| false, progress)
    }

    /// Embeds waiting texts, the newest versions' first, a batch at a time until
    /// `budget` is spent (one batch at least); the rest wait for the next fill.
    fn fill_newest(&mut self, budget: std::time::Duration) -> Result<FillStats> {
        let started = std::time::Instant::now();
        let mut spent = |_: usize| started.elapsed() >= budget;
        self.fill_waiting(Take::Newest, &mut spent, &mut |_, _| {})
    }

    /// Embeds the waiting texts `take` names, a batch at a time, until `stop(computed)`
    /// says so after a batch (one batch at least), and caches their vectors.
    fn fill_waiting(
        &mut self,
        take: Take,
        stop: &mut dyn FnMut(usize) -> bool,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<FillStats> {
        let Some(model) = self.embedding_model() else {
            return Err(off_error(&self.embed.resolved));
        };
        let batch = match &self.embed.resolved {
            Resolved::On(spec) => spec.batch_size,
            Resolved::Off { .. } => unreachable!("checked above"),
        };
        // Keys have vectors of their own only for the local model: a store compares a
        // new key with them, and a store never calls a remote provider.
        let keys = self.local_model_on();
        self.cache()?;
        let cache = self.embed.cache.as_ref().expect("opened above");
        let sentences = self.ws.config().search.sentences();
        let (waiting, missing) = match take {
            Take::All(max) => {
                vectors::missing_texts(&self.index, cache, &model, max, keys, sentences)?
            }
            Take::Newest => vectors::missing_texts_newest(
                &self.index,
                cache,
                &model,
                INLINE_FILL_KEEP,
                keys,
                sentences,
            )?,
            Take::Of(ids) => {
                vectors::missing_texts_of(&self.index, cache, &model, &ids, keys, sentences)?
            }
        };
        let mut stats = FillStats {
            missing: waiting,
            computed: 0,
            model: model.clone(),
        };
        progress(0, missing.len());
        for chunk in missing.chunks(batch.max(1)) {
            if stats.computed > 0 && stop(stats.computed) {
                break;
            }
            let texts: Vec<&str> = chunk.iter().map(|(_, t)| t.as_str()).collect();
            let computed = self.embedder()?.embed(&texts)?;
            let items: Vec<([u8; 32], Vec<f32>)> =
                chunk.iter().map(|(h, _)| *h).zip(computed).collect();
            self.cache()?.put_many(&model, &items)?;
            stats.computed += items.len();
            progress(stats.computed, missing.len());
        }
        Ok(stats)
    }
}

/// Which waiting texts a fill takes.
enum Take {
    /// All of them (at most this many, when given), in the index's order.
    All(Option<usize>),
    /// The newest versions' first, at most [`INLINE_FILL_KEEP`].
    Newest,
    /// Those of these versions (and their keys).
    Of(Vec<u64>),
}

impl Engine {
    /// The vectors a meaning search compares with, topped up (a few missing ones are
    /// embedded on the spot); None (Auto only) when there are none.
    pub(super) fn meaning_vectors(
        &mut self,
        model: &str,
        explicit: bool,
    ) -> Result<Option<Arc<Vectors>>> {
        let mut vectors = self.vectors(model)?;
        // A server embeds a few itself and leaves the rest to its background fill (a
        // search must not wait for a burst's worth); a process of its own, the
        // command line, embeds a few, or with the local model the newest for a while.
        let bound = self.inline_fill_bound(INLINE_FILL);
        let serving = bound < INLINE_FILL;
        if vectors.missing() > 0 && vectors.missing() <= bound {
            let ids = vectors.missing_ids();
            match self.fill_waiting(Take::Of(ids), &mut |_| false, &mut |_, _| {}) {
                Ok(_) => {
                    // Let go of this handle first, so that the set is topped up in
                    // place rather than loaded again.
                    drop(vectors);
                    vectors = self.vectors(model)?;
                }
                Err(e) => self.note(Note::VectorsNotFilled {
                    missing: vectors.missing(),
                    error: e.to_string(),
                }),
            }
        } else if vectors.missing() > bound && !serving && self.local_model_on() {
            match self.fill_newest(INLINE_FILL_BUDGET) {
                Ok(_) => {
                    drop(vectors);
                    vectors = self.vectors(model)?;
                }
                Err(e) => self.note(Note::VectorsNotFilled {
                    missing: vectors.missing(),
                    error: e.to_string(),
                }),
            }
            if vectors.missing() > 0 {
                self.note(Note::VectorsMissing {
                    missing: vectors.missing(),
                    model: model.to_string(),
                });
            }
        } else if vectors.missing() > bound {
            self.note(Note::VectorsMissing {
                missing: vectors.missing(),
                model: model.to_string(),
            });
        }
        if vectors.is_empty() && !explicit {
            return Ok(None);
        }
        Ok(Some(vectors))
    }
}
