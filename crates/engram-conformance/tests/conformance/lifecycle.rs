//! The memory lifecycle on libSQL with the real model, pinned with rules from real agent
//! instruction files (`astral-sh/uv` AGENTS.md and `trigger.dev`'s webapp rule, from the
//! eval history set): a re-wrapped rule merges, a widened one merges taking the newer
//! wording, two rules alike in topic stay apart, a changed version supersedes, uses nobody
//! corrected raise confidence and clear review without a write on the search path, and
//! pruning retires, deletes and caps with a history entry for each change.

use std::cell::Cell;
use std::rc::Rc;

use crate::common::nonce;
use crate::real_model::real_model;
use engram::lifecycle_rules::confidence::reinforce;
use engram::{
    Database, Engram, EngramConfig, ErrorCode, HistoryAction, Host, MemoryType, NewMemory,
    OsEntropy, PrunePolicy, SearchQuery,
};
use engram_store::{Statement, Value};

/// A clock the test moves.
#[derive(Clone)]
struct MovableClock(Rc<Cell<i64>>);

impl engram::Clock for MovableClock {
    fn now_millis(&self) -> i64 {
        self.0.get()
    }
}

const DAY: i64 = 86_400_000;
const START: i64 = 1_800_000_000_000;

async fn open<D: Database>(db: D, project: &str, clock: &MovableClock) -> Engram<D> {
    let config = EngramConfig {
        project_id: project.to_owned(),
    };
    Engram::open(db, config, Host::new(clock.clone(), OsEntropy))
        .await
        .expect("open")
        .with_embedder(Box::new(Rc::new(real_model())))
}

fn rule(text: &str) -> NewMemory {
    NewMemory::new(MemoryType::Preference, text)
}

fn actions(history: &[engram::HistoryEntry]) -> Vec<HistoryAction> {
    history.iter().map(|e| e.action).collect()
}

async fn consolidation<D: Database + Copy>(db: D) {
    let clock = MovableClock(Rc::new(Cell::new(START)));
    let engram = open(db, &format!("lc-{}", nonce()), &clock).await;

    // The same rule, re-wrapped between two versions of the file: one memory, said twice.
    let wrapped = engram
        .remember(rule(
            "NEVER update all dependencies in the lockfile and ALWAYS use `cargo update --precise` to make\n  lockfile changes",
        ))
        .await
        .unwrap();
    let again = engram
        .remember(rule(
            "NEVER update all dependencies in the lockfile and ALWAYS use `cargo update --precise` to make lockfile changes",
        ))
        .await
        .unwrap();
    assert!(again.merged && again.id == wrapped.id, "{again:?}");
    let merged = engram.get(&wrapped.id).await.unwrap().expect("live");
    assert_eq!(merged.occurrences, 2);
    assert!(
        merged.confidence > 0.8,
        "a repeat raises confidence: {merged:?}"
    );
    let history = engram.history(&wrapped.id).await.unwrap();
    assert_eq!(
        actions(&history),
        [HistoryAction::Created, HistoryAction::Merged]
    );

    // Two rules of one topic (tests) are different rules.
    let specific = engram
        .remember(rule(
            "PREFER running specific tests over running the entire test suite",
        ))
        .await
        .unwrap();
    let integration = engram
        .remember(rule(
            "PREFER integration tests, e.g., at `it/...` over unit tests",
        ))
        .await
        .unwrap();
    assert!(!integration.merged && integration.superseded.is_none());
    assert_ne!(integration.id, specific.id);

    // A widened rule says all the old one did and more: merged, with the newer wording.
    let narrow = engram
        .remember(rule(
            "NEVER assume clippy warnings are pre-existing, it is very rare that `main` has warnings",
        ))
        .await
        .unwrap();
    let wide = "NEVER assume clippy warnings or test failures are pre-existing, it is very rare that `main` has\n  warnings";
    let widened = engram.remember(rule(wide)).await.unwrap();
    assert!(widened.merged && widened.id == narrow.id, "{widened:?}");
    assert_eq!(engram.get(&narrow.id).await.unwrap().unwrap().content, wide);
    let found = engram
        .search(&engram::SearchQuery::new("test failures pre-existing"))
        .await
        .unwrap();
    assert_eq!(
        found.hits.first().map(|h| h.memory.id.as_str()),
        Some(narrow.id.as_str())
    );

    // A changed version supersedes: the old one is retired, readable, and says why.
    let old = engram
        .remember(rule(
            "`@trigger.dev/database` exports a Prisma 5.4.1 client that is used extensively in the webapp to access a PostgreSQL instance",
        ))
        .await
        .unwrap();
    let new = engram
        .remember(rule(
            "`@trigger.dev/database` exports a Prisma 6.14.0 client that is used extensively in the webapp to access a PostgreSQL instance",
        ))
        .await
        .unwrap();
    assert_eq!(new.superseded.as_deref(), Some(old.id.as_str()), "{new:?}");
    assert!(
        engram.get(&old.id).await.unwrap().is_none(),
        "never returned live"
    );
    let retired = engram.get_any(&old.id).await.unwrap().expect("kept");
    assert_eq!(retired.superseded_by.as_deref(), Some(new.id.as_str()));
    let history = engram.history(&old.id).await.unwrap();
    assert_eq!(
        actions(&history),
        [HistoryAction::Created, HistoryAction::Superseded]
    );
    assert!(history[1].reason.contains("5.4.1"), "{history:?}");
    let found = engram
        .search(&engram::SearchQuery::new("Prisma client version"))
        .await
        .unwrap();
    assert!(found.hits.iter().all(|h| h.memory.id != old.id));

    // Another project's identical memory is its own: nothing crosses projects.
    let other = open(db, &format!("lc-other-{}", nonce()), &clock).await;
    let theirs = other
        .remember(rule(
            "PREFER running specific tests over running the entire test suite",
        ))
        .await
        .unwrap();
    assert!(!theirs.merged && theirs.id != specific.id);
    let error = other.history(&specific.id).await.unwrap_err();
    assert_eq!(error.code(), ErrorCode::NotFound);
}

