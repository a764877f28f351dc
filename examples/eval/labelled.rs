//! The reader of mem7's own labelled set (`examples/data/labelled.json`): facts a coding
//! agent keeps, the queries that ask for them, questions no fact answers, and new facts
//! with the slot each belongs in. `examples/eval` scores the queries; `examples/rank_eval.rs`
//! includes this file too, for its fusion, floor and look-alike measures.

use std::path::{Path, PathBuf};

use serde::Deserialize;

/// The labelled set as written in the file.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LabelledSet {
    /// What the set is, for whoever opens the file.
    #[serde(rename = "about")]
    _about: String,
    pub facts: Vec<LabelledFact>,
    pub queries: Vec<LabelledQuery>,
    /// Read by rank_eval only (the floor under meaning-only hits).
    #[allow(dead_code)]
    pub unrelated: Vec<String>,
    /// The look-alike threshold's set (rank_eval).
    pub new_slots: Vec<NewSlot>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LabelledFact {
    pub key: String,
    pub value: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LabelledQuery {
    pub query: String,
    /// The keys that answer it (any of them counts as a hit).
    pub expect: Vec<String>,
    /// `paraphrase` or `identifier`: how the query was written.
    pub category: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // read by rank_eval only
pub struct NewSlot {
    pub key: String,
    pub value: String,
    /// The existing key this fact belongs under; `None` for a genuinely new fact.
    pub belongs: Option<String>,
}

/// Where the set lives in the repository.
pub fn default_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/data/labelled.json")
}

/// Reads and checks the set: every expected key must be one of its facts.
pub fn load(path: &Path) -> Result<LabelledSet, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read the labelled set {}: {e}", path.display()))?;
    let set: LabelledSet = serde_json::from_str(&text)
        .map_err(|e| format!("{} is not a labelled set: {e}", path.display()))?;
    let known = |key: &str| set.facts.iter().any(|f| f.key == key);
    if let Some(slot) = set
        .new_slots
        .iter()
        .find(|s| s.belongs.as_deref().is_some_and(|b| !known(b)))
    {
        return Err(format!(
            "{}: the new slot {:?} belongs under {:?}, which is not a fact of the set",
            path.display(),
            slot.key,
            slot.belongs
        ));
    }
    for q in &set.queries {
        if q.expect.is_empty() {
            return Err(format!("{}: {:?} expects no key", path.display(), q.query));
        }
        if let Some(missing) = q.expect.iter().find(|k| !known(k)) {
            return Err(format!(
                "{}: {:?} expects {missing:?}, which is not a fact of the set",
                path.display(),
                q.query
            ));
        }
    }
    Ok(set)
}
