//! Meaning search on the engine: the provider, the embedding cache, the in-memory vectors,
//! and the search itself: words, meaning or both, fused by score (`index::fusion`).

use std::collections::HashMap;
use std::sync::Arc;

use super::weights::{fusion_of, word_weights};
use super::{Engine, Note};
use crate::core::time::TxTime;
use crate::embed::{Embedder, Resolved};
use crate::error::{Error, Result};
use crate::index::embeddings::EmbeddingCache;
use crate::index::fulltext::{SearchMode, SearchRequest};
use crate::index::vectors::{self, Vectors};
use crate::index::{SearchHit, fusion};

mod fill;
pub use fill::FillStats;

/// The marker that the "searching by words only" explanation was given.
const LEXICAL_ONLY_NOTED: &str = "lexical-only-noted";

/// The engine's embedding side. Off until a front end hands it a provider.
pub(super) struct EmbedState {
    pub(super) resolved: Resolved,
    embedder: Option<Box<dyn Embedder>>,
    /// The provider being opened on a thread of its own ([`Engine::open_embedder_ahead`]).
    opening: Option<std::thread::JoinHandle<Result<Box<dyn Embedder>>>>,
    cache: Option<EmbeddingCache>,
    vectors: Option<Arc<Vectors>>,
    /// What the front end should say about the answers (once each).
    notes: Vec<Note>,
}

impl Default for EmbedState {
    fn default() -> Self {
        EmbedState {
            resolved: Resolved::Off { explained: None },
            embedder: None,
            opening: None,
            cache: None,
            vectors: None,
            notes: Vec::new(),
        }
    }
}

impl Engine {
    /// Sets the embedding provider (the front ends resolve it from `mem7.yaml` and the
    /// environment). Until called, search is lexical. The same provider again keeps what
    /// the engine holds for it: a long-running server resolves it on every search, and
    /// starting over cost each one its model, its cache connection and its vectors (the
    /// first search after a burst of stores read the vector file again and embedded
    /// nothing new faster for it).
    pub fn set_embeddings(&mut self, resolved: Resolved) {
        if resolved == self.embed.resolved {
            return;
        }
        self.embed = EmbedState {
            resolved,
            ..Default::default()
        };
    }

    /// For a process that is about to exit: lets the embedder go without dropping it.
    /// Dropping the local model unmaps its 90 MB of weights page table by page table
    /// while the encoder's threads are still alive, which cost a whole `mem7 search` more
    /// than the exit's own teardown of the same pages. A long-running server never calls
    /// this.
    pub fn leave_embedder_to_exit(&mut self) {
        if let Some(embedder) = self.embed.embedder.take() {
            std::mem::forget(embedder);
        }
    }

    /// The model id vectors are cached under, when meaning search is on.
    pub fn embedding_model(&self) -> Option<String> {
        match &self.embed.resolved {
            Resolved::On(spec) => Some(spec.id()),
            Resolved::Off { .. } => None,
        }
    }

    /// What the engine noticed since the last call: why search fell back to words, how
    /// many versions still lack a vector.
    pub fn take_notes(&mut self) -> Vec<Note> {
        std::mem::take(&mut self.embed.notes)
    }

    pub(super) fn note(&mut self, note: Note) {
        if !self.embed.notes.contains(&note) {
            self.embed.notes.push(note);
        }
    }

    pub(super) fn cache(&mut self) -> Result<&mut EmbeddingCache> {
        if self.embed.cache.is_none() {
            let dir = self.ws.index_dir()?;
            self.embed.cache = Some(EmbeddingCache::open(&dir)?);
        }
        Ok(self.embed.cache.as_mut().expect("opened above"))
    }

