//! What the memory panel reads, on libSQL, from a project built from the development data
//! (a real Claude Code session replayed through the observer, real instruction files): the
//! recent sessions agree with their reviews, a learned memory's history names its evidence
//! steps, each week's additions split by type and by
//! source add up, the module map's nodes carry the memories a filter counts and its edges
//! join nodes of the map, an imported rule names its file and lines, and a taught memory's
//! preview is the packed text an agent would get, redacted, with nothing written.

use crate::common::nonce;
use crate::export::{build, open};
use engram::{
    Database, ErrorCode, ListRequest, MapRequest, MemoryFilter, MemoryType, Taught, PREVIEW_ID,
};

async fn sessions_agree_with_reviews<D: Database + Copy>(db: D) {
    let engram = open(db, &format!("panel-{}", nonce())).await;
    build(&engram).await;
    let sessions = engram.recent_sessions(20).await.expect("sessions");
    let observed: Vec<_> = sessions.iter().filter(|s| s.outcome.is_some()).collect();
    assert_eq!(observed.len(), 1, "one finalized session: {sessions:?}");
    let session = observed[0];
    assert_eq!(session.outcome.as_deref(), Some("success"));
    assert!(session.steps > 0, "{session:?}");
    let review = engram
        .session_review(Some(&session.session_id))
        .await
        .expect("review")
        .expect("the session has a review");
    let learned = review.needs_review.len() + review.auto_confirmed.len() + review.learned.len();
    assert!(learned > 0, "the replayed session learned something");
    assert_eq!(session.learned, learned as u64, "{session:?}");
    assert_eq!(session.shown, review.applied.len() as u64);
    let waiting = review
        .needs_review
        .iter()
        .chain(&review.auto_confirmed)
        .chain(&review.learned)
        .filter(|m| m.flags.needs_review)
        .count();
    assert_eq!(session.needs_review, waiting as u64);
    // What each learned memory stands on is in its history: the signal, the session, the steps.
    let first = review
        .needs_review
        .iter()
        .chain(&review.auto_confirmed)
        .chain(&review.learned)
        .find(|m| m.source == engram::MemorySource::ObserverInferred)
        .expect("an observer memory");
    let history = engram.history(&first.id).await.expect("history");
    let created = history
        .iter()
        .find(|h| h.action == engram::HistoryAction::Created)
        .expect("created");
    let evidence = created.after.as_ref().expect("evidence");
    assert_eq!(evidence["session"], session.session_id.as_str());
    assert!(evidence["signal"].is_string(), "{evidence}");
    let steps = evidence["steps"].as_array().expect("steps");
    assert!(
        !steps.is_empty()
            && steps
                .iter()
                .all(|s| s.as_u64().is_some_and(|s| s <= session.steps))
    );
    let latest: Vec<&str> = sessions.iter().map(|s| s.last_seen_at.as_str()).collect();
    let mut sorted = latest.clone();
    sorted.sort_by(|a, b| b.cmp(a));
    assert_eq!(latest, sorted, "latest first");
    let error = engram.recent_sessions(0).await.expect_err("0 is refused");
    assert_eq!(error.code(), ErrorCode::InvalidInput);
}

