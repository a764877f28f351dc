//! What the layers below report as data, in words for people: the entries a catch-up met
//! recorded ahead of this machine's clock, how a start-up found the index, why a key is
//! near another or looks like the same slot, a project's setting that takes no effect until approved. The engine, the index and the text heuristics return records, enums and
//! times; the sentences are chosen here, once, for every front end (`tests/it/layout.rs`
//! fails a wording function below the front ends).

use crate::config::{Ignored, Says};
use crate::core::time::{TxTime, span_text};
use crate::engine::{AHEAD_KEPT, Ahead, Alike, FreshCheck};
use crate::text::drift::SameBy;
use crate::text::names::Nearness;

/// One entry recorded ahead of `now`: "memory/…:3 was recorded 2026-12-05T00:00:00Z,
/// 3 days 13 hours ahead of this machine's clock (2026-12-01T11:00:00Z)".
pub fn ahead(a: &Ahead, now: TxTime) -> String {
    format!(
        "{}:{} was recorded {}, {} ahead of this machine's clock ({now})",
        a.file,
        a.line,
        a.recorded,
        span_text(a.recorded.micros().saturating_sub(now.micros()))
    )
}

/// How many entries recorded ahead of the clock are named one per line; a pull from a
/// machine far ahead can bring hundreds.
const AHEAD_LINES: usize = 5;

/// What to tell a person about entries recorded ahead of `now`: one line each, at most
/// `AHEAD_LINES` (5) of them, then how many more ("at least" when the engine stopped
/// listing them at [`AHEAD_KEPT`]).
pub fn ahead_lines(ahead: &[Ahead], now: TxTime) -> Vec<String> {
    let at_least = if ahead.len() >= AHEAD_KEPT {
        "at least "
    } else {
        ""
    };
    let mut lines: Vec<String> = ahead
        .iter()
        .take(AHEAD_LINES)
        .map(|a| self::ahead(a, now))
        .collect();
    if ahead.len() > AHEAD_LINES {
        lines.push(format!(
            "{at_least}{} more entries were recorded ahead of this machine's clock; `mem7 verify` lists them all",
            ahead.len() - AHEAD_LINES
        ));
    }
    lines
}

/// How a start-up found the index, in a sentence (`MEM7_TRACE=startup`).
pub fn fresh_check(check: FreshCheck) -> String {
    let verdict = |fresh| if fresh { "current" } else { "behind the files" };
    match check {
        FreshCheck::Vouched {
            checked,
            fresh,
            here,
        } => format!(
            "the index is {}: {} vouched for the files, {checked} of them changed since and checked",
            verdict(fresh),
            if here {
                "this process's own watcher (asked in memory)"
            } else {
                "a watcher"
            }
        ),
        FreshCheck::Scanned {
            files,
            watcher,
            fresh,
        } => format!(
            "the index is {}: {files} day files checked one by one ({})",
            verdict(fresh),
            if watcher {
                "the watcher could not say what changed since the index's token"
            } else {
                "no watcher answers for this workspace"
            }
        ),
    }
}

/// Why a key is near the one asked for, for a person or a model.
pub fn nearness(n: Nearness) -> String {
    match n {
        Nearness::SameIgnoringCase => "the same key ignoring case and separators".into(),
        Nearness::Edit(1) => "one character away".into(),
        Nearness::Edit(n) => format!("{n} characters away"),
        Nearness::Meaning(std::cmp::Reverse(m)) => {
            format!("near in meaning, {:.2}", f32::from(m) / 1000.0)
        }
    }
}

/// Why a key looks like the same slot as another, for a person or a model.
pub fn alike(why: &Alike) -> String {
    match why {
        Alike::SameIgnoringCase => "the same key ignoring case and separators".into(),
        Alike::AsciiTwin => "the key mixes scripts or uses full-width letters: this is the \
                             ASCII key it looks like"
            .into(),
        Alike::Words(SameBy::Words) => "the same words".into(),
        Alike::Words(SameBy::ExtraLight(extra)) => {
            format!("the same words but {}", extra.join(" "))
        }
        Alike::Words(SameBy::OnlyLight) => "the same words but light ones".into(),
        Alike::Words(SameBy::LongerName(extra)) => {
            format!("the same attribute of a longer name ({})", extra.join(" "))
        }
        Alike::Words(SameBy::Abbreviated { word, spelled }) => {
            format!("`{word}` is `{}` abbreviated", spelled.join(" "))
        }
        Alike::Words(SameBy::Synonyms(x, y)) => format!("`{x}` and `{y}` are synonyms"),
        Alike::NearWords { mine, theirs, near } => {
            format!("`{mine}` and `{theirs}` are near in meaning ({near:.2})")
        }
        Alike::Qualifier {
            generic,
            specific,
            near,
        } => format!(
            "`{specific}` names what the generic `{generic}` did, and the keys are near in \
             meaning ({near:.2})"
        ),
    }
}

