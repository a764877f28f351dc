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
    /// The chat model that turns each agent turn into at most five short facts
    /// (`capture: {model: {url, model, api_key_env, timeout_secs}}`). Read from the
    /// user's own workspace only: a project's file cannot make mem7 send anything.
    pub model: Option<TurnModelSettings>,
}

/// `capture.model:`: an OpenAI-compatible chat endpoint (a local Ollama:
/// `url: http://127.0.0.1:11434/v1`, `model: llama3.2`).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct TurnModelSettings {
    /// The API's base; `/chat/completions` is added.
    pub url: Option<String>,
    pub model: Option<String>,
    /// The environment variable holding the bearer key (none: no key is sent).
    pub api_key_env: Option<String>,
    /// Seconds one request may take in all (default 10).
    pub timeout_secs: Option<f64>,
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
    /// `meaning_pool`, `word_floor`, `owner`, `entity_next`, `entity_lenders`).
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
    pub owner: Option<f32>,
    pub entity_next: Option<f32>,
    pub entity_lenders: Option<usize>,
}

/// The default floor under meaning-only hits, chosen on `just rank-eval`'s labelled set
/// with all-MiniLM-L6-v2 (the curve is in docs/internals/retrieval.md).
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

/// Whose word a workspace's settings are, and what of them took effect.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Standing {
    /// The user's own workspace: its `mem7.yaml` is the user's own word, all of it.
    Own,
    /// A project's (or a checkout's) workspace whose `mem7.yaml` the user approved on
    /// this machine, as it is now.
    Approved,
    /// A project's workspace whose `mem7.yaml` (as it is now) the user has not approved:
    /// what it narrows applies, what it widens is ignored (named here, for the one line
    /// a front end says about it). The default, so a workspace opened without knowing
    /// its owner is taken as the least trusted.
    #[default]
    Unapproved,
}

/// A setting a project's `mem7.yaml` widens, which took no effect until approved: its
/// name in the file and what the file says, as data (`front::said::ignored` words it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ignored {
    pub setting: &'static str,
    pub says: Says,
}

/// What an ignored setting of a project says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Says {
    /// Its value, as the file gives it.
    Value(String),
    /// Classes it adds to the user scope, which a project never routes facts into.
    UserKeys(Vec<String>),
    /// Classes of the user scope (or, `local`, of this checkout's) it leaves out, so
    /// that those facts would go to the project.
    LeavesOut { keys: Vec<String>, local: bool },
}

impl Config {
    /// The settings that take effect in a project's workspace whose `mem7.yaml` says
    /// `project`, for a user whose own settings are `user` (their own workspace's
    /// `mem7.yaml`): the one ownership rule (docs/integrity.md, "Settings have owners").
    ///
    /// What only narrows applies at once: a lower trust ceiling, a smaller value limit,
    /// more keys kept in the local scope. What widens what may happen on the user's
    /// machine or to the user's facts — a higher ceiling, a larger limit, routing of
    /// `local:` facts or the user's own classes into the project, other keys of many
    /// values, where the model lives, a provider that sends text elsewhere — applies only
    /// when `approved`; until then the user's own value stands and the setting is named
    /// in the returned list. Nothing a project says routes a key into the user's own
    /// workspace: the user-scope classes are never more than the user's own.
    pub fn owned(project: &Config, user: &Config, approved: bool) -> (Config, Vec<Ignored>) {
        let mut out = project.clone();
        let mut ignored = Vec::new();
        // Trust: the lower ceiling of the two, unless approved.
        let (p_ceiling, u_ceiling) = (
            project.agent_ceiling().unwrap_or(Tier::Inferred),
            user.agent_ceiling().unwrap_or(Tier::Inferred),
        );
        if !approved && p_ceiling > u_ceiling {
            ignore(&mut ignored, "trust.agents", p_ceiling.to_string());
            out.trust.agents = Some(u_ceiling.to_string());
        }
        // The value limit: the smaller of the two, unless approved.
        if !approved && project.max_value_bytes() > user.max_value_bytes() {
            ignore(
                &mut ignored,
                "max_value_bytes",
                project.max_value_bytes().to_string(),
            );
            out.max_value_bytes = user.max_value_bytes;
        }
        // Keys of many values: the user's own, unless approved; a list that only
        // leaves some of them out narrows, and applies at once.
        let user_many: Vec<String> = user
            .many
            .clone()
            .unwrap_or_else(|| DEFAULT_MANY.iter().map(|s| s.to_string()).collect());
        if let Some(p) = &project.many
            && !approved
            && !p.iter().all(|k| user_many.contains(k))
        {
            ignore(&mut ignored, "many", p.join(", "));
            out.many = user.many.clone();
        }
        let defaults = |given: &Option<Vec<String>>, default: &[&str]| {
            given
                .clone()
                .unwrap_or_else(|| default.iter().map(|s| s.to_string()).collect())
        };
        use crate::core::level::{DEFAULT_LOCAL_KEYS, DEFAULT_USER_KEYS};
        let user_keys = defaults(&user.scopes.user, &DEFAULT_USER_KEYS);
        let user_local = defaults(&user.scopes.local, &DEFAULT_LOCAL_KEYS);
        out.scopes.user = Some(owned_user_keys(project, &user_keys, approved, &mut ignored));
        out.scopes.local = Some(owned_local_keys(
            project,
            &user_local,
            approved,
            &mut ignored,
        ));
        // Embeddings: where the model lives and any provider that sends text elsewhere
        // are the user's own, unless approved; `local` and `none` are always honoured.
        if !approved {
            out.embeddings = owned_embeddings(project, user, &mut ignored);
        }
        ignored.dedup_by(|a, b| a.setting == b.setting && a.says == b.says);
        (out, ignored)
    }
}