    fn embedder(&mut self) -> Result<&mut Box<dyn Embedder>> {
        if self.embed.embedder.is_none() {
            let Resolved::On(spec) = &self.embed.resolved else {
                return Err(off_error(&self.embed.resolved));
            };
            let opened = match self.embed.opening.take() {
                Some(opening) => opening
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))?,
                None => spec.open()?,
            };
            self.embed.embedder = Some(opened);
        }
        Ok(self.embed.embedder.as_mut().expect("opened above"))
    }

    /// Starts opening the local model on a thread of its own, unless it is open or
    /// another provider is set: a store of a new key may ask the model about look-alike
    /// keys once it has judged them by their words, and opening the model (reading its
    /// tokenizer, mapping its weights) overlaps that judging. Unused, it costs that
    /// thread's work and nothing else.
    pub(crate) fn open_embedder_ahead(&mut self) {
        if self.embed.embedder.is_some() || self.embed.opening.is_some() || !self.local_model_on() {
            return;
        }
        let Resolved::On(spec) = &self.embed.resolved else {
            return;
        };
        let spec = spec.clone();
        self.embed.opening = Some(std::thread::spawn(move || spec.open()));
    }

    /// Drops cached vectors of other models and of texts the workspace no longer holds.
    pub fn prune_embeddings(&mut self) -> Result<usize> {
        let Some(model) = self.embedding_model() else {
            return Err(off_error(&self.embed.resolved));
        };
        let keep = vectors::workspace_hashes(&self.index, self.ws.config().search.sentences())?;
        let pruned = self.cache()?.prune(&model, &keep)?;
        vectors::remove_other_files(self.index.generation(), &model);
        Ok(pruned)
    }

    /// How many vectors the cache holds in all (every model).
    pub fn cached_vectors(&mut self) -> Result<usize> {
        self.cache()?.len()
    }

    /// The vectors of the configured model for the current index, topped up.
    fn vectors(&mut self, model: &str) -> Result<Arc<Vectors>> {
        if self.refresh_loaded(model)?
            && let Some(current) = &self.embed.vectors
        {
            return Ok(current.clone());
        }
        let sentences = self.ws.config().search.sentences();
        self.cache()?;
        let cache = self.embed.cache.as_ref().expect("opened above");
        let loaded = Arc::new(Vectors::load(&self.index, cache, model, sentences)?);
        self.embed.vectors = Some(loaded.clone());
        Ok(loaded)
    }

    /// Refreshes the loaded vector set in place (`Vectors::refresh`); false when no set
    /// is loaded, when a search holds it, or when it must be loaded afresh.
    fn refresh_loaded(&mut self, model: &str) -> Result<bool> {
        let sentences = self.ws.config().search.sentences();
        match (self.embed.vectors.as_mut(), &self.embed.cache) {
            (Some(current), Some(cache)) => match Arc::get_mut(current) {
                Some(v) => v.refresh(&self.index, cache, model, sentences),
                None => Ok(false),
            },
            _ => Ok(false),
        }
    }

    /// Tops up the loaded vector set in place with what the cache gained since (a
    /// server's quiet moment, between its fill's texts): the next search then looks up
    /// only what came after, rather than every text the fill embedded meanwhile (at 10k
    /// facts, 35–46 lookups and 1.2–1.4 ms of the first search after a burst). Loading a
    /// set afresh is left to a search.
    pub fn top_up_vectors(&mut self) -> Result<()> {
        if let Some(model) = self.embedding_model() {
            self.refresh_loaded(&model)?;
        }
        Ok(())
    }

    /// Starts on the query's vector: from the cache when the text was seen before (a
    /// query is cached like any text), else embedded on a thread of its own, so that the
    /// word side of a hybrid search runs meanwhile. [`Engine::finish_query`] collects it.
    fn start_query(&mut self, model: &str, text: &str) -> Result<PendingQuery> {
        let hash = *blake3::hash(text.as_bytes()).as_bytes();
        if let Some(v) = self.cache()?.get_hash(&hash, model)? {
            return Ok(PendingQuery::Ready(Arc::new(vectors::Query::new(&v))));
        }
        // The model is opened on the query's thread too (its tokenizer is parsed and its
        // weights mapped while the word side runs), unless an earlier search opened it.
        let (opened, opening) = (self.embed.embedder.take(), self.embed.opening.take());
        let Resolved::On(spec) = &self.embed.resolved else {
            return Err(off_error(&self.embed.resolved));
        };
        let spec = spec.clone();
        let text = text.to_string();
        let worker = std::thread::spawn(move || {
            let opened = match (opened, opening) {
                (Some(e), _) => Ok(e),
                (None, Some(opening)) => opening
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
                (None, None) => spec.open(),
            };
            let mut embedder = match opened {
                Ok(e) => e,
                Err(e) => return (None, Err(e)),
            };
            let out = embedder.embed(&[text.as_str()]);
            (Some(embedder), out)
        });
        Ok(PendingQuery::Embedding { hash, worker })
    }

    /// The query's vector started by [`Engine::start_query`]; a new one is cached.
    fn finish_query(&mut self, model: &str, pending: PendingQuery) -> Result<Arc<vectors::Query>> {
        let (hash, worker) = match pending {
            PendingQuery::Ready(query) => return Ok(query),
            PendingQuery::Embedding { hash, worker } => (hash, worker),
        };
        let (embedder, out) = worker
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        if embedder.is_some() {
            self.embed.embedder = embedder;
        }
        let v = out?.pop().unwrap_or_default();
        self.cache()?.put_many(model, &[(hash, v.clone())])?;
        Ok(Arc::new(vectors::Query::new(&v)))
    }

    /// Search with time and tag filters, by words, meaning or both (`req.mode`); brings
    /// the full-text index up to date first.
    ///
    /// `Auto` is hybrid when the workspace has vectors of the configured model and the
    /// provider answers, and lexical otherwise (with a note saying why). `Semantic` and
    /// `Hybrid` asked for explicitly fail when meaning search is off.
    pub fn search(&mut self, req: &SearchRequest) -> Result<Vec<SearchHit>> {
        let mut planned = self.plan_full_text()?;
        let tail = self.beside_the_index(&mut planned, req.raw);
        let model = self.embedding_model();
        let settings = self.ws.config().search.clone();
        let weights = word_weights(&settings);
        let fusion = fusion_of(&settings);
        let pool = SearchRequest {
            limit: fusion.pool.max(req.limit),
            ..req.clone()
        };
        // By words alone: the pool ranked as the fused ranking ranks it (scaled scores,
        // facts written together lending), so the modes agree on what counts.
        let words_only = |engine: &mut Engine| -> Result<Vec<SearchHit>> {
            if req.raw {
                return engine.index.search(req, &weights, &tail);
            }
            let hits = engine.index.search(&pool, &weights, &tail)?;
            engine.rank(hits, Vec::new(), &fusion, req)
        };
        let mode = match (req.mode, &model) {
            (SearchMode::Lexical, _) => {
                self.finish_full_text(planned.take())?;
                return words_only(self);
            }
            (SearchMode::Auto, None) => {
                if let Resolved::Off {
                    explained: Some(why),
                } = &self.embed.resolved
                {
                    // Said once per workspace: a marker in the index directory remembers.
                    let marker = self.ws.index_dir()?.join(LEXICAL_ONLY_NOTED);
                    if !marker.exists() {
                        self.note(Note::MeaningOff { why: why.clone() });
                        let _ = std::fs::write(&marker, b"");
                    }
                }
                self.finish_full_text(planned.take())?;
                return words_only(self);
            }
            (SearchMode::Semantic | SearchMode::Hybrid, None) => {
                return Err(off_error(&self.embed.resolved));
            }
            (mode, Some(_)) => mode,
        };
        let model = model.expect("matched Some above");
        let explicit = mode != SearchMode::Auto;
        // The meaning side's vectors are topped up (a few embedded, the query started)
        // while the full text commits on a thread of its own: the first search after
        // writes waits for the longer of the two, not for both.
        let (started, committed) = std::thread::scope(|s| {
            let commit = planned.as_ref().map(|(_, c)| s.spawn(|| c.commit()));
            let started =
                self.meaning_vectors(&model, explicit)
                    .and_then(|vectors| match vectors {
                        Some(v) => Ok(Some((v, self.start_query(&model, req.text.trim())?))),
                        None => Ok(None),
                    });
            let committed = commit.map_or(Ok(()), |h| {
                h.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            });
            (started, committed)
        });
        committed?;
        if let Some(planned) = planned {
            self.record_full_text(planned)?;
        }
        // The word side, while a new query is being embedded.
        let lexical =
            (mode != SearchMode::Semantic).then(|| self.index.search(&pool, &weights, &tail));
        let semantic = started.and_then(|started| {
            let Some((vectors, pending)) = started else {
                return Ok(None);
            };
            let query = self.finish_query(&model, pending)?;
            let meaning_pool = SearchRequest {
                limit: fusion.meaning_pool.max(req.limit),
                ..req.clone()
            };
            let req = if mode == SearchMode::Semantic {
                req
            } else {
                &meaning_pool
            };
            self.index.nearest(req, vectors, query, &tail).map(Some)
        });
        let words = |engine: &Engine, lexical: Option<Result<Vec<SearchHit>>>| {
            let hits = lexical.expect("the word side runs unless semantic was asked for")?;
            engine.rank(hits, Vec::new(), &fusion, req)
        };
        // Quiet misses: meaning search always has nearest neighbours; below the floor
        // they are noise, and a read that finds nothing says so. Word hits stay.
        let floor = settings.min_similarity();
        let semantic = semantic.map(|hits| {
            hits.map(|mut hits| {
                if floor > 0.0 {
                    hits.retain(|h| h.similarity.is_none_or(|s| s >= floor));
                }
                hits
            })
        });
        match semantic {
            Ok(Some(semantic)) if mode == SearchMode::Semantic => Ok(semantic),
            Ok(Some(semantic)) => {
                let lexical = lexical.expect("hybrid runs the word side")?;
                self.rank(lexical, semantic, &fusion, req)
            }
            // Auto with no vectors to compare with.
            Ok(None) => words(self, lexical),
            Err(e) if !explicit => {
                self.note(Note::MeaningFailed {
                    error: e.to_string(),
                });
                words(self, lexical)
            }
            Err(e) => Err(e),
        }
    }

    /// The fused ranking of a search's pool (`index::fusion`): both sides' scores, facts
    /// written together lending each other, at most `req.limit`.
    fn rank(
        &self,
        lexical: Vec<SearchHit>,
        semantic: Vec<SearchHit>,
        fusion: &fusion::Fusion,
        req: &SearchRequest,
    ) -> Result<Vec<SearchHit>> {
        let words = crate::index::query::content_stems(&req.text);
        let coverage: Vec<f32> = lexical
            .iter()
            .map(|h| fusion::coverage(&words, &h.version))
            .collect();
        let times = crate::index::dates::named_times(&req.text);
        let mut ranked = fusion::fuse(lexical, &coverage, semantic, &times, fusion, usize::MAX);
        let index = &self.index;
        fusion::lend_beside(&mut ranked, fusion, &mut |hit| {
            index.written_beside(hit, req)
        })?;
        let names: Vec<String> = crate::index::query::analyse(&req.text, 1.0, &|_| false)
            .into_iter()
            .filter(|w| w.name)
            .map(|w| w.text)
            .collect();
        fusion::owned(&mut ranked, &names, fusion);
        fusion::lend_entity_next(&mut ranked, fusion, &mut |hit| index.entity_next(hit, req))?;
        ranked.truncate(req.limit);
        Ok(ranked)
    }

    /// The keys whose version valid and believed now is nearest in meaning to `text`,
    /// with their similarity, nearest first: at least `floor` (else the search floor),
    /// distinct keys, at most five. Empty when meaning search is off or has no vectors;
    /// a failure of the provider is a note, never an error (this only adds hints).
    pub(crate) fn near_in_meaning(
        &mut self,
        text: &str,
        now: TxTime,
        floor: Option<f32>,
    ) -> Result<Vec<(String, f32)>> {
        if self.embedding_model().is_none() || text.trim().is_empty() {
            return Ok(Vec::new());
        }
        let as_of = self.believed_now(now)?;
        let hits = self.near_in_meaning_hits(text, now, as_of);
        let hits = match hits {
            Ok(hits) => hits,
            Err(e) => {
                self.note(Note::NoNearByMeaning {
                    error: e.to_string(),
                });
                return Ok(Vec::new());
            }
        };
        Ok(nearest_keys(hits, floor.unwrap_or(0.0)))
    }

    /// Whether the provider is the in-process local model (a store asks nothing of a
    /// remote provider).
    pub(crate) fn local_model_on(&self) -> bool {
        matches!(&self.embed.resolved, Resolved::On(spec) if spec.kind == crate::embed::ProviderKind::Local)
    }

    /// The vectors of `texts` (distinct), from the cache or embedded now in one batch
    /// and cached.
    pub(crate) fn embed_cached(&mut self, texts: &[String]) -> Result<HashMap<String, Vec<f32>>> {
        let model = self
            .embedding_model()
            .ok_or_else(|| off_error(&self.embed.resolved))?;
        let mut out = HashMap::new();
        let mut missing: Vec<&str> = Vec::new();
        for t in texts {
            if out.contains_key(t) || missing.contains(&t.as_str()) {
                continue;
            }
            match self.cache()?.get(t, &model)? {
                Some(v) => {
                    out.insert(t.clone(), v);
                }
                None => missing.push(t),
            }
        }
        if !missing.is_empty() {
            let computed = self.embedder()?.embed(&missing)?;
            let items: Vec<([u8; 32], Vec<f32>)> = missing
                .iter()
                .map(|t| *blake3::hash(t.as_bytes()).as_bytes())
                .zip(computed.iter().cloned())
                .collect();
            self.cache()?.put_many(&model, &items)?;
            out.extend(missing.iter().map(|t| t.to_string()).zip(computed));
        }
        Ok(out)
    }

    fn near_in_meaning_hits(
        &mut self,
        text: &str,
        now: TxTime,
        as_of: TxTime,
    ) -> Result<Vec<SearchHit>> {
        self.search(&SearchRequest {
            text: text.to_string(),
            raw: false,
            valid_at: now.as_valid(),
            as_of,
            tags: Vec::new(),
            key_prefix: None,
            limit: 20,
            mode: SearchMode::Auto,
        })
    }
}

