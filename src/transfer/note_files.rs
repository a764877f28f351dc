//! `mem7 import-notes`: facts from Claude Code's auto memory (`MEMORY.md` and its topic
//! files) and from folders of markdown notes with YAML frontmatter.
//!
//! Reading is apart from writing: [`collect`] walks a path and returns the facts and the
//! bad notes, each with its file and line; the CLI decides what to print and the
//! engine's import path writes. Keys are derived from names that do not change when a
//! note's text does (file names, titles, headings), so importing the same files again is
//! a confirmation that writes nothing. See docs/import.md.

use std::path::Path;

use pulldown_cmark::{Event, HeadingLevel, Parser, Tag, TagEnd};

use crate::core::time::ValidTime;
use crate::error::{Error, Result};
use crate::format::FieldValueExport as FieldValue;

/// The longest slug a key part gets (keys are at most 200 bytes).
const SLUG_MAX: usize = 60;

/// One fact read from a note.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fact {
    pub key: String,
    pub value: String,
    pub valid_from: Option<ValidTime>,
    pub tags: Vec<String>,
    /// The file, relative to the walked path (`/`-separated).
    pub file: String,
    /// 1-based line the fact starts at.
    pub line: usize,
}

/// A note that cannot be imported, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bad {
    pub file: String,
    pub line: usize,
    pub problem: String,
}

/// What a walk found.
#[derive(Debug, Default)]
pub struct Batch {
    pub facts: Vec<Fact>,
    pub bad: Vec<Bad>,
    /// Markdown files read.
    pub files: usize,
}

/// A key part: lower case, letters and digits kept, `_` and `.` kept, every other run of
/// characters one `-`, no `-` at either end, at most `SLUG_MAX` (60) bytes; `untitled` when
/// nothing is left.
pub fn slug(text: &str) -> String {
    let mut out = String::new();
    let mut dash = false;
    for c in text.chars().flat_map(char::to_lowercase) {
        if c.is_alphanumeric() || c == '_' || c == '.' {
            if dash && !out.is_empty() {
                out.push('-');
            }
            dash = false;
            if out.len() + c.len_utf8() > SLUG_MAX {
                break;
            }
            out.push(c);
        } else {
            dash = true;
        }
    }
    let out = out.trim_matches(['-', '.']).to_string();
    if out.is_empty() {
        "untitled".into()
    } else {
        out
    }
}

/// The agent an imported fact is written under: `import-notes/` and the file's path
/// relative to the walked path, in the agent alphabet (other characters become `_`),
/// at most 100 bytes.
pub fn agent_for(file: &str) -> String {
    let mut agent = String::from("import-notes/");
    for c in file.chars() {
        let c = if c.is_alphanumeric() || " _-.@+/()".contains(c) {
            c
        } else {
            '_'
        };
        if agent.len() + c.len_utf8() > 100 {
            break;
        }
        agent.push(c);
    }
    agent.trim_end().to_string()
}

