//! Rules for keys, tags and agent names, checked before anything reaches a file.
//!
//! Keys name one fact slot and appear as a markdown heading, so they are one word:
//! Unicode letters and digits plus `_ - . : / @ +`, 1 to 200 bytes. Tags use the same
//! alphabet (up to 64 bytes). Agent names may also hold spaces and parentheses.

/// The punctuation allowed in keys and tags besides letters and digits.
pub const KEY_PUNCTUATION: &str = "_-.:/@+";
/// Longest key, in bytes.
pub const MAX_KEY_BYTES: usize = 200;
/// Longest tag, in bytes.
pub const MAX_TAG_BYTES: usize = 64;
/// Longest agent name, in bytes.
pub const MAX_AGENT_BYTES: usize = 100;

/// Input that breaks a rule, with the fix in the message.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{problem}; {fix}")]
pub struct Invalid {
    pub problem: String,
    pub fix: String,
}

fn invalid(problem: String, fix: &str) -> Invalid {
    Invalid {
        problem,
        fix: fix.to_string(),
    }
}

fn key_char(c: char) -> bool {
    c.is_alphanumeric() || KEY_PUNCTUATION.contains(c)
}

/// Checks a key.
pub fn key(key: &str) -> Result<(), Invalid> {
    const FIX: &str = "keys are one word of letters, digits and _ - . : / @ + (for example `project:deploy_target`)";
    if key.is_empty() {
        return Err(invalid("the key is empty".into(), FIX));
    }
    if key.len() > MAX_KEY_BYTES {
        return Err(invalid(
            format!(
                "the key is {} bytes long, over the limit of {MAX_KEY_BYTES}",
                key.len()
            ),
            "use a shorter key and put details in the value",
        ));
    }
    if let Some(c) = key.chars().find(|c| c.is_whitespace()) {
        return Err(invalid(
            format!("the key {key:?} contains whitespace ({})", c.escape_debug()),
            "join words with _ or - (for example `deploy_target`)",
        ));
    }
    if let Some(c) = key.chars().find(|&c| !key_char(c)) {
        return Err(invalid(
            format!("the key {key:?} contains {c:?}, which keys may not hold"),
            FIX,
        ));
    }
    Ok(())
}

/// Checks a key used to look something up (recall, history, forget). Looser than
/// [`key`], so that keys from hand-written or Go mem7 entries (which may hold spaces)
/// stay reachable.
pub fn lookup_key(key: &str) -> Result<(), Invalid> {
    if key.trim().is_empty() {
        return Err(invalid(
            "the key is empty".into(),
            "give the key to look up, e.g. `event7:host`",
        ));
    }
    if key.len() > MAX_KEY_BYTES || key.trim() != key || key.chars().any(char::is_control) {
        return Err(invalid(
            format!(
                "{key:?} cannot be a key (too long, surrounding whitespace or control characters)"
            ),
            "keys are one word of letters, digits and _ - . : / @ +",
        ));
    }
    Ok(())
}

/// Checks a tag.
pub fn tag(tag: &str) -> Result<(), Invalid> {
    const FIX: &str = "tags are one word of letters, digits and _ - . : / @ +";
    if tag.is_empty() {
        return Err(invalid("a tag is empty".into(), FIX));
    }
    if tag.len() > MAX_TAG_BYTES {
        return Err(invalid(
            format!("the tag {tag:?} is over {MAX_TAG_BYTES} bytes"),
            "use a shorter tag",
        ));
    }
    if let Some(c) = tag.chars().find(|&c| !key_char(c)) {
        return Err(invalid(format!("the tag {tag:?} contains {c:?}"), FIX));
    }
    Ok(())
}

/// Checks an agent name.
pub fn agent(agent: &str) -> Result<(), Invalid> {
    const FIX: &str = "agent names use letters, digits, spaces and _ - . @ + / ( )";
    if agent.trim().is_empty() {
        return Err(invalid("the agent name is empty".into(), FIX));
    }
    if agent.len() > MAX_AGENT_BYTES {
        return Err(invalid(
            format!("the agent name is over {MAX_AGENT_BYTES} bytes"),
            "use a shorter name",
        ));
    }
    if agent.trim() != agent {
        return Err(invalid(
            format!("the agent name {agent:?} starts or ends with whitespace"),
            FIX,
        ));
    }
    if let Some(c) = agent
        .chars()
        .find(|&c| !(c.is_alphanumeric() || c == ' ' || "_-.@+/()".contains(c)))
    {
        return Err(invalid(
            format!("the agent name {agent:?} contains {c:?}"),
            FIX,
        ));
    }
    Ok(())
}

/// Checks an entry's size against the workspace limit, `max_value_bytes`: its value and
/// its tags together, so that no field escapes the limit (the key and the agent have
/// short limits of their own).
pub fn entry_size(value: &str, tags: &[String], max_bytes: usize) -> Result<(), Invalid> {
    let tag_bytes: usize = tags.iter().map(|t| t.len() + 2).sum();
    let total = value.len() + tag_bytes;
    if total > max_bytes {
        let problem = if tag_bytes > 0 {
            format!(
                "the value and tags are {total} bytes (value {}, {} tags {tag_bytes}), over the limit of {max_bytes}",
                value.len(),
                tags.len()
            )
        } else {
            format!(
                "the value is {} bytes, over the limit of {max_bytes}",
                value.len()
            )
        };
        return Err(invalid(
            problem,
            "store a summary (with a few tags) and keep the long text in a file, or raise `max_value_bytes` in mem7.yaml",
        ));
    }
    Ok(())
}

/// The first `max` bytes of `text`, cut at a character boundary: how much of a long
/// value search and meaning read, so their work is bounded whatever its size.
pub fn head_of(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys() {
        for ok in [
            "event7:host",
            "user:current_ticket",
            "a",
            "ü-ñ.x/y@z+1",
            &"k".repeat(200),
        ] {
            assert!(key(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "a b",
            "a\nb",
            "a\tb",
            "a#b",
            "a*b",
            "`x`",
            &"k".repeat(201),
        ] {
            assert!(key(bad).is_err(), "{bad:?}");
        }
        assert!(key("a b").unwrap_err().to_string().contains("whitespace"));
    }

    #[test]
    fn tags_and_agents() {
        assert!(tag("infra").is_ok());
        assert!(tag("a,b").is_err());
        assert!(tag("").is_err());
        assert!(agent("Claude Code (opus)").is_ok());
        assert!(agent("x: y").is_err());
        assert!(agent(" x").is_err());
        assert!(agent("a\nb").is_err());
    }
}
