//! Recognises text that looks like a credential, so it is refused before it reaches a
//! file that may be pushed to git (docs/integrity.md). This is the one detector: every byte
//! bound for a memory file (keys, values, tags, agents, import ops, notes, hand edits
//! before sync) passes through [`find`].
//!
//! The text is looked at in up to three views, each scanned by the same rules:
//!
//! 1. as written;
//! 2. with invisible format characters removed (zero-width spaces and joiners, word
//!    joiner, BOM, soft hyphen, bidi controls, variation selectors) and look-alike forms
//!    folded to ASCII (full-width letters, Unicode tag characters), so a token with a
//!    U+200B inside is still a token;
//! 3. with line breaks joined (a break and the indentation or `> ` quote around it are
//!    removed, also a `\`-continuation and a literal `\n` escape), so a PEM header or a
//!    token wrapped across lines is still found.
//!
//! Long base64 runs (20 characters or more, standard or URL-safe alphabet, mixing upper
//! and lower case) are decoded and their printable parts scanned again, twice deep at
//! most, so base64 of a token, of a PEM block or of a credentials file is refused too.
//! A run holding `+ / - _` is also decoded at the three other alignments, in case it
//! glued onto a path (`secrets/Z2hw…`).
//!
//! The rules come in four kinds:
//!
//! - **gitleaks' maintained rule set** (`gitleaks.rs`): the field's catalogue of a few
//!   hundred provider formats, vendored as data (`gitleaks.json`, converted from gitleaks'
//!   `config/gitleaks.toml` by `scripts/vendor-gitleaks`; version, commit, checksum and
//!   MIT licence in `gitleaks-NOTICE.md`). They run as gitleaks runs them: keywords as
//!   the prefilter, the secret group's entropy, the allowlists and stop words. A few are
//!   left out or narrowed, each with its reason (`LEFT_OUT`, `NARROWED`), among them
//!   `generic-api-key`, which mem7's assignment rule replaces.
//! - **prefixed and structured tokens** (`RULES`): a known prefix or shape of one
//!   vendor's credential (`ghp_…`, `AKIA…`, `sk_live_…`, JWTs, Slack and Discord
//!   webhooks, PEM private-key headers, URLs with a password, `Authorization:` headers
//!   of any scheme, the password flags of common CLIs, Oracle `user/password@db`),
//!   starting at a word boundary. They are specific, so prose *about* keys passes.
//! - **assignments** (`find_assignment`; in `forms.rs`, `find_xml_element` and
//!   `find_pgpass`): `name = value`, `name: value`, `"name": "value"` (also escaped
//!   inside a JSON string), `--name=value`, `<password>value</password>`,
//!   `<add key="ApiKey" value="…"/>`, where the name says password, secret, token, API
//!   key, private key, client secret… and the value looks like a secret rather than a
//!   reference to one (`${VAR}`, `<redacted>`, `OPENAI_API_KEY`, `see the vault`); and
//!   `.pgpass` lines.
//! - **decoded base64**, as above.
//!
//! Deliberately *not* refused: publishable keys meant for browsers (Stripe `pk_live_…`,
//! Mapbox `pk.…`), public keys and certificates, password hashes, ids that are not
//! secrets (Twilio `AC…` account SIDs, Stripe object ids, OAuth client ids), and
//! random-looking values under names that do not say secret (hashes, UUIDs, commit ids).
//! The measured figures are in `docs/integrity.md`; the catalogues are
//! `tests/fixtures/secrets/`.
//!
//! Every regular expression is compiled once (`OnceLock`), and only when the text holds
//! one of the rule's literal anchors (gitleaks' keywords, found in one Aho–Corasick pass),
//! so a short ordinary value compiles almost nothing. Once warm, a 100-byte fact costs
//! about 2 µs and a 4 KB text about 0.2 ms (`tests::find_speed`).
//! Every scan is linear in the text: the views are copies made in one pass, the
//! assignment scan looks a bounded distance around each `=` and `:`, and base64 decoding
//! is bounded by the length of the runs.

