//! The engine's notes ([`crate::engine::Note`]) in words for each audience: a person at a
//! terminal or reading a server's log, who can run `mem7` commands, and a model calling
//! the MCP tools, who can only call tools and change its question.

use crate::engine::Note;

/// For a person, after `mem7: note: ` (what the CLI and the servers' logs say).
pub fn for_person(note: &Note) -> String {
    match note {
        Note::MeaningOff { why } => format!(
            "{why} ({}); searching by words only",
            crate::embed::FETCH_HINT
        ),
        Note::MeaningFailed { error } => format!("{error}; searching by words only"),
        Note::NoNearByMeaning { error } => format!("{error}; no suggestions by meaning"),
        Note::NoLookAlikesByMeaning { error } => {
            format!("{error}; no look-alike keys by meaning")
        }
        Note::VectorsMissing { missing, model } => format!(
            "{missing} version(s) have no vector of {model} yet, so meaning search does not \
             see them: `mem7 embed` fills them in"
        ),
        Note::VectorsNotFilled { missing, error } => {
            format!("{missing} version(s) have no vector yet ({error})")
        }
        Note::LookAlikesLater { key, keys } => format!(
            "{key}: {keys} key(s) sharing its words are compared by meaning after the answer \
             (their vectors are being computed); a look-alike found is said then"
        ),
        Note::NamesLater { key, keys } => format!(
            "{key}: compared by name with the {keys} keys sharing most of its words; the \
             other keys sharing its words are compared after the answer, and a look-alike \
             found is said then"
        ),
        Note::LateLookAlike { key, similar, why } => format!(
            "{key}, stored earlier, looks like the existing {similar} ({}): \
             `mem7 rekey {key} {similar}` moves it if they are one fact",
            super::said::alike(why)
        ),
    }
}

/// For a model, as a line of a tool's answer: what the answer lacks and what the model
/// can do about it with the tools it has.
pub fn for_model(note: &Note) -> String {
    match note {
        // Why it is off (a path, a setting) is the person's to fix: the server's log says it.
        Note::MeaningOff { .. } => "note: matched by words only, since meaning search is off \
            in this memory; if nothing fits, ask again with the words the fact would be \
            stored in"
            .to_string(),
        Note::MeaningFailed { error } => format!(
            "note: matched by words only, since meaning search failed ({error}); if nothing \
             fits, ask again with other words"
        ),
        Note::NoNearByMeaning { error } => format!(
            "note: keys near the one asked for were looked for by name only ({error}); \
             memory_list shows every key"
        ),
        Note::NoLookAlikesByMeaning { error } => format!(
            "note: existing keys for the same fact were looked for by name only ({error}); \
             check memory_list before storing more under a new key"
        ),
        Note::VectorsMissing { missing, .. } => format!(
            "note: {missing} fact(s) are not searchable by meaning yet (the server is \
             filling in their vectors); their words still match"
        ),
        Note::VectorsNotFilled { missing, error } => format!(
            "note: {missing} fact(s) are not searchable by meaning ({error}); their words \
             still match"
        ),
        Note::LookAlikesLater { key, keys } => format!(
            "note: `{key}` was checked against existing keys by name and by the vectors at \
             hand; {keys} key(s) sharing its words are still being compared by meaning, and \
             a later answer says so if one names the same fact"
        ),
        Note::NamesLater { key, keys } => format!(
            "note: `{key}` was checked by name against the {keys} existing keys sharing most \
             of its words; the other keys sharing its words are still being compared, and a \
             later answer says so if one names the same fact"
        ),
        Note::LateLookAlike { key, similar, why } => format!(
            "note: `{key}` (stored earlier) looks like the existing `{similar}` ({}); if \
             they are one fact, memory_rekey moves `{key}` to `{similar}`",
            super::said::alike(why)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_is_never_told_to_run_a_command() {
        let error = "the provider did not answer".to_string();
        let all = [
            Note::MeaningOff {
                why: "no model".into(),
            },
            Note::MeaningFailed {
                error: error.clone(),
            },
            Note::NoNearByMeaning {
                error: error.clone(),
            },
            Note::NoLookAlikesByMeaning {
                error: error.clone(),
            },
            Note::VectorsMissing {
                missing: 3,
                model: "local/all-MiniLM-L6-v2".into(),
            },
            Note::VectorsNotFilled { missing: 2, error },
            Note::LookAlikesLater {
                key: "team:steward".into(),
                keys: 2,
            },
            Note::NamesLater {
                key: "team:steward".into(),
                keys: 256,
            },
            Note::LateLookAlike {
                key: "team:steward".into(),
                similar: "team:owner".into(),
                why: crate::engine::Alike::NearWords {
                    mine: "steward".into(),
                    theirs: "owner".into(),
                    near: 0.7,
                },
            },
        ];
        for note in &all {
            let model = for_model(note);
            assert!(model.starts_with("note: "), "{model}");
            assert!(!model.contains("`mem7"), "{model}");
            assert!(!for_person(note).is_empty());
        }
        assert!(for_person(&all[4]).contains("`mem7 embed` fills them in"));
    }
}
