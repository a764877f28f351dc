//! `mem7 verify`: the chain check, `--index`'s differences as findings, and the hint
//! about git's merge driver.

use std::io::Write;

use super::{Cli, EXIT_CHECK_FAILED, EXIT_OK, Env, open_engine, write_out};
use crate::error::Result;
use crate::front::{render, wire};

/// `mem7 verify`.
pub(super) fn verify(
    cli: &Cli,
    env: &Env,
    out: &mut dyn Write,
    index: bool,
    expect_head: Option<&str>,
    json: bool,
) -> Result<u8> {
    let root = env.workspace(cli.workspace.as_deref());
    let ws = crate::front::owners::open(env, &root)?;
    // Asking git about the merge driver takes a process or two: meanwhile, verify.
    let git_hint = std::thread::spawn({
        let root = root.clone();
        move || super::git::in_git_without_driver(&root)
    });
    let now = env.now()?;
    let mut report = crate::verify::verify_and_ahead(&ws, &env.chain_key()?, expect_head, now)?;
    if index {
        let mut engine = open_engine(cli, env)?;
        let check = engine.check_index()?;
        report.findings.extend(index_findings(&check));
        report
            .findings
            .sort_by(|a, b| (&a.file, a.line).cmp(&(&b.file, b.line)));
        if check.matches() {
            eprintln!(
                "mem7: the index matches the markdown ({} versions, chain head, file fingerprints)",
                check.expected_versions
            );
        } else {
            eprintln!("mem7: the index differed from the markdown; it was rebuilt");
        }
    }
    let text = if json {
        // The summary goes to standard error so standard output stays one array.
        eprint!("{}", render::verify_summary(&report));
        wire::verify_json(&report)
    } else {
        render::verify_human(&report)
    };
    write_out(out, &text)?;
    if git_hint.join().unwrap_or(false) {
        eprintln!(
            "mem7: hint: this workspace is in a git repository whose merges would interleave entries \
             (git's line-wise union merge); run `mem7 setup-git` once per clone"
        );
    }
    Ok(if report.is_broken() {
        EXIT_CHECK_FAILED
    } else {
        EXIT_OK
    })
}

/// `verify --index` differences as findings.
fn index_findings(check: &crate::engine::IndexCheck) -> Vec<crate::verify::Finding> {
    let finding = |file: &str, line: u32, key: &str, message: String| crate::verify::Finding {
        file: file.to_string(),
        line,
        key: key.to_string(),
        kind: crate::verify::FindingKind::IndexMismatch,
        message,
        computed: None,
    };
    let mut out = Vec::new();
    for v in &check.missing {
        out.push(finding(
            &v.source.file,
            v.source.line,
            &v.key,
            format!(
                "the index lacks the version valid {} → {} recorded {} → {}",
                v.valid_from, v.valid_to, v.tx_from, v.tx_to
            ),
        ));
    }
    for v in &check.extra {
        out.push(finding(&v.source.file, v.source.line, &v.key, format!(
            "the index holds a version the markdown does not imply (valid {} → {}, recorded {} → {})",
            v.valid_from, v.valid_to, v.tx_from, v.tx_to
        )));
    }
    for (file, what) in &check.files {
        out.push(finding(
            file,
            0,
            "",
            format!("file fingerprint differs: {what}"),
        ));
    }
    if let Some((recorded, actual)) = check.head {
        out.push(finding(
            "",
            0,
            "",
            format!("the index's chain head is {recorded}, the markdown's is {actual}"),
        ));
    }
    out
}
