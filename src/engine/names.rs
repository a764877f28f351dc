//! Names that don't drift: the existing keys near one asked for (a miss) and the
//! look-alike slots of a new key, by name and, with vectors, by meaning.

use super::*;

impl Engine {
    /// Existing keys near `key` by name: the same ignoring case and separators, or a
    /// small edit away.
    pub fn near_keys_by_name(&self, key: &str) -> Result<Vec<crate::core::names::NearKey>> {
        let keys = self.index.all_keys()?;
        Ok(crate::core::names::near_keys(
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
    ) -> Result<Vec<crate::core::names::NearKey>> {
        let mut near = self.near_keys_by_name(key)?;
        let words = crate::embed::version_text(key, "");
        let meaning = self.near_in_meaning(words.trim_end_matches(": "), now, None)?;
        crate::core::names::merge(
            &mut near,
            meaning.into_iter().filter(|(k, _)| k != key).map(|(k, s)| {
                crate::core::names::NearKey {
                    key: k,
                    nearness: crate::core::names::Nearness::meaning(s),
                }
            }),
        );
        Ok(near)
    }

    /// For a store of `key` = `value`: when the key is new to the workspace, the existing
    /// keys that look like the same slot: the same ignoring case and separators, or
    /// (with the local model) a current fact whose key and value, embedded together as
    /// meaning search embeds versions, are within [`SIMILAR_SLOT`] of the new ones,
    /// compared with the vectors already cached. A store never calls a remote provider
    /// and never waits for vectors to be filled in. Empty for a known key.
    pub fn look_alikes(&mut self, key: &str, value: &str, now: TxTime) -> Result<Vec<LookAlike>> {
        if !self.index.history(key, None)?.is_empty() {
            return Ok(Vec::new());
        }
        let mut out: Vec<LookAlike> = self
            .index
            .same_slot_keys(key)?
            .into_iter()
            .map(|k| LookAlike {
                key: k,
                why: "same key ignoring case and separators".into(),
            })
            .collect();
        // A disguised key (mixed scripts, full-width forms) names its ASCII twin, whether
        // or not that key exists yet.
        if let Some(twin) = crate::core::names::ascii_look_alike(key)
            && !out.iter().any(|l| l.key == twin)
        {
            out.insert(
                0,
                LookAlike {
                    key: twin,
                    why: "the key mixes scripts or uses full-width letters: this is the ASCII key it looks like".into(),
                },
            );
        }
        let text = crate::embed::version_text(key, value);
        for (k, s) in self.near_in_meaning_for_store(&text, now, SIMILAR_SLOT)? {
            if k != key && !out.iter().any(|l| l.key == k) {
                out.push(LookAlike {
                    key: k,
                    why: format!("its key and current value are near in meaning ({s:.2})"),
                });
            }
        }
        out.truncate(crate::core::names::MAX_NEAR);
        Ok(out)
    }
}