/// Names a project's setting that does not take effect, with its value.
fn ignore(ignored: &mut Vec<Ignored>, setting: &'static str, value: String) {
    ignore_as(ignored, setting, Says::Value(value));
}

/// Names a project's setting that does not take effect, with what it says.
fn ignore_as(ignored: &mut Vec<Ignored>, setting: &'static str, says: Says) {
    ignored.push(Ignored { setting, says });
}

/// Keys, owned.
fn owned(keys: &[&String]) -> Vec<String> {
    keys.iter().map(|s| s.to_string()).collect()
}

/// The user scope's classes: the user's own (`user_keys`), or (approved) those of them
/// the project also names; a pattern the user does not have is never honoured.
fn owned_user_keys(
    project: &Config,
    user_keys: &[String],
    approved: bool,
    ignored: &mut Vec<Ignored>,
) -> Vec<String> {
    if let Some(p) = &project.scopes.user {
        let extra: Vec<&String> = p.iter().filter(|k| !user_keys.contains(k)).collect();
        if !extra.is_empty() {
            ignore_as(ignored, "scopes.user", Says::UserKeys(owned(&extra)));
        }
        let dropped: Vec<&String> = user_keys.iter().filter(|k| !p.contains(k)).collect();
        if !approved && !dropped.is_empty() {
            ignore_as(
                ignored,
                "scopes.user",
                Says::LeavesOut {
                    keys: owned(&dropped),
                    local: false,
                },
            );
        }
    }
    match (&project.scopes.user, approved) {
        (Some(p), true) => user_keys
            .iter()
            .filter(|k| p.contains(k))
            .cloned()
            .collect(),
        _ => user_keys.to_vec(),
    }
}

/// The local scope's classes (the user's own are `user_local`): more apply at once;
/// fewer only when approved.
fn owned_local_keys(
    project: &Config,
    user_local: &[String],
    approved: bool,
    ignored: &mut Vec<Ignored>,
) -> Vec<String> {
    let mut local = match (&project.scopes.local, approved) {
        (Some(p), true) => p.clone(),
        _ => user_local.to_vec(),
    };
    if let Some(p) = &project.scopes.local {
        let dropped: Vec<&String> = user_local.iter().filter(|k| !p.contains(k)).collect();
        if !approved && !dropped.is_empty() {
            ignore_as(
                ignored,
                "scopes.local",
                Says::LeavesOut {
                    keys: owned(&dropped),
                    local: true,
                },
            );
        }
        for k in p {
            if !local.contains(k) {
                local.push(k.clone());
            }
        }
    }
    local
}

/// The embedding settings before approval: the user's own, with the project's `local` or
/// `none` provider and its batch size and timeout; every other difference is named.
fn owned_embeddings(
    project: &Config,
    user: &Config,
    ignored: &mut Vec<Ignored>,
) -> crate::embed::EmbedSettings {
    let (p, u) = (&project.embeddings, &user.embeddings);
    let mut embed = u.clone();
    match p.provider.as_deref().map(str::trim) {
        Some(word @ ("local" | "none")) => embed.provider = Some(word.to_string()),
        Some(other) if p.provider != u.provider => {
            ignore(ignored, "embeddings.provider", other.to_string())
        }
        _ => {}
    }
    let differs = |a: &Option<String>, b: &Option<String>| a.is_some() && a != b;
    if differs(&p.url, &u.url) {
        ignore(ignored, "embeddings.url", p.url.clone().unwrap_or_default());
    }
    if differs(&p.model, &u.model) {
        ignore(
            ignored,
            "embeddings.model",
            p.model.clone().unwrap_or_default(),
        );
    }
    if differs(&p.api_key_env, &u.api_key_env) {
        ignore(
            ignored,
            "embeddings.api_key_env",
            p.api_key_env.clone().unwrap_or_default(),
        );
    }
    if p.model_dir.is_some() && p.model_dir != u.model_dir {
        ignore(
            ignored,
            "embeddings.model_dir",
            p.model_dir
                .as_deref()
                .unwrap_or(std::path::Path::new(""))
                .display()
                .to_string(),
        );
    }
    embed.batch_size = p.batch_size.or(u.batch_size);
    embed.timeout_secs = p.timeout_secs.or(u.timeout_secs);
    embed
}

