//! Reads a file in LoCoMo's format (a JSON list of samples, each a conversation in
//! sessions and questions citing the turns that answer them) into samples: each turn
//! one fact, valid from its session's date and time (UTC), under the key `turn_key` gives.

use std::collections::HashMap;
use std::path::Path;

use chrono::{NaiveDateTime, TimeDelta};
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::set::{Category, DataSet, Fact, Question, Record, Sample, file_name};

#[derive(Deserialize)]
struct RawSample {
    #[serde(default)]
    sample_id: Option<String>,
    conversation: Map<String, Value>,
    qa: Vec<RawQuestion>,
}

#[derive(Deserialize)]
struct RawQuestion {
    question: String,
    #[serde(default)]
    evidence: Vec<String>,
    category: u8,
}

#[derive(Deserialize)]
struct RawTurn {
    speaker: String,
    dia_id: String,
    text: String,
    #[serde(default)]
    blip_caption: Option<String>,
}

/// LoCoMo's question categories, as its paper numbers them.
const CATEGORIES: &[(u8, &str)] = &[
    (1, "multi-hop"),
    (2, "temporal"),
    (3, "open-domain"),
    (4, "single-hop"),
    (5, "adversarial"),
];

/// Category 5 asks about things the conversation never says: its evidence is the turn
/// the question twists. Reported on its own row, outside `all`.
const ADVERSARIAL: u8 = 5;

