//! The one git runner, and the environment every git process of the tests runs in.

use std::path::Path;
use std::process::Command;

use super::{Run, finish};

/// The environment of every git process a test starts, and of every mem7 process that
/// runs git: nothing of the developer's. No variable of the test's but `PATH`; no system
/// or global configuration; `HOME` is `home`; git looks for a repository no higher than
/// `home`'s parent; messages in the C locale.
pub fn isolated<'a>(cmd: &'a mut Command, home: &Path) -> &'a mut Command {
    cmd.env_clear()
        .env("HOME", home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CEILING_DIRECTORIES", home.parent().unwrap_or(home))
        .env("LC_ALL", "C")
        .env("PATH", std::env::var("PATH").unwrap_or_default())
}

/// The one git runner: `git ARGS` in `dir`, [`isolated`] with `home`, a fixed author and
/// committer (a repository's own `user.name` is overridden only for commits made here).
pub fn git(dir: &Path, home: &Path, args: &[&str]) -> Run {
    let mut cmd = Command::new("git");
    cmd.args(args).current_dir(dir);
    isolated(&mut cmd, home)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.invalid");
    finish(cmd.output().expect("git is installed"))
}

/// [`git`] that must succeed; its standard output.
pub fn git_ok(dir: &Path, home: &Path, args: &[&str]) -> String {
    let r = git(dir, home, args);
    assert_eq!(r.code, 0, "git {args:?} failed: {}{}", r.stdout, r.stderr);
    r.stdout
}
