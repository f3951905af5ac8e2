//! Search latency at 1K, 10K and 100K synthetic memories:
//! `cargo run --release -p engram-eval --example search_bench -- [SIZES] [QUERIES]`
//! (default `1000,10000,100000 200`).
//!
//! Per size, side by side in one run: the full pipeline in process on an embedded libSQL
//! file (keyword + graph paths; and hybrid with dense vectors by exact scan, from vectors
//! kept in memory, and by the libSQL vector index, also searched regardless of its
//! 3,000-memory threshold), over HTTP to the test server (with round trips per search counted), and
//! a baseline that rebuilds an in-memory FTS5 index per query. The query embedding
//! is excluded: vectors come from a fake bag-of-words hash embedder that costs microseconds,
//! and `timings.embed` is subtracted. Latencies are p50 / p95 in milliseconds.
//! Resident configurations keep vectors and/or keyword postings in memory. The `agent:`
//! rows time the agent loop's calls (planning: recording a calibration, the step limit,
//! the planner's context; tool-result augmentation, a step that runs two of the
//! three triggers, a session start) on the resident keyword + graph configuration.
//! `BENCH_KEYWORD_ONLY=1` runs only the keyword + graph configurations; `BENCH_NO_ANN=1` skips the
//! libSQL vector index (building it takes minutes at 10K). For profiling:
//! `BENCH_ONLY=<text>` measures only the configurations whose label contains it, and
//! `BENCH_DIR=<dir>` keeps the embedded databases there and reuses them when already filled
//! (the HTTP configurations then search a copy of the filled hybrid database). The
//! resident hybrid configuration is also measured with the search's relevance cut off.

use std::cell::Cell;
use std::time::Instant;

use engram::{
    CalibrationSample, Database, Embed, EmbedFuture, Engram, EngramConfig, Host, MemoryType,
    NewMemory, PlannerRequest, SearchQuery, SessionStart, StepLimitRequest, StepRequest,
    ToolResultContext, VECTOR_INDEX_MIN_MEMORIES,
};
use engram_hrana::{HranaClient, HttpResponse, HttpTransport, ReqwestTransport};
use engram_libsql::LocalDatabase;
use engram_store::{Statement, Value};
use engram_testserver::{remove_db_files, ServerConfig, TestServer};

const DIMS: usize = 384;

/// A deterministic pseudo-random stream (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn vocabulary() -> Vec<String> {
    let syllables = [
        "ka", "lo", "mi", "ne", "pu", "ra", "si", "to", "ve", "zu", "bra", "cle", "dri", "fro",
        "glu", "pla", "sto", "tre",
    ];
    let mut rng = Rng(7);
    (0..3000)
        .map(|_| {
            let n = 2 + rng.below(3);
            (0..n)
                .map(|_| syllables[rng.below(syllables.len())])
                .collect()
        })
        .collect()
}

/// Zipf-like pick: low indexes are common words.
fn word<'a>(rng: &mut Rng, vocab: &'a [String]) -> &'a str {
    let r = rng.below(vocab.len()) as f64 / vocab.len() as f64;
    &vocab[((r * r * r) * vocab.len() as f64) as usize]
}

fn corpus(n: usize, vocab: &[String]) -> Vec<NewMemory> {
    let mut rng = Rng(n as u64 * 31 + 1);
    let types = [
        MemoryType::Gotcha,
        MemoryType::ErrorPattern,
        MemoryType::Decision,
        MemoryType::Pattern,
        MemoryType::DeadEnd,
    ];
    (0..n)
        .map(|_| {
            let words = 12 + rng.below(40);
            let mut text: Vec<String> = (0..words)
                .map(|_| word(&mut rng, vocab).to_owned())
                .collect();
            if rng.below(3) == 0 {
                let a = word(&mut rng, vocab).to_owned();
                let b = word(&mut rng, vocab).to_owned();
                text.push(format!("{a}_{b}"));
            }
            let mut m = NewMemory::new(types[rng.below(types.len())], text.join(" "));
            let module = format!("src/mod{}", rng.below(40));
            m.related_files = vec![format!("{module}/file{}.rs", rng.below(500))];
            m.related_modules = vec![module];
            m
        })
        .collect()
}

fn queries(count: usize, vocab: &[String]) -> Vec<String> {
    let mut rng = Rng(99);
    (0..count)
        .map(|i| {
            let n = 3 + rng.below(5);
            let mut q: Vec<String> = (0..n).map(|_| word(&mut rng, vocab).to_owned()).collect();
            if i % 3 == 0 {
                q.push(format!(
                    "{}_{}",
                    word(&mut rng, vocab),
                    word(&mut rng, vocab)
                ));
            }
            q.join(" ")
        })
        .collect()
}

