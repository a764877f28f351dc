//! Names that don't drift: the existing keys near one asked for (a miss) and the
//! look-alike slots of a new key, by name and, with vectors, by meaning.

use super::*;
use crate::text::drift::{self, KeyWords, Verdict};

impl Engine {
    /// Existing keys near `key` by name: the same ignoring case and separators, or a
    /// small edit away.
    pub fn near_keys_by_name(&self, key: &str) -> Result<Vec<crate::text::names::NearKey>> {
        // The keys that can be near, found by index (`index/near.rs`); all of them only
        // when they crowd so closely around `key` that reading them is cheaper.
        let keys = match self.index.near_key_candidates(key)? {
            Some(keys) => keys,
            None => self.index.all_keys()?,
        };
        Ok(crate::text::names::near_keys(
            key,
            keys.iter().map(String::as_str),
        ))
    }

    /// Existing keys near `key`, for a read that found nothing (docs/agents.md "Names
    /// that don't drift"): by name, and, when meaning search is on and vectors exist,
    /// the keys whose current value is nearest in meaning to the key's words.
    pub fn near_keys(
        &mut self,
        key: &str,
        now: TxTime,
    ) -> Result<Vec<crate::text::names::NearKey>> {
        let mut near = self.near_keys_by_name(key)?;
        let words = crate::embed::version_text(key, "");
        let meaning = self.near_in_meaning(words.trim_end_matches(": "), now, None)?;
        crate::text::names::merge(
            &mut near,
            meaning.into_iter().filter(|(k, _)| k != key).map(|(k, s)| {
                crate::text::names::NearKey {
                    key: k,
                    nearness: crate::text::names::Nearness::meaning(s),
                }
            }),
        );
        Ok(near)
    }

    /// For a store of `key`: when the key is new to the workspace, the existing keys
    /// that look like the same slot (docs/agents.md "One slot per fact"): the same
    /// ignoring case and separators, the ASCII key a disguised one passes for, and the
    /// keys whose own words name the same slot ([`crate::text::drift`]): a shape drift
    /// (order, plural, abbreviation), a longer or shorter name, a synonym, and, with the
    /// local model, leftover words near in meaning. The value plays no part: a drifted
    /// store usually brings a new value. A store never calls a remote provider. Empty
    /// for a known key.
    pub fn look_alikes(&mut self, key: &str) -> Result<Vec<LookAlike>> {
        if !self.index.history(key, None)?.is_empty() {
            return Ok(Vec::new());
        }
        if !self.meaning_checks_deferred() {
            self.open_embedder_ahead();
        }
        let mut out: Vec<LookAlike> = self
            .index
            .same_slot_keys(key)?
            .into_iter()
            .map(|k| LookAlike {
                key: k,
                why: Alike::SameIgnoringCase,
            })
            .collect();
        // A disguised key (mixed scripts, full-width forms) names its ASCII twin, whether
        // or not that key exists yet.
        if let Some(twin) = crate::text::names::ascii_look_alike(key)
            && !out.iter().any(|l| l.key == twin)
        {
            out.insert(
                0,
                LookAlike {
                    key: twin,
                    why: Alike::AsciiTwin,
                },
            );
        }
        self.drifted(key, &mut out)?;
        out.truncate(crate::text::names::MAX_NEAR);
        Ok(out)
    }

    /// The look-alikes by name of a new `key` among the candidates a server's store left for
    /// after its answer (those past [`DRIFT_AT_ONCE`]); the meaning side is not asked about
    /// them (the store asked about the first [`DRIFT_ASKED`] that needed it).
    pub(super) fn later_by_name(&self, key: &str) -> Result<Vec<LookAlike>> {
        let mine = KeyWords::of(key);
        let mut out = Vec::new();
        for k in self
            .index
            .keys_sharing_words(&mine.stems(), DRIFT_CANDIDATES)?
            .into_iter()
            .skip(DRIFT_AT_ONCE)
        {
            if k == key {
                continue;
            }
            if let Verdict::Same(why) = drift::judge(&mine, &KeyWords::of(&k)) {
                out.push(LookAlike {
                    key: k,
                    why: Alike::Words(why),
                });
            }
        }
        Ok(out)
    }

