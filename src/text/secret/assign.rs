//! Assignments: `name = value` and its kin, where the name says secret and the value
//! looks like one rather than a reference to one; and the value tests the rules share.

use super::*;

/// What a name says its value is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum NameClass {
    Password,
    Secret,
}

/// Longest name and value looked at around one separator, so the scan stays linear.
pub(super) const MAX_NAME: usize = 80;
pub(super) const MAX_VALUE: usize = 512;

/// Finds `name=value` pairs whose name says secret and whose value looks like one;
/// returns the start of the name.
pub(super) fn find_assignment(text: &str) -> Option<usize> {
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c != b'=' && c != b':' {
            i += 1;
            continue;
        }
        let sep = i;
        let mut after = i + 1;
        match (c, b.get(after)) {
            (b':', Some(b'=')) | (b'=', Some(b'>')) => after += 1,
            (_, Some(&n)) if n == c => {
                // `==`, `::`: a comparison or a path, not an assignment.
                while b.get(after) == Some(&c) {
                    after += 1;
                }
                i = after;
                continue;
            }
            (b':', Some(b'/')) if b.get(after + 1) == Some(&b'/') => {
                i = after;
                continue;
            }
            _ => {}
        }
        i = after;
        let Some((start, class)) = name_before(b, sep) else {
            continue;
        };
        let Some((value, quoted, end)) = value_after(text, after) else {
            continue;
        };
        let secret = match class {
            NameClass::Password => password_value(value, quoted),
            NameClass::Secret => secret_value(value),
        };
        if secret {
            return Some(start);
        }
        // Separators inside a value already judged are not looked at again, so no byte
        // is read as a value twice and the scan stays linear.
        i = i.max(end);
    }
    None
}

/// The name before a separator at `sep`: an identifier (`DB_PASSWORD`, `"apiKey"`,
/// `--token`, `X-API-Key`) and up to two plain words before it (`AWS secret key:`).
pub(super) fn name_before(b: &[u8], sep: usize) -> Option<(usize, NameClass)> {
    let mut k = sep;
    let mut spaces = 0;
    while k > 0 && matches!(b[k - 1], b' ' | b'\t') && spaces < 3 {
        k -= 1;
        spaces += 1;
    }
    if k > 0 && matches!(b[k - 1], b'"' | b'\'' | b'`') {
        k -= 1;
        // `\"password\":` in JSON written inside a JSON string.
        if k > 0 && b[k - 1] == b'\\' {
            k -= 1;
        }
    }
    let end = k;
    while k > 0 && end - k < MAX_NAME && is_name_byte(b[k - 1]) {
        k -= 1;
    }
    if k == end {
        return None;
    }
    // A name stands on its own: `a:b:secret:c` (an ARN) or `/x/token=…` name nothing;
    // `.npmrc` writes `//registry/:_authToken=…`.
    let npmrc = k > 0 && b[k - 1] == b':' && b[k] == b'_';
    if k > 0 && !name_may_follow(b[k - 1]) && !npmrc {
        return None;
    }
    let mut start = k;
    // A phrase (`AWS secret key: …`): before a colon, up to two more words of letters,
    // each after one space.
    let phrase = b[sep] == b':' && b[k..end].iter().all(u8::is_ascii_alphabetic);
    for _ in 0..if phrase { 2 } else { 0 } {
        if start < 2 || b[start - 1] != b' ' || !b[start - 2].is_ascii_alphabetic() {
            break;
        }
        let mut w = start - 1;
        while w > 0 && start - 1 - w < 20 && b[w - 1].is_ascii_alphabetic() {
            w -= 1;
        }
        if w > 0 && is_name_byte(b[w - 1]) {
            break;
        }
        start = w;
    }
    // The name is ASCII by construction (name bytes and letters only).
    let name = std::str::from_utf8(&b[start..end]).ok()?;
    classify_name(name).map(|class| (start, class))
}

/// Bytes after which a name may start: white space, quotes, brackets, separators of
/// lists and query strings, `$` of a shell or PowerShell variable.
pub(super) fn name_may_follow(b: u8) -> bool {
    b.is_ascii_whitespace()
        || matches!(
            b,
            b'"' | b'\'' | b'`' | b'{' | b'(' | b'[' | b',' | b';' | b'&' | b'?' | b'$' | b'|'
        )
}

pub(super) fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.')
}

