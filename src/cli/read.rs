//! The reading commands: `recall`, `history` (and its picture), `list`, `search`,
//! `timeline`, `context` and `export`, with what a read that found nothing says on
//! standard error.

use std::io::{self, Write};
use std::path::PathBuf;

use super::{
    Cli, EXIT_NOT_FOUND, EXIT_OK, Env, args, open_engine, parse_tx, parse_valid, read_times,
    write_out,
};
use crate::core::level::Level;
use crate::core::tier::Tier;
use crate::core::time::TxTime;
use crate::engine::{Engine, Timeline, TimelineClock};
use crate::engine::{Find, ReadAt, Scoped};
use crate::error::{Error, Result};
use crate::front::session::{self, Voice};
use crate::front::workspaces;
use crate::front::{render, wire};

/// `mem7 recall`.
pub(super) fn recall(
    cli: &Cli,
    env: &Env,
    out: &mut dyn Write,
    key: &str,
    at: &args::TimeArgs,
    filters: (Option<Tier>, Option<Level>),
    json: bool,
) -> Result<u8> {
    let (tier, scope) = filters;
    let now = env.now()?;
    let (valid_at, as_of) = read_times(at, now)?;
    crate::core::validate::lookup_key(key)?;
    let mut scopes = workspaces::open(env, cli.workspace.as_deref(), scope)?;
    let found = scopes.recall(
        key,
        ReadAt {
            valid_at,
            as_of,
            now,
        },
        tier,
    )?;
    let as_of = found.at.as_of;
    print_scoped(out, &found.rows, json, scopes.stacked(), || {
        format!("mem7: no version of {key} is valid at {valid_at} as of {as_of}")
    })?;
    if found.rows.is_empty() {
        print_near_keys(scopes.narrowest(), env, key, now)?;
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
        scope: _,
    } = a;
    let as_of = as_of.as_deref().map(|t| parse_tx("as-of", t)).transpose()?;
    let valid_at = valid_at
        .as_deref()
        .map(|t| parse_valid("valid-at", t))
        .transpose()?;
    let now = env.now()?;
    crate::core::validate::lookup_key(key)?;
    let mut scopes = workspaces::open(env, cli.workspace.as_deref(), a.scope.level())?;
    if !*svg {
        let versions = scopes.history(key, as_of)?;
        print_scoped(out, &versions, *json, scopes.stacked(), || {
            format!("mem7: no history for {key}")
        })?;
        if versions.is_empty() {
            print_near_keys(scopes.narrowest(), env, key, now)?;
        }
        return Ok(EXIT_OK);
    }
    // The picture is of one workspace's history: the narrowest scope that has one. It
    // shows every version; the read's clocks are drawn as lines.
    let (engine, versions) = scopes.drawn(key)?;
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
    Ok(EXIT_OK)
}

/// `mem7 list`.
pub(super) fn list(cli: &Cli, env: &Env, out: &mut dyn Write, a: &args::ListArgs) -> Result<u8> {
    let (prefix, tags, at, tier, json) =
        (a.prefix.as_deref(), &a.tags, &a.at, a.tier.wanted(), a.json);
    let now = env.now()?;
    let (valid_at, as_of) = read_times(at, now)?;
    let mut scopes = workspaces::open(env, cli.workspace.as_deref(), a.scope.level())?;
    let at = ReadAt {
        valid_at,
        as_of,
        now,
    };
    let found = scopes.list((prefix, tags), at, tier)?;
    let as_of = found.at.as_of;
    print_scoped(out, &found.rows, json, scopes.stacked(), || {
        format!("mem7: no keys match at valid_at {valid_at} as of {as_of}")
    })?;
    Ok(EXIT_OK)
}

