//! The index's commands: `reindex` (with its progress bar) and `embed` (filling in and
//! pruning vectors).

use std::io::{self, Write};

use super::{Cli, EXIT_OK, Env, open_engine, write_out};
use crate::engine::Engine;
use crate::error::Result;
use crate::front::session::{self, Voice};

/// `mem7 reindex`.
pub(super) fn reindex(cli: &Cli, env: &Env, out: &mut dyn Write, embed: bool) -> Result<u8> {
    let root = env.workspace(cli.workspace.as_deref());
    let started = std::time::Instant::now();
    let bar = progress_bar();
    let mut show = |p: crate::engine::Progress| {
        if let Some(bar) = &bar {
            match p {
                crate::engine::Progress::Reading { done, total } => {
                    bar.set_message("reading memory files");
                    bar.set_length(total);
                    bar.set_position(done);
                }
                crate::engine::Progress::Folding { done, total } => {
                    bar.set_message("folding versions");
                    bar.set_length(total);
                    bar.set_position(done);
                }
                crate::engine::Progress::Finishing => bar.set_message("writing indexes"),
            }
        }
    };
    let (mut engine, stats) =
        Engine::open_rebuilt(&root, (env.chain_key()?, Some(env.now()?)), &mut show)?;
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    for w in &stats.warnings {
        eprintln!("mem7: warning: {w}");
    }
    Voice::CLI.held(&mut engine, env.now()?);
    write_out(
        out,
        &format!(
            "reindexed {} entries from {} files into {} versions in {:.2?}\n",
            stats.entries,
            stats.files,
            stats.versions,
            started.elapsed()
        ),
    )?;
    // The rebuild kept every cached vector. A rebuild does not embed unless
    // asked: it says how many texts wait and how to fill them.
    session::try_enable_embeddings(&mut engine, env, Voice::CLI);
    if engine.embedding_model().is_some() && !embed {
        let waiting = engine.fill_embeddings(Some(0), &mut |_, _| {})?;
        if waiting.missing > 0 {
            write_out(
                out,
                &format!(
                    "{} text{} wait for vectors of {}: run `mem7 embed` (or `mem7 reindex --embed`), \
                     or leave `mem7 watch` or the MCP server running, which fill them in the background\n",
                    waiting.missing,
                    if waiting.missing == 1 { "" } else { "s" },
                    waiting.model
                ),
            )?;
        }
    }
    if engine.embedding_model().is_some() && embed {
        match fill_embeddings(&mut engine) {
            Ok(f) if f.computed > 0 => write_out(
                out,
                &format!(
                    "embedded {} new text{} with {}\n",
                    f.computed,
                    if f.computed == 1 { "" } else { "s" },
                    f.model
                ),
            )?,
            Ok(_) => {}
            Err(e) => eprintln!(
                "mem7: warning: vectors not filled in: {e}; the index is rebuilt, `mem7 embed` retries"
            ),
        }
    }
    Ok(EXIT_OK)
}

/// `mem7 embed`.
pub(super) fn embed(
    cli: &Cli,
    env: &Env,
    out: &mut dyn Write,
    prune: bool,
    json: bool,
) -> Result<u8> {
    let mut engine = open_engine(cli, env)?;
    session::enable_embeddings(&mut engine, env)?;
    let filled = fill_embeddings(&mut engine);
    Voice::CLI.notes(&mut engine);
    let filled = filled?;
    let pruned = if prune {
        Some(engine.prune_embeddings()?)
    } else {
        None
    };
    let cached = engine.cached_vectors()?;
    if json {
        let v = serde_json::json!({
            "model": filled.model,
            "missing": filled.missing,
            "computed": filled.computed,
            "pruned": pruned,
            "cached": cached,
        });
        write_out(
            out,
            &format!("{}\n", serde_json::to_string_pretty(&v).unwrap_or_default()),
        )?;
    } else {
        let mut s = format!(
            "embedded {} new text{} with {}; the cache holds {cached} vector{}\n",
            filled.computed,
            if filled.computed == 1 { "" } else { "s" },
            filled.model,
            if cached == 1 { "" } else { "s" },
        );
        if let Some(n) = pruned {
            s.push_str(&format!(
                "pruned {n} vector{} of other models or texts no longer held\n",
                if n == 1 { "" } else { "s" }
            ));
        }
        write_out(out, &s)?;
    }
    Ok(EXIT_OK)
}

/// A progress bar on stderr when it is a terminal.
fn progress_bar() -> Option<indicatif::ProgressBar> {
    use std::io::IsTerminal;
    io::stderr().is_terminal().then(|| {
        let bar = indicatif::ProgressBar::new(0);
        bar.set_style(
            indicatif::ProgressStyle::with_template("{msg:<22} [{bar:30}] {pos}/{len}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
                .progress_chars("=> "),
        );
        bar
    })
}

/// Fills in missing vectors with a progress bar. Returns the stats, or the provider's
/// error (what was computed before it stays cached).
fn fill_embeddings(engine: &mut Engine) -> Result<crate::engine::FillStats> {
    let bar = progress_bar();
    if let Some(bar) = &bar {
        bar.set_message("embedding");
    }
    let result = engine.fill_embeddings(None, &mut |done, total| {
        if let Some(bar) = &bar {
            bar.set_length(total as u64);
            bar.set_position(done as u64);
        }
    });
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    result
}
