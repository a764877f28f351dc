//! Ranking a pool of candidates: word and meaning results fused by their scores, and
//! facts written together lending each other a little (docs/internals/ranking.md).
//!
//! Each side's scores are scaled to [0, 1] over its own pool (min–max: BM25 scores and
//! cosine similarities live on different scales), then summed with a weight per side; a
//! candidate missing from a side gets 0 there. The word side's scale never starts
//! closer to its best score than `word_floor` of it: in a small store every word hit may
//! match the same words, and min–max would stretch a few percent of BM25 (a shorter
//! value) into the whole range, as if the weakest of them matched nothing. Fusing scores over a deep pool (a hundred
//! per side by default) lets a fact that one side ranks 40th but the other ranks 2nd come
//! first, which reciprocal rank over the top few cannot do. Then each candidate borrows a
//! share of the best score among the others that hold from the same instant (told in one
//! session, stored together) and among the others of the same entity (the key before its
//! last `:`): a question's answer is often spread over facts written together. A fact
//! that became valid within a time the question names (`on 9 November, 2022`) gains a
//! fixed share first.

use std::collections::HashMap;

use super::SearchHit;
use super::dates::NamedTime;

/// The weights of a fused ranking (`search.fusion` in `mem7.yaml`; the defaults are
/// measured by `just eval`, docs/internals/retrieval.md).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fusion {
    /// The word side's weight.
    pub lexical: f32,
    /// The meaning side's weight.
    pub semantic: f32,
    /// The share of the best score among the other candidates valid from the same
    /// instant that a candidate borrows.
    pub same_time: f32,
    /// The same, among the other candidates of the same entity.
    pub same_entity: f32,
    /// Candidates taken from the word side before fusing.
    pub pool: usize,
    /// Candidates taken from the meaning side before fusing. With a vector per
    /// sentence, a deeper meaning pool brings facts that only one passing sentence
    /// relates to the question (a greeting, a thank-you), and its scale over them
    /// flattens the answer's lead (measured in docs/internals/retrieval.md).
    pub meaning_pool: usize,
    /// The share of a top candidate's score lent to the facts recorded just before and
    /// after it (see [`lend_beside`]).
    pub beside: f32,
    /// How many of the best candidates lend to their neighbours in recording order.
    pub lenders: usize,
    /// How much a word hit's share of the question's content words counts: its scaled
    /// word score is multiplied by that share to this power (0: not at all). A fact
    /// that matches one word of four is weak evidence however it ranks among the word
    /// hits, and should not outrank what meaning found.
    pub coverage: f32,
    /// What a fact gains when it became valid within a time the question names (`on
    /// 9 November, 2022`, `in July 2023`; `dates::named_times`): a question that names
    /// a time asks about what was true or said from then.
    pub date: f32,
    /// The word side's scale starts at the pool's weakest score or at this share of its
    /// best, whichever is lower: word hits within a few percent of the best are near
    /// ties, not the whole range apart.
    pub word_floor: f32,
    /// What a fact gains when the question names its owner: a name of the question
    /// (`Caroline` of `What did Caroline research?`) is a part of the fact's entity
    /// (`caroline` of `caroline:d1_3`, `alice` of `team:alice:role`; see [`owned`]).
    pub owner: f32,
    /// The share of a top candidate's score lent to the fact its entity had written
    /// next (see [`lend_entity_next`]). Off by default: on LoCoMo 0.1 lifted hit@10 on
    /// both halves but cost the held-out half's hit@5 (docs/internals/retrieval.md).
    pub entity_next: f32,
    /// How many of the best candidates lend to their entity's next fact.
    pub entity_lenders: usize,
}

impl Default for Fusion {
    fn default() -> Self {
        Fusion {
            lexical: 1.0,
            semantic: 0.35,
            same_time: 0.3,
            same_entity: 0.0,
            pool: 150,
            meaning_pool: 50,
            beside: 0.5,
            lenders: 40,
            coverage: 1.0,
            date: 0.3,
            word_floor: 0.8,
            owner: 0.5,
            entity_next: 0.0,
            entity_lenders: 10,
        }
    }
}