/// Last words of a name that say the value is *about* a secret, not the secret:
/// `api_key_env`, `password_min_length`, `token_ttl`, `secret_name`, `private_key_path`.
#[rustfmt::skip]
pub(super) const NOT_THE_SECRET: &[&str] = &[
    "age", "algo", "algorithm", "arn", "at", "budget", "changed", "cmd", "column", "command",
    "config", "configuration", "count", "created", "date", "days", "default", "description",
    "dir", "enabled", "endpoint", "env", "example", "expiration", "expires", "expiry", "field",
    "file", "fingerprint", "format", "hash", "hashed", "header", "helper", "hint", "id", "ids",
    "interval", "kind", "label", "last", "len", "length", "lifetime", "limit", "location",
    "manager", "max", "min", "mode", "name", "names", "namespace", "options", "path",
    "pattern", "placeholder", "policy", "prefix", "provider", "ref", "reference", "regex",
    "region", "required", "reset", "rotated", "rotation", "rule", "rules", "scanning", "scope",
    "scopes", "set", "settings", "signature", "since", "size", "source", "stdin", "store",
    "strength", "suffix", "table", "template", "timeout", "ttl", "type", "until", "updated",
    "uri", "url", "usage", "used", "var", "variable", "version",
];

/// Words before `key` that make it a secret key (`api_key`, `AccountKey`, `STRIPE_KEY`),
/// as opposed to `cache_key`, `primary_key`, `public_key`, `s3_key`.
#[rustfmt::skip]
pub(super) const SECRET_KEY_QUALIFIERS: &[&str] = &[
    "access", "account", "admin", "algolia", "anthropic", "api", "app", "auth", "aws", "azure",
    "client", "cloudflare", "cohere", "consumer", "datadog", "dd", "deploy", "encryption",
    "firebase", "gcp", "github", "gitlab", "google", "groq", "heroku", "hmac", "jwt",
    "license", "mailgun", "mapbox", "master", "mistral", "netlify", "npm", "openai",
    "openrouter", "pinecone", "private", "pypi", "replicate", "secret", "sendgrid", "sentry",
    "service", "session", "shared", "signing", "slack", "storage", "stripe", "subscription",
    "supabase", "twilio", "vercel", "webhook", "write",
];

/// Words before `token` that make it something other than a credential (AWS's
/// `ClientToken` and `NextToken`, lock and paging tokens).
#[rustfmt::skip]
pub(super) const NOT_SECRET_TOKENS: &[&str] = &[
    "backward", "cancel", "change", "client", "continuation", "creation", "cursor", "export",
    "forward", "idempotency", "import", "lifecycle", "lock", "marker", "next", "page",
    "pagination", "request", "resume", "sequence", "starting", "sync", "update", "upload",
    "verification",
];

/// Decides from a name whether its value is a password or another secret.
pub(super) fn classify_name(name: &str) -> Option<NameClass> {
    let words = name_words(name);
    let last = words.last()?;
    if NOT_THE_SECRET.contains(&last.as_str()) {
        return None;
    }
    let password = |w: &str| {
        matches!(w, "pwd" | "passphrase") || w.ends_with("password") || w.ends_with("passwd")
    };
    // `pass` and `pw` are short enough to be other words (`pass -march=…`): last only.
    if words.iter().any(|w| password(w)) || matches!(last.as_str(), "pass" | "pw") {
        return Some(NameClass::Password);
    }
    let secret_word = |w: &str| {
        matches!(
            w,
            "secret" | "credential" | "credentials" | "creds" | "apikey"
        ) || w.ends_with("token")
            || w.ends_with("secret")
            || w.ends_with("apikey")
            || w.ends_with("secretkey")
            || w.ends_with("privatekey")
            || w.ends_with("accesskey")
    };
    // Tokens that are not credentials: idempotency, paging and locking tokens.
    let harmless_token = last.ends_with("token")
        && words.iter().any(|w| {
            let w = w.strip_suffix("token").unwrap_or(w);
            NOT_SECRET_TOKENS.contains(&w)
        });
    if !harmless_token && words.iter().any(|w| secret_word(w)) {
        return Some(NameClass::Secret);
    }
    // `sig=` and `signature=` are credentials in a URL (the SAS rule), not in general.
    if matches!(last.as_str(), "auth" | "sas" | "bearer") {
        return Some(NameClass::Secret);
    }
    let qualified_key = words.windows(2).any(|pair| {
        matches!(pair[1].as_str(), "key" | "keys")
            && SECRET_KEY_QUALIFIERS.contains(&pair[0].as_str())
    });
    qualified_key.then_some(NameClass::Secret)
}

