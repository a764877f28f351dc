//! The local model's encoder (BERT, as all-MiniLM-L6-v2 is) on plain `f32` rows, with
//! the texts of a batch packed one after another: no padding. Every layer but attention
//! works row by row, so it runs once over all the batch's tokens; attention runs text by
//! text over that text's own tokens, so no score is spent on padding and no mask is
//! needed.
//!
//! The products are `gemm`'s (the kernels candle calls), on the weights where they
//! lie in the memory-mapped file; the rest (layer norms, GELU, softmax) is written here.
//! Both cores work through rayon's pool: `gemm` splits a large product, and attention
//! and the row-wise steps split by text and by rows. candle's own element-wise operations
//! are not used: on large tensors they hand work to a second pool of threads that spin
//! while they wait, which on a two-core machine took a core from the products.

use gemm::Parallelism;
use rayon::prelude::*;

/// Width of a token's vector.
pub const HIDDEN: usize = 384;
/// Attention heads, each [`HEAD`] wide.
pub const HEADS: usize = 12;
const HEAD: usize = HIDDEN / HEADS;
const LN_EPS: f32 = 1e-12;

/// Rows (tokens in the batch) up to which a layer's product runs on [`small_linear`]
/// rather than `gemm`, which for a query of a few tokens spends most of its time packing
/// the weights.
const SMALL_ROWS: usize = 16;

/// A dense layer, `x · Wᵀ + b`, with `W` (`outputs × inputs`, PyTorch's layout) in the
/// mapped weights file.
pub struct Dense<'a> {
    pub weight: &'a [f32],
    pub bias: &'a [f32],
}

impl Dense<'_> {
    fn inputs(&self) -> usize {
        self.weight.len() / self.bias.len()
    }
}

/// A layer norm's scale and shift.
pub struct Norm<'a> {
    pub gamma: &'a [f32],
    pub beta: &'a [f32],
}

/// One encoder layer.
pub struct Layer<'a> {
    pub query: Dense<'a>,
    pub key: Dense<'a>,
    pub value: Dense<'a>,
    pub attn_out: Dense<'a>,
    pub attn_norm: Norm<'a>,
    pub intermediate: Dense<'a>,
    pub output: Dense<'a>,
    pub out_norm: Norm<'a>,
}

/// The whole model, borrowed from the mapped weights.
pub struct Model<'a> {
    /// `vocabulary × HIDDEN`.
    pub words: &'a [f32],
    /// `positions × HIDDEN`.
    pub positions: &'a [f32],
    /// Token type 0's row (every input is one segment).
    pub token_type: &'a [f32],
    pub embed_norm: Norm<'a>,
    pub layers: Vec<Layer<'a>>,
}

/// A token id outside the vocabulary, or a text longer than the position table.
#[derive(Debug)]
pub struct OutOfRange(pub String);

impl Model<'_> {
    /// The mean of the last layer's token vectors of each text (`texts` are token ids),
    /// not yet scaled to unit length. Call on a thread of rayon's pool (the products
    /// split their work with `rayon::join`).
    pub fn encode(&self, texts: &[&[u32]]) -> Result<Vec<Vec<f32>>, OutOfRange> {
        let rows: usize = texts.iter().map(|t| t.len()).sum();
        let mut x = Vec::with_capacity(rows * HIDDEN);
        for ids in texts {
            if ids.len() * HIDDEN > self.positions.len() {
                return Err(OutOfRange(format!("a text of {} tokens", ids.len())));
            }
            for (p, &id) in ids.iter().enumerate() {
                let at = id as usize * HIDDEN;
                let word = self
                    .words
                    .get(at..at + HIDDEN)
                    .ok_or_else(|| OutOfRange(format!("token id {id}")))?;
                let position = &self.positions[p * HIDDEN..(p + 1) * HIDDEN];
                x.extend(
                    word.iter()
                        .zip(position)
                        .zip(self.token_type)
                        .map(|((w, p), t)| w + p + t),
                );
            }
        }
        layer_norm(&mut x, &self.embed_norm);
        let lengths: Vec<usize> = texts.iter().map(|t| t.len()).collect();
        for l in &self.layers {
            let q = linear(&x, &l.query, None);
            let k = linear(&x, &l.key, None);
            let v = linear(&x, &l.value, None);
            let ctx = attention(&q, &k, &v, &lengths);
            let mut attended = linear(&ctx, &l.attn_out, Some(&x));
            layer_norm(&mut attended, &l.attn_norm);
            let mut inner = linear(&attended, &l.intermediate, None);
            gelu(&mut inner);
            x = linear(&inner, &l.output, Some(&attended));
            layer_norm(&mut x, &l.out_norm);
        }
        let mut out = Vec::with_capacity(texts.len());
        let mut at = 0;
        for &n in &lengths {
            let mut mean = vec![0.0f32; HIDDEN];
            for row in x[at * HIDDEN..(at + n) * HIDDEN].chunks_exact(HIDDEN) {
                mean.iter_mut().zip(row).for_each(|(m, v)| *m += v);
            }
            let scale = 1.0 / n.max(1) as f32;
            mean.iter_mut().for_each(|m| *m *= scale);
            out.push(mean);
            at += n;
        }
        Ok(out)
    }
}

