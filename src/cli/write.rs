//! The writing commands: `init`, `store`, `rekey`, `forget`, `seal` and `import-notes`
//! (`import` stays beside the dispatch in `mod.rs`).

use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use super::{Cli, EXIT_OK, Env, args, open_engine, parse_valid, print_set_aside, write_out};
use crate::core::level::Level;
use crate::engine::{ForgetOutcome, SealOutcome, StoreRequest};
use crate::error::{Error, Result};
use crate::front::env::absolute;
use crate::front::session::{self, Voice};
use crate::front::{render, request, wire, workspaces};
use crate::store;

/// `mem7 init`. Without DIR it initialises the workspace every other command finds (the
/// same discovery: `--workspace`, `MEM7_WORKSPACE`, an enclosing workspace, else
/// `~/.mem7/workspace`), so a bare `mem7 init` is what the no-workspace error asks for.
/// `mem7 allow [DIR] [--revoke]`.
pub(super) fn allow(
    cli: &Cli,
    env: &Env,
    out: &mut dyn Write,
    dir: Option<&std::path::Path>,
    revoke: bool,
) -> Result<u8> {
    use crate::front::owners::{self, Allowed};
    let root = match dir {
        Some(d) => absolute(&env.cwd, d),
        None => env.workspace(cli.workspace.as_deref()),
    };
    let ws = owners::open_quietly(env, &root)?;
    let file = root.join(store::CONFIG_FILE);
    let msg = match owners::allow(env, &root, revoke)? {
        Some(Allowed::Own) => format!(
            "{} is your own workspace: its settings are yours and need no approval\n",
            root.display()
        ),
        None => format!(
            "withdrew any approval of {}: what it widens is ignored again\n",
            file.display()
        ),
        Some(Allowed::Approved { hash, already }) => {
            let mut msg = if already {
                format!(
                    "{} is already approved as it is (blake3 {hash})\n",
                    file.display()
                )
            } else {
                format!(
                    "approved {} as it is now (blake3 {hash}); a change to it withdraws this\n",
                    file.display()
                )
            };
            for i in ws.ignored_settings() {
                msg.push_str(&format!(
                    "  now in effect: {}\n",
                    crate::front::said::ignored(i)
                ));
            }
            msg
        }
    };
    write_out(out, &msg)?;
    Ok(EXIT_OK)
}

pub(super) fn init(cli: &Cli, env: &Env, out: &mut dyn Write, dir: &Option<PathBuf>) -> Result<u8> {
    let target = match dir {
        Some(d) => absolute(&env.cwd, d),
        None => env.workspace(cli.workspace.as_deref()),
    };
    let outcome = store::init(&target)?;
    let msg = match outcome {
        store::InitOutcome::Created { kept } => {
            // The settings file init wrote is the user's own act on this machine: it is
            // approved as written (a file that was already there is not).
            if !kept.iter().any(|k| k == store::CONFIG_FILE)
                && let Some((_, text)) = store::scaffold().find(|(n, _)| *n == store::CONFIG_FILE)
            {
                crate::front::owners::allow_written(env, &target, text.as_bytes())?;
            }
            let mut msg = format!("Created a mem7 workspace in {}\n", target.display());
            for k in &kept {
                msg.push_str(&format!("  kept your existing {k}"));
                msg.push_str(match k.as_str() {
                    ".gitignore" => ": add the line `.mem7/` to it (the index is not for git)\n",
                    ".gitattributes" => {
                        ": add `memory/*.md merge=union` and `*.md text eol=lf` to it\n"
                    }
                    _ => "\n",
                });
            }
            // Commands run as this one was find the new workspace by themselves when
            // discovery now lands on it (a bare init, `init .`, MEM7_WORKSPACE);
            // otherwise they need to be told where it is.
            if cli.workspace.is_none() && env.workspace(None) == target {
                msg.push_str("  next: mem7 store project:hello \"world\"\n");
            } else {
                msg.push_str(&format!(
                    "  next: mem7 --workspace {} store project:hello \"world\"\n",
                    target.display()
                ));
            }
            msg
        }
        store::InitOutcome::AlreadyWorkspace => {
            format!(
                "{} is already a mem7 workspace; nothing changed\n",
                target.display()
            )
        }
    };
    write_out(out, &msg)?;
    Ok(EXIT_OK)
}

