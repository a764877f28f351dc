//! `just eval`: how often search puts the right fact first, on real conversations and on
//! mem7's own labelled set, per search mode and per question category.
//!
//!     cargo run --release --example eval -- [FILE…] [options]
//!
//! Each FILE is in LoCoMo's format (a JSON list of conversations in sessions, with
//! questions citing the turns that answer them). Each conversation becomes a workspace
//! of the real binary: `mem7 init`, `mem7 import` of one fact per turn (valid from its
//! session's date; the key scheme is `locomo::turn_key`), `mem7 embed`. Then every
//! question is one `mem7 search QUESTION --json --limit 10 --mode M` process per mode,
//! timed whole, as an agent's hook would run it. The labelled set
//! (`examples/data/labelled.json`: coding-agent facts and the queries that ask for them)
//! runs the same way, in one workspace.
//!
//! Measures, per mode, for all questions and per category: hit@1, hit@5, hit@10 (a gold
//! fact among the first k), recall@5, recall@10 (the share of a question's gold facts
//! among the first k, averaged), session recall@10 (the share of the gold facts' sessions
//! some result among the first 10 comes from) and the median and 90th percentile of the
//! search process's wall time. Before each semantic or hybrid pass the cached query
//! vectors are dropped, so every search embeds its question as a new one would.
//! LoCoMo's category 5 (adversarial) is reported on its own row, outside `all`.
//!
//! Options:
//!   --modes lexical,semantic,hybrid   the modes to run (default all three)
//!   --limit-questions N   at most N questions per conversation, spread evenly over it
//!   --fallback FILE       the LoCoMo file to use when no FILE is given, if it exists
//!   --labelled FILE       another labelled set; --no-labelled to skip it
//!   --config FILE         a mem7.yaml for every workspace (to measure a setting)
//!   --mem7 PATH           the binary to drive (default: target/<profile>/mem7)
//!   --dump FILE           every search's results as JSON Lines, for a closer look
//!
//! Prints one markdown table per data set on standard output, progress on standard
//! error. Semantic and hybrid need the local model (`just model`).

mod driver;
mod labelled;
mod locomo;
mod score;
mod set;

use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use driver::{MODES, Mem7};
use score::{Row, Tally};
use set::{DataSet, Fact, Question};

struct Args {
    files: Vec<PathBuf>,
    fallback: Option<PathBuf>,
    labelled: Option<PathBuf>,
    modes: Vec<&'static str>,
    limit: Option<usize>,
    config: Option<PathBuf>,
    mem7: Option<PathBuf>,
    dump: Option<PathBuf>,
}

impl Args {
    fn parse(mut raw: impl Iterator<Item = String>) -> Result<Args, String> {
        let mut args = Args {
            files: Vec::new(),
            fallback: None,
            labelled: Some(labelled::default_path()),
            modes: MODES.to_vec(),
            limit: None,
            config: None,
            mem7: None,
            dump: None,
        };
        while let Some(arg) = raw.next() {
            let mut value = || raw.next().ok_or(format!("{arg} needs a value"));
            match arg.as_str() {
                "--modes" => args.modes = parse_modes(&value()?)?,
                "--limit-questions" => {
                    let n = value()?;
                    args.limit = Some(n.parse().map_err(|_| {
                        format!("--limit-questions {n:?}: not a number of questions")
                    })?);
                }
                "--fallback" => args.fallback = Some(value()?.into()),
                "--labelled" => args.labelled = Some(value()?.into()),
                "--no-labelled" => args.labelled = None,
                "--config" => args.config = Some(value()?.into()),
                "--mem7" => args.mem7 = Some(value()?.into()),
                "--dump" => args.dump = Some(value()?.into()),
                flag if flag.starts_with("--") => return Err(format!("unknown option {flag}")),
                file => args.files.push(file.into()),
            }
        }
        if args.files.is_empty()
            && let Some(fallback) = args.fallback.take()
            && fallback.is_file()
        {
            args.files.push(fallback);
        }
        Ok(args)
    }
}

