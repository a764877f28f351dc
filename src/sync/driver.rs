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
            .args(["config", name, value])
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
