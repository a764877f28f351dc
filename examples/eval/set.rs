//! What the evaluation runs on, whatever file it came from: samples (one workspace
//! each) holding the records to import, the table from each stored key back to the fact
//! the labels name, and the questions with their gold facts.

use std::collections::HashMap;
use std::path::Path;

use serde::Serialize;

use crate::labelled;

/// One data set: a LoCoMo file, or the labelled set.
pub struct DataSet {
    pub name: String,
    pub samples: Vec<Sample>,
    /// The categories in the order the table shows them.
    pub categories: Vec<Category>,
    /// What was skipped or repaired while reading, for the report.
    pub notes: Vec<String>,
}

pub struct Category {
    pub name: String,
    /// Whether its questions count in the `all` row (LoCoMo's adversarial ones do not).
    pub in_all: bool,
}

/// One workspace's worth.
pub struct Sample {
    pub id: String,
    pub records: Vec<Record>,
    /// Each stored key's fact, to score results by.
    pub facts: HashMap<String, Fact>,
    pub questions: Vec<Question>,
    /// `MEM7_NOW` for every command: after the last record, so every fact is current.
    pub now: String,
}

/// A fact as the labels name it.
#[derive(Clone, Debug, PartialEq)]
pub struct Fact {
    /// LoCoMo's `dia_id` (`D1:3`), or the labelled set's key.
    pub id: String,
    /// The conversation session it was said in; `None` when the set has no sessions.
    pub session: Option<String>,
}

pub struct Question {
    pub text: String,
    pub category: String,
    /// The facts that answer it (LoCoMo's evidence). Never empty.
    pub gold: Vec<Fact>,
}

/// One line of `mem7 import`'s JSON Lines (see docs/cli.md, `mem7 import`).
#[derive(Serialize)]
pub struct Record {
    pub key: String,
    pub value: String,
    pub valid_from: String,
    pub recorded: String,
    pub tags: Vec<String>,
    pub agent: String,
}

/// When the labelled facts were written, and when they are asked about.
const LABELLED_WRITTEN: &str = "2026-01-01T00:00:00Z";
const LABELLED_ASKED: &str = "2026-06-01T00:00:00Z";

/// The labelled set as one sample: each fact under its own key, every category in `all`.
pub fn from_labelled(path: &Path) -> Result<DataSet, String> {
    let set = labelled::load(path)?;
    let records = set
        .facts
        .iter()
        .map(|f| Record {
            key: f.key.clone(),
            value: f.value.clone(),
            valid_from: LABELLED_WRITTEN.into(),
            recorded: LABELLED_WRITTEN.into(),
            tags: Vec::new(),
            agent: "eval".into(),
        })
        .collect();
    let fact = |key: &str| Fact {
        id: key.to_string(),
        session: None,
    };
    let facts = set
        .facts
        .iter()
        .map(|f| (f.key.clone(), fact(&f.key)))
        .collect();
    let mut categories: Vec<Category> = Vec::new();
    let mut questions = Vec::new();
    for q in &set.queries {
        if !categories.iter().any(|c| c.name == q.category) {
            categories.push(Category {
                name: q.category.clone(),
                in_all: true,
            });
        }
        questions.push(Question {
            text: q.query.clone(),
            category: q.category.clone(),
            gold: q.expect.iter().map(|k| fact(k)).collect(),
        });
    }
    let name = format!(
        "labelled set `{}` ({} facts, {} queries)",
        file_name(path),
        set.facts.len(),
        set.queries.len()
    );
    Ok(DataSet {
        name,
        samples: vec![Sample {
            id: "labelled".into(),
            records,
            facts,
            questions,
            now: LABELLED_ASKED.into(),
        }],
        categories,
        notes: Vec::new(),
    })
}

pub fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into(),
    )
}
