//! Every exit code docs/cli.md documents, reached through the real binary: one case each,
//! each asserted exactly, with what the code promises (nothing written on a refused
//! request, the "failure inside mem7" line on code 3).

use std::collections::BTreeSet;

use crate::world::Sandbox;

const T1: &str = "2026-02-15T00:00:00Z";
const NOW: &str = "2026-04-12T12:00:00Z";

#[test]
fn every_documented_exit_code_is_reached_through_the_binary() {
    let mut reached = BTreeSet::new();
    let s = Sandbox::new();

    // 0: done.
    let r = s.run(&["store", "deploy:host", "Railway"], Some(T1));
    assert_eq!(r.code, 0, "{}", r.stderr);
    reached.insert(0u8);

    // 4: nothing found, for recall only (a list that finds nothing is 0).
    let r = s.run(&["recall", "deploy:nothing"], Some(NOW));
    assert_eq!(r.code, 4, "{}", r.stderr);
    let r = s.run(&["list", "--prefix", "nothing:", "--json"], Some(NOW));
    assert_eq!((r.code, r.stdout.trim()), (0, "[]"), "{}", r.stderr);
    reached.insert(4);

    // 2: the request is wrong (a time that is no time), and nothing is written.
    let before = s.snapshot();
    let r = s.run(
        &["store", "deploy:host", "Fly", "--valid-from", "someday"],
        Some(NOW),
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("error: "), "{}", r.stderr);
    assert_eq!(s.snapshot(), before, "a refused request writes nothing");
    reached.insert(2);

    // 3: mem7's own failure: its full-text index broken under its feet.
    s.ok(&["search", "Railway", "--mode", "lexical"], Some(NOW));
    let mut broken = 0;
    for e in std::fs::read_dir(s.ws.join(".mem7")).unwrap() {
        let dir = e.unwrap().path();
        if dir.extension().is_some_and(|x| x == "tantivy") {
            std::fs::write(dir.join("meta.json"), "not json").unwrap();
            broken += 1;
        }
    }
    assert_eq!(broken, 1, "one full-text index");
    let r = s.run(&["search", "Railway", "--mode", "lexical"], Some(NOW));
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("a failure inside mem7, not a problem with the request"),
        "{}",
        r.stderr
    );
    reached.insert(3);

    // 1: a check failed: a stored value changed by hand no longer verifies.
    let t = Sandbox::new();
    t.ok(&["store", "deploy:host", "Railway"], Some(T1));
    let day = t.memory_dir().join("2026-02-15.md");
    let text = std::fs::read_to_string(&day).unwrap();
    assert!(text.contains("Railway"), "{text}");
    std::fs::write(&day, text.replace("Railway", "Railwax")).unwrap();
    let r = t.run(&["verify"], Some(NOW));
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    reached.insert(1);

    assert_eq!(
        reached,
        crate::docs::documented_exit_codes(),
        "a code docs/cli.md documents has no case here, or a case has no documented code"
    );
}