/// `mem7 store`.
pub(super) fn store(cli: &Cli, env: &Env, out: &mut dyn Write, a: &args::StoreArgs) -> Result<u8> {
    let now = env.now()?;
    let value = if a.value == "-" {
        read_stdin()?
    } else {
        a.value.clone()
    };
    let valid_from = a
        .valid_from
        .as_deref()
        .map(|t| parse_valid("valid-from", t))
        .transpose()?;
    let valid_to = a
        .valid_to
        .as_deref()
        .map(|t| request::valid_end("--valid-to", t))
        .transpose()?;
    let req = StoreRequest {
        key: a.key.clone(),
        value,
        valid_from,
        valid_to,
        tags: a.tags.clone(),
        agent: env.agent(a.agent.as_deref()),
        allow_secret: a.allow_secret,
        // A person at the command line vouches for what they type.
        tier: Some(a.tier.into()),
        by: crate::core::Writer::Person,
    };
    // Check the request before anything (even the index) is opened or created, against
    // the settings of the workspace written to.
    let target = workspaces::write_target(env, cli.workspace.as_deref(), &a.key, a.scope.level())?;
    let req = crate::engine::check(req, &target.config(env)?, now)?;
    target.ready()?;
    let (level, root, stacked) = (target.level, target.root.clone(), target.stacked);
    let mut engine = session::open_root(env, &root)?;
    // Look-alike slots of a new key, by name and (meaning search on) by meaning.
    session::embeddings_or_off(&mut engine, env);
    let similar = engine.look_alikes(&req.key)?;
    engine.take_notes();
    let outcome = engine.store_checked(&req, now)?;
    Voice::CLI.ahead(&mut engine, &[], now);
    print_set_aside(&engine);
    engine.leave_embedder_to_exit();
    // What hooks could not write waits for the next ordinary write (docs/capture.md).
    if let Some(r) = crate::front::capture::drain_waiting(env, cli.workspace.as_deref())
        && r.written > 0
    {
        Voice::CLI.note(&format!(
            "applied {} captured writes the hooks had spooled",
            r.written
        ));
    }
    let mut text = if a.json {
        // JSON always says where the fact was written.
        wire::pretty(&wire::store_value(
            &outcome,
            &similar,
            render::Reader::Person,
            Some(level),
        ))
    } else {
        render::store_human(&outcome, &similar)
    };
    if !a.json && stacked {
        text.push_str(&format!("  Scope: {level}\n"));
    }
    write_out(out, &text)?;
    say_workspace(cli, env, &root);
    Ok(EXIT_OK)
}

/// Says on standard error which workspace a write went to, whenever the choice came
/// from the environment, an enclosing folder or the default rather than `--workspace`:
/// an `export MEM7_WORKSPACE` left over from another folder shows itself.
pub(super) fn say_workspace(cli: &Cli, env: &Env, root: &std::path::Path) {
    if let Some(why) = env.workspace_origin(cli.workspace.as_deref(), root) {
        eprintln!("mem7: workspace {} ({why})", root.display());
    }
}

/// `mem7 rekey`.
pub(super) fn rekey(cli: &Cli, env: &Env, out: &mut dyn Write, a: &args::RekeyArgs) -> Result<u8> {
    let args::RekeyArgs {
        from,
        to,
        dry_run,
        agent,
        json,
    } = a;
    let now = env.now()?;
    let agent = env.agent(agent.as_deref());
    crate::core::validate::agent(&agent)?;
    crate::core::validate::lookup_key(from)?;
    crate::core::validate::key(to)?;
    let mut engine = open_engine(cli, env)?;
    let plan = if *dry_run {
        engine.plan_rekey(from, to)?
    } else {
        engine.rekey(from, to, (&agent, crate::core::Writer::Person), now)?
    };
    let text = if *json {
        wire::pretty(&wire::rekey_value(&plan, !*dry_run, None))
    } else {
        render::rekey_human(from, to, &plan, !*dry_run)
    };
    write_out(out, &text)?;
    if !*dry_run {
        say_workspace(cli, env, engine.workspace().root());
    }
    Ok(EXIT_OK)
}