/// Lower-case words of an identifier: split at `_ - . space` and at camel-case humps.
pub(super) fn name_words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut prev: Option<char> = None;
    for c in name.chars() {
        if !c.is_ascii_alphanumeric() {
            if !cur.is_empty() {
                words.push(std::mem::take(&mut cur));
            }
            prev = None;
            continue;
        }
        if c.is_ascii_uppercase() && prev.is_some_and(|p| p.is_ascii_lowercase()) && !cur.is_empty()
        {
            words.push(std::mem::take(&mut cur));
        }
        cur.push(c.to_ascii_lowercase());
        prev = Some(c);
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    words
}

/// The value after a separator ending at `at`: quoted (up to the closing quote, on the
/// same line) or bare (up to white space or punctuation that ends values). Also returns
/// where the value ends.
pub(super) fn value_after(text: &str, at: usize) -> Option<(&str, bool, usize)> {
    let b = text.as_bytes();
    let mut i = at;
    let mut spaces = 0;
    while i < b.len() && matches!(b[i], b' ' | b'\t') && spaces < 3 {
        i += 1;
        spaces += 1;
    }
    let mut quote = b
        .get(i)
        .copied()
        .filter(|q| matches!(q, b'"' | b'\'' | b'`'));
    // `\"password\": \"…\"`: JSON written inside a JSON string, whose quotes are escaped.
    let escaped =
        quote.is_none() && b.get(i) == Some(&b'\\') && matches!(b.get(i + 1), Some(b'"' | b'\''));
    if escaped {
        quote = Some(b[i + 1]);
        i += 2;
    } else if quote.is_some() {
        i += 1;
    }
    let start = i;
    while i < b.len() && i - start < MAX_VALUE {
        let c = b[i];
        let ends = match quote {
            Some(q) if escaped => {
                (c == b'\\' && b.get(i + 1) == Some(&q)) || c == b'\n' || c == b'\r'
            }
            Some(q) => c == q || c == b'\n' || c == b'\r',
            None => {
                c.is_ascii_whitespace()
                    || matches!(
                        c,
                        b'"' | b'\'' | b'`' | b',' | b';' | b'&' | b')' | b'}' | b']' | b'>' | b'|'
                    )
            }
        };
        if ends {
            break;
        }
        i += 1;
    }
    // `start` and `i` sit next to ASCII bytes (or the ends), so both are boundaries.
    let value = text.get(start..i)?;
    (!value.is_empty()).then_some((value, quote.is_some(), i))
}

/// A password value: not a placeholder or a reference to where the password lives.
pub(super) fn password_value(v: &str, quoted: bool) -> bool {
    let v = v.trim();
    if v.chars().count() < 6 || placeholder(v) || reference(v) || benign_shape(v) {
        return false;
    }
    if quoted {
        // A quoted sentence is prose; a quoted pass phrase has a few words at most.
        return v.split_whitespace().count() <= 3;
    }
    if code_like(v) {
        return false;
    }
    let symbol = v
        .chars()
        .any(|c| !c.is_alphanumeric() && !matches!(c, '-' | '_' | '.'));
    let digit = v.chars().any(|c| c.is_ascii_digit());
    digit || symbol || humps(v) > 0 || v.len() >= 16
}

/// An expression in code (`Vec::new()`, `get_password(`, `env["TOKEN"`), which names
/// where the secret comes from.
pub(super) fn code_like(v: &str) -> bool {
    v.contains('(') || v.contains('[') || v.contains("::") || v.contains("->")
}

/// A secret value under a name that says secret: token-like, or a vendor's prefix.
pub(super) fn secret_value(v: &str) -> bool {
    let v = v.trim();
    if placeholder(v) {
        return false;
    }
    vendor_prefix(v) || token_like(v)
}

/// `name value`: a name that says secret and a value that looks like one.
pub(super) fn spaced_pair(pair: &str) -> bool {
    let mut parts = pair.split_whitespace();
    let (Some(name), Some(value)) = (parts.next(), parts.next()) else {
        return false;
    };
    let value = value.trim_matches(|c| matches!(c, '"' | '\'' | '`'));
    if value.starts_with('-') {
        return false;
    }
    match classify_name(name) {
        Some(NameClass::Password) => password_value(value, false),
        Some(NameClass::Secret) => secret_value(value),
        None => false,
    }
}

