//! Work a long-running front end does off the engine (issue 36, "no stalls"): the vector
//! fill on connections of its own, a text at a time, so that a request never waits for
//! it; and the look-alike checks by meaning that a store left to finish after its answer
//! (in deferred mode, a server's), settled once the fill has embedded their texts.

use std::collections::HashMap;
use std::path::PathBuf;

use super::{Engine, Note};
use crate::embed::{Embedder, ProviderSpec, Resolved};
use crate::error::Result;
use crate::index::Index;
use crate::index::embeddings::EmbeddingCache;
use crate::index::vectors;
use crate::text::drift::KeyWords;

/// The most look-alike checks left waiting for vectors; older ones are dropped (a fill
/// that cannot embed must not grow the list without end).
const MAX_PENDING: usize = 64;

/// Versions without a vector a server's search embeds itself at most (a store then a
/// search finds the new fact by meaning); more are left to the background fill.
const INLINE_FILL_SERVING: usize = 4;

/// A look-alike check by meaning a store could not finish from cached vectors: the new
/// key and, for each existing key the model is asked about, its key, its words and what
/// the model is asked ([`super::names::Asked`]).
#[derive(Clone, Debug)]
pub(super) struct PendingDrift {
    pub key: String,
    pub asks: Vec<(String, KeyWords, super::names::Asked)>,
}

impl PendingDrift {
    /// Every text whose vector the check needs.
    fn texts(&self) -> Vec<String> {
        let phrase = KeyWords::of(&self.key).phrase();
        let mut out = vec![phrase.clone()];
        for (_, theirs, asked) in &self.asks {
            out.extend(asked.texts(&phrase, theirs).into_iter().skip(1));
        }
        out
    }
}

/// What the engine keeps for its background work: whether stores leave the meaning
/// side of their look-alike check to it, the checks waiting, and the texts they need.
#[derive(Default)]
pub(super) struct Deferred {
    /// A server's background work finishes what requests leave ([`Engine::serve_in_background`]).
    pub background: bool,
    /// The full-text index was committed without merging or `fsync` since the last
    /// quiet merge ([`Engine::merge_full_text`]).
    pub unmerged: bool,
    pub pending: Vec<PendingDrift>,
    pub wanted: Vec<String>,
    /// New keys whose candidates past the first ones wait to be judged by name.
    pub names: Vec<String>,
}

/// The pool a server's fill embeds on (a local model's products run on the pool they are
/// called from): its threads run only when a core would otherwise be idle, so that a
/// request never shares a core with the fill's products. `None` when the system gives
/// no thread for it: the fill then embeds on rayon's global pool.
fn fill_pool() -> Option<&'static rayon::ThreadPool> {
    static POOL: std::sync::OnceLock<Option<rayon::ThreadPool>> = std::sync::OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .thread_name(|_| "mem7-fill".into())
            .start_handler(|_| run_when_idle())
            .build()
            .ok()
    })
    .as_ref()
}

/// Puts the calling thread in the idle scheduling class (Linux's `SCHED_IDLE`): it runs
/// when nothing else wants the core, and any other thread takes the core from it at once.
/// Lowering one's own class needs no privilege; should it fail, the thread runs as any.
#[cfg(target_os = "linux")]
fn run_when_idle() {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: plain system call on the calling thread (pid 0), with a valid parameter.
    unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) };
}

#[cfg(not(target_os = "linux"))]
fn run_when_idle() {}

/// The vector fill's own connections and embedder, used without the engine: the index
/// (reopened when its generation changes), the embedding cache and the model.
pub struct Filler {
    index_dir: PathBuf,
    spec: ProviderSpec,
    model: String,
    keys: bool,
    sentences: usize,
    index: Option<Index>,
    cache: Option<EmbeddingCache>,
    embedder: Option<Box<dyn Embedder>>,
}

impl Engine {
    /// Says that a server's background work (which calls [`Engine::settle_deferred`] and
    /// [`Engine::merge_full_text`]) finishes what requests leave, so that they answer at
    /// once: stores judge look-alikes from cached vectors only and judge by name the keys
    /// sharing most words, leaving the rest; full-text commits neither merge segments
    /// nor `fsync` ([`crate::index::fulltext::Merges::Later`]).
    pub fn serve_in_background(&mut self, on: bool) {
        self.deferred.background = on;
    }

    /// How the full-text index's commits merge segments: later in a server (whose
    /// requests wait for its commits; it merges on a quiet moment), at once elsewhere.
    pub(super) fn merges(&self) -> crate::index::fulltext::Merges {
        if self.deferred.background {
            crate::index::fulltext::Merges::Later
        } else {
            crate::index::fulltext::Merges::Now
        }
    }

    /// Whether stores judge look-alikes by cached vectors only.
    pub(super) fn meaning_checks_deferred(&self) -> bool {
        self.deferred.background && self.local_model_on()
    }

    /// The most versions without a vector a search embeds before answering: a few in a
    /// server, whose background fill embeds the rest a text at a time (a search must not
    /// wait for a burst's worth of them), else `inline` (the command line's bound).
    pub(super) fn inline_fill_bound(&self, inline: usize) -> usize {
        if self.deferred.background {
            INLINE_FILL_SERVING
        } else {
            inline
        }
    }

    /// Leaves a look-alike check to the background work, with the texts it still needs.
    pub(super) fn defer_drift(&mut self, pending: PendingDrift, missing: Vec<String>) {
        for t in missing {
            if !self.deferred.wanted.contains(&t) {
                self.deferred.wanted.push(t);
            }
        }
        self.deferred.pending.push(pending);
        if self.deferred.pending.len() > MAX_PENDING {
            self.deferred.pending.remove(0);
        }
    }