/// A fake embedder for benchmarks only: words hashed into buckets, normalized.
struct HashEmbedder;

impl Embed for HashEmbedder {
    fn model_id(&self) -> &str {
        "bench-hash-384"
    }
    fn dims(&self) -> usize {
        DIMS
    }
    fn embed<'a>(&'a self, texts: &'a [String]) -> EmbedFuture<'a> {
        Box::pin(async move {
            Ok(texts
                .iter()
                .map(|t| {
                    let mut v = vec![0f32; DIMS];
                    for w in t.split_whitespace() {
                        let h = w.bytes().fold(1469598103934665603u64, |h, b| {
                            (h ^ u64::from(b)).wrapping_mul(1099511628211)
                        });
                        v[(h % DIMS as u64) as usize] += 1.0;
                        v[((h >> 20) % DIMS as u64) as usize] += 0.5;
                    }
                    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-6);
                    v.iter().map(|x| x / norm).collect()
                })
                .collect())
        })
    }
}

/// Counts HTTP requests (one per database round trip).
#[derive(Default)]
struct CountingTransport {
    inner: ReqwestTransport,
    requests: Cell<usize>,
}

impl HttpTransport for CountingTransport {
    async fn post_json(
        &self,
        url: &str,
        bearer: Option<&str>,
        body: String,
    ) -> Result<HttpResponse, String> {
        self.requests.set(self.requests.get() + 1);
        self.inner.post_json(url, bearer, body).await
    }
}

fn percentiles(mut v: Vec<f64>) -> (f64, f64) {
    v.sort_by(f64::total_cmp);
    let at = |p: f64| v[((v.len() as f64 - 1.0) * p).round() as usize];
    (at(0.5), at(0.95))
}

/// Whether `BENCH_ONLY` (if set) selects the configuration `label`.
fn wanted(label: &str) -> bool {
    std::env::var("BENCH_ONLY").map_or(true, |only| label.contains(&only))
}

/// The project of [`SMALL_PROJECT_SIZE`] memories some rows put beside the large one.
const SMALL_PROJECT: &str = "small";
/// Its size.
const SMALL_PROJECT_SIZE: usize = 300;

/// The small project's configuration.
fn small_project() -> EngramConfig {
    EngramConfig {
        project_id: SMALL_PROJECT.to_owned(),
    }
}

/// How many memories `project` holds in `db` (0 if it cannot tell).
async fn project_size<D: Database>(db: &D, project: &str) -> i64 {
    let rows = db
        .pipeline(&[Statement::with_params(
            "SELECT count(*) FROM memories WHERE project_id = ?1",
            vec![Value::from(project)],
        )])
        .await
        .ok()
        .and_then(|mut r| r.pop())
        .and_then(|r| r.ok());
    rows.and_then(|r| r.rows.first().and_then(|row| row.first().cloned()))
        .and_then(|v| v.as_i64("count").ok())
        .unwrap_or(0)
}

/// Whether `db`, kept in `BENCH_DIR` by an earlier run, already holds `count` memories of
/// `project`.
async fn already_filled(db: &LocalDatabase, project: &str, count: usize) -> bool {
    project_size(db, project).await == count as i64
}

async fn fill<D: Database>(engram: &Engram<D>, memories: &[NewMemory]) {
    let started = Instant::now();
    for (i, m) in memories.iter().enumerate() {
        engram.remember(m.clone()).await.expect("remember");
        if (i + 1) % 20_000 == 0 {
            eprintln!(
                "    {} memories ({:.0}/s)",
                i + 1,
                (i + 1) as f64 / started.elapsed().as_secs_f64()
            );
        }
    }
}

/// p50 and p95 of the search time without the query embedding, and the mean time of the
/// candidate round trip and of ranking (ms).
async fn measure<D: Database>(engram: &Engram<D>, queries: &[String]) -> ((f64, f64), String) {
    measure_stages(engram, queries, engram::Stages::default()).await
}

