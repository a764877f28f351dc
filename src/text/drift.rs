//! Drifted keys: whether a key new to the workspace names a slot that already exists
//! under another key (`ci:platform` for `ci:provider`, `team:oncall` for
//! `team:on_call_engineer`, `database:primary_host` for `db:primary_host`), judged by
//! the keys' own words, not by their values (a drifted store usually carries a new
//! value: `CircleCI` → `Buildkite`).
//!
//! A key is read as words: split at `:` `.` `/` into segments (the last is the
//! attribute, the others the entity) and each segment at `_ -`, spaces and camelCase;
//! common abbreviations are written out (`db` → `database`, `k8s` → `kubernetes`),
//! plurals made singular. Two keys are then the same slot when, after pairing equal
//! words (the same stem, or one an abbreviation of the other):
//!
//! - nothing is left on either side (separators, case, order, plural, abbreviation);
//! - one side has only light words left (`owner` / `owner_name`, `dashboard_url`);
//! - the longer key's extra words all qualify its entity, not its attribute
//!   (`message_queue:broker` / `queue:broker`);
//! - one word is left on each side and they are synonyms of one group of
//!   [`SYNONYMS`] (`provider` / `vendor` / `platform`), or one is the initials of the
//!   other's words (`os` / `operating_system`).
//!
//! Otherwise, when at most two words are left on each side, none of them a number and
//! no pair of them a known contrast (`primary` / `replica`, `staging` / `production`),
//! the engine asks the model: when one word is left on each side, one of them a generic
//! word a key names its thing by (`GENERIC`: `system`, `platform`, `backend`…) and the
//! other a specific one (`queue:system` / `queue:broker`), whether the whole keys are
//! near in meaning ([`Verdict::AskQualifier`]); else whether the leftover words and the
//! whole keys both are ([`Verdict::AskMeaning`]). Compounds pair with their spaced form
//! (`oncall` / `on_call`), and a key is a candidate for the keys that share a word or a
//! compound with it. Pure string work: the vectors are the engine's.

use rust_stemmers::{Algorithm, Stemmer};

mod lists;
use lists::{ABBREVIATIONS, NOT_PLURAL};

/// A key read as words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyWords {
    /// The canonical words of each segment, the attribute last.
    segments: Vec<Vec<String>>,
}

/// Groups of words that name the same attribute in keys (a thesaurus of the words
/// keys are made of: roles, places, kinds of thing). Any two words of one group are
/// synonyms.
pub const SYNONYMS: &[&[&str]] = &[
    &[
        "provider", "vendor", "platform", "service", "supplier", "tool", "solution", "system",
    ],
    &[
        "owner",
        "lead",
        "manager",
        "maintainer",
        "head",
        "steward",
        "captain",
        "dri",
        "contact",
    ],
    &["host", "server", "hostname", "machine", "box", "instance"],
    &["url", "endpoint", "link", "href", "address"],
    &["store", "backend", "storage", "engine", "datastore"],
    &[
        "library",
        "sdk",
        "package",
        "framework",
        "module",
        "client",
        "dependency",
    ],
    &[
        "schedule",
        "cadence",
        "frequency",
        "interval",
        "period",
        "rhythm",
        "rate",
    ],
    &["destination", "target", "sink"],
    &["origin", "source"],
    &["renderer", "generator", "builder", "converter"],
    &["registry", "index", "repository", "feed", "mirror"],
    &["company", "employer", "organization", "workplace", "firm"],
    &[
        "handle", "username", "login", "nickname", "account", "alias",
    ],
    &["format", "style", "convention", "layout"],
    &["active", "current", "present", "live", "ongoing"],
    &["count", "number", "total", "amount", "quantity", "size"],
    &["timeout", "deadline", "limit"],
    &["dashboard", "board", "panel", "console"],
    &["location", "place", "site"],
    &["ssl", "tls"],
    &["certificate", "tls"],
    &["gateway", "router", "proxy"],
    &["user", "developer", "me", "my", "personal", "self"],
    &["resolver", "server", "nameserver"],
    &["broker", "queue", "bus"],
    &["channel", "room"],
    &["key", "identifier", "id"],
];

