//! The engine's meaning side, tested on a real workspace: the provider's state kept
//! across searches, and the vector set's refresh through the cache's journal.

use super::*;
use crate::core::chain::ChainKey;
use crate::embed::{ProviderKind, ProviderSpec};
use crate::engine::StoreRequest;

fn spec(model: &str) -> Resolved {
    Resolved::On(ProviderSpec {
        kind: ProviderKind::Ollama,
        url: "http://127.0.0.1:9".into(),
        model: model.into(),
        api_key: None,
        model_dir: "unused".into(),
        batch_size: 32,
        timeout: std::time::Duration::from_secs(1),
    })
}

/// An engine on a new workspace holding these facts.
fn engine_with(facts: &[(&str, &str)]) -> (tempfile::TempDir, Engine) {
    let dir = tempfile::tempdir().unwrap();
    crate::store::init(dir.path()).unwrap();
    let mut engine = Engine::open(dir.path(), ChainKey::Plain).unwrap();
    for (key, value) in facts {
        let req = StoreRequest {
            key: key.to_string(),
            value: value.to_string(),
            agent: "t".into(),
            ..Default::default()
        };
        engine.store(&req, TxTime::from_micros(1_000_000)).unwrap();
    }
    (dir, engine)
}

#[test]
fn the_same_provider_again_keeps_what_the_engine_holds_and_another_starts_over() {
    let dir = tempfile::tempdir().unwrap();
    crate::store::init(dir.path()).unwrap();
    let mut engine = Engine::open(dir.path(), ChainKey::Plain).unwrap();
    engine.set_embeddings(spec("a"));
    engine.cache().unwrap();
    assert!(engine.embed.cache.is_some());
    // A server resolves the provider on every search: the same one keeps its cache.
    engine.set_embeddings(spec("a"));
    assert!(
        engine.embed.cache.is_some(),
        "the same provider started over"
    );
    engine.set_embeddings(spec("b"));
    assert!(
        engine.embed.cache.is_none(),
        "another provider kept the old state"
    );
    assert_eq!(engine.embedding_model().as_deref(), Some("ollama/b"));
}

#[test]
fn a_refresh_finds_what_the_cache_journal_added_and_what_an_unjournaled_write_added() {
    let (_dir, mut engine) = engine_with(&[
        ("db:engine", "Postgres 16"),
        (
            "deploy:policy",
            "Deploys wait for the canary. Rollbacks go through the release channel.",
        ),
        ("ci:runner", "Buildkite"),
    ]);
    engine.set_embeddings(spec("a"));
    let model = engine.embedding_model().unwrap();
    let sentences = engine.ws.config().search.sentences();
    let texts = engine.index.texts_after(0, sentences).unwrap();
    let (db, deploy, ci) = (&texts[0], &texts[1], &texts[2]);
    assert!(
        !deploy.sentences.is_empty(),
        "a value of two sentences has their rows"
    );
    let missing = |engine: &mut Engine| engine.vectors(&model).unwrap().missing();
    assert_eq!(missing(&mut engine), 3);
    // The fill writes through a connection of its own, each write in the journal.
    let index_dir = engine.ws.index_dir().unwrap();
    let mut fill = EmbeddingCache::open(&index_dir).unwrap();
    fill.put_many(&model, &[(db.whole, vec![1.0, 0.0])])
        .unwrap();
    assert_eq!(missing(&mut engine), 2, "a whole text the journal names");
    fill.put_many(&model, &[(deploy.whole, vec![0.0, 1.0])])
        .unwrap();
    assert_eq!(missing(&mut engine), 2, "a sentence still has no vector");
    let rows: Vec<_> = deploy
        .sentences
        .iter()
        .map(|h| (*h, vec![0.6, 0.8]))
        .collect();
    fill.put_many(&model, &rows).unwrap();
    assert_eq!(
        missing(&mut engine),
        1,
        "its sentences' rows came after its whole text's"
    );
    // A write that kept no journal (a mem7 from before it) is looked up all the same.
    let raw = rusqlite::Connection::open(index_dir.join(crate::index::embeddings::FILE)).unwrap();
    let blob: Vec<u8> = [0.8f32, 0.6].iter().flat_map(|f| f.to_le_bytes()).collect();
    raw.execute(
        "INSERT INTO embeddings (text_hash, model, dim, vector) VALUES (?1, ?2, 2, ?3)",
        rusqlite::params![ci.whole.as_slice(), model, blob],
    )
    .unwrap();
    raw.execute("UPDATE stamp SET writes = writes + 1", [])
        .unwrap();
    assert_eq!(missing(&mut engine), 0, "an unjournaled write");
}

#[test]
fn the_texts_a_search_embeds_are_those_of_the_versions_it_names_less_the_cached_ones() {
    let (_dir, engine) = engine_with(&[
        ("db:engine", "Postgres 16"),
        ("ci:runner", "Buildkite"),
        ("deploy:day", "Thursday"),
    ]);
    let sentences = engine.ws.config().search.sentences();
    let texts = engine.index.texts_after(0, sentences).unwrap();
    assert_eq!(texts.len(), 3);
    let (db, ci) = (texts[0].id, texts[1].id);
    let mut cache = EmbeddingCache::open(&engine.ws.index_dir().unwrap()).unwrap();
    cache.put_many("m", &[(texts[1].whole, vec![1.0])]).unwrap();
    let wanted = |keys: bool| {
        let (n, kept) =
            vectors::missing_texts_of(&engine.index, &cache, "m", &[db, ci, db], keys, sentences)
                .unwrap();
        let mut texts: Vec<String> = kept.into_iter().map(|(_, t)| t).collect();
        texts.sort();
        assert_eq!(n, texts.len());
        texts
    };
    let expected = |with: &[&str]| {
        let mut v: Vec<String> = with.iter().map(|s| s.to_string()).collect();
        v.sort();
        v
    };
    let db_text = crate::embed::version_text("db:engine", "Postgres 16");
    assert_eq!(
        wanted(false),
        expected(&[&db_text]),
        "ci's text is cached, deploy was not asked about, db is asked twice"
    );
    assert_eq!(
        wanted(true),
        expected(&[
            &db_text,
            &vectors::key_text("db:engine"),
            &vectors::key_text("ci:runner")
        ]),
        "and their keys, with the local model"
    );
}
