//! Scopes (issue 23): a project workspace and the user's answering together.

use super::*;

// ---------------------------------------------------------------------------------------
// Scopes (issue 23): a project workspace and the user's answering together, found the
// way a person's shell finds them (no MEM7_WORKSPACE: the nearest mem7.yaml above the
// working directory, and ~/.mem7/workspace).

const SCOPE_NOW: &str = "2026-04-12T09:00:00Z";

/// A scratch home with a project (`proj`, run from its subfolder `proj/src`) and,
/// unless `bare_user`, the user's workspace at its default place (`~/.mem7/workspace`).
struct Scopes {
    dir: tempfile::TempDir,
}

impl Scopes {
    fn new() -> Scopes {
        let s = Scopes::without_user();
        s.outside_ok(&["init"]);
        assert!(s.user_ws().join("mem7.yaml").is_file());
        s
    }

    /// A project, and no user workspace yet.
    fn without_user() -> Scopes {
        let s = Scopes {
            dir: tempfile::tempdir().unwrap(),
        };
        std::fs::create_dir_all(s.dir.path().join("home")).unwrap();
        s.outside_ok(&["init", "proj"]);
        std::fs::create_dir_all(s.project().join("src")).unwrap();
        s
    }

    fn project(&self) -> std::path::PathBuf {
        self.dir.path().join("proj")
    }

    fn user_ws(&self) -> std::path::PathBuf {
        self.dir.path().join("home/.mem7/workspace")
    }

    fn local_ws(&self) -> std::path::PathBuf {
        self.project().join(".mem7/local")
    }

    /// `mem7 ARGS` run from `cwd`, with a pinned clock and no MEM7_WORKSPACE.
    fn run_at(&self, cwd: &std::path::Path, args: &[&str]) -> world::Run {
        self.run_when(cwd, SCOPE_NOW, args)
    }

    /// [`Scopes::run_at`] with the clock reading `now`.
    fn run_when(&self, cwd: &std::path::Path, now: &str, args: &[&str]) -> world::Run {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_mem7"))
            .args(args)
            .current_dir(cwd)
            .env_clear()
            .env("HOME", self.dir.path().join("home"))
            .env("MEM7_AGENT", "tester")
            .env("MEM7_NOW", now)
            .env("MEM7_EMBED_PROVIDER", "none")
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .output()
            .unwrap();
        world::finish(out)
    }

    /// From inside the project (its subfolder `src`).
    fn inside(&self, args: &[&str]) -> world::Run {
        self.run_at(&self.project().join("src"), args)
    }

    fn inside_ok(&self, args: &[&str]) -> world::Run {
        let r = self.inside(args);
        assert_eq!(r.code, 0, "mem7 {args:?}: {}{}", r.stdout, r.stderr);
        r
    }

    /// From the scratch directory, outside any project.
    fn outside(&self, args: &[&str]) -> world::Run {
        self.run_at(self.dir.path(), args)
    }

    fn outside_ok(&self, args: &[&str]) -> world::Run {
        let r = self.outside(args);
        assert_eq!(r.code, 0, "mem7 {args:?}: {}{}", r.stdout, r.stderr);
        r
    }

    /// The memory files' text of a workspace.
    fn memory(&self, ws: &std::path::Path) -> String {
        let Ok(read) = std::fs::read_dir(ws.join("memory")) else {
            return String::new();
        };
        read.flatten()
            .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
            .collect()
    }

    /// The usual stack: a user fact, a project fact, and one key in both.
    fn stocked() -> Scopes {
        let s = Scopes::new();
        // user:* goes to the user scope from inside the project; the rest to the project.
        let r = s.inside_ok(&["store", "user:editor", "helix"]);
        assert!(r.stdout.contains("  Scope: user\n"), "{}", r.stdout);
        let r = s.inside_ok(&["store", "deploy:target", "Render", "--json"]);
        assert_eq!(r.json()["scope"], "project", "{}", r.stdout);
        let r = s.inside_ok(&["store", "user:editor", "vim", "--scope", "project"]);
        assert!(r.stdout.contains("  Scope: project\n"), "{}", r.stdout);
        s
    }
}