/// Words that add nothing to what a key names (`owner` and `owner_name` are one slot;
/// `refund_window` and `refund_window_days` too): names, units, kinds, and the words
/// people put before what they mean (`preferred_editor`).
const LIGHT: &[&str] = &[
    "actual",
    "app",
    "application",
    "base",
    "company",
    "current",
    "day",
    "default",
    "detail",
    "endpoint",
    "engineer",
    "favorite",
    "favourite",
    "full",
    "gb",
    "hour",
    "id",
    "info",
    "kb",
    "kind",
    "link",
    "main",
    "mb",
    "millisecond",
    "minute",
    "mode",
    "name",
    "official",
    "option",
    "preferred",
    "primary",
    "program",
    "rotation",
    "second",
    "service",
    "setting",
    "software",
    "style",
    "tb",
    "tech",
    "tool",
    "type",
    "url",
    "value",
];

/// Generic words a key names the thing it is about by (`queue:system`, `search:engine`):
/// the words of the [`SYNONYMS`] groups of providers and of stores, and a few more. A
/// key that swaps one for a specific word (`queue:broker`) may name the same slot.
const GENERIC: &[&str] = &[
    "provider",
    "vendor",
    "platform",
    "service",
    "supplier",
    "tool",
    "tooling",
    "solution",
    "system",
    "store",
    "backend",
    "storage",
    "engine",
    "datastore",
    "software",
    "stack",
    "technology",
    "product",
];

/// Words of one group name different things of one kind: a key that differs from
/// another only by them is another slot (`db:replica_host` beside `db:primary_host`).
const CONTRASTS: &[&[&str]] = &[
    &[
        "primary",
        "secondary",
        "replica",
        "standby",
        "backup",
        "read",
        "write",
    ],
    &[
        "production",
        "staging",
        "development",
        "test",
        "qa",
        "sandbox",
        "local",
        "preview",
    ],
    &["minimum", "maximum"],
    &[
        "previous", "current", "next", "latest", "last", "first", "old", "new", "prior",
    ],
    &["input", "output"],
    &["internal", "external", "public", "private"],
    &["frontend", "backend"],
    &["client", "server"],
    &["train", "test", "eval", "validation"],
    &["inbound", "outbound"],
    &["upload", "download"],
    &["start", "end", "stop"],
];

/// Why two keys name the same slot by their words alone, as data (the front ends word
/// it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SameBy {
    /// The same words.
    Words,
    /// The same words, one key with these light words more.
    ExtraLight(Vec<String>),
    /// The same words but light ones on both sides.
    OnlyLight,
    /// The same attribute of a longer name, which has these words more.
    LongerName(Vec<String>),
    /// `word` is `spelled` abbreviated.
    Abbreviated { word: String, spelled: Vec<String> },
    /// The two words are synonyms.
    Synonyms(String, String),
}

/// How two keys compare.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The same slot, and why.
    Same(SameBy),
    /// Maybe the same slot: the model decides whether `mine` and `theirs` (the words
    /// left after pairing) mean the same.
    AskMeaning { mine: String, theirs: String },
    /// Maybe the same slot: one key names its thing by a generic word (`queue:system`),
    /// the other by a specific one (`queue:broker`); the words never mean the same, so
    /// the model decides whether the two whole keys do.
    AskQualifier { generic: String, specific: String },
    /// Different slots.
    Different,
}

impl KeyWords {
    /// Reads `key` as words.
    pub fn of(key: &str) -> KeyWords {
        let segments = key
            .split([':', '.', '/'])
            .filter(|s| !s.is_empty())
            .map(|s| split_words(s).into_iter().map(|w| canonical(&w)).collect())
            .filter(|ws: &Vec<String>| !ws.is_empty())
            .collect();
        KeyWords { segments }
    }

