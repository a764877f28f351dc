//! Scopes (issue 23): one `mem7 sync` syncs the project's workspace and the user's.

use super::*;

// ---------------------------------------------------------------------------------------
// Scopes (issue 23): one `mem7 sync` syncs the project's workspace and the user's, each
// with its own repository and remote; the local scope is never synced.

/// One machine of the scopes world: a home, a project repository (whose workspace is at
/// its top) and a user workspace that is a repository of its own.
struct Machine {
    home: PathBuf,
    project: PathBuf,
    user: PathBuf,
}

/// Two bare remotes, `project.git` and `user.git`, in one scratch directory.
struct Remotes {
    dir: tempfile::TempDir,
}

impl Remotes {
    fn new() -> Remotes {
        let r = Remotes {
            dir: tempfile::tempdir().unwrap(),
        };
        for bare in ["project.git", "user.git"] {
            r.git(r.dir.path(), &["init", "-q", "--bare", "-b", "main", bare]);
        }
        r
    }

    fn bare(&self, name: &str) -> PathBuf {
        self.dir.path().join(format!("{name}.git"))
    }

    fn git(&self, dir: &Path, args: &[&str]) -> String {
        let r = world::git(dir, &self.dir.path().join("nohome"), args);
        assert_eq!(r.code, 0, "git {args:?} failed: {}{}", r.stdout, r.stderr);
        r.stdout
    }

    /// Every change the bare repository `name` holds, as `git log -p` shows it.
    fn log(&self, name: &str) -> String {
        let bare = self.bare(name);
        let r = world::git(
            self.dir.path(),
            &self.dir.path().join("nohome"),
            &["--git-dir", bare.to_str().unwrap(), "log", "-p", "main"],
        );
        assert_eq!(r.code, 0, "git log of {name}: {}", r.stderr);
        r.stdout
    }

    fn head(&self, name: &str) -> Option<String> {
        let bare = self.bare(name);
        let r = world::git(
            self.dir.path(),
            &self.dir.path().join("nohome"),
            &[
                "--git-dir",
                bare.to_str().unwrap(),
                "rev-parse",
                "-q",
                "--verify",
                "refs/heads/main",
            ],
        );
        (r.code == 0).then(|| r.stdout.trim().to_string())
    }

    /// The first machine: new repositories for both workspaces, remotes set, not pushed.
    fn first(&self, name: &str) -> Machine {
        let m = self.machine(name);
        for (dir, bare) in [(&m.project, "project"), (&m.user, "user")] {
            std::fs::create_dir_all(dir).unwrap();
            m.git(dir, &["init", "-q", "-b", "main"]);
            m.identity(dir, name);
            m.git(
                dir,
                &["remote", "add", "origin", self.bare(bare).to_str().unwrap()],
            );
        }
        // A bare `mem7 init` from outside the project makes the user's workspace.
        m.ok(&m.home.clone(), &["init"]);
        m.ok(&m.home.clone(), &["init", m.project.to_str().unwrap()]);
        std::fs::create_dir_all(m.project.join("src")).unwrap();
        m
    }

    /// Another machine: clones of both remotes.
    fn clone(&self, name: &str) -> Machine {
        let m = self.machine(name);
        for (dir, bare) in [(&m.project, "project"), (&m.user, "user")] {
            m.git(
                &m.home,
                &[
                    "clone",
                    "-q",
                    self.bare(bare).to_str().unwrap(),
                    dir.to_str().unwrap(),
                ],
            );
            m.identity(dir, name);
        }
        std::fs::create_dir_all(m.project.join("src")).unwrap();
        m
    }

    fn machine(&self, name: &str) -> Machine {
        let root = self.dir.path().join(name);
        let home = root.join("home");
        std::fs::create_dir_all(&home).unwrap();
        Machine {
            project: root.join("proj"),
            user: root.join("me"),
            home,
        }
    }
}

impl Machine {
    fn git(&self, dir: &Path, args: &[&str]) -> String {
        let r = world::git(dir, &self.home, args);
        assert_eq!(r.code, 0, "git {args:?} failed: {}{}", r.stdout, r.stderr);
        r.stdout
    }

    fn identity(&self, repo: &Path, name: &str) {
        self.git(repo, &["config", "user.name", name]);
        self.git(
            repo,
            &["config", "user.email", &format!("{name}@example.com")],
        );
    }