    /// Leaves the name check of a new key's candidates past the first ones to the
    /// background work.
    pub(super) fn defer_names(&mut self, key: &str) {
        self.deferred.names.push(key.to_string());
        if self.deferred.names.len() > MAX_PENDING {
            self.deferred.names.remove(0);
        }
    }

    /// Finishes the name checks stores left for after their answer (they need no
    /// vector): each look-alike found becomes a note ([`Note::LateLookAlike`]).
    pub fn settle_names(&mut self) -> Result<()> {
        for key in std::mem::take(&mut self.deferred.names) {
            for found in self.later_by_name(&key)? {
                self.note(Note::LateLookAlike {
                    key: key.clone(),
                    similar: found.key,
                    why: found.why,
                });
            }
        }
        Ok(())
    }

    /// The texts deferred checks wait for (taken: the caller embeds them).
    pub fn take_wanted_texts(&mut self) -> Vec<String> {
        std::mem::take(&mut self.deferred.wanted)
    }

    /// Finishes the deferred look-alike checks whose vectors are all cached now: each
    /// look-alike found becomes a note ([`Note::LateLookAlike`]) that the next answer
    /// carries. Checks still missing a vector wait.
    pub fn settle_deferred(&mut self) -> Result<()> {
        self.settle_names()?;
        if self.deferred.pending.is_empty() {
            return Ok(());
        }
        let pending = std::mem::take(&mut self.deferred.pending);
        for p in pending {
            let texts = p.texts();
            let got = self.cached_vectors_of(&texts)?;
            if texts.iter().any(|t| !got.contains_key(t)) {
                self.deferred.pending.push(p);
                continue;
            }
            let phrase = KeyWords::of(&p.key).phrase();
            for (k, theirs, asked) in &p.asks {
                if let Some(why) = super::names::near_enough(&got, (&phrase, theirs), asked) {
                    self.note(Note::LateLookAlike {
                        key: p.key.clone(),
                        similar: k.clone(),
                        why,
                    });
                }
            }
        }
        Ok(())
    }

    /// The vectors of `texts` the cache holds (none is embedded).
    pub(super) fn cached_vectors_of(
        &mut self,
        texts: &[String],
    ) -> Result<HashMap<String, Vec<f32>>> {
        let Some(model) = self.embedding_model() else {
            return Ok(HashMap::new());
        };
        let mut out = HashMap::new();
        for t in texts {
            if out.contains_key(t) {
                continue;
            }
            if let Some(v) = self.cache()?.get(t, &model)? {
                out.insert(t.clone(), v);
            }
        }
        Ok(out)
    }

    /// A filler for the configured model, to fill vectors without the engine; `None`
    /// when meaning search is off.
    pub fn filler(&self) -> Result<Option<Filler>> {
        let Resolved::On(spec) = &self.embed.resolved else {
            return Ok(None);
        };
        Ok(Some(Filler {
            index_dir: self.ws.index_dir()?,
            spec: spec.clone(),
            model: spec.id(),
            keys: self.local_model_on(),
            sentences: self.ws.config().search.sentences(),
            index: None,
            cache: None,
            embedder: None,
        }))
    }
}

impl Filler {
    /// Whether this filler serves `engine`'s model and settings (else make another).
    pub fn serves(&self, engine: &Engine) -> bool {
        engine.embedding_model().as_deref() == Some(self.model.as_str())
            && engine.ws.config().search.sentences() == self.sentences
    }

    /// The model's cache id.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// How many texts of the workspace wait for a vector, and at most `max` of them
    /// (hash, text), shortest first. Read on the filler's own connections: the engine
    /// is not held.
    pub fn waiting(&mut self, max: usize) -> Result<vectors::Waiting> {
        let current = self
            .index
            .as_ref()
            .is_some_and(|i| i.is_current(&self.index_dir));
        if !current {
            self.index = Index::open(&self.index_dir)?;
        }
        let Some(index) = self.index.as_ref() else {
            return Ok((0, Vec::new()));
        };
        if self.cache.is_none() {
            self.cache = Some(EmbeddingCache::open(&self.index_dir)?);
        }
        let cache = self.cache.as_ref().expect("opened above");
        vectors::missing_texts(
            index,
            cache,
            &self.model,
            Some(max),
            self.keys,
            self.sentences,
        )
    }

    /// Embeds one text and caches its vector (unless the cache has it already).
    pub fn embed_one(&mut self, hash: [u8; 32], text: &str) -> Result<()> {
        if self.cache.is_none() {
            self.cache = Some(EmbeddingCache::open(&self.index_dir)?);
        }
        if self
            .cache
            .as_ref()
            .expect("opened above")
            .get_hash(&hash, &self.model)?
            .is_some()
        {
            return Ok(());
        }
        if self.embedder.is_none() {
            self.embedder = Some(self.spec.open()?);
        }
        let embedder = self.embedder.as_mut().expect("opened above");
        // On rayon's global pool the fill's products took both cores, and a search that
        // came meanwhile (the first after a burst of stores, whose texts the fill is
        // embedding) waited for a core at each of its threads' hand-offs.
        let v = match fill_pool() {
            Some(pool) => pool.install(|| embedder.embed(&[text])),
            None => embedder.embed(&[text]),
        }?
        .pop()
        .unwrap_or_default();
        self.cache
            .as_mut()
            .expect("opened above")
            .put_many(&self.model, &[(hash, v)])?;
        Ok(())
    }
}