/// [`measure`] with some of the pipeline's optional stages off.
async fn measure_stages<D: Database>(
    engram: &Engram<D>,
    queries: &[String],
    stages: engram::Stages,
) -> ((f64, f64), String) {
    let mut latencies = Vec::with_capacity(queries.len());
    let (mut candidates, mut ranking) = (0.0, 0.0);
    for q in queries {
        let mut query = SearchQuery::new(q.as_str());
        query.stages = stages;
        let started = Instant::now();
        let response = engram.search(&query).await.expect("search");
        let ms = started.elapsed().as_secs_f64() * 1e3 - response.timings.embed / 1e3;
        latencies.push(ms);
        candidates += response.timings.candidates / 1e3;
        ranking += response.timings.ranking / 1e3;
    }
    let n = queries.len() as f64;
    (
        percentiles(latencies),
        format!(
            "candidates {:.2} ms, ranking {:.2} ms",
            candidates / n,
            ranking / n
        ),
    )
}

/// Seeds 002: per query, build an in-memory FTS5 table of every memory and run BM25.
async fn baseline(memories: &[NewMemory], queries: &[String]) -> (f64, f64) {
    let mut latencies = Vec::new();
    for q in queries {
        let started = Instant::now();
        let db = LocalDatabase::open(":memory:").await.expect("memory db");
        let mut statements = vec![Statement::new(
            "CREATE VIRTUAL TABLE m USING fts5(body, id UNINDEXED, tokenize = 'porter unicode61')",
        )];
        for (i, m) in memories.iter().enumerate() {
            statements.push(Statement::with_params(
                "INSERT INTO m (body, id) VALUES (?1, ?2)",
                vec![Value::from(m.content.as_str()), Value::Integer(i as i64)],
            ));
        }
        db.transaction(&statements).await.expect("build");
        let expression = engram_core::query::match_expression(q).unwrap_or_else(|| "\"x\"".into());
        db.pipeline(&[Statement::with_params(
            "SELECT id, bm25(m) AS s FROM m WHERE m MATCH ?1 ORDER BY s LIMIT 10",
            vec![Value::from(expression)],
        )])
        .await
        .expect("query");
        latencies.push(started.elapsed().as_secs_f64() * 1e3);
    }
    percentiles(latencies)
}

/// [`measure`] over HTTP, with the round trips per search.
async fn measure_over(
    client: &HranaClient<CountingTransport>,
    engram: &Engram<&HranaClient<CountingTransport>>,
    queries: &[String],
) -> ((f64, f64), String, f64) {
    let before = client.transport().requests.get();
    let (p, stages) = measure(engram, queries).await;
    let trips = (client.transport().requests.get() - before) as f64 / queries.len() as f64;
    (p, stages, trips)
}

/// A session start's context and a planner's context over HTTP, one of each per query
/// (the session with its task, a module and a file; the planner with two modules): p50 /
/// p95 in ms and the HTTP requests each took.
async fn contexts_over(
    size: usize,
    client: &HranaClient<CountingTransport>,
    engram: &Engram<&HranaClient<CountingTransport>>,
    queries: &[String],
) {
    let module = |i: usize| format!("src/mod{}", i % 40);
    let (mut sessions, mut plans) = (Vec::new(), Vec::new());
    let (mut session_trips, mut plan_trips) = (0, 0);
    for (i, q) in queries.iter().enumerate() {
        let start = SessionStart {
            task: Some(q.clone()),
            modules: vec![module(i)],
            files: vec![format!("src/file{}.rs", i % 50)],
            ..SessionStart::default()
        };
        let before = client.transport().requests.get();
        let started = Instant::now();
        engram.session_context(&start).await.expect("session start");
        sessions.push(started.elapsed().as_secs_f64() * 1e3);
        session_trips += client.transport().requests.get() - before;
        let request = PlannerRequest {
            task: q.clone(),
            modules: vec![module(i), module(i + 1)],
            ..PlannerRequest::default()
        };
        let before = client.transport().requests.get();
        let started = Instant::now();
        engram.planner_context(&request).await.expect("planner");
        plans.push(started.elapsed().as_secs_f64() * 1e3);
        plan_trips += client.transport().requests.get() - before;
    }
    let n = queries.len().max(1) as f64;
    row(
        size,
        "  agent: session context over HTTP",
        percentiles(sessions),
        &format!("{:.2} round trips each", session_trips as f64 / n),
    );
    row(
        size,
        "  agent: planner context over HTTP",
        percentiles(plans),
        &format!("{:.2} round trips each", plan_trips as f64 / n),
    );
}

/// Searches until the resident set stops growing (it loads at most 4,096 vectors per
/// search); returns the time taken (ms) and the searches it took.
async fn load_resident<D: Database>(engram: &Engram<D>, query: &str) -> (f64, usize) {
    let started = Instant::now();
    let mut searches = 0;
    let mut count = None;
    loop {
        engram
            .search(&SearchQuery::new(query))
            .await
            .expect("search");
        searches += 1;
        let now = engram.resident_vector_count();
        if now == count {
            return (started.elapsed().as_secs_f64() * 1e3, searches);
        }
        count = now;
    }
}

