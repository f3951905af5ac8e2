//! People in control, on libSQL (a file and over HTTP), over memories imported from a
//! real instruction file (uv's AGENTS.md): list with filters in pages that stay correct
//! while memories are written, count, short ids, edit (re-indexed: the new words are
//! found, the old are not), confirm, correct, flag wrong, pin, teach, purge and reset,
//! each with its history entry; bad input is a typed error that writes nothing.

use std::path::PathBuf;

use crate::common::nonce;
use engram::{
    Database, ErrorCode, HistoryAction, ImportRequest, InstructionFile, ListRequest, MemoryFilter,
    MemoryType, MemoryUpdate, NewMemory, SearchQuery, SortKey, Status, Taught,
};

fn uv_agents() -> InstructionFile {
    let dir = std::env::var_os("ENGRAM_EVAL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/eval"));
    InstructionFile {
        path: "AGENTS.md".into(),
        text: std::fs::read_to_string(dir.join("instructions/astral-sh__uv__AGENTS.md"))
            .expect("eval file (set ENGRAM_EVAL_DIR)"),
    }
}

fn filter(f: impl FnOnce(&mut MemoryFilter)) -> MemoryFilter {
    let mut filter = MemoryFilter::default();
    f(&mut filter);
    filter
}

async fn browse_and_judge<D: Database + Copy>(db: D) {
    let engram = crate::common::open_project(db, &format!("mg-{}", nonce())).await;
    let imported = engram
        .import_instructions(ImportRequest {
            files: vec![uv_agents()],
        })
        .await
        .expect("imports");
    let rules = imported.files[0].rules.len() as u64;
    assert_eq!(engram.count(&MemoryFilter::default()).await.unwrap(), rules);
    let preferences = filter(|f| f.types = vec![MemoryType::Preference]);
    let expected = imported.files[0]
        .rules
        .iter()
        .filter(|r| r.memory_type == MemoryType::Preference)
        .count() as u64;
    assert!(expected > 0);
    assert_eq!(engram.count(&preferences).await.unwrap(), expected);
    let text = filter(|f| f.text = Some("CLIPPY".into()));
    assert_eq!(engram.count(&text).await.unwrap(), 4);

    // Pages of 6 cover every memory once, even with memories written between pages.
    let mut request = ListRequest {
        limit: Some(6),
        sort: SortKey::Created,
        ..ListRequest::default()
    };
    let mut seen = Vec::new();
    let mut pages = 0;
    loop {
        let page = engram.list(&request).await.expect("a page");
        seen.extend(page.memories.iter().map(|m| m.id.clone()));
        pages += 1;
        if pages == 1 {
            engram
                .remember(NewMemory::new(MemoryType::Gotcha, "written while paging"))
                .await
                .unwrap();
        }
        match page.next_cursor {
            Some(cursor) => request.cursor = Some(cursor),
            None => break,
        }
    }
    let mut unique = seen.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), seen.len(), "no memory twice");
    assert!(seen.len() as u64 >= rules, "{} of {rules}", seen.len());

    // Short ids, as the CLI prints them.
    let lockfile = imported.files[0]
        .rules
        .iter()
        .find(|r| r.text.contains("cargo update --precise"))
        .unwrap()
        .id
        .clone();
    let short = &lockfile[..8];
    assert_eq!(engram.resolve_id(short).await.unwrap(), lockfile);
    assert_eq!(engram.get(short).await.unwrap().unwrap().id, lockfile);
    assert_eq!(
        engram.resolve_id("ffffffff").await.unwrap_err().code(),
        ErrorCode::NotFound
    );
    assert_eq!(
        engram.resolve_id("ab").await.unwrap_err().code(),
        ErrorCode::InvalidInput
    );

    // An edit re-indexes: the new words find it, the old ones no longer do.
    let edited = engram
        .update(
            short,
            &MemoryUpdate {
                content: Some(
                    "NEVER update all dependencies; use `cargo update --precise zebrafish`".into(),
                ),
                tags: Some(vec!["lockfile".into()]),
                ..MemoryUpdate::default()
            },
        )
        .await
        .expect("edits");
    assert!(edited.content.contains("zebrafish"));
    let hits = engram.search(&SearchQuery::new("zebrafish")).await.unwrap();
    assert_eq!(
        hits.hits.first().map(|h| h.memory.id.as_str()),
        Some(lockfile.as_str())
    );
    let history = engram.history(&lockfile).await.unwrap();
    let last = history.last().unwrap();
    assert_eq!(last.action, HistoryAction::Edited);
    assert!(last.before.as_ref().unwrap()["content"]
        .as_str()
        .unwrap()
        .contains("lockfile changes"));
    assert_eq!(
        last.after.as_ref().unwrap()["tags"],
        serde_json::json!(["lockfile"])
    );

    // Confirm, correct, pin, flag.
    let confirmed = engram.confirm(short).await.unwrap();
    assert!(confirmed.flags.user_verified && !confirmed.flags.needs_review);
    let verified = filter(|f| f.user_verified = Some(true));
    assert_eq!(engram.count(&verified).await.unwrap(), 1);
    let other = imported.files[0].rules[0].id.clone();
    let corrected = engram
        .correct(
            &other,
            &MemoryUpdate {
                memory_type: Some(MemoryType::WorkflowRecipe),
                ..MemoryUpdate::default()
            },
        )
        .await
        .unwrap();
    assert!(corrected.flags.user_verified);
    assert_eq!(corrected.memory_type, MemoryType::WorkflowRecipe);
    let pinned = engram.pin(&other, true).await.unwrap();
    assert!(pinned.flags.pinned && pinned.decay_half_life_days.is_none());
    assert_eq!(
        engram
            .count(&filter(|f| f.pinned = Some(true)))
            .await
            .unwrap(),
        1
    );
    let flagged = engram
        .flag_wrong(short, Some("we pin exact versions now"))
        .await
        .unwrap();
    assert!(flagged.deprecated);
    assert!(engram.get(&lockfile).await.unwrap().is_none());
    let retired = filter(|f| f.status = Some(Status::Retired));
    assert_eq!(engram.count(&retired).await.unwrap(), 1);
    let actions: Vec<HistoryAction> = engram
        .history(&lockfile)
        .await
        .unwrap()
        .iter()
        .map(|e| e.action)
        .collect();
    assert_eq!(
        &actions[actions.len() - 3..],
        [
            HistoryAction::Edited,
            HistoryAction::Confirmed,
            HistoryAction::Flagged
        ]
    );

    // An edit into another live memory's exact words is refused, and writes nothing.
    let before = engram.get(&other).await.unwrap().unwrap();
    let same = imported.files[0]
        .rules
        .iter()
        .find(|r| r.memory_type == MemoryType::WorkflowRecipe && r.id != other)
        .map(|r| r.text.clone());
    if let Some(same) = same {
        let refused = engram
            .update(
                &other,
                &MemoryUpdate {
                    content: Some(same),
                    ..MemoryUpdate::default()
                },
            )
            .await
            .unwrap_err();
        assert_eq!(refused.code(), ErrorCode::InvalidInput, "{refused}");
        assert_eq!(engram.get(&other).await.unwrap().unwrap(), before);
    }
    // Bad edits name the field and write nothing.
    let too_confident = MemoryUpdate {
        confidence: Some(1.5),
        ..MemoryUpdate::default()
    };
    let error = engram.update(&other, &too_confident).await.unwrap_err();
    assert_eq!(error.code(), ErrorCode::InvalidInput);
    assert_eq!(engram.get(&other).await.unwrap().unwrap(), before);
    assert!(MemoryUpdate::from_json(r#"{"flavour":"x"}"#).is_err());
    assert!(MemoryUpdate::from_json("{}").is_err());
    assert!(ListRequest::from_json(r#"{"limit":0}"#).is_err());
    assert!(ListRequest::from_json(r#"{"cursor":"zz"}"#).is_err());
    assert!(ListRequest::from_json(r#"{"filter":{"createdAfter":"soon"}}"#).is_err());

    // Teach: a person's own memory, confirmed.
    let taught = engram
        .teach(Taught {
            content: "Run the migrations with `just db-migrate`, never by hand".into(),
            memory_type: Some(MemoryType::WorkflowRecipe),
            related_files: Vec::new(),
            tags: Vec::new(),
        })
        .await
        .unwrap();
    let taught = engram.get(&taught.id).await.unwrap().unwrap();
    assert_eq!(taught.source.as_str(), "user_taught");
    assert!(taught.flags.user_verified);

    // Purge: the memory goes for good, its history stays and says so.
    engram.purge(&taught.id[..8]).await.unwrap();
    assert!(engram.get_any(&taught.id).await.unwrap().is_none());
    let history = engram.history(&taught.id[..8]).await.unwrap();
    assert_eq!(history.last().unwrap().action, HistoryAction::Deleted);
    assert!(engram
        .search(&SearchQuery::new("db-migrate"))
        .await
        .unwrap()
        .hits
        .is_empty());

    // Another project's engram on the same database cannot see, judge or edit these
    // memories: each call is not found and changes nothing.
    let stranger = crate::common::open_project(db, &format!("mg-other-{}", nonce())).await;
    let before = engram.get(&other).await.unwrap().unwrap();
    let edit = MemoryUpdate {
        content: Some("rewritten by a stranger".into()),
        ..MemoryUpdate::default()
    };
    for error in [
        stranger.update(&other, &edit).await.unwrap_err(),
        stranger.confirm(&other).await.unwrap_err(),
        stranger.flag_wrong(&other, None).await.unwrap_err(),
        stranger.pin(&other, false).await.unwrap_err(),
        stranger.purge(&other).await.unwrap_err(),
        stranger.confirm(&other[..8]).await.unwrap_err(),
    ] {
        assert_eq!(error.code(), ErrorCode::NotFound, "{error}");
    }
    assert!(stranger.get(&other).await.unwrap().is_none());
    assert_eq!(engram.get(&other).await.unwrap().unwrap(), before);

    // Reset: every memory of the project goes; re-importing brings the rules back.
    let gone = engram.reset().await.unwrap();
    assert!(gone >= rules, "{gone}");
    let all = filter(|f| f.status = Some(Status::All));
    assert_eq!(engram.count(&all).await.unwrap(), 0);
    let again = engram
        .import_instructions(ImportRequest {
            files: vec![uv_agents()],
        })
        .await
        .unwrap();
    assert!(!again.files[0].unchanged_file);
    assert_eq!(engram.count(&MemoryFilter::default()).await.unwrap(), rules);
}

on_a_file_and_over_http!(
    browse_and_judge,
    browse_and_judge_on_an_embedded_libsql_file,
    browse_and_judge_on_the_test_server_over_http
);

/// The project's trust level moves every injection point at once, in every process: the
/// memories beside a file's tool result, the session start's context and an unasked
/// search (a prompt's, a step's known answer) each take only memories at the level's
/// threshold; a level set through one `Engram` holds for another on the same database.
async fn trust_levels_move_every_injection<D: Database + Copy>(db: D) {
    let project = format!("trust-{}", nonce());
    let engram = crate::common::open_project(db, &project).await;
    let mut ids = std::collections::HashMap::new();
    // Distinct claims, so none is folded into another as a duplicate.
    let claims = [
        (
            0.5,
            "billing ledger locks rows while reconciling invoices",
            "prefer tabs in Makefiles",
        ),
        (
            0.6,
            "billing ledger rounding drifts on refunds",
            "prefer small commits",
        ),
        (
            0.7,
            "billing ledger needs the tax table loaded first",
            "prefer explicit imports",
        ),
        (
            0.85,
            "billing ledger writes must hold the account mutex",
            "prefer rustls over openssl",
        ),
    ];
    for (confidence, claim, taste) in claims {
        let mut gotcha = NewMemory::new(MemoryType::Gotcha, claim);
        gotcha.confidence = confidence;
        gotcha.related_files = vec!["src/billing/ledger.rs".into()];
        let id = engram.remember(gotcha).await.unwrap().id;
        let mut preference = NewMemory::new(MemoryType::Preference, taste);
        preference.confidence = confidence;
        ids.insert(id, confidence);
        let id = engram.remember(preference).await.unwrap().id;
        ids.insert(id, confidence);
    }
    let least = |found: &[String]| -> Vec<f64> {
        let mut c: Vec<f64> = found.iter().map(|id| ids[id]).collect();
        c.sort_by(f64::total_cmp);
        c.dedup();
        c
    };
    let read = engram::ToolResultContext {
        tool: "Read".into(),
        input: serde_json::json!({"file_path": "/home/me/app/src/billing/ledger.rs"}),
        shown_ids: Vec::new(),
    };
    let mut unasked = SearchQuery::new("billing ledger");
    unasked.intent = engram::SearchIntent::AutoInject;
    let other = crate::common::open_project(db, &project).await;
    assert!(!other.trust_level().await.unwrap().set);
    for (level, expected) in [
        (None, vec![0.7, 0.85]),
        (Some(1), vec![0.85]),
        (Some(3), vec![0.6, 0.7, 0.85]),
        (Some(4), vec![0.5, 0.6, 0.7, 0.85]),
    ] {
        if let Some(level) = level {
            let set = engram
                .set_trust_level(engram::TrustLevel::from_number(level).unwrap())
                .await
                .unwrap();
            assert_eq!(i64::from(set.level.number()), level);
        }
        // Another process's injections read what this one set.
        let beside = other.augment_tool_result(&read).await.unwrap();
        let beside = beside.map(|i| i.memory_ids).unwrap_or_default();
        assert_eq!(least(&beside), expected, "file context at {level:?}");
        let start = other
            .session_context(&engram::SessionStart::default())
            .await
            .unwrap();
        assert_eq!(
            least(&start.packed.memory_ids),
            expected,
            "session start at {level:?}"
        );
        let found = other.search(&unasked).await.unwrap();
        let found: Vec<String> = found.hits.iter().map(|h| h.memory.id.clone()).collect();
        assert!(
            least(&found).iter().all(|c| expected.contains(c)),
            "unasked search at {level:?}: {:?}",
            least(&found)
        );
        assert!(!found.is_empty(), "the best match clears {level:?}");
        assert_eq!(other.trust_level().await.unwrap().injection_threshold, {
            let level = level.unwrap_or(2);
            engram::TrustLevel::from_number(level)
                .unwrap()
                .injection_threshold()
        });
    }
    // An asked-for search is the person's own question: every level answers it in full.
    let asked = other
        .search(&SearchQuery::new("billing ledger"))
        .await
        .unwrap();
    assert_eq!(asked.hits.len(), 4);
}

on_a_file_and_over_http!(
    trust_levels_move_every_injection,
    trust_levels_on_an_embedded_libsql_file,
    trust_levels_over_http
);

/// A rule file's front-matter globs bring its rules beside the files they name: real
/// Cursor rules (PlatformPlatform's `**/Domain/*.cs`, trigger.dev's
/// `apps/webapp/**/*.tsx,apps/webapp/**/*.ts`) imported, then files read.
async fn rules_follow_their_globs<D: Database + Copy>(db: D) {
    let engram = crate::common::open_project(db, &format!("globs-{}", nonce())).await;
    let eval = |name: &str| {
        let dir = std::env::var_os("ENGRAM_EVAL_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/eval")
            });
        std::fs::read_to_string(dir.join("instructions").join(name)).expect("eval file")
    };
    let report = engram
        .import_instructions(ImportRequest {
            files: vec![
                InstructionFile {
                    path: ".cursor/rules/backend/strongly-typed-ids.mdc".into(),
                    text: eval("platformplatform__PlatformPlatform__.cursor__rules__backend__strongly-typed-ids.mdc"),
                },
                InstructionFile {
                    path: ".cursor/rules/webapp.mdc".into(),
                    text: eval("triggerdotdev__trigger.dev__.cursor__rules__webapp.mdc"),
                },
            ],
        })
        .await
        .unwrap();
    let rules_of =
        |i: usize| -> Vec<String> { report.files[i].rules.iter().map(|r| r.id.clone()).collect() };
    let injected = |path: &'static str| {
        let engram = &engram;
        async move {
            let read = engram::ToolResultContext {
                tool: "Read".into(),
                input: serde_json::json!({ "file_path": path }),
                shown_ids: Vec::new(),
            };
            engram
                .augment_tool_result(&read)
                .await
                .unwrap()
                .map(|i| i.memory_ids)
                .unwrap_or_default()
        }
    };
    for (path, file) in [
        ("/home/me/repo/application/account/Core/Domain/Order.cs", 0),
        ("Core/Domain/Order.cs", 0),
        ("/work/trigger/apps/webapp/app/routes/page.tsx", 1),
        ("apps/webapp/server.ts", 1),
    ] {
        let ids = injected(path).await;
        assert!(!ids.is_empty(), "{path}: no rule");
        assert!(ids.len() <= 4, "{path}: {ids:?}");
        assert!(
            ids.iter().all(|id| rules_of(file).contains(id)),
            "{path}: {ids:?}"
        );
    }
    for path in [
        "src/MyDomain/Order.cs",
        "apps/api/server.ts",
        "Domain/Order.rs",
    ] {
        assert!(injected(path).await.is_empty(), "{path} matches no glob");
    }
}

on_a_file_and_over_http!(
    rules_follow_their_globs,
    rules_follow_their_globs_on_an_embedded_libsql_file,
    rules_follow_their_globs_over_http
);
