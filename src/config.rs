//! Workspace settings from `mem7.yaml`. Every setting is optional.

use serde::Deserialize;

use crate::core::Tier;

/// Default limit on a value's size.
pub const DEFAULT_MAX_VALUE_BYTES: usize = 64 * 1024;

/// Settings read from `mem7.yaml` (unknown fields are ignored, for forward compatibility).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct Config {
    /// Largest value accepted by `store`, in bytes (default 65536).
    pub max_value_bytes: Option<usize>,
    /// The embedding provider (`embeddings:`), overridden by the `MEM7_EMBED_*` variables.
    pub embeddings: crate::embed::EmbedSettings,
    /// Search settings (`search:`).
    pub search: SearchSettings,
    /// Sharing through git (`sync:`).
    pub sync: SyncSettings,
    /// Keys of many values (`many:`): patterns (`*` for any run of characters) whose keys
    /// keep every value stored, each added beside the others. Unset: [`DEFAULT_MANY`].
    pub many: Option<Vec<String>>,
    /// Who may vouch for what (`trust:`).
    pub trust: TrustSettings,
    /// Which scope a write goes to when none is named (`scopes:`).
    pub scopes: ScopeSettings,
    /// What hooks capture (`capture:`; docs/capture.md).
    pub capture: CaptureSettings,
}

/// The `capture:` section of `mem7.yaml`: what `mem7 hook` records. Read from the
/// user's own workspace; a project's can only turn more off.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct CaptureSettings {
    /// `false` captures nothing at all.
    pub enabled: Option<bool>,
    /// Kinds not captured: sessions, files, commands, commits, merges, pushes,
    /// branches, prs, subagents.
    pub off: Option<Vec<String>>,
    /// `false` keeps project facts (commits, merges, pushes, pull requests) in the
    /// local scope with the session trail, instead of the project's.
    pub share: Option<bool>,
}

/// The `scopes:` section of `mem7.yaml` (read from the project's workspace, else the
/// user's): key patterns whose writes go to the user or the local scope; every other
/// key goes to the project's.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct ScopeSettings {
    /// Default `["user:*", "pref:*"]`.
    pub user: Option<Vec<String>>,
    /// Default `["local:*"]`.
    pub local: Option<Vec<String>>,
}

/// The keys of many values when `mem7.yaml` names none: events and decisions accumulate.
pub const DEFAULT_MANY: [&str; 2] = ["event:*", "decision:*"];

/// The `trust:` section of `mem7.yaml`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct TrustSettings {
    /// The highest tier an agent (an MCP client) or an import may record: `inferred`
    /// (the default: only a person at the command line asserts) or `asserted`.
    pub agents: Option<String>,
}

/// The `sync:` section of `mem7.yaml`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct SyncSettings {
    /// How often `mem7 watch` runs `mem7 sync` (`30s`, `5m`, `1h`; `--sync-every`
    /// overrides it). Unset: watch does not sync.
    pub every: Option<String>,
}

/// The RRF constant unless `search.rrf_k` says otherwise: the value of Cormack, Clarke
/// and Büttcher's reciprocal rank fusion paper, which works across collections.
pub const DEFAULT_RRF_K: f64 = 60.0;

/// The `search:` section of `mem7.yaml`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct SearchSettings {
    /// Hybrid ranking scores a version `1/(rrf_k + rank)` per side it appears on (ranks
    /// from 1). Larger values flatten the difference between top and lower ranks.
    pub rrf_k: Option<f64>,
    /// A version found only by meaning is a hit only when its cosine similarity to the
    /// query reaches this (word hits are never dropped). Default
    /// [`DEFAULT_MIN_SIMILARITY`]; 0 keeps every nearest neighbour.
    pub min_similarity: Option<f32>,
    /// How much each kind of word match counts (`weights:` with `value`, `key`, `tags`,
    /// `exact_key`, `name`); unset ones keep their measured defaults.
    pub weights: WeightSettings,
    /// How word and meaning results are fused (`fusion:` with `lexical`, `semantic`,
    /// `coverage`, `date`, `same_time`, `same_entity`, `beside`, `lenders`, `pool`,
    /// `meaning_pool`, `word_floor`).
    pub fusion: FusionSettings,
    /// The most sentences of a fact that get a vector of their own beside the whole
    /// text's (meaning search scores a fact by the nearest of its vectors); 0 gives
    /// each fact one vector. Default [`crate::embed::sentences::DEFAULT_SENTENCES`],
    /// at most [`crate::embed::sentences::MAX_SENTENCES`].
    pub sentences: Option<usize>,
}

