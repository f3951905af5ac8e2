//! Planning from memory on the libSQL test server over HTTP and on an embedded
//! libSQL file: calibrations add up and replace their memory, the step limit follows the
//! worst overrun among the task's modules in one request, and the planner's context comes
//! in sections within its budget; both databases give the same answers.

use crate::common::{nonce, CountingTransport};
use crate::file_db::{open_db, open_engram};
use engram::{
    CalibrationSample, Database, Engram, EngramConfig, Host, MemoryType, NewMemory, PlannerRequest,
    StepLimitRequest,
};
use engram_hrana::HranaClient;
use engram_testserver::{ServerConfig, TestServer};

fn sample(module: &str, planned: u32, actual: u32) -> CalibrationSample {
    CalibrationSample {
        module: module.into(),
        planned_steps: planned,
        actual_steps: actual,
        methodology: None,
        session_id: Some("s1".into()),
    }
}

fn limit(base: u32, modules: &[&str]) -> StepLimitRequest {
    StepLimitRequest {
        base_max_steps: base,
        modules: modules.iter().map(|m| (*m).to_owned()).collect(),
        methodology: None,
        max_steps: None,
    }
}

/// Runs the planning calls on `engram`; returns what must agree across databases, with
/// memory ids replaced by names.
async fn planning<D: Database>(engram: &Engram<D>) -> Vec<String> {
    let mut seen = Vec::new();

    // Three work units in src/db: 10 planned each, 15, 18 and 12 taken.
    let first = engram
        .record_calibration(&sample("src/db", 10, 15))
        .await
        .expect("record");
    assert_eq!((first.samples, first.ratio), (1, 1.5));
    let first_id = first.memory_id.clone().expect("memory id");
    // Too few work units yet: the base limit stands.
    let early = engram
        .step_limit(&limit(20, &["src/db"]))
        .await
        .expect("limit");
    assert_eq!((early.max_steps, early.factor), (20, 1.0));
    engram
        .record_calibration(&sample("src/db", 10, 18))
        .await
        .expect("record");
    let db = engram
        .record_calibration(&sample("src/db", 10, 12))
        .await
        .expect("record");
    assert_eq!(db.samples, 3);
    assert_eq!(db.ratio, 1.5);
    assert_eq!((db.mean_planned_steps, db.mean_actual_steps), (10.0, 15.0));
    // The module keeps one live calibration memory: the latest, which supersedes the last.
    assert!(engram.get(&first_id).await.expect("get").is_none());
    let db_id = db.memory_id.clone().expect("memory id");
    let memory = engram.get(&db_id).await.expect("get").expect("live");
    assert_eq!(memory.memory_type, MemoryType::TaskCalibration);
    assert!(memory
        .content
        .starts_with("Work in `src/db` takes 1.50× the planned steps"));
    assert_eq!(memory.related_modules, vec!["src/db".to_owned()]);
    assert!(!memory.flags.needs_review);

    // Another module that finishes early, and another methodology's plans.
    for actual in [6, 7, 8] {
        engram
            .record_calibration(&sample("src/ui", 10, actual))
            .await
            .expect("record");
    }
    let mut tdd = sample("src/db", 4, 16);
    tdd.methodology = Some("tdd".into());
    engram.record_calibration(&tdd).await.expect("record");

    let both = engram
        .step_limit(&limit(20, &["src/ui", "src/db"]))
        .await
        .expect("limit");
    assert_eq!((both.max_steps, both.factor), (30, 1.5));
    assert_eq!(
        both.calibration.as_ref().map(|c| c.module.as_str()),
        Some("src/db")
    );
    let ui = engram
        .step_limit(&limit(20, &["src/ui"]))
        .await
        .expect("limit");
    assert_eq!((ui.max_steps, ui.factor), (20, 1.0));
    seen.push(format!("{} | {}", both.reason, ui.reason));

    // Planning knowledge of src/db, and noise the planner must leave out.
    let mut named = Vec::new();
    for (name, memory_type, content, module) in [
        (
            "dead",
            MemoryType::DeadEnd,
            "Retrying the migration inside the transaction deadlocks the pool",
            "src/db",
        ),
        (
            "couple",
            MemoryType::CausalDependency,
            "Changing the migration schema means regenerating the fixtures",
            "src/db",
        ),
        (
            "outcome",
            MemoryType::WorkUnitOutcome,
            "Migration rollback support shipped after two retries",
            "src/db",
        ),
        (
            "recipe",
            MemoryType::WorkflowRecipe,
            "To add a migration: write it, run the fixtures, then the schema test",
            "src/db",
        ),
        (
            "other-dead",
            MemoryType::DeadEnd,
            "Migration of the sidebar widget state to local storage failed",
            "src/ui",
        ),
        (
            "gotcha",
            MemoryType::Gotcha,
            "The migration runner holds a lock on the pool",
            "src/db",
        ),
    ] {
        let mut memory = NewMemory::new(memory_type, content);
        memory.related_modules = vec![module.to_owned()];
        let stored = engram.remember(memory).await.expect("remember");
        named.push((name, stored.id));
    }
    let name_of = |id: &str| {
        named
            .iter()
            .find(|(_, v)| v == id)
            .map(|(k, _)| (*k).to_owned())
            .unwrap_or_else(|| {
                if id == db_id {
                    "calibration".into()
                } else {
                    format!("?{id}")
                }
            })
    };
    let request = PlannerRequest {
        task: "add a migration that renames the users table".into(),
        modules: vec!["src/db".into()],
        methodology: None,
        budget: None,
    };
    let context = engram.planner_context(&request).await.expect("planner");
    let ids: Vec<String> = context
        .packed
        .memory_ids
        .iter()
        .map(|id| name_of(id))
        .collect();
    assert_eq!(ids, ["calibration", "dead", "couple", "outcome", "recipe"]);
    assert!(context.packed.tokens <= context.packed.budget);
    assert_eq!(context.packed.budget, 2500);
    assert_eq!(context.calibrations.len(), 1);
    assert_eq!(context.calibrations[0].ratio, 1.5);
    let headings: Vec<&str> = context
        .packed
        .text
        .lines()
        .filter(|l| l.starts_with("## "))
        .collect();
    assert_eq!(
        headings,
        [
            "## Calibration: actual against planned steps",
            "## Dead ends: write them into the plan as constraints",
            "## Coupled files: include them in the scope",
            "## Recent outcomes",
            "## Recipes",
        ]
    );
    seen.push(format!("{ids:?}"));

    // A small budget keeps the text within it, and says what it left out.
    let small = engram
        .planner_context(&PlannerRequest {
            budget: Some(60),
            ..request.clone()
        })
        .await
        .expect("planner");
    assert!(small.packed.tokens <= 60, "{} tokens", small.packed.tokens);
    assert!(!small.packed.omitted.is_empty());
    assert_eq!(
        small.packed.memory_ids.len() + small.packed.omitted.len(),
        5
    );
    // Which memories fit in so small a budget hangs on their lines' token estimates, and
    // each line carries the memory's random id, so the two runs are not compared on it.

    // Without modules: the task's search alone, and no calibration.
    let open = engram
        .planner_context(&PlannerRequest {
            modules: vec![],
            ..request.clone()
        })
        .await
        .expect("planner");
    assert!(open.calibrations.is_empty());
    let open_ids: Vec<String> = open
        .packed
        .memory_ids
        .iter()
        .map(|id| name_of(id))
        .collect();
    assert!(open_ids.contains(&"other-dead".to_owned()), "{open_ids:?}");
    assert!(!open_ids.contains(&"gotcha".to_owned()), "{open_ids:?}");
    seen.push(format!("{open_ids:?}"));

    // Bad input names its field and changes nothing.
    let error = engram
        .record_calibration(&sample("src/db", 0, 5))
        .await
        .expect_err("zero planned steps");
    assert!(error.to_string().contains("plannedSteps"), "{error}");
    let error = engram
        .planner_context(&PlannerRequest::default())
        .await
        .expect_err("no task");
    assert!(error.to_string().contains("task"), "{error}");
    let still = engram
        .step_limit(&limit(20, &["src/db"]))
        .await
        .expect("limit");
    assert_eq!(still.calibration.map(|c| c.samples), Some(3));
    seen
}