    /// `mem7 ARGS` from `cwd`: no MEM7_WORKSPACE (the project is found from the working
    /// directory), the user's workspace named by MEM7_USER_WORKSPACE.
    fn run(&self, cwd: &Path, args: &[&str], now: &str) -> Run {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_mem7"));
        cmd.args(args).current_dir(cwd);
        world::isolated(&mut cmd, &self.home);
        cmd.env("MEM7_USER_WORKSPACE", &self.user)
            .env("MEM7_AGENT", "tester")
            .env("MEM7_EMBED_PROVIDER", "none")
            .env("MEM7_NOW", now);
        finish(cmd.output().unwrap())
    }

    fn ok(&self, cwd: &Path, args: &[&str]) -> Run {
        let r = self.run(cwd, args, "2026-05-01T08:00:00Z");
        assert_eq!(r.code, 0, "mem7 {args:?}: {}{}", r.stdout, r.stderr);
        r
    }

    /// From inside the project (its subfolder `src`), at `now`.
    fn inside(&self, args: &[&str], now: &str) -> Run {
        self.run(&self.project.join("src"), args, now)
    }

    fn inside_ok(&self, args: &[&str], now: &str) -> Run {
        let r = self.inside(args, now);
        assert_eq!(r.code, 0, "mem7 {args:?}: {}{}", r.stdout, r.stderr);
        r
    }
}

#[test]
fn scopes_one_sync_pushes_each_scope_to_its_own_remote_and_never_the_local_one() {
    let world = Remotes::new();
    let a = world.first("a");
    a.inside_ok(&["store", "user:editor", "helix"], "2026-05-01T09:00:00Z");
    a.inside_ok(
        &["store", "deploy:target", "Render"],
        "2026-05-01T09:01:00Z",
    );
    a.inside_ok(
        &["store", "local:branch", "add-nvmrc"],
        "2026-05-01T09:02:00Z",
    );

    // Several scopes: a header before each scope's report, the project's first.
    let r = a.inside_ok(&["sync"], "2026-05-01T09:03:00Z");
    let project = format!("project scope ({}):\n", a.project.display());
    let user = format!("user scope ({}):\n", a.user.display());
    let (p, u) = (
        r.stdout
            .find(&project)
            .unwrap_or_else(|| panic!("{}", r.stdout)),
        r.stdout
            .find(&user)
            .unwrap_or_else(|| panic!("{}", r.stdout)),
    );
    assert!(p < u, "{}", r.stdout);
    assert!(!r.stdout.contains("local scope"), "{}", r.stdout);

    // Each remote got its own scope's entries, and nothing of the others'.
    let (plog, ulog) = (world.log("project"), world.log("user"));
    assert!(plog.contains("deploy:target") && plog.contains("> Render"));
    assert!(
        !plog.contains("user:editor") && !plog.contains("helix"),
        "{plog}"
    );
    assert!(ulog.contains("user:editor") && ulog.contains("> helix"));
    assert!(!ulog.contains("deploy:target"), "{ulog}");
    for log in [&plog, &ulog] {
        assert!(!log.contains("local:branch") && !log.contains("add-nvmrc"));
    }
    let files = a.git(&a.project, &["ls-files"]);
    assert!(!files.contains(".mem7/"), "{files}");

    // A second machine: clones of both, found the same way, answer alike; the local
    // fact stayed on the first machine.
    let b = world.clone("b");
    let r = b.inside_ok(&["list", "--json"], "2026-05-01T10:00:00Z");
    let got: Vec<(String, String)> = r
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            (
                v["key"].as_str().unwrap().to_string(),
                v["scope"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let want = |k: &str, s: &str| (k.to_string(), s.to_string());
    assert_eq!(
        got,
        [
            want("deploy:target", "project"),
            want("user:editor", "user")
        ]
    );
    let r = b.inside(&["recall", "local:branch"], "2026-05-01T10:00:00Z");
    assert_eq!(r.code, 4, "{}{}", r.stdout, r.stderr);

    // --scope user syncs the user's workspace alone, with the one-scope report.
    let project_head = world.head("project");
    b.inside_ok(&["store", "pref:shell", "fish"], "2026-05-01T10:01:00Z");
    b.inside_ok(
        &["store", "ci:provider", "Buildkite"],
        "2026-05-01T10:02:00Z",
    );
    let r = b
        .inside_ok(
            &["sync", "--scope", "user", "--json"],
            "2026-05-01T10:03:00Z",
        )
        .json();
    assert!(r.is_object(), "{r}");
    assert_eq!(r["pushed"], true, "{r}");
    assert_eq!(keys(&r["sent"]), ["pref:shell"]);
    assert_eq!(
        world.head("project"),
        project_head,
        "the project was synced"
    );
    assert!(world.log("user").contains("> fish"));
    assert!(!world.log("project").contains("Buildkite"));

    // --json with both: an array of the scopes' reports, each saying its scope.
    let r = b
        .inside_ok(&["sync", "--json"], "2026-05-01T10:04:00Z")
        .json();
    let reports = r.as_array().unwrap_or_else(|| panic!("not an array: {r}"));
    assert_eq!(reports.len(), 2, "{r}");
    assert_eq!(reports[0]["scope"], "project");
    assert_eq!(reports[1]["scope"], "user");
    assert_eq!(keys(&reports[0]["sent"]), ["ci:provider"]);
    assert_eq!(reports[1]["sent"]["entries"], 0, "{r}");
    assert!(world.log("project").contains("> Buildkite"));

    // The first machine receives both scopes' news with one sync.
    let r = a
        .inside_ok(&["sync", "--json"], "2026-05-01T11:00:00Z")
        .json();
    assert_eq!(keys(&r[0]["received"]), ["ci:provider"], "{r}");
    assert_eq!(keys(&r[1]["received"]), ["pref:shell"], "{r}");
    let r = a.inside_ok(&["recall", "pref:shell", "--json"], "2026-05-01T11:00:01Z");
    assert_eq!(r.json()[0]["scope"], "user", "{}", r.stdout);
    a.inside_ok(&["recall", "local:branch"], "2026-05-01T11:00:01Z");

    // The local scope is never synced: naming it is an error, and nothing moves.
    let heads = (world.head("project"), world.head("user"));
    let r = a.inside(&["sync", "--scope", "local"], "2026-05-01T11:01:00Z");
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("never synced"), "{}", r.stderr);
    assert_eq!((world.head("project"), world.head("user")), heads);
}

#[test]
fn scopes_outside_a_project_sync_is_the_user_workspace_exactly_as_before() {
    let world = Remotes::new();
    let a = world.first("a");
    a.inside_ok(&["store", "user:editor", "helix"], "2026-05-01T09:00:00Z");
    // Outside the project only the user's workspace is open: one report, no header.
    let r = a.run(&a.home, &["sync", "--json"], "2026-05-01T09:01:00Z");
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let r = r.json();
    assert!(r.is_object(), "{r}");
    assert_eq!(keys(&r["sent"]), ["user:editor"]);
    assert_eq!(world.head("project"), None, "the project was synced");
    let r = a.run(
        &a.home,
        &["sync", "--scope", "project"],
        "2026-05-01T09:02:00Z",
    );
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("no project scope"), "{}", r.stderr);
}