    /// Adds to `out` the keys whose words name the same slot as `key`'s.
    fn drifted(&mut self, key: &str, out: &mut Vec<LookAlike>) -> Result<()> {
        let mine = KeyWords::of(key);
        let mut ask = Vec::new();
        // A server's store judges the keys sharing the most words at once and the rest
        // after its answer (`Engine::settle_deferred`): at 100k facts, 2,000 candidates
        // took most of a new key's store.
        let at_once = if self.meaning_checks_deferred() {
            DRIFT_AT_ONCE
        } else {
            DRIFT_CANDIDATES
        };
        let candidates = self.index.keys_sharing_words(&mine.stems(), at_once)?;
        if candidates.len() == at_once && at_once < DRIFT_CANDIDATES {
            self.note(super::Note::NamesLater {
                key: key.to_string(),
                keys: at_once,
            });
            self.defer_names(key);
        }
        for k in candidates {
            if k == key || out.iter().any(|l| l.key == k) {
                continue;
            }
            let theirs = KeyWords::of(&k);
            match drift::judge(&mine, &theirs) {
                Verdict::Same(by) => out.push(LookAlike {
                    key: k,
                    why: Alike::Words(by),
                }),
                // The model is asked about the keys sharing the most words first, and
                // about a few only: a store never embeds thousands of texts.
                Verdict::AskMeaning { mine: a, theirs: b } if ask.len() < DRIFT_ASKED => {
                    ask.push((k, theirs, Asked::Words(a, b)))
                }
                Verdict::AskQualifier { generic, specific } if ask.len() < DRIFT_ASKED => {
                    ask.push((k, theirs, Asked::Qualifier(generic, specific)))
                }
                Verdict::AskMeaning { .. } | Verdict::AskQualifier { .. } => {}
                Verdict::Different => {}
            }
        }
        if ask.is_empty() || !self.local_model_on() {
            return Ok(());
        }
        let mut texts: Vec<String> = vec![mine.phrase()];
        // (`KeyWords::phrase` is `index::vectors::key_text`: the key's own vector.)
        for (_, theirs, asked) in &ask {
            texts.push(theirs.phrase());
            if let Asked::Words(a, b) = asked {
                texts.extend([a.clone(), b.clone()]);
            }
        }
        // A server's store judges from cached vectors only and answers at once; what
        // lacks a vector is judged after the answer, once its background work has
        // embedded it (`deferred.rs`). Elsewhere the texts are embedded now.
        let deferred = self.meaning_checks_deferred();
        let got = if deferred {
            self.cached_vectors_of(&texts)
        } else {
            self.embed_cached(&texts)
        };
        let vectors = match got {
            Ok(v) => v,
            Err(e) => {
                self.note(super::Note::NoLookAlikesByMeaning {
                    error: e.to_string(),
                });
                return Ok(());
            }
        };
        let phrase = mine.phrase();
        let mut later = Vec::new();
        for (k, theirs, asked) in ask {
            if asked
                .texts(&phrase, &theirs)
                .iter()
                .any(|t| !vectors.contains_key(t.as_str()))
            {
                later.push((k, theirs, asked));
                continue;
            }
            if let Some(why) = near_enough(&vectors, (&phrase, &theirs), &asked) {
                out.push(LookAlike { key: k, why });
            }
        }
        if !later.is_empty() {
            let missing: Vec<String> = texts
                .into_iter()
                .filter(|t| !vectors.contains_key(t))
                .collect();
            self.note(super::Note::LookAlikesLater {
                key: key.to_string(),
                keys: later.len(),
            });
            self.defer_drift(
                super::deferred::PendingDrift {
                    key: key.to_string(),
                    asks: later,
                },
                missing,
            );
        }
        Ok(())
    }
}

/// What the model is asked about a pair of keys.
#[derive(Clone, Debug)]
pub(super) enum Asked {
    /// Whether the words left after pairing (mine, theirs) mean the same.
    Words(String, String),
    /// Whether the keys mean the same, one naming its thing by a generic word and the
    /// other by a specific one (generic, specific).
    Qualifier(String, String),
}

impl Asked {
    /// The texts whose vectors answer it: both keys as phrases, and the leftover words.
    pub(super) fn texts(&self, phrase: &str, theirs: &KeyWords) -> Vec<String> {
        let mut out = vec![phrase.to_string(), theirs.phrase()];
        if let Asked::Words(a, b) = self {
            out.extend([a.clone(), b.clone()]);
        }
        out
    }
}

/// Whether two keys left for the model name one slot, by what was `asked`: the
/// leftover words and the keys as phrases both near enough in meaning, or (a generic
/// word swapped for a specific one) the keys near enough; why, when they are.
/// Every text of [`Asked::texts`] has its vector in `vectors`.
pub(super) fn near_enough(
    vectors: &std::collections::HashMap<String, Vec<f32>>,
    (phrase, theirs): (&str, &KeyWords),
    asked: &Asked,
) -> Option<Alike> {
    let near = |x: &str, y: &str| crate::embed::dot(&vectors[x], &vectors[y]);
    let whole = near(phrase, &theirs.phrase());
    match asked {
        Asked::Words(a, b) => {
            let words = near(a, b);
            (words >= DRIFT_WORDS_NEAR && whole >= DRIFT_KEY_NEAR).then(|| Alike::NearWords {
                mine: a.clone(),
                theirs: b.clone(),
                near: words,
            })
        }
        Asked::Qualifier(generic, specific) => {
            (whole >= DRIFT_QUALIFIER_NEAR).then(|| Alike::Qualifier {
                generic: generic.clone(),
                specific: specific.clone(),
                near: whole,
            })
        }
    }
}

/// Keys a new key is compared with at most (those sharing the most words first).
pub(super) const DRIFT_CANDIDATES: usize = 2000;
/// The candidates a server's store judges by name before it answers (the keys sharing
/// the most words); the rest are judged after the answer.
pub(super) const DRIFT_AT_ONCE: usize = 256;
/// Of those, the keys the model is asked about at most (each costs up to three short
/// texts to embed, most of them cached after the first time).
const DRIFT_ASKED: usize = 12;
/// How near in meaning (cosine, all-MiniLM-L6-v2) the words left over after pairing two
/// keys' words, and the two keys as phrases, must both be for the keys to name one slot.
/// Tuned on the `tune` half of examples/data/drift.json (docs/agents.md).
pub const DRIFT_WORDS_NEAR: f32 = 0.60;
/// See [`DRIFT_WORDS_NEAR`].
pub const DRIFT_KEY_NEAR: f32 = 0.60;
/// How near in meaning two whole keys must be when one swaps a generic word for a
/// specific one (`orchestration:tool` / `orchestration:scheduler`): a generic word and
/// a specific one are never near as words (0.22–0.45 on the tune half), but the keys
/// of one slot are (0.59–0.89 there, new slots' 0.56 at most in this shape). Tuned on the
/// `tune` half of examples/data/drift.json (docs/agents.md).
pub const DRIFT_QUALIFIER_NEAR: f32 = 0.65;