/// Walks `path` (a file or a directory; hidden directories such as `.git` are skipped)
/// and reads every `*.md` file. A directory holding `MEMORY.md` is read as Claude Code's
/// auto memory; every other file as a frontmatter note.
/// Values longer than `max_value_bytes` are bad notes.
pub fn collect(path: &Path, max_value_bytes: usize) -> Result<Batch> {
    let root = if path.is_file() {
        path.parent().unwrap_or(Path::new(".")).to_path_buf()
    } else {
        path.to_path_buf()
    };
    let mut batch = Batch::default();
    let walker = walkdir::WalkDir::new(path)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| e.depth() == 0 || !e.file_name().to_string_lossy().starts_with('.'));
    for item in walker {
        let item = item.map_err(|e| {
            let at = e
                .path()
                .map(Path::to_path_buf)
                .unwrap_or_else(|| path.to_path_buf());
            Error::named_file(
                at,
                e.into_io_error()
                    .unwrap_or_else(|| std::io::Error::other("a loop of links")),
            )
        })?;
        let p = item.path();
        if !item.file_type().is_file()
            || !p.extension().is_some_and(|x| x.eq_ignore_ascii_case("md"))
        {
            continue;
        }
        batch.files += 1;
        let rel = rel_name(&root, p);
        let bytes = std::fs::read(p).map_err(|e| Error::named_file(p, e))?;
        let text = match String::from_utf8(bytes) {
            Ok(t) => t,
            Err(e) => {
                let upto = e.utf8_error().valid_up_to();
                let line = 1 + e.as_bytes()[..upto].iter().filter(|&&b| b == b'\n').count();
                batch.bad.push(Bad {
                    file: rel,
                    line,
                    problem: "the note is not UTF-8 text".into(),
                });
                continue;
            }
        };
        let dir = p.parent().unwrap_or(Path::new("."));
        let claude = dir.join("MEMORY.md").is_file();
        let read = if claude {
            claude_file(&rel, p, dir, &text)
        } else {
            note_file(&rel, p, &text)
        };
        match read {
            Ok(facts) => batch.facts.extend(facts),
            Err(bad) => batch.bad.push(bad),
        }
    }
    // Two notes giving one key would overwrite each other: both are named.
    let mut seen: std::collections::HashMap<String, (String, usize)> = Default::default();
    let mut kept = Vec::with_capacity(batch.facts.len());
    for f in std::mem::take(&mut batch.facts) {
        if let Some((file, line)) = seen.get(&f.key) {
            batch.bad.push(Bad {
                file: f.file.clone(),
                line: f.line,
                problem: format!(
                    "gives the key `{}`, as {file}:{line} does; rename one title, heading or file",
                    f.key
                ),
            });
            continue;
        }
        seen.insert(f.key.clone(), (f.file.clone(), f.line));
        kept.push(f);
    }
    batch.facts = kept;
    for f in &batch.facts {
        if f.value.len() > max_value_bytes {
            batch.bad.push(Bad {
                file: f.file.clone(),
                line: f.line,
                problem: format!(
                    "the value is {} bytes, more than the {max_value_bytes} mem7.yaml allows (max_value_bytes)",
                    f.value.len()
                ),
            });
            continue;
        }
        // Every field bound for the entry: the value, the key, the frontmatter's tags, and
        // the agent, which carries the folder names.
        let agent = agent_for(&f.file);
        if let Some(found) = crate::format::credential_in(&f.key, Some(&f.value), &f.tags, &agent) {
            batch.bad.push(Bad {
                file: f.file.clone(),
                line: f.line,
                problem: match found {
                    crate::error::Error::Credential { what, kind } if what == "value" => format!(
                        "looks like a credential ({kind}); mem7 refuses to write secrets into files that may be pushed to git"
                    ),
                    other => other.to_string(),
                },
            });
        }
    }
    let bad: std::collections::HashSet<(String, usize)> =
        batch.bad.iter().map(|b| (b.file.clone(), b.line)).collect();
    batch
        .facts
        .retain(|f| !bad.contains(&(f.file.clone(), f.line)));
    batch
        .bad
        .sort_by(|a, b| (&a.file, a.line).cmp(&(&b.file, b.line)));
    Ok(batch)
}

fn rel_name(root: &Path, p: &Path) -> String {
    let rel = p.strip_prefix(root).unwrap_or(p);
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    parts.join("/")
}

/// A note split into its frontmatter fields and its body (with the body's first line).
struct Split<'a> {
    fields: Vec<(String, FieldValue)>,
    body: &'a str,
    /// 1-based line of the body's first line in the file.
    body_line: usize,
}

