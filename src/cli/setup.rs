//! `mem7 setup`: registers mem7's MCP server and a session-start hook (the context
//! block) with Claude Code or Codex, for one project or for the user, and with
//! `--capture` the hooks that record what the agent does (`mem7 hook`). Prints the
//! configuration, or merges it into the client's files (`--write`), keeping the rest of
//! them as they were.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::args::{Client, Scope};
use super::{EXIT_OK, Env, write_out};
use crate::error::{Error, Result};

/// The server's name in the clients' configuration.
const NAME: &str = "mem7";

/// One file to change and how.
enum Change {
    /// Set `mcpServers.mem7` in a JSON file.
    JsonServer { path: PathBuf, server: Value },
    /// Put each hook group into `hooks.EVENT` of a JSON file (replacing an older mem7
    /// group), and take mem7's groups out of the events of `drop`.
    JsonHooks {
        path: PathBuf,
        groups: Vec<(&'static str, Value)>,
        drop: Vec<&'static str>,
    },
    /// Set the `[mcp_servers.mem7]` table of a TOML file.
    TomlServer { path: PathBuf, table: String },
}

impl Change {
    fn path(&self) -> &Path {
        match self {
            Change::JsonServer { path, .. }
            | Change::JsonHooks { path, .. }
            | Change::TomlServer { path, .. } => path,
        }
    }

    /// What to add, as a person would paste it.
    fn snippet(&self) -> String {
        match self {
            Change::JsonServer { server, .. } => pretty(&json!({ "mcpServers": { NAME: server } })),
            Change::JsonHooks { groups, .. } => {
                let mut hooks = serde_json::Map::new();
                for (event, group) in groups {
                    hooks.insert(event.to_string(), json!([group]));
                }
                pretty(&json!({ "hooks": hooks }))
            }
            Change::TomlServer { table, .. } => table.clone(),
        }
    }

    /// The file's new content, given its current content (if any).
    fn apply(&self, current: Option<&str>) -> Result<String> {
        match self {
            Change::TomlServer { table, .. } => Ok(merge_toml_table(current.unwrap_or(""), table)),
            Change::JsonServer { path, server } => {
                let mut doc = parse_json(path, current)?;
                object_at(path, &mut doc, "mcpServers")?.insert(NAME.into(), server.clone());
                Ok(pretty(&doc))
            }
            Change::JsonHooks { path, groups, drop } => {
                let mut doc = parse_json(path, current)?;
                let hooks = object_at(path, &mut doc, "hooks")?;
                for event in drop {
                    if let Some(list) = hooks.get_mut(*event) {
                        let Some(list) = list.as_array_mut() else {
                            return Err(not_shaped(path, &format!("hooks.{event} is not a list")));
                        };
                        list.retain(|g| !is_mem7_hook(g));
                        if list.is_empty() {
                            hooks.remove(*event);
                        }
                    }
                }
                for (event, group) in groups {
                    let list = hooks
                        .entry(event.to_string())
                        .or_insert_with(|| Value::Array(Vec::new()));
                    let Some(list) = list.as_array_mut() else {
                        return Err(not_shaped(path, &format!("hooks.{event} is not a list")));
                    };
                    list.retain(|g| !is_mem7_hook(g));
                    list.push(group.clone());
                }
                Ok(pretty(&doc))
            }
        }
    }
}

fn pretty(v: &Value) -> String {
    let mut s = serde_json::to_string_pretty(v).unwrap_or_default();
    s.push('\n');
    s
}

fn not_shaped(path: &Path, what: &str) -> Error {
    Error::input(
        format!("{}: {what}", path.display()),
        "fix the file by hand (or move it away), then run `mem7 setup` again; nothing was written",
    )
}

fn parse_json(path: &Path, current: Option<&str>) -> Result<Value> {
    match current {
        None => Ok(json!({})),
        Some(text) if text.trim().is_empty() => Ok(json!({})),
        Some(text) => {
            let doc: Value = serde_json::from_str(text)
                .map_err(|e| not_shaped(path, &format!("not valid JSON ({e})")))?;
            if doc.is_object() {
                Ok(doc)
            } else {
                Err(not_shaped(path, "not a JSON object"))
            }
        }
    }
}

fn object_at<'a>(
    path: &Path,
    doc: &'a mut Value,
    field: &str,
) -> Result<&'a mut serde_json::Map<String, Value>> {
    doc.as_object_mut()
        .ok_or_else(|| not_shaped(path, "not a JSON object"))?
        .entry(field)
        .or_insert_with(|| json!({}))
        .as_object_mut()
        .ok_or_else(|| not_shaped(path, &format!("`{field}` is not an object")))
}

