//! The words side's query: a request's text read as a question (`index::query`) as
//! tantivy clauses, kept as a list too, so that the versions the index does not hold
//! yet are scored by the same clauses (`tail.rs`).

use super::*;
use tantivy::query::Bm25StatisticsProvider;

/// One clause of the text query: a term and how much it weighs.
#[derive(Clone, Debug)]
pub(super) struct Clause {
    pub term: Term,
    /// The term's text.
    pub token: String,
    pub boost: f32,
    /// Whether its field counts how often the term occurs (a text field), or only that
    /// it does (a whole key).
    pub counted: bool,
}

impl Clause {
    fn counted(field: Field, token: &str, boost: f32) -> Clause {
        Clause {
            term: Term::from_field_text(field, token),
            token: token.to_string(),
            boost,
            counted: true,
        }
    }

    /// The clause as a tantivy query.
    fn query(&self) -> Box<dyn Query> {
        let record = if self.counted {
            IndexRecordOption::WithFreqs
        } else {
            IndexRecordOption::Basic
        };
        Box::new(BoostQuery::new(
            Box::new(TermQuery::new(self.term.clone(), record)),
            self.boost,
        ))
    }
}

/// The text query, and its clauses (none for a `--raw` query).
pub(super) struct Words {
    pub query: Box<dyn Query>,
    pub clauses: Option<Vec<Clause>>,
}

impl FullText {
    /// The text part of a request as a query. The text is read as a question
    /// ([`crate::index::query::analyse`]): its content words, each of which may match the value,
    /// the key's parts or the tags, names weighing more; the whole text matching a key
    /// exactly counts most.
    pub(super) fn text_query(
        &self,
        req: &SearchRequest,
        stats: &dyn Bm25StatisticsProvider,
        weights: &WordWeights,
    ) -> Result<Words> {
        let f = self.fields;
        if req.raw {
            let parser =
                QueryParser::for_index(&self.index, vec![f.value, f.key_parts, f.tags_text]);
            let query = parser.parse_query(&req.text).map_err(|e| {
                Error::input(
                    format!("--raw query {:?}: {e}", req.text),
                    "check the tantivy query syntax, or drop --raw to search the words as text",
                )
            })?;
            return Ok(Words {
                query,
                clauses: None,
            });
        }
        // A word names an entity of this workspace when it is a key, or a part of one.
        let is_key_part = |word: &str| {
            [f.key_parts, f.key_exact].iter().any(|&field| {
                stats
                    .doc_freq(&Term::from_field_text(field, word))
                    .is_ok_and(|n| n > 0)
            })
        };
        let words = crate::index::query::analyse(&req.text, weights.name, &is_key_part);
        let mut clauses: Vec<Clause> = Vec::new();
        // A name counts more where facts keep what they are about (keys and tags); in
        // a value it is one word among others, or a short greeting would outrank the
        // fact the question is after.
        for (field, analyzer, boost, names) in [
            (f.value, TEXT_ANALYZER, weights.value, false),
            (f.key_parts, KEY_ANALYZER, weights.key, true),
            (f.tags_text, PARTS_ANALYZER, weights.tags, true),
        ] {
            let mut tokenizer = self
                .index
                .tokenizers()
                .get(analyzer)
                .ok_or_else(|| ft_err(&self.dir, "missing analyzer"))?;
            for word in &words {
                let mut stream = tokenizer.token_stream(&word.text);
                while let Some(token) = stream.next() {
                    let weight = if names || !word.name {
                        word.weight
                    } else {
                        1.0
                    };
                    clauses.push(Clause::counted(field, &token.text, boost * weight));
                }
            }
        }
        // A compound the question writes in two words (`on call`, `on-call`) as a key
        // writes it in one (`oncall`): each adjacent pair joined, where a key has it.
        let mut key_tokenizer = self
            .index
            .tokenizers()
            .get(KEY_ANALYZER)
            .ok_or_else(|| ft_err(&self.dir, "missing analyzer"))?;
        for pair in crate::index::keyparts::joined_pairs(&req.text) {
            let mut stream = key_tokenizer.token_stream(&pair);
            while let Some(token) = stream.next() {
                let term = Term::from_field_text(f.key_parts, &token.text);
                if stats.doc_freq(&term).is_ok_and(|n| n > 0) {
                    clauses.push(Clause::counted(f.key_parts, &token.text, weights.key));
                }
            }
        }
        for key in std::iter::once(req.text.trim()).chain(
            words
                .iter()
                .filter(|w| w.name && w.text.contains(':'))
                .map(|w| w.text.as_str()),
        ) {
            clauses.push(Clause {
                term: Term::from_field_text(f.key_exact, key),
                token: key.to_string(),
                boost: weights.exact_key,
                counted: false,
            });
        }
        let query = Box::new(BooleanQuery::new(
            clauses.iter().map(|c| (Occur::Should, c.query())).collect(),
        ));
        Ok(Words {
            query,
            clauses: Some(clauses),
        })
    }
}