/// The key a turn is stored under, `<speaker>:<dia_id>` (`caroline:d1_3`): the speaker
/// lower-cased with every other character than a letter or digit made `_`, the turn's id
/// lower-cased with `:` made `_`. Results are mapped back through the table built while
/// reading, so changing the scheme here changes nothing else.
pub fn turn_key(speaker: &str, dia_id: &str) -> String {
    let who: String = speaker
        .chars()
        .map(|c| {
            if c.is_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    format!("{who}:{}", dia_id.to_lowercase().replace(':', "_"))
}

/// A turn's value: its text, and the caption of the photo it shares, if any.
fn turn_value(turn: &RawTurn) -> String {
    match turn.blip_caption.as_deref().map(str::trim) {
        Some(caption) if !caption.is_empty() => {
            format!("{} [shares a photo: {caption}]", turn.text)
        }
        _ => turn.text.clone(),
    }
}

/// `1:56 pm on 8 May, 2023`, taken as UTC.
fn session_time(text: &str) -> Result<NaiveDateTime, String> {
    NaiveDateTime::parse_from_str(text.trim(), "%I:%M %p on %d %B, %Y")
        .map_err(|e| format!("{text:?} is not a time like \"1:56 pm on 8 May, 2023\": {e}"))
}

fn rfc3339(t: NaiveDateTime) -> String {
    t.format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// The cited turn ids of one evidence string. LoCoMo has slips: `D:11:26` for `D11:26`,
/// and several ids in one string (`D8:6; D9:17`). Returns the ids and whether any slip
/// was repaired.
fn evidence_ids(raw: &str) -> (Vec<String>, bool) {
    let mut repaired = false;
    let ids = raw
        .split([';', ',', ' '])
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|id| match id.strip_prefix("D:") {
            Some(rest) => {
                repaired = true;
                format!("D{rest}")
            }
            None => id.to_string(),
        })
        .collect::<Vec<_>>();
    repaired |= ids.len() > 1;
    (ids, repaired)
}

/// The session a turn id names (`D11:26` → `11`), for cited ids that are no turn.
fn session_of(id: &str) -> Option<String> {
    let digits = id.strip_prefix('D')?.split(':').next()?;
    (!digits.is_empty()).then(|| digits.to_string())
}

/// Counts of what reading a file skipped or repaired, summed over its samples.
#[derive(Default)]
struct Slips {
    no_evidence: usize,
    repaired: usize,
    unknown: Vec<String>,
}

pub fn load(path: &Path) -> Result<DataSet, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let raw: Vec<RawSample> = serde_json::from_str(&text)
        .map_err(|e| format!("{} is not in LoCoMo's format: {e}", path.display()))?;
    let mut slips = Slips::default();
    let mut samples = Vec::new();
    for (i, s) in raw.into_iter().enumerate() {
        let id = s
            .sample_id
            .clone()
            .unwrap_or_else(|| format!("sample {}", i + 1));
        let sample = read_sample(id.clone(), s, &mut slips).map_err(|e| format!("{id}: {e}"))?;
        samples.push(sample);
    }
    let turns: usize = samples.iter().map(|s| s.records.len()).sum();
    let questions: usize = samples.iter().map(|s| s.questions.len()).sum();
    let mut notes = Vec::new();
    if slips.no_evidence > 0 {
        notes.push(format!(
            "{} questions cite no turn and are left out",
            slips.no_evidence
        ));
    }
    if slips.repaired > 0 {
        notes.push(format!(
            "evidence strings repaired: {} (`D:11:26` read as `D11:26`, or several ids in one string)",
            slips.repaired
        ));
    }
    if !slips.unknown.is_empty() {
        notes.push(format!(
            "cited ids that are no turn (they count as never found): {}",
            slips.unknown.join(", ")
        ));
    }
    let categories = CATEGORIES
        .iter()
        .map(|(n, _)| Category {
            name: category_name(*n),
            in_all: *n != ADVERSARIAL,
        })
        .filter(|c| {
            samples
                .iter()
                .any(|s| s.questions.iter().any(|q| q.category == c.name))
        })
        .chain(unnamed_categories(&samples))
        .collect();
    Ok(DataSet {
        name: format!(
            "LoCoMo `{}` ({} conversations, {turns} turns, {questions} questions)",
            file_name(path),
            samples.len()
        ),
        samples,
        categories,
        notes,
    })
}

fn category_name(n: u8) -> String {
    match CATEGORIES.iter().find(|(k, _)| *k == n) {
        Some((_, name)) => format!("{n} {name}"),
        None => n.to_string(),
    }
}

/// Categories outside LoCoMo's five, should a file have them: shown after them, in `all`.
fn unnamed_categories(samples: &[Sample]) -> Vec<Category> {
    let mut names: Vec<String> = samples
        .iter()
        .flat_map(|s| &s.questions)
        .map(|q| q.category.clone())
        .filter(|c| !CATEGORIES.iter().any(|(n, _)| category_name(*n) == *c))
        .collect();
    names.sort();
    names.dedup();
    names
        .into_iter()
        .map(|name| Category { name, in_all: true })
        .collect()
}

fn read_sample(id: String, raw: RawSample, slips: &mut Slips) -> Result<Sample, String> {
    let conv = &raw.conversation;
    let mut sessions: Vec<(u32, &str)> = conv
        .iter()
        .filter(|(_, v)| v.is_array())
        .filter_map(|(k, _)| Some((k.strip_prefix("session_")?.parse().ok()?, k.as_str())))
        .collect();
    sessions.sort();
    let mut turns: Vec<(NaiveDateTime, Record)> = Vec::new();
    let mut facts = HashMap::new();
    let mut by_id: HashMap<String, Fact> = HashMap::new();
    for (n, name) in sessions {
        let when = conv
            .get(&format!("{name}_date_time"))
            .and_then(Value::as_str)
            .ok_or_else(|| format!("{name} has no {name}_date_time"))?;
        let at = session_time(when).map_err(|e| format!("{name}_date_time: {e}"))?;
        let list: Vec<RawTurn> = serde_json::from_value(conv[name].clone())
            .map_err(|e| format!("{name} is not a list of turns: {e}"))?;
        for turn in list {
            let key = turn_key(&turn.speaker, &turn.dia_id);
            let fact = Fact {
                id: turn.dia_id.clone(),
                session: Some(n.to_string()),
            };
            if facts.insert(key.clone(), fact.clone()).is_some() {
                return Err(format!("two turns are stored under the key {key}"));
            }
            by_id.insert(turn.dia_id.clone(), fact);
            turns.push((
                at,
                Record {
                    key,
                    value: turn_value(&turn),
                    valid_from: rfc3339(at),
                    recorded: rfc3339(at),
                    tags: vec![name.to_string()],
                    agent: turn.speaker.clone(),
                },
            ));
        }
    }
    // `mem7 import` refuses a `recorded` earlier than the one before it.
    turns.sort_by_key(|(at, _)| *at);
    let last = turns
        .last()
        .map(|(at, _)| *at)
        .ok_or("no session has a turn")?;
    let questions = raw
        .qa
        .into_iter()
        .filter_map(|q| read_question(q, &by_id, slips))
        .collect();
    Ok(Sample {
        id,
        records: turns.into_iter().map(|(_, r)| r).collect(),
        facts,
        questions,
        now: rfc3339(last + TimeDelta::days(1)),
    })
}

fn read_question(
    q: RawQuestion,
    by_id: &HashMap<String, Fact>,
    slips: &mut Slips,
) -> Option<Question> {
    let mut gold: Vec<Fact> = Vec::new();
    for raw in &q.evidence {
        let (ids, repaired) = evidence_ids(raw);
        slips.repaired += repaired as usize;
        for id in ids {
            let fact = by_id.get(&id).cloned().unwrap_or_else(|| {
                slips.unknown.push(id.clone());
                Fact {
                    session: session_of(&id),
                    id: id.clone(),
                }
            });
            if !gold.contains(&fact) {
                gold.push(fact);
            }
        }
    }
    if gold.is_empty() {
        slips.no_evidence += 1;
        return None;
    }
    Some(Question {
        text: q.question,
        category: category_name(q.category),
        gold,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_slips() {
        assert_eq!(turn_key("Caroline", "D1:3"), "caroline:d1_3");
        assert_eq!(turn_key("Mary Ann", "D12:30"), "mary_ann:d12_30");
        assert_eq!(evidence_ids("D:11:26"), (vec!["D11:26".to_string()], true));
        assert_eq!(
            evidence_ids("D8:6; D9:17").0,
            vec!["D8:6".to_string(), "D9:17".to_string()]
        );
        assert_eq!(session_of("D11:26").as_deref(), Some("11"));
        let t = session_time("1:56 pm on 8 May, 2023").unwrap();
        assert_eq!(rfc3339(t), "2023-05-08T13:56:00Z");
        let t = session_time("12:09 am on 13 September, 2023").unwrap();
        assert_eq!(rfc3339(t), "2023-09-13T00:09:00Z");
    }
}