/// Splits off a YAML frontmatter: a first line `---`, the YAML, a line `---` or `...`.
fn split<'a>(rel: &str, text: &'a str) -> std::result::Result<Split<'a>, Bad> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let first = text.lines().next().unwrap_or("");
    if first.trim_end() != "---" {
        return Ok(Split {
            fields: Vec::new(),
            body: text,
            body_line: 1,
        });
    }
    let mut offset = text.find('\n').map_or(text.len(), |i| i + 1);
    let yaml_start = offset;
    let mut line = 2;
    loop {
        if offset >= text.len() {
            return Err(Bad {
                file: rel.into(),
                line: 1,
                problem: "the frontmatter has no closing `---` line".into(),
            });
        }
        let end = text[offset..]
            .find('\n')
            .map_or(text.len(), |i| offset + i + 1);
        let l = text[offset..end].trim_end();
        if l == "---" || l == "..." {
            let yaml = &text[yaml_start..offset];
            let fields = crate::format::yaml::frontmatter(yaml).map_err(|(problem, at)| Bad {
                file: rel.into(),
                line: 1 + at.unwrap_or(1),
                problem,
            })?;
            return Ok(Split {
                fields,
                body: &text[end..],
                body_line: line + 1,
            });
        }
        offset = end;
        line += 1;
    }
}

fn scalar<'f>(fields: &'f [(String, FieldValue)], name: &str) -> Option<&'f str> {
    fields.iter().find_map(|(n, v)| match v {
        FieldValue::Scalar(s) if n == name && !s.trim().is_empty() => Some(s.trim()),
        _ => None,
    })
}

/// Tags from a `tags` field: a list, or one string of words separated by commas or
/// spaces; each made a slug (a `#` in front is dropped).
fn tags_of(fields: &[(String, FieldValue)]) -> Vec<String> {
    let raw: Vec<String> = match fields.iter().find(|(n, _)| n == "tags") {
        Some((_, FieldValue::List(items))) => items.clone(),
        Some((_, FieldValue::Scalar(s))) => s.split([',', ' ']).map(str::to_string).collect(),
        None => Vec::new(),
    };
    let mut tags: Vec<String> = Vec::new();
    for t in raw {
        let t = t.trim().trim_start_matches('#');
        if t.is_empty() {
            continue;
        }
        let t = slug(t);
        if !tags.contains(&t) {
            tags.push(t);
        }
    }
    tags
}

fn line_at(text: &str, offset: usize) -> usize {
    1 + text[..offset].bytes().filter(|&b| b == b'\n').count()
}

fn file_stem(p: &Path) -> String {
    p.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The project a Claude Code memory directory belongs to: the name of the directory
/// above `memory/` (`~/.claude/projects/<project>/memory/`), else the directory's own.
fn claude_project(dir: &Path) -> String {
    let own = dir.file_name().map(|s| s.to_string_lossy().into_owned());
    match own.as_deref() {
        Some("memory") => dir
            .parent()
            .and_then(Path::file_name)
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "memory".into()),
        Some(name) => name.to_string(),
        None => "memory".into(),
    }
}