/// The resident vectors' share of a search: ranking every vector in memory for the 60 ids
/// the statement re-scores.
async fn nearest_only(memories: &[NewMemory], queries: &[String]) -> (f64, f64) {
    let texts: Vec<String> = memories.iter().map(|m| m.content.clone()).collect();
    let vectors = HashEmbedder.embed(&texts).await.expect("embed");
    let mut set = engram_retrieval::resident::VectorSet::new(DIMS);
    for (i, v) in vectors.iter().enumerate() {
        set.upsert(&format!("m{i}"), v).expect("dims");
    }
    let query_vectors = HashEmbedder.embed(queries).await.expect("embed");
    let mut latencies = Vec::new();
    for q in &query_vectors {
        let started = Instant::now();
        std::hint::black_box(set.nearest(q, 60));
        latencies.push(started.elapsed().as_secs_f64() * 1e3);
    }
    percentiles(latencies)
}

/// A project of 300 memories beside the large one, in the same keyword table: its keyword
/// searches, and FTS5's exact form for each project's queries over every project's matches
/// and over its own rowid range (what the ranges save the small one, and cost the large).
async fn small_project_keywords(
    db: &LocalDatabase,
    vocab: &[String],
    queries: &[String],
    size: usize,
) {
    let small = Engram::open(db, small_project(), Host::native())
        .await
        .unwrap();
    if !already_filled(db, SMALL_PROJECT, SMALL_PROJECT_SIZE).await {
        fill(&small, &corpus(SMALL_PROJECT_SIZE, vocab)).await;
    }
    let (p, stages) = measure(&small, queries).await;
    row(size, "small project (300), keyword + graph", p, &stages);
    let mut resident = Engram::open(db, small_project(), Host::native())
        .await
        .unwrap();
    resident.enable_resident_keywords();
    resident.load_resident_keywords().await.expect("load");
    let (p, stages) = measure(&resident, queries).await;
    row(size, "small project (300), keyword (resident)", p, &stages);

    let large = EngramConfig::default().project_id;
    let bounds = format!(
        " AND {}",
        engram_core::schema::in_project_rowids("memories_fts.rowid", "?2")
    );
    for (project, label) in [(SMALL_PROJECT, "small"), (large.as_str(), "large")] {
        for (range, scope) in [("", "every project"), (bounds.as_str(), "its rowid range")] {
            let sql = format!(
                "SELECT m.id, -bm25(memories_fts, 0.0, 1.0, 3.0, 2.0) AS s FROM memories_fts \
CROSS JOIN memories m ON m.id = memories_fts.memory_id \
WHERE memories_fts MATCH ?1{range} AND m.project_id = ?2 ORDER BY s DESC LIMIT 20"
            );
            let latencies = timed(db, queries, |q| {
                let expression = engram_core::query::match_expression(q)?;
                Some(Statement::with_params(
                    sql.as_str(),
                    vec![Value::from(expression), Value::from(project)],
                ))
            })
            .await;
            row(
                size,
                &format!("  {label}: FTS5 exact form, {scope}"),
                latencies,
                "",
            );
        }
    }
}

/// Percentiles of running one statement per query (none where `statement` gives none).
async fn timed(
    db: &LocalDatabase,
    queries: &[String],
    statement: impl Fn(&str) -> Option<Statement>,
) -> (f64, f64) {
    let mut latencies = Vec::new();
    for q in queries {
        let Some(statement) = statement(q) else {
            continue;
        };
        let started = Instant::now();
        let result = db.pipeline(&[statement]).await.expect("pipeline");
        result.into_iter().for_each(|r| {
            r.expect("statement");
        });
        latencies.push(started.elapsed().as_secs_f64() * 1e3);
    }
    percentiles(latencies)
}