/// `(value, scope, shadowed)` of each object of a JSON array of versions.
fn scoped(r: &world::Run) -> Vec<(String, String, bool)> {
    r.json()
        .as_array()
        .unwrap_or_else(|| panic!("not an array: {}", r.stdout))
        .iter()
        .map(|v| {
            assert_ne!(v["shadowed"], false, "shadowed is absent or true: {v}");
            (
                v["value"].as_str().unwrap().to_string(),
                v["scope"].as_str().unwrap().to_string(),
                v["shadowed"] == true,
            )
        })
        .collect()
}

fn sv(value: &str, scope: &str, shadowed: bool) -> (String, String, bool) {
    (value.to_string(), scope.to_string(), shadowed)
}

#[test]
fn scopes_a_user_and_a_project_workspace_answer_together_and_the_narrowest_wins() {
    let s = Scopes::stocked();
    let (user, project) = (s.memory(&s.user_ws()), s.memory(&s.project()));
    assert!(
        user.contains("> helix") && !user.contains("> vim"),
        "{user}"
    );
    assert!(!user.contains("deploy:target"), "{user}");
    assert!(project.contains("> vim") && project.contains("> Render"));
    assert!(!project.contains("> helix"), "{project}");

    // recall: the project answers, the user's value is shown as shadowed, never lost.
    let r = s.inside_ok(&["recall", "user:editor", "--json"]);
    assert_eq!(
        scoped(&r),
        [sv("vim", "project", false), sv("helix", "user", true)]
    );
    let r = s.inside_ok(&["recall", "user:editor"]);
    let (vim, helix) = (
        r.stdout.find("user:editor = vim").unwrap(),
        r.stdout.find("user:editor = helix").unwrap(),
    );
    assert!(vim < helix, "{}", r.stdout);
    assert!(r.stdout[vim..helix].contains("  Scope: project\n"));
    assert!(
        r.stdout[helix..].contains("  Scope: user (shadowed: a narrower scope answers)\n"),
        "{}",
        r.stdout
    );
    // A key only one scope holds answers from there.
    let r = s.inside_ok(&["recall", "deploy:target", "--json"]);
    assert_eq!(scoped(&r), [sv("Render", "project", false)]);

    // list: every key once answered, the shadowed value after its answer.
    let r = s.inside_ok(&["list", "--json"]);
    assert_eq!(
        scoped(&r),
        [
            sv("Render", "project", false),
            sv("vim", "project", false),
            sv("helix", "user", true),
        ]
    );
    let r = s.inside_ok(&["list"]);
    assert_eq!(
        r.stdout.matches("  Scope: project\n").count(),
        2,
        "{}",
        r.stdout
    );
    assert_eq!(
        r.stdout
            .matches("  Scope: user (shadowed: a narrower scope answers)\n")
            .count(),
        1,
        "{}",
        r.stdout
    );

    // history: every version of the key, the narrowest scope's first, each with its scope.
    let r = s.inside_ok(&["history", "user:editor", "--json"]);
    let got: Vec<(String, String)> = scoped(&r).into_iter().map(|(v, l, _)| (v, l)).collect();
    assert_eq!(
        got,
        [
            ("vim".to_string(), "project".to_string()),
            ("helix".to_string(), "user".to_string())
        ]
    );
    let r = s.inside_ok(&["history", "user:editor"]);
    assert!(r.stdout.contains("  Scope: project\n"), "{}", r.stdout);
    assert!(r.stdout.contains("  Scope: user"), "{}", r.stdout);

    // search: one list across scopes, the shadowed hit last and marked.
    let r = s.inside_ok(&["search", "editor", "--mode", "lexical", "--json"]);
    assert_eq!(
        scoped(&r),
        [sv("vim", "project", false), sv("helix", "user", true)]
    );
    let r = s.inside_ok(&["search", "editor", "--mode", "lexical"]);
    let first: Vec<&str> = r
        .stdout
        .lines()
        .filter(|l| l.starts_with("user:editor"))
        .collect();
    assert_eq!(first.len(), 2, "{}", r.stdout);
    assert!(first[0].ends_with("  [project]"), "{}", r.stdout);
    assert!(first[1].ends_with("  [user, shadowed]"), "{}", r.stdout);

    // The context block: each line says its scope; the shadowed value is left out.
    let block = s.inside_ok(&["context"]).stdout;
    assert!(
        block.contains("- `user:editor` = vim · valid 2026-04-12T09:00:00Z → ∞ · project\n"),
        "{block}"
    );
    assert!(
        block.contains("- `deploy:target` = Render · valid 2026-04-12T09:00:00Z → ∞ · project\n"),
        "{block}"
    );
    assert!(!block.contains("helix"), "{block}");
    assert!(block.contains("### Facts (2)\n"), "{block}");

    // --scope user: the user's workspace alone, its value not shadowed by anything.
    let r = s.inside_ok(&["recall", "user:editor", "--scope", "user", "--json"]);
    assert_eq!(scoped(&r), [sv("helix", "user", false)]);
    let r = s.inside_ok(&["recall", "user:editor", "--scope", "user"]);
    assert!(r.stdout.contains("user:editor = helix"), "{}", r.stdout);
    assert!(!r.stdout.contains("vim") && !r.stdout.contains("Scope:"));
    let r = s.inside_ok(&["list", "--scope", "user", "--json"]);
    assert_eq!(scoped(&r), [sv("helix", "user", false)]);
    let r = s.inside(&["recall", "deploy:target", "--scope", "user"]);
    assert_eq!(r.code, 4, "{}{}", r.stdout, r.stderr);
    let r = s.inside_ok(&["list", "--scope", "project", "--json"]);
    assert_eq!(
        scoped(&r),
        [sv("Render", "project", false), sv("vim", "project", false)]
    );
    let block = s.inside_ok(&["context", "--scope", "user"]).stdout;
    assert!(block.contains("- `user:editor` = helix"), "{block}");
    assert!(
        !block.contains("vim") && !block.contains(" · user\n"),
        "{block}"
    );

    // Everything still verifies, each workspace on its own chain.
    s.inside_ok(&["verify"]);
    s.outside_ok(&["verify"]);
}

