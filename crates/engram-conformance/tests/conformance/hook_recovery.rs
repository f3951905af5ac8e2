//! A Claude Code session that logged tool events through the hooks and ended without a
//! Stop (a crash, a kill) is finalized by the next session's start once it has been quiet
//! for half an hour — not sooner, and only once.

use std::cell::Cell;
use std::rc::Rc;

use crate::file_db::open_db;
use engram::agent_loop::hook::HookPayload;
use engram::{Engram, EngramConfig, Host, OsEntropy};
use engram_libsql::LocalDatabase;
use engram_store::{Database, Statement, Value};

/// A clock the test moves.
#[derive(Clone)]
struct MovableClock(Rc<Cell<i64>>);

impl engram::Clock for MovableClock {
    fn now_millis(&self) -> i64 {
        self.0.get()
    }
}

fn payload(event: &str, session: &str, extra: serde_json::Value) -> HookPayload {
    let mut fields = serde_json::json!({
        "hook_event_name": event,
        "session_id": session,
        "cwd": "/work/app",
    });
    if let (Some(fields), Some(extra)) = (fields.as_object_mut(), extra.as_object()) {
        fields.extend(extra.clone());
    }
    HookPayload::from_json(&fields.to_string()).expect("a payload")
}

/// engram on `db` with the default project, its clock at `now` (the test moves it).
async fn at_time<'a>(db: &'a LocalDatabase, now: &Rc<Cell<i64>>) -> Engram<&'a LocalDatabase> {
    let host = Host::new(MovableClock(Rc::clone(now)), OsEntropy);
    Engram::open(db, EngramConfig::default(), host)
        .await
        .expect("engram")
}

/// A session's start, as Claude Code sends it.
fn start(session: &str) -> HookPayload {
    payload(
        "SessionStart",
        session,
        serde_json::json!({"source": "startup"}),
    )
}

/// The first cell of `sql`'s answer for `session` (its `?1`).
async fn cell<D: Database>(db: &D, sql: &str, session: &str) -> Value {
    let rows = db
        .pipeline(&[Statement::with_params(sql, vec![Value::from(session)])])
        .await
        .expect("read");
    let rows = rows.into_iter().next().expect("one").expect("ok").rows;
    rows[0][0].clone()
}

async fn finalized<D: Database>(db: &D, session: &str) -> i64 {
    let sql = "SELECT count(*) FROM observer_sessions WHERE session_id = ?1";
    cell(db, sql, session).await.as_i64("count").expect("count")
}

#[tokio::test]
async fn a_session_that_ended_without_a_stop_is_finalized_by_a_later_start() {
    let (_tmp, db) = open_db("hook-recovery").await;
    let now = Rc::new(Cell::new(1_800_000_000_000));
    let engram = at_time(&db, &now).await;
    let roots = vec!["/work/app".to_owned()];
    for (i, file) in ["src/db.rs", "src/api.rs", "src/db.rs"].iter().enumerate() {
        let read = payload(
            "PostToolUse",
            "crashed",
            serde_json::json!({"tool_name": "Read", "tool_use_id": format!("t{i}"),
                "tool_input": {"file_path": format!("/work/app/{file}")}, "tool_response": "fn main() {}"}),
        );
        engram.answer_hook(&read, &roots).await.expect("logged");
    }

    now.set(now.get() + 10 * 60 * 1000);
    engram
        .answer_hook(&start("second"), &roots)
        .await
        .expect("starts");
    assert_eq!(
        finalized(&db, "crashed").await,
        0,
        "ten quiet minutes are not a crash"
    );

    now.set(now.get() + 25 * 60 * 1000);
    engram
        .answer_hook(&start("third"), &roots)
        .await
        .expect("starts");
    assert_eq!(finalized(&db, "crashed").await, 1, "35 quiet minutes are");
    assert_eq!(
        finalized(&db, "second").await,
        0,
        "a session with no events is not"
    );

    engram
        .answer_hook(&start("fourth"), &roots)
        .await
        .expect("starts");
    assert_eq!(finalized(&db, "crashed").await, 1, "finalized once");
}

