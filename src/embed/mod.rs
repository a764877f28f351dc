//! Embedding providers: the text of a version turned into a vector, for meaning search.
//!
//! One trait, [`Embedder`], three providers: the local all-MiniLM-L6-v2 model run
//! in-process ([`local`]), and two HTTP APIs ([`remote`]): Ollama and the OpenAI-compatible
//! `/embeddings` (OpenAI, llama.cpp server, vLLM, LM Studio). Which one is used comes from
//! `mem7.yaml` (`embeddings:`) and the `MEM7_EMBED_*` variables, resolved by [`resolve`].
//!
//! Vectors are cached in `.mem7/embeddings.sqlite` ([`crate::index::embeddings`]) keyed by
//! the blake3 of the embedded text and the provider's model id, so each (text, model) is
//! computed once, and rebuilds of the index keep them.

mod encoder;
pub mod install;
pub mod local;
pub mod remote;
pub mod sentences;
pub mod wordpiece;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use crate::error::{Error, Result};

/// The model the `local` provider runs.
pub const LOCAL_MODEL: &str = "all-MiniLM-L6-v2";
/// Texts sent to a provider per request unless `embeddings.batch_size` says otherwise.
pub const DEFAULT_BATCH: usize = 32;
/// How long an HTTP provider may take for one request unless `embeddings.timeout_secs`
/// says otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// The `embeddings:` section of `mem7.yaml`. Every field is optional; the `MEM7_EMBED_*`
/// variables override it.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct EmbedSettings {
    /// `local`, `ollama`, `openai` or `none`.
    pub provider: Option<String>,
    /// The HTTP provider's base URL.
    pub url: Option<String>,
    /// The provider's model name.
    pub model: Option<String>,
    /// The name of the variable that holds the API key (keys never go in the workspace,
    /// which is shared in git). Default: `MEM7_EMBED_API_KEY`.
    pub api_key_env: Option<String>,
    /// Where the local model's files are.
    pub model_dir: Option<PathBuf>,
    /// Texts per request (default 32).
    pub batch_size: Option<usize>,
    /// Seconds an HTTP request may take (default 30).
    pub timeout_secs: Option<f64>,
}

/// The `MEM7_EMBED_*` variables (and `MEM7_MODEL_DIR`, `SSL_CERT_FILE`), read once by the
/// front ends.
#[derive(Clone, Debug, Default)]
pub struct EmbedEnv {
    pub provider: Option<String>,
    pub url: Option<String>,
    pub model: Option<String>,
    pub api_key: Option<String>,
    pub model_dir: Option<PathBuf>,
    /// `$XDG_DATA_HOME` or `$HOME/.local/share`, where the local model lives by default.
    pub data_home: Option<PathBuf>,
    /// `SSL_CERT_FILE`: the certificate authorities `mem7 model fetch` trusts instead of
    /// the built-in roots.
    pub ca_file: Option<PathBuf>,
    /// `MEM7_FETCH_TIMEOUT`: seconds `mem7 model fetch` waits to connect, for an answer,
    /// and for the whole download (defaults 20 s, 60 s, 20 min).
    pub fetch_timeout: Option<String>,
    /// Any other variable a setting names (`api_key_env`).
    pub lookup: Option<fn(&str) -> Option<String>>,
}

impl EmbedEnv {
    /// Reads the process environment.
    pub fn from_process() -> EmbedEnv {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        let data_home = var("XDG_DATA_HOME")
            .map(PathBuf::from)
            .or_else(|| var("HOME").map(|h| Path::new(&h).join(".local/share")));
        EmbedEnv {
            provider: var("MEM7_EMBED_PROVIDER"),
            url: var("MEM7_EMBED_URL"),
            model: var("MEM7_EMBED_MODEL"),
            api_key: var("MEM7_EMBED_API_KEY"),
            model_dir: var("MEM7_MODEL_DIR").map(PathBuf::from),
            ca_file: var("SSL_CERT_FILE").map(PathBuf::from),
            fetch_timeout: var("MEM7_FETCH_TIMEOUT"),
            data_home,
            lookup: Some(|k| std::env::var(k).ok().filter(|v| !v.is_empty())),
        }
    }
}