    /// All words, in order.
    pub fn words(&self) -> Vec<&str> {
        self.segments.iter().flatten().map(String::as_str).collect()
    }

    /// The key as a phrase (its words, spaced): the text of the key's own vector.
    pub fn phrase(&self) -> String {
        self.words().join(" ")
    }

    /// The stems the key is found under by [`judge`]'s candidates: every word's stem,
    /// and the stem of every two adjacent words of a segment joined, so that `oncall`
    /// and `on_call_rotation` are candidates for each other.
    pub fn stems(&self) -> Vec<String> {
        let stemmer = Stemmer::create(Algorithm::English);
        let joined = self
            .segments
            .iter()
            .flat_map(|s| s.windows(2).map(|p| format!("{}{}", p[0], p[1])));
        let mut out: Vec<String> = self
            .words()
            .into_iter()
            .map(str::to_string)
            .chain(joined)
            .map(|w| stemmer.stem(&w).into_owned())
            .collect();
        out.sort();
        out.dedup();
        out
    }

    fn attribute(&self) -> &[String] {
        self.segments.last().map_or(&[], Vec::as_slice)
    }
}

/// Words, owned.
fn owned(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| w.to_string()).collect()
}

/// Splits a segment at `_ -`, spaces and lower-to-upper camelCase steps, lower-cased.
fn split_words(segment: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut prev_lower = false;
    for c in segment.chars() {
        if matches!(c, '_' | '-' | ' ') {
            if !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower && !word.is_empty() {
            words.push(std::mem::take(&mut word));
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        word.extend(c.to_lowercase());
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

/// The word written out (abbreviations) and made singular.
fn canonical(word: &str) -> String {
    match ABBREVIATIONS.iter().find(|(short, _)| *short == word) {
        Some((_, long)) => long.to_string(),
        None => singular(word),
    }
}

fn singular(w: &str) -> String {
    if NOT_PLURAL.contains(&w) {
        return w.to_string();
    }
    if w.len() > 4 && w.ends_with("ies") {
        return format!("{}y", &w[..w.len() - 3]);
    }
    if w.len() > 3 && w.ends_with('s') && !w.ends_with("ss") && !w.ends_with("us") {
        return w[..w.len() - 1].to_string();
    }
    w.to_string()
}

/// Whether `short` abbreviates `long`: the same first letter and its letters in order
/// in `long` (`mgmt`, `repo`), or a numeronym (`k8s`: k, eight letters, s).
fn abbreviates(short: &str, long: &str) -> bool {
    // Most pairs a store compares differ at once, in their first letter or their length
    // (a byte count at least the letter count): those are answered without reading them
    // letter by letter (the comparison was a fifth of a new key's store at 100k facts).
    if short.len() < 2 || short.chars().next() != long.chars().next() {
        return false;
    }
    if short.is_ascii() && long.is_ascii() && short.len() >= long.len() {
        return false;
    }
    let (s, l): (Vec<char>, Vec<char>) = (short.chars().collect(), long.chars().collect());
    if s.len() < 2 || s.len() >= l.len() || s[0] != l[0] {
        return false;
    }
    if s.len() >= 3
        && s[1..s.len() - 1].iter().all(char::is_ascii_digit)
        && let Ok(n) = s[1..s.len() - 1]
            .iter()
            .collect::<String>()
            .parse::<usize>()
    {
        return l.len() == n + 2 && l.last() == s.last();
    }
    if s.iter().chain(&l).any(char::is_ascii_digit) {
        return false;
    }
    let mut rest = l.iter();
    s.iter().all(|c| rest.any(|x| x == c))
}

fn same_word(a: &str, b: &str) -> bool {
    a == b || abbreviates(a, b) || abbreviates(b, a) || stem(a) == stem(b)
}

/// The English stem of `word`, remembered per thread: a store compares a new key's
/// words with those of up to thousands of keys, which share most of their words (the
/// `user` of every `user:*` key), and a stem is a pure function of its word.
fn stem(word: &str) -> std::rc::Rc<str> {
    use std::cell::RefCell;
    use std::collections::HashMap;
    use std::rc::Rc;
    thread_local! {
        static STEMS: RefCell<(Stemmer, HashMap<String, Rc<str>>)> =
            RefCell::new((Stemmer::create(Algorithm::English), HashMap::new()));
    }
    STEMS.with(|memo| {
        let mut memo = memo.borrow_mut();
        if let Some(s) = memo.1.get(word) {
            return s.clone();
        }
        let (stemmer, seen) = &mut *memo;
        let s: Rc<str> = stemmer.stem(word).into();
        // Bounded: a long-lived server sees every key's words.
        if seen.len() >= 65_536 {
            seen.clear();
        }
        seen.insert(word.to_string(), s.clone());
        s
    })
}

/// For each word of a [`SYNONYMS`] group and for each such word's stem, the groups it
/// is in: built once per process (a store may compare a new key with thousands).
fn synonym_groups() -> &'static SynonymGroups {
    static GROUPS: std::sync::OnceLock<SynonymGroups> = std::sync::OnceLock::new();
    GROUPS.get_or_init(|| {
        let stemmer = Stemmer::create(Algorithm::English);
        let mut by = SynonymGroups::default();
        for (g, group) in SYNONYMS.iter().enumerate() {
            for w in group.iter() {
                by.word.entry(w).or_default().push(g);
                by.stem
                    .entry(stemmer.stem(w).into_owned())
                    .or_default()
                    .push(g);
            }
        }
        by
    })
}

#[derive(Default)]
struct SynonymGroups {
    word: std::collections::HashMap<&'static str, Vec<usize>>,
    stem: std::collections::HashMap<String, Vec<usize>>,
}

/// Whether one group of [`SYNONYMS`] holds both words: each as it is, or by its stem.
fn synonyms(a: &str, b: &str) -> bool {
    let by = synonym_groups();
    let groups = |w: &str| -> Vec<usize> {
        let mut g: Vec<usize> = by.word.get(w).into_iter().flatten().copied().collect();
        g.extend(by.stem.get(&*stem(w)).into_iter().flatten().copied());
        g
    };
    let of_a = groups(a);
    !of_a.is_empty() && groups(b).iter().any(|g| of_a.contains(g))
}

fn contrast(a: &str, b: &str) -> bool {
    a != b
        && CONTRASTS
            .iter()
            .any(|group| group.contains(&a) && group.contains(&b))
}

/// `words` with adjacent pairs joined where the joined word is one of `other`'s
/// (`on call` against `oncall`).
fn joined<'a>(words: &[&'a str], other: &[&str]) -> Vec<std::borrow::Cow<'a, str>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < words.len() {
        if i + 1 < words.len() {
            let both = format!("{}{}", words[i], words[i + 1]);
            if other.contains(&both.as_str()) {
                out.push(std::borrow::Cow::Owned(both));
                i += 2;
                continue;
            }
        }
        out.push(std::borrow::Cow::Borrowed(words[i]));
        i += 1;
    }
    out
}

