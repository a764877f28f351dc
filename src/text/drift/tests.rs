//! The drift rules as tables of key pairs: what is one slot, what is another, what the model is asked.

use super::*;

fn verdict(new: &str, old: &str) -> Verdict {
    judge(&KeyWords::of(new), &KeyWords::of(old))
}

fn same(new: &str, old: &str) -> bool {
    matches!(verdict(new, old), Verdict::Same(_))
}

#[test]
fn keys_are_read_as_canonical_words() {
    assert_eq!(
        KeyWords::of("team:onCallEngineer").phrase(),
        "team on call engineer"
    );
    assert_eq!(
        KeyWords::of("db.primary-host").phrase(),
        "database primary host"
    );
    assert_eq!(
        KeyWords::of("k8s:Namespaces").phrase(),
        "kubernetes namespace"
    );
    assert_eq!(KeyWords::of("::").phrase(), "");
}

#[test]
fn shape_drifts_are_the_same_slot() {
    // Separators, case, order, plural, abbreviations, joined words.
    assert!(same("team:on-call", "team:on_call"));
    assert!(same("Team:Lead", "team:lead"));
    assert!(same("owner:payments", "payments:owner"));
    assert!(same("team:members_count", "team:member_count"));
    assert!(same("database:primary_host", "db:primary_host"));
    assert!(same("repository:url", "repo:url"));
    assert!(same("localization:platform", "l10n:platform"));
    assert!(same("team:oncall", "team:on_call"));
    assert!(same("nas:os", "nas:operating_system"));
}

#[test]
fn longer_and_shorter_names_of_one_attribute_are_the_same_slot() {
    assert!(same("payments:owner_name", "payments:owner"));
    assert!(same("team:oncall", "team:on_call_engineer"));
    assert!(same("message_queue:broker", "queue:broker"));
    assert!(same("api:url", "api:base_url"));
}

#[test]
fn synonyms_are_the_same_slot() {
    assert!(same("ci:platform", "ci:provider"));
    assert!(same("caching:backend", "cache:store"));
    assert!(same("push:service", "push:provider"));
}

#[test]
fn other_attributes_and_other_entities_are_other_slots() {
    for (new, old) in [
        ("ci:timeout_minutes", "ci:provider"),
        ("db:replica_host", "db:primary_host"),
        ("search:owner", "payments:owner"),
        ("host2:role", "host1:role"),
        ("deploy:staging_url", "deploy:prod_url"),
        ("api:v2_url", "api:v1_url"),
        ("wifi:guest_ssid", "wifi:ssid"),
        ("python:min_version", "python:max_version"),
        ("user:previous_ticket", "user:current_ticket"),
        ("analytics:tool", "ci:provider"),
    ] {
        assert!(!same(new, old), "{new} beside {old}");
    }
}

#[test]
fn a_near_pair_without_rules_asks_the_model() {
    assert_eq!(
        verdict("pipeline:conductor", "pipeline:orchestrator"),
        Verdict::AskMeaning {
            mine: "conductor".into(),
            theirs: "orchestrator".into()
        }
    );
    // Numbers and contrasts are never asked about.
    assert_eq!(verdict("host3:ip", "host1:ip"), Verdict::Different);
    assert_eq!(
        verdict("env:staging_url", "env:prod_url"),
        Verdict::Different
    );
    // Nothing shared: nothing to ask.
    assert_eq!(verdict("dns:registrar", "ci:provider"), Verdict::Different);
}

#[test]
fn abbreviations_need_the_first_letter_and_the_order() {
    assert!(abbreviates("mgmt", "management"));
    assert!(abbreviates("k8s", "kubernetes"));
    assert!(!abbreviates("k9s", "kubernetes"));
    assert!(!abbreviates("tm", "management"));
    assert!(!abbreviates("v1", "v12"));
}

#[test]
fn a_generic_word_swapped_for_a_specific_one_asks_about_the_whole_keys() {
    assert_eq!(
        verdict("orchestration:scheduler", "orchestration:tool"),
        Verdict::AskQualifier {
            generic: "tool".into(),
            specific: "scheduler".into()
        }
    );
    assert_eq!(
        verdict("stream:platform", "stream:broker"),
        Verdict::AskQualifier {
            generic: "platform".into(),
            specific: "broker".into()
        }
    );
    // Two words for one generic word are another attribute, not a name for the thing.
    assert!(!matches!(
        verdict("orchestration:worker_image", "orchestration:tool"),
        Verdict::AskQualifier { .. }
    ));
}

#[test]
fn a_compound_finds_its_spaced_form_among_the_candidates() {
    let joined = KeyWords::of("oncall").stems();
    let spaced = KeyWords::of("team:on_call_rotation").stems();
    assert!(
        joined.iter().any(|s| spaced.contains(s)),
        "{joined:?} {spaced:?}"
    );
    assert!(same("play_test:owner", "playtest:lead"));
}
