//! The page's addresses: percent-encoding, query strings (`Query`), links and key
//! paths, and which link targets in a value are safe to follow.

use std::fmt::Write as _;

/// Whether a link target is safe to follow: not `javascript:`, `vbscript:` or `data:`,
/// compared as a browser would read it (case-insensitive, with whitespace and control
/// characters, which browsers skip inside a scheme, left out).
pub fn safe_url(url: &str) -> bool {
    let seen: String = url
        .chars()
        .filter(|c| !c.is_whitespace() && !c.is_control())
        .take(16)
        .collect::<String>()
        .to_ascii_lowercase();
    !["javascript:", "vbscript:", "data:"]
        .iter()
        .any(|scheme| seen.starts_with(scheme))
}

/// Percent-encodes text for a URL path segment or query value: everything but
/// unreserved characters.
pub fn url_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// A request's query parameters, in order (repeated names allowed).
#[derive(Clone, Debug, Default)]
pub struct Query(pub Vec<(String, String)>);

impl Query {
    /// Parses `a=b&c=d` (form encoding).
    pub fn parse(raw: Option<&str>) -> Query {
        Query(
            form_urlencoded::parse(raw.unwrap_or("").as_bytes())
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect(),
        )
    }

    /// The first non-empty value of `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, v)| k == name && !v.trim().is_empty())
            .map(|(_, v)| v.trim())
    }

    /// Every non-empty value of `name`.
    pub fn all(&self, name: &str) -> Vec<String> {
        self.0
            .iter()
            .filter(|(k, v)| k == name && !v.trim().is_empty())
            .map(|(_, v)| v.trim().to_string())
            .collect()
    }

    /// `path?query` with `name` set to `value` (or removed), the rest kept.
    pub fn link_with(&self, path: &str, name: &str, value: Option<&str>) -> String {
        let mut pairs: Vec<(&str, &str)> = self
            .0
            .iter()
            .filter(|(k, v)| k != name && !v.is_empty())
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        if let Some(v) = value {
            pairs.push((name, v));
        }
        link(path, &pairs)
    }
}

/// `path?a=b&…` with each name and value encoded.
pub fn link(path: &str, pairs: &[(&str, &str)]) -> String {
    let mut s = path.to_string();
    for (i, (k, v)) in pairs.iter().enumerate() {
        s.push(if i == 0 { '?' } else { '&' });
        s.push_str(&url_encode(k));
        s.push('=');
        s.push_str(&url_encode(v));
    }
    s
}

/// The key page's path.
pub fn key_path(key: &str) -> String {
    format!("/k/{}", url_encode(key))
}