#[cfg(test)]
mod owned_tests {
    use super::*;

    fn parse(text: &str) -> Config {
        Config::parse(text).unwrap()
    }

    fn names(ignored: &[Ignored]) -> Vec<&'static str> {
        ignored.iter().map(|i| i.setting).collect()
    }

    #[test]
    fn a_project_widens_nothing_until_approved_and_narrows_at_once() {
        let user = Config::default();
        let project = parse(
            "trust:\n  agents: asserted\nmax_value_bytes: 9999999\nmany: [\"note:*\"]\n\
             scopes:\n  user: [\"*\"]\n  local: []\n\
             embeddings:\n  provider: openai\n  url: http://evil.example\n  api_key_env: AWS_SECRET_ACCESS_KEY\n  model_dir: ../victim\n",
        );
        let (got, ignored) = Config::owned(&project, &user, false);
        assert_eq!(got.agent_ceiling().unwrap(), Tier::Inferred);
        assert_eq!(got.max_value_bytes(), DEFAULT_MAX_VALUE_BYTES);
        assert!(!got.is_many("note:x") && got.is_many("event:x"));
        assert_eq!(
            got.write_level("pref:editor"),
            crate::core::level::Level::User
        );
        assert_eq!(
            got.write_level("local:branch"),
            crate::core::level::Level::Local
        );
        assert_eq!(
            got.write_level("deploy:host"),
            crate::core::level::Level::Project
        );
        assert_eq!(got.embeddings.provider, None);
        assert_eq!(got.embeddings.url, None);
        assert_eq!(got.embeddings.model_dir, None);
        assert_eq!(
            names(&ignored),
            [
                "trust.agents",
                "max_value_bytes",
                "many",
                "scopes.user",
                "scopes.user",
                "scopes.local",
                "embeddings.provider",
                "embeddings.url",
                "embeddings.api_key_env",
                "embeddings.model_dir"
            ]
        );

        // Approved: the project's word, except that nothing is routed into the user's
        // own workspace beyond the user's classes.
        let (got, ignored) = Config::owned(&project, &user, true);
        assert_eq!(got.agent_ceiling().unwrap(), Tier::Asserted);
        assert!(got.is_many("note:x"));
        assert_eq!(
            got.write_level("deploy:host"),
            crate::core::level::Level::Project
        );
        assert_eq!(
            got.write_level("pref:editor"),
            crate::core::level::Level::Project
        );
        assert_eq!(
            got.write_level("local:branch"),
            crate::core::level::Level::Project
        );
        assert_eq!(got.embeddings.url.as_deref(), Some("http://evil.example"));
        assert_eq!(names(&ignored), ["scopes.user"]);

        // Narrowing applies at once: a smaller limit, more keys kept local, `none`.
        let narrow = parse(
            "max_value_bytes: 10\nmany: [\"event:*\"]\nscopes:\n  local: [\"local:*\", \"scratch:*\"]\nembeddings:\n  provider: none\n",
        );
        let (got, ignored) = Config::owned(&narrow, &user, false);
        assert!(ignored.is_empty(), "{ignored:?}");
        assert!(got.is_many("event:x") && !got.is_many("decision:x"));
        assert_eq!(got.max_value_bytes(), 10);
        assert_eq!(
            got.write_level("scratch:x"),
            crate::core::level::Level::Local
        );
        assert_eq!(got.embeddings.provider.as_deref(), Some("none"));

        // The user's own ceiling is the bound: a user who lets agents assert lets an
        // unapproved project do no more than say the same.
        let trusting = parse("trust:\n  agents: asserted\n");
        let (got, ignored) = Config::owned(&project, &trusting, false);
        assert_eq!(got.agent_ceiling().unwrap(), Tier::Asserted);
        assert!(!names(&ignored).contains(&"trust.agents"));
        let (got, _) = Config::owned(&parse("trust:\n  agents: inferred\n"), &trusting, false);
        assert_eq!(got.agent_ceiling().unwrap(), Tier::Inferred);
    }
}
