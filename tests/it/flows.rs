//! Every flow finds it (issue 36): a fact is found by inflected and compound forms of its
//! key's words in search and in the context block, a burst of command-line stores is
//! searchable by meaning at once, and the drift check names renames of one slot.

use std::path::PathBuf;

use crate::local_model::model;
use mem7::embed::Embedder;
use mem7::embed::local::LocalModel;

#[test]
fn probe_qualifier_similarities() {
    let Some(dir) = model() else { return };
    let mut m = LocalModel::load(dir, "local/all-MiniLM-L6-v2".into()).unwrap();
    let pairs: &[(&str, &str, bool)] = &[
        ("orchestration scheduler", "orchestration tool", true),
        ("stream broker", "stream platform", true),
        ("vector search database", "vector search engine", true),
        ("ticketing tracker", "ticketing platform", true),
        ("mail delivery relay", "mail delivery service", true),
        ("notebook server", "notebook platform", true),
        ("secret manager", "secret backend", true),
        ("orchestration dag count", "orchestration tool", false),
        ("stream partition count", "stream platform", false),
        (
            "vector search embedding dimension",
            "vector search engine",
            false,
        ),
        ("ticketing project key", "ticketing platform", false),
        ("mail delivery from address", "mail delivery service", false),
        ("notebook idle timeout minute", "notebook platform", false),
        ("bi license count", "bi tool", false),
        ("secret rotation day", "secret backend", false),
        ("stream retention hour", "stream platform", false),
        ("orchestration worker image", "orchestration tool", false),
        ("vector search index type", "vector search engine", false),
        ("ci timeout minute", "ci provider", false),
        ("cache eviction policy", "cache store", false),
        ("chat moderator", "chat platform", false),
        ("ci coverage service", "ci provider", false),
        ("database backup schedule", "database engine", false),
        ("feature store online store", "feature store backend", false),
        ("vpn exit node", "vpn provider", false),
        ("push quiet hour", "push provider", false),
        ("auth session ttl minute", "auth provider", false),
        ("fraud score model version", "fraud vendor", false),
        ("warehouse compute size", "warehouse vendor", false),
        ("docs host", "docs platform", true),
    ];
    let mut texts: Vec<&str> = Vec::new();
    for (a, b, _) in pairs {
        texts.push(a);
        texts.push(b);
    }
    let v = m.embed(&texts).unwrap();
    let cos = |a: &[f32], b: &[f32]| -> f32 { a.iter().zip(b).map(|(x, y)| x * y).sum() };
    for (i, (a, b, same)) in pairs.iter().enumerate() {
        let last = |s: &str| s.rsplit(' ').next().unwrap().to_string();
        let (wa, wb) = (last(a), last(b));
        let w = m.embed(&[&wa, &wb, "software tool", "software"]).unwrap();
        println!(
            "{same} {a} ~ {b}: whole {:.3} words {:.3} w~tool {:.3} w~software {:.3}",
            cos(&v[2 * i], &v[2 * i + 1]),
            cos(&w[0], &w[1]),
            cos(&w[0], &w[2]),
            cos(&w[0], &w[3]),
        );
    }
    let _ = PathBuf::new();
}