/// Whether a hook group is one mem7 wrote (the context block, or a capture hook).
fn is_mem7_hook(group: &Value) -> bool {
    group["hooks"].as_array().is_some_and(|hooks| {
        hooks.iter().any(|h| {
            h["command"].as_str().is_some_and(|c| {
                c.contains(" context --hook ")
                    || c.ends_with(" hook claude-code")
                    || c.ends_with(" hook codex")
            })
        })
    })
}

/// The events a client's capture hooks listen to besides SessionStart, each with the
/// tools it is limited to (`None`: every tool, or an event without tools). Reads,
/// searches and prompts are not facts, so no hook runs for them at all.
fn capture_events(client: Client) -> &'static [(&'static str, Option<&'static str>)] {
    match client {
        Client::ClaudeCode => &[
            (
                "PostToolUse",
                Some("Edit|MultiEdit|Write|NotebookEdit|Bash|Task|Agent"),
            ),
            ("PostToolUseFailure", Some("Bash|Task|Agent")),
            ("SubagentStop", None),
            ("Stop", None),
            ("SessionEnd", None),
        ],
        Client::Codex => &[
            ("PostToolUse", None),
            ("SubagentStop", None),
            ("Stop", None),
        ],
    }
}

/// Replaces the `[mcp_servers.mem7]` table (and its sub-tables) in a TOML text, or
/// appends it; every other line stays as it was.
fn merge_toml_table(current: &str, table: &str) -> String {
    let header = format!("[mcp_servers.{NAME}]");
    let sub = format!("[mcp_servers.{NAME}.");
    let mut out = String::new();
    let mut skipping = false;
    let mut replaced = false;
    for line in current.lines() {
        let t = line.trim();
        if t.starts_with('[') {
            let was_skipping = skipping;
            skipping = t == header || t.starts_with(&sub);
            if was_skipping && !skipping {
                out.push('\n');
            }
            if skipping && !replaced {
                out.push_str(table);
                replaced = true;
            }
        }
        if !skipping {
            out.push_str(line);
            out.push('\n');
        }
    }
    if !replaced {
        if !out.is_empty() && !out.ends_with("\n\n") {
            out.push('\n');
        }
        out.push_str(table);
    }
    out
}

/// A word for a POSIX shell.
fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+:@%".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// A TOML basic string (JSON's escapes are TOML's).
fn toml_string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

/// The changes for `client` at `scope`.
fn plan(
    env: &Env,
    (exe, workspace): (&str, &str),
    client: Client,
    scope: Scope,
    capture: bool,
) -> Result<Vec<Change>> {
    let home = || {
        env.home.clone().ok_or_else(|| {
            Error::input(
                "HOME is not set, so the user's configuration cannot be found",
                "set HOME, or use --scope project",
            )
        })
    };
    let base = match scope {
        Scope::Project => env.cwd.clone(),
        Scope::User => home()?,
    };
    let args = json!(["--workspace", workspace, "mcp"]);
    let hook_command = |client: &str| {
        if capture {
            // `mem7 hook` prints the same block at a session's start, and records it.
            format!(
                "{} --workspace {} hook {client}",
                shell_quote(exe),
                shell_quote(workspace)
            )
        } else {
            format!(
                "{} --workspace {} context --hook {client}",
                shell_quote(exe),
                shell_quote(workspace)
            )
        }
    };
    let hooks = |name: &str, path: PathBuf| {
        let command = hook_command(name);
        let mut groups = vec![(
            "SessionStart",
            json!({
                "matcher": "startup|resume|clear|compact",
                "hooks": [{ "type": "command", "command": command, "timeout": 30 }],
            }),
        )];
        let events = capture_events(client);
        if capture {
            for (event, matcher) in events {
                // The matcher first, as in the SessionStart group.
                let mut group = match matcher {
                    Some(m) => json!({ "matcher": m }),
                    None => json!({}),
                };
                group["hooks"] = json!([{ "type": "command", "command": command, "timeout": 10 }]);
                // Claude Code runs these in the background: the agent never waits on
                // them (its SessionEnd stays in step, within the 1.5 s it allows).
                if client == Client::ClaudeCode && *event != "SessionEnd" {
                    group["hooks"][0]["async"] = json!(true);
                }
                groups.push((*event, group));
            }
        }
        Change::JsonHooks {
            path,
            groups,
            drop: if capture {
                Vec::new()
            } else {
                events.iter().map(|(e, _)| *e).collect()
            },
        }
    };
    Ok(match client {
        Client::ClaudeCode => vec![
            Change::JsonServer {
                path: match scope {
                    Scope::Project => base.join(".mcp.json"),
                    Scope::User => base.join(".claude.json"),
                },
                server: json!({ "type": "stdio", "command": exe, "args": args }),
            },
            hooks("claude-code", base.join(".claude").join("settings.json")),
        ],
        Client::Codex => {
            let dir = match (scope, &env.codex_home) {
                (Scope::User, Some(codex_home)) => codex_home.clone(),
                _ => base.join(".codex"),
            };
            vec![
                Change::TomlServer {
                    path: dir.join("config.toml"),
                    table: format!(
                        "[mcp_servers.{NAME}]\ncommand = {}\nargs = [\"--workspace\", {}, \"mcp\"]\n",
                        toml_string(exe),
                        toml_string(workspace)
                    ),
                },
                hooks("codex", dir.join("hooks.json")),
            ]
        }
    })
}

