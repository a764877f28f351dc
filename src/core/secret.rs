//! Recognises text that looks like a credential, so it is refused before it reaches a
//! file that may be pushed to git (DESIGN §5).
//!
//! The patterns are deliberately specific (a known prefix followed by a long enough run
//! of token characters, starting at a word boundary) so that prose about keys and
//! passwords is not refused.

/// What was found, for the error message. Never includes the secret itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// A short name of the pattern, e.g. "GitHub token (ghp_…)".
    pub kind: &'static str,
    /// Byte offset of the match in the text.
    pub offset: usize,
}

struct Prefixed {
    prefix: &'static str,
    kind: &'static str,
    /// Minimum number of token characters after the prefix.
    min_tail: usize,
    tail: fn(u8) -> bool,
}

fn alnum(b: u8) -> bool {
    b.is_ascii_alphanumeric()
}
fn token(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}
fn upper_digit(b: u8) -> bool {
    b.is_ascii_uppercase() || b.is_ascii_digit()
}

const PREFIXED: &[Prefixed] = &[
    Prefixed {
        prefix: "sk-",
        kind: "API secret key (sk-…)",
        min_tail: 20,
        tail: token,
    },
    Prefixed {
        prefix: "ghp_",
        kind: "GitHub token (ghp_…)",
        min_tail: 30,
        tail: alnum,
    },
    Prefixed {
        prefix: "gho_",
        kind: "GitHub token (gho_…)",
        min_tail: 30,
        tail: alnum,
    },
    Prefixed {
        prefix: "ghu_",
        kind: "GitHub token (ghu_…)",
        min_tail: 30,
        tail: alnum,
    },
    Prefixed {
        prefix: "ghs_",
        kind: "GitHub token (ghs_…)",
        min_tail: 30,
        tail: alnum,
    },
    Prefixed {
        prefix: "ghr_",
        kind: "GitHub token (ghr_…)",
        min_tail: 30,
        tail: alnum,
    },
    Prefixed {
        prefix: "github_pat_",
        kind: "GitHub token (github_pat_…)",
        min_tail: 20,
        tail: token,
    },
    Prefixed {
        prefix: "npm_",
        kind: "npm token (npm_…)",
        min_tail: 30,
        tail: alnum,
    },
    Prefixed {
        prefix: "AKIA",
        kind: "AWS access key (AKIA…)",
        min_tail: 16,
        tail: upper_digit,
    },
    Prefixed {
        prefix: "ASIA",
        kind: "AWS access key (ASIA…)",
        min_tail: 16,
        tail: upper_digit,
    },
];

/// Names of `name=value` / `name: value` pairs that carry a secret.
const SECRET_NAMES: &[&str] = &[
    "api_key",
    "api-key",
    "apikey",
    "password",
    "passwd",
    "secret_key",
    "client_secret",
    "access_token",
    "auth_token",
];

/// Minimum length of the value in a `name=value` pair to count as a secret.
const MIN_PAIR_VALUE: usize = 6;

/// Finds the first credential-looking part of `text`, if any.
pub fn find(text: &str) -> Option<Finding> {
    let bytes = text.as_bytes();
    for i in 0..bytes.len() {
        let rest = &bytes[i..];
        // A secret's name may end an identifier (`DB_PASSWORD=…`, `STRIPE_API_KEY=…`).
        for name in SECRET_NAMES {
            if rest.len() > name.len()
                && rest[..name.len()].eq_ignore_ascii_case(name.as_bytes())
                && let Some(len) = pair_value_len(&rest[name.len()..])
                && len >= MIN_PAIR_VALUE
            {
                return Some(Finding {
                    kind: "credential assignment (name=value)",
                    offset: i,
                });
            }
        }
        let at_boundary = i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
        if !at_boundary {
            continue;
        }
        // Slack tokens: xox?- with any letter.
        if rest.len() > 5
            && rest.starts_with(b"xox")
            && rest[3].is_ascii_lowercase()
            && rest[4] == b'-'
        {
            let tail = rest[5..].iter().take_while(|&&b| token(b)).count();
            if tail >= 10 {
                return Some(Finding {
                    kind: "Slack token (xox?-…)",
                    offset: i,
                });
            }
        }
        for p in PREFIXED {
            if rest.starts_with(p.prefix.as_bytes()) {
                let tail = rest[p.prefix.len()..]
                    .iter()
                    .take_while(|&&b| (p.tail)(b))
                    .count();
                if tail >= p.min_tail {
                    return Some(Finding {
                        kind: p.kind,
                        offset: i,
                    });
                }
            }
        }
        if rest.starts_with(b"-----BEGIN ") {
            let line_end = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
            let line = &rest[..line_end];
            if line.windows(11).any(|w| w == b"PRIVATE KEY") {
                return Some(Finding {
                    kind: "private key block",
                    offset: i,
                });
            }
        }
    }
    None
}

/// After a secret's name: optional quote and spaces, `=` or `:`, optional spaces and
/// quote, then the value. Returns the value's length in bytes.
fn pair_value_len(after: &[u8]) -> Option<usize> {
    let mut i = 0;
    if after.first().is_some_and(|&b| b == b'"' || b == b'\'') {
        i += 1;
    }
    while after.get(i) == Some(&b' ') {
        i += 1;
    }
    match after.get(i) {
        Some(b'=') | Some(b':') => i += 1,
        _ => return None,
    }
    while after.get(i) == Some(&b' ') {
        i += 1;
    }
    if after.get(i).is_some_and(|&b| b == b'"' || b == b'\'') {
        i += 1;
    }
    let len = after[i..]
        .iter()
        .take_while(|&&b| {
            !(b.is_ascii_whitespace() || b == b'"' || b == b'\'' || b == b',' || b == b';')
        })
        .count();
    Some(len)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_are_found() {
        let cases = [
            "key is sk-proj-abcdefghijklmnopqrstuvwx",
            "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
            "github_pat_11ABCDEFG0123456789_abcdefghijk",
            "npm_abcdefghijklmnopqrstuvwxyz0123456789",
            "AKIAIOSFODNN7EXAMPLE",
            "xoxb-123456789012-abcdefghij",
            "-----BEGIN OPENSSH PRIVATE KEY-----\nabc",
            "export API_KEY=abcd1234efgh",
            "password: hunter22",
            "DB_PASSWORD=hunter2222",
            "STRIPE_API_KEY=rk_live_abcdef",
            "xoxe-1-abcdefghijklmnopqrst",
            "{\"password\": \"correct horse\"}",
        ];
        for c in cases {
            assert!(find(c).is_some(), "{c}");
        }
    }

    #[test]
    fn prose_is_not_refused() {
        let cases = [
            "we rotate the api key every month",
            "the password is in 1Password",
            "password: see vault",
            "task-runner uses sk-learn",
            "desk-ghp_x",
            "AKIA is the prefix of AWS keys",
            "-----BEGIN CERTIFICATE-----",
            "",
        ];
        for c in cases {
            assert_eq!(find(c), None, "{c}");
        }
    }
}
