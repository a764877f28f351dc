//! Versions the full-text index does not hold yet, searched beside it. A server's search
//! right after writes would otherwise commit them first, and a commit costs tantivy
//! 8–15 ms whatever it holds (docs/internals/stalls.md); the server commits on its next
//! quiet moment instead.
//!
//! Each such version is cut into tokens by the index's own analyzers, filtered by the
//! read rule, and scored by the text query's clauses ([`super::words::Clause`]) with
//! tantivy's BM25 over statistics that add the tail's to the index's, which the index's
//! own documents are scored by too: the scores a commit of the tail would give. Only
//! additions are searched this way: an older version a write changed is still in the
//! index with its old clocks, and such a search commits first.

use std::collections::HashMap;

use tantivy::Term;
use tantivy::fieldnorm::FieldNormReader;
use tantivy::query::{Bm25StatisticsProvider, Bm25Weight};
use tantivy::schema::Field;

use super::words::Clause;
use super::{
    FullText, Hit, INDEXED_VALUE_BYTES, KEY_ANALYZER, PARTS_ANALYZER, SearchRequest, TEXT_ANALYZER,
    ft_err,
};
use crate::core::Version;
use crate::error::Result;

/// Versions past the last one the index holds, each with its id.
pub type Tail<'a> = &'a [(i64, Version)];

/// A version's tokens in one field: how many, and how often each.
#[derive(Default)]
struct FieldTokens {
    len: u32,
    counts: HashMap<String, u32>,
}

impl FieldTokens {
    fn add(&mut self, token: &str) {
        self.len += 1;
        *self.counts.entry(token.to_string()).or_default() += 1;
    }
}

/// A version's tokens, by field.
type DocTokens = HashMap<Field, FieldTokens>;

/// The tail, in tokens, with what it adds to the index's statistics.
#[derive(Default)]
pub(super) struct Tokens<'a> {
    docs: Vec<(&'a (i64, Version), DocTokens)>,
    tokens: HashMap<Field, u64>,
    freq: HashMap<Term, u64>,
}

/// The index's statistics and the tail's, together.
pub(super) struct Stats<'a> {
    pub searcher: &'a tantivy::Searcher,
    pub tail: &'a Tokens<'a>,
}

impl Bm25StatisticsProvider for Stats<'_> {
    fn total_num_tokens(&self, field: Field) -> tantivy::Result<u64> {
        let tail = self.tail.tokens.get(&field).copied().unwrap_or(0);
        Ok(Bm25StatisticsProvider::total_num_tokens(self.searcher, field)? + tail)
    }

    fn total_num_docs(&self) -> tantivy::Result<u64> {
        let tail = self.tail.docs.len() as u64;
        Ok(Bm25StatisticsProvider::total_num_docs(self.searcher)? + tail)
    }

    fn doc_freq(&self, term: &Term) -> tantivy::Result<u64> {
        let tail = self.tail.freq.get(term).copied().unwrap_or(0);
        Ok(self.searcher.doc_freq(term)? + tail)
    }
}

/// Whether version `v` passes `req`'s filters: the read rule's clocks, the tags, the key
/// prefix (what [`FullText::filters`] asks of the index).
pub(super) fn passes(req: &SearchRequest, v: &Version) -> bool {
    v.matches(req.valid_at, req.as_of)
        && crate::core::read_rule::carries(&v.tags, &req.tags)
        && req
            .key_prefix
            .as_deref()
            .is_none_or(|p| v.key.starts_with(p))
}

