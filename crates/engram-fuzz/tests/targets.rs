//! Every fuzz target for a bounded number of inputs (CI, in a debug build); the long runs go
//! through the `engram-fuzz` binary in release (`docs/safety.md` has their figures).

use engram_fuzz::{fuzz, Budget, Mutator, TARGETS};

#[test]
fn every_target_survives_its_mutated_inputs() {
    for target in TARGETS {
        let report = fuzz(target, 0xc1, Budget::Executions(300));
        assert_eq!(report.executions, 300, "{}", target.name);
        let crashes: Vec<&String> = report.crashes.iter().map(|(_, m)| m).collect();
        assert!(crashes.is_empty(), "{}: {crashes:?}", target.name);
    }
}

#[test]
fn a_panicking_target_is_caught_and_its_input_kept() {
    let target = engram_fuzz::Target {
        name: "panics_on_brace",
        seeds: || vec![b"a{b".to_vec()],
        run: |input| assert!(!input.contains(&b'{'), "a brace"),
    };
    let report = fuzz(&target, 7, Budget::Executions(200));
    assert!(!report.crashes.is_empty());
    assert!(report
        .crashes
        .iter()
        .all(|(input, _)| input.contains(&b'{')));
}

#[test]
fn the_mutator_is_reproducible() {
    let run = |seed| {
        let mut m = Mutator::new(seed, vec![b"{\"a\":1}".to_vec()]);
        (0..50).map(|_| m.next_input()).collect::<Vec<_>>()
    };
    assert_eq!(run(3), run(3));
    assert_ne!(run(3), run(4));
}