async fn learned_events<D: Database>(db: &D, session: &str) -> i64 {
    let sql = "SELECT events FROM observer_sessions WHERE session_id = ?1";
    cell(db, sql, session)
        .await
        .as_i64("events")
        .expect("events")
}

async fn finalized_at<D: Database>(db: &D, session: &str) -> String {
    let sql = "SELECT finalized_at FROM observer_sessions WHERE session_id = ?1";
    let value = cell(db, sql, session).await;
    value.as_text("finalized_at").expect("text").to_owned()
}

/// A session finalized by a Stop that went on working and then crashed: the calls after
/// its Stop are learned by a later start once it is quiet, and a session whose last Stop
/// saw everything is not finalized again.
#[tokio::test]
async fn events_after_a_sessions_last_stop_are_learned_by_a_later_start() {
    let (_tmp, db) = open_db("hook-recovery-after-stop").await;
    let now = Rc::new(Cell::new(1_800_000_000_000));
    let engram = at_time(&db, &now).await;
    let roots = vec!["/work/app".to_owned()];
    let read = |session: &str, i: usize| {
        payload(
            "PostToolUse",
            session,
            serde_json::json!({"tool_name": "Read", "tool_use_id": format!("{session}-{i}"),
                "tool_input": {"file_path": format!("/work/app/src/f{}.rs", i % 3)},
                "tool_response": "fn main() {}"}),
        )
    };
    for session in ["crashed", "stopped"] {
        for i in 0..3 {
            now.set(now.get() + 1000);
            engram
                .answer_hook(&read(session, i), &roots)
                .await
                .expect("logged");
        }
        now.set(now.get() + 1000);
        let stop = payload("Stop", session, serde_json::json!({}));
        engram.answer_hook(&stop, &roots).await.expect("stopped");
    }
    let after_stop = learned_events(&db, "crashed").await;
    assert_eq!(after_stop, learned_events(&db, "stopped").await);
    // Two more calls, then the process dies: no Stop.
    for i in 3..5 {
        now.set(now.get() + 1000);
        engram
            .answer_hook(&read("crashed", i), &roots)
            .await
            .expect("logged");
    }
    now.set(now.get() + 10 * 60 * 1000);
    engram
        .answer_hook(&start("next"), &roots)
        .await
        .expect("starts");
    assert_eq!(
        learned_events(&db, "crashed").await,
        after_stop,
        "ten quiet minutes are not a crash"
    );
    now.set(now.get() + 25 * 60 * 1000);
    engram
        .answer_hook(&start("later"), &roots)
        .await
        .expect("starts");
    let recovered = learned_events(&db, "crashed").await;
    assert!(
        recovered > after_stop,
        "the calls after the Stop were learned: {after_stop} events before, {recovered} after"
    );
    let stopped_at = finalized_at(&db, "stopped").await;
    let crashed_at = finalized_at(&db, "crashed").await;
    now.set(now.get() + 60 * 60 * 1000);
    engram
        .answer_hook(&start("latest"), &roots)
        .await
        .expect("starts");
    assert_eq!(
        finalized_at(&db, "stopped").await,
        stopped_at,
        "nothing new: not finalized again"
    );
    assert_eq!(
        finalized_at(&db, "crashed").await,
        crashed_at,
        "recovered once"
    );
}