/// `search.weights:` in `mem7.yaml`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct WeightSettings {
    pub value: Option<f32>,
    pub key: Option<f32>,
    pub tags: Option<f32>,
    pub exact_key: Option<f32>,
    pub name: Option<f32>,
}

/// `search.fusion:` in `mem7.yaml`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct FusionSettings {
    pub lexical: Option<f32>,
    pub semantic: Option<f32>,
    pub same_time: Option<f32>,
    pub same_entity: Option<f32>,
    pub pool: Option<usize>,
    pub meaning_pool: Option<usize>,
    pub beside: Option<f32>,
    pub lenders: Option<usize>,
    pub coverage: Option<f32>,
    pub date: Option<f32>,
    pub word_floor: Option<f32>,
}

/// The default floor under meaning-only hits, chosen on `just rank-eval`'s labelled set
/// with all-MiniLM-L6-v2 (the curve is in docs/search.md).
pub const DEFAULT_MIN_SIMILARITY: f32 = 0.29;

impl Config {
    /// Parses `mem7.yaml`'s text.
    pub fn parse(text: &str) -> Result<Config, String> {
        crate::format::yaml::config(text)
    }

    /// The effective value-size limit.
    pub fn max_value_bytes(&self) -> usize {
        self.max_value_bytes.unwrap_or(DEFAULT_MAX_VALUE_BYTES)
    }

    /// Whether `key` keeps many values (it matches a `many:` pattern).
    pub fn is_many(&self, key: &str) -> bool {
        match &self.many {
            Some(patterns) => crate::core::pattern::any(patterns, key),
            None => DEFAULT_MANY
                .iter()
                .any(|p| crate::core::pattern::matches(p, key)),
        }
    }

    /// The scope a write of `key` goes to when the writer names none.
    pub fn write_level(&self, key: &str) -> crate::core::level::Level {
        use crate::core::level::{DEFAULT_LOCAL_KEYS, DEFAULT_USER_KEYS, write_level};
        let or = |given: &Option<Vec<String>>, default: &[&str]| {
            given
                .clone()
                .unwrap_or_else(|| default.iter().map(|s| s.to_string()).collect())
        };
        write_level(
            key,
            &or(&self.scopes.user, &DEFAULT_USER_KEYS),
            &or(&self.scopes.local, &DEFAULT_LOCAL_KEYS),
        )
    }

    /// The highest tier agents and imports may record (`trust.agents`).
    pub fn agent_ceiling(&self) -> crate::Result<Tier> {
        match self.trust.agents.as_deref() {
            None => Ok(Tier::Inferred),
            Some(word) => Tier::parse(word.trim()).ok_or_else(|| {
                crate::Error::input(
                    format!("mem7.yaml: trust.agents is `{word}`, which is not a tier"),
                    "set trust.agents to `inferred` (the default) or `asserted`",
                )
            }),
        }
    }
}

impl SearchSettings {
    /// The effective floor under meaning-only hits.
    pub fn min_similarity(&self) -> f32 {
        self.min_similarity
            .filter(|s| s.is_finite())
            .unwrap_or(DEFAULT_MIN_SIMILARITY)
    }

    /// The effective number of sentence vectors per fact (`sentences`).
    pub fn sentences(&self) -> usize {
        use crate::embed::sentences::{DEFAULT_SENTENCES, MAX_SENTENCES};
        self.sentences
            .unwrap_or(DEFAULT_SENTENCES)
            .min(MAX_SENTENCES)
    }

    /// The effective RRF constant.
    pub fn rrf_k(&self) -> f64 {
        self.rrf_k
            .filter(|k| k.is_finite() && *k >= 0.0)
            .unwrap_or(DEFAULT_RRF_K)
    }
}
