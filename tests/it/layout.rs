//! The house's layout as tests (issues 13 and 37): every source file opens with a `//!`
//! line that says what it owns; every import between top-level modules of `src/` points
//! down the layers (`RANKS`), so none can form a cycle; the front ends read through the
//! engine's door; people's words are built only in the front ends (`WORDS_BELOW` names
//! what stays below, and why); comments cite only documents in the repository; the
//! integration tests are one binary of modules, no test file over 1,500 lines; and every
//! stored proptest failure sits where its test reads it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn all_sources() -> Vec<PathBuf> {
    let mut files = Vec::new();
    sources(&src(), &mut files);
    files.sort();
    files
}

#[test]
fn every_source_file_says_what_it_owns() {
    let missing: Vec<_> = all_sources()
        .into_iter()
        .filter(|p| {
            !std::fs::read_to_string(p)
                .unwrap()
                .trim_start()
                .starts_with("//!")
        })
        .collect();
    assert!(
        missing.is_empty(),
        "files without a //! opening: {missing:?}"
    );
}

/// The top-level module a file belongs to (`src/index/mod.rs` → `index`).
fn top_module(path: &Path) -> Option<String> {
    let rel = path.strip_prefix(src()).ok()?;
    let first = rel.components().next()?.as_os_str().to_str()?;
    let name = first.strip_suffix(".rs").unwrap_or(first);
    (!matches!(name, "lib" | "main")).then(|| name.to_string())
}

/// `crate::name` paths and `use crate::{a, b::c}` groups in code (comments left out).
fn imported(text: &str, modules: &BTreeSet<String>) -> BTreeSet<String> {
    let code: String = text
        .lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    let mut out = BTreeSet::new();
    for (i, _) in code.match_indices("crate::") {
        let rest = &code[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let group = &group[..group.find('}').unwrap_or(group.len())];
            for part in group.split(',') {
                let name: String = part
                    .trim()
                    .chars()
                    .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                    .collect();
                if modules.contains(&name) {
                    out.insert(name);
                }
            }
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                .collect();
            if modules.contains(&name) {
                out.insert(name);
            }
        }
    }
    out
}

/// The layers, lowest first: a top-level module may import only modules of a lower rank,
/// so the imports form no cycle and each layer can be read without the ones above it.
/// Modules of one rank are siblings that never import each other. A new top-level module
/// gets a rank here.
const RANKS: &[(&str, u8)] = &[
    // Pure rules: the temporal kernel (instants, the fold, the chain), and beside it
    // the text heuristics (credentials, drift, look-alike names); capture's hook rules.
    ("core", 0),
    ("text", 0),
    ("capture", 1),
    ("error", 1),
    // Entries as bytes; embedding providers.
    ("format", 2),
    ("embed", 2),
    ("config", 3),
    // The workspace on disk, then what is derived from it.
    ("store", 4),
    ("index", 5),
    ("verify", 6),
    // The imperative shell over the core: the one door into the index.
    ("engine", 7),
    ("sync", 8),
    // What every front end stands on: the environment, request checks, words, scopes.
    ("front", 9),
    // The long-running machinery: the watch loop, the vector fill, file events.
    ("live", 10),
    // The front ends.
    ("transfer", 11),
    ("mcp", 11),
    ("view", 11),
    ("cli", 12),
    // The fuzz targets' bodies drive whatever they test.
    ("fuzz", 13),
];

/// Each top-level module's imports of other top-level modules, code only.
fn module_imports() -> BTreeMap<String, BTreeSet<String>> {
    let files = all_sources();
    let modules: BTreeSet<String> = files.iter().filter_map(|p| top_module(p)).collect();
    let mut deps: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in &files {
        let Some(top) = top_module(f) else { continue };
        let text = std::fs::read_to_string(f).unwrap();
        let entry = deps.entry(top.clone()).or_default();
        entry.extend(imported(&text, &modules).into_iter().filter(|m| *m != top));
    }
    deps
}

/// What breaks the layers in `deps` (module → the modules it imports).
fn layer_problems(deps: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let rank = |m: &str| RANKS.iter().find(|(n, _)| *n == m).map(|(_, r)| *r);
    let mut problems = Vec::new();
    for (module, imports) in deps {
        let Some(own) = rank(module) else {
            problems.push(format!(
                "src/{module}: a top-level module without a rank (give it one in RANKS)"
            ));
            continue;
        };
        for import in imports {
            if let Some(r) = rank(import).filter(|&r| r >= own) {
                problems.push(format!(
                    "{module} (rank {own}) imports {import} (rank {r}): a layer may import only the layers below it"
                ));
            }
        }
    }
    problems
}