fn notes(client: Client, scope: Scope) -> &'static str {
    match (client, scope) {
        (Client::ClaudeCode, Scope::Project) => {
            "Claude Code asks once to approve the project's MCP server (.mcp.json). Both files hold this machine's paths to mem7 and the workspace: commit them only where those paths are the same for everyone.\n"
        }
        (Client::ClaudeCode, Scope::User) => "Restart Claude Code; `claude mcp list` shows mem7.\n",
        (Client::Codex, Scope::Project) => {
            "Codex reads a project's .codex/ only once you trust the project, and runs a new hook only after you review it in /hooks.\n"
        }
        (Client::Codex, Scope::User) => {
            "Restart Codex; review the new session-start hook in /hooks (Codex runs hooks only once trusted).\n"
        }
    }
}

/// The mem7 binary as the user reaches it, for the files and settings that will run it
/// later (`setup`, `setup-git`, the merge driver `sync` registers): the path the user
/// named to run it (made absolute; links are not resolved), or, for a bare name, the
/// first file of that name on `PATH`. A link there (a package manager's `bin/`, a link
/// into a build directory) stays a link, so an upgrade that moves the real file keeps
/// working. Either is taken only when it leads to this very binary; otherwise, and when
/// nothing names one, it is the running binary's own resolved path.
pub(super) fn invoked_binary() -> Result<PathBuf> {
    let running = std::env::current_exe().map_err(|e| Error::io("<current exe>", e))?;
    let named = std::env::args_os()
        .next()
        .map(PathBuf::from)
        .and_then(|argv0| {
            let cwd = std::env::current_dir().ok()?;
            named_binary(&argv0, std::env::var_os("PATH").as_deref(), &cwd)
        });
    let same = |p: &Path| {
        let canonical = |p: &Path| std::fs::canonicalize(p).ok();
        canonical(p).is_some_and(|c| Some(c) == canonical(&running))
    };
    Ok(named.filter(|p| same(p)).unwrap_or(running))
}

/// Where `argv0` points: itself when it holds a `/` (relative to `cwd`), else the first
/// regular file of that name in the directories of `path`.
fn named_binary(argv0: &Path, path: Option<&std::ffi::OsStr>, cwd: &Path) -> Option<PathBuf> {
    // `./mem7` is recorded as `/cwd/mem7`; `..` stays (a link may sit before it).
    let absolute = |p: &Path| -> PathBuf {
        crate::front::env::absolute(cwd, p)
            .components()
            .filter(|c| *c != std::path::Component::CurDir)
            .collect()
    };
    if argv0.components().count() > 1 {
        return Some(absolute(argv0));
    }
    std::env::split_paths(path?)
        .filter(|dir| !dir.as_os_str().is_empty())
        .map(|dir| absolute(&dir.join(argv0)))
        .find(|p| p.is_file())
}

