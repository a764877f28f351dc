//! Reading a search text as a question (docs/internals/ranking.md): documents
//! and queries are analysed apart. A stored fact's words are all content; a question's
//! are not — `When did Caroline go to the support group?` asks about `Caroline`, `go`,
//! `support`, `group`, and its `when`, `did`, `the` carry nothing a fact would contain.
//!
//! [`analyse`] keeps each content word of the text with a weight: question words,
//! auxiliaries, pronouns and the usual English function words are dropped; a word that
//! names something (capitalised inside the sentence, an acronym) weighs more. Whole keys
//! of this workspace (`event7:host`) stay as they are and are also read by their parts.
//! (A key's parts alone are not names: `user` or `api` are parts of many keys, and
//! boosting them let every `user.*` fact outrank the one a question was about.) When nothing is left (a text of function words only), every
//! word is kept at weight 1, as before analysis.

/// How much more a name counts than another word, unless `mem7.yaml` says otherwise.
pub const DEFAULT_NAME_WEIGHT: f32 = 3.0;

/// How much each kind of word match counts in a search by words (`search:` in
/// `mem7.yaml`; the defaults are measured by `just eval`, docs/internals/retrieval.md).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WordWeights {
    /// A word of the value.
    pub value: f32,
    /// A part of the key (`event7`, `host` of `event7:host`).
    pub key: f32,
    /// A part of a tag.
    pub tags: f32,
    /// The whole text (or a key it names) being a key.
    pub exact_key: f32,
    /// A word that names something, relative to other words.
    pub name: f32,
}

impl Default for WordWeights {
    fn default() -> Self {
        WordWeights {
            value: 1.0,
            key: 2.0,
            tags: 1.2,
            exact_key: 5.0,
            name: DEFAULT_NAME_WEIGHT,
        }
    }
}

/// One word of a query, as the user wrote it (lower-cased), with its weight.
#[derive(Clone, Debug, PartialEq)]
pub struct QueryWord {
    pub text: String,
    pub weight: f32,
    /// Whether it names something (a person, an acronym, a whole key).
    pub name: bool,
    /// Whether it carries content (a function word only breaks ties).
    pub content: bool,
}

/// What a function word weighs in a question that has content words: next to nothing,
/// so that it only decides between facts that match nothing else (`how fast must the
/// website be` against `pages must load in 2 s`).
pub const FUNCTION_WORD_WEIGHT: f32 = 0.05;

/// Words that carry no content in a question: question words, auxiliaries and modals,
/// pronouns and determiners, and a few fillers questions are made of.
const FUNCTION_WORDS: &[&str] = &[
    // question words
    "what",
    "when",
    "where",
    "who",
    "whom",
    "whose",
    "which",
    "why",
    "how",
    "whats",
    "whatever",
    "whenever",
    // auxiliaries and modals
    "do",
    "does",
    "did",
    "done",
    "doing",
    "is",
    "are",
    "was",
    "were",
    "be",
    "been",
    "being",
    "am",
    "have",
    "has",
    "had",
    "having",
    "can",
    "could",
    "would",
    "should",
    "will",
    "shall",
    "may",
    "might",
    "must",
    "ought",
    // pronouns and determiners
    "i",
    "me",
    "my",
    "mine",
    "myself",
    "you",
    "your",
    "yours",
    "yourself",
    "he",
    "him",
    "his",
    "himself",
    "she",
    "her",
    "hers",
    "herself",
    "it",
    "its",
    "itself",
    "we",
    "us",
    "our",
    "ours",
    "ourselves",
    "they",
    "them",
    "their",
    "theirs",
    "themselves",
    "this",
    "that",
    "these",
    "those",
    "the",
    "a",
    "an",
    "some",
    "any",
    "each",
    "every",
    "all",
    "both",
    "either",
    "neither",
    "other",
    "another",
    "such",
    "own",
    // prepositions, conjunctions, particles
    "of",
    "to",
    "in",
    "on",
    "at",
    "by",
    "for",
    "with",
    "about",
    "from",
    "into",
    "onto",
    "over",
    "under",
    "as",
    "than",
    "then",
    "and",
    "or",
    "but",
    "nor",
    "so",
    "if",
    "not",
    "no",
    "yes",
    "up",
    "out",
    "off",
    "there",
    "here",
    "also",
    "too",
    "very",
    "just",
    "ever",
    "still",
    "yet",
    "again",
    "already",
    "s",
    "t",
    "don",
    "didn",
    "doesn",
    "isn",
    "wasn",
    "aren",
    "weren",
    // fillers of questions about facts
    "kind",
    "sort",
    "type",
    "thing",
    "things",
    "something",
    "anything",
    "much",
    "many",
    "more",
    "most",
    "please",
    "tell",
    "know",
    "remember",
    "recall",
    "think",
    "currently",
    "now",
    "ago",
];