/// A file of Claude Code's auto memory: `MEMORY.md` gives one fact per top-level
/// bullet, `claude:<project>:index:<slug>` (the slug of the topic file it links to,
/// else of its text); a topic file gives `claude:<project>:<slug of its file name>`,
/// its body as the value (its `description` when the body is empty), tagged
/// `claude-memory` and its `type`.
fn claude_file(
    rel: &str,
    path: &Path,
    dir: &Path,
    text: &str,
) -> std::result::Result<Vec<Fact>, Bad> {
    let project = slug(&claude_project(dir));
    let parts = split(rel, text)?;
    let is_index = path.file_name().is_some_and(|n| n == "MEMORY.md");
    if !is_index {
        let mut tags = vec!["claude-memory".to_string()];
        if let Some(t) = scalar(&parts.fields, "type") {
            let t = slug(t);
            if !tags.contains(&t) {
                tags.push(t);
            }
        }
        for t in tags_of(&parts.fields) {
            if !tags.contains(&t) {
                tags.push(t);
            }
        }
        let body = parts.body.trim();
        let value = if body.is_empty() {
            scalar(&parts.fields, "description")
                .unwrap_or("")
                .to_string()
        } else {
            body.to_string()
        };
        if value.is_empty() {
            return Ok(Vec::new());
        }
        let lead = parts.body.len() - parts.body.trim_start().len();
        return Ok(vec![Fact {
            key: format!("claude:{project}:{}", slug(&file_stem(path))),
            value,
            valid_from: None,
            tags,
            file: rel.into(),
            line: parts.body_line + line_at(parts.body, lead) - 1,
        }]);
    }
    let body = parts.body;
    let mut facts = Vec::new();
    let mut depth = 0usize;
    let mut link: Option<String> = None;
    let mut start = 0;
    for (event, range) in Parser::new(body).into_offset_iter() {
        match event {
            Event::Start(Tag::List(_)) => depth += 1,
            Event::End(TagEnd::List(_)) => depth = depth.saturating_sub(1),
            Event::Start(Tag::Item) if depth == 1 => {
                start = range.start;
                link = None;
            }
            Event::Start(Tag::Link { dest_url, .. }) if depth == 1 && link.is_none() => {
                let dest = dest_url.to_string();
                if dest.ends_with(".md") && !dest.contains("://") {
                    link = Some(dest);
                }
            }
            Event::End(TagEnd::Item) if depth == 1 => {
                let item = &body[start..range.end];
                let text = strip_marker(item).trim().to_string();
                if text.is_empty() {
                    continue;
                }
                let name = match &link {
                    Some(dest) => slug(&file_stem(Path::new(dest))),
                    None => slug(&text),
                };
                facts.push(Fact {
                    key: format!("claude:{project}:index:{name}"),
                    value: text,
                    valid_from: None,
                    tags: vec!["claude-memory".into(), "index".into()],
                    file: rel.into(),
                    line: parts.body_line + line_at(body, start) - 1,
                });
            }
            _ => {}
        }
    }
    Ok(facts)
}

/// A list item's text without its marker (`- `, `* `, `+ `, `1. `, `1) `).
fn strip_marker(item: &str) -> &str {
    let t = item.trim_start();
    for m in ["- ", "* ", "+ "] {
        if let Some(rest) = t.strip_prefix(m) {
            return rest;
        }
    }
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0 {
        let rest = &t[digits..];
        if let Some(r) = rest.strip_prefix(". ").or_else(|| rest.strip_prefix(") ")) {
            return r;
        }
    }
    t.trim_start_matches(['-', '*', '+'])
}