/// Whether one of `a`'s words is the initials of consecutive words of `b`
/// (`os` / `operating system`); returns that word and those words.
fn initials<'a>(a: &[&'a str], b: &[&'a str]) -> Option<(&'a str, Vec<&'a str>)> {
    for &x in a {
        for i in 0..b.len() {
            for j in i + 2..=b.len() {
                let letters: String = b[i..j].iter().filter_map(|w| w.chars().next()).collect();
                if letters == x {
                    return Some((x, b[i..j].to_vec()));
                }
            }
        }
    }
    None
}

/// How `new` compares with `old` (see the module's rules).
pub fn judge(new: &KeyWords, old: &KeyWords) -> Verdict {
    let (a, b) = (new.words(), old.words());
    if a.is_empty() || b.is_empty() {
        return Verdict::Different;
    }
    let a_joined = joined(&a, &b);
    let b_joined = joined(&b, &a);
    let mut left_a: Vec<&str> = a_joined.iter().map(|w| w.as_ref()).collect();
    let mut left_b: Vec<&str> = b_joined.iter().map(|w| w.as_ref()).collect();
    let total_a = left_a.len();
    left_a.retain(|x| match left_b.iter().position(|y| same_word(x, y)) {
        Some(i) => {
            left_b.remove(i);
            false
        }
        None => true,
    });
    let shared = total_a - left_a.len();
    if left_a.is_empty() && left_b.is_empty() {
        return Verdict::Same(SameBy::Words);
    }
    if shared == 0 {
        return Verdict::Different;
    }
    let light = |w: &&str| LIGHT.contains(w);
    if left_a.is_empty() || left_b.is_empty() {
        let (extra, longer) = if left_a.is_empty() {
            (&left_b, old)
        } else {
            (&left_a, new)
        };
        if extra.iter().all(light) {
            return Verdict::Same(SameBy::ExtraLight(owned(extra)));
        }
        // The longer key qualifies its entity only: its attribute is the other's.
        let shorter = if left_a.is_empty() { new } else { old };
        if longer.segments.len() > 1
            && !extra
                .iter()
                .any(|w| longer.attribute().iter().any(|x| x == w))
            && longer.attribute() == shorter.attribute()
        {
            return Verdict::Same(SameBy::LongerName(owned(extra)));
        }
        return Verdict::Different;
    }
    if let Some((word, spelled)) = initials(&left_a, &left_b).or_else(|| initials(&left_b, &left_a))
    {
        let rest = |side: &[&str]| side.iter().all(|w| *w == word || spelled.contains(w));
        if rest(&left_a) && rest(&left_b) {
            return Verdict::Same(SameBy::Abbreviated {
                word: word.to_string(),
                spelled: owned(&spelled),
            });
        }
    }
    if let ([x], [y]) = (left_a.as_slice(), left_b.as_slice())
        && synonyms(x, y)
    {
        return Verdict::Same(SameBy::Synonyms(x.to_string(), y.to_string()));
    }
    let heavy_a: Vec<&str> = left_a.iter().copied().filter(|w| !light(w)).collect();
    let heavy_b: Vec<&str> = left_b.iter().copied().filter(|w| !light(w)).collect();
    if let ([x], [y]) = (heavy_a.as_slice(), heavy_b.as_slice())
        && synonyms(x, y)
    {
        return Verdict::Same(SameBy::Synonyms(x.to_string(), y.to_string()));
    }
    if heavy_a.is_empty() && heavy_b.is_empty() {
        return Verdict::Same(SameBy::OnlyLight);
    }
    if left_a.len() > 2 || left_b.len() > 2 {
        return Verdict::Different;
    }
    let numbered = |w: &&str| w.chars().any(|c| c.is_ascii_digit());
    if left_a.iter().chain(&left_b).any(numbered)
        || left_a.iter().any(|x| left_b.iter().any(|y| contrast(x, y)))
    {
        return Verdict::Different;
    }
    // One word each: a generic one swapped for a specific one (`system` / `broker`).
    if let ([x], [y]) = (left_a.as_slice(), left_b.as_slice()) {
        let generic = |w: &str| GENERIC.contains(&w);
        let specific = |w: &str| !generic(w) && !LIGHT.contains(&w);
        if generic(x) && specific(y) || generic(y) && specific(x) {
            let (g, s) = if generic(x) { (x, y) } else { (y, x) };
            return Verdict::AskQualifier {
                generic: g.to_string(),
                specific: s.to_string(),
            };
        }
    }
    Verdict::AskMeaning {
        mine: left_a.join(" "),
        theirs: left_b.join(" "),
    }
}

#[cfg(test)]
mod tests;