/// The words that, right after `how`, ask for a measure (`how long`, `how often`).
const HOW_MEASURES: &[&str] = &["long", "often", "far", "old", "soon", "frequently"];

/// Whether `word` (lower-case) is a function word of questions.
pub fn is_function_word(word: &str) -> bool {
    FUNCTION_WORDS.contains(&word)
}

/// The parts of a question that asks about several things ("which database, CI
/// provider and deploy target do we use?", "who leads search; when is the freeze?"):
/// the text split at `?`, `;`, `,` and ` and `, when at least two pieces each hold a
/// content word. Empty for a question about one thing.
pub fn question_parts(text: &str) -> Vec<String> {
    let mut pieces: Vec<String> = Vec::new();
    for sentence in text.split(['?', ';', ',']) {
        for piece in sentence.split(" and ") {
            let piece = piece.trim();
            let content = piece
                .split(|c: char| !c.is_alphanumeric())
                .any(|w| !w.is_empty() && !is_function_word(&w.to_lowercase()));
            if content {
                pieces.push(piece.to_string());
            }
        }
    }
    if pieces.len() < 2 {
        return Vec::new();
    }
    pieces
}

/// The stems of the content words of a question (function words dropped), each once.
pub fn content_stems(text: &str) -> Vec<String> {
    let stemmer = rust_stemmers::Stemmer::create(rust_stemmers::Algorithm::English);
    let mut out: Vec<String> = Vec::new();
    for w in analyse(text, 1.0, &|_| false)
        .into_iter()
        .filter(|w| w.content)
    {
        for part in w
            .text
            .split(|c: char| !c.is_alphanumeric())
            .filter(|p| !p.is_empty())
        {
            let stem = stemmer.stem(part).into_owned();
            if !out.contains(&stem) {
                out.push(stem);
            }
        }
    }
    out
}

/// The stems of every word of `texts` (lower-cased, split at anything not a letter or
/// a digit).
pub fn stems_of<'a>(texts: impl IntoIterator<Item = &'a str>) -> std::collections::HashSet<String> {
    let stemmer = rust_stemmers::Stemmer::create(rust_stemmers::Algorithm::English);
    let mut out = std::collections::HashSet::new();
    for text in texts {
        for part in text
            .split(|c: char| !c.is_alphanumeric())
            .filter(|p| !p.is_empty())
        {
            out.insert(stemmer.stem(&part.to_lowercase()).into_owned());
        }
    }
    out
}

