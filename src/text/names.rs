//! Keys that look alike: what a miss suggests and what a new key is warned about, so
//! that agents do not scatter one fact over several slots (`team:CDN` and `team:cdn`,
//! `ci_provider` and `ci-provider`). Pure string work; meaning-based nearness is the
//! engine's (it needs vectors).

/// Why an existing key is near the one asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Nearness {
    /// The same key ignoring case and the separators `_ - . :`.
    SameIgnoringCase,
    /// A small edit away (this many characters inserted, removed or changed, ignoring
    /// case).
    Edit(usize),
    /// Its current value is near in meaning (cosine similarity in thousandths, so that
    /// the order is total: nearer first).
    Meaning(std::cmp::Reverse<u16>),
}

/// An existing key near another.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NearKey {
    pub key: String,
    pub nearness: Nearness,
}

impl Nearness {
    /// Nearness in meaning at cosine similarity `s`.
    pub fn meaning(s: f32) -> Nearness {
        Nearness::Meaning(std::cmp::Reverse(
            (s.clamp(0.0, 1.0) * 1000.0).round() as u16
        ))
    }
}

/// Adds `more` to `near`, keeping the first reason given for a key, nearest first, at
/// most [`MAX_NEAR`].
pub fn merge(near: &mut Vec<NearKey>, more: impl IntoIterator<Item = NearKey>) {
    for n in more {
        if !near.iter().any(|k| k.key == n.key) {
            near.push(n);
        }
    }
    near.sort_by(|a, b| (a.nearness, &a.key).cmp(&(b.nearness, &b.key)));
    near.truncate(MAX_NEAR);
}

/// At most this many suggestions.
pub const MAX_NEAR: usize = 5;

/// The key in its comparable form: lowercase, without `_ - . :`, with full-width forms
/// and letters of other scripts that look like Latin ones read as their ASCII twins.
pub fn normalize(key: &str) -> String {
    key.chars()
        .map(|c| ascii_twin(c).unwrap_or(c))
        .filter(|c| !matches!(c, '_' | '-' | '.' | ':'))
        .flat_map(char::to_lowercase)
        .collect()
}

/// The ASCII character `c` is drawn like, for full-width forms and the Cyrillic and
/// Greek letters that look Latin (a mixed-script key is the usual disguise of a
/// look-alike: `kеy` with a Cyrillic `е`).
pub fn ascii_twin(c: char) -> Option<char> {
    if ('\u{FF01}'..='\u{FF5E}').contains(&c) {
        return char::from_u32(c as u32 - 0xFEE0);
    }
    let twin = match c {
        'а' => 'a',
        'е' => 'e',
        'о' => 'o',
        'р' => 'p',
        'с' => 'c',
        'у' => 'y',
        'х' => 'x',
        'і' => 'i',
        'ј' => 'j',
        'ѕ' => 's',
        'ԁ' => 'd',
        'һ' => 'h',
        'ԛ' => 'q',
        'ԝ' => 'w',
        'ӏ' => 'l',
        'А' => 'A',
        'В' => 'B',
        'Е' => 'E',
        'К' => 'K',
        'М' => 'M',
        'Н' => 'H',
        'О' => 'O',
        'Р' => 'P',
        'С' => 'C',
        'Т' => 'T',
        'Х' => 'X',
        'І' => 'I',
        'Ј' => 'J',
        'Ѕ' => 'S',
        'ο' => 'o',
        'ν' => 'v',
        'ι' => 'i',
        'κ' => 'k',
        'ρ' => 'p',
        'υ' => 'u',
        'χ' => 'x',
        'Α' => 'A',
        'Β' => 'B',
        'Ε' => 'E',
        'Ζ' => 'Z',
        'Η' => 'H',
        'Ι' => 'I',
        'Κ' => 'K',
        'Μ' => 'M',
        'Ν' => 'N',
        'Ο' => 'O',
        'Ρ' => 'P',
        'Τ' => 'T',
        'Υ' => 'Y',
        'Χ' => 'X',
        _ => return None,
    };
    Some(twin)
}

/// The ASCII key `key` passes for, when it mixes Latin letters with look-alikes of
/// another script, or uses full-width forms: `kеy` (Cyrillic `е`) → `key`. `None` for
/// a plain key, and for a key written wholly in another script (a Russian word is not
/// a disguise).
pub fn ascii_look_alike(key: &str) -> Option<String> {
    let full_width = key.chars().any(|c| ('\u{FF01}'..='\u{FF5E}').contains(&c));
    let latin = key.chars().any(|c| c.is_ascii_alphabetic());
    let twins = key
        .chars()
        .any(|c| !('\u{FF01}'..='\u{FF5E}').contains(&c) && ascii_twin(c).is_some());
    if !(full_width || (latin && twins)) {
        return None;
    }
    Some(key.chars().map(|c| ascii_twin(c).unwrap_or(c)).collect())
}