fn parse_modes(list: &str) -> Result<Vec<&'static str>, String> {
    let mut modes = Vec::new();
    for m in list.split(',').map(str::trim).filter(|m| !m.is_empty()) {
        let known = MODES
            .iter()
            .find(|k| **k == m)
            .ok_or(format!("--modes: {m:?} is not one of {}", MODES.join(", ")))?;
        modes.push(*known);
    }
    if modes.is_empty() {
        return Err("--modes names no mode".into());
    }
    // Always in the same order, so tables compare line for line.
    Ok(MODES
        .iter()
        .copied()
        .filter(|m| modes.contains(m))
        .collect())
}

fn main() -> ExitCode {
    // `mem7 init` approves the settings file it writes in the person's own list of
    // approvals (`$XDG_CONFIG_HOME/mem7/allowed`); scratch workspaces stay out of it.
    let approvals = tempfile::tempdir().expect("a scratch folder for approvals");
    // SAFETY: set before this process starts a thread; the mem7 processes inherit it.
    unsafe { std::env::set_var("XDG_CONFIG_HOME", approvals.path()) };
    let args = match Args::parse(std::env::args().skip(1)) {
        Ok(args) => args,
        Err(e) => {
            eprintln!(
                "eval: {e}\nusage: eval [FILE…] [--modes M,…] [--limit-questions N] [--fallback FILE] [--labelled FILE | --no-labelled] [--config FILE] [--mem7 PATH] [--dump FILE]"
            );
            return ExitCode::from(2);
        }
    };
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("eval: error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &Args) -> Result<(), String> {
    let started = Instant::now();
    let mem7 = Mem7::new(args.mem7.clone(), args.config.as_deref())?;
    let mut sets = Vec::new();
    for file in &args.files {
        sets.push(locomo::load(file)?);
    }
    if let Some(path) = &args.labelled {
        sets.push(set::from_labelled(path)?);
    }
    if sets.is_empty() {
        return Err("nothing to evaluate: name a LoCoMo file, or leave the labelled set on".into());
    }
    let mut dump = match &args.dump {
        Some(path) => Some(std::io::BufWriter::new(
            std::fs::File::create(path)
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?,
        )),
        None => None,
    };
    eprintln!("eval: driving {}", mem7.bin().display());
    for set in &sets {
        let report = evaluate(&mem7, set, args, &mut dump)?;
        println!("{}", report.render());
    }
    if let Some(out) = &mut dump {
        out.flush()
            .map_err(|e| format!("cannot write the dump: {e}"))?;
    }
    println!(
        "Whole run: {:.1} min, binary {}.",
        started.elapsed().as_secs_f64() / 60.0,
        mem7.bin().display()
    );
    Ok(())
}

/// A data set's tallies, by mode and row (`all`, then each category).
struct Report<'a> {
    set: &'a DataSet,
    modes: &'a [&'static str],
    tallies: HashMap<(&'static str, String), Tally>,
    model: Option<String>,
    /// `--limit-questions`, when it left some questions out.
    limit: Option<usize>,
}

const ALL: &str = "all";

impl Report<'_> {
    fn add(
        &mut self,
        mode: &'static str,
        q: &Question,
        found: &[Option<Fact>],
        took: std::time::Duration,
    ) {
        let in_all = self
            .set
            .categories
            .iter()
            .any(|c| c.name == q.category && c.in_all);
        let rows = [Some(q.category.as_str()), in_all.then_some(ALL)];
        for row in rows.into_iter().flatten() {
            self.tallies
                .entry((mode, row.to_string()))
                .or_default()
                .add(&q.gold, found, took);
        }
    }

    fn render(&self) -> String {
        let mut out = format!("### {}\n\n", self.set.name);
        let asked: usize = self
            .tallies
            .iter()
            .filter(|((m, row), _)| {
                *m == self.modes[0] && self.set.categories.iter().any(|c| c.name == *row)
            })
            .map(|(_, t)| t.questions())
            .sum();
        out.push_str(&format!("{asked} questions asked"));
        if let Some(n) = self.limit {
            out.push_str(&format!(" (at most {n} per conversation, spread evenly)"));
        }
        if let Some(model) = &self.model {
            out.push_str(&format!("; meaning search with {model}"));
        }
        out.push('.');
        for note in &self.set.notes {
            out.push_str(&format!(" Note: {note}."));
        }
        out.push_str("\n\n");
        let names: Vec<(String, String)> = std::iter::once((ALL.to_string(), ALL.to_string()))
            .chain(self.set.categories.iter().map(|c| {
                let label = if c.in_all {
                    c.name.clone()
                } else {
                    format!("{} (not in all)", c.name)
                };
                (c.name.clone(), label)
            }))
            .collect();
        let rows: Vec<Row> = self
            .modes
            .iter()
            .flat_map(|mode| {
                names.iter().filter_map(move |(name, label)| {
                    let tally = self.tallies.get(&(*mode, name.clone()))?;
                    Some(Row {
                        mode,
                        category: label,
                        tally,
                    })
                })
            })
            .collect();
        out.push_str(&score::table(&rows));
        out
    }
}