/// A project's setting that takes no effect until approved, and what it says:
/// "scopes.user: leaves out pref:* (your facts would go to the project)".
pub fn ignored(i: &Ignored) -> String {
    let says = match &i.says {
        Says::Value(value) => value.clone(),
        Says::UserKeys(keys) => format!(
            "{} (a project never routes facts into your own workspace)",
            keys.join(", ")
        ),
        Says::LeavesOut { keys, local } => format!(
            "leaves out {} ({} would go to the project)",
            keys.join(", "),
            if *local {
                "this checkout's notes"
            } else {
                "your facts"
            }
        ),
    };
    format!("{}: {says}", i.setting)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(file: &str, recorded: &str) -> Ahead {
        Ahead {
            file: file.into(),
            line: 1,
            recorded: TxTime::parse(recorded).unwrap(),
        }
    }

    #[test]
    fn a_look_alike_says_why_in_the_words_it_always_had() {
        let w = |s: &[&str]| s.iter().map(|w| w.to_string()).collect::<Vec<_>>();
        let cases = [
            (
                Alike::SameIgnoringCase,
                "the same key ignoring case and separators",
            ),
            (
                Alike::AsciiTwin,
                "the key mixes scripts or uses full-width letters: this is the ASCII key it looks like",
            ),
            (Alike::Words(SameBy::Words), "the same words"),
            (
                Alike::Words(SameBy::ExtraLight(w(&["the", "of"]))),
                "the same words but the of",
            ),
            (
                Alike::Words(SameBy::OnlyLight),
                "the same words but light ones",
            ),
            (
                Alike::Words(SameBy::LongerName(w(&["api", "gateway"]))),
                "the same attribute of a longer name (api gateway)",
            ),
            (
                Alike::Words(SameBy::Abbreviated {
                    word: "ci".into(),
                    spelled: w(&["continuous", "integration"]),
                }),
                "`ci` is `continuous integration` abbreviated",
            ),
            (
                Alike::Words(SameBy::Synonyms("owner".into(), "steward".into())),
                "`owner` and `steward` are synonyms",
            ),
            (
                Alike::NearWords {
                    mine: "steward".into(),
                    theirs: "owner".into(),
                    near: 0.704,
                },
                "`steward` and `owner` are near in meaning (0.70)",
            ),
            (
                Alike::Qualifier {
                    generic: "system".into(),
                    specific: "broker".into(),
                    near: 0.815,
                },
                "`broker` names what the generic `system` did, and the keys are near in meaning (0.81)",
            ),
        ];
        for (why, words) in cases {
            assert_eq!(alike(&why), words);
        }
    }

    #[test]
    fn an_ignored_setting_says_what_it_would_change() {
        let keys = vec!["pref:*".to_string(), "me:*".to_string()];
        let said = |setting, says| ignored(&Ignored { setting, says });
        assert_eq!(
            said("max_value_bytes", Says::Value("9000".into())),
            "max_value_bytes: 9000"
        );
        assert_eq!(
            said("scopes.user", Says::UserKeys(keys.clone())),
            "scopes.user: pref:*, me:* (a project never routes facts into your own workspace)"
        );
        assert_eq!(
            said(
                "scopes.user",
                Says::LeavesOut {
                    keys: keys.clone(),
                    local: false
                }
            ),
            "scopes.user: leaves out pref:*, me:* (your facts would go to the project)"
        );
        assert_eq!(
            said("scopes.local", Says::LeavesOut { keys, local: true }),
            "scopes.local: leaves out pref:*, me:* (this checkout's notes would go to the project)"
        );
    }

    #[test]
    fn entries_ahead_are_named_five_at_a_time_with_the_span() {
        let now = TxTime::parse("2026-12-01T10:00:00Z").unwrap();
        let one = ahead_lines(&[at("memory/2026-12-05.md", "2026-12-05T00:00:00Z")], now);
        assert_eq!(
            one,
            [
                "memory/2026-12-05.md:1 was recorded 2026-12-05T00:00:00Z, 3 days 14 hours ahead of this machine's clock (2026-12-01T10:00:00Z)"
            ]
        );
        let many: Vec<Ahead> = (0..7)
            .map(|_| at("memory/2026-12-02.md", "2026-12-02T11:00:07Z"))
            .collect();
        let lines = ahead_lines(&many, now);
        assert_eq!(lines.len(), 6);
        assert!(lines[0].contains(", 1 day 1 hour ahead"), "{}", lines[0]);
        assert_eq!(
            lines[5],
            "2 more entries were recorded ahead of this machine's clock; `mem7 verify` lists them all"
        );
    }
}
