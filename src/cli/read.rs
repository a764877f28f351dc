//! The reading commands: `recall`, `history` (and its picture), `list`, `search`,
//! `timeline`, `context` and `export`, with what a read that found nothing says on
//! standard error.

use std::io::{self, Write};
use std::path::PathBuf;

use super::{
    Cli, EXIT_NOT_FOUND, EXIT_OK, Env, args, open_engine, parse_tx, parse_valid, read_times,
    write_out,
};
use crate::core::tier::{self, Tier};
use crate::core::time::TxTime;
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::front::render;
use crate::front::session::{self, Voice};

/// `mem7 recall`.
pub(super) fn recall(
    cli: &Cli,
    env: &Env,
    out: &mut dyn Write,
    key: &str,
    at: &args::TimeArgs,
    tier: Option<Tier>,
    json: bool,
) -> Result<u8> {
    let now = env.now()?;
    let (valid_at, as_of) = read_times(at, now)?;
    crate::core::validate::lookup_key(key)?;
    let mut engine = open_engine(cli, env)?;
    let as_of = engine.as_of(as_of, now)?;
    let mut versions = engine.recall(key, &[], valid_at, as_of)?;
    versions.retain(|v| tier::keeps(tier, v.tier));
    print_versions(
        out,
        &versions,
        json,
        || format!("mem7: no version of {key} is valid at {valid_at} as of {as_of}"),
        render::versions_human,
    )?;
    if versions.is_empty() {
        print_near_keys(&mut engine, env, key, now)?;
        return Ok(EXIT_NOT_FOUND);
    }
    Ok(EXIT_OK)
}

/// `mem7 history`.
pub(super) fn history(
    cli: &Cli,
    env: &Env,
    out: &mut dyn Write,
    a: &args::HistoryArgs,
) -> Result<u8> {
    let args::HistoryArgs {
        key,
        as_of,
        json,
        svg,
        valid_at,
    } = a;
    let as_of = as_of.as_deref().map(|t| parse_tx("as-of", t)).transpose()?;
    let valid_at = valid_at
        .as_deref()
        .map(|t| parse_valid("valid-at", t))
        .transpose()?;
    let now = env.now()?;
    crate::core::validate::lookup_key(key)?;
    let mut engine = open_engine(cli, env)?;
    if *svg {
        // The picture shows every version; the read's clocks are drawn as lines.
        let versions = engine.index().history(key, None)?;
        let picture = crate::view::svg::Picture {
            key,
            versions: &versions,
            now: (now.as_valid(), engine.believed_now(now)?),
            valid_at,
            as_of,
            link: None,
        };
        write_out(out, &crate::view::svg::render(&picture))?;
        if versions.is_empty() {
            eprintln!("mem7: no history for {key}");
        }
        return Ok(EXIT_OK);
    }
    let versions = engine.index().history(key, as_of)?;
    print_versions(
        out,
        &versions,
        *json,
        || format!("mem7: no history for {key}"),
        render::versions_human,
    )?;
    if versions.is_empty() {
        print_near_keys(&mut engine, env, key, now)?;
    }
    Ok(EXIT_OK)
}

/// `mem7 list`.
pub(super) fn list(cli: &Cli, env: &Env, out: &mut dyn Write, a: &args::ListArgs) -> Result<u8> {
    let (prefix, tags, at, tier, json) =
        (a.prefix.as_deref(), &a.tags, &a.at, a.tier.wanted(), a.json);
    let now = env.now()?;
    let (valid_at, as_of) = read_times(at, now)?;
    let engine = open_engine(cli, env)?;
    let as_of = engine.as_of(as_of, now)?;
    let mut versions = engine.index().list(prefix, tags, valid_at, as_of)?;
    versions.retain(|v| tier::keeps(tier, v.tier));
    print_versions(
        out,
        &versions,
        json,
        || format!("mem7: no keys match at valid_at {valid_at} as of {as_of}"),
        render::versions_human,
    )?;
    Ok(EXIT_OK)
}