/// A frontmatter note: the key is `notes:<slug of title, else of the file name>`;
/// `date` (else `created`) gives valid_from; `tags` the tags. A body without `## `
/// headings is one fact; with them, each section is `notes:<slug>:<slug of heading>`
/// and the text before the first heading, if any, is `notes:<slug>`.
fn note_file(rel: &str, path: &Path, text: &str) -> std::result::Result<Vec<Fact>, Bad> {
    let parts = split(rel, text)?;
    let title = scalar(&parts.fields, "title")
        .map(str::to_string)
        .unwrap_or_else(|| file_stem(path));
    let base = format!("notes:{}", slug(&title));
    let field_line = |name: &str| -> usize {
        text.lines()
            .position(|l| l.trim_start().starts_with(&format!("{name}:")))
            .map_or(1, |i| i + 1)
    };
    let valid_from = match (
        scalar(&parts.fields, "date").map(|d| ("date", d)),
        scalar(&parts.fields, "created").map(|d| ("created", d)),
    ) {
        (Some((name, d)), _) | (None, Some((name, d))) => {
            Some(ValidTime::parse(d).map_err(|e| Bad {
                file: rel.into(),
                line: field_line(name),
                problem: format!("`{name}: {d}` is not a date or RFC 3339 time: {e}"),
            })?)
        }
        (None, None) => None,
    };
    let tags = tags_of(&parts.fields);
    let body = parts.body;
    // Sections: (heading text, heading offset, content start).
    let mut sections: Vec<(String, usize, usize)> = Vec::new();
    let mut in_h2: Option<(usize, String)> = None;
    for (event, range) in Parser::new(body).into_offset_iter() {
        match event {
            Event::Start(Tag::Heading {
                level: HeadingLevel::H2,
                ..
            }) => in_h2 = Some((range.start, String::new())),
            Event::Text(t) | Event::Code(t) if in_h2.is_some() => {
                if let Some((_, h)) = in_h2.as_mut() {
                    h.push_str(&t);
                }
            }
            Event::End(TagEnd::Heading(HeadingLevel::H2)) => {
                if let Some((at, h)) = in_h2.take() {
                    sections.push((h, at, range.end));
                }
            }
            _ => {}
        }
    }
    let fact = |key: String, from: usize, to: usize| -> Option<Fact> {
        let chunk = &body[from..to];
        let value = chunk.trim();
        if value.is_empty() {
            return None;
        }
        let lead = chunk.len() - chunk.trim_start().len();
        Some(Fact {
            key,
            value: value.to_string(),
            valid_from,
            tags: tags.clone(),
            file: rel.into(),
            line: parts.body_line + line_at(body, from + lead) - 1,
        })
    };
    let mut facts = Vec::new();
    let intro_end = sections.first().map_or(body.len(), |s| s.1);
    facts.extend(fact(base.clone(), 0, intro_end));
    for (i, (heading, _, content)) in sections.iter().enumerate() {
        let end = sections.get(i + 1).map_or(body.len(), |s| s.1);
        facts.extend(fact(format!("{base}:{}", slug(heading)), *content, end));
    }
    Ok(facts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_stable_key_parts() {
        for (text, want) in [
            ("Deploy runbook", "deploy-runbook"),
            ("  Where it runs?! ", "where-it-runs"),
            ("user_role", "user_role"),
            ("-home-me-src-shop", "home-me-src-shop"),
            ("Ünïcode Straße", "ünïcode-straße"),
            ("v1.2 notes", "v1.2-notes"),
            ("!!!", "untitled"),
        ] {
            assert_eq!(slug(text), want, "{text}");
            crate::core::validate::key(&format!("notes:{}", slug(text))).unwrap();
        }
        assert!(slug(&"word ".repeat(40)).len() <= SLUG_MAX);
    }

    #[test]
    fn agents_name_the_file_in_the_agent_alphabet() {
        assert_eq!(agent_for("MEMORY.md"), "import-notes/MEMORY.md");
        assert_eq!(agent_for("a dir/b:c.md"), "import-notes/a dir/b_c.md");
        crate::core::validate::agent(&agent_for(&"x".repeat(300))).unwrap();
    }

    #[test]
    fn list_markers_are_stripped() {
        assert_eq!(strip_marker("- a"), "a");
        assert_eq!(strip_marker("* a"), "a");
        assert_eq!(strip_marker("12. a"), "a");
        assert_eq!(strip_marker("3) a"), "a");
    }

    #[test]
    fn sections_start_at_their_first_line() {
        let text = "---\ntitle: T\ndate: 2026-03-01\n---\n\nintro\n\n## One\n\nfirst\n\n### deeper\n\nmore\n\n## Two\n\n\nsecond\n";
        let facts = note_file("t.md", Path::new("t.md"), text).unwrap();
        let got: Vec<(&str, &str, usize)> = facts
            .iter()
            .map(|f| (f.key.as_str(), f.value.as_str(), f.line))
            .collect();
        assert_eq!(
            got,
            [
                ("notes:t", "intro", 6),
                ("notes:t:one", "first\n\n### deeper\n\nmore", 10),
                ("notes:t:two", "second", 19),
            ]
        );
        assert_eq!(
            facts[0].valid_from,
            Some(ValidTime::parse("2026-03-01").unwrap())
        );
    }

    #[test]
    fn an_unclosed_frontmatter_is_bad() {
        let bad = note_file("t.md", Path::new("t.md"), "---\ntitle: T\n\nbody\n").unwrap_err();
        assert_eq!(
            (bad.line, bad.problem.as_str()),
            (1, "the frontmatter has no closing `---` line")
        );
    }
}
