//! `mem7 demo`: the worked example of docs/temporal.md, replayed with fixed clocks in a
//! temporary workspace, through the same engine the CLI uses.

use std::io::Write;

use crate::core::chain::ChainKey;
use crate::core::time::{TxTime, ValidTime};
use crate::engine::{Engine, StoreOutcome, StoreRequest};
use crate::error::{Error, Result};
use crate::store;

fn t(s: &str) -> TxTime {
    TxTime::parse(s).unwrap_or(TxTime::from_micros(0))
}

/// Runs the demo, printing to `out`.
pub fn run(out: &mut dyn Write) -> Result<()> {
    let dir = tempfile::Builder::new()
        .prefix("mem7-demo-")
        .tempdir()
        .map_err(|e| Error::io(std::env::temp_dir(), e))?;
    let root = dir.path().join("workspace");
    store::init(&root)?;
    let mut engine = Engine::open(&root, ChainKey::Plain)?;
    let mut text = String::new();
    text.push_str("mem7 demo: where did event7 run, and when did we know it?\n");
    text.push_str(&format!(
        "(a temporary workspace in {}, removed afterwards)\n\n",
        root.display()
    ));

    let steps = [
        ("2026-02-15T00:00:00Z", "Railway", None),
        ("2026-03-20T00:00:00Z", "Cloudflare", None),
        ("2026-04-12T00:00:00Z", "local only", Some("2026-04-05")),
    ];
    for (now, value, from) in steps {
        let shown_from = from
            .map(|f| format!(" --valid-from {f}"))
            .unwrap_or_default();
        text.push_str(&format!(
            "$ MEM7_NOW={now} mem7 store event7:host {value:?} --tag infra{shown_from}\n"
        ));
        let req = StoreRequest {
            key: "event7:host".into(),
            value: value.into(),
            valid_from: from.map(ValidTime::parse).transpose()?,
            valid_to: None,
            tags: vec!["infra".into()],
            agent: "demo".into(),
            allow_secret: false,
            tier: None,
            by: crate::core::Writer::Person,
        };
        match engine.store(&req, t(now))? {
            StoreOutcome::Stored { version, .. } => text.push_str(&format!(
                "  stored: {value} valid {} → {}\n",
                version.valid_from, version.valid_to
            )),
            StoreOutcome::Unchanged { .. } => text.push_str("  unchanged\n"),
        }
    }

    let now = t("2026-04-12T12:00:00Z");
    text.push_str(&format!("\nFour questions (now = {now}):\n\n"));
    let questions = [
        (
            "Where did event7 run on 04-10, as we knew it on 04-11?",
            "2026-04-10",
            Some("2026-04-11"),
        ),
        (
            "Where did event7 run on 04-10, as we know it now?",
            "2026-04-10",
            None,
        ),
        ("Where did it run on 03-01?", "2026-03-01", None),
        ("Where did it run on 02-01?", "2026-02-01", None),
    ];
    for (i, (question, valid_at, as_of)) in questions.iter().enumerate() {
        let va = ValidTime::parse(valid_at)?;
        let ao = as_of.map(TxTime::parse).transpose()?.unwrap_or(now);
        let as_of_flag = as_of.map(|a| format!(" --as-of {a}")).unwrap_or_default();
        text.push_str(&format!(
            "{}. {question}\n   $ mem7 recall event7:host --valid-at {valid_at}{as_of_flag}\n",
            i + 1
        ));
        let found: Vec<_> =
            crate::engine::Scopes::lent(crate::core::level::Level::User, &mut engine)
                .recall(
                    "event7:host",
                    crate::engine::ReadAt {
                        valid_at: va,
                        as_of: Some(ao),
                        now,
                    },
                    None,
                )?
                .rows
                .into_iter()
                .map(|s| s.version)
                .collect();
        match found.first() {
            Some(v) => text.push_str(&format!(
                "   → {}   (Valid: {} → {}; recorded {})\n\n",
                v.value, v.valid_from, v.valid_to, v.tx_from
            )),
            None => text.push_str("   → nothing: mem7 knows of no host for event7 then\n\n"),
        }
    }

    text.push_str("The markdown it wrote (the source of truth, ready for git):\n");
    for file in engine.workspace().scan()? {
        text.push_str(&format!("\n==> {} <==\n", file.name));
        text.push_str(&engine.workspace().read(&file.name)?);
    }
    out.write_all(text.as_bytes())
        .map_err(|e| Error::io("<stdout>", e))?;
    Ok(())
}