async fn pruning<D: Database + Copy>(db: D) {
    let clock = MovableClock(Rc::new(Cell::new(START)));
    let engram = open(db, &format!("lp-{}", nonce()), &clock).await;
    let gotcha = engram
        .remember(NewMemory::new(
            MemoryType::Gotcha,
            "When making changes for Windows from Unix, use `cargo xwin clippy` to check compilation",
        ))
        .await
        .unwrap();
    let decision = engram
        .remember(NewMemory::new(
            MemoryType::Decision,
            "PREFER `insta` snapshots following patterns in nearby tests over substring assertions",
        ))
        .await
        .unwrap();
    let error = engram
        .prune(
            &PrunePolicy {
                cap: Some(0),
                ..PrunePolicy::default()
            },
            false,
        )
        .await
        .unwrap_err();
    assert_eq!(error.code(), ErrorCode::InvalidInput);

    // A gotcha halves every 60 days: past three half-lives (0.8 × 0.125 = 0.1) and then
    // below the floor, it is retired; the decision never decays.
    clock.0.set(START + 179 * DAY);
    assert!(engram
        .prune(&PrunePolicy::default(), false)
        .await
        .unwrap()
        .retired
        .is_empty());
    clock.0.set(START + 200 * DAY);
    let dry = engram.prune(&PrunePolicy::default(), true).await.unwrap();
    assert_eq!(dry.retired.len(), 1);
    assert!(
        engram.get(&gotcha.id).await.unwrap().is_some(),
        "a dry run changes nothing"
    );
    let report = engram.prune(&PrunePolicy::default(), false).await.unwrap();
    assert_eq!(
        report
            .retired
            .iter()
            .map(|d| d.id.as_str())
            .collect::<Vec<_>>(),
        [gotcha.id.as_str()]
    );
    assert!(engram.get(&gotcha.id).await.unwrap().is_none());
    assert!(engram.get(&decision.id).await.unwrap().is_some());
    let again = engram.prune(&PrunePolicy::default(), false).await.unwrap();
    assert!(
        again.retired.is_empty() && again.deleted.is_empty(),
        "idempotent"
    );

    // Deleted after the 30-day grace; its history stays and ends with the deletion.
    clock.0.set(START + 229 * DAY);
    assert!(engram
        .prune(&PrunePolicy::default(), false)
        .await
        .unwrap()
        .deleted
        .is_empty());
    clock.0.set(START + 231 * DAY);
    let report = engram.prune(&PrunePolicy::default(), false).await.unwrap();
    assert_eq!(report.deleted.len(), 1);
    assert!(engram.get_any(&gotcha.id).await.unwrap().is_none());
    let history = engram.history(&gotcha.id).await.unwrap();
    assert_eq!(
        actions(&history),
        [
            HistoryAction::Created,
            HistoryAction::Retired,
            HistoryAction::Deleted
        ]
    );

    // Over the cap, the least valuable live memory goes; a pinned one never does.
    let recent = engram
        .remember(NewMemory::new(
            MemoryType::Gotcha,
            "AVOID using `panic!`, `unreachable!`, `.unwrap()`, unsafe code, and clippy rule ignores",
        ))
        .await
        .unwrap();
    let report = engram
        .prune(
            &PrunePolicy {
                cap: Some(1),
                ..PrunePolicy::default()
            },
            false,
        )
        .await
        .unwrap();
    let evicted: Vec<&str> = report.evicted.iter().map(|d| d.id.as_str()).collect();
    assert_eq!(evicted.len(), 1, "{report:?}");
    assert!(evicted[0] == recent.id || evicted[0] == decision.id);
    assert_eq!(report.live_after, 1);
}

