//! The docs as tests: every relative link in `README.md` and `docs/` reaches a file that
//! exists and, when it names a heading (`file.md#heading`), a heading that exists, with
//! the anchors GitHub makes; and the architecture doc stays a five-minute read.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use pulldown_cmark::{Event, Parser, Tag, TagEnd};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn markdown_files() -> Vec<PathBuf> {
    let mut files = vec![root().join("README.md")];
    let mut dirs = vec![root().join("docs")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// GitHub's anchor for a heading's text: lower case, letters, digits, `-` and `_` kept,
/// spaces turned into `-`, everything else dropped; a repeated anchor gets `-1`, `-2`, ….
fn slug(text: &str) -> String {
    text.chars()
        .flat_map(char::to_lowercase)
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// A file's heading anchors, and its links (target, line).
type Read = (BTreeSet<String>, Vec<(String, usize)>);

/// The anchors of a file's headings, and its links (target, line).
fn read(path: &Path) -> Read {
    let text = std::fs::read_to_string(path).unwrap();
    let mut anchors = BTreeSet::new();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut links = Vec::new();
    let mut heading: Option<String> = None;
    for (event, range) in Parser::new(&text).into_offset_iter() {
        let line = text[..range.start].matches('\n').count() + 1;
        match event {
            Event::Start(Tag::Heading { .. }) => heading = Some(String::new()),
            Event::End(TagEnd::Heading(_)) => {
                let base = slug(&heading.take().unwrap_or_default());
                let n = seen.entry(base.clone()).or_insert(0);
                anchors.insert(if *n == 0 { base } else { format!("{base}-{n}") });
                *n += 1;
            }
            Event::Text(t) | Event::Code(t) => {
                if let Some(h) = heading.as_mut() {
                    h.push_str(&t);
                }
            }
            Event::Start(Tag::Link { dest_url, .. }) => links.push((dest_url.to_string(), line)),
            _ => {}
        }
    }
    (anchors, links)
}

#[test]
fn every_relative_link_in_the_docs_reaches_its_file_and_heading() {
    let files = markdown_files();
    let read_all: BTreeMap<PathBuf, Read> = files
        .iter()
        .map(|f| (f.canonicalize().unwrap(), read(f)))
        .collect();
    let mut broken = Vec::new();
    let mut checked = 0;
    for (file, (_, links)) in &read_all {
        for (dest, line) in links {
            if dest.contains("://") || dest.starts_with("mailto:") {
                continue;
            }
            let (path, anchor) = match dest.split_once('#') {
                Some((p, a)) => (p, Some(a)),
                None => (dest.as_str(), None),
            };
            let target = if path.is_empty() {
                file.clone()
            } else {
                file.parent().unwrap().join(path)
            };
            let shown = format!(
                "{}:{line}: {dest}",
                file.strip_prefix(root().canonicalize().unwrap())
                    .unwrap()
                    .display()
            );
            checked += 1;
            let Ok(target) = target.canonicalize() else {
                broken.push(format!("{shown} (no such file)"));
                continue;
            };
            if let Some(anchor) = anchor {
                match read_all.get(&target) {
                    Some((anchors, _)) if anchors.contains(anchor) => {}
                    Some(_) => broken.push(format!("{shown} (no such heading)")),
                    None => broken.push(format!(
                        "{shown} (an anchor into a file that is not markdown)"
                    )),
                }
            }
        }
    }
    assert!(
        checked > 50,
        "the docs link to each other: {checked} links found"
    );
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_slug_is_githubs() {
    assert_eq!(
        slug("Checking the index (verify --index)"),
        "checking-the-index-verify---index"
    );
    assert_eq!(slug("mem7 sync [--remote NAME]"), "mem7-sync---remote-name");
    assert_eq!(slug("Bird's-eye view"), "birds-eye-view");
}

#[test]
fn the_architecture_doc_is_a_five_minute_read() {
    let text = std::fs::read_to_string(root().join("docs/architecture.md")).unwrap();
    let lines = text.lines().count();
    assert!(
        lines <= 300,
        "docs/architecture.md has {lines} lines; detail belongs in docs/internals/ or the modules' docs"
    );
}