/// The words of `text` with their weights. `is_key_part` tells whether a lower-cased word
/// is a key or a part of a key in the workspace (an entity the question names).
pub fn analyse(text: &str, name_weight: f32, is_key_part: &dyn Fn(&str) -> bool) -> Vec<QueryWord> {
    let mut out: Vec<QueryWord> = Vec::new();
    // A word said twice counts once, at its best weight.
    fn add(out: &mut Vec<QueryWord>, word: QueryWord) {
        match out.iter_mut().find(|w| w.text == word.text) {
            Some(w) if word.weight > w.weight => *w = word,
            Some(_) => {}
            None => out.push(word),
        }
    }
    let mut sentence_start = true;
    let mut after_how = false;
    let mut quiet: Vec<String> = Vec::new();
    for raw in text.split_whitespace() {
        // A whole key (`event7:host`, `ci.provider`) is kept as one word, and its parts
        // are read below like any other words.
        let trimmed = raw.trim_matches(|c: char| !c.is_alphanumeric());
        let ends_sentence = raw.ends_with(['.', '?', '!']);
        if trimmed.contains([':', '.', '/']) && trimmed.chars().any(char::is_alphabetic) {
            let lower = trimmed.to_lowercase();
            if is_key_part(&lower) {
                add(
                    &mut out,
                    QueryWord {
                        text: lower,
                        weight: name_weight,
                        name: true,
                        content: true,
                    },
                );
            }
        }
        for part in trimmed.split(|c: char| !c.is_alphanumeric()) {
            if part.is_empty() {
                continue;
            }
            let lower = part.to_lowercase();
            let first_upper = part.chars().next().is_some_and(char::is_uppercase);
            let acronym = part.chars().count() >= 2
                && part.chars().all(|c| c.is_uppercase() || c.is_ascii_digit())
                && part.chars().any(char::is_uppercase);
            // `how long`, `how often`: the word after `how` asks for a measure, it is
            // not what the question is about (`how long do we keep log files` is about
            // logs, not about long answers).
            let function =
                is_function_word(&lower) || (after_how && HOW_MEASURES.contains(&lower.as_str()));
            after_how = lower == "how";
            // A capital letter names something unless it only starts the sentence.
            let capitalised = first_upper && !sentence_start && !function;
            let name = !function && (capitalised || acronym);
            sentence_start = false;
            if function && !acronym {
                quiet.push(lower);
                continue;
            }
            add(
                &mut out,
                QueryWord {
                    text: lower,
                    weight: if name { name_weight } else { 1.0 },
                    name,
                    content: true,
                },
            );
        }
        if ends_sentence {
            sentence_start = true;
        }
    }
    if out.is_empty() {
        // Nothing but function words: search them all, as typed.
        for part in text.split(|c: char| !c.is_alphanumeric()) {
            if !part.is_empty() {
                add(
                    &mut out,
                    QueryWord {
                        text: part.to_lowercase(),
                        weight: 1.0,
                        name: false,
                        content: true,
                    },
                );
            }
        }
    } else {
        for word in quiet {
            add(
                &mut out,
                QueryWord {
                    text: word,
                    weight: FUNCTION_WORD_WEIGHT,
                    name: false,
                    content: false,
                },
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The content words (function words only break ties).
    fn words(text: &str, keys: &[&str]) -> Vec<(String, f32)> {
        analyse(text, 2.0, &|w| keys.contains(&w))
            .into_iter()
            .filter(|w| w.content)
            .map(|w| (w.text, w.weight))
            .collect()
    }

    #[test]
    fn a_question_about_several_things_is_read_as_its_parts() {
        assert_eq!(
            question_parts("Which database, CI provider and deploy target do we use?"),
            ["Which database", "CI provider", "deploy target do we use"]
        );
        assert_eq!(
            question_parts("who leads search; when is the freeze?"),
            ["who leads search", "when is the freeze"]
        );
        // One thing asked: no parts (a piece without a content word is no part).
        assert!(question_parts("where does production get deployed").is_empty());
        assert!(question_parts("what is it, and why?").is_empty());
    }

    #[test]
    fn a_question_keeps_its_content_and_its_names_count_more() {
        assert_eq!(
            words("When did Caroline go to the LGBTQ support group?", &[]),
            [
                ("caroline".to_string(), 2.0),
                ("go".to_string(), 1.0),
                ("lgbtq".to_string(), 2.0),
                ("support".to_string(), 1.0),
                ("group".to_string(), 1.0),
            ]
        );
        // The keyword form of the same question keeps the same words.
        let question: Vec<String> = words("What is the deploy target of payments?", &["payments"])
            .into_iter()
            .map(|(w, _)| w)
            .collect();
        let keywords: Vec<String> = words("payments deploy target", &["payments"])
            .into_iter()
            .map(|(w, _)| w)
            .collect();
        let mut a = question.clone();
        let mut b = keywords.clone();
        a.sort();
        b.sort();
        assert_eq!(a, b);
        // Function words stay, at a weight that only breaks ties.
        let quiet: Vec<(String, f32)> = analyse("how fast must the website be", 2.0, &|_| false)
            .into_iter()
            .filter(|w| !w.content)
            .map(|w| (w.text, w.weight))
            .collect();
        assert!(
            quiet.contains(&("must".to_string(), FUNCTION_WORD_WEIGHT)),
            "{quiet:?}"
        );
        assert!(quiet.iter().all(|(_, w)| *w < 0.1));
    }

    #[test]
    fn keys_stay_whole_and_by_parts() {
        let w = words(
            "where does event7:host run?",
            &["event7:host", "event7", "host"],
        );
        assert!(w.contains(&("event7:host".to_string(), 2.0)), "{w:?}");
        assert!(w.contains(&("event7".to_string(), 1.0)), "{w:?}");
        assert!(w.contains(&("run".to_string(), 1.0)), "{w:?}");
    }

    #[test]
    fn a_text_of_function_words_is_searched_as_typed() {
        let w = words("who is it", &[]);
        assert_eq!(w.len(), 3);
    }

    #[test]
    fn how_long_asks_for_a_measure() {
        let w = words("how long do we keep log files", &[]);
        let w: Vec<&str> = w.iter().map(|(w, _)| w.as_str()).collect();
        assert_eq!(w, ["keep", "log", "files"]);
        // Elsewhere `long` is content.
        assert!(
            words("the long outage", &[])
                .iter()
                .any(|(w, _)| w == "long")
        );
    }
}