/// Two writers of one text at once (two instances, as two hook processes are) leave one
/// live memory said twice: either the second read finds the first write, or the content
/// key's unique index refuses the second write and it reads again and merges.
async fn parallel_writers<D: Database + Copy>(db: D) {
    let clock = MovableClock(Rc::new(Cell::new(START)));
    let project = format!("lw-{}", nonce());
    let a = open(db, &project, &clock).await;
    let b = open(db, &project, &clock).await;
    let text =
        "ALWAYS write `SAFETY` comments following our usual style when writing `unsafe` code";
    for round in 0..3 {
        let (x, y) = tokio::join!(
            a.remember(rule(&format!("{text} (round {round})"))),
            b.remember(rule(&format!("{text} (round {round})")))
        );
        let (x, y) = (x.unwrap(), y.unwrap());
        assert_eq!(x.id, y.id, "round {round}: {x:?} {y:?}");
        assert!(x.merged != y.merged, "one stored, one merged: {x:?} {y:?}");
        let memory = a.get(&x.id).await.unwrap().expect("live");
        assert_eq!(memory.occurrences, 2);
    }
}

/// One search for the Windows gotcha, which finds it first.
async fn search_once<D: Database>(engram: &Engram<D>, id: &str) {
    let mut query = SearchQuery::new("check compilation for Windows with cargo xwin clippy");
    query.limit = 1;
    let found = engram.search(&query).await.unwrap();
    assert_eq!(found.shown_ids(), [id], "{:?}", found.hits);
}

