//! The HTTP providers: Ollama's `/api/embed` and the OpenAI-compatible `/embeddings`.
//!
//! Both send a batch of texts per request, give up after the configured timeout, and turn
//! every failure (refused connection, HTTP status, a reply of the wrong shape or size)
//! into an error naming the provider, so that a caller can store first and embed later.

use std::time::Duration;

use serde::Deserialize;
use serde_json::json;

use super::{Embedder, ProviderSpec, normalize, provider_error};
use crate::error::Result;

/// The largest reply read (a batch of 2048 vectors of 3072 floats as JSON fits).
const MAX_REPLY: u64 = 256 * 1024 * 1024;

fn agent(timeout: Duration) -> ureq::Agent {
    ureq::Agent::config_builder()
        .timeout_global(Some(timeout))
        .http_status_as_error(false)
        .user_agent(concat!("mem7/", env!("CARGO_PKG_VERSION")))
        .build()
        .into()
}

/// POSTs `body` as JSON and returns the reply's text, or an error naming `id`.
fn post_json(
    agent: &ureq::Agent,
    id: &str,
    url: &str,
    bearer: Option<&str>,
    body: &serde_json::Value,
) -> Result<String> {
    let mut req = agent.post(url).content_type("application/json");
    if let Some(key) = bearer {
        req = req.header("Authorization", format!("Bearer {key}"));
    }
    let mut resp = req
        .send(body.to_string())
        .map_err(|e| provider_error(id, format!("POST {url}: {e}")))?;
    let status = resp.status();
    let text = resp
        .body_mut()
        .with_config()
        .limit(MAX_REPLY)
        .read_to_string()
        .map_err(|e| provider_error(id, format!("reading the reply of {url}: {e}")))?;
    if !status.is_success() {
        let detail: String = text.chars().take(300).collect();
        return Err(provider_error(
            id,
            format!("POST {url} answered {status}: {}", detail.trim()),
        ));
    }
    Ok(text)
}

/// Checks the count and finishes each vector (unit length, so cosine is a dot product).
fn finish(id: &str, wanted: usize, mut vectors: Vec<Vec<f32>>) -> Result<Vec<Vec<f32>>> {
    if vectors.len() != wanted {
        return Err(provider_error(
            id,
            format!("asked for {wanted} vectors, got {}", vectors.len()),
        ));
    }
    let dim = vectors.first().map_or(0, Vec::len);
    if dim == 0 || vectors.iter().any(|v| v.len() != dim) {
        return Err(provider_error(
            id,
            "the vectors are empty or of different lengths",
        ));
    }
    if vectors.iter().flatten().any(|x| !x.is_finite()) {
        return Err(provider_error(id, "a vector holds a NaN or an infinity"));
    }
    vectors.iter_mut().for_each(|v| normalize(v));
    Ok(vectors)
}

/// Ollama: `POST {url}/api/embed` with `{"model", "input": [..]}` → `{"embeddings": [[..]]}`.
pub struct Ollama {
    id: String,
    url: String,
    model: String,
    agent: ureq::Agent,
}

impl Ollama {
    pub fn new(spec: &ProviderSpec) -> Ollama {
        Ollama {
            id: spec.id(),
            url: format!("{}/api/embed", spec.url),
            model: spec.model.clone(),
            agent: agent(spec.timeout),
        }
    }
}

impl Embedder for Ollama {
    fn id(&self) -> &str {
        &self.id
    }

    fn embed(&mut self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        #[derive(Deserialize)]
        struct Reply {
            embeddings: Vec<Vec<f32>>,
        }
        let body = json!({ "model": self.model, "input": texts });
        let text = post_json(&self.agent, &self.id, &self.url, None, &body)?;
        let reply: Reply = serde_json::from_str(&text).map_err(|e| {
            provider_error(&self.id, format!("unexpected reply from {}: {e}", self.url))
        })?;
        finish(&self.id, texts.len(), reply.embeddings)
    }
}

/// OpenAI-compatible: `POST {url}/embeddings`, bearer key,
/// `{"model", "input": [..], "encoding_format": "float"}` → `data[i].embedding`, put back
/// in input order by `index`.
pub struct OpenAi {
    id: String,
    url: String,
    model: String,
    key: Option<String>,
    agent: ureq::Agent,
}

impl OpenAi {
    pub fn new(spec: &ProviderSpec) -> OpenAi {
        OpenAi {
            id: spec.id(),
            url: format!("{}/embeddings", spec.url),
            model: spec.model.clone(),
            key: spec.api_key.clone(),
            agent: agent(spec.timeout),
        }
    }
}

impl Embedder for OpenAi {
    fn id(&self) -> &str {
        &self.id
    }

    fn embed(&mut self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        #[derive(Deserialize)]
        struct Item {
            index: usize,
            embedding: Vec<f32>,
        }
        #[derive(Deserialize)]
        struct Reply {
            data: Vec<Item>,
        }
        let body = json!({ "model": self.model, "input": texts, "encoding_format": "float" });
        let text = post_json(&self.agent, &self.id, &self.url, self.key.as_deref(), &body)?;
        let mut reply: Reply = serde_json::from_str(&text).map_err(|e| {
            provider_error(&self.id, format!("unexpected reply from {}: {e}", self.url))
        })?;
        reply.data.sort_by_key(|d| d.index);
        if reply.data.iter().enumerate().any(|(i, d)| d.index != i) {
            return Err(provider_error(
                &self.id,
                "the reply's `index` fields do not number the inputs 0..n",
            ));
        }
        finish(
            &self.id,
            texts.len(),
            reply.data.into_iter().map(|d| d.embedding).collect(),
        )
    }
}