#[test]
fn every_import_points_down_the_layers() {
    let problems = layer_problems(&module_imports());
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // The check itself: an import up the layers, a sibling's and an unranked module fail.
    let bad: BTreeMap<String, BTreeSet<String>> = [
        ("engine", &["front", "index"][..]),
        ("mcp", &["view"][..]),
        ("newroom", &["core"][..]),
    ]
    .into_iter()
    .map(|(m, d)| (m.to_string(), d.iter().map(|s| s.to_string()).collect()))
    .collect();
    let found = layer_problems(&bad);
    assert_eq!(found.len(), 3, "{found:#?}");
    assert!(
        found[0].starts_with("engine (rank 7) imports front (rank 9)"),
        "{found:#?}"
    );
    assert!(
        found[1].starts_with("mcp (rank 11) imports view (rank 11)"),
        "{found:#?}"
    );
    assert!(found[2].contains("src/newroom"), "{found:#?}");
}

/// Files in `src/` longer than this must say in their opening why they are long.
const ROOM: usize = 600;

#[test]
fn no_source_file_is_too_big_to_hold_in_ones_head() {
    let too_long: Vec<String> = all_sources()
        .into_iter()
        .filter_map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            let lines = text.lines().count();
            let opening: String = text
                .lines()
                .take_while(|l| l.starts_with("//!"))
                .collect::<Vec<_>>()
                .join("\n");
            (lines > ROOM && !opening.contains("Why this file is long:")).then(|| {
                format!(
                    "{} ({lines} lines)",
                    p.strip_prefix(src()).unwrap().display()
                )
            })
        })
        .collect();
    assert!(
        too_long.is_empty(),
        "split these by responsibility, or say in their `//!` opening \"Why this file is long: …\":\n{}",
        too_long.join("\n")
    );
}

/// The front ends: every module that answers a person or a model.
const FRONT_ENDS: [&str; 5] = ["cli", "mcp", "view", "front", "transfer"];