async fn reinforcement<D: Database + Copy>(db: D) {
    let clock = MovableClock(Rc::new(Cell::new(START)));
    let engram = open(db, &format!("lr-{}", nonce()), &clock).await;
    let mut learned = NewMemory::new(
        MemoryType::Gotcha,
        "When making changes for Windows from Unix, use `cargo xwin clippy` to check compilation",
    );
    learned.flags.needs_review = true;
    let gotcha = engram.remember(learned).await.unwrap();
    let other = engram
        .remember(NewMemory::new(
            MemoryType::Gotcha,
            "AVOID using `panic!`, `unreachable!`, `.unwrap()`, unsafe code, and clippy rule ignores",
        ))
        .await
        .unwrap();
    let stored = || async { engram.get(&gotcha.id).await.unwrap().expect("live") };

    // Searching writes nothing: the uses wait in the instance.
    for _ in 0..4 {
        search_once(&engram, &gotcha.id).await;
    }
    assert_eq!(engram.pending_uses(), 1);
    assert_eq!(stored().await.access_count, 0);
    clock.0.set(START + DAY);
    assert_eq!(engram.flush_uses().await.unwrap().memories, 1);
    assert_eq!(engram.pending_uses(), 0);
    let memory = stored().await;
    assert_eq!(memory.access_count, 4);
    assert!(
        (memory.confidence - 0.8).abs() < 1e-9,
        "four uses earn nothing"
    );
    assert!(memory.flags.needs_review);
    assert_eq!(
        memory.last_accessed_at,
        engram_core::time::rfc3339_from_millis(START + DAY),
        "a use restarts the decay clock"
    );
    assert_eq!(engram.flush_uses().await.unwrap().memories, 0);

    // The fifth use travels with the next write, whatever it writes.
    search_once(&engram, &gotcha.id).await;
    engram
        .remember(NewMemory::new(
            MemoryType::Decision,
            "PREFER `insta` snapshots following patterns in nearby tests over substring assertions",
        ))
        .await
        .unwrap();
    let memory = stored().await;
    assert_eq!(memory.access_count, 5);
    assert!(
        (memory.confidence - 0.85).abs() < 1e-9,
        "{}",
        memory.confidence
    );
    let history = engram.history(&gotcha.id).await.unwrap();
    assert_eq!(
        actions(&history),
        [HistoryAction::Created, HistoryAction::Reinforced]
    );
    assert_eq!(history[1].reason, "5 uses nobody corrected");

    // Ten clear the review.
    for _ in 0..5 {
        search_once(&engram, &gotcha.id).await;
    }
    engram.flush_uses().await.unwrap();
    let memory = stored().await;
    assert_eq!(memory.access_count, 10);
    assert!(
        (memory.confidence - 0.9).abs() < 1e-9,
        "{}",
        memory.confidence
    );
    assert!(!memory.flags.needs_review);

    // A memory forgotten after it was shown: its uses do not count.
    let mut query = SearchQuery::new("avoid panic unwrap unsafe code and clippy rule ignores");
    query.limit = 1;
    let found = engram.search(&query).await.unwrap();
    assert_eq!(found.shown_ids(), [other.id.as_str()]);
    assert_eq!(engram.pending_uses(), 1);
    assert!(engram.forget(&other.id).await.unwrap());
    assert_eq!(engram.pending_uses(), 0);
    assert_eq!(
        engram
            .get_any(&other.id)
            .await
            .unwrap()
            .unwrap()
            .access_count,
        0
    );

    // The database's arithmetic is the rule's, at the boundaries and at the ceiling.
    for confidence in [0.5, 0.93, 0.95, 0.99] {
        for before in [0_u64, 4, 9, 14] {
            engram
                .database()
                .transaction(&[Statement::with_params(
                    "UPDATE memories SET confidence = ?1, uncorrected_uses = ?2, \
needs_review = 1 WHERE id = ?3",
                    vec![
                        Value::Float(confidence),
                        Value::Integer(before as i64),
                        Value::from(gotcha.id.as_str()),
                    ],
                )])
                .await
                .unwrap();
            search_once(&engram, &gotcha.id).await;
            engram.flush_uses().await.unwrap();
            let memory = stored().await;
            let rule = reinforce(confidence, before, before + 1);
            assert_eq!(
                memory.confidence, rule.confidence,
                "{confidence} after {before}"
            );
            assert_eq!(
                !memory.flags.needs_review, rule.clears_review,
                "{confidence} after {before}"
            );
        }
    }
}

on_a_file_and_over_http!(
    reinforcement,
    reinforcement_on_an_embedded_libsql_file,
    reinforcement_on_the_test_server_over_http
);
on_a_file_and_over_http!(
    parallel_writers,
    parallel_writers_on_an_embedded_libsql_file,
    parallel_writers_on_the_test_server_over_http
);
on_a_file_and_over_http!(
    consolidation,
    consolidation_on_an_embedded_libsql_file,
    consolidation_on_the_test_server_over_http
);
on_a_file_and_over_http!(
    pruning,
    pruning_on_an_embedded_libsql_file,
    pruning_on_the_test_server_over_http
);

