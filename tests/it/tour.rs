//! The docs' walk-throughs as tests, run from the docs' own text: README.md's tour and
//! docs/sync.md's two machines, line by line in bash, in scratch homes, with the machine's
//! real clock and the binary cargo built first on `PATH`. Each `# → …` comment of the tour
//! and each output the sync walk-through shows is checked against what the line printed,
//! so a doc that drifts from the binary fails here.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use pulldown_cmark::{CodeBlockKind, Event, Parser, Tag, TagEnd};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn doc(name: &str) -> String {
    std::fs::read_to_string(root().join(name)).unwrap()
}

/// Tour lines the test does not run, each with its reason: the first part of the line
/// (or a flag in it) and why.
const SKIPPED: &[(&str, &str)] = &[
    (
        "cargo install",
        "the test runs the binary cargo built for it, first on PATH",
    ),
    (
        "mem7 ui",
        "serves a page until stopped (tests/it/ui.rs drives it)",
    ),
    (
        "mem7 watch",
        "runs until stopped (tests/it/watch.rs drives it)",
    ),
    (
        "--mode semantic",
        "needs the local model or a provider (tests/it/local_model.rs)",
    ),
];

/// A fenced code block of a doc: its language, its text, and the paragraph before it.
struct Block {
    lang: String,
    text: String,
    before: String,
}

/// The fenced code blocks under the heading `title`, up to the next heading of the same
/// or a higher level.
fn blocks(text: &str, title: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let (mut heading, mut level, mut inside) = (None::<String>, None, false);
    let mut para = String::new();
    let mut before = String::new();
    let mut code: Option<(String, String)> = None;
    for event in Parser::new(text) {
        match event {
            Event::Start(Tag::Heading { level: l, .. }) => {
                if inside && level.is_some_and(|at| l <= at) {
                    break;
                }
                heading = Some(String::new());
                if !inside {
                    level = Some(l);
                }
            }
            Event::End(TagEnd::Heading(_)) if heading.take().is_some_and(|h| h == title) => {
                inside = true;
            }
            Event::End(TagEnd::Heading(_)) => {}
            Event::Start(Tag::Paragraph) => para.clear(),
            Event::End(TagEnd::Paragraph) => before = para.clone(),
            Event::Start(Tag::CodeBlock(kind)) => {
                let lang = match kind {
                    CodeBlockKind::Fenced(lang) => lang.to_string(),
                    CodeBlockKind::Indented => String::new(),
                };
                code = Some((lang, String::new()));
            }
            Event::End(TagEnd::CodeBlock) => {
                if let Some((lang, text)) = code.take()
                    && inside
                {
                    out.push(Block {
                        lang,
                        text,
                        before: before.clone(),
                    });
                }
            }
            Event::Text(t) | Event::Code(t) => {
                if let Some(h) = heading.as_mut() {
                    h.push_str(&t);
                } else if let Some((_, text)) = code.as_mut() {
                    text.push_str(&t);
                } else {
                    para.push_str(&t);
                }
            }
            Event::SoftBreak => para.push(' '),
            _ => {}
        }
    }
    assert!(inside, "no heading {title:?}");
    out
}

/// What one line printed.
struct Outcome {
    code: String,
    stdout: String,
    stderr: String,
}

impl Outcome {
    /// Standard output then standard error: what a reader sees of the line.
    fn seen(&self) -> String {
        format!("{}{}", self.stdout, self.stderr)
    }
}

/// One bash process, fed a line at a time, so `cd`, `export` and shell variables carry
/// from line to line as in the reader's terminal. Each line's output goes to files; the
/// process's own standard output only says when a line is done.
struct Shell {
    child: Child,
    stdin: ChildStdin,
    done: BufReader<ChildStdout>,
    io: PathBuf,
}