async fn module_map_counts_and_joins<D: Database + Copy>(db: D) {
    let engram = open(db, &format!("panel-map-{}", nonce())).await;
    build(&engram).await;
    let health = engram.health().await.expect("health");
    assert!(!health.growth.is_empty());
    for week in &health.growth {
        assert_eq!(week.by_type.values().sum::<u64>(), week.added, "{week:?}");
        assert_eq!(week.by_source.values().sum::<u64>(), week.added, "{week:?}");
    }
    let map = engram
        .module_map(&MapRequest::default())
        .await
        .expect("map");
    assert!(map.files.len() >= 2, "{map:?}");
    let top = &map.files[0];
    assert!(top.memories > 0, "a file with memories leads: {top:?}");
    let counted = engram
        .count(&MemoryFilter {
            files: vec![top.path.clone()],
            ..MemoryFilter::default()
        })
        .await
        .expect("count");
    assert_eq!(top.memories, counted, "the node's count is the filter's");
    for pair in map.files.windows(2) {
        assert!(pair[0].memories >= pair[1].memories, "most memories first");
    }
    assert!(
        map.files.iter().any(|f| f.accesses > 0),
        "the observer's opens are on the map"
    );
    assert!(!map.co_access.is_empty(), "the session's co-access pairs");
    let on_map = |path: &str| map.files.iter().any(|f| f.path == path);
    for edge in &map.co_access {
        assert!(on_map(&edge.a) && on_map(&edge.b), "{edge:?}");
        assert!((0.0..=1.0).contains(&edge.weight), "{edge:?}");
    }
    let folder = top.folder.clone();
    let narrowed = engram
        .module_map(&MapRequest {
            limit: Some(3),
            folder: Some(folder.clone()),
        })
        .await
        .expect("narrowed map");
    assert!(!narrowed.files.is_empty() && narrowed.files.len() <= 3);
    assert!(narrowed.files.iter().all(|f| f.path.starts_with(&folder)));
    let all = engram
        .list(&ListRequest {
            limit: Some(500),
            ..ListRequest::default()
        })
        .await
        .expect("listed");
    let mut origins = Vec::new();
    for memory in &all.memories {
        origins.extend(engram.origins(&memory.id).await.expect("origins"));
    }
    assert!(
        origins
            .iter()
            .any(|o| o.file == ".cursor/rules/backend/strongly-typed-ids.mdc" && o.line > 0),
        "{origins:?}"
    );
    assert!(origins.iter().all(|o| o.end_line >= o.line));
    let learned = engram
        .list(&ListRequest {
            filter: MemoryFilter {
                sources: vec![engram::MemorySource::ObserverInferred],
                ..MemoryFilter::default()
            },
            ..ListRequest::default()
        })
        .await
        .expect("listed");
    let observed = learned.memories.first().expect("the session's memories");
    assert!(
        engram
            .origins(&observed.id)
            .await
            .expect("origins")
            .is_empty(),
        "no file states what the observer learned"
    );
    let error = engram
        .module_map(&MapRequest {
            limit: Some(10_000),
            folder: None,
        })
        .await
        .expect_err("too many files");
    assert_eq!(error.code(), ErrorCode::InvalidInput);
}

async fn preview_writes_nothing<D: Database + Copy>(db: D) {
    let engram = open(db, &format!("panel-preview-{}", nonce())).await;
    let before = engram.count(&MemoryFilter::default()).await.unwrap();
    let packed = engram
        .preview_teach(Taught {
            content: "Deploys use the key AKIAIOSFODNN7EXAMPLE from the vault".into(),
            memory_type: Some(MemoryType::Gotcha),
            related_files: vec!["deploy/release.sh".into()],
            tags: vec![],
        })
        .expect("preview");
    assert!(packed.text.contains("deploy/release.sh"), "{}", packed.text);
    assert!(packed.text.contains("[gotcha]"), "{}", packed.text);
    assert!(
        packed.text.contains(&format!("[Memory #{PREVIEW_ID}: ")),
        "{}",
        packed.text
    );
    assert!(
        !packed.text.contains("AKIAIOSFODNN7EXAMPLE"),
        "redacted as stored"
    );
    assert_eq!(packed.items.len(), 1);
    assert!(packed.tokens > 0 && packed.tokens <= packed.budget);
    assert_eq!(
        engram.count(&MemoryFilter::default()).await.unwrap(),
        before
    );
    let error = engram
        .preview_teach(Taught {
            content: String::new(),
            memory_type: None,
            related_files: vec![],
            tags: vec![],
        })
        .expect_err("empty content");
    assert_eq!(error.code(), ErrorCode::InvalidInput);
}

on_a_file_and_over_http!(
    sessions_agree_with_reviews,
    sessions_on_a_file,
    sessions_over_http
);
on_a_file_and_over_http!(module_map_counts_and_joins, map_on_a_file, map_over_http);
on_a_file_and_over_http!(preview_writes_nothing, preview_on_a_file, preview_over_http);