/// Rows per piece of work when a row-wise step is split between threads.
const ROWS_PER_TASK: usize = 64;

/// `x · Wᵀ + b` (plus `residual`, when given) for the rows of `x`.
fn linear(x: &[f32], dense: &Dense, residual: Option<&[f32]>) -> Vec<f32> {
    let (inputs, outputs) = (dense.inputs(), dense.bias.len());
    let rows = x.len() / inputs;
    if rows <= SMALL_ROWS {
        let mut ys = small_linear(x, dense.weight, dense.bias, inputs);
        if let Some(r) = residual {
            ys.iter_mut().zip(r).for_each(|(y, r)| *y += r);
        }
        return ys;
    }
    // The output starts as bias (+ residual); gemm adds the product to it.
    let mut ys: Vec<f32> = match residual {
        Some(r) => r
            .chunks_exact(outputs)
            .flat_map(|row| row.iter().zip(dense.bias).map(|(r, b)| r + b))
            .collect(),
        None => dense
            .bias
            .iter()
            .copied()
            .cycle()
            .take(rows * outputs)
            .collect(),
    };
    // SAFETY: `ys` is `rows × outputs` (row stride `outputs`), `x` is `rows × inputs`
    // (row stride `inputs`), and `W` read as the `inputs × outputs` matrix `Wᵀ` has
    // column stride `inputs` and row stride 1: every index gemm forms is in bounds.
    unsafe {
        gemm::gemm(
            rows,
            outputs,
            inputs,
            ys.as_mut_ptr(),
            1,
            outputs as isize,
            true,
            x.as_ptr(),
            1,
            inputs as isize,
            dense.weight.as_ptr(),
            inputs as isize,
            1,
            1.0,
            1.0,
            false,
            false,
            false,
            Parallelism::Rayon(rayon::current_num_threads()),
        );
    }
    ys
}

/// Self-attention, text by text: `q`, `k` and `v` hold every text's rows one after
/// another (`lengths` of them each); the result is laid out the same way, heads side
/// by side in each row.
fn attention(q: &[f32], k: &[f32], v: &[f32], lengths: &[usize]) -> Vec<f32> {
    let mut ctx = vec![0.0f32; q.len()];
    let mut pieces = Vec::with_capacity(lengths.len());
    let (mut rest, mut at) = (&mut ctx[..], 0);
    for &n in lengths {
        let (piece, tail) = rest.split_at_mut(n * HIDDEN);
        pieces.push((at, n, piece));
        rest = tail;
        at += n;
    }
    let scale = 1.0 / (HEAD as f32).sqrt();
    pieces.into_par_iter().for_each(|(start, n, out)| {
        let span = start * HIDDEN..(start + n) * HIDDEN;
        let (q, k, v) = (&q[span.clone()], &k[span.clone()], &v[span]);
        if n <= SMALL_ROWS {
            return small_attention(q, k, v, n, scale, out);
        }
        let mut scores = vec![0.0f32; n * n];
        for h in 0..HEADS {
            let col = h * HEAD;
            // SAFETY: `scores` is `n × n`; `q` and `k` are `n × HIDDEN`, read from column
            // `col` for HEAD columns (`col + HEAD <= HIDDEN`), `k` transposed (column
            // stride HIDDEN, row stride 1).
            unsafe {
                gemm::gemm(
                    n,
                    n,
                    HEAD,
                    scores.as_mut_ptr(),
                    1,
                    n as isize,
                    false,
                    q.as_ptr().add(col),
                    1,
                    HIDDEN as isize,
                    k.as_ptr().add(col),
                    HIDDEN as isize,
                    1,
                    0.0,
                    scale,
                    false,
                    false,
                    false,
                    Parallelism::None,
                );
            }
            for row in scores.chunks_exact_mut(n) {
                softmax(row);
            }
            // SAFETY: `scores` is `n × n`; `v` and `out` are `n × HIDDEN`, used from column
            // `col` for HEAD columns.
            unsafe {
                gemm::gemm(
                    n,
                    HEAD,
                    n,
                    out.as_mut_ptr().add(col),
                    1,
                    HIDDEN as isize,
                    false,
                    scores.as_ptr(),
                    1,
                    n as isize,
                    v.as_ptr().add(col),
                    1,
                    HIDDEN as isize,
                    0.0,
                    1.0,
                    false,
                    false,
                    false,
                    Parallelism::None,
                );
            }
        }
    });
    ctx
}

