//! mem7's entry-wise merge driver in git's config: the command `mem7 setup-git`
//! registers as `merge.union.driver` (shared with `mem7 sync`, which checks for it).

use std::path::Path;
use std::process::{Command, Stdio};

use crate::error::{Error, Result};

/// The value `mem7 setup-git` gives `merge.union.driver`: mem7 at `exe` as the driver.
pub fn driver_command(exe: &Path) -> String {
    format!(
        "'{}' merge-file %O %A %B --path %P",
        exe.display().to_string().replace('\'', "'\\''")
    )
}

/// Registers mem7's entry-wise merge driver in the repository holding `dir` (its own
/// config only). Returns the driver command.
pub fn register_driver(dir: &Path, exe: &Path) -> Result<String> {
    let driver = driver_command(exe);
    for (name, value) in [
        (
            "merge.union.name",
            "mem7: entry-wise merge of memory files (union for other files)",
        ),
        ("merge.union.driver", driver.as_str()),
    ] {
        let status = Command::new("git")
            .args(["-c", super::git::NO_HOOKS, "config", name, value])
            .current_dir(dir)
            .stdout(Stdio::null())
            .status()
            .map_err(|e| Error::io("git", e))?;
        if !status.success() {
            return Err(Error::input(
                format!("`git config {name}` failed in {}", dir.display()),
                "run `mem7 setup-git` inside the git repository that holds the workspace (`git init` first)",
            ));
        }
    }
    Ok(driver)
}

/// Whether a configured `merge.union.driver` is mem7's.
pub fn is_mem7_driver(value: Option<&str>) -> bool {
    value.is_some_and(|v| v.contains("merge-file"))
}

/// What `mem7 setup-git` did besides the driver.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Hook {
    /// mem7's pre-commit hook was written (or rewritten) at this path.
    Installed(std::path::PathBuf),
    /// A pre-commit hook that is not mem7's is there: it was left alone.
    KeptTheirs(std::path::PathBuf),
}

/// The first line after the shebang of the hook mem7 writes: how it knows its own.
const HOOK_MARK: &str = "# mem7 pre-commit hook (written by `mem7 setup-git`)";

/// Installs mem7's pre-commit hook (it runs `mem7 verify` on the workspace at `root`) in
/// the repository's own hooks folder, `.git/hooks`, never in the work tree: hooks that
/// arrive with a commit are never run. Also writes mem7's merge attributes for memory
/// files into `info/attributes`. A hook that is not mem7's is kept.
pub fn install_hook(root: &Path, exe: &Path) -> Result<Hook> {
    let (git, prefix) = super::git::Git::discover(root)?.ok_or_else(|| {
        Error::input(
            format!("{} is not inside a git repository", root.display()),
            "run `git init` in the workspace first, then `mem7 setup-git`",
        )
    })?;
    super::guard::ensure_attributes(&git, &prefix)?;
    let common = git.run(
        &["rev-parse", "--git-common-dir"],
        "run `mem7 setup-git` inside the git repository that holds the workspace",
    )?;
    let hooks = git.top().join(common.trim()).join("hooks");
    std::fs::create_dir_all(&hooks).map_err(|e| Error::io(&hooks, e))?;
    let path = hooks.join("pre-commit");
    match std::fs::read_to_string(&path) {
        Ok(text) if !text.contains(HOOK_MARK) => return Ok(Hook::KeptTheirs(path)),
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(Error::io(&path, e)),
    }
    let quote = |p: &Path| format!("'{}'", p.display().to_string().replace('\'', "'\\''"));
    let script = format!(
        "#!/bin/sh\n{HOOK_MARK}\n# Refuses a commit whose memory files do not verify (changed, removed, reordered or\n# hand-added entries, torn tails, links). After an intended hand edit, run `mem7 seal`\n# and commit the seal entry with it.\nif command -v mem7 >/dev/null 2>&1; then mem7=mem7; else mem7={exe}; fi\nexec \"$mem7\" --workspace {root} verify\n",
        exe = quote(exe),
        root = quote(root),
    );
    std::fs::write(&path, script).map_err(|e| Error::io(&path, e))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
            .map_err(|e| Error::io(&path, e))?;
    }
    Ok(Hook::Installed(path))
}