/// The default directory of the local model: `$XDG_DATA_HOME/mem7/models/all-MiniLM-L6-v2`
/// (`~/.local/share/…` without XDG).
pub fn default_model_dir(data_home: &Path) -> PathBuf {
    data_home.join("mem7").join("models").join(LOCAL_MODEL)
}

/// Where the local model is looked for: `MEM7_MODEL_DIR`, else `embeddings.model_dir` in
/// `mem7.yaml`, else [`default_model_dir`].
pub fn model_dir(settings: &EmbedSettings, env: &EmbedEnv) -> PathBuf {
    env.model_dir
        .clone()
        .or_else(|| settings.model_dir.clone())
        .or_else(|| env.data_home.as_deref().map(default_model_dir))
        .unwrap_or_else(|| PathBuf::from(LOCAL_MODEL))
}

/// What to do when the local model is missing or damaged, wherever that is said.
pub const FETCH_HINT: &str = "fetch the local model with `mem7 model fetch`, or choose a provider \
     with MEM7_EMBED_PROVIDER=ollama|openai and MEM7_EMBED_URL";

/// Which provider speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProviderKind {
    Local,
    Ollama,
    OpenAi,
}

impl ProviderKind {
    fn name(self) -> &'static str {
        match self {
            ProviderKind::Local => "local",
            ProviderKind::Ollama => "ollama",
            ProviderKind::OpenAi => "openai",
        }
    }
}

/// A resolved provider: everything needed to open it.
#[derive(Clone, Debug, PartialEq)]
pub struct ProviderSpec {
    pub kind: ProviderKind,
    /// Base URL (HTTP providers).
    pub url: String,
    /// The model's name.
    pub model: String,
    pub api_key: Option<String>,
    /// The local model's directory.
    pub model_dir: PathBuf,
    pub batch_size: usize,
    pub timeout: Duration,
}

impl ProviderSpec {
    /// The id vectors are cached under: `provider/model`. Vectors of different models are
    /// never compared.
    pub fn id(&self) -> String {
        format!("{}/{}", self.kind.name(), self.model)
    }

    /// Opens the provider (loads the local model; HTTP providers connect on first use).
    pub fn open(&self) -> Result<Box<dyn Embedder>> {
        Ok(match self.kind {
            ProviderKind::Local => Box::new(local::LocalModel::load(&self.model_dir, self.id())?),
            ProviderKind::Ollama => Box::new(remote::Ollama::new(self)),
            ProviderKind::OpenAi => Box::new(remote::OpenAi::new(self)),
        })
    }
}

/// What [`resolve`] decided.
#[derive(Clone, Debug, PartialEq)]
pub enum Resolved {
    /// Meaning search is on, with this provider.
    On(ProviderSpec),
    /// Lexical search only. `explained` is what to tell a person once (None when they
    /// chose `none`).
    Off { explained: Option<String> },
}