#[test]
fn scopes_forget_and_the_scopes_setting_choose_the_workspace_a_write_goes_to() {
    let s = Scopes::stocked();
    // forget goes where a store of the key would (user:* to the user's), or to --scope.
    s.inside_ok(&["forget", "user:editor", "--scope", "project"]);
    let r = s.inside_ok(&["recall", "user:editor", "--json"]);
    assert_eq!(scoped(&r), [sv("helix", "user", false)]);
    s.inside_ok(&["forget", "user:editor"]);
    let r = s.inside(&["recall", "user:editor", "--json"]);
    assert_eq!((r.code, r.stdout.trim()), (4, "[]"), "{}", r.stderr);
    // The past is kept in both: history still has every version with its scope.
    let r = s.inside_ok(&["history", "user:editor", "--json"]);
    let scopes: Vec<String> = scoped(&r).into_iter().map(|(_, l, _)| l).collect();
    assert_eq!(scopes, ["project", "user"]);

    // `scopes:` in the user's own mem7.yaml names the classes that go to the user scope
    // (a project's never routes into the user's workspace).
    let yaml = s.user_ws().join("mem7.yaml");
    let mut text = std::fs::read_to_string(&yaml).unwrap();
    text.push_str("\nscopes:\n  user: [\"me:*\"]\n");
    std::fs::write(&yaml, text).unwrap();
    let r = s.inside_ok(&["store", "me:ticket", "PAY-1432", "--json"]);
    assert_eq!(r.json()["scope"], "user", "{}", r.stdout);
    let r = s.inside_ok(&["store", "pref:shell", "fish", "--json"]);
    assert_eq!(r.json()["scope"], "project", "{}", r.stdout);
    assert!(s.memory(&s.user_ws()).contains("> PAY-1432"));
    assert!(s.memory(&s.project()).contains("> fish"));
}