/// The session review: what a session was shown, what it learned by part, and the reading
/// the shown memories' indexed files would have cost.
#[tokio::test]
async fn a_session_review_shows_what_was_applied_and_what_was_learned() {
    let (_tmp, db) = open_db("session-review").await;
    let now = Rc::new(Cell::new(1_800_000_000_000));
    let engram = at_time(&db, &now).await;
    assert!(
        engram.session_review(None).await.unwrap().is_none(),
        "nothing to review yet"
    );
    let mut gotcha = engram::NewMemory::new(
        engram::MemoryType::Gotcha,
        "db.rs must be migrated before api.rs starts",
    );
    gotcha.related_files = vec!["src/db.rs".into()];
    let shown = engram.remember(gotcha).await.unwrap();
    // The indexed file the shown memory cites: 4,000 bytes.
    db.pipeline(&[Statement::with_params(
        "INSERT INTO code_files (project_id, path, language, hash, lines, bytes, outline, indexed_at) \
VALUES ('default', 'src/db.rs', 'rust', 'h', 100, 4000, '[]', 0)",
        vec![],
    )])
    .await
    .expect("indexed");
    let learned = |content: &str, review: bool, verified: bool| {
        let mut memory = engram::NewMemory::new(engram::MemoryType::Gotcha, content);
        memory.session_id = Some("s".into());
        memory.flags.needs_review = review;
        memory.flags.user_verified = verified;
        memory
    };
    let waiting = engram
        .remember(learned("the cache needs a warm-up", true, false))
        .await
        .unwrap();
    let confirmed = engram
        .remember(learned("tests need REDIS_URL", false, true))
        .await
        .unwrap();
    let plain = engram
        .remember(learned("the build takes a while", false, false))
        .await
        .unwrap();
    let read = payload(
        "PostToolUse",
        "s",
        serde_json::json!({"tool_name": "Read", "tool_use_id": "t1",
            "tool_input": {"file_path": "/work/app/src/db.rs"}, "tool_response": "fn main() {}"}),
    );
    let answer = engram
        .answer_hook(&read, &["/work/app".to_owned()])
        .await
        .unwrap();
    assert_eq!(answer.memory_ids, [shown.id.as_str()]);
    let stop = payload("Stop", "s", serde_json::json!({}));
    engram
        .answer_hook(&stop, &["/work/app".to_owned()])
        .await
        .unwrap();

    let review = engram
        .session_review(None)
        .await
        .unwrap()
        .expect("the last session");
    let ids =
        |memories: &[engram::Memory]| memories.iter().map(|m| m.id.clone()).collect::<Vec<_>>();
    assert_eq!(review.session_id, "s");
    assert_eq!(ids(&review.applied), [shown.id.as_str()]);
    assert_eq!(ids(&review.needs_review), [waiting.id.as_str()]);
    assert_eq!(ids(&review.auto_confirmed), [confirmed.id.as_str()]);
    assert_eq!(ids(&review.learned), [plain.id.as_str()]);
    assert_eq!(review.estimated_tokens_saved, 1000);
    // Judged with one call each: it leaves the waiting list.
    engram.confirm(&waiting.id).await.unwrap();
    let again = engram
        .session_review(Some("s"))
        .await
        .unwrap()
        .expect("the session");
    assert!(again.needs_review.is_empty());
    assert_eq!(ids(&again.auto_confirmed).len(), 2);
    assert_eq!(again.trust.level, engram::TrustLevel::Standard);

    // The trust level sorts what was learned: at the cautious level the plain memory
    // waits for a person, at the autonomous level it needs none.
    let at = |level: i64| {
        let engram = &engram;
        async move {
            let level = engram::TrustLevel::from_number(level).unwrap();
            engram.set_trust_level(level).await.unwrap();
            engram
                .session_review(Some("s"))
                .await
                .unwrap()
                .expect("the session")
        }
    };
    let cautious = at(1).await;
    assert_eq!(ids(&cautious.needs_review), [plain.id.as_str()]);
    assert!(cautious.learned.is_empty());
    let autonomous = at(4).await;
    assert!(ids(&autonomous.auto_confirmed).contains(&plain.id));
    assert_eq!(
        autonomous.trust.review_detail,
        engram::ReviewDetail::Suppressed
    );
    // Three of the session's memories flagged wrong: a more cautious level is offered.
    assert_eq!(autonomous.suggested_level, None);
    for memory in [&waiting, &confirmed, &plain] {
        engram.flag_wrong(&memory.id, None).await.unwrap();
    }
    let flagged = at(3).await;
    assert_eq!(flagged.flagged_wrong, 3);
    assert_eq!(flagged.suggested_level, Some(engram::TrustLevel::Standard));
    assert_eq!(at(1).await.suggested_level, None, "none is more cautious");
}