/// Picks the provider: `MEM7_EMBED_PROVIDER`, else `embeddings.provider`, else `local`
/// when its weights are present, else none. An unknown provider name is an error.
pub fn resolve(settings: &EmbedSettings, env: &EmbedEnv) -> Result<Resolved> {
    let model_dir = model_dir(settings, env);
    let named = env.provider.clone().or_else(|| settings.provider.clone());
    let kind = match named.as_deref().map(str::trim) {
        None | Some("") => {
            if local::is_present(&model_dir) {
                ProviderKind::Local
            } else {
                return Ok(Resolved::Off {
                    explained: Some(format!(
                        "meaning search is off: the local model is not in {}",
                        model_dir.display()
                    )),
                });
            }
        }
        Some("none") => return Ok(Resolved::Off { explained: None }),
        Some("local") => ProviderKind::Local,
        Some("ollama") => ProviderKind::Ollama,
        Some("openai") => ProviderKind::OpenAi,
        Some(other) => {
            return Err(Error::input(
                format!("unknown embedding provider {other:?}"),
                "set MEM7_EMBED_PROVIDER (or embeddings.provider in mem7.yaml) to local, ollama, openai or none",
            ));
        }
    };
    let url = env
        .url
        .clone()
        .or_else(|| settings.url.clone())
        .unwrap_or_else(|| match kind {
            ProviderKind::Ollama => "http://127.0.0.1:11434".into(),
            ProviderKind::OpenAi => "https://api.openai.com/v1".into(),
            ProviderKind::Local => String::new(),
        });
    let model = match kind {
        ProviderKind::Local => LOCAL_MODEL.to_string(),
        _ => env
            .model
            .clone()
            .or_else(|| settings.model.clone())
            .unwrap_or_else(|| match kind {
                ProviderKind::Ollama => "nomic-embed-text".into(),
                _ => "text-embedding-3-small".into(),
            }),
    };
    let api_key = env.api_key.clone().or_else(|| {
        let name = settings.api_key_env.as_deref()?;
        env.lookup.and_then(|look| look(name))
    });
    let timeout = settings
        .timeout_secs
        .filter(|s| s.is_finite() && *s > 0.0)
        .map(Duration::from_secs_f64)
        .unwrap_or(DEFAULT_TIMEOUT);
    Ok(Resolved::On(ProviderSpec {
        kind,
        url: url.trim_end_matches('/').to_string(),
        model,
        api_key,
        model_dir,
        batch_size: settings.batch_size.unwrap_or(DEFAULT_BATCH).clamp(1, 2048),
        timeout,
    }))
}

/// Something that turns texts into vectors of one model.
pub trait Embedder: Send {
    /// The cache id of the model (`provider/model`).
    fn id(&self) -> &str;
    /// One vector per text, in order.
    fn embed(&mut self, texts: &[&str]) -> Result<Vec<Vec<f32>>>;
}

/// How much of a value is embedded: models read a few hundred tokens, so the start of
/// a long value is all that counts, and the work stays bounded.
pub const EMBEDDED_VALUE_BYTES: usize = 8 * 1024;

/// The text embedded for a version: its key, with separators read as spaces, and its
/// value (its first [`EMBEDDED_VALUE_BYTES`]). The key often carries the subject
/// (`user.favorite_color: blue`).
pub fn version_text(key: &str, value: &str) -> String {
    let value = crate::core::validate::head_of(value, EMBEDDED_VALUE_BYTES);
    let key: String = key
        .chars()
        .map(|c| {
            if matches!(c, '.' | '_' | '-' | '/' | ':') {
                ' '
            } else {
                c
            }
        })
        .collect();
    format!("{}: {value}", key.trim())
}

pub use sentences::sentence_texts;

/// A provider failure, with the provider named and what to check.
pub(crate) fn provider_error(id: &str, problem: impl std::fmt::Display) -> Error {
    Error::embedding(
        format!("embedding provider {id}: {problem}"),
        "check that the provider is running and MEM7_EMBED_URL / MEM7_EMBED_MODEL are right; \
         versions are stored anyway and their vectors are filled in by `mem7 embed` later",
    )
}

/// A dot product written so that the compiler keeps eight independent sums in SIMD lanes.
#[inline]
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0.0f32; 8];
    let (ca, ra) = a.as_chunks::<8>();
    let (cb, rb) = b.as_chunks::<8>();
    for (x, y) in ca.iter().zip(cb) {
        for i in 0..8 {
            acc[i] += x[i] * y[i];
        }
    }
    let tail: f32 = ra.iter().zip(rb).map(|(x, y)| x * y).sum();
    acc.iter().sum::<f32>() + tail
}

/// Scales `v` to unit length (cosine similarity is then a dot product).
pub fn normalize(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
}