/// `mem7 forget`.
pub(super) fn forget(
    cli: &Cli,
    env: &Env,
    out: &mut dyn Write,
    key: &str,
    entry: Option<&str>,
    agent: Option<&str>,
    scope: Option<Level>,
) -> Result<u8> {
    let now = env.now()?;
    crate::core::validate::lookup_key(key)?;
    let agent = env.agent(agent);
    crate::core::validate::agent(&agent)?;
    // A forget goes where a store of the key would, unless --scope says otherwise.
    let target = workspaces::write_target(env, cli.workspace.as_deref(), key, scope)?;
    target.ready()?;
    let root = target.root;
    let mut engine = session::open_root(env, &root)?;
    let outcome = engine.forget(key, entry, (&agent, crate::core::Writer::Person), now)?;
    print_set_aside(&engine);
    let what = match entry {
        Some(_) => format!("one value of {key}"),
        None => key.to_string(),
    };
    match outcome {
        ForgetOutcome::Forgotten { closed, source } => write_out(
            out,
            &format!(
                "forgot {what}: {closed} version{} no longer believed ({}:{})\n",
                if closed == 1 { "" } else { "s" },
                source.file,
                source.line
            ),
        )?,
        ForgetOutcome::NothingBelieved => write_out(
            out,
            &format!("nothing to forget: no version of {key} is believed; nothing written\n"),
        )?,
    }
    say_workspace(cli, env, &root);
    Ok(EXIT_OK)
}

/// `mem7 seal`.
pub(super) fn seal(cli: &Cli, env: &Env, out: &mut dyn Write, agent: Option<&str>) -> Result<u8> {
    let now = env.now()?;
    let agent = env.agent(agent);
    let mut engine = open_engine(cli, env)?;
    let outcome = engine.seal(&agent, now)?;
    print_set_aside(&engine);
    match outcome {
        SealOutcome::NothingToSeal { entries } => write_out(
            out,
            &format!("nothing to seal: all {entries} entries verify\n"),
        )?,
        SealOutcome::Sealed { accepted, source } => {
            let mut text = format!(
                "sealed {} ({}:{}):\n",
                crate::verify::count_accepted(&accepted),
                source.file,
                source.line
            );
            for f in &accepted {
                // Foreign text has no key.
                let key = if f.key.is_empty() {
                    String::new()
                } else {
                    format!(" {}", f.key)
                };
                text.push_str(&format!("  {}:{}{key} ({})\n", f.file, f.line, f.kind));
            }
            write_out(out, &text)?;
            say_workspace(cli, env, engine.workspace().root());
        }
    }
    Ok(EXIT_OK)
}

/// `mem7 import-notes`: reads the notes (`crate::transfer::note_files`), names the bad ones,
/// then prints what it would store or stores it in one batch through the import path.
pub(super) fn import_notes(
    cli: &Cli,
    env: &Env,
    out: &mut dyn Write,
    path: &Path,
    write: bool,
    skip_bad: bool,
) -> Result<u8> {
    use crate::transfer::note_files as notes;
    let now = env.now()?;
    let root = env.workspace(cli.workspace.as_deref());
    let ws = crate::front::owners::open(env, &root)?;
    let max = ws.config().max_value_bytes();
    if !path.exists() {
        return Err(Error::input(
            format!("{} does not exist", path.display()),
            "give a notes folder, a Claude Code memory folder (~/.claude/projects/<project>/memory) or one .md file",
        ));
    }
    let batch = notes::collect(path, max)?;
    let shown = |file: &str| path.join(file).display().to_string();
    if !batch.bad.is_empty() {
        for b in &batch.bad {
            let verb = if skip_bad { "skipped " } else { "" };
            eprintln!("mem7: {verb}{}:{}: {}", shown(&b.file), b.line, b.problem);
        }
        if !skip_bad {
            return Err(Error::input(
                format!(
                    "{} bad note{}; nothing was written",
                    batch.bad.len(),
                    if batch.bad.len() == 1 { "" } else { "s" }
                ),
                "fix them, or pass --skip-bad to import the rest",
            ));
        }
    }
    let mut engine = session::open_workspace(env, ws)?;
    let mut records = Vec::new();
    let mut unchanged = 0;
    let mut text = String::new();
    for (i, f) in batch.facts.iter().enumerate() {
        let from = f
            .valid_from
            .map_or_else(|| "now".to_string(), |t| t.to_string());
        let req = StoreRequest {
            key: f.key.clone(),
            value: f.value.clone(),
            valid_from: f.valid_from,
            valid_to: None,
            tags: f.tags.clone(),
            agent: notes::agent_for(&f.file),
            allow_secret: false,
            // Notes are an agent's (Claude Code's auto memory is written by the
            // model): recorded within the ceiling, never a standing rule.
            tier: None,
            by: crate::core::Writer::Model,
        };
        // The engine says whether the fact already holds, by the rule a store applies
        // (tier included). A request it refuses is not skipped here: the import below
        // refuses it again, naming its line, and nothing is written.
        if engine.holds(&req, now).unwrap_or(false) {
            unchanged += 1;
            text.push_str(&format!(
                "unchanged {} (holds; {}:{})\n",
                f.key,
                shown(&f.file),
                f.line
            ));
            continue;
        }
        if !write {
            text.push_str(&format!(
                "would store {} = {} (valid from {from}; {}:{})\n",
                f.key,
                render::shorten(&f.value, 60),
                shown(&f.file),
                f.line
            ));
        }
        records.push(crate::engine::ImportRecord {
            op: crate::engine::ImportOp::Store,
            req,
            recorded: None,
            entry: None,
            origin: None,
            line: i + 1,
            keep_ties: false,
        });
    }
    let files = format!(
        "{} file{}",
        batch.files,
        if batch.files == 1 { "" } else { "s" }
    );
    if !write {
        text.push_str(&format!(
            "dry run: {} to store, {unchanged} unchanged, {} bad, from {files}; nothing written (pass --write to store)\n",
            records.len(),
            batch.bad.len()
        ));
        write_out(out, &text)?;
        return Ok(EXIT_OK);
    }
    let outcome = if records.is_empty() {
        Default::default()
    } else {
        engine.import(&records, now)?
    };
    print_set_aside(&engine);
    let outcome: crate::engine::ImportOutcome = outcome;
    text.push_str(&format!(
        "imported notes: {} stored, {} unchanged, {} bad skipped, from {files}\n",
        outcome.stored,
        unchanged + outcome.unchanged,
        batch.bad.len()
    ));
    write_out(out, &text)?;
    Ok(EXIT_OK)
}