/// Versions with their scopes as a JSON array (`[]` when empty) or as text; an empty
/// text result is said on standard error, so standard output stays the result alone.
fn print_scoped(
    out: &mut dyn Write,
    versions: &[Scoped],
    json: bool,
    stacked: bool,
    empty: impl FnOnce() -> String,
) -> Result<()> {
    if json {
        write_out(out, &wire::scoped_json(versions))
    } else if versions.is_empty() {
        eprintln!("{}", empty());
        Ok(())
    } else {
        write_out(out, &render::scoped_human(versions, stacked))
    }
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
        scope: _,
    } = a;
    let now = env.now()?;
    let (valid_at, as_of) = read_times(at, now)?;
    let mode = mode.unwrap_or_default();
    if *raw
        && !matches!(
            mode,
            crate::engine::SearchMode::Auto | crate::engine::SearchMode::Lexical
        )
    {
        return Err(Error::input(
            "--raw is tantivy query syntax, which only the word side understands",
            "drop --raw, or search with --mode lexical",
        ));
    }
    let mut scopes = workspaces::open(env, cli.workspace.as_deref(), a.scope.level())?;
    for layer in &mut scopes.layers {
        if !*raw && mode != crate::engine::SearchMode::Lexical {
            session::enable_embeddings(&mut layer.engine, env)?;
        }
    }
    let find = Find {
        text: query.clone(),
        raw: *raw,
        tags: tags.clone(),
        key_prefix: key_prefix.clone(),
        limit: *limit,
        mode,
    };
    let at = ReadAt {
        valid_at,
        as_of,
        now,
    };
    let found = scopes.search(&find, at, tier.wanted());
    for layer in &mut scopes.layers {
        Voice::CLI.notes(&mut layer.engine);
        layer.engine.leave_embedder_to_exit();
    }
    let found = found?;
    let (hits, as_of) = (found.rows, found.at.as_of);
    // JSON always says each hit's scope; the text only when several are open.
    let stacked = scopes.stacked();
    let shown: Vec<_> = hits
        .iter()
        .map(|h| ((*json || stacked).then_some(h.level), &h.hit, h.shadowed))
        .collect();
    if *json {
        write_out(out, &wire::pretty(&wire::scoped_hits_value(&shown)))?;
    } else if hits.is_empty() {
        eprintln!("mem7: nothing matches {query:?} at valid_at {valid_at} as of {as_of}");
    } else {
        use std::io::IsTerminal;
        write_out(
            out,
            &render::scoped_hits_human(&shown, io::stdout().is_terminal()),
        )?;
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
    let by_tx = *clock == args::Clock::Tx;
    let versions = engine.timeline(&Timeline {
        clock: TimelineClock::by_tx(by_tx),
        since,
        until,
        prefix: key_prefix.as_deref(),
        window: None,
    })?;
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
    (history, scope): (bool, Option<Level>),
    at: &args::TimeArgs,
    format: args::ExportFormatArg,
    output: &Option<PathBuf>,
) -> Result<u8> {
    let now = env.now()?;
    let (valid_at, as_of) = read_times(at, now)?;
    let mut scopes = workspaces::open(env, cli.workspace.as_deref(), scope)?;
    // --history is one workspace's entries: the scope named, else the primary one.
    let primary = env.workspace(cli.workspace.as_deref());
    let at_layer = scopes
        .layers
        .iter()
        .position(|l| scope.is_some() || l.engine.workspace().root() == primary)
        .unwrap_or(0);
    let level = scopes.layers[at_layer].level;
    let stacked = scopes.stacked();
    let engine = &scopes.layers[at_layer].engine;
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
    } else if stacked && format == crate::transfer::export::Format::Json {
        // Every scope, as `list --json` shows them (held in memory: scopes are small
        // beside a project's history; one workspace streams below).
        let at = ReadAt {
            valid_at,
            as_of,
            now,
        };
        let versions = scopes.list((None, &[]), at, None)?.rows;
        crate::transfer::write_output(output.as_deref(), out, &mut |w| {
            for s in &versions {
                w.write_all(wire::scoped_json_line(s).as_bytes())
                    .map_err(|e| Error::io("<export>", e))?;
            }
            Ok(())
        })?;
    } else {
        let engine = &scopes.layers[at_layer].engine;
        let at = engine.clocks(valid_at, as_of, now)?;
        crate::transfer::write_output(output.as_deref(), out, &mut |w| {
            crate::transfer::export::snapshot(engine, at, Some(level), format, w).map(|_| ())
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
    let text = context_text(cli, env, a, &env.cwd)?;
    write_out(out, &text)?;
    Ok(EXIT_OK)
}

/// What `mem7 context` prints (a session-start hook prints the same), for the checkout
/// at `dir`: the block led by where that checkout left off.
pub(super) fn context_text(
    cli: &Cli,
    env: &Env,
    a: &args::ContextArgs,
    dir: &std::path::Path,
) -> Result<String> {
    let (query, at, tier, max_chars, hook) = (
        a.query.as_deref(),
        &a.at,
        a.tier.wanted(),
        a.max_chars,
        a.hook,
    );
    let now = env.now()?;
    let (valid_at, as_of) = read_times(at, now)?;
    let mut scopes = workspaces::open(env, cli.workspace.as_deref(), a.scope.level())?;
    let req = crate::engine::ContextRequest {
        query: query.map(str::to_string),
        at: ReadAt {
            valid_at,
            as_of,
            now,
        },
        max_chars,
        tier,
    };
    if req.question().is_some() {
        workspaces::enable_embeddings(&mut scopes, env, Voice::CLI);
    }
    let gathered = scopes.context(&req);
    for layer in &mut scopes.layers {
        Voice::CLI.notes(&mut layer.engine);
    }
    let mut gathered = gathered?;
    // The block of a session's start (no question, no other time, every tier) leads
    // with where this checkout left off.
    let plain = req.question().is_none()
        && at.valid_at.is_none()
        && at.as_of.is_none()
        && tier.is_none_or(|t| t == crate::core::Tier::Inferred);
    if plain {
        gathered.left_off = crate::front::capture::left_off(&scopes, dir, now)?;
    }
    let block = crate::front::block::render(&gathered, &req);
    Ok(match hook {
        Some(args::Client::ClaudeCode) => crate::front::block::claude_code_hook(&block),
        Some(args::Client::Codex) | None => block,
    })
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
        write_out(out, &wire::versions_json(versions))
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