/// `mem7 search`.
pub(super) fn search(
    cli: &Cli,
    env: &Env,
    out: &mut dyn Write,
    a: &args::SearchArgs,
) -> Result<u8> {
    let args::SearchArgs {
        query,
        at,
        tier,
        tags,
        key_prefix,
        limit,
        raw,
        mode,
        json,
    } = a;
    let now = env.now()?;
    let (valid_at, as_of) = read_times(at, now)?;
    let mode = match mode {
        None => crate::index::fulltext::SearchMode::Auto,
        Some(args::SearchModeArg::Lexical) => crate::index::fulltext::SearchMode::Lexical,
        Some(args::SearchModeArg::Semantic) => crate::index::fulltext::SearchMode::Semantic,
        Some(args::SearchModeArg::Hybrid) => crate::index::fulltext::SearchMode::Hybrid,
    };
    if *raw
        && !matches!(
            mode,
            crate::index::fulltext::SearchMode::Auto | crate::index::fulltext::SearchMode::Lexical
        )
    {
        return Err(Error::input(
            "--raw is tantivy query syntax, which only the word side understands",
            "drop --raw, or search with --mode lexical",
        ));
    }
    let mut engine = open_engine(cli, env)?;
    let as_of = engine.as_of(as_of, now)?;
    if !*raw && mode != crate::index::fulltext::SearchMode::Lexical {
        session::enable_embeddings(&mut engine, env)?;
    }
    let req = crate::index::fulltext::SearchRequest {
        text: query.clone(),
        raw: *raw,
        valid_at,
        as_of,
        tags: tags.clone(),
        key_prefix: key_prefix.clone(),
        limit: *limit,
        mode,
    };
    let hits = engine.search_tier(&req, tier.wanted());
    Voice::CLI.notes(&mut engine);
    let hits = hits?;
    if *json {
        write_out(out, &render::hits_json(&hits))?;
    } else if hits.is_empty() {
        eprintln!("mem7: nothing matches {query:?} at valid_at {valid_at} as of {as_of}");
    } else {
        use std::io::IsTerminal;
        write_out(out, &render::hits_human(&hits, io::stdout().is_terminal()))?;
    }
    Ok(EXIT_OK)
}

/// `mem7 timeline`.
pub(super) fn timeline(
    cli: &Cli,
    env: &Env,
    out: &mut dyn Write,
    a: &args::TimelineArgs,
) -> Result<u8> {
    let args::TimelineArgs {
        clock,
        since,
        until,
        key_prefix,
        json,
    } = a;
    let since = since
        .as_deref()
        .map(|t| parse_valid("since", t))
        .transpose()?;
    let until = until
        .as_deref()
        .map(|t| parse_valid("until", t))
        .transpose()?;
    env.now()?;
    let engine = open_engine(cli, env)?;
    let versions = engine.index().timeline(
        *clock == args::Clock::Tx,
        since.map(|t| t.micros()),
        until.map(|t| t.micros()),
        key_prefix.as_deref(),
    )?;
    let by_tx = *clock == args::Clock::Tx;
    print_versions(
        out,
        &versions,
        *json,
        || "mem7: no versions in that range".to_string(),
        |v| render::timeline_human(v, by_tx),
    )?;
    Ok(EXIT_OK)
}