impl Shell {
    /// A shell whose home is `home` (created), with mem7 first on `PATH` and nothing else
    /// of the test's environment; `io` is a scratch folder for the lines' output.
    fn new(home: &Path, io: &Path) -> Shell {
        std::fs::create_dir_all(home).unwrap();
        std::fs::create_dir_all(io).unwrap();
        let bin = Path::new(env!("CARGO_BIN_EXE_mem7")).parent().unwrap();
        let path = format!(
            "{}:{}",
            bin.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let mut child = Command::new("bash")
            .args(["--noprofile", "--norc"])
            .current_dir(home)
            .env_clear()
            .env("HOME", home)
            .env("PATH", path)
            .env("LANG", "C.UTF-8")
            // The system's git configuration is not the reader's: a fresh machine is.
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("bash runs the docs' lines");
        let stdin = child.stdin.take().unwrap();
        let done = BufReader::new(child.stdout.take().unwrap());
        Shell {
            child,
            stdin,
            done,
            io: io.to_path_buf(),
        }
    }

    /// Runs one line as a reader would type it, and returns what it printed.
    fn run(&mut self, line: &str) -> Outcome {
        let io = self.io.display();
        // The braces keep the line in this shell (a `cd` or an `export` stays); the
        // newline ends a trailing comment; standard input is not the script's.
        writeln!(
            self.stdin,
            "{{ {line}\n}} </dev/null >'{io}/out' 2>'{io}/err'; echo $? >'{io}/code'; echo done"
        )
        .unwrap();
        self.stdin.flush().unwrap();
        let mut said = String::new();
        self.done.read_line(&mut said).unwrap();
        assert_eq!(said, "done\n", "the shell stopped after: {line}");
        let read = |name: &str| std::fs::read_to_string(self.io.join(name)).unwrap_or_default();
        Outcome {
            code: read("code").trim().to_string(),
            stdout: read("out"),
            stderr: read("err"),
        }
    }
}

impl Drop for Shell {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The outcome a tour line's comment promises: the text after `# → `, up to ` (` where
/// an explanation starts.
fn promised(line: &str) -> Option<&str> {
    let (_, after) = line.split_once("# → ")?;
    Some(after.split(" (").next().unwrap().trim())
}

fn skipped(line: &str) -> Option<&'static str> {
    SKIPPED
        .iter()
        .find(|(part, _)| line.starts_with(part) || line.contains(&format!(" {part}")))
        .map(|(_, why)| *why)
}

#[test]
fn the_readme_tour_runs_as_written_and_prints_what_its_comments_say() {
    let readme = doc("README.md");
    let tour = blocks(&readme, "A two-minute tour");
    let tour = tour
        .iter()
        .find(|b| b.lang == "sh")
        .expect("the tour is a sh block");
    let lines: Vec<&str> = tour.text.lines().filter(|l| !l.trim().is_empty()).collect();

    // What the tour promises to show, before it is run.
    let at = |part: &str| {
        lines
            .iter()
            .position(|l| l.contains(part))
            .unwrap_or_else(|| panic!("the tour has no line with {part:?}"))
    };
    assert!(
        promised(lines[at("--as-of")]).is_some(),
        "the tour's --as-of read shows its answer"
    );
    assert!(
        at("git init") < at("mem7 sync"),
        "the tour makes a git repository before it syncs"
    );
    at("git diff");
    for (part, _) in SKIPPED {
        assert!(
            lines
                .iter()
                .any(|l| skipped(l).is_some() && l.contains(part)),
            "SKIPPED names {part:?}, which the tour no longer has: drop it from the list"
        );
    }

    let dir = tempfile::tempdir().unwrap();
    let mut shell = Shell::new(&dir.path().join("home"), &dir.path().join("io"));
    let mut wrong = Vec::new();
    let mut checked = 0;
    for line in &lines {
        if skipped(line).is_some() {
            continue;
        }
        let got = shell.run(line);
        if got.code != "0" {
            wrong.push(format!(
                "{line}\n  exited {}:\n{}",
                got.code,
                got.seen().trim_end()
            ));
        } else if let Some(want) = promised(line) {
            checked += 1;
            if !got.seen().contains(want) {
                wrong.push(format!(
                    "{line}\n  promises {want:?}, printed:\n{}",
                    got.seen().trim_end()
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "README.md's tour and the binary disagree:\n\n{}",
        wrong.join("\n\n")
    );
    assert!(
        checked >= 10,
        "the tour shows its outcomes: {checked} checked"
    );
}

#[test]
fn the_sync_walk_through_runs_on_two_machines_as_written() {
    let sync = doc("docs/sync.md");
    let blocks = blocks(&sync, "Two machines, step by step");
    let dir = tempfile::tempdir().unwrap();
    // The shared repository both machines reach, in place of the doc's `/shared`.
    let shared = dir.path().join("shared");
    let mut first = Shell::new(&dir.path().join("first"), &dir.path().join("io1"));
    let mut second = Shell::new(&dir.path().join("second"), &dir.path().join("io2"));
    let mut ran = 0;
    let mut shown = 0;
    // The last line run, on which machine, and what it printed.
    let mut last: Option<(String, Outcome)> = None;
    for block in &blocks {
        if block.lang == "sh" {
            let machine = if block.before.contains("second machine") {
                &mut second
            } else if block.before.contains("first machine") {
                &mut first
            } else {
                panic!(
                    "docs/sync.md: which machine runs this block? {:?}",
                    block.before
                );
            };
            for line in block.text.lines().filter(|l| !l.trim().is_empty()) {
                let run = line.replace("/shared", &shared.display().to_string());
                let got = machine.run(&run);
                assert_eq!(
                    got.code,
                    "0",
                    "docs/sync.md: {line}\n{}",
                    got.seen().trim_end()
                );
                ran += 1;
                last = Some((line.to_string(), got));
            }
        } else if block.lang.is_empty() {
            // The output of the line just run, as the doc shows it.
            let (line, got) = last
                .take()
                .expect("docs/sync.md shows an output before running anything");
            assert_eq!(
                got.stdout.trim_end(),
                block.text.trim_end(),
                "docs/sync.md shows what `{line}` prints; it printed (stderr: {})",
                got.stderr
            );
            shown += 1;
        }
    }
    assert!(
        ran >= 10 && shown >= 3,
        "the walk-through runs {ran} lines and shows {shown} outputs"
    );
}