use std::sync::{LazyLock, OnceLock};

use regex::Regex;

mod assign;
mod base64;
mod forms;
mod gitleaks;
mod rules;
#[cfg(test)]
mod tests;
mod view;

use assign::*;
use base64::*;
use forms::*;
use gitleaks::find_gitleaks;
use rules::*;
use view::*;

/// What was found, for the error message. Never includes the secret itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// A short name of the pattern, e.g. "GitHub token (ghp_…)".
    pub kind: &'static str,
    /// Byte offset in the text where the credential (or the run or name that carries
    /// it) starts; always a character boundary. For a credential found only after
    /// normalising or decoding, this is the best matching place in the original text.
    pub offset: usize,
}

/// Finds the first credential-looking part of `text`, if any.
pub fn find(text: &str) -> Option<Finding> {
    scan(text, 0).map(|(kind, offset)| Finding {
        kind,
        offset: char_floor(text, offset),
    })
}

/// How many times base64 is decoded inside base64 at most.
const MAX_DEPTH: u8 = 2;

/// Base64 runs shorter than this are not decoded (a 12-byte token encodes to 16).
const MIN_BASE64_RUN: usize = 20;

/// Scans `text` in each of its views; the offset is in `text`.
fn scan(text: &str, depth: u8) -> Option<(&'static str, usize)> {
    if let Some(found) = scan_view(text, Pass::Full, depth) {
        return Some(found);
    }
    if !text.is_ascii()
        && let Some(view) = View::new(text, false)
        && let Some((kind, at)) = scan_view(&view.text, Pass::Full, depth)
    {
        return Some((kind, view.to_original(at)));
    }
    if has_line_break(text)
        && let Some(view) = View::new(text, true)
        && let Some((kind, at)) = scan_view(&view.text, Pass::Joined, depth)
    {
        return Some((kind, view.to_original(at)));
    }
    None
}

/// Which rules a view gets: a joined view only gets the rules for tokens and blocks,
/// since joining lines makes up `name=value` pairs that were never written.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Pass {
    Full,
    Joined,
}

/// Runs every rule over one view and returns the earliest finding.
fn scan_view(text: &str, pass: Pass, depth: u8) -> Option<(&'static str, usize)> {
    let mut best: Option<(&'static str, usize)> = None;
    let mut keep = |found: (&'static str, usize)| {
        if best.is_none_or(|(_, at)| found.1 < at) {
            best = Some(found);
        }
    };
    let anchored = anchored_rules(text);
    for ((rule, re), anchored) in RULES.iter().zip(COMPILED.iter()).zip(anchored) {
        if !anchored || (pass == Pass::Joined && !rule.joined) {
            continue;
        }
        let re = re.get_or_init(|| compile(rule));
        if let Some(at) = first_match(rule, re, text) {
            keep((rule.kind, at));
        }
    }
    if let Some(found) = find_gitleaks(text, pass) {
        keep(found);
    }
    if pass == Pass::Full
        && let Some(at) = find_assignment(text)
    {
        keep(("credential assignment (name=value)", at));
    }
    if pass == Pass::Full
        && let Some(at) = find_pgpass(text)
    {
        keep((
            "password in a .pgpass line (host:port:db:user:password)",
            at,
        ));
    }
    if pass == Pass::Full
        && let Some(at) = find_xml_element(text)
    {
        keep(("credential in an XML element (<password>…</password>)", at));
    }
    if depth < MAX_DEPTH
        && let Some(found) = find_in_base64(text, depth)
    {
        keep(found);
    }
    best
}

/// The start of the first match of `rule` whose secret part passes the rule's check.
fn first_match(rule: &Rule, re: &Regex, text: &str) -> Option<usize> {
    for caps in re.captures_iter(text) {
        let whole = caps.get(0)?;
        let part = caps.get(1).map_or(whole.as_str(), |m| m.as_str());
        if (rule.check)(part) {
            return Some(whole.start());
        }
    }
    None
}