#[tokio::test]
async fn planning_agrees_over_http_and_on_a_file() {
    let server = TestServer::start(ServerConfig::default()).expect("test server starts");
    let client = HranaClient::new(CountingTransport::default(), &server.url(), None);
    let config = EngramConfig {
        project_id: format!("plan-{}", nonce()),
    };
    let remote = Engram::open(&client, config, Host::native())
        .await
        .expect("open");
    let over_http = planning(&remote).await;

    let (_file, db) = open_db("planning").await;
    let local = open_engram(&db).await;
    let on_file = planning(&local).await;
    assert_eq!(over_http, on_file);

    // A step limit is one request; recording a sample, two.
    let transport = client.transport();
    let before = transport.requests.get();
    remote
        .step_limit(&limit(20, &["src/db"]))
        .await
        .expect("limit");
    assert_eq!(transport.requests.get() - before, 1);
    let before = transport.requests.get();
    remote
        .record_calibration(&sample("src/api", 5, 5))
        .await
        .expect("record");
    // The previous calibration, the consolidation read, the write.
    assert_eq!(transport.requests.get() - before, 3);
    // A planner's context is one request: the calibrations are read with the four
    // sections' searches.
    let before = transport.requests.get();
    let context = remote
        .planner_context(&PlannerRequest {
            task: "speed up the migration of the db module".into(),
            modules: vec!["src/db".into()],
            ..PlannerRequest::default()
        })
        .await
        .expect("planner");
    assert!(!context.calibrations.is_empty(), "{context:?}");
    assert_eq!(transport.requests.get() - before, 1);
}