/// The entity of a key: what comes before its last `:` (`payments` of `payments:owner`),
/// `None` for a key without one.
pub fn entity(key: &str) -> Option<&str> {
    key.rsplit_once(':')
        .map(|(e, _)| e)
        .filter(|e| !e.is_empty())
}

/// The order of a ranking: the higher score first; ties go to the better word rank (a
/// hit only meaning found counts as worse than any word match), then the key, then the
/// version.
fn best_first(a: (f32, &SearchHit), b: (f32, &SearchHit)) -> std::cmp::Ordering {
    let rank = |h: &SearchHit| h.lexical_rank.unwrap_or(usize::MAX);
    b.0.total_cmp(&a.0)
        .then_with(|| rank(a.1).cmp(&rank(b.1)))
        .then_with(|| a.1.version.key.cmp(&b.1.version.key))
        .then_with(|| a.1.id.cmp(&b.1.id))
}

/// Scales scores to [0, 1] over the list (all 1 when they are equal), from the lowest
/// score or from `floor` × the highest, whichever is lower (`floor` 1 or more: from the
/// lowest).
fn scaled(scores: &[f32], floor: f32) -> Vec<f32> {
    let (lo, hi) = scores
        .iter()
        .fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), &s| {
            (lo.min(s), hi.max(s))
        });
    let lo = if hi > 0.0 { lo.min(hi * floor) } else { lo };
    scores
        .iter()
        .map(|&s| if hi > lo { (s - lo) / (hi - lo) } else { 1.0 })
        .collect()
}

/// Lends each of the best `f.lenders` candidates' scores (a share `f.beside`) to the
/// facts recorded just before and after it (`beside(hit)`: by transaction time, through
/// the same filters), when they are candidates too: a question's answer is often the
/// fact written right after the one that shares its words. Keeps the order best first.
pub fn lend_beside(
    ranked: &mut [SearchHit],
    f: &Fusion,
    beside: &mut dyn FnMut(&SearchHit) -> crate::error::Result<Vec<SearchHit>>,
) -> crate::error::Result<()> {
    if f.beside <= 0.0 || f.lenders == 0 {
        return Ok(());
    }
    let mut lent: HashMap<u64, f32> = HashMap::new();
    for hit in ranked.iter().take(f.lenders) {
        for n in beside(hit)? {
            let share = f.beside * hit.score.max(0.0);
            let slot = lent.entry(n.id).or_insert(0.0);
            *slot = slot.max(share);
        }
    }
    // Only candidates borrow: a fact that matches neither side is never a result.
    for h in ranked.iter_mut() {
        if let Some(share) = lent.remove(&h.id) {
            h.score += share;
        }
    }
    ranked.sort_by(|a, b| best_first((a.score, a), (b.score, b)));
    Ok(())
}

/// Adds `f.owner` to each candidate whose entity (the key before its last `:`) has a
/// part among `names` (the names the question names, lower-case), and keeps the order
/// best first: a question that names a person or a thing is about the facts kept under
/// it, whatever else their words share with it. The gain comes after all lending, so it
/// reorders candidates and never brings a fact in; a key without an entity gains nothing.
pub fn owned(ranked: &mut [SearchHit], names: &[String], f: &Fusion) {
    if f.owner <= 0.0 || names.is_empty() {
        return;
    }
    let mut gained = false;
    for h in ranked.iter_mut() {
        let named = entity(&h.version.key).is_some_and(|e| {
            e.split(|c: char| !c.is_alphanumeric())
                .any(|part| names.iter().any(|n| n.eq_ignore_ascii_case(part)))
        });
        if named {
            h.score += f.owner;
            gained = true;
        }
    }
    if gained {
        ranked.sort_by(|a, b| best_first((a.score, a), (b.score, b)));
    }
}

