//! The search weights `mem7.yaml` sets (`search.weights`, `search.fusion`), read into
//! the word side's and fusion's types with the measured defaults for unset ones.

use crate::config::SearchSettings;
use crate::index::fulltext::WordWeights;
use crate::index::fusion;

/// The word weights `search.weights` in `mem7.yaml` sets (unset ones: the defaults).
pub fn word_weights(settings: &SearchSettings) -> WordWeights {
    let d = WordWeights::default();
    let w = &settings.weights;
    WordWeights {
        value: weight(w.value, d.value),
        key: weight(w.key, d.key),
        tags: weight(w.tags, d.tags),
        exact_key: weight(w.exact_key, d.exact_key),
        name: weight(w.name, d.name),
    }
}

/// The fusion `search.fusion` in `mem7.yaml` sets (unset ones: the defaults).
pub fn fusion_of(settings: &SearchSettings) -> fusion::Fusion {
    let d = fusion::Fusion::default();
    let f = &settings.fusion;
    fusion::Fusion {
        lexical: weight(f.lexical, d.lexical),
        semantic: weight(f.semantic, d.semantic),
        same_time: weight(f.same_time, d.same_time),
        same_entity: weight(f.same_entity, d.same_entity),
        pool: f.pool.filter(|p| *p > 0).unwrap_or(d.pool).min(10_000),
        meaning_pool: f
            .meaning_pool
            .filter(|p| *p > 0)
            .unwrap_or(d.meaning_pool)
            .min(10_000),
        beside: weight(f.beside, d.beside),
        lenders: f.lenders.unwrap_or(d.lenders).min(1_000),
        coverage: weight(f.coverage, d.coverage),
        date: weight(f.date, d.date),
        word_floor: weight(f.word_floor, d.word_floor),
        owner: weight(f.owner, d.owner),
        entity_next: weight(f.entity_next, d.entity_next),
        entity_lenders: f.entity_lenders.unwrap_or(d.entity_lenders).min(1_000),
    }
}

/// A weight from the settings: finite and not negative, else the default.
fn weight(set: Option<f32>, default: f32) -> f32 {
    set.filter(|v| v.is_finite() && *v >= 0.0)
        .unwrap_or(default)
}
