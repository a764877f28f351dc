//! An English stemmer token filter with a memo of words already stemmed.
//!
//! Snowball stemming was the largest single cost of building the full-text index; the
//! words of a memory repeat a lot (keys, names, domain terms), so each indexing thread
//! remembers its stems. Results are exactly tantivy's `Stemmer` (same algorithm).

use std::collections::HashMap;

use tantivy::tokenizer::{Token, TokenFilter, TokenStream, Tokenizer};

/// Words remembered per tokenizer before the memo is cleared (bounds memory).
const MEMO_LIMIT: usize = 200_000;

/// Stems English words like tantivy's `Stemmer`, remembering results.
#[derive(Clone, Default)]
pub struct MemoStemmer;

impl TokenFilter for MemoStemmer {
    type Tokenizer<T: Tokenizer> = MemoStemmerFilter<T>;

    fn transform<T: Tokenizer>(self, tokenizer: T) -> MemoStemmerFilter<T> {
        MemoStemmerFilter {
            inner: tokenizer,
            memo: HashMap::new(),
        }
    }
}

/// The tokenizer side of [`MemoStemmer`].
#[derive(Clone)]
pub struct MemoStemmerFilter<T> {
    inner: T,
    memo: HashMap<String, String>,
}

impl<T: Tokenizer> Tokenizer for MemoStemmerFilter<T> {
    type TokenStream<'a> = MemoStemmerStream<'a, T::TokenStream<'a>>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> Self::TokenStream<'a> {
        if self.memo.len() > MEMO_LIMIT {
            self.memo.clear();
        }
        MemoStemmerStream {
            tail: self.inner.token_stream(text),
            stemmer: rust_stemmers::Stemmer::create(rust_stemmers::Algorithm::English),
            memo: &mut self.memo,
        }
    }
}

/// The token stream side of [`MemoStemmer`].
pub struct MemoStemmerStream<'a, T> {
    tail: T,
    stemmer: rust_stemmers::Stemmer,
    memo: &'a mut HashMap<String, String>,
}

impl<T: TokenStream> TokenStream for MemoStemmerStream<'_, T> {
    fn advance(&mut self) -> bool {
        if !self.tail.advance() {
            return false;
        }
        let token = self.tail.token_mut();
        if let Some(stem) = self.memo.get(&token.text) {
            token.text.clear();
            token.text.push_str(stem);
        } else {
            let stem = self.stemmer.stem(&token.text).into_owned();
            self.memo
                .insert(std::mem::take(&mut token.text), stem.clone());
            token.text = stem;
        }
        true
    }

    fn token(&self) -> &Token {
        self.tail.token()
    }

    fn token_mut(&mut self) -> &mut Token {
        self.tail.token_mut()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tantivy::tokenizer::{Language, LowerCaser, SimpleTokenizer, Stemmer, TextAnalyzer};

    fn tokens(mut a: TextAnalyzer, text: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut s = a.token_stream(text);
        while s.advance() {
            out.push(s.token().text.clone());
        }
        out
    }

    #[test]
    fn same_stems_as_tantivy() {
        let text = "Deploying deploys deployed; running runs ran — généralement caresses ponies";
        let plain = TextAnalyzer::builder(SimpleTokenizer::default())
            .filter(LowerCaser)
            .filter(Stemmer::new(Language::English))
            .build();
        let memo = TextAnalyzer::builder(SimpleTokenizer::default())
            .filter(LowerCaser)
            .filter(MemoStemmer)
            .build();
        let expected = tokens(plain, text);
        let mut memo_again = memo.clone();
        assert_eq!(tokens(memo, text), expected);
        // Second pass through the same tokenizer hits the memo and agrees too.
        let _ = tokens(memo_again.clone(), text);
        let mut out = Vec::new();
        let mut s = memo_again.token_stream(text);
        while s.advance() {
            out.push(s.token().text.clone());
        }
        assert_eq!(out, expected);
    }
}