/// The resident keywords' share of a search: ranking the postings for the 80 memories the
/// statement fetches.
fn keyword_pick_only(memories: &[NewMemory], queries: &[String]) -> (f64, f64) {
    use engram_retrieval::keyword_index::{KeywordColumns, KeywordIndex, ScoreScratch};
    let mut index = KeywordIndex::new();
    let mut scratch = ScoreScratch::default();
    for (i, m) in memories.iter().enumerate() {
        let tags = m.tags.join(" ");
        let files = m.related_files.join(" ");
        index.upsert(
            &format!("m{i}"),
            KeywordColumns {
                content: &m.content,
                tags: &tags,
                files: &files,
                project: "bench",
            },
        );
    }
    let mut latencies = Vec::new();
    for q in queries {
        let started = Instant::now();
        let stems: Vec<String> = engram_core::query::tokenize(q)
            .iter()
            .map(|t| engram_core::porter::stem(t))
            .collect();
        let stems: Vec<&str> = stems.iter().map(String::as_str).collect();
        let query = index.informative(&stems);
        std::hint::black_box(index.best_with(&query, 80, Some("bench"), &mut scratch));
        latencies.push(started.elapsed().as_secs_f64() * 1e3);
    }
    percentiles(latencies)
}

/// The agent loop's calls on `engram`, one per query: a Read's tool-result augmentation
/// (a file of the corpus, by absolute path), a step whose recent calls read two files
/// memory knows nothing about and grep for the query (so the first trigger's lookup and
/// the third's auto-inject search both run), and a session start for the query as task.
async fn agent_loop_rows<D: Database>(
    size: usize,
    engram: &Engram<D>,
    memories: &[NewMemory],
    queries: &[String],
) {
    let mut times: [Vec<f64>; 3] = Default::default();
    let mut injected = [0usize; 3];
    for (i, q) in queries.iter().enumerate() {
        let file = &memories[i * 7 % memories.len()].related_files[0];
        let read = ToolResultContext {
            tool: "Read".into(),
            input: serde_json::json!({ "file_path": format!("/home/dev/app/{file}") }),
            shown_ids: Vec::new(),
        };
        let started = Instant::now();
        let found = engram.augment_tool_result(&read).await.expect("augment");
        times[0].push(started.elapsed().as_secs_f64() * 1e3);
        injected[0] += usize::from(found.is_some());

        let calls = serde_json::json!([
            {"step": 6, "tool": "Read", "input": {"file_path": "docs/none.md"}},
            {"step": 7, "tool": "Edit", "input": {"file_path": "src/none.rs"}},
            {"step": 8, "tool": "Grep", "input": {"pattern": q}},
        ]);
        let step = StepRequest {
            step: 9,
            recent_tool_calls: serde_json::from_value(calls).expect("calls"),
            recorded: Vec::new(),
            shown_ids: Vec::new(),
            phase: None,
        };
        let started = Instant::now();
        let found = engram.step_injection(&step).await.expect("step");
        times[1].push(started.elapsed().as_secs_f64() * 1e3);
        injected[1] += usize::from(found.is_some());

        let start = SessionStart {
            task: Some(q.clone()),
            ..SessionStart::default()
        };
        let started = Instant::now();
        let context = engram.session_context(&start).await.expect("session start");
        times[2].push(started.elapsed().as_secs_f64() * 1e3);
        injected[2] += usize::from(!context.packed.memory_ids.is_empty());
    }
    let n = queries.len();
    let [augment, step, session] = times;
    row(
        size,
        "agent: tool-result augmentation",
        percentiles(augment),
        &format!("{} of {n} injected", injected[0]),
    );
    row(
        size,
        "agent: step injection (1 + 3)",
        percentiles(step),
        &format!("{} of {n} injected", injected[1]),
    );
    row(
        size,
        "agent: session context",
        percentiles(session),
        &format!("{} of {n} non-empty", injected[2]),
    );
    planning_rows(size, engram, queries).await;
}