/// A superseded rule (trigger.dev's Prisma version) is shown under its replacement when a
/// search asks, and a person restores it: live, back in the keyword index, its history
/// saying so. A live memory, another project's, and one whose words a live memory now
/// says are refused with nothing changed.
async fn restoring<D: Database + Copy>(db: D) {
    let clock = MovableClock(Rc::new(Cell::new(START)));
    let engram = open(db, &format!("lc-restore-{}", nonce()), &clock).await;
    let old = engram
        .remember(rule(
            "`@trigger.dev/database` exports a Prisma 5.4.1 client that is used extensively in the webapp to access a PostgreSQL instance",
        ))
        .await
        .unwrap();
    let new = engram
        .remember(rule(
            "`@trigger.dev/database` exports a Prisma 6.14.0 client that is used extensively in the webapp to access a PostgreSQL instance",
        ))
        .await
        .unwrap();
    assert_eq!(new.superseded.as_deref(), Some(old.id.as_str()));

    let mut query = SearchQuery::new("Prisma client webapp");
    let plain = engram.search(&query).await.unwrap();
    assert!(
        plain.hits.iter().all(|h| h.superseded.is_empty()),
        "only on request"
    );
    query.include_superseded = true;
    let found = engram.search(&query).await.unwrap();
    let hit = found
        .hits
        .iter()
        .find(|h| h.memory.id == new.id)
        .expect("the new rule");
    let shown: Vec<&str> = hit.superseded.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(
        shown,
        [old.id.as_str()],
        "the replaced rule under its replacement"
    );
    assert!(
        found.hits.iter().all(|h| h.memory.id != old.id),
        "never a hit itself"
    );

    let live = engram.restore(&new.id).await.unwrap_err();
    assert_eq!(live.code(), ErrorCode::InvalidInput, "{live}");
    let other = open(db, &format!("lc-restore-other-{}", nonce()), &clock).await;
    assert_eq!(
        other.restore(&old.id).await.unwrap_err().code(),
        ErrorCode::NotFound
    );

    let mut by_words = SearchQuery::new("Prisma 5.4.1");
    by_words.mode = engram::SearchMode::Keyword;
    let keyword_ids = |found: engram::SearchResponse| -> Vec<String> {
        found.hits.into_iter().map(|h| h.memory.id).collect()
    };
    let before = keyword_ids(engram.search(&by_words).await.unwrap());
    assert!(
        !before.contains(&old.id),
        "a superseded memory leaves the keyword index"
    );

    clock.0.set(START + DAY);
    let restored = engram
        .restore(&old.id[..8])
        .await
        .expect("restored by its prefix");
    assert_eq!(restored.id, old.id);
    assert!(!restored.deprecated && restored.superseded_by.is_none());
    assert_eq!(
        actions(&engram.history(&old.id).await.unwrap()),
        [
            HistoryAction::Created,
            HistoryAction::Superseded,
            HistoryAction::Restored
        ]
    );
    let after = keyword_ids(engram.search(&by_words).await.unwrap());
    assert!(
        after.contains(&old.id),
        "back in the keyword index: {after:?}"
    );

    // Forgotten, then said again: restoring the first would make a duplicate.
    let first = engram
        .remember(rule("ALWAYS run `cargo fmt` before committing"))
        .await
        .unwrap();
    assert!(engram.forget(&first.id).await.unwrap());
    let again = engram
        .remember(rule("ALWAYS run `cargo fmt` before committing"))
        .await
        .unwrap();
    assert_ne!(again.id, first.id);
    let twin = engram.restore(&first.id).await.unwrap_err();
    assert_eq!(twin.code(), ErrorCode::InvalidInput);
    assert!(
        twin.to_string().contains(&again.id),
        "names the live one: {twin}"
    );
    assert!(
        engram.get(&first.id).await.unwrap().is_none(),
        "nothing changed"
    );
}

on_a_file_and_over_http!(
    restoring,
    restoring_on_an_embedded_libsql_file,
    restoring_on_the_test_server_over_http
);