/// A password stated in a sentence, which ends in punctuation that is not part of it.
pub(super) fn stated_password(v: &str) -> bool {
    password_value(v.trim_end_matches(['.', ',', ';', ')']), false)
}

/// A token or key stated in a sentence.
pub(super) fn stated_secret(v: &str) -> bool {
    secret_value(v.trim_end_matches(['.', ',', ';', ')']))
}

/// A bare password (command line, `.netrc`, URL): anything but a placeholder.
pub(super) fn plain_password(v: &str) -> bool {
    let port = v.len() <= 5 && v.bytes().all(|b| b.is_ascii_digit());
    !placeholder(v) && !port
}

pub(super) fn url_password(v: &str) -> bool {
    (3..=256).contains(&v.len()) && plain_password(v)
}

pub(super) fn bearer_value(v: &str) -> bool {
    let jwt = v.starts_with("ey") && v.contains('.');
    !placeholder(v) && (vendor_prefix(v) || jwt || token_like(v))
}

/// `Basic` credentials: base64 of `user:password` with a real password.
pub(super) fn basic_value(v: &str) -> bool {
    let decoded = decode_base64(v.trim_end_matches('='));
    let Ok(text) = std::str::from_utf8(&decoded) else {
        return false;
    };
    match text.split_once(':') {
        Some((user, password)) => !user.is_empty() && password.len() >= 3 && !placeholder(password),
        None => false,
    }
}

/// Secret values that are short but carry a vendor's prefix (`rk_live_…` in a test).
pub(super) fn vendor_prefix(v: &str) -> bool {
    #[rustfmt::skip]
    const PREFIXES: &[&str] = &[
        "sk_live_", "rk_live_", "sk_test_", "rk_test_", "sk-", "ghp_", "gho_", "ghs_", "ghu_",
        "ghr_", "github_pat_", "glpat-", "xoxb-", "xoxp-", "npm_", "AKIA", "hf_", "AIza",
    ];
    v.len() >= 12 && PREFIXES.iter().any(|p| v.starts_with(p)) && !v.ends_with("...")
}

/// Values that stand for a secret without being one.
pub(super) fn placeholder(v: &str) -> bool {
    #[rustfmt::skip]
    const WORDS: &[&str] = &[
        "changeme", "change_me", "change-me", "default", "dummy", "empty", "example", "false",
        "fixme", "hidden", "n/a", "nil", "none", "notset", "null", "optional", "pass",
        "passwd", "password", "placeholder", "pwd", "redacted", "removed", "required", "sample",
        "secret", "string", "tbd", "test", "todo", "token", "true", "undefined", "unset",
    ];
    let Some(first) = v.chars().next() else {
        return true;
    };
    if matches!(first, '$' | '%' | '<' | '{' | '[' | '(' | '*' | '\\') {
        return true;
    }
    let lower = v.to_ascii_lowercase();
    #[rustfmt::skip]
    const MARKS: &[&str] = &[
        "{{", "${", "xxx", "***", "...", "…", "<", "your", "replace", "insert",
    ];
    if MARKS.iter().any(|m| lower.contains(m))
        || lower.starts_with("my_")
        || lower.starts_with("my-")
    {
        return true;
    }
    WORDS.contains(&lower.as_str()) || v.chars().all(|c| c == first)
}

/// Words that say where a password is kept rather than what it is.
pub(super) fn reference(v: &str) -> bool {
    #[rustfmt::skip]
    const WHERE: &[&str] = &[
        "1password", "bitwarden", "lastpass", "keepass", "vault", "keychain", "secret manager",
        "secrets manager", "see ", "ask ", "stored in", "env var", "environment",
    ];
    let lower = v.to_ascii_lowercase();
    WHERE.iter().any(|w| lower.contains(w))
}

/// Shapes that are not secrets whatever their name says: dates, times, versions,
/// environment variable names, relative and home paths.
pub(super) fn benign_shape(v: &str) -> bool {
    let b = v.as_bytes();
    let date = b.len() >= 10
        && b[..4].iter().all(u8::is_ascii_digit)
        && b[4] == b'-'
        && b[5..7].iter().all(u8::is_ascii_digit)
        && b[7] == b'-';
    let version = {
        let s = v.strip_prefix('v').unwrap_or(v);
        s.contains('.') && s.bytes().all(|c| c.is_ascii_digit() || c == b'.')
    };
    let env_name = b.first().is_some_and(u8::is_ascii_uppercase)
        && v.contains('_')
        && b.iter()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == b'_');
    let path = v.starts_with("~/")
        || v.starts_with("./")
        || v.starts_with("../")
        || (v.starts_with('/') && v[1..].contains('/'));
    let reference = v.starts_with("arn:") || v.contains("://");
    date || version || env_name || path || reference
}