/// The one-byte code tantivy keeps a field's length as: the largest whose length is at
/// most `len`.
fn fieldnorm_id(len: u32) -> u8 {
    let (mut lo, mut hi) = (0u8, u8::MAX);
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if FieldNormReader::id_to_fieldnorm(mid) <= len {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    lo
}

impl FullText {
    /// Cuts the tail's versions into tokens as the index would.
    pub(super) fn tokens<'a>(&self, tail: Tail<'a>) -> Result<Tokens<'a>> {
        let f = self.fields;
        let mut out = Tokens::default();
        if tail.is_empty() {
            return Ok(out);
        }
        let analyzer = |name: &str| {
            self.index
                .tokenizers()
                .get(name)
                .ok_or_else(|| ft_err(&self.dir, "missing analyzer"))
        };
        let mut analyzers = [
            (f.value, analyzer(TEXT_ANALYZER)?),
            (f.key_parts, analyzer(KEY_ANALYZER)?),
            (f.tags_text, analyzer(PARTS_ANALYZER)?),
        ];
        for entry in tail {
            let v = &entry.1;
            let value = crate::core::validate::head_of(&v.value, INDEXED_VALUE_BYTES);
            let mut fields = DocTokens::new();
            for (field, analyzer) in analyzers.iter_mut() {
                let texts: Vec<&str> = match *field {
                    x if x == f.value => vec![value],
                    x if x == f.key_parts => vec![v.key.as_str()],
                    _ => v.tags.iter().map(String::as_str).collect(),
                };
                let tokens = fields.entry(*field).or_default();
                for text in texts {
                    let mut stream = analyzer.token_stream(text);
                    while let Some(token) = stream.next() {
                        tokens.add(&token.text);
                    }
                }
            }
            // The whole key, and each whole tag: one token each.
            fields.entry(f.key_exact).or_default().add(&v.key);
            let tags = fields.entry(f.tags).or_default();
            for t in &v.tags {
                tags.add(t);
            }
            for (field, tokens) in &fields {
                *out.tokens.entry(*field).or_default() += u64::from(tokens.len);
                for token in tokens.counts.keys() {
                    *out.freq
                        .entry(Term::from_field_text(*field, token))
                        .or_default() += 1;
                }
            }
            out.docs.push((entry, fields));
        }
        Ok(out)
    }

    /// The tail's versions that pass `req`'s filters and match a clause, scored as the
    /// index scores its own: the matching clauses' BM25, then one for each clock bound
    /// and the key prefix, and each wanted tag's BM25, as the filters add them.
    pub(super) fn tail_hits(
        &self,
        req: &SearchRequest,
        clauses: &[Clause],
        stats: &Stats,
    ) -> Result<Vec<Hit>> {
        let err = |e| ft_err(&self.dir, e);
        let weigh = |term: &Term, boost: f32| {
            Bm25Weight::for_terms(stats, std::slice::from_ref(term)).map(|w| w.boost_by(boost))
        };
        let weights: Vec<Bm25Weight> = clauses
            .iter()
            .map(|c| weigh(&c.term, c.boost))
            .collect::<tantivy::Result<_>>()
            .map_err(err)?;
        let tags: Vec<Bm25Weight> = req
            .tags
            .iter()
            .map(|t| weigh(&Term::from_field_text(self.fields.tags, t), 1.0))
            .collect::<tantivy::Result<_>>()
            .map_err(err)?;
        let prefix = req.key_prefix.as_deref().is_some_and(|p| !p.is_empty());
        let bounds = (crate::core::read_rule::MATCH.len() + usize::from(prefix)) as f32;
        let mut hits = Vec::new();
        for ((id, v), fields) in &stats.tail.docs {
            if !passes(req, v) {
                continue;
            }
            let mut text: Option<f32> = None;
            for (c, w) in clauses.iter().zip(&weights) {
                let Some(tokens) = fields.get(&c.term.field()) else {
                    continue;
                };
                if let Some(&n) = tokens.counts.get(&c.token) {
                    let tf = if c.counted { n } else { 1 };
                    *text.get_or_insert(0.0) += w.score(fieldnorm_id(tokens.len), tf);
                }
            }
            let Some(text) = text else { continue };
            let tag_len = fields.get(&self.fields.tags).map_or(0, |t| t.len);
            let score = tags
                .iter()
                .fold(text + bounds, |s, w| s + w.score(fieldnorm_id(tag_len), 1));
            hits.push(Hit {
                id: *id as u64,
                score,
            });
        }
        Ok(hits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::Source;
    use crate::core::time::{TxTime, ValidTime};
    use crate::index::fulltext::{Merges, SearchMode, WordWeights};

    fn v(key: &str, value: &str, tags: &[&str], tx: i64) -> Version {
        Version {
            key: key.into(),
            value: value.into(),
            tags: tags.iter().map(|t| t.to_string()).collect(),
            agent: "t".into(),
            valid_from: ValidTime::from_micros(0),
            valid_to: ValidTime::INFINITY,
            tx_from: TxTime::from_micros(tx),
            tx_to: TxTime::INFINITY,
            tier: None,
            source: Source::default(),
        }
    }

    fn commit(ft: &FullText, versions: &[(i64, Version)]) {
        let w = ft.writer(Merges::Later).unwrap();
        for (id, v) in versions {
            ft.add(&w, *id as u64, v).unwrap();
        }
        ft.commit(w).unwrap();
    }

    fn request(text: &str, tags: &[&str], prefix: Option<&str>, as_of: i64) -> SearchRequest {
        SearchRequest {
            text: text.into(),
            raw: false,
            valid_at: ValidTime::from_micros(1),
            as_of: TxTime::from_micros(as_of),
            tags: tags.iter().map(|t| t.to_string()).collect(),
            key_prefix: prefix.map(str::to_string),
            limit: 20,
            mode: SearchMode::Lexical,
        }
    }

    /// The tail scored beside the index ranks and scores as the index does once the
    /// tail is committed: the same ids in the same order, the same scores (to float
    /// rounding), for questions that match words of values, key parts, compounds, tags,
    /// a whole key, with tag and key-prefix filters and a clock that leaves one out.
    #[test]
    fn the_tail_scores_as_a_committed_index_would() {
        let words = [
            "deploy", "staging", "payments", "cache", "valkey", "team", "owner", "release",
            "schedule", "oncall", "rotation", "database", "replica", "region",
        ];
        // Varied lengths and words, so that scores seldom tie.
        let version = |i: i64| {
            let mut x = (i as u64)
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let mut w = || {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                words[((x >> 33) % words.len() as u64) as usize]
            };
            let key = format!(
                "{}:{}_{}",
                w(),
                w(),
                if i % 3 == 0 { "on_call" } else { w() }
            );
            let n = 3 + (i % 7) as usize;
            let value: Vec<&str> = (0..n).map(|_| w()).collect();
            let tags: Vec<&str> = if i % 2 == 0 {
                vec!["infra"]
            } else {
                vec!["infra", "team-a"]
            };
            v(&key, &value.join(" the "), &tags, i)
        };
        let held: Vec<(i64, Version)> = (1..=60).map(|i| (i, version(i))).collect();
        let tail: Vec<(i64, Version)> = (61..=75).map(|i| (i, version(i))).collect();
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let (beside, committed) = (
            FullText::create(a.path()).unwrap(),
            FullText::create(b.path()).unwrap(),
        );
        commit(&beside, &held);
        commit(&committed, &held);
        commit(&committed, &tail);
        let weights = WordWeights::default();
        let exact_key = tail[2].1.key.clone();
        let questions = [
            request("who owns the payments release", &[], None, i64::MAX - 1),
            request("on call rotation for staging", &[], None, i64::MAX - 1),
            request(
                "deploying the database replicas",
                &["team-a"],
                None,
                i64::MAX - 1,
            ),
            request("cache region", &[], Some("cache:"), i64::MAX - 1),
            request(&exact_key, &[], None, i64::MAX - 1),
            request("valkey schedule", &["infra"], None, 70),
        ];
        for req in &questions {
            let (got, _) = beside.search(req, &weights, &tail).unwrap();
            let (want, _) = committed.search(req, &weights, &[]).unwrap();
            assert!(!want.is_empty(), "{:?} finds something", req.text);
            assert!(
                got.iter().any(|h| h.id > 60),
                "{:?}: the tail has a hit: {got:?}",
                req.text
            );
            let ids = |h: &[Hit]| h.iter().map(|h| h.id).collect::<Vec<_>>();
            assert_eq!(ids(&got), ids(&want), "{:?}", req.text);
            for (g, w) in got.iter().zip(&want) {
                assert!(
                    (g.score - w.score).abs() <= 1e-4 * w.score.abs().max(1.0),
                    "{:?}: version {} scored {} beside the index, {} committed",
                    req.text,
                    g.id,
                    g.score,
                    w.score
                );
            }
        }
    }
}