/// Writes `text` to `path` atomically (a temporary file renamed over it). A new file
/// gets the user's usual mode (0666 less the umask, as `touch` or an editor would give
/// it: these files hold commands and paths, no secret); a file replaced keeps the mode
/// it had (a `~/.claude.json` kept private stays private).
fn write_atomic(path: &Path, text: &str) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let existing = std::fs::metadata(path).ok().map(|m| m.permissions());
    let mut builder = tempfile::Builder::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // Given to open(2), so the umask applies (tempfile's own default is 0600).
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let mut tmp = builder.tempfile_in(dir).map_err(|e| Error::io(dir, e))?;
    if let Some(mode) = existing {
        tmp.as_file()
            .set_permissions(mode)
            .map_err(|e| Error::io(tmp.path(), e))?;
    }
    tmp.write_all(text.as_bytes())
        .map_err(|e| Error::io(tmp.path(), e))?;
    tmp.persist(path).map_err(|e| Error::io(path, e.error))?;
    Ok(())
}

/// `mem7 setup CLIENT [--scope S] [--write]`.
pub fn run(
    out: &mut dyn Write,
    env: &Env,
    workspace: &Path,
    client: Client,
    scope: Scope,
    (write, capture): (bool, bool),
) -> Result<u8> {
    crate::store::Workspace::open(workspace)?;
    let exe = invoked_binary()?.display().to_string();
    let workspace = workspace.display().to_string();
    let changes = plan(env, (&exe, &workspace), client, scope, capture)?;
    if !write {
        let mut text = String::new();
        for c in &changes {
            text.push_str(&format!(
                "# {} (merge this in)\n{}\n",
                c.path().display(),
                c.snippet()
            ));
        }
        text.push_str(notes(client, scope));
        if capture {
            text.push_str(CAPTURE_NOTE);
        }
        text.push_str("Run again with --write to merge it into those files.\n");
        return write_out(out, &text).map(|()| EXIT_OK);
    }
    // Every file is read and merged before any is written: a file that cannot be
    // merged changes nothing.
    let mut merged = Vec::new();
    for c in &changes {
        let current = match std::fs::read_to_string(c.path()) {
            Ok(text) => Some(text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(Error::io(c.path(), e)),
        };
        merged.push((c.path(), c.apply(current.as_deref())?));
    }
    let mut text = String::new();
    for (path, content) in merged {
        write_atomic(path, &content)?;
        text.push_str(&format!("wrote {}\n", path.display()));
    }
    text.push_str(notes(client, scope));
    if capture {
        text.push_str(CAPTURE_NOTE);
    }
    write_out(out, &text).map(|()| EXIT_OK)
}

/// Said after a setup with `--capture`.
const CAPTURE_NOTE: &str = "The capture hooks record sessions, files edited, failing and passing checks, commits, pushes, pull requests and subagent tasks (docs/capture.md); `mem7 capture status` says where. For commits made outside the agent, run `mem7 setup-git --capture` in the checkout.\n";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toml_table_is_replaced_in_place_and_the_rest_kept() {
        let current = "model = \"o3\"\n\n[mcp_servers.mem7]\ncommand = \"old\"\n\n[mcp_servers.mem7.env]\nA = \"1\"\n\n[mcp_servers.other]\ncommand = \"x\"\n";
        let merged = merge_toml_table(current, "[mcp_servers.mem7]\ncommand = \"new\"\n");
        assert_eq!(
            merged,
            "model = \"o3\"\n\n[mcp_servers.mem7]\ncommand = \"new\"\n\n[mcp_servers.other]\ncommand = \"x\"\n"
        );
        let appended = merge_toml_table("model = \"o3\"\n", "[mcp_servers.mem7]\n");
        assert_eq!(appended, "model = \"o3\"\n\n[mcp_servers.mem7]\n");
    }

    #[test]
    fn a_bare_name_is_looked_up_on_path_and_a_path_is_kept_as_named() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::write(bin.join("mem7"), "").unwrap();
        let path = std::env::join_paths([dir.path().join("nothing"), bin.clone()]).unwrap();
        let found = named_binary(Path::new("mem7"), Some(&path), Path::new("/"));
        assert_eq!(found, Some(bin.join("mem7")));
        assert_eq!(
            named_binary(Path::new("other"), Some(&path), Path::new("/")),
            None
        );
        assert_eq!(
            named_binary(Path::new("./target/mem7"), Some(&path), Path::new("/w")),
            Some(PathBuf::from("/w/target/mem7"))
        );
    }

    #[test]
    fn shell_quoting() {
        assert_eq!(shell_quote("/usr/bin/mem7"), "/usr/bin/mem7");
        assert_eq!(shell_quote("/a b/it's"), "'/a b/it'\\''s'");
    }
}