/// Looks like a generated secret: long enough, no spaces, random-looking (letters and
/// digits interleaved, or case changing inside words, with enough entropy), and not
/// words, a URL, a date or a variable name.
pub(super) fn token_like(v: &str) -> bool {
    let n = v.len();
    if !(10..=4096).contains(&n) || v.contains(char::is_whitespace) || !v.is_ascii() {
        return false;
    }
    if v.contains("://") || benign_shape(v) || placeholder(v) || wordy(v) {
        return false;
    }
    let alnum = v.bytes().filter(u8::is_ascii_alphanumeric).count();
    if alnum < 8 || entropy(v) < 3.0 {
        return false;
    }
    let digits = v.bytes().filter(u8::is_ascii_digit).count();
    letter_digit_changes(v) >= 2 || (humps(v) >= 2 && n >= 16) || (n >= 20 && digits > 0)
}

/// For a token's tail after its prefix (`sk-…`): not a run of words (`sk-learn-…`).
pub(super) fn not_wordy(tail: &str) -> bool {
    !wordy(tail)
}

/// No run of four equal characters: tokens whose prefix is all `A`s and `E`s also occur
/// inside base64 of binary data, where runs of `A` (zero bytes) are common.
pub(super) fn no_padding(tail: &str) -> bool {
    !tail
        .as_bytes()
        .windows(4)
        .any(|w| w.iter().all(|&c| c == w[0]))
}

/// Twitter's bearer tokens carry URL escapes (`%2B`, `%3D`); base64 of binary does not.
pub(super) fn percent_escaped(tail: &str) -> bool {
    tail.contains('%') && no_padding(tail)
}

/// Upper case, lower case and digits all present (for short prefixes like `s.`).
pub(super) fn mixed_classes(v: &str) -> bool {
    v.bytes().any(|b| b.is_ascii_uppercase())
        && v.bytes().any(|b| b.is_ascii_lowercase())
        && v.bytes().any(|b| b.is_ascii_digit())
}

/// Reads as words and numbers: `user_preferences_v2_migration`, `OPENAI_API_KEY`,
/// `prod/app/db-credentials`, `userPreferences`, but not `abcd1234efgh`, `hunter2x9`,
/// `K7MDENG`, `aBcDeFgH` or a long run of letters.
pub(super) fn wordy(v: &str) -> bool {
    let mut any = false;
    for seg in v
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|s| !s.is_empty())
    {
        any = true;
        if letter_digit_changes(seg) > 1 || humps(seg) * 4 > seg.len() {
            return false;
        }
        // Parts: runs of digits, and runs of letters cut at camel-case humps.
        let b = seg.as_bytes();
        let mut start = 0;
        for k in 1..=b.len() {
            let cut = k == b.len()
                || b[k].is_ascii_digit() != b[k - 1].is_ascii_digit()
                || (b[k - 1].is_ascii_lowercase() && b[k].is_ascii_uppercase());
            if cut {
                let limit = if b[start].is_ascii_digit() { 4 } else { 12 };
                if k - start > limit {
                    return false;
                }
                start = k;
            }
        }
    }
    any
}

/// Number of lower→upper case changes (camel humps, or random case).
pub(super) fn humps(v: &str) -> usize {
    v.as_bytes()
        .windows(2)
        .filter(|w| w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase())
        .count()
}

/// Number of places where a letter and a digit meet.
pub(super) fn letter_digit_changes(v: &str) -> usize {
    v.as_bytes()
        .windows(2)
        .filter(|w| {
            (w[0].is_ascii_alphabetic() && w[1].is_ascii_digit())
                || (w[0].is_ascii_digit() && w[1].is_ascii_alphabetic())
        })
        .count()
}

/// Shannon entropy in bits per byte.
pub(super) fn entropy(v: impl AsRef<[u8]>) -> f64 {
    let v = v.as_ref();
    let mut counts = [0u32; 256];
    for &b in v {
        counts[usize::from(b)] += 1;
    }
    let n = v.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = f64::from(c) / n;
            -p * p.log2()
        })
        .sum()
}