#[test]
fn front_ends_go_through_the_one_door_and_never_touch_the_index() {
    let modules: BTreeSet<String> = all_sources().iter().filter_map(|p| top_module(p)).collect();
    let mut offenders = Vec::new();
    for path in all_sources() {
        let Some(top) = top_module(&path) else {
            continue;
        };
        if !FRONT_ENDS.contains(&top.as_str()) {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let code: String = text
            .lines()
            .map(|l| l.split("//").next().unwrap_or(""))
            .collect::<Vec<_>>()
            .join("\n");
        let rel = path.strip_prefix(src()).unwrap().display().to_string();
        if imported(&code, &modules).contains("index") {
            offenders.push(format!(
                "{rel}: imports crate::index (use crate::engine's types)"
            ));
        }
        if code.contains(".index()") {
            offenders.push(format!(
                "{rel}: calls .index() (read through an Engine method)"
            ));
        }
    }
    assert!(
        offenders.is_empty(),
        "front ends read and write through the engine's door (src/engine/api.rs):\n{}",
        offenders.join("\n")
    );
}

/// The front ends that answer people and models (`cli`, `mcp`, `view`) read across scopes
/// through the engine's one door, [`mem7::engine::Scopes`] (issue 37): none calls an
/// engine's reads itself, or opens scopes of its own (only `front/workspaces.rs` and
/// the MCP write's `mcp/support.rs` hold an engine in a scope).
#[test]
fn front_ends_read_across_scopes_through_the_scopes_door() {
    let read = regex::Regex::new(r"\bengine\s*\.\s*(recall|list|history|search|search_tier)\s*\(")
        .unwrap();
    let mut offenders = Vec::new();
    for path in all_sources() {
        let rel = path.strip_prefix(src()).unwrap().display().to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        let code: String = text
            .lines()
            .map(|l| l.split("//").next().unwrap_or(""))
            .collect::<Vec<_>>()
            .join("\n");
        if ["cli/", "mcp/", "view/"].iter().any(|f| rel.starts_with(f))
            && let Some(m) = read.find(&code)
        {
            offenders.push(format!(
                "{rel}: `{}` reads one workspace (read through Scopes: front::workspaces::open or ::around)",
                m.as_str()
            ));
        }
        let allowed = ["front/workspaces.rs", "mcp/support.rs", "engine/scopes.rs"];
        if (code.contains("Held::Own") || code.contains("Held::Lent"))
            && !allowed.contains(&rel.as_str())
        {
            offenders.push(format!(
                "{rel}: builds scopes itself (open them with front::workspaces)"
            ));
        }
    }
    assert!(offenders.is_empty(), "{}", offenders.join("\n"));
}

/// Comments cite only documents a reader of the repository has: every `docs/….md` a
/// source file names exists, and none cites the design brief that is not in the
/// repository (`DESIGN §n`).
#[test]
fn comments_cite_only_documents_in_the_repository() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let cited = regex::Regex::new(r"docs/[A-Za-z0-9_./-]+\.md").unwrap();
    let mut problems = Vec::new();
    for path in all_sources() {
        let rel = path.strip_prefix(src()).unwrap().display().to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        for (n, line) in text.lines().enumerate() {
            if line.contains("DESIGN §") || line.contains("DESIGN.md") {
                problems.push(format!("src/{rel}:{}: cites the design brief, which is not in the repository (cite docs/)", n + 1));
            }
            for m in cited.find_iter(line) {
                if !root.join(m.as_str()).is_file() {
                    problems.push(format!(
                        "src/{rel}:{}: cites {}, which does not exist",
                        n + 1,
                        m.as_str()
                    ));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The integration tests are one binary (`tests/it/`, issue 25): a `.rs` file directly
/// under `tests/`, or another `tests/*/main.rs`, would be a test binary of its own that
/// links the library again and leaves the shared environment (`tests/it/world.rs`). Every
/// file of `tests/it/` is a module `main.rs` names, and opens with its `//!` line.
#[test]
fn the_integration_tests_are_one_binary_of_modules_that_say_what_they_own() {
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut problems = Vec::new();
    for entry in std::fs::read_dir(&tests).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.extension().is_some_and(|e| e == "rs") {
            problems.push(format!("tests/{name}: move it into tests/it/ as a module"));
        } else if path.join("main.rs").is_file() && name != "it" {
            problems.push(format!("tests/{name}/main.rs: a second test binary"));
        }
    }
    let it = tests.join("it");
    let main = std::fs::read_to_string(it.join("main.rs")).unwrap();
    let mut files = Vec::new();
    sources(&it, &mut files);
    for path in files {
        let rel = path.strip_prefix(&it).unwrap().display().to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        if !text.trim_start().starts_with("//!") {
            problems.push(format!("tests/it/{rel}: no `//!` line saying what it owns"));
        }
        let module = rel.trim_end_matches(".rs");
        if rel != "main.rs" && !module.contains('/') && !main.contains(&format!("mod {module};")) {
            problems.push(format!(
                "tests/it/{rel}: not named in main.rs, so never compiled"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Where proptest reads a source file's stored failures (its default,
/// `FileFailurePersistence::SourceParallel("proptest-regressions")`): up from the file to
/// the nearest folder holding a `lib.rs` or `main.rs`, then beside that folder, under
/// `proptest-regressions/`, at the file's path below it with `.txt` for `.rs`
/// (`tests/it/properties.rs` → `tests/proptest-regressions/properties.txt`).
fn regressions_file_of(source: &Path) -> Option<PathBuf> {
    let mut dir = source.to_path_buf();
    while dir.pop() {
        if dir.join("lib.rs").is_file() || dir.join("main.rs").is_file() {
            let below = source.strip_prefix(&dir).ok()?;
            return Some(
                dir.parent()?
                    .join("proptest-regressions")
                    .join(below)
                    .with_extension("txt"),
            );
        }
    }
    None
}

/// Every file under a `proptest-regressions` folder of the repository (build output and
/// git's own folder left out).
fn stored_regressions(dir: &Path, inside: bool, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            if !matches!(name.as_str(), "target" | ".git" | "node_modules") {
                stored_regressions(&path, inside || name == "proptest-regressions", out);
            }
        } else if inside {
            out.push(path);
        }
    }
}

/// A stored proptest failure replays only from the file proptest looks in, which follows
/// the test's source path: a rename or a move of the tests leaves the file behind, and its
/// seeds silently stop running (issue 37: `proptest-regressions/merge.txt` outlived
/// `src/merge.rs`). Every stored file must be the one a source file with property tests
/// reads, and no test may move its file elsewhere (a persistence setting), so that this
/// check and proptest agree on where seeds live.
#[test]
fn every_stored_proptest_failure_sits_where_its_test_reads_it() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut sources_ = Vec::new();
    sources(&root.join("src"), &mut sources_);
    sources(&root.join("tests"), &mut sources_);
    let mut problems = Vec::new();
    let mut read: BTreeMap<PathBuf, PathBuf> = BTreeMap::new();
    for source in &sources_ {
        let text = std::fs::read_to_string(source).unwrap();
        let rel = source.strip_prefix(root).unwrap().display().to_string();
        if text.contains(&["failure", "_persistence"].concat()) {
            problems.push(format!(
                "{rel}: sets where failures are stored; keep proptest's default so that this test knows where seeds are read"
            ));
        }
        if text.contains(&["proptest", "!"].concat()) {
            match regressions_file_of(source) {
                Some(file) => {
                    read.insert(file, source.clone());
                }
                None => problems.push(format!(
                    "{rel}: property tests outside a folder with lib.rs or main.rs above them"
                )),
            }
        }
    }
    let mut stored = Vec::new();
    stored_regressions(root, false, &mut stored);
    for file in stored {
        if !read.contains_key(&file) {
            let rel = file.strip_prefix(root).unwrap().display().to_string();
            problems.push(format!(
                "{rel}: no test reads it (proptest reads {}); move its seeds to the file of the source that holds the test now",
                read.keys()
                    .map(|f| f.strip_prefix(root).unwrap().display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Test files longer than this are split by topic into modules (issue 37).
const TEST_ROOM: usize = 1500;

/// A test file is read as a whole when a test fails or one is added beside its kin:
/// past 1,500 lines it holds several topics, and a newcomer cannot find the one to
/// read. Every `.rs` file under `tests/` is held to it, naming the ones over.
#[test]
fn no_test_file_is_over_1500_lines() {
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut files = Vec::new();
    sources(&tests, &mut files);
    files.sort();
    let too_long: Vec<String> = files
        .iter()
        .filter_map(|p| {
            let lines = std::fs::read_to_string(p).unwrap().lines().count();
            (lines > TEST_ROOM).then(|| {
                format!(
                    "tests/{} ({lines} lines)",
                    p.strip_prefix(&tests).unwrap().display()
                )
            })
        })
        .collect();
    assert!(
        too_long.is_empty(),
        "split these test files by topic into modules of at most {TEST_ROOM} lines:\n{}",
        too_long.join("\n")
    );
}
/// Lines a non-test function in `src/` may run to, counted from its `fn` line to its
/// closing brace: past this it answers more than one question (issue 37).
const LONGEST_FUNCTION: usize = 120;

/// The lines of a source text before its `#[cfg(test)]` module.
fn before_tests(text: &str) -> Vec<&str> {
    text.lines()
        .take_while(|l| l.trim() != "#[cfg(test)]")
        .collect()
}

/// The functions of one source text longer than `LONGEST_FUNCTION`, as (name, lines), read
/// textually: a `fn` line at some indent runs to the first `}` line at the same indent; a
/// declaration or a one-line body has none. The text stops at `#[cfg(test)]`.
fn long_functions(text: &str) -> Vec<(String, usize)> {
    let lines = &before_tests(text)[..];
    let mut long = Vec::new();
    for (start, line) in lines.iter().enumerate() {
        let code = line.trim_start();
        let indent = &line[..line.len() - code.len()];
        let Some(name) = fn_name(code) else { continue };
        let head = code.split("//").next().unwrap_or("").trim_end();
        if head.ends_with(';') || head.ends_with('}') {
            continue;
        }
        let close = lines[start + 1..].iter().position(|l| {
            let rest = l.strip_prefix(indent).unwrap_or("");
            let at_indent = !rest.is_empty() && !rest.starts_with(char::is_whitespace);
            // Past the signature, a line at the fn's own indent either closes it or
            // begins another item (the fn had no body of its own).
            at_indent && !["{", ")", ">", "where"].iter().any(|s| rest.starts_with(s))
        });
        if let Some(offset) = close {
            let length = offset + 2;
            let closes = lines[start + 1 + offset]
                .strip_prefix(indent)
                .is_some_and(|r| r.starts_with('}'));
            if closes && length > LONGEST_FUNCTION {
                long.push((name, length));
            }
        }
    }
    long
}

/// The name a line declares a function by (`pub(crate) async fn name<…>(` → `name`).
fn fn_name(code: &str) -> Option<String> {
    let mut words = code.split_whitespace();
    while let Some(word) = words.next() {
        match word {
            "fn" => {
                let name: String = words
                    .next()?
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                return (!name.is_empty()).then_some(name);
            }
            w if w.starts_with("pub")
                || ["async", "const", "unsafe", "extern", "\"C\""].contains(&w) => {}
            _ => return None,
        }
    }
    None
}

#[test]
fn no_function_answers_more_than_one_question() {
    let mut problems = Vec::new();
    for path in all_sources() {
        let rel = path.strip_prefix(src()).unwrap();
        let is_test = rel.file_name().is_some_and(|n| n == "tests.rs")
            || rel.components().any(|c| c.as_os_str() == "tests");
        if is_test {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        for (name, length) in long_functions(&text) {
            problems.push(format!("src/{}: {name} ({length} lines)", rel.display()));
        }
    }
    assert!(
        problems.is_empty(),
        "split these into functions that each answer one question (at most {LONGEST_FUNCTION} lines):\n{}",
        problems.join("\n")
    );
    // The check itself: a long function fails by name, whatever its signature's shape; a
    // short one, a declaration, a one-line body and anything after `#[cfg(test)]` pass.
    let body = "        step();\n".repeat(LONGEST_FUNCTION);
    let synthetic = format!(
        "pub trait T {{\n    fn declared(&self);\n}}\n\
         fn short() {{\n    one();\n}}\n\
         fn one_line() {{ one() }}\n\
         impl S {{\n    pub(crate) async fn long<A>(\n        a: A,\n    ) -> u8\n    where\n        A: Copy,\n    {{\n{body}    }}\n}}\n\
         #[cfg(test)]\nmod tests {{\n    fn long_test() {{\n{body}    }}\n}}\n"
    );
    assert_eq!(
        long_functions(&synthetic),
        vec![("long".to_string(), LONGEST_FUNCTION + 7)]
    );
}

/// Doc-comment words that say a function words something for people (whole words).
const WORDING_DOCS: &str = r"\b(for a person|for people|in words|tell a person|as people read)\b";

/// Wording that stays below the front ends, each with its reason: (file under `src/`,
/// the function or type, why). Kept small; a stale entry fails too.
const WORDS_BELOW: &[(&str, &str, &str)] = &[
    (
        "core/time.rs",
        "span_text",
        "a duration in words, said by verify's finding about an entry ahead of the clock \
         (its report's content) and by the front ends' notes: one wording at rank 0, so \
         that neither reaches into the other or into index for it",
    ),
    (
        "core/integrity.rs",
        "message",
        "a chain finding's message is verify's report, which `verify --json` carries as \
         it is: the report is the content, worded where the findings are made",
    ),
    (
        "index/report.rs",
        "RebuildReason",
        "the cause an error names where it is raised (the engine's busy error, for a \
         writer that must not wait for a rebuild); the front ends' `reindexed (…)` says \
         the same cause in the same words",
    ),
    (
        "store/guard.rs",
        "describe",
        "the file an error refuses to write through (raised in store), and the one \
         verify's finding names: words of the error channel and of verify's report",
    ),
    (
        "verify/mod.rs",
        "count_accepted",
        "a seal entry's body is memory written by the engine (\"accepted 2 entries as they \
         are now\"), and the CLI says the same count; it counts verify's findings",
    ),
];

/// The people's words one source text builds, as (line, item, how found): a `Display`
/// impl that writes a phrase (a string literal with two words), a function named
/// `describe…`, or a function whose doc comment says it words something for people
/// ([`WORDING_DOCS`]). An error's words are the error channel: functions an
/// `#[error(…)]` attribute calls and `Display` impls of types named `…Error` pass. The
/// text stops at `#[cfg(test)]`.
fn wording(text: &str) -> Vec<(usize, String, &'static str)> {
    let lines = &before_tests(text)[..];
    let called = regex::Regex::new(r"([a-z_][a-z0-9_]*)\(").unwrap();
    let for_errors: BTreeSet<String> = lines
        .iter()
        .filter(|l| l.trim_start().starts_with("#[error("))
        .flat_map(|l| called.captures_iter(l).map(|c| c[1].to_string()))
        .collect();
    let display =
        regex::Regex::new(r"^\s*impl\b.*\bDisplay\s+for\s+([A-Za-z_][A-Za-z0-9_]*)").unwrap();
    let phrase = regex::Regex::new(r#""[^"]*[A-Za-z]+ [A-Za-z]+[^"]*""#).unwrap();
    let docs = regex::Regex::new(WORDING_DOCS).unwrap();
    let mut found = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if let Some(c) = display.captures(line) {
            let name = c[1].to_string();
            let indent = &line[..line.len() - line.trim_start().len()];
            let close = lines[i + 1..]
                .iter()
                .position(|l| l.strip_prefix(indent).is_some_and(|r| r.starts_with('}')))
                .map_or(lines.len(), |o| i + 1 + o);
            let writes_phrase = lines[i..close]
                .iter()
                .any(|l| phrase.is_match(l.split("//").next().unwrap_or("")));
            if writes_phrase && !name.ends_with("Error") {
                found.push((i + 1, name, "a Display that writes a phrase"));
            }
            continue;
        }
        let Some(name) = fn_name(line.trim_start()) else {
            continue;
        };
        if for_errors.contains(&name) {
            continue;
        }
        // The doc comment above the fn (attributes between), as one text.
        let above = lines[..i]
            .iter()
            .rev()
            .map(|l| l.trim())
            .take_while(|l| l.starts_with("///") || l.starts_with("#["))
            .count();
        let doc: String = lines[i - above..i]
            .iter()
            .filter_map(|l| l.trim().strip_prefix("///"))
            .collect::<Vec<_>>()
            .join(" ")
            .to_lowercase();
        if name.starts_with("describe") {
            found.push((i + 1, name, "a function named describe…"));
        } else if docs.is_match(&doc) {
            found.push((
                i + 1,
                name,
                "a function whose doc says it words something for people",
            ));
        }
    }
    found
}

/// People's words are chosen in the front ends (issue 37): the layers below `front`
/// return data (records, enums, times) and `front` (`front/said.rs`, `render.rs`,
/// `notes.rs`) words it, so that one sentence is written once and a lower layer never
/// reaches up, or sideways into `index`, for a sentence. Errors are the exception: they
/// are worded where they are raised. What else stays below is named in [`WORDS_BELOW`]
/// with its reason.
#[test]
fn peoples_words_are_built_only_in_the_front_ends() {
    let rank = |m: &str| RANKS.iter().find(|(n, _)| *n == m).map(|(_, r)| *r);
    let front = rank("front").unwrap();
    let mut problems = Vec::new();
    let mut allowed_seen = BTreeSet::new();
    for path in all_sources() {
        let Some(top) = top_module(&path) else {
            continue;
        };
        if rank(&top).is_none_or(|r| r >= front) {
            continue;
        }
        let rel = path.strip_prefix(src()).unwrap().display().to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        for (line, item, how) in wording(&text) {
            if WORDS_BELOW.iter().any(|(f, n, _)| *f == rel && *n == item) {
                allowed_seen.insert((rel.clone(), item));
                continue;
            }
            problems.push(format!(
                "src/{rel}:{line}: `{item}`, {how}: return data and word it in a front end (front/said.rs), or name it in WORDS_BELOW with the reason it must stay"
            ));
        }
    }
    for (f, n, _) in WORDS_BELOW {
        if !allowed_seen.contains(&(f.to_string(), n.to_string())) {
            problems.push(format!(
                "WORDS_BELOW names src/{f} `{n}`, which builds no words there now: remove the entry"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // The check itself: a Display writing a phrase, a `describe`, a function whose doc
    // says it is for people are found by line; a Display writing a token, an error's
    // Display and the function its `#[error]` calls, and tests pass.
    let synthetic = "\
impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, \"{} was edited\", self.0)
    }
}
impl std::fmt::Display for Hash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.to_hex())
    }
}
impl Display for ParseError {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(\"cannot read it\")
    }
}
#[error(\"{}\", explain(.text))]
pub struct TimeError;
fn explain(text: &str) -> String {
    format!(\"cannot read {text}\")
}
impl Ahead {
    pub fn describe(&self) -> String {
        String::new()
    }
}
/// A duration (what a person reads
/// in words).
#[must_use]
pub fn span(micros: i64) -> String {
    String::new()
}
/// The key's words, spaced, and plain words before it.
fn phrase(&self) -> String {
    String::new()
}
#[cfg(test)]
mod tests {
    fn describe_all() {}
}
";
    let found: Vec<(usize, String)> = wording(synthetic)
        .into_iter()
        .map(|(l, n, _)| (l, n))
        .collect();
    assert_eq!(
        found,
        [
            (1, "Reason".to_string()),
            (22, "describe".to_string()),
            (29, "span".to_string())
        ]
    );
}
