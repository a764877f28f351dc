//! git's other doors: `setup-git` (registering the merge driver), `merge-file` (the
//! driver itself), and whether a workspace sits in a clone without the driver.

use std::io::Write;
use std::path::Path;

use super::{Cli, EXIT_CHECK_FAILED, EXIT_OK, Env, write_out};
use crate::error::{Error, Result};
use crate::store;

/// `mem7 setup-git`.
pub(super) fn setup_git(cli: &Cli, env: &Env, out: &mut dyn Write, capture: bool) -> Result<u8> {
    let root = env.workspace(cli.workspace.as_deref());
    store::Workspace::open(&root)?;
    let exe = super::setup::invoked_binary()?;
    if capture {
        return setup_capture(env, out, &root, &exe);
    }
    let driver = crate::sync::driver::register_driver(&root, &exe)?;
    let hook = crate::sync::driver::install_hook(&root, &exe)?;
    let mut text = format!(
        "git merges in {} now keep memory entries whole (merge.union.driver = {driver}; attributes in .git/info/attributes)\n",
        root.display()
    );
    match hook {
        crate::sync::driver::Hook::Installed(path) => text.push_str(&format!(
            "commits now run `mem7 verify` first (hook: {})\n",
            path.display()
        )),
        crate::sync::driver::Hook::KeptTheirs(path) => text.push_str(&format!(
            "kept the pre-commit hook already at {}; add `mem7 --workspace {} verify` to it to verify memory before each commit\n",
            path.display(),
            root.display()
        )),
    }
    write_out(out, &text)?;
    Ok(EXIT_OK)
}

/// `mem7 setup-git --capture`: the capture hooks in the repository of the current
/// directory (the checkout being worked in), then the merge driver and pre-commit hook
/// of the workspace's repository when it is in one.
fn setup_capture(env: &Env, out: &mut dyn Write, root: &Path, exe: &Path) -> Result<u8> {
    use crate::front::capture::git::{Installed, install_hooks};
    let installed = install_hooks(&env.cwd, exe, root).map_err(|problem| {
        Error::input(
            problem,
            "run `mem7 setup-git --capture` inside the git checkout whose commits mem7 should record",
        )
    })?;
    let mut text = String::new();
    for i in installed {
        match i {
            Installed::Written(path) => text.push_str(&format!(
                "git now records in mem7 what it did (hook: {})\n",
                path.display()
            )),
            Installed::KeptTheirs(path, line) => text.push_str(&format!(
                "kept the hook already at {}; add this line to it to record what git did: {line}\n",
                path.display()
            )),
        }
    }
    write_out(out, &text)?;
    if crate::sync::driver::register_driver(root, exe).is_ok() {
        let mut plain = Vec::new();
        setup_git_plain(root, exe, &mut plain)?;
        out.write_all(&plain)
            .map_err(|e| Error::io("<stdout>", e))?;
    }
    Ok(EXIT_OK)
}

/// The pre-commit part of `setup-git`, once the driver is registered.
fn setup_git_plain(root: &Path, exe: &Path, out: &mut dyn Write) -> Result<()> {
    let hook = crate::sync::driver::install_hook(root, exe)?;
    let text = match hook {
        crate::sync::driver::Hook::Installed(path) => format!(
            "commits of {} now run `mem7 verify` first (hook: {})\n",
            root.display(),
            path.display()
        ),
        crate::sync::driver::Hook::KeptTheirs(path) => format!(
            "kept the pre-commit hook already at {}; add `mem7 --workspace {} verify` to it to verify memory before each commit\n",
            path.display(),
            root.display()
        ),
    };
    write_out(out, &text)
}

/// `mem7 merge-file`.
pub(super) fn merge_file(
    base: &Path,
    ours: &Path,
    theirs: &Path,
    path: Option<&str>,
) -> Result<u8> {
    let is_memory = path.is_none_or(|p| p.rsplit('/').next().is_some_and(store::is_day_file_name));
    if !is_memory {
        // Not a memory file: behave exactly like git's own union merge.
        let status = std::process::Command::new("git")
            .args(["-c", crate::sync::git::NO_HOOKS])
            .arg("merge-file")
            .arg("--union")
            .arg(ours)
            .arg(base)
            .arg(theirs)
            .status()
            .map_err(|e| Error::io("git merge-file", e))?;
        return Ok(if status.success() {
            EXIT_OK
        } else {
            EXIT_CHECK_FAILED
        });
    }
    let read = |p: &Path| std::fs::read_to_string(p).map_err(|e| Error::io(p, e));
    let merged =
        crate::sync::entry_merge::merge_entries(&read(base)?, &read(ours)?, &read(theirs)?);
    std::fs::write(ours, &merged.text).map_err(|e| Error::io(ours, e))?;
    if merged.conflict {
        eprintln!(
            "mem7: both sides edited the same old entry in {}; kept ours. Compare with `git diff` and run `mem7 verify`",
            path.unwrap_or("the memory file")
        );
        return Ok(EXIT_CHECK_FAILED);
    }
    Ok(EXIT_OK)
}

/// Whether `root` is inside a git work tree that lacks mem7's merge driver. False when
/// git is not installed.
pub(super) fn in_git_without_driver(root: &Path) -> bool {
    // Spawning git costs milliseconds: ask it only when a `.git` is somewhere above.
    if !root.ancestors().any(|dir| dir.join(".git").exists()) {
        return false;
    }
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(["-c", crate::sync::git::NO_HOOKS])
            .args(args)
            .current_dir(root)
            .stderr(std::process::Stdio::null())
            .output()
            .ok()
    };
    let inside = git(&["rev-parse", "--is-inside-work-tree"]).is_some_and(|o| o.status.success());
    inside
        && !git(&["config", "--get", "merge.union.driver"])
            .is_some_and(|o| String::from_utf8_lossy(&o.stdout).contains("merge-file"))
}