/// Lends each of the best `f.entity_lenders` candidates' scores (a share
/// `f.entity_next`) to the fact recorded next after it under the same entity
/// (`next(hit)`: the key before its last `:` and a `:`, within a day, through the same
/// filters), when that is a candidate too: what the same person or thing had written
/// next often completes it (a speaker's next turn answers what the other asked between
/// them). Keeps the order best first.
pub fn lend_entity_next(
    ranked: &mut [SearchHit],
    f: &Fusion,
    next: &mut dyn FnMut(&SearchHit) -> crate::error::Result<Option<SearchHit>>,
) -> crate::error::Result<()> {
    if f.entity_next <= 0.0 || f.entity_lenders == 0 {
        return Ok(());
    }
    let mut lent: HashMap<u64, f32> = HashMap::new();
    for hit in ranked.iter().take(f.entity_lenders) {
        if let Some(n) = next(hit)? {
            let share = f.entity_next * hit.score.max(0.0);
            let slot = lent.entry(n.id).or_insert(0.0);
            *slot = slot.max(share);
        }
    }
    if lent.is_empty() {
        return Ok(());
    }
    for h in ranked.iter_mut() {
        if let Some(share) = lent.remove(&h.id) {
            h.score += share;
        }
    }
    ranked.sort_by(|a, b| best_first((a.score, a), (b.score, b)));
    Ok(())
}

/// Fuses the word side's and the meaning side's hits (each best first, as deep as the
/// pool) into one ranking of at most `limit`, best first. Either side may be empty: the
/// word side alone is ranked the same way (its scores scaled, facts written together
/// lending). A hit's `score` becomes its fused score; its ranks and similarity are kept.
/// A candidate that became valid within one of `times` (the times the question names)
/// gains `f.date` before facts written together lend.
pub fn fuse(
    lexical: Vec<SearchHit>,
    coverage: &[f32],
    semantic: Vec<SearchHit>,
    times: &[NamedTime],
    f: &Fusion,
    limit: usize,
) -> Vec<SearchHit> {
    let mut lex_scores = scaled(
        &lexical.iter().map(|h| h.score).collect::<Vec<_>>(),
        f.word_floor,
    );
    if f.coverage > 0.0 {
        for (s, c) in lex_scores.iter_mut().zip(coverage) {
            *s *= c.clamp(0.0, 1.0).powf(f.coverage);
        }
    }
    let sem_scores = scaled(
        &semantic
            .iter()
            .map(|h| h.similarity.unwrap_or(h.score))
            .collect::<Vec<_>>(),
        f32::INFINITY,
    );
    let mut pool: Vec<(f32, SearchHit)> = Vec::with_capacity(lexical.len() + semantic.len());
    let mut at: HashMap<u64, usize> = HashMap::new();
    for (i, (mut hit, s)) in lexical.into_iter().zip(lex_scores).enumerate() {
        hit.lexical_rank = Some(i + 1);
        at.insert(hit.id, pool.len());
        pool.push((f.lexical * s, hit));
    }
    for (i, (hit, s)) in semantic.into_iter().zip(sem_scores).enumerate() {
        let add = f.semantic * s;
        match at.get(&hit.id) {
            Some(&j) => {
                let (score, h) = &mut pool[j];
                *score += add;
                h.semantic_rank = Some(i + 1);
                h.similarity = hit.similarity;
            }
            None => {
                let mut h = hit;
                h.semantic_rank = Some(i + 1);
                at.insert(h.id, pool.len());
                pool.push((add, h));
            }
        }
    }
    if f.date > 0.0 && !times.is_empty() {
        for (score, h) in pool.iter_mut() {
            let from = h.version.valid_from.micros();
            if times.iter().any(|t| t.holds(from)) {
                *score += f.date;
            }
        }
    }
    lend(&mut pool, f);
    pool.sort_by(|a, b| best_first((a.0, &a.1), (b.0, &b.1)));
    pool.into_iter()
        .take(limit)
        .map(|(score, mut h)| {
            h.score = score;
            h
        })
        .collect()
}