/// Distinct keys of the hits the meaning side found at `floor` or nearer, nearest
/// first, at most five.
fn nearest_keys(hits: Vec<SearchHit>, floor: f32) -> Vec<(String, f32)> {
    let mut out: Vec<(String, f32)> = Vec::new();
    for h in hits {
        // Only what the meaning side found counts (a word hit has no similarity).
        let Some(s) = h.similarity.filter(|&s| s >= floor) else {
            continue;
        };
        if !out.iter().any(|(k, _)| *k == h.version.key) {
            out.push((h.version.key, s));
        }
    }
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    out.truncate(crate::text::names::MAX_NEAR);
    out
}

/// A query vector on its way: cached, or being embedded on a thread that holds the
/// embedder until it is done.
enum PendingQuery {
    Ready(Arc<vectors::Query>),
    Embedding {
        hash: [u8; 32],
        worker: std::thread::JoinHandle<Embedded>,
    },
}

/// What the query's thread hands back: the embedder (none when it could not be
/// opened), and the query's vector.
type Embedded = (Option<Box<dyn Embedder>>, Result<Vec<Vec<f32>>>);

fn off_error(resolved: &Resolved) -> Error {
    let why = match resolved {
        Resolved::Off {
            explained: Some(why),
        } => why.clone(),
        _ => "meaning search is off (the embedding provider is `none`)".into(),
    };
    Error::input(
        why,
        format!(
            "{}; the lexical mode searches by words without one",
            crate::embed::FETCH_HINT
        ),
    )
}

#[cfg(test)]
mod tests;