#[test]
fn scopes_a_write_to_a_scope_without_a_workspace_is_refused_and_writes_nothing() {
    let s = Scopes::without_user();
    let before = world::snapshot(s.dir.path());
    // Named outright: an error that says how to make it, and nothing anywhere.
    let r = s.inside(&["store", "user:editor", "helix", "--scope", "user"]);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.is_empty(), "{}", r.stdout);
    assert!(
        r.stderr.contains("user scope has no workspace"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("mem7 init "), "{}", r.stderr);
    assert_eq!(
        world::snapshot(s.dir.path()),
        before,
        "something was written"
    );
    assert!(!s.user_ws().exists());
    // A read of that scope alone says the same.
    let r = s.inside(&["recall", "user:editor", "--scope", "user"]);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("mem7 init "), "{}", r.stderr);
    // Outside a project there is no project scope to name.
    let r = s.outside(&["store", "deploy:target", "Render", "--scope", "project"]);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("no project scope here"), "{}", r.stderr);
    assert_eq!(
        world::snapshot(s.dir.path()),
        before,
        "something was written"
    );

    // By class alone, a user:* key without a user workspace stays in the project,
    // as it did before scopes, and one workspace says no scope.
    let r = s.inside_ok(&["store", "user:editor", "helix"]);
    assert!(!r.stdout.contains("Scope:"), "{}", r.stdout);
    assert!(s.memory(&s.project()).contains("> helix"));
    assert!(!s.user_ws().exists());
}

#[test]
fn scopes_local_keys_stay_in_this_checkout() {
    let s = Scopes::stocked();
    assert!(!s.local_ws().exists(), "made on its first write");
    let r = s.inside_ok(&["store", "local:branch", "add-nvmrc is half done"]);
    assert!(r.stdout.contains("  Scope: local\n"), "{}", r.stdout);
    assert!(s.memory(&s.local_ws()).contains("> add-nvmrc is half done"));
    assert!(!s.memory(&s.project()).contains("add-nvmrc"));
    assert!(!s.memory(&s.user_ws()).contains("add-nvmrc"));
    // Inside the project's index folder, which the project's .gitignore keeps out of git.
    let ignore = std::fs::read_to_string(s.project().join(".gitignore")).unwrap();
    assert!(ignore.lines().any(|l| l.trim() == ".mem7/"), "{ignore}");

    // The narrowest scope: it answers over the project's and the user's.
    s.inside_ok(&["store", "user:editor", "nano", "--scope", "local"]);
    let r = s.inside_ok(&["recall", "user:editor", "--json"]);
    assert_eq!(
        scoped(&r),
        [
            sv("nano", "local", false),
            sv("vim", "project", true),
            sv("helix", "user", true),
        ]
    );
    let r = s.inside_ok(&["recall", "local:branch", "--scope", "local", "--json"]);
    assert_eq!(scoped(&r), [sv("add-nvmrc is half done", "local", false)]);
    let block = s.inside_ok(&["context"]).stdout;
    assert!(block.contains("= nano · valid"), "{block}");
    assert!(block.contains(" → ∞ · local\n"), "{block}");
    assert!(
        !block.contains("vim") && !block.contains("helix"),
        "{block}"
    );

    // Outside the project, neither the project's nor its checkout's facts exist; the
    // local scope there is this machine's, inside the user's workspace (never synced).
    let r = s.outside(&["recall", "local:branch"]);
    assert_eq!(r.code, 4, "{}{}", r.stdout, r.stderr);
    let r = s.outside(&["store", "local:x", "y", "--scope", "local", "--json"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_eq!(r.json()["scope"], "local", "{}", r.stdout);
    assert!(s.memory(&s.user_ws().join(".mem7/local")).contains("> y"));
    assert!(!s.memory(&s.user_ws()).contains("> y"));
}

#[test]
fn scopes_outside_a_project_only_the_user_scope_answers() {
    let s = Scopes::stocked();
    let r = s.outside_ok(&["list", "--json"]);
    assert_eq!(scoped(&r), [sv("helix", "user", false)]);
    // One scope open: the text says none.
    let r = s.outside_ok(&["recall", "user:editor"]);
    assert!(r.stdout.contains("user:editor = helix"), "{}", r.stdout);
    assert!(!r.stdout.contains("Scope:"), "{}", r.stdout);
    let r = s.outside(&["recall", "deploy:target"]);
    assert_eq!(r.code, 4, "{}{}", r.stdout, r.stderr);
    // Any key written out here goes to the user's workspace.
    let r = s.outside_ok(&["store", "deploy:target", "Fly", "--json"]);
    assert_eq!(r.json()["scope"], "user", "{}", r.stdout);
    assert!(s.memory(&s.user_ws()).contains("> Fly"));
    // Inside, the project's value answers and the user's is shadowed.
    let r = s.inside_ok(&["recall", "deploy:target", "--json"]);
    assert_eq!(
        scoped(&r),
        [sv("Render", "project", false), sv("Fly", "user", true)]
    );
    let block = s.outside_ok(&["context"]).stdout;
    assert!(!block.contains(" · user\n"), "{block}");
    assert!(block.contains("= Fly · valid"), "{block}");
}

#[test]
fn scopes_export_holds_every_scope_or_the_one_named() {
    let s = Scopes::stocked();
    let r = s.inside_ok(&["export"]);
    let lines: Vec<(String, String, bool)> = r
        .stdout
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            (
                v["value"].as_str().unwrap().to_string(),
                v["scope"].as_str().unwrap().to_string(),
                v["shadowed"] == true,
            )
        })
        .collect();
    assert_eq!(
        lines,
        [
            sv("Render", "project", false),
            sv("vim", "project", false),
            sv("helix", "user", true),
        ]
    );
    let r = s.inside_ok(&["export", "--scope", "user"]);
    assert_eq!(r.stdout.lines().count(), 1, "{}", r.stdout);
    assert!(r.stdout.contains("\"helix\"") && r.stdout.contains("\"scope\":\"user\""));
    // --history is one workspace's entries: the project's, unless --scope names another.
    let r = s.inside_ok(&["export", "--history"]);
    assert!(
        r.stdout.contains("Render") && !r.stdout.contains("helix"),
        "{}",
        r.stdout
    );
    let r = s.inside_ok(&["export", "--history", "--scope", "user"]);
    assert!(
        r.stdout.contains("helix") && !r.stdout.contains("Render"),
        "{}",
        r.stdout
    );
}