/// The share of the question's content words (`words`, stemmed) that `v`'s key, value
/// and tags contain: 1 when the question has none.
pub fn coverage(words: &[String], v: &crate::core::Version) -> f32 {
    if words.is_empty() {
        return 1.0;
    }
    // The words the index holds of the value: its first `INDEXED_VALUE_BYTES`.
    let value = crate::core::validate::head_of(&v.value, super::fulltext::INDEXED_VALUE_BYTES);
    let stems = super::query::stems_of(
        [v.key.as_str(), value]
            .into_iter()
            .chain(v.tags.iter().map(String::as_str)),
    );
    let found = words.iter().filter(|w| stems.contains(w.as_str())).count();
    found as f32 / words.len() as f32
}

/// Adds to each candidate a share of the best base score among the *other* candidates
/// written together with it: valid from the same instant, or of the same entity.
fn lend(pool: &mut [(f32, SearchHit)], f: &Fusion) {
    if pool.len() < 2 || (f.same_time <= 0.0 && f.same_entity <= 0.0) {
        return;
    }
    // The two best base scores per group, so that a candidate never borrows its own.
    type Best = [(f32, u64); 2];
    fn note<K: std::hash::Hash + Eq>(groups: &mut HashMap<K, Best>, group: K, score: f32, id: u64) {
        let slot = groups
            .entry(group)
            .or_insert([(f32::NEG_INFINITY, u64::MAX); 2]);
        if score > slot[0].0 {
            slot[1] = slot[0];
            slot[0] = (score, id);
        } else if score > slot[1].0 {
            slot[1] = (score, id);
        }
    }
    fn other<K: std::hash::Hash + Eq>(groups: &HashMap<K, Best>, group: &K, id: u64) -> f32 {
        groups.get(group).map_or(0.0, |[a, b]| {
            let s = if a.1 == id { b.0 } else { a.0 };
            s.max(0.0)
        })
    }
    let mut times: HashMap<i64, Best> = HashMap::new();
    let mut entities: HashMap<&str, Best> = HashMap::new();
    for (score, h) in pool.iter() {
        note(&mut times, h.version.valid_from.micros(), *score, h.id);
        if let Some(e) = entity(&h.version.key) {
            note(&mut entities, e, *score, h.id);
        }
    }
    let lent: Vec<f32> = pool
        .iter()
        .map(|(_, h)| {
            let time = other(&times, &h.version.valid_from.micros(), h.id);
            let ent = entity(&h.version.key).map_or(0.0, |e| other(&entities, &e, h.id));
            f.same_time * time + f.same_entity * ent
        })
        .collect();
    for ((score, _), add) in pool.iter_mut().zip(lent) {
        *score += add;
    }
}

/// Reciprocal rank fusion: each version scores `1/(k + rank)` for each list it is on
/// (ranks from 1), best total first; ties go to the better word rank, then the key.
pub fn reciprocal_rank(
    lexical: Vec<SearchHit>,
    semantic: Vec<SearchHit>,
    k: f64,
    limit: usize,
) -> Vec<SearchHit> {
    let mut by_id: HashMap<u64, (f64, SearchHit)> = HashMap::new();
    for (i, mut hit) in lexical.into_iter().enumerate() {
        hit.lexical_rank = Some(i + 1);
        by_id.insert(hit.id, (1.0 / (k + (i + 1) as f64), hit));
    }
    for (i, hit) in semantic.into_iter().enumerate() {
        let add = 1.0 / (k + (i + 1) as f64);
        by_id
            .entry(hit.id)
            .and_modify(|(score, h)| {
                *score += add;
                h.semantic_rank = Some(i + 1);
                h.similarity = hit.similarity;
            })
            .or_insert_with(|| {
                let mut h = hit.clone();
                h.semantic_rank = Some(i + 1);
                (add, h)
            });
    }
    let mut all: Vec<(f64, SearchHit)> = by_id.into_values().collect();
    all.sort_by(|a, b| {
        b.0.total_cmp(&a.0)
            .then_with(|| {
                let rank = |h: &SearchHit| h.lexical_rank.unwrap_or(usize::MAX);
                rank(&a.1).cmp(&rank(&b.1))
            })
            .then_with(|| a.1.version.key.cmp(&b.1.version.key))
    });
    all.into_iter()
        .take(limit)
        .map(|(score, mut h)| {
            h.score = score as f32;
            h
        })
        .collect()
}