/// How many edits make a near key: one for short keys, two from eight characters on,
/// so `host` does not suggest `cost` and `team:lead` suggests `team:leed`.
pub(crate) fn edit_budget(len: usize) -> usize {
    if len < 8 { 1 } else { 2 }
}

/// Levenshtein distance over characters, giving up (None) past `max`.
fn distance(a: &[char], b: &[char], max: usize) -> Option<usize> {
    if a.len().abs_diff(b.len()) > max {
        return None;
    }
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut row = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        row[0] = i + 1;
        let mut best = row[0];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != cb);
            row[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(row[j] + 1);
            best = best.min(row[j + 1]);
        }
        if best > max {
            return None;
        }
        std::mem::swap(&mut prev, &mut row);
    }
    Some(prev[b.len()]).filter(|&d| d <= max)
}

/// The existing keys near `wanted` (never `wanted` itself): the same ignoring case and
/// separators first, then those a small edit away, nearest first, at most [`MAX_NEAR`].
pub fn near_keys<'a>(wanted: &str, existing: impl IntoIterator<Item = &'a str>) -> Vec<NearKey> {
    let norm = normalize(wanted);
    let lower: Vec<char> = wanted.to_lowercase().chars().collect();
    let budget = edit_budget(lower.len());
    let mut out: Vec<NearKey> = existing
        .into_iter()
        .filter(|k| *k != wanted)
        .filter_map(|k| {
            let nearness = if normalize(k) == norm {
                Nearness::SameIgnoringCase
            } else {
                let other: Vec<char> = k.to_lowercase().chars().collect();
                Nearness::Edit(distance(&lower, &other, budget)?)
            };
            Some(NearKey {
                key: k.to_string(),
                nearness,
            })
        })
        .collect();
    out.sort_by(|a, b| (a.nearness, &a.key).cmp(&(b.nearness, &b.key)));
    out.truncate(MAX_NEAR);
    out
}

/// The strings of a sorted set within `max` edits (Levenshtein, over characters) of
/// `wanted`, found without reading the whole set: `seek(from, inclusive)` gives the
/// first string of the set at or after `from` (after it, when not `inclusive`), and
/// the walk skips every string whose prefix is already more than `max` edits from
/// every prefix of `wanted` (a bounded Levenshtein automaton run over a sorted index).
/// `Ok(None)` when that took more than `seeks` seeks: the set is too dense around
/// `wanted` for the walk to beat reading it whole.
pub fn within_edits<E>(
    wanted: &[char],
    max: usize,
    seeks: usize,
    mut seek: impl FnMut(&str, bool) -> Result<Option<String>, E>,
) -> Result<Option<Vec<String>>, E> {
    let n = wanted.len();
    let mut found = Vec::new();
    let (mut from, mut inclusive) = (String::new(), true);
    for _ in 0..seeks {
        let Some(candidate) = seek(&from, inclusive)? else {
            return Ok(Some(found));
        };
        let chars: Vec<char> = candidate.chars().collect();
        // The edit distances of `wanted`'s prefixes to the candidate's prefix so far.
        let mut row: Vec<usize> = (0..=n).collect();
        let mut next = vec![0; n + 1];
        let mut dead = None;
        for (i, &c) in chars.iter().enumerate() {
            next[0] = i + 1;
            for j in 1..=n {
                let change = row[j - 1] + usize::from(wanted[j - 1] != c);
                next[j] = change.min(row[j] + 1).min(next[j - 1] + 1);
            }
            std::mem::swap(&mut row, &mut next);
            if row.iter().min().is_some_and(|&m| m > max) {
                dead = Some(i);
                break;
            }
        }
        match dead {
            // Nothing that starts like this can come within `max`: past all of it.
            Some(i) => match past_prefix(&chars[..=i]) {
                Some(after) => (from, inclusive) = (after, true),
                None => return Ok(Some(found)),
            },
            None => {
                if row[n] <= max {
                    found.push(candidate.clone());
                }
                (from, inclusive) = (candidate, false);
            }
        }
    }
    Ok(None)
}

/// The first string after every string that starts with `prefix` (in code point
/// order, which is UTF-8's byte order and so SQLite's): its last character stepped
/// on, `None` when there is none after it.
fn past_prefix(prefix: &[char]) -> Option<String> {
    let mut p = prefix.to_vec();
    while let Some(last) = p.pop() {
        let stepped = match last {
            '\u{D7FF}' => Some('\u{E000}'),
            c => char::from_u32(c as u32 + 1),
        };
        if let Some(c) = stepped {
            p.push(c);
            return Some(p.into_iter().collect());
        }
    }
    None
}

