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
}

impl Nearness {
    /// Words for a person or a model.
    pub fn describe(self) -> String {
        match self {
            Nearness::SameIgnoringCase => "the same key ignoring case and separators".into(),
            Nearness::Edit(1) => "one character away".into(),
            Nearness::Edit(n) => format!("{n} characters away"),
        }
    }
}

/// An existing key near another.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NearKey {
    pub key: String,
    pub nearness: Nearness,
}

/// At most this many suggestions.
pub const MAX_NEAR: usize = 5;

/// The key in its comparable form: lowercase, without `_ - . :`.
pub fn normalize(key: &str) -> String {
    key.chars()
        .filter(|c| !matches!(c, '_' | '-' | '.' | ':'))
        .flat_map(char::to_lowercase)
        .collect()
}

/// How many edits make a near key: one for short keys, two from eight characters on,
/// so `host` does not suggest `cost` and `team:lead` suggests `team:leed`.
fn edit_budget(len: usize) -> usize {
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
    fn distance_gives_up_past_the_budget() {
        let c = |s: &str| s.chars().collect::<Vec<_>>();
        assert_eq!(distance(&c("kitten"), &c("sitting"), 3), Some(3));
        assert_eq!(distance(&c("kitten"), &c("sitting"), 2), None);
        assert_eq!(distance(&c(""), &c("ab"), 2), Some(2));
    }
}