/// Reads a value from standard input; one trailing line break is dropped (as `$(…)` would).
fn read_stdin() -> Result<String> {
    let mut bytes = Vec::new();
    io::stdin()
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io("<stdin>", e))?;
    let mut text = String::from_utf8(bytes)
        .map_err(|_| Error::input("standard input is not valid UTF-8", "values are UTF-8 text"))?;
    if text.ends_with('\n') {
        text.pop();
        if text.ends_with('\r') {
            text.pop();
        }
    }
    Ok(text)
}

/// `mem7 import FILE|-`: checks every record while streaming the input
/// (`crate::transfer::import`), then plans and writes them in one batch.
pub(super) fn import(
    cli: &Cli,
    env: &Env,
    out: &mut dyn Write,
    file: &Path,
    allow_secret: bool,
) -> Result<u8> {
    let now = env.now()?;
    let input = crate::transfer::import::Input::open(file)?;
    let agent = |a: Option<&str>| env.agent(a);
    let root = env.workspace(cli.workspace.as_deref());
    let ws = crate::front::owners::open(env, &root)?;
    let count = crate::transfer::import::check(&input, &agent, allow_secret, ws.config())?;
    let mut engine = session::open_workspace(env, ws)?;
    let started = std::time::Instant::now();
    let outcome = engine.import_each(&mut input.records(&agent, allow_secret)?, now)?;
    print_set_aside(&engine);
    if let Some(first) = outcome.raised_ties.first() {
        eprintln!(
            "mem7: note: {} record{} (first: line {first}) recorded at the same instant as an entry it does not commute with could not keep that order at one instant: recorded 1µs later (docs/cli.md, mem7 export)",
            outcome.raised_ties.len(),
            if outcome.raised_ties.len() == 1 {
                ""
            } else {
                "s"
            },
        );
    }
    if outcome.lowered > 0 {
        eprintln!(
            "mem7: note: {} record{} named a tier above what imports may record here: written as `inferred` (set trust.agents: asserted in mem7.yaml to keep `asserted`)",
            outcome.lowered,
            if outcome.lowered == 1 { "" } else { "s" },
        );
    }
    write_out(
        out,
        &format!(
            "imported {} record{}: {} stored, {}{} unchanged, into {} file{} in {:.2?}{}\n",
            count,
            if count == 1 { "" } else { "s" },
            outcome.stored,
            // Said only when there are forgets, so store-only output is as before.
            if outcome.forgot > 0 {
                format!("{} forgotten, ", outcome.forgot)
            } else {
                String::new()
            },
            outcome.unchanged,
            outcome.files,
            if outcome.files == 1 { "" } else { "s" },
            started.elapsed(),
            // Said only when it happened: an export read back into its own workspace.
            match outcome.held {
                0 => String::new(),
                1 => "; skipped 1 record the workspace already holds".into(),
                n => format!("; skipped {n} records the workspace already holds"),
            }
        ),
    )?;
    say_workspace(cli, env, &root);
    Ok(EXIT_OK)
}