/// The existing keys that are `wanted` ignoring case and separators: what a store of a
/// new key warns about (an edit away is too loose there: `host1` beside `host2` is
/// usually meant).
pub fn same_slot<'a>(wanted: &str, existing: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let norm = normalize(wanted);
    let mut out: Vec<String> = existing
        .into_iter()
        .filter(|k| *k != wanted && normalize(k) == norm)
        .map(str::to_string)
        .collect();
    out.sort();
    out.truncate(MAX_NEAR);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mixed_scripts_and_full_width_forms_name_their_ascii_twin() {
        assert_eq!(ascii_look_alike("k\u{435}y").as_deref(), Some("key"));
        assert_eq!(
            ascii_look_alike("\u{FF45}vent7:host").as_deref(),
            Some("event7:host")
        );
        assert_eq!(ascii_look_alike("event7:host"), None);
        assert_eq!(
            ascii_look_alike("хост"),
            None,
            "a Russian word is no disguise"
        );
        assert_eq!(ascii_look_alike("café:menu"), None);
        assert_eq!(
            normalize("P\u{430}yments:Owner"),
            normalize("payments_owner")
        );
    }

    #[test]
    fn case_separators_and_small_edits() {
        let keys = [
            "team:CDN",
            "team:ci_provider",
            "team:lead",
            "team:oncall",
            "host",
            "cost",
        ];
        let near = |k: &str| -> Vec<(String, Nearness)> {
            near_keys(k, keys)
                .into_iter()
                .map(|n| (n.key, n.nearness))
                .collect()
        };
        assert_eq!(
            near("team:cdn"),
            [("team:CDN".to_string(), Nearness::SameIgnoringCase)]
        );
        assert_eq!(
            near("team-ci-provider"),
            [("team:ci_provider".to_string(), Nearness::SameIgnoringCase)]
        );
        assert_eq!(
            near("team:leed"),
            [("team:lead".to_string(), Nearness::Edit(1))]
        );
        assert_eq!(
            near("team:on-cal"),
            [("team:oncall".to_string(), Nearness::Edit(2))]
        );
        // Short keys allow one edit: `host` and `cost` are near, `hoast` too.
        assert_eq!(near("hoast"), [("host".to_string(), Nearness::Edit(1))]);
        assert!(near("unrelated:thing").is_empty());
        assert!(near("host").iter().all(|(k, _)| k != "host"));
    }

    #[test]
    fn same_slot_is_only_case_and_separators() {
        let keys = ["team:CDN", "host1"];
        assert_eq!(same_slot("team.cdn", keys), ["team:CDN"]);
        assert!(same_slot("host2", keys).is_empty());
        assert!(same_slot("team:CDN", keys).is_empty());
    }

    #[test]
    fn the_walk_finds_what_the_distance_finds() {
        let mut set: Vec<String> = [
            "",
            "a",
            "ab",
            "abc",
            "abd",
            "abcdefgh",
            "abcdefgx",
            "abxdefgh",
            "bcdefgh",
            "host",
            "hoast",
            "cost",
            "h",
            "zz",
            "zzz",
            "é",
            "éa",
            "\u{D7FF}",
            "\u{E000}",
            "projectfact12",
            "projectfact13",
            "project5fact12",
            "projectfact1",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        set.sort();
        let mut seeks = 0;
        let mut seek = |from: &str, inclusive: bool| -> Result<Option<String>, ()> {
            seeks += 1;
            Ok(set
                .iter()
                .find(|s| {
                    if inclusive {
                        s.as_str() >= from
                    } else {
                        s.as_str() > from
                    }
                })
                .cloned())
        };
        for wanted in [
            "",
            "a",
            "abcdefgh",
            "host",
            "hst",
            "projectfact12",
            "é",
            "zzzz",
            "\u{D7FF}",
        ] {
            let w: Vec<char> = wanted.chars().collect();
            for max in 0..=2 {
                let walked = within_edits(&w, max, 10_000, &mut seek).unwrap().unwrap();
                let scanned: Vec<String> = set
                    .iter()
                    .filter(|s| {
                        let c: Vec<char> = s.chars().collect();
                        distance(&w, &c, max).is_some()
                    })
                    .cloned()
                    .collect();
                assert_eq!(walked, scanned, "{wanted:?} within {max}");
            }
        }
        // Too many seeks: the caller reads the set whole instead.
        let w: Vec<char> = "abc".chars().collect();
        assert_eq!(within_edits(&w, 2, 2, &mut seek).unwrap(), None);
        assert!(seeks > 2);
    }

    #[test]
    fn distance_gives_up_past_the_budget() {
        let c = |s: &str| s.chars().collect::<Vec<_>>();
        assert_eq!(distance(&c("kitten"), &c("sitting"), 3), Some(3));
        assert_eq!(distance(&c("kitten"), &c("sitting"), 2), None);
        assert_eq!(distance(&c(""), &c("ab"), 2), Some(2));
    }
}
