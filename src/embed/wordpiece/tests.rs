//! The tokenizer's steps on a tiny vocabulary: added tokens, normalising, splitting, WordPiece, the cut.

use super::*;

/// A tokenizer file of the model's shape with a tiny vocabulary.
fn tiny(vocab: &[&str]) -> WordPiece {
    let vocab: serde_json::Map<String, serde_json::Value> = vocab
        .iter()
        .enumerate()
        .map(|(i, t)| (t.to_string(), (i as u32).into()))
        .collect();
    let json = serde_json::json!({
        "version": "1.0",
        "truncation": null,
        "padding": null,
        "added_tokens": [
            {"id": 0, "content": "[UNK]", "single_word": false, "lstrip": false,
             "rstrip": false, "normalized": false, "special": true},
            {"id": 1, "content": "[CLS]", "single_word": false, "lstrip": false,
             "rstrip": false, "normalized": false, "special": true},
            {"id": 2, "content": "[SEP]", "single_word": false, "lstrip": false,
             "rstrip": false, "normalized": false, "special": true}
        ],
        "normalizer": {"type": "BertNormalizer", "clean_text": true,
            "handle_chinese_chars": true, "strip_accents": null, "lowercase": true},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {"type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}},
                       {"Sequence": {"id": "A", "type_id": 0}},
                       {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
            "pair": [],
            "special_tokens": {"[CLS]": {"id": "[CLS]", "ids": [1], "tokens": ["[CLS]"]},
                               "[SEP]": {"id": "[SEP]", "ids": [2], "tokens": ["[SEP]"]}}},
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": true},
        "model": {"type": "WordPiece", "unk_token": "[UNK]",
            "continuing_subword_prefix": "##", "max_input_chars_per_word": 9,
            "vocab": vocab}
    });
    WordPiece::from_json(json.to_string().as_bytes(), Path::new("tiny.json")).unwrap()
}

const VOCAB: &[&str] = &[
    "[UNK]", "[CLS]", "[SEP]", "un", "##aff", "##able", "cafe", "!", "?", "東", "京", "a",
];

fn tokens(w: &WordPiece, text: &str, max: usize) -> Vec<&'static str> {
    w.encode(text, max)
        .into_iter()
        .map(|id| VOCAB[id as usize])
        .collect()
}

#[test]
fn words_split_into_the_longest_pieces_with_specials_around() {
    let w = tiny(VOCAB);
    assert_eq!(
        tokens(&w, "UNAFFABLE  Café!?東京", 64),
        [
            "[CLS]", "un", "##aff", "##able", "cafe", "!", "?", "東", "京", "[SEP]"
        ]
    );
}

#[test]
fn a_word_with_an_unknown_piece_or_too_long_is_one_unknown() {
    let w = tiny(VOCAB);
    assert_eq!(tokens(&w, "unaffx", 64), ["[CLS]", "[UNK]", "[SEP]"]);
    assert_eq!(
        tokens(&w, "aaaaaaaaaa a", 64),
        ["[CLS]", "[UNK]", "a", "[SEP]"]
    );
}

#[test]
fn added_tokens_are_taken_from_the_raw_text_and_controls_dropped() {
    let w = tiny(VOCAB);
    assert_eq!(
        tokens(&w, "a[SEP]\u{0}a\u{200b}[sep]", 64),
        [
            "[CLS]", "a", "[SEP]", "a", "[UNK]", "[UNK]", "[UNK]", "[SEP]"
        ]
    );
}

#[test]
fn the_text_is_cut_to_leave_room_for_the_specials() {
    let w = tiny(VOCAB);
    assert_eq!(
        tokens(&w, "unaffable a a", 4),
        ["[CLS]", "un", "##aff", "[SEP]"]
    );
    assert_eq!(tokens(&w, "a", 2), ["[CLS]", "[SEP]"]);
}

#[test]
fn a_file_of_another_kind_is_refused_by_name() {
    let json = br#"{"added_tokens": [], "normalizer": null, "pre_tokenizer": null,
        "post_processor": null, "model": {"type": "BPE", "unk_token": "x",
        "continuing_subword_prefix": "", "max_input_chars_per_word": 1, "vocab": {}}}"#;
    let e = WordPiece::from_json(json, Path::new("odd/tokenizer.json"))
        .err()
        .unwrap()
        .to_string();
    assert!(e.starts_with("odd/tokenizer.json: its normalizer"), "{e}");
}