/// Planning on `engram`: recording a work unit's steps (three per module over 40 modules,
/// the corpus's), the step limit for a task in two modules, and the planner's context for
/// each query as task (four typed searches), without modules and with two.
async fn planning_rows<D: Database>(size: usize, engram: &Engram<D>, queries: &[String]) {
    let module = |i: usize| format!("src/mod{}", i % 40);
    let mut record = Vec::new();
    for i in 0..120 {
        let sample = CalibrationSample {
            module: module(i),
            planned_steps: 10,
            actual_steps: 8 + (i % 9) as u32,
            methodology: None,
            session_id: None,
        };
        let started = Instant::now();
        engram.record_calibration(&sample).await.expect("calibrate");
        record.push(started.elapsed().as_secs_f64() * 1e3);
    }
    row(
        size,
        "agent: record calibration",
        percentiles(record),
        "120 work units in 40 modules",
    );
    let (mut limits, mut plans, mut scaled, mut shown) = (Vec::new(), Vec::new(), 0, 0);
    let (mut moduled, mut moduled_shown) = (Vec::new(), 0);
    for (i, q) in queries.iter().enumerate() {
        let request = StepLimitRequest {
            base_max_steps: 20,
            modules: vec![module(i), module(i + 1)],
            methodology: None,
            max_steps: None,
        };
        let started = Instant::now();
        let limit = engram.step_limit(&request).await.expect("step limit");
        limits.push(started.elapsed().as_secs_f64() * 1e3);
        scaled += usize::from(limit.factor > 1.0);
        let request = PlannerRequest {
            task: q.clone(),
            ..PlannerRequest::default()
        };
        let started = Instant::now();
        let context = engram.planner_context(&request).await.expect("planner");
        plans.push(started.elapsed().as_secs_f64() * 1e3);
        shown += context.packed.memory_ids.len();
        let request = PlannerRequest {
            modules: vec![module(i), module(i + 1)],
            ..request
        };
        let started = Instant::now();
        let context = engram.planner_context(&request).await.expect("planner");
        moduled.push(started.elapsed().as_secs_f64() * 1e3);
        moduled_shown += context.packed.memory_ids.len();
    }
    let n = queries.len();
    row(
        size,
        "agent: step limit",
        percentiles(limits),
        &format!("{scaled} of {n} scaled"),
    );
    row(
        size,
        "agent: planner context",
        percentiles(plans),
        &format!("{:.1} memories each", shown as f64 / n.max(1) as f64),
    );
    row(
        size,
        "agent: planner context, 2 modules",
        percentiles(moduled),
        &format!(
            "{:.1} memories each",
            moduled_shown as f64 / n.max(1) as f64
        ),
    );
}

