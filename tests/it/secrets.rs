//! The credential detector measured on data its rules' author did not write: the
//! held-out catalogue in `tests/fixtures/secrets-heldout/` (its header names its author's
//! sources: GitHub secret scanning's documentation, Kingfisher's and trufflehog's rule
//! sets, vendors' documentation; not gitleaks', whose rules the detector runs) through
//! `mem7 store`, and its ordinary technical facts through one `mem7 import`. The gates
//! sit at what was measured (docs/integrity.md, "Measured").

use crate::integrity::{refused_by_import, refused_by_store};
use crate::world::{self, Sandbox};

/// The held-out credentials refused, at least (measured; see docs/integrity.md).
const HELD_OUT_REFUSED: f64 = 289.0 / 311.0;
/// The held-out ordinary facts refused, at most (measured).
const HELD_OUT_FALSE_ALARMS: usize = 8;

#[test]
fn the_held_out_catalogue_is_refused_and_its_ordinary_facts_pass() {
    let credentials = world::samples_in("secrets-heldout", "credentials.txt");
    assert!(
        credentials.len() >= 150,
        "{} credentials",
        credentials.len()
    );
    let s = Sandbox::new();
    let refused = refused_by_store(&s, &credentials);
    let missed: Vec<&String> = credentials
        .iter()
        .filter(|c| !refused.contains(c))
        .collect();
    let rate = refused.len() as f64 / credentials.len() as f64;
    let ordinary = world::samples_in("secrets-heldout", "ordinary.txt");
    assert!(ordinary.len() >= 500, "{} ordinary facts", ordinary.len());
    let false_alarms = refused_by_import(&ordinary);
    eprintln!(
        "held out: {} of {} credentials refused ({:.1}%), {} of {} ordinary facts refused ({:.2}%)",
        refused.len(),
        credentials.len(),
        rate * 100.0,
        false_alarms.len(),
        ordinary.len(),
        false_alarms.len() as f64 * 100.0 / ordinary.len() as f64
    );
    assert!(
        rate >= HELD_OUT_REFUSED,
        "{} of {} held-out credentials refused ({rate:.3}); missed: {missed:#?}",
        refused.len(),
        credentials.len()
    );
    assert!(
        false_alarms.len() <= HELD_OUT_FALSE_ALARMS,
        "{} of {} held-out ordinary facts refused: {false_alarms:#?}",
        false_alarms.len(),
        ordinary.len()
    );
    let memory = s.memory_text();
    for c in &refused {
        assert!(!memory.contains(c.as_str()), "{c:?} reached a memory file");
    }
}