/// The usual setup: a project in git, the user's workspace in no repository. One sync
/// inside the project syncs the project, says the user scope was left out and why, and
/// succeeds; `--scope user` is still the error it names.
#[test]
fn scopes_a_user_workspace_in_no_repository_is_left_out_of_sync_with_a_note() {
    let world = Remotes::new();
    let a = world.first("a");
    // Take the user workspace out of git: it was made a repository by `first`.
    std::fs::remove_dir_all(a.user.join(".git")).unwrap();
    a.inside_ok(&["store", "user:editor", "helix"], "2026-05-01T09:00:00Z");
    a.inside_ok(
        &["store", "deploy:target", "Render"],
        "2026-05-01T09:01:00Z",
    );
    let r = a.inside_ok(&["sync"], "2026-05-01T09:02:00Z");
    assert!(
        r.stderr.contains("the user scope (")
            && r.stderr
                .contains("is in no git repository, so it was not synced"),
        "{}",
        r.stderr
    );
    // The one scope synced reports as a single sync does: no header.
    assert!(!r.stdout.contains("project scope ("), "{}", r.stdout);
    let plog = world.log("project");
    assert!(
        plog.contains("> Render") && !plog.contains("helix"),
        "{plog}"
    );
    let r = a.inside(&["sync", "--scope", "user"], "2026-05-01T09:03:00Z");
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("git"), "{}", r.stderr);
}