fn row(size: usize, what: &str, (p50, p95): (f64, f64), extra: &str) {
    println!("{size:>7} {what:<34} {p50:>9.2} {p95:>9.2}  {extra}");
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let mut args = std::env::args().skip(1);
    let sizes: Vec<usize> = args
        .next()
        .unwrap_or_else(|| "1000,10000,100000".into())
        .split(',')
        .filter_map(|s| s.parse().ok())
        .collect();
    let count: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(200);
    let vocab = vocabulary();
    let queries = queries(count, &vocab);
    let server = TestServer::start(ServerConfig::default()).expect("test server");
    println!(
        "{:>7} {:<34} {:>9} {:>9}",
        "size", "configuration", "p50 ms", "p95 ms"
    );
    for &size in &sizes {
        let memories = corpus(size, &vocab);
        let kept = std::env::var_os("BENCH_DIR")
            .map(|d| std::path::PathBuf::from(d).join(size.to_string()));
        let dir = kept.clone().unwrap_or_else(|| {
            std::env::temp_dir().join(format!("engram-search-bench-{}-{size}", std::process::id()))
        });
        std::fs::create_dir_all(&dir).expect("temp dir");
        let _remove_dir = kept.is_none().then(|| RemoveOnDrop(dir.clone()));

        eprintln!("  {size}: keyword + graph, embedded libSQL file");
        let db = LocalDatabase::open(dir.join("kw.db").to_str().unwrap())
            .await
            .expect("db");
        let engram = Engram::open(&db, EngramConfig::default(), Host::native())
            .await
            .unwrap();
        if !already_filled(&db, &EngramConfig::default().project_id, size).await {
            fill(&engram, &memories).await;
        }
        if wanted("native, keyword + graph") {
            let (p, stages) = measure(&engram, &queries).await;
            row(size, "native, keyword + graph", p, &stages);
        }
        let mut resident = Engram::open(&db, EngramConfig::default(), Host::native())
            .await
            .unwrap();
        resident.enable_resident_keywords();
        let started = Instant::now();
        resident
            .load_resident_keywords()
            .await
            .expect("load keywords");
        let load = started.elapsed().as_secs_f64() * 1e3;
        if wanted("native, keyword + graph (resident)") {
            let (p, stages) = measure(&resident, &queries).await;
            row(
                size,
                "native, keyword + graph (resident)",
                p,
                &format!("{stages}; loading took {load:.0} ms"),
            );
        }
        if wanted("agent:") {
            agent_loop_rows(size, &resident, &memories, &queries).await;
        }
        row(
            size,
            "  of which: in-process pick of 80",
            keyword_pick_only(&memories, &queries),
            "",
        );

        if size >= 10_000 && wanted("small project (300), keyword") {
            small_project_keywords(&db, &vocab, &queries, size).await;
        }

        if std::env::var_os("BENCH_KEYWORD_ONLY").is_some() {
            continue;
        }
        eprintln!("  {size}: hybrid, embedded libSQL file");
        let db = LocalDatabase::open(dir.join("hybrid.db").to_str().unwrap())
            .await
            .expect("db");
        let mut engram = Engram::open(&db, EngramConfig::default(), Host::native())
            .await
            .unwrap()
            .with_embedder(Box::new(HashEmbedder));
        if !already_filled(&db, &EngramConfig::default().project_id, size).await {
            fill(&engram, &memories).await;
        }
        if wanted("native, hybrid (exact dense scan)") {
            let (p, stages) = measure(&engram, &queries).await;
            row(size, "native, hybrid (exact dense scan)", p, &stages);
        }
        let mut resident = Engram::open(&db, EngramConfig::default(), Host::native())
            .await
            .unwrap()
            .with_embedder(Box::new(HashEmbedder));
        resident
            .enable_resident_vectors()
            .expect("resident vectors");
        let (load, searches) = load_resident(&resident, &queries[0]).await;
        if wanted("native, hybrid (resident vectors)") {
            let (p, stages) = measure(&resident, &queries).await;
            row(
                size,
                "native, hybrid (resident vectors)",
                p,
                &format!("{stages}; loading took {searches} searches, {load:.0} ms"),
            );
        }
        resident.enable_resident_keywords();
        resident
            .load_resident_keywords()
            .await
            .expect("load keywords");
        if wanted("native, hybrid (resident, both)") {
            let (p, stages) = measure(&resident, &queries).await;
            row(size, "native, hybrid (resident, both)", p, &stages);
            // Beside it, the search cut off: what rating relevance beyond the limit costs.
            let no_cut = engram::Stages {
                cut: false,
                ..engram::Stages::default()
            };
            let (p, stages) = measure_stages(&resident, &queries, no_cut).await;
            row(size, "  the same, search cut off", p, &stages);
        }
        row(
            size,
            "  of which: in-process pick of 60",
            nearest_only(&memories, &queries).await,
            "",
        );
        if size <= 10_000
            && std::env::var_os("BENCH_NO_ANN").is_none()
            && wanted("native, hybrid (libSQL vector index)")
        {
            let file = dir.join("hybrid.db");
            let megabytes = || std::fs::metadata(&file).map_or(0.0, |m| m.len() as f64 / 1e6);
            let before = megabytes();
            let started = Instant::now();
            engram.enable_vector_index().await.expect("vector index");
            let built = started.elapsed().as_secs_f64();
            let (p, stages) = measure(&engram, &queries).await;
            row(
                size,
                "native, hybrid (libSQL vector index)",
                p,
                &format!(
                    "{stages}; index built in {built:.1}s, database {before:.0} → {:.0} MB",
                    megabytes()
                ),
            );
            // Below the threshold the exact scan answers: this is what the index would cost
            // there; above it, the difference is the threshold's test.
            engram
                .enable_vector_index_from(0)
                .await
                .expect("vector index");
            let (p, stages) = measure(&engram, &queries).await;
            row(
                size,
                "native, hybrid (libSQL vector index, always searched)",
                p,
                &stages,
            );
            // A small project in the same database (a tenant beside a large one): the
            // threshold counts its memories, so the exact scan of its own answers.
            if size >= 10_000 {
                let mut small = Engram::open(&db, small_project(), Host::native())
                    .await
                    .unwrap()
                    .with_embedder(Box::new(HashEmbedder));
                if !already_filled(&db, SMALL_PROJECT, SMALL_PROJECT_SIZE).await {
                    fill(&small, &corpus(SMALL_PROJECT_SIZE, &vocab)).await;
                }
                let (p, stages) = measure(&small, &queries).await;
                row(
                    size,
                    "  small project (300) beside them, exact scan",
                    p,
                    &stages,
                );
                for (min_memories, label) in [
                    (
                        VECTOR_INDEX_MIN_MEMORIES,
                        "  small project (300) beside them, vector index",
                    ),
                    (
                        0,
                        "  small project (300) beside them, index always searched",
                    ),
                ] {
                    small
                        .enable_vector_index_from(min_memories)
                        .await
                        .expect("vector index");
                    let (p, stages) = measure(&small, &queries).await;
                    row(size, label, p, &stages);
                }
            }
        }

        const HTTP_EXACT: &str = "HTTP test server, hybrid (exact)";
        const HTTP_INDEX: &str = "HTTP test server, hybrid (libSQL vector index)";
        const HTTP_RESIDENT: &str = "HTTP test server, hybrid (resident, both)";
        let (http_exact, http_resident) = (wanted(HTTP_EXACT), wanted(HTTP_RESIDENT));
        let http_index = wanted(HTTP_INDEX) && std::env::var_os("BENCH_NO_ANN").is_none();
        if size <= 10_000 && (http_exact || http_index || http_resident) {
            eprintln!("  {size}: hybrid over HTTP");
            // With `BENCH_DIR`, a server of its own serves a copy of the filled embedded
            // database: filling over HTTP takes a minute at 10K, and half an hour under
            // callgrind. The copy is fresh each run (searches count accesses).
            let served = kept.as_ref().map(|dir| {
                let copy = dir.join("http.db");
                // A copy an interrupted run left.
                remove_db_files(&copy);
                copy_database(&dir.join("hybrid.db"), &copy);
                // The server removes its database files when dropped.
                TestServer::start(ServerConfig {
                    db_path: Some(copy),
                    ..ServerConfig::default()
                })
                .expect("test server over the copy")
            });
            let url = served
                .as_ref()
                .map_or_else(|| server.url(), TestServer::url);
            let client = HranaClient::new(CountingTransport::default(), &url, None);
            let project = if served.is_some() {
                EngramConfig::default()
            } else {
                EngramConfig {
                    project_id: format!("bench-{size}"),
                }
            };
            let mut engram = Engram::open(&client, project, Host::native())
                .await
                .unwrap()
                .with_embedder(Box::new(HashEmbedder));
            if served.is_none() {
                fill(&engram, &memories).await;
            }
            if http_exact {
                let (p, stages, trips) = measure_over(&client, &engram, &queries).await;
                row(
                    size,
                    HTTP_EXACT,
                    p,
                    &format!("{trips:.2} round trips per search; {stages}"),
                );
            }
            // The small project the vector index rows filled beside them, as one tenant of a
            // shared server (a Worker's case) searches it.
            if http_exact && served.is_some() && project_size(&client, SMALL_PROJECT).await > 0 {
                let small = Engram::open(&client, small_project(), Host::native())
                    .await
                    .unwrap()
                    .with_embedder(Box::new(HashEmbedder));
                let (p, stages, trips) = measure_over(&client, &small, &queries).await;
                row(
                    size,
                    "  small project (300), same server",
                    p,
                    &format!("{trips:.2} round trips per search; {stages}"),
                );
            }
            if http_index {
                // A host that serves one request per instance (a Worker) cannot keep vectors
                // in memory; this is its dense path at scale.
                let started = Instant::now();
                engram.enable_vector_index().await.expect("vector index");
                let ready = started.elapsed().as_secs_f64();
                let (p, stages, trips) = measure_over(&client, &engram, &queries).await;
                row(
                    size,
                    HTTP_INDEX,
                    p,
                    &format!(
                        "{trips:.2} round trips per search; {stages}; enabling took {ready:.1}s"
                    ),
                );
            }
            if http_resident {
                engram.enable_resident_vectors().expect("resident vectors");
                engram.enable_resident_keywords();
                engram
                    .load_resident_keywords()
                    .await
                    .expect("load keywords");
                let (load, searches) = load_resident(&engram, &queries[0]).await;
                let (p, stages, trips) = measure_over(&client, &engram, &queries).await;
                row(
                    size,
                    HTTP_RESIDENT,
                    p,
                    &format!(
                        "{trips:.2} round trips per search; {stages}; loading took {searches} searches, {load:.0} ms"
                    ),
                );
                contexts_over(size, &client, &engram, &queries).await;
            }
        }

        let sample = &queries[..queries.len().min(if size >= 100_000 { 5 } else { 20 })];
        if !wanted("baseline") {
            continue;
        }
        row(
            size,
            "baseline: rebuild FTS5 per query",
            baseline(&memories, sample).await,
            "",
        );
    }
}

/// Copies a database file and its write-ahead log, if any (the embedded connection that
/// wrote it is still open, so recent pages may be only in the log).
fn copy_database(from: &std::path::Path, to: &std::path::Path) {
    std::fs::copy(from, to).expect("copy the database");
    let wal = |p: &std::path::Path| std::path::PathBuf::from(format!("{}-wal", p.display()));
    if wal(from).exists() {
        std::fs::copy(wal(from), wal(to)).expect("copy the database's log");
    }
}

/// Removes a size's temporary directory however its iteration ends (declared before the
/// databases in it, so they close first).
struct RemoveOnDrop(std::path::PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