/// `mem7 export`.
pub(super) fn export(
    cli: &Cli,
    env: &Env,
    out: &mut dyn Write,
    history: bool,
    at: &args::TimeArgs,
    format: args::ExportFormatArg,
    output: &Option<PathBuf>,
) -> Result<u8> {
    let now = env.now()?;
    let (valid_at, as_of) = read_times(at, now)?;
    let engine = open_engine(cli, env)?;
    if let Some(path) = output
        && let Some(what) = engine.workspace().owned_folder(path)
    {
        return Err(Error::input(
            format!(
                "-o {} is inside the workspace's {what}, which only mem7 writes",
                path.display()
            ),
            "write the export somewhere else (`-o memory.jsonl` beside the workspace, or any folder outside memory/ and .mem7/); nothing was written",
        ));
    }
    let format = match format {
        args::ExportFormatArg::Json => crate::transfer::export::Format::Json,
        args::ExportFormatArg::Csv => crate::transfer::export::Format::Csv,
    };
    if history {
        let mut stats = Default::default();
        crate::transfer::write_output(output.as_deref(), out, &mut |w| {
            stats = crate::transfer::export::history(engine.workspace(), format, w)?;
            Ok(())
        })?;
        let stats: crate::transfer::export::HistoryStats = stats;
        if stats.sorted_in_memory {
            eprintln!(
                "mem7: note: an entry sits in another day's file; the history was sorted in memory"
            );
        }
        if stats.skipped > 0 {
            eprintln!(
                "mem7: warning: {} entr{} the index skips (see `mem7 verify`) not exported",
                stats.skipped,
                if stats.skipped == 1 { "y" } else { "ies" }
            );
        }
    } else {
        let as_of = engine.as_of(as_of, now)?;
        crate::transfer::write_output(output.as_deref(), out, &mut |w| {
            crate::transfer::export::snapshot(engine.index(), valid_at, as_of, format, w)
                .map(|_| ())
        })?;
    }
    Ok(EXIT_OK)
}

/// `mem7 context`.
pub(super) fn context(
    cli: &Cli,
    env: &Env,
    out: &mut dyn Write,
    a: &args::ContextArgs,
) -> Result<u8> {
    let (query, at, tier, max_chars, hook) = (
        a.query.as_deref(),
        &a.at,
        a.tier.wanted(),
        a.max_chars,
        a.hook,
    );
    let now = env.now()?;
    let (valid_at, as_of) = read_times(at, now)?;
    let mut engine = open_engine(cli, env)?;
    let as_of = engine.as_of(as_of, now)?;
    if query.is_some_and(|q| !q.trim().is_empty()) {
        session::try_enable_embeddings(&mut engine, env, Voice::CLI);
    }
    let req = crate::front::block::ContextRequest {
        query: query.map(str::to_string),
        valid_at,
        as_of,
        max_chars,
        tier,
    };
    let gathered = crate::front::block::gather(&mut engine, &req);
    Voice::CLI.notes(&mut engine);
    let block = crate::front::block::render(&gathered?, &req);
    let text = match hook {
        Some(args::Client::ClaudeCode) => crate::front::block::claude_code_hook(&block),
        Some(args::Client::Codex) | None => block,
    };
    write_out(out, &text)?;
    Ok(EXIT_OK)
}

/// Prints versions as a JSON array (`[]` when empty) or as text; an empty text result
/// is said on standard error, so standard output stays the result alone.
fn print_versions(
    out: &mut dyn Write,
    versions: &[crate::core::Version],
    json: bool,
    empty: impl FnOnce() -> String,
    human: impl FnOnce(&[crate::core::Version]) -> String,
) -> Result<()> {
    if json {
        write_out(out, &render::versions_json(versions))
    } else if versions.is_empty() {
        eprintln!("{}", empty());
        Ok(())
    } else {
        write_out(out, &human(versions))
    }
}

/// After a read that found nothing: the existing keys near the one asked for, on
/// standard error (standard output stays the result, `[]` with `--json`).
fn print_near_keys(engine: &mut Engine, env: &Env, key: &str, now: TxTime) -> Result<()> {
    // Meaning search adds keys whose value is near the key's words, when it is on; a
    // bad embedding setting only leaves the suggestions by name.
    session::embeddings_or_off(engine, env);
    let near = engine.near_keys(key, now)?;
    engine.take_notes();
    if let Some(hint) = render::near_keys_hint(&near) {
        eprintln!("mem7: {hint}");
    }
    Ok(())
}
