//! The docs as tests: every relative link in `README.md` and `docs/` reaches a file that
//! exists and, when it names a heading (`file.md#heading`), a heading that exists, with
//! the anchors GitHub makes; the architecture doc stays a five-minute read; and what
//! `docs/cli.md` and `docs/agents.md` promise exists: every documented flag is in the
//! command's `--help`, every documented exit code is one the code defines (and back), every
//! documented tool annotation is the one the MCP server sends. (The walk-throughs run in
//! `tests/it/tour.rs`.)

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
        lines <= 250,
        "docs/architecture.md has {lines} lines; detail belongs in docs/internals/ or the modules' docs"
    );
}

/// The words of a text that are flags: `--name` or `-x`, standing alone (not the `-code`
/// of `claude-code`).
fn flags(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .filter(|w| {
            let name = w.trim_start_matches('-');
            matches!(w.len() - name.len(), 1 | 2)
                && name.starts_with(|c: char| c.is_ascii_lowercase())
        })
        .map(str::to_string)
        .collect()
}

/// Each `### `mem7 …`` section of docs/cli.md: the command's words (`sync`, `setup-git`)
/// and the flags its heading and its tables' first column name.
fn documented_flags() -> Vec<(Vec<String>, BTreeSet<String>)> {
    let text = std::fs::read_to_string(root().join("docs/cli.md")).unwrap();
    let mut out: Vec<(Vec<String>, BTreeSet<String>)> = Vec::new();
    for line in text.lines() {
        if let Some(heading) = line.strip_prefix("### `mem7 ") {
            let heading = heading.trim_end_matches('`');
            let command: Vec<String> = heading
                .split(' ')
                .take_while(|w| {
                    !w.is_empty() && w.chars().all(|c| c.is_ascii_lowercase() || c == '-')
                })
                .map(str::to_string)
                .collect();
            out.push((command, flags(heading).into_iter().collect()));
        } else if line.starts_with("## ") || line.starts_with("### ") {
            out.push((Vec::new(), BTreeSet::new()));
        } else if let Some(row) = line.strip_prefix("| `-")
            && let Some((_, documented)) = out.last_mut()
        {
            let first = row.split(" |").next().unwrap_or_default();
            documented.extend(flags(&format!("-{first}")));
        }
    }
    out.retain(|(command, _)| !command.is_empty());
    out
}

#[test]
fn every_flag_docs_cli_md_documents_is_in_the_commands_help() {
    let sections = documented_flags();
    assert!(sections.len() > 20, "docs/cli.md's commands: {sections:?}");
    let mut missing = Vec::new();
    let mut checked = 0;
    for (command, documented) in &sections {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_mem7"))
            .args(command)
            .arg("--help")
            .output()
            .unwrap();
        assert!(out.status.success(), "mem7 {command:?} --help failed");
        let help: BTreeSet<String> = flags(&String::from_utf8_lossy(&out.stdout))
            .into_iter()
            .collect();
        for flag in documented {
            checked += 1;
            if !help.contains(flag) {
                missing.push(format!("mem7 {} {flag}", command.join(" ")));
            }
        }
    }
    assert!(
        checked > 50,
        "docs/cli.md documents flags: {checked} checked"
    );
    assert!(
        missing.is_empty(),
        "docs/cli.md documents flags that `--help` does not know:\n{}",
        missing.join("\n")
    );
}

/// The exit codes a table under a `## Exit codes` heading of docs/cli.md lists.
pub(crate) fn documented_exit_codes() -> BTreeSet<u8> {
    let text = std::fs::read_to_string(root().join("docs/cli.md")).unwrap();
    let mut codes = BTreeSet::new();
    let mut inside = false;
    for line in text.lines() {
        if line.starts_with("## ") {
            inside = line == "## Exit codes";
        } else if inside
            && let Some(row) = line.strip_prefix("| ")
            && let Some(code) = row.split(' ').next().and_then(|c| c.parse().ok())
        {
            codes.insert(code);
        }
    }
    codes
}

/// The values of the `EXIT_…` constants defined in src/ as numbers.
fn exit_codes_in_the_code() -> BTreeSet<u8> {
    let mut codes = BTreeSet::new();
    let mut dirs = vec![root().join("src")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).unwrap();
                for line in text.lines() {
                    if let Some(rest) = line.trim().strip_prefix("pub const EXIT_")
                        && let Some((_, value)) = rest.split_once(": u8 = ")
                        && let Ok(code) = value.trim_end_matches(';').parse()
                    {
                        codes.insert(code);
                    }
                }
            }
        }
    }
    codes
}

#[test]
fn the_exit_codes_docs_cli_md_lists_are_the_codes_mem7_defines() {
    let documented = documented_exit_codes();
    assert_eq!(
        documented,
        exit_codes_in_the_code(),
        "docs/cli.md's exit code tables and the EXIT_ constants in src/ disagree"
    );
    assert!(documented.len() >= 5, "{documented:?}");
}

#[test]
fn the_tool_annotations_docs_agents_md_lists_are_the_ones_the_server_sends() {
    let text = std::fs::read_to_string(root().join("docs/agents.md")).unwrap();
    // Rows of the annotations table: `| `memory_x` | Title | `hint: value`, … |`.
    let mut documented = BTreeMap::new();
    for line in text.lines() {
        let cells: Vec<&str> = line
            .split(" | ")
            .map(|c| c.trim_matches('|').trim())
            .collect();
        if let [tool, title, hints] = cells[..]
            && let Some(tool) = tool.strip_prefix("`memory_")
        {
            let mut annotations = serde_json::Map::new();
            annotations.insert("title".into(), title.into());
            for hint in hints.split(", ") {
                let (name, value) = hint.trim_matches('`').split_once(": ").unwrap();
                annotations.insert(name.into(), serde_json::from_str(value).unwrap());
            }
            let tool = format!("memory_{}", tool.trim_end_matches('`'));
            documented.insert(tool, serde_json::Value::Object(annotations));
        }
    }
    let snapshot: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("tests/snapshots/mcp_tools.json")).unwrap(),
    )
    .unwrap();
    let tools = snapshot
        .as_array()
        .or_else(|| snapshot["tools"].as_array())
        .expect("the snapshot is the tools/list array");
    let sent: BTreeMap<String, serde_json::Value> = tools
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap().to_string(),
                t["annotations"].clone(),
            )
        })
        .collect();
    assert_eq!(
        documented, sent,
        "docs/agents.md's annotations table and tests/snapshots/mcp_tools.json (what tools/list sends) disagree"
    );
}