#[test]
fn scopes_one_workspace_says_no_scope_in_its_text() {
    let s = Sandbox::new();
    let r = s.ok(&["store", "user:editor", "helix"], Some(NOW));
    assert!(!r.stdout.contains("Scope:"), "{}", r.stdout);
    for args in [
        &["recall", "user:editor"][..],
        &["list"],
        &["history", "user:editor"],
        &["search", "helix", "--mode", "lexical"],
        &["context"],
    ] {
        let mut cmd = s.command(args, Some(NOW));
        cmd.env("MEM7_EMBED_PROVIDER", "none");
        let r = world::finish(cmd.output().unwrap());
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
        assert!(r.stdout.contains("helix"), "{args:?}: {}", r.stdout);
        for mark in ["Scope:", "[project]", "[user]", " · project", " · user"] {
            assert!(!r.stdout.contains(mark), "{args:?}: {}", r.stdout);
        }
    }
}

#[test]
fn scopes_each_scope_reads_at_what_it_believes_now_even_ahead_of_this_clock() {
    // The user's workspace holds a fact recorded by a machine whose clock ran ahead;
    // the project's last entry is older. A read without --as-of means "what mem7
    // believes now" in each scope, so the user's fact answers in every stacked read, as
    // it does in the user scope alone.
    let s = Scopes::new();
    s.inside_ok(&["store", "deploy:target", "Render"]);
    let fast = "2026-05-01T13:00:00Z";
    let r = s.run_when(
        &s.project().join("src"),
        fast,
        &[
            "store",
            "user:shell",
            "fish shell",
            "--valid-from",
            "2026-01-01",
        ],
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        SCOPE_NOW < fast,
        "the test needs the fast clock ahead of {SCOPE_NOW}"
    );

    let r = s.inside_ok(&["recall", "user:shell", "--json"]);
    assert_eq!(scoped(&r), [sv("fish shell", "user", false)]);
    let r = s.inside_ok(&["search", "fish", "--json"]);
    let hits = r.json();
    let found: Vec<&str> = hits
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["value"].as_str().unwrap())
        .collect();
    assert_eq!(found, ["fish shell"], "{}", r.stdout);
    let r = s.inside_ok(&["context", "which shell"]);
    assert!(r.stdout.contains("fish shell"), "{}", r.stdout);
}
