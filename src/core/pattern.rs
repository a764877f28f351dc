//! Key patterns of `mem7.yaml` (`many:`, the scope map): a key, where `*` stands for any
//! run of characters (none included). `event:*` matches `event:deploy` and `event:`;
//! `*:decision` matches `payments:decision`; a pattern without `*` matches itself only.

/// Whether `key` matches `pattern`.
pub fn matches(pattern: &str, key: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = key.strip_prefix(first) else {
        return false;
    };
    let tail: Vec<&str> = parts.collect();
    let Some((last, middle)) = tail.split_last() else {
        // No `*`: the whole key.
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// Whether `key` matches any of `patterns`.
pub fn any(patterns: &[String], key: &str) -> bool {
    patterns.iter().any(|p| matches(p, key))
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn stars_stand_for_any_run() {
        let yes = [
            ("event:*", "event:deploy"),
            ("event:*", "event:"),
            ("*:decision", "payments:decision"),
            ("a*b*c", "abc"),
            ("a*b*c", "axxbyyc"),
            ("*", ""),
            ("user", "user"),
        ];
        for (p, k) in yes {
            assert!(matches(p, k), "{p} should match {k}");
        }
        let no = [
            ("event:*", "events:deploy"),
            ("event:*", "myevent:x"),
            ("*:decision", "decision:x"),
            ("a*b*c", "acb"),
            ("a*bc", "abc-"),
            ("user", "user:name"),
            ("ab*ba", "aba"),
        ];
        for (p, k) in no {
            assert!(!matches(p, k), "{p} should not match {k}");
        }
    }
}
