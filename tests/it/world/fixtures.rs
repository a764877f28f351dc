//! The shared fixtures: the worked example, and the trees under `tests/fixtures/`.

use std::path::{Path, PathBuf};

use super::Sandbox;

/// The worked example (README.md, docs/temporal.md, `mem7 demo`): where event7 is hosted.
/// Railway from 2026-02-15, Cloudflare from 2026-03-20, and, learned on 2026-04-12, "local
/// only" since 2026-04-05: (when it was recorded, the value, its valid-from).
pub const WORKED_EXAMPLE: [(&str, &str, Option<&str>); 3] = [
    ("2026-02-15T00:00:00Z", "Railway", None),
    ("2026-03-20T00:00:00Z", "Cloudflare", None),
    ("2026-04-12T00:00:00Z", "local only", Some("2026-04-05")),
];

/// A sandbox holding the worked example: three versions of `event7:host`, each with
/// `tags` (the README's are `["infra"]`).
pub fn worked_example(tags: &[&str]) -> Sandbox {
    let sb = Sandbox::new();
    for (recorded, value, valid_from) in WORKED_EXAMPLE {
        let mut args = vec!["store", "event7:host", value];
        if let Some(from) = valid_from {
            args.extend(["--valid-from", from]);
        }
        for tag in tags {
            args.extend(["--tag", tag]);
        }
        sb.ok(&args, Some(recorded));
    }
    sb
}

/// `tests/fixtures/NAME`.
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// Copies the tree `from` into `to` (made as needed).
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}
