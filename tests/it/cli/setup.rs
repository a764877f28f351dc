//! `init`, `setup` and `demo`, and finding the workspace from where a command runs.

use super::*;

/// With nothing set, the no-workspace error and a bare `mem7 init` name the same place,
/// `~/.mem7/workspace`, and every command then finds it; `init .` still makes the
/// current directory one, and a bare `init` inside a workspace leaves that one as it is.
#[test]
fn a_bare_init_creates_the_workspace_every_command_finds() {
    let s = Sandbox::bare();
    let default = s.dir.path().join("home/.mem7/workspace");
    let unset = |args: &[&str]| {
        let mut cmd = s.command(args, Some(NOW));
        cmd.env_remove("MEM7_WORKSPACE");
        world::finish(cmd.output().unwrap())
    };
    let r = unset(&["recall", "k"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr
            .contains(&format!("no mem7 workspace at {}", default.display())),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("hint: `mem7 init` creates it"),
        "{}",
        r.stderr
    );

    let r = unset(&["init"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.stdout,
        format!(
            "Created a mem7 workspace in {}\n  next: mem7 store project:hello \"world\"\n",
            default.display()
        )
    );
    assert_eq!(unset(&["store", "project:hello", "world"]).code, 0);
    let r = unset(&["recall", "project:hello"]);
    assert!(
        r.stdout.starts_with("project:hello = world\n"),
        "{}{}",
        r.stdout,
        r.stderr
    );
    assert!(std::fs::read_dir(default.join("memory")).unwrap().count() > 1);

    // Inside a workspace, a bare init names that one and changes nothing.
    let inside = default.join("memory");
    let mut cmd = s.command(&["init"], Some(NOW));
    cmd.env_remove("MEM7_WORKSPACE").current_dir(&inside);
    let r = world::finish(cmd.output().unwrap());
    assert_eq!(
        r.stdout,
        format!(
            "{} is already a mem7 workspace; nothing changed\n",
            default.display()
        )
    );

    // The current directory, named.
    let project = s.dir.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let mut cmd = s.command(&["init", "."], Some(NOW));
    cmd.env_remove("MEM7_WORKSPACE").current_dir(&project);
    let r = world::finish(cmd.output().unwrap());
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(project.join("mem7.yaml").is_file());
    assert!(r.stdout.contains("next: mem7 store"), "{}", r.stdout);
}

/// `setup` run through a link on PATH records the link, not the file it resolves to (a
/// package upgrade or a rebuilt build directory moves that), and writes new files with
/// the user's usual mode (0666 less the umask); a file it replaces keeps its own mode.
#[test]
fn setup_records_the_binary_as_found_on_path_with_the_usual_modes() {
    use std::os::unix::fs::PermissionsExt;
    let s = Sandbox::new();
    let bin = s.dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let link = bin.join("mem7");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_mem7"), &link).unwrap();
    let project = s.dir.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let codex = s.dir.path().join("home/.codex");
    std::fs::create_dir_all(&codex).unwrap();
    std::fs::write(codex.join("config.toml"), "model = \"o3\"\n").unwrap();
    std::fs::set_permissions(
        codex.join("config.toml"),
        std::fs::Permissions::from_mode(0o600),
    )
    .unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = s
        .shell(
            "umask 022 && cd project && mem7 setup claude-code --write \
             && mem7 setup codex --scope user --write",
        )
        .env("PATH", path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let read = |p: &std::path::Path| -> Value {
        serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
    };
    let mcp = read(&project.join(".mcp.json"));
    assert_eq!(mcp["mcpServers"]["mem7"]["command"], link.to_str().unwrap());
    let settings = read(&project.join(".claude/settings.json"));
    let hook = settings["hooks"]["SessionStart"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap();
    assert!(
        hook.starts_with(&format!("{} --workspace ", link.display())),
        "{hook}"
    );
    let toml = std::fs::read_to_string(codex.join("config.toml")).unwrap();
    assert!(
        toml.contains(&format!("command = \"{}\"", link.display())),
        "{toml}"
    );
    let mode = |p: std::path::PathBuf| std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(project.join(".mcp.json")), 0o644);
    assert_eq!(mode(project.join(".claude/settings.json")), 0o644);
    assert_eq!(mode(codex.join("hooks.json")), 0o644);
    assert_eq!(
        mode(codex.join("config.toml")),
        0o600,
        "a replaced file keeps its mode"
    );
}

#[test]
fn init_is_idempotent_and_never_clobbers() {
    let s = Sandbox::bare();
    let r = s.ok(&["init"], None);
    assert!(r.stdout.contains("Created"), "{}", r.stdout);
    for f in ["mem7.yaml", "README.md", ".gitattributes", ".gitignore"] {
        assert!(s.ws.join(f).is_file(), "{f}");
    }
    let gitattributes = std::fs::read_to_string(s.ws.join(".gitattributes")).unwrap();
    assert!(gitattributes.contains("memory/*.md merge=union"));
    std::fs::write(s.ws.join("mem7.yaml"), "# mine\n").unwrap();
    let r = s.ok(&["init"], None);
    assert!(r.stdout.contains("already"), "{}", r.stdout);
    assert_eq!(
        std::fs::read_to_string(s.ws.join("mem7.yaml")).unwrap(),
        "# mine\n"
    );
    // An explicit DIR wins; a project's own files are kept, never overwritten.
    let other = s.dir.path().join("other");
    std::fs::create_dir_all(other.join("memory")).unwrap();
    std::fs::write(other.join("README.md"), "mine").unwrap();
    std::fs::write(other.join(".gitignore"), "target/\n").unwrap();
    let r = s.ok(&["init", other.to_str().unwrap()], None);
    assert!(
        r.stdout.contains("kept your existing README.md"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("add the line `.mem7/`"), "{}", r.stdout);
    assert_eq!(
        std::fs::read_to_string(other.join("README.md")).unwrap(),
        "mine"
    );
    assert_eq!(
        std::fs::read_to_string(other.join(".gitignore")).unwrap(),
        "target/\n"
    );
    assert!(other.join("mem7.yaml").is_file());
    // A file where the workspace should go is refused.
    std::fs::write(s.dir.path().join("afile"), "x").unwrap();
    let r = s.run(
        &["init", s.dir.path().join("afile").to_str().unwrap()],
        None,
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
}

#[test]
fn workspace_is_found_from_an_ancestor_directory() {
    let s = Sandbox::new();
    s.ok(&["store", "k", "v"], Some(T1));
    let deep = s.ws.join("memory").join("sub");
    std::fs::create_dir_all(&deep).unwrap();
    let out = s
        .command(&["recall", "k", "--json"], Some(NOW))
        .env_remove("MEM7_WORKSPACE")
        .current_dir(&deep)
        .output()
        .unwrap();
    let r = world::finish(out);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.json()[0]["value"], "v");
    // --workspace beats MEM7_WORKSPACE.
    let r = s.run(
        &[
            "--workspace",
            s.ws.to_str().unwrap(),
            "recall",
            "k",
            "--json",
        ],
        Some(NOW),
    );
    assert_eq!(r.json()[0]["value"], "v");
}

#[test]
fn demo_prints_the_four_answers_and_the_markdown() {
    let s = Sandbox::bare();
    let r = s.ok(&["demo"], None);
    let answers: Vec<&str> = r
        .stdout
        .lines()
        .filter(|l| l.trim_start().starts_with("→"))
        .collect();
    assert_eq!(answers.len(), 4, "{}", r.stdout);
    assert!(answers[0].contains("Cloudflare"));
    assert!(answers[1].contains("local only"));
    assert!(answers[2].contains("Railway"));
    assert!(answers[3].contains("nothing"));
    assert!(r.stdout.contains("```mem7"));
    assert!(r.stdout.contains("> local only"));
}
