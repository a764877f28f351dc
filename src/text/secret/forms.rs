//! Credentials in structured forms other than `name = value`: XML elements and
//! attributes, `.pgpass` lines, and the value of an `Authorization:` header.

use super::*;

/// Elements and attributes of XML (Maven's `settings.xml`, `web.config`, Spring, NuGet)
/// that hold a secret: `<password>…</password>`, `<db.password>…</…>`,
/// `<add key="ApiKey" value="…"/>`, `<property name="password" value="…"/>`,
/// `<entry key="db.password">…</entry>`. Returns the start of the element.
pub(super) fn find_xml_element(text: &str) -> Option<usize> {
    let b = text.as_bytes();
    let mut from = 0;
    while let Some(off) = memchr::memchr(b'<', &b[from..]) {
        let open = from + off;
        from = open + 1;
        let name_start = open + 1;
        let mut name_end = name_start;
        while name_end < b.len()
            && name_end - name_start < MAX_NAME
            && (is_name_byte(b[name_end]) || b[name_end] == b':')
        {
            name_end += 1;
        }
        if name_end == name_start || !b[name_start].is_ascii_alphabetic() {
            continue;
        }
        // The tag ends on the same line, within a bounded distance.
        let Some(close) = b[name_end..]
            .iter()
            .take(MAX_VALUE)
            .position(|&c| matches!(c, b'>' | b'<' | b'\n'))
            .map(|p| name_end + p)
            .filter(|&p| b[p] == b'>')
        else {
            continue;
        };
        from = close + 1;
        let tag = &text[name_start..name_end];
        let attrs = &text[name_end..close];
        // `<ns:password>` names a password as `<password>` does.
        let local = tag.rsplit(':').next().unwrap_or(tag);
        let body = || element_text(text, close + 1, tag);
        let (class, value) = match classify_name(local) {
            Some(class) => (class, body()),
            None => {
                let named = xml_attributes(attrs).find_map(|(name, value)| {
                    let says = matches!(name.to_ascii_lowercase().as_str(), "key" | "name" | "id");
                    if says { classify_name(value) } else { None }
                });
                let Some(class) = named else {
                    continue;
                };
                let value = xml_attributes(attrs)
                    .find(|(name, _)| name.eq_ignore_ascii_case("value"))
                    .map(|(_, v)| v)
                    .or_else(|| if attrs.ends_with('/') { None } else { body() });
                (class, value)
            }
        };
        let Some(value) = value else {
            continue;
        };
        let secret = match class {
            NameClass::Password => password_value(value, true),
            NameClass::Secret => secret_value(value),
        };
        if secret {
            return Some(open);
        }
    }
    None
}

/// The text of an element whose start tag ends before `at`, if its end tag `</tag>`
/// follows on the same line.
fn element_text<'a>(text: &'a str, at: usize, tag: &str) -> Option<&'a str> {
    let rest = text.get(at..)?;
    let end = rest
        .bytes()
        .take(MAX_VALUE)
        .position(|c| c == b'<' || c == b'\n')?;
    let closing = rest[end..].strip_prefix("</")?;
    closing.starts_with(tag).then(|| rest[..end].trim())
}

/// `name="value"` pairs of a tag (single or double quotes).
fn xml_attributes(attrs: &str) -> impl Iterator<Item = (&str, &str)> {
    let mut rest = attrs;
    std::iter::from_fn(move || {
        loop {
            let eq = rest.find('=')?;
            let name = rest[..eq].trim().rsplit([' ', '\t']).next().unwrap_or("");
            let after = rest[eq + 1..].trim_start();
            let q = after.chars().next().filter(|c| matches!(c, '"' | '\''));
            let Some(q) = q else {
                rest = after;
                continue;
            };
            let Some(len) = after[1..].find(q) else {
                rest = "";
                return None;
            };
            let value = &after[1..1 + len];
            rest = &after[len + 2..];
            return Some((name, value));
        }
    })
}

/// A `.pgpass` line, `hostname:port:database:username:password` (`\:` and `\\` escaped):
/// a whole line of exactly five fields without blanks, a port or `*` second, and a
/// password last. Returns the start of the line. An IPv6 address or a MAC address has more
/// fields, a time fewer.
pub(super) fn find_pgpass(text: &str) -> Option<usize> {
    memchr::memchr_iter(b':', text.as_bytes()).nth(3)?;
    let mut start = 0;
    for line in text.split('\n') {
        let at = start;
        start += line.len() + 1;
        let l = line.trim_matches([' ', '\t', '\r']);
        if l.len() < 9 || l.contains([' ', '\t']) {
            continue;
        }
        let mut fields = Vec::with_capacity(5);
        let b = l.as_bytes();
        let mut from = 0;
        let mut i = 0;
        while i < b.len() && fields.len() < 6 {
            match b[i] {
                b'\\' => i += 1,
                b':' => {
                    fields.push(&l[from..i]);
                    from = i + 1;
                }
                _ => {}
            }
            i += 1;
        }
        fields.push(l.get(from..).unwrap_or(""));
        let [host, port, db, user, password] = fields[..] else {
            continue;
        };
        let host_ok = !host.is_empty()
            && host
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'*' | b'-'));
        let port_ok = port == "*"
            || ((1..=5).contains(&port.len()) && port.bytes().all(|c| c.is_ascii_digit()));
        if host_ok
            && port_ok
            && !db.is_empty()
            && !user.is_empty()
            && password_value(password, false)
        {
            return Some(at + (line.len() - line.trim_start_matches([' ', '\t']).len()));
        }
    }
    None
}

/// What follows `Authorization:`: a bare credential, or a scheme and a credential
/// (`Bearer X`, `ApiKey X`, `Basic user:password`, `SharedKey account:signature`), or a
/// scheme and parameters (`Digest username="…", response="…"`, `OAuth oauth_token="…"`)
/// one of which is credential-like.
pub(super) fn auth_credentials(v: &str) -> bool {
    let ends = |c: char| {
        c.is_whitespace() || matches!(c, '"' | '\'' | '`' | ',' | ';' | ')' | '}' | ']' | '\\')
    };
    let word = |s: &str| s.split(ends).next().unwrap_or("").to_owned();
    let first = word(v);
    if credential_word(&first) {
        return true;
    }
    let rest = v[first.len()..].trim_start();
    if placeholder(rest) {
        return false;
    }
    let scheme = first.to_ascii_lowercase();
    // Parameters: `name=value` or `name="value"`, separated by commas.
    let param = |p: &str| -> Option<String> {
        let (name, value) = p.split_once('=')?;
        let name = name.trim();
        let value = value
            .trim()
            .trim_matches(|c| matches!(c, '"' | '\'' | '\\'));
        let identifier = !name.is_empty()
            && name
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'-');
        identifier.then(|| value.to_owned())
    };
    if rest.split(',').any(|p| param(p).is_some()) {
        return rest
            .split(',')
            .filter_map(param)
            .any(|value| credential_word(&value));
    }
    let credential = word(rest);
    if scheme == "basic" && basic_value(&credential) {
        return true;
    }
    if let Some((user, password)) = credential.split_once(':') {
        if scheme == "basic" {
            return !user.is_empty() && password_value(password, false);
        }
        return credential_word(user) || credential_word(password);
    }
    credential_word(&credential)
}

/// A word that is a credential on its own: a vendor's token or a random-looking one.
fn credential_word(w: &str) -> bool {
    let jwt = w.starts_with("ey") && w.contains('.');
    !placeholder(w)
        && !code_like(w)
        && (vendor_prefix(w) || (jwt && w.len() >= 20) || token_like(w))
}