fn evaluate<'a>(
    mem7: &Mem7,
    set: &'a DataSet,
    args: &'a Args,
    dump: &mut Option<impl Write>,
) -> Result<Report<'a>, String> {
    let mut report = Report {
        set,
        modes: &args.modes,
        tallies: HashMap::new(),
        model: None,
        limit: None,
    };
    let needs_model = args.modes.iter().any(|m| *m != "lexical");
    let tmp = tempfile::tempdir().map_err(|e| format!("cannot make a temporary folder: {e}"))?;
    for sample in &set.samples {
        let began = Instant::now();
        let dir = tmp.path().join(sanitise(&sample.id));
        let ws = mem7.init(&dir, &sample.now)?;
        ws.import(&sample.records)?;
        if needs_model {
            report.model = Some(ws.embed()?);
        }
        // The first search brings the full-text index up to date: not a question's cost.
        ws.search("warm up", "lexical")?;
        eprintln!(
            "{}: {} facts imported{} in {:.1}s",
            sample.id,
            sample.records.len(),
            if needs_model { " and embedded" } else { "" },
            began.elapsed().as_secs_f64()
        );
        let questions = pick(&sample.questions, args.limit);
        if questions.len() < sample.questions.len() {
            report.limit = args.limit;
        }
        for &mode in &args.modes {
            let began = Instant::now();
            if mode != "lexical" {
                ws.forget_queries()?;
            }
            for q in &questions {
                let (keys, took) = ws.search(&q.text, mode)?;
                let found: Vec<Option<Fact>> =
                    keys.iter().map(|k| sample.facts.get(k).cloned()).collect();
                if let Some(out) = dump.as_mut() {
                    write_dump(out, &sample.id, mode, q, &keys, took)?;
                }
                report.add(mode, q, &found, took);
            }
            eprintln!(
                "{}: {mode}: {} questions in {:.1}s",
                sample.id,
                questions.len(),
                began.elapsed().as_secs_f64()
            );
        }
    }
    Ok(report)
}

/// At most `limit` questions, spread evenly over the list so every part of the
/// conversation (and, in practice, every category) keeps its share.
fn pick(questions: &[Question], limit: Option<usize>) -> Vec<&Question> {
    let n = questions.len();
    match limit {
        Some(k) if k < n => (0..k).map(|i| &questions[i * n / k]).collect(),
        _ => questions.iter().collect(),
    }
}

fn sanitise(id: &str) -> String {
    id.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn write_dump(
    out: &mut impl Write,
    sample: &str,
    mode: &str,
    q: &Question,
    keys: &[String],
    took: std::time::Duration,
) -> Result<(), String> {
    let line = serde_json::json!({
        "sample": sample,
        "mode": mode,
        "category": q.category,
        "question": q.text,
        "gold": q.gold.iter().map(|f| &f.id).collect::<Vec<_>>(),
        "found": keys,
        "ms": took.as_secs_f64() * 1e3,
    });
    writeln!(out, "{line}").map_err(|e| format!("cannot write the dump: {e}"))
}