/// [`attention`] for one text of at most [`SMALL_ROWS`] tokens, with plain loops: for a
/// query of a few tokens, `gemm` spends longer setting up each product (and, on its first
/// call in a process, reading the processor's cache sizes from `/sys`) than the product
/// takes.
fn small_attention(q: &[f32], k: &[f32], v: &[f32], n: usize, scale: f32, out: &mut [f32]) {
    let mut scores = [0.0f32; SMALL_ROWS];
    let scores = &mut scores[..n];
    for h in 0..HEADS {
        let cols = |row: usize| row * HIDDEN + h * HEAD..row * HIDDEN + (h + 1) * HEAD;
        for i in 0..n {
            let qi = &q[cols(i)];
            for (j, s) in scores.iter_mut().enumerate() {
                *s = scale * super::dot(qi, &k[cols(j)]);
            }
            softmax(scores);
            let o = &mut out[cols(i)];
            o.fill(0.0);
            for (j, &s) in scores.iter().enumerate() {
                o.iter_mut().zip(&v[cols(j)]).for_each(|(o, v)| *o += s * v);
            }
        }
    }
}

fn softmax(row: &mut [f32]) {
    let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut sum = 0.0;
    for s in row.iter_mut() {
        *s = (*s - max).exp();
        sum += *s;
    }
    let inv = 1.0 / sum;
    row.iter_mut().for_each(|s| *s *= inv);
}

/// Normalises each row of `x` in place, split between threads by rows.
fn layer_norm(x: &mut [f32], norm: &Norm) {
    x.par_chunks_mut(HIDDEN * ROWS_PER_TASK).for_each(|rows| {
        for row in rows.chunks_exact_mut(HIDDEN) {
            let mean = row.iter().sum::<f32>() / HIDDEN as f32;
            let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / HIDDEN as f32;
            let inv = 1.0 / (var + LN_EPS).sqrt();
            for ((v, g), b) in row.iter_mut().zip(norm.gamma).zip(norm.beta) {
                *v = (*v - mean) * inv * g + b;
            }
        }
    });
}

/// GELU (the exact one, with erf) in place, split between threads.
fn gelu(x: &mut [f32]) {
    x.par_chunks_mut(4096).for_each(|xs| {
        for v in xs {
            *v = 0.5 * *v * (1.0 + erf(*v * std::f32::consts::FRAC_1_SQRT_2));
        }
    });
}

/// The error function, to within 1.2e-7 (Numerical Recipes' `erfc` by Chebyshev fit,
/// evaluated in f64).
fn erf(x: f32) -> f32 {
    let z = f64::from(x).abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let erfc = t * poly.exp();
    let e = 1.0 - erfc;
    (if x < 0.0 { -e } else { e }) as f32
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

#[cfg(test)]
mod tests {
    use super::{HEAD, HEADS, HIDDEN, Part, attention, erf, small_linear};

    #[test]
    fn attention_matches_the_definition_for_short_and_long_texts() {
        // One text short enough for the plain loops, one long enough for gemm.
        let lengths = [3usize, 21];
        let rows: usize = lengths.iter().sum();
        let value = |i: usize, salt: usize| (((i + salt) * 7919) % 211) as f32 / 105.0 - 1.0;
        let q: Vec<f32> = (0..rows * HIDDEN).map(|i| value(i, 1)).collect();
        let k: Vec<f32> = (0..rows * HIDDEN).map(|i| value(i, 2)).collect();
        let v: Vec<f32> = (0..rows * HIDDEN).map(|i| value(i, 3)).collect();
        let got = attention(&q, &k, &v, &lengths);
        let scale = 1.0 / (HEAD as f64).sqrt();
        let mut start = 0;
        for &n in &lengths {
            for h in 0..HEADS {
                let at = |m: &[f32], row: usize, c: usize| {
                    f64::from(m[(start + row) * HIDDEN + h * HEAD + c])
                };
                for i in 0..n {
                    let s: Vec<f64> = (0..n)
                        .map(|j| {
                            (0..HEAD).map(|c| at(&q, i, c) * at(&k, j, c)).sum::<f64>() * scale
                        })
                        .collect();
                    let max = s.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                    let e: Vec<f64> = s.iter().map(|x| (x - max).exp()).collect();
                    let total: f64 = e.iter().sum();
                    for c in 0..HEAD {
                        let want: f64 = (0..n).map(|j| e[j] / total * at(&v, j, c)).sum();
                        let got = f64::from(got[(start + i) * HIDDEN + h * HEAD + c]);
                        assert!(
                            (got - want).abs() < 1e-4,
                            "text of {n}, head {h}, row {i}: {got} vs {want}"
                        );
                    }
                }
            }
            start += n;
        }
    }

    #[test]
    fn erf_is_within_its_stated_error() {
        let known: [(f32, f64); 6] = [
            (0.0, 0.0),
            (0.1, 0.112_462_916),
            (0.5, 0.520_499_878),
            (1.0, 0.842_700_793),
            (-2.0, -0.995_322_265),
            (3.5, 0.999_999_257),
        ];
        for (x, want) in known {
            let got = f64::from(erf(x));
            assert!((got - want).abs() < 3e-7, "erf({x}) = {got}, not {want}");
        }
    }

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
