//! The database schema as versioned migrations.
//!
//! Every statement is idempotent (`IF NOT EXISTS`, `DROP … IF EXISTS`), and the runner records each applied
//! version in `schema_migrations` inside the same transaction, so opening a database twice,
//! or from two processes at once, is safe. The SQL is plain SQLite/libSQL and identical for
//! every engine engram runs on.

/// One schema version.
#[derive(Debug, Clone, Copy)]
pub struct Migration {
    /// Monotonically increasing version number.
    pub version: u32,
    /// A short name for logs.
    pub name: &'static str,
    /// Statements applied in order, in one transaction.
    pub statements: &'static [&'static str],
}

/// The statement that creates the migration ledger; run before anything else.
pub const CREATE_LEDGER: &str = "CREATE TABLE IF NOT EXISTS schema_migrations (
  version    INTEGER PRIMARY KEY,
  name       TEXT NOT NULL,
  applied_at TEXT NOT NULL
)";

/// Reads the applied versions.
pub const SELECT_APPLIED: &str = "SELECT version FROM schema_migrations ORDER BY version";

/// Records an applied version (`?1` version, `?2` name, `?3` time); a no-op if another
/// process recorded it first.
pub const RECORD_APPLIED: &str =
    "INSERT OR IGNORE INTO schema_migrations (version, name, applied_at) VALUES (?1, ?2, ?3)";

/// Lists what a database holds before anything is written to it: `type`, `name`, `sql`.
pub const SELECT_OBJECTS: &str = "SELECT type, name, coalesce(sql, '') FROM sqlite_master \
WHERE name NOT LIKE 'sqlite_%' ORDER BY name";

/// What a database is, judged from its objects before engram writes anything.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Existing {
    /// Nothing in it yet: a new database.
    Fresh,
    /// engram's: its migration ledger is there.
    Engram,
    /// Something else's (the reason says why); opening must not touch it.
    Foreign(String),
}

/// Judges a database from its objects (`type`, `name`, `sql`, as [`SELECT_OBJECTS`] reads
/// them). A database with tables but not engram's ledger belongs to another application:
/// migrating it would change a file that is not ours.
pub fn classify(objects: &[(String, String, String)]) -> Existing {
    if objects.is_empty() {
        return Existing::Fresh;
    }
    let ledger = objects
        .iter()
        .find(|(kind, name, _)| kind == "table" && name == "schema_migrations");
    match ledger {
        Some((_, _, sql))
            if ["version", "name", "applied_at"]
                .iter()
                .all(|c| sql.contains(c)) =>
        {
            Existing::Engram
        }
        Some(_) => Existing::Foreign(
            "its schema_migrations table is another application's, not engram's".into(),
        ),
        None => {
            let tables: Vec<&str> = objects
                .iter()
                .filter(|(kind, _, _)| kind == "table")
                .map(|(_, name, _)| name.as_str())
                .take(5)
                .collect();
            Existing::Foreign(format!(
                "it has tables ({}) but no engram schema ledger",
                tables.join(", ")
            ))
        }
    }
}

/// The keyword table: each live memory's content, tags and files under the porter stemmer.
pub const CREATE_KEYWORD_TABLE: &str = "CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts USING fts5(
  memory_id UNINDEXED,
  content,
  tags,
  related_files,
  tokenize = 'porter unicode61'
)";

/// The keyword table's vocabulary (terms with their document counts).
pub const CREATE_KEYWORD_VOCABULARY: &str =
    "CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts_vocab USING fts5vocab(memories_fts, 'row')";

/// The latest schema version this build knows.
pub fn latest_version() -> u32 {
    MIGRATIONS.last().map(|m| m.version).unwrap_or(0)
}

/// All migrations, oldest first.
pub const MIGRATIONS: &[Migration] = &[
    Migration {
    version: 1,
    name: "initial",
    statements: &[
        // Core memory tables.
        "CREATE TABLE IF NOT EXISTS memories (
  id                     TEXT PRIMARY KEY,
  project_id             TEXT NOT NULL,
  type                   TEXT NOT NULL,
  content                TEXT NOT NULL,
  confidence             REAL NOT NULL DEFAULT 0.8,
  tags                   TEXT NOT NULL DEFAULT '[]',
  related_files          TEXT NOT NULL DEFAULT '[]',
  related_modules        TEXT NOT NULL DEFAULT '[]',
  created_at             TEXT NOT NULL,
  last_accessed_at       TEXT NOT NULL,
  access_count           INTEGER NOT NULL DEFAULT 0,
  session_id             TEXT,
  commit_sha             TEXT,
  scope                  TEXT NOT NULL DEFAULT 'global',
  visibility             TEXT NOT NULL DEFAULT 'project',
  phase                  TEXT,
  work_unit_ref          TEXT,
  methodology            TEXT,
  source                 TEXT NOT NULL DEFAULT 'agent_explicit',
  target_node_id         TEXT,
  impacted_node_ids      TEXT NOT NULL DEFAULT '[]',
  relations              TEXT NOT NULL DEFAULT '[]',
  decay_half_life_days   REAL,
  provenance_session_ids TEXT NOT NULL DEFAULT '[]',
  needs_review           INTEGER NOT NULL DEFAULT 0,
  user_verified          INTEGER NOT NULL DEFAULT 0,
  pinned                 INTEGER NOT NULL DEFAULT 0,
  contaminated           INTEGER NOT NULL DEFAULT 0,
  secret_scan_skipped    INTEGER NOT NULL DEFAULT 0,
  citation_text          TEXT,
  deprecated             INTEGER NOT NULL DEFAULT 0,
  deprecated_at          TEXT,
  stale_at               TEXT,
  chunk_type             TEXT,
  chunk_start_line       INTEGER,
  chunk_end_line         INTEGER,
  context_prefix         TEXT,
  embedding_model_id     TEXT
)",
        "CREATE TABLE IF NOT EXISTS memory_embeddings (
  memory_id  TEXT PRIMARY KEY REFERENCES memories(id) ON DELETE CASCADE,
  embedding  BLOB NOT NULL,
  model_id   TEXT NOT NULL,
  dims       INTEGER NOT NULL,
  created_at TEXT NOT NULL
)",
        CREATE_KEYWORD_TABLE,
        "CREATE TABLE IF NOT EXISTS embedding_cache (
  key        TEXT PRIMARY KEY,
  embedding  BLOB NOT NULL,
  model_id   TEXT NOT NULL,
  dims       INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
)",
        "CREATE INDEX IF NOT EXISTS idx_embedding_cache_expires ON embedding_cache(expires_at)",
        // Observer tables.
        "CREATE TABLE IF NOT EXISTS observer_file_nodes (
  file_path        TEXT NOT NULL,
  project_id       TEXT NOT NULL,
  access_count     INTEGER NOT NULL DEFAULT 0,
  last_accessed_at TEXT NOT NULL,
  session_count    INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (file_path, project_id)
)",
        "CREATE TABLE IF NOT EXISTS observer_co_access_edges (
  file_a              TEXT NOT NULL,
  file_b              TEXT NOT NULL,
  project_id          TEXT NOT NULL,
  weight              REAL NOT NULL DEFAULT 0.0,
  raw_count           INTEGER NOT NULL DEFAULT 0,
  session_count       INTEGER NOT NULL DEFAULT 0,
  avg_time_delta_ms   REAL,
  directional         INTEGER NOT NULL DEFAULT 0,
  task_type_breakdown TEXT NOT NULL DEFAULT '{}',
  last_observed_at    TEXT NOT NULL,
  promoted_at         TEXT,
  PRIMARY KEY (file_a, file_b, project_id)
)",
        "CREATE TABLE IF NOT EXISTS observer_error_patterns (
  id                TEXT PRIMARY KEY,
  project_id        TEXT NOT NULL,
  tool_name         TEXT NOT NULL,
  error_fingerprint TEXT NOT NULL,
  error_message     TEXT NOT NULL,
  occurrence_count  INTEGER NOT NULL DEFAULT 1,
  last_seen_at      TEXT NOT NULL,
  resolved_how      TEXT,
  sessions          TEXT NOT NULL DEFAULT '[]'
)",
        "CREATE TABLE IF NOT EXISTS observer_module_session_counts (
  module     TEXT NOT NULL,
  project_id TEXT NOT NULL,
  count      INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (module, project_id)
)",
        "CREATE TABLE IF NOT EXISTS observer_synthesis_log (
  module             TEXT NOT NULL,
  project_id         TEXT NOT NULL,
  trigger_count      INTEGER NOT NULL,
  synthesized_at     INTEGER NOT NULL,
  memories_generated INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (module, project_id, trigger_count)
)",
        "CREATE TABLE IF NOT EXISTS observer_scratchpad_checkpoints (
  session_id    TEXT PRIMARY KEY,
  project_id    TEXT NOT NULL,
  state         TEXT NOT NULL,
  step          INTEGER NOT NULL,
  updated_at    TEXT NOT NULL
)",
        // Product bookkeeping.
        "CREATE TABLE IF NOT EXISTS reembed_jobs (
  id            TEXT PRIMARY KEY,
  project_id    TEXT NOT NULL,
  from_model_id TEXT,
  to_model_id   TEXT NOT NULL,
  dims          INTEGER NOT NULL,
  cursor        TEXT,
  done_count    INTEGER NOT NULL DEFAULT 0,
  total_count   INTEGER NOT NULL DEFAULT 0,
  status        TEXT NOT NULL,
  updated_at    TEXT NOT NULL
)",
        "CREATE TABLE IF NOT EXISTS metrics (
  name       TEXT NOT NULL,
  project_id TEXT NOT NULL,
  value      REAL NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (name, project_id)
)",
        // Performance indexes.
        "CREATE INDEX IF NOT EXISTS idx_memories_project_type ON memories(project_id, type)",
        "CREATE INDEX IF NOT EXISTS idx_memories_project_scope ON memories(project_id, scope)",
        "CREATE INDEX IF NOT EXISTS idx_memories_source ON memories(source)",
        "CREATE INDEX IF NOT EXISTS idx_memories_needs_review ON memories(needs_review) WHERE needs_review = 1",
        "CREATE INDEX IF NOT EXISTS idx_memories_type_conf ON memories(project_id, type, confidence DESC)",
        "CREATE INDEX IF NOT EXISTS idx_memories_last_accessed ON memories(last_accessed_at DESC)",
        "CREATE INDEX IF NOT EXISTS idx_memories_not_deprecated ON memories(project_id, deprecated) WHERE deprecated = 0",
        "CREATE INDEX IF NOT EXISTS idx_co_access_weight ON observer_co_access_edges(weight DESC)",
    ],
},
    Migration {
        version: 2,
        name: "code graph",
        statements: CODE_GRAPH,
    },
    Migration {
        version: 3,
        name: "retrieval paths",
        statements: RETRIEVAL_PATHS,
    },
    Migration {
        version: 4,
        name: "observer statistics",
        statements: OBSERVER_STATISTICS,
    },
    Migration {
        version: 5,
        name: "retrieval indexes",
        statements: RETRIEVAL_INDEXES,
    },
    Migration {
        version: 6,
        name: "embedding change log",
        statements: EMBEDDING_CHANGES,
    },
    Migration {
        version: 7,
        name: "file links",
        statements: FILE_LINKS,
    },
    Migration {
        version: 8,
        name: "memory change log",
        statements: MEMORY_CHANGES,
    },
    Migration {
        version: 9,
        name: "projects and their keyword rowid ranges",
        statements: PROJECT_RANGES,
    },
    Migration {
        version: 10,
        name: "the first project keys rowids from 0",
        statements: FIRST_PROJECT_FROM_ZERO,
    },
    Migration {
        version: 11,
        name: "task calibrations and keyword rows by memory",
        statements: PLANNING_AND_KEYWORD_ROWS,
    },
    Migration {
        version: 12,
        name: "memories by module",
        statements: MEMORY_MODULES,
    },
    Migration {
        version: 13,
        name: "write receipts",
        statements: WRITE_RECEIPTS,
    },
    Migration {
        version: 14,
        name: "agent hook sessions",
        statements: HOOK_SESSIONS,
    },
    Migration {
        version: 15,
        name: "memory lifecycle",
        statements: MEMORY_LIFECYCLE,
    },
    Migration {
        version: 16,
        name: "imported instruction files and people's judgements",
        statements: INSTRUCTION_IMPORTS,
    },
    Migration {
        version: 17,
        name: "hook events by agent and tool",
        statements: HOOK_EVENT_COLUMNS,
    },
    Migration {
        version: 18,
        name: "project settings",
        statements: PROJECT_SETTINGS,
    },
];

/// Version 18: a project's settings, a row once a person sets one. `inject_floor` is the
/// least confidence of a memory injected unasked at the row's `trust_level`, written with
/// it, so the statements that pick what to inject compare against a column instead of
/// spelling out each level's threshold.
const PROJECT_SETTINGS: &[&str] = &["CREATE TABLE IF NOT EXISTS project_settings (
  project_id   TEXT PRIMARY KEY,
  trust_level  INTEGER NOT NULL CHECK (trust_level BETWEEN 1 AND 4),
  inject_floor REAL NOT NULL CHECK (inject_floor BETWEEN 0 AND 1),
  updated_at   INTEGER NOT NULL
)"];

/// Version 17: which agent of a session made each logged tool call (a subagent's calls
/// are replayed on a scratchpad of their own and merged), the tool's name, the call's id
/// (a call is logged once, whether a hook or a subagent's transcript brings it), and the
/// memory a call of the record tool stored (said back to the agent later in the session,
/// found without decoding the log).
const HOOK_EVENT_COLUMNS: &[&str] = &[
    "ALTER TABLE hook_events ADD COLUMN agent_id TEXT",
    "ALTER TABLE hook_events ADD COLUMN tool TEXT",
    "ALTER TABLE hook_events ADD COLUMN call_id TEXT",
    "ALTER TABLE hook_events ADD COLUMN recorded_id TEXT",
    "CREATE INDEX IF NOT EXISTS idx_hook_events_call ON hook_events(project_id, session_id, call_id) \
WHERE call_id IS NOT NULL",
    "CREATE INDEX IF NOT EXISTS idx_hook_events_recorded ON hook_events(project_id, session_id, id) \
WHERE recorded_id IS NOT NULL",
];

/// Version 16: memories imported from the instruction files people keep (CLAUDE.md,
/// AGENTS.md, Cursor rules…). `memory_origins` says which file and line each rule came
/// from; a memory said by two files has two origins, and is retired only when no file
/// says it any more. `imported_files` keeps each file's hash, so importing an unchanged
/// file reads one row and writes nothing. `observer_signal_flags` counts, per observer
/// signal, the memories it inferred that a person flagged wrong: the signal's false
/// positives.
const INSTRUCTION_IMPORTS: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS observer_signal_flags (
  project_id TEXT NOT NULL,
  signal     TEXT NOT NULL,
  flagged    INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (project_id, signal)
) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS memory_origins (
  project_id TEXT NOT NULL,
  file       TEXT NOT NULL,
  rule_key   TEXT NOT NULL,
  memory_id  TEXT NOT NULL,
  line       INTEGER NOT NULL,
  end_line   INTEGER NOT NULL,
  section    TEXT NOT NULL DEFAULT '',
  rule_text  TEXT NOT NULL,
  PRIMARY KEY (project_id, file, rule_key)
)",
    "CREATE INDEX IF NOT EXISTS idx_memory_origins_memory ON memory_origins(memory_id)",
    "CREATE TABLE IF NOT EXISTS imported_files (
  project_id  TEXT NOT NULL,
  file        TEXT NOT NULL,
  format      TEXT NOT NULL,
  sha256      TEXT NOT NULL,
  rules       INTEGER NOT NULL,
  imported_at TEXT NOT NULL,
  PRIMARY KEY (project_id, file)
)",
];

/// Version 15: the memory lifecycle. Each memory counts how often it was said
/// (`occurrences`), names the memory that replaced it (`superseded_by`), says why it is
/// stale (`stale_reason`), keeps the key of its normalized text (`content_key`, so a write
/// finds an identical live memory by index, and two parallel writers of one text cannot
/// both insert it) and counts the uses nobody corrected since they were last folded in.
/// `memory_history` holds every change to a memory, appended in the change's transaction;
/// it outlives the memory. `ALTER TABLE` is not idempotent: an opener that loses the race
/// to apply this version finds it applied and goes on (see `migrate`).
const MEMORY_LIFECYCLE: &[&str] = &[
    "ALTER TABLE memories ADD COLUMN occurrences INTEGER NOT NULL DEFAULT 1",
    "ALTER TABLE memories ADD COLUMN superseded_by TEXT",
    "ALTER TABLE memories ADD COLUMN stale_reason TEXT",
    "ALTER TABLE memories ADD COLUMN content_key TEXT",
    "ALTER TABLE memories ADD COLUMN updated_at TEXT",
    "ALTER TABLE memories ADD COLUMN uncorrected_uses INTEGER NOT NULL DEFAULT 0",
    "CREATE UNIQUE INDEX IF NOT EXISTS idx_memories_content_key \
ON memories(project_id, type, content_key) WHERE deprecated = 0 AND content_key IS NOT NULL",
    "CREATE INDEX IF NOT EXISTS idx_memories_superseded_by ON memories(superseded_by) \
WHERE superseded_by IS NOT NULL",
    "CREATE TABLE IF NOT EXISTS memory_history (
  id         INTEGER PRIMARY KEY,
  memory_id  TEXT NOT NULL,
  project_id TEXT NOT NULL,
  action     TEXT NOT NULL,
  before     TEXT,
  after      TEXT,
  reason     TEXT NOT NULL,
  actor      TEXT NOT NULL,
  related_id TEXT,
  at         TEXT NOT NULL
)",
    "CREATE INDEX IF NOT EXISTS idx_memory_history_memory ON memory_history(memory_id, id)",
];

/// Version 14: what the agent's hooks saw, per session. Each hook is a process of its own
/// and several run at once, so a session's events are appended (one insert each, never a
/// read-modify-write that a parallel hook could overwrite) and the observer replays them;
/// the memories injected into a session are kept so none is injected twice; and a
/// finalized session keeps its contribution to the statistics.
const HOOK_SESSIONS: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS hook_events (
  id         INTEGER PRIMARY KEY,
  project_id TEXT NOT NULL,
  session_id TEXT NOT NULL,
  events     TEXT NOT NULL,
  created_at INTEGER NOT NULL
)",
    "CREATE INDEX IF NOT EXISTS idx_hook_events_session ON hook_events(project_id, session_id, id)",
    // What each session added to the statistics, so that finalizing it again (a session
    // resumed, a turn ended) adds only what is new. A table of its own, not a column:
    // migrations must be safe to run twice (two processes opening one new database).
    "CREATE TABLE IF NOT EXISTS observer_session_contributions (
  project_id   TEXT NOT NULL,
  session_id   TEXT NOT NULL,
  contribution TEXT NOT NULL,
  PRIMARY KEY (project_id, session_id)
) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS session_shown (
  project_id TEXT NOT NULL,
  session_id TEXT NOT NULL,
  memory_id  TEXT NOT NULL,
  shown_at   INTEGER NOT NULL,
  PRIMARY KEY (project_id, session_id, memory_id)
) WITHOUT ROWID",
];

/// Version 13: a receipt per write, in the write's own transaction, so a write retried
/// after an answer that never arrived is recognised as applied instead of applied twice.
/// `memory_ids` are the ids the write stored, the answer a replay gives.
const WRITE_RECEIPTS: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS write_receipts (
  project_id TEXT NOT NULL,
  key        TEXT NOT NULL,
  memory_ids TEXT NOT NULL DEFAULT '[]',
  created_at INTEGER NOT NULL,
  PRIMARY KEY (project_id, key)
) WITHOUT ROWID",
    "CREATE INDEX IF NOT EXISTS idx_write_receipts_age ON write_receipts(project_id, created_at)",
];

/// Version 12: each memory under each of its modules, as `memory_files` holds it under each
/// of its files, so a search filtered by module starts from the module's memories instead
/// of scoring every keyword match and vector of the project and keeping the module's (a
/// session start's module search and three of a planner's four sections filter by
/// module). Memories written before this version are mapped once.
const MEMORY_MODULES: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS memory_modules (
  project_id TEXT NOT NULL,
  module     TEXT NOT NULL,
  memory_id  TEXT NOT NULL,
  PRIMARY KEY (project_id, module, memory_id)
) WITHOUT ROWID",
    "INSERT OR IGNORE INTO memory_modules (project_id, module, memory_id) \
SELECT m.project_id, d.value, m.id FROM memories m, json_each(m.related_modules) d \
WHERE m.deprecated = 0",
];

/// Version 11: how many steps work in each module took against its plans,
/// one row per project, module and methodology with the running totals a step limit and a
/// planner read, and the `task_calibration` memory that says them in words; and each
/// memory's keyword row, so forgetting a memory deletes its row by rowid. FTS5 cannot index
/// its `memory_id` column, so deleting by it read every keyword row of the database (6.7
/// ms a forget at 10K memories, growing with the table). The rows written before this
/// version are mapped from the keyword table once (`OR REPLACE`: a database rolled back and
/// migrated again maps its rows as they are now).
const PLANNING_AND_KEYWORD_ROWS: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS task_calibrations (
  project_id    TEXT NOT NULL,
  module        TEXT NOT NULL,
  methodology   TEXT NOT NULL,
  samples       INTEGER NOT NULL,
  planned_steps INTEGER NOT NULL,
  actual_steps  INTEGER NOT NULL,
  memory_id     TEXT,
  updated_at    TEXT NOT NULL,
  PRIMARY KEY (project_id, module, methodology)
) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS memory_keyword_rows (
  memory_id     TEXT PRIMARY KEY,
  keyword_rowid INTEGER NOT NULL
) WITHOUT ROWID",
    "INSERT OR REPLACE INTO memory_keyword_rows (memory_id, keyword_rowid) \
SELECT memory_id, rowid FROM memories_fts",
];

/// How many keyword-table rowids each project owns: project `key` holds the rowids from
/// `key × PROJECT_ROWIDS` up to, not including, `(key + 1) × PROJECT_ROWIDS` (2⁴⁰, so 8
/// million projects of a trillion memories fit in a rowid). The SQL spells it out as
/// 1099511627776; a test checks every statement that does.
pub const PROJECT_ROWIDS: i64 = 1 << 40;

/// SQL that keeps `rowid` (a keyword-table rowid expression) inside the range of the
/// project named by `project` (an SQL expression, such as a parameter): bounds FTS5 applies
/// while it walks its term lists.
pub fn in_project_rowids(rowid: &str, project: &str) -> String {
    format!(
        "{rowid} >= (SELECT key * {PROJECT_ROWIDS} FROM projects WHERE project_id = {project}) \
AND {rowid} < (SELECT (key + 1) * {PROJECT_ROWIDS} FROM projects WHERE project_id = {project})"
    )
}

/// Version 9: every project has a row in `projects`, and its keyword rows a rowid range.
///
/// - `projects` gives each project an integer `key`, its count of live memories (`live`) and
///   of memories ever added (`added`), kept by triggers, so by every writer. The vector
///   index's threshold reads `live` with one seek, where counting the project's rows read an
///   index entry per memory.
/// - FTS5 is one index over every project: a project of 300 memories beside one of 10,000
///   ranked every match of both (21 ms for a four-word query) and filtered afterwards. A
///   keyword row's rowid is now `key × 2⁴⁰ + n`, `n` the project's `added` when it was
///   written, and a search passes its project's range as rowid bounds, which FTS5 applies
///   while it walks the term lists: it ranks the project's matches alone. BM25's statistics
///   stay the whole table's, so every score is what it was. The rows keep their text; only
///   rowids move (an FTS5 `UPDATE` of the rowid), and only rows below 2⁴⁰ of projects keyed
///   from 1, so running the statement again changes nothing (a project keyed 0 by version
///   10 has its rows below 2⁴⁰ already). A row whose memory is gone keeps a rowid below
///   every range that version 9 gives (version 10 deletes such rows). engram never moves a
///   memory to another project; one moved by hand keeps its keyword row in the old
///   project's range, where neither project's keyword search reads it (the counts follow
///   the move).
///
/// A second process that read the ledger before the first recorded this version runs
/// these statements again after it; each is a no-op then.
const PROJECT_RANGES: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS projects (
  key        INTEGER PRIMARY KEY,
  project_id TEXT NOT NULL UNIQUE,
  live       INTEGER NOT NULL DEFAULT 0,
  added      INTEGER NOT NULL DEFAULT 0
)",
    "CREATE TRIGGER IF NOT EXISTS projects_insert AFTER INSERT ON memories BEGIN \
INSERT INTO projects (project_id, live, added) VALUES (new.project_id, new.deprecated = 0, 1) \
ON CONFLICT (project_id) DO UPDATE SET live = live + (new.deprecated = 0), added = added + 1; END",
    "CREATE TRIGGER IF NOT EXISTS projects_update AFTER UPDATE OF project_id, deprecated \
ON memories WHEN old.project_id IS NOT new.project_id OR old.deprecated IS NOT new.deprecated BEGIN \
UPDATE projects SET live = live - 1 WHERE old.deprecated = 0 AND project_id = old.project_id; \
INSERT INTO projects (project_id, live) SELECT new.project_id, 1 WHERE new.deprecated = 0 \
ON CONFLICT (project_id) DO UPDATE SET live = live + 1; END",
    "CREATE TRIGGER IF NOT EXISTS projects_delete AFTER DELETE ON memories \
WHEN old.deprecated = 0 BEGIN \
UPDATE projects SET live = live - 1 WHERE project_id = old.project_id; END",
    // `added` starts at the largest rowid among the project's memories: each keyword row
    // moves to its memory's rowid in the range, and later rows count on from there.
    "INSERT OR IGNORE INTO projects (project_id, live, added) \
SELECT project_id, sum(deprecated = 0), max(rowid) FROM memories GROUP BY project_id ORDER BY min(rowid)",
    // Rows of a project keyed 0 (version 10) are in place below 2⁴⁰ already.
    "UPDATE memories_fts SET rowid = (SELECT p.key * 1099511627776 + m.rowid FROM memories m \
JOIN projects p ON p.project_id = m.project_id WHERE m.id = memories_fts.memory_id) \
WHERE rowid < 1099511627776 AND memory_id IN (SELECT m.id FROM memories m \
JOIN projects p ON p.project_id = m.project_id WHERE p.key > 0)",
];

/// Version 10: the first project takes key 0, so its keyword rowids are its own count of
/// memories, as before version 9.
///
/// BM25 reads each match's length from FTS5's docsize table by rowid, and a rowid of
/// `key × 2⁴⁰ + n` is a six-byte varint in that table's B-tree where one under 2¹⁴ takes
/// two: at 10,000 memories in one project, a keyword + graph search cost 9% more
/// instructions with key 1 than before version 9. A database usually holds one project,
/// which now keys from 0; a project added later takes the next key.
///
/// - `projects_insert` gives a new project `max(key) + 1`, or 0 in an empty table
///   (SQLite's own choice for an `INTEGER PRIMARY KEY` would be 1).
/// - A database that version 9 keyed from 1 moves project 1's keyword rows down by 2⁴⁰ and
///   renumbers it 0, unless some project already holds 0; keyword rows below 2⁴⁰ then
///   belong to no memory (version 9 moved every row whose memory exists) and are deleted
///   first, so none can collide with a moved row. Each statement does nothing once a
///   project holds key 0, so running them again changes nothing.
const FIRST_PROJECT_FROM_ZERO: &[&str] = &[
    "DROP TRIGGER IF EXISTS projects_insert",
    "CREATE TRIGGER IF NOT EXISTS projects_insert AFTER INSERT ON memories BEGIN \
INSERT INTO projects (key, project_id, live, added) \
VALUES ((SELECT coalesce(max(key) + 1, 0) FROM projects), new.project_id, new.deprecated = 0, 1) \
ON CONFLICT (project_id) DO UPDATE SET live = live + (new.deprecated = 0), added = added + 1; END",
    "DELETE FROM memories_fts WHERE rowid < 1099511627776 \
AND NOT EXISTS (SELECT 1 FROM projects WHERE key = 0)",
    "UPDATE memories_fts SET rowid = rowid - 1099511627776 \
WHERE rowid >= 1099511627776 AND rowid < 2199023255552 \
AND NOT EXISTS (SELECT 1 FROM projects WHERE key = 0)",
    "UPDATE projects SET key = 0 WHERE key = 1 AND NOT EXISTS (SELECT 1 FROM projects WHERE key = 0)",
];

/// A trigger body that moves memory `$id` to the end of the change log `$log` (a table of
/// `memory_id` and `seq`).
macro_rules! log_change {
    ($log:literal, $id:literal) => {
        concat!(
            "BEGIN INSERT OR REPLACE INTO ",
            $log,
            " (memory_id, seq) VALUES (",
            $id,
            ", (SELECT coalesce(max(seq), 0) + 1 FROM ",
            $log,
            ")); END"
        )
    };
}

/// Version 8: a change log of memories, so an instance that keeps the keyword index's
/// postings in memory learns, in the same statement as a search, what any writer added,
/// forgot or restored since it last looked (the keyword table holds exactly the live
/// memories). One row per memory, holding the position of its latest change; triggers keep
/// it, so every writer does.
const MEMORY_CHANGES: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS memory_changes (
  memory_id TEXT PRIMARY KEY,
  seq       INTEGER NOT NULL
)",
    "CREATE INDEX IF NOT EXISTS idx_memory_changes_seq ON memory_changes(seq)",
    "INSERT OR IGNORE INTO memory_changes (memory_id, seq) \
SELECT id, ROW_NUMBER() OVER (ORDER BY rowid) FROM memories",
    concat!(
        "CREATE TRIGGER IF NOT EXISTS memory_changes_insert AFTER INSERT ON memories ",
        log_change!("memory_changes", "new.id")
    ),
    concat!(
        "CREATE TRIGGER IF NOT EXISTS memory_changes_update AFTER UPDATE OF content, tags, ",
        "related_files, deprecated ON memories ",
        log_change!("memory_changes", "new.id")
    ),
    concat!(
        "CREATE TRIGGER IF NOT EXISTS memory_changes_delete AFTER DELETE ON memories ",
        log_change!("memory_changes", "old.id")
    ),
];

/// Version 7: which files the code graph links, one row per pair of distinct files with an
/// edge from a node of the first to a node of the second, stale while either file is (see
/// `Engram::mark_stale`). Retrieval's neighbourhood boost asks which of a search's candidate
/// files neighbour each other; through the edges that meant visiting every node of every
/// candidate file, and a repository has a fraction as many file pairs as edges. The indexer
/// writes the pairs in the transaction that writes the edges; this backfills them. A
/// partial index finds the files whose nodes are stale, which every re-index asks.
const FILE_LINKS: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS graph_file_links (
  project_id TEXT NOT NULL,
  file_a     TEXT NOT NULL,
  file_b     TEXT NOT NULL,
  stale_at   INTEGER,
  PRIMARY KEY (project_id, file_a, file_b)
) WITHOUT ROWID",
    "INSERT OR IGNORE INTO graph_file_links (project_id, file_a, file_b, stale_at) \
SELECT e.project_id, a.file_path, b.file_path, \
CASE WHEN max(e.stale_at IS NULL AND a.stale_at IS NULL AND b.stale_at IS NULL) THEN NULL \
ELSE max(max(coalesce(e.stale_at, 0), coalesce(a.stale_at, 0), coalesce(b.stale_at, 0))) END \
FROM graph_edges e \
JOIN graph_nodes a ON a.project_id = e.project_id AND a.id = e.from_id \
JOIN graph_nodes b ON b.project_id = e.project_id AND b.id = e.to_id \
WHERE a.file_path <> b.file_path GROUP BY e.project_id, a.file_path, b.file_path",
    "CREATE INDEX IF NOT EXISTS idx_gn_stale ON graph_nodes(project_id, file_path) \
WHERE stale_at IS NOT NULL",
];

/// Version 6: a change log of stored vectors, so an instance that keeps vectors in memory
/// learns, in the same statement as a search, what any writer changed since it last looked.
/// One row per memory whose vector was ever written or whose memory was forgotten or
/// restored, holding the position of its latest change; triggers keep it, so every writer
/// (other processes and older builds too) does.
const EMBEDDING_CHANGES: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS embedding_changes (
  memory_id TEXT PRIMARY KEY,
  seq       INTEGER NOT NULL
)",
    "CREATE INDEX IF NOT EXISTS idx_embedding_changes_seq ON embedding_changes(seq)",
    "INSERT OR IGNORE INTO embedding_changes (memory_id, seq) \
SELECT memory_id, ROW_NUMBER() OVER (ORDER BY rowid) FROM memory_embeddings",
    concat!(
        "CREATE TRIGGER IF NOT EXISTS embedding_changes_insert AFTER INSERT ON memory_embeddings ",
        log_change!("embedding_changes", "new.memory_id")
    ),
    concat!(
        "CREATE TRIGGER IF NOT EXISTS embedding_changes_update AFTER UPDATE ON memory_embeddings ",
        log_change!("embedding_changes", "new.memory_id")
    ),
    concat!(
        "CREATE TRIGGER IF NOT EXISTS embedding_changes_delete AFTER DELETE ON memory_embeddings ",
        log_change!("embedding_changes", "old.memory_id")
    ),
    concat!(
        "CREATE TRIGGER IF NOT EXISTS embedding_changes_deprecated AFTER UPDATE OF deprecated ",
        "ON memories WHEN old.deprecated IS NOT new.deprecated ",
        log_change!("embedding_changes", "new.id")
    ),
];

/// Version 4: what the observer's frequency filter counts across sessions. One row per
/// observation key (`co:a|b`, `err:pytest|…`, `file:src/x.py`) with the sessions and
/// occurrences seen so far, and one row per finalized session so replaying a session twice
/// counts it once.
const OBSERVER_STATISTICS: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS observer_signal_counts (
  project_id      TEXT NOT NULL,
  key             TEXT NOT NULL,
  sessions        INTEGER NOT NULL DEFAULT 0,
  occurrences     INTEGER NOT NULL DEFAULT 0,
  last_session_id TEXT NOT NULL,
  updated_at      TEXT NOT NULL,
  PRIMARY KEY (project_id, key)
) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS observer_sessions (
  project_id   TEXT NOT NULL,
  session_id   TEXT NOT NULL,
  outcome      TEXT NOT NULL,
  steps        INTEGER NOT NULL,
  events       INTEGER NOT NULL,
  promoted     INTEGER NOT NULL,
  finalized_at TEXT NOT NULL,
  PRIMARY KEY (project_id, session_id)
) WITHOUT ROWID",
];

/// The short name of a graph node: its label after the last `.` (`Fixture.clear` → `clear`).
/// SQL text shared by the index below and the queries that must match it exactly to use it.
pub const NODE_SHORT_NAME: &str = "replace(label, rtrim(label, replace(label, '.', '')), '')";

/// Version 5: the candidate statement finds co-access partners from either end, and names
/// its indexes (`INDEXED BY`) so the plan never depends on the planner's guesses about
/// tables without statistics; the keyword index's vocabulary (document frequency per
/// stemmed term) lets a search leave out terms too common to rank anything.
const RETRIEVAL_INDEXES: &[&str] = &[
    "CREATE INDEX IF NOT EXISTS idx_co_access_b ON observer_co_access_edges(file_b, project_id)",
    CREATE_KEYWORD_VOCABULARY,
];

/// Version 3: what the graph path of retrieval looks up. `memory_files` lists each memory's
/// related files (kept by `remember`, backfilled here) so memories near a file are found by
/// index rather than by scanning JSON; an expression index finds nodes by short name.
const RETRIEVAL_PATHS: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS memory_files (
  project_id TEXT NOT NULL,
  path       TEXT NOT NULL,
  memory_id  TEXT NOT NULL,
  PRIMARY KEY (project_id, path, memory_id)
) WITHOUT ROWID",
    "INSERT OR IGNORE INTO memory_files (project_id, path, memory_id) \
SELECT m.project_id, f.value, m.id FROM memories m, json_each(m.related_files) f \
WHERE m.deprecated = 0",
    "CREATE INDEX IF NOT EXISTS idx_gn_short_name ON graph_nodes(project_id, \
replace(label, rtrim(label, replace(label, '.', '')), ''))",
];

/// Version 2: the knowledge-graph tables keyed by project (node ids are paths, which repeat
/// across projects), the closure table, and the per-file index state that makes re-indexing
/// incremental. Keyed tables are `WITHOUT ROWID` (one b-tree instead of two per insert); a
/// closure row stores only the nodes between its ends (`via`), most rows being one hop. Version 1 databases had project-less graph tables that nothing ever wrote;
/// they are dropped first. (The drops run once per database, recorded in the ledger.)
const CODE_GRAPH: &[&str] = &[
    "DROP TABLE IF EXISTS graph_closure",
    "DROP TABLE IF EXISTS graph_edges",
    "DROP TABLE IF EXISTS graph_nodes",
    "DROP TABLE IF EXISTS graph_index_state",
    "CREATE TABLE IF NOT EXISTS graph_nodes (
  project_id   TEXT NOT NULL,
  id           TEXT NOT NULL,
  type         TEXT NOT NULL,
  label        TEXT NOT NULL,
  file_path    TEXT,
  language     TEXT,
  start_line   INTEGER,
  end_line     INTEGER,
  layer        INTEGER NOT NULL DEFAULT 1,
  source       TEXT NOT NULL,
  confidence   TEXT NOT NULL DEFAULT 'inferred',
  hash         TEXT,
  metadata     TEXT NOT NULL DEFAULT '{}',
  created_at   INTEGER NOT NULL,
  updated_at   INTEGER NOT NULL,
  stale_at     INTEGER,
  PRIMARY KEY (project_id, id)
) WITHOUT ROWID",
    "CREATE INDEX IF NOT EXISTS idx_gn_file ON graph_nodes(project_id, file_path)",
    "CREATE INDEX IF NOT EXISTS idx_gn_label ON graph_nodes(project_id, label)",
    "CREATE TABLE IF NOT EXISTS graph_edges (
  project_id TEXT NOT NULL,
  from_id    TEXT NOT NULL,
  type       TEXT NOT NULL,
  to_id      TEXT NOT NULL,
  layer      INTEGER NOT NULL DEFAULT 1,
  weight     REAL NOT NULL DEFAULT 1.0,
  source     TEXT NOT NULL,
  metadata   TEXT NOT NULL DEFAULT '{}',
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  stale_at   INTEGER,
  PRIMARY KEY (project_id, from_id, type, to_id)
) WITHOUT ROWID",
    "CREATE INDEX IF NOT EXISTS idx_ge_to ON graph_edges(project_id, to_id, type)",
    "CREATE TABLE IF NOT EXISTS graph_closure (
  project_id    TEXT NOT NULL,
  ancestor_id   TEXT NOT NULL,
  descendant_id TEXT NOT NULL,
  depth         INTEGER NOT NULL,
  via           TEXT NOT NULL,
  edge_types    TEXT NOT NULL,
  total_weight  REAL NOT NULL,
  PRIMARY KEY (project_id, ancestor_id, descendant_id)
) WITHOUT ROWID",
    "CREATE INDEX IF NOT EXISTS idx_gc_descendant ON graph_closure(project_id, descendant_id, depth)",
    "CREATE TABLE IF NOT EXISTS graph_index_state (
  project_id      TEXT PRIMARY KEY,
  generation      INTEGER NOT NULL DEFAULT 0,
  last_indexed_at INTEGER NOT NULL,
  last_commit_sha TEXT,
  file_count      INTEGER NOT NULL DEFAULT 0,
  node_count      INTEGER NOT NULL DEFAULT 0,
  edge_count      INTEGER NOT NULL DEFAULT 0,
  closure_count   INTEGER NOT NULL DEFAULT 0,
  closure_depth   INTEGER NOT NULL,
  index_version   INTEGER NOT NULL DEFAULT 1
)",
    "CREATE TABLE IF NOT EXISTS code_files (
  project_id TEXT NOT NULL,
  path       TEXT NOT NULL,
  language   TEXT NOT NULL,
  hash       TEXT NOT NULL,
  lines      INTEGER NOT NULL,
  bytes      INTEGER NOT NULL,
  outline    TEXT NOT NULL,
  indexed_at INTEGER NOT NULL,
  PRIMARY KEY (project_id, path)
)",
    "CREATE INDEX IF NOT EXISTS idx_memories_target_node ON memories(project_id, target_node_id) WHERE target_node_id IS NOT NULL",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_short_name_index_uses_the_shared_expression() {
        assert!(RETRIEVAL_PATHS[2]
            .replace('\n', "")
            .contains(NODE_SHORT_NAME));
    }

    #[test]
    fn the_rowid_range_is_spelled_as_the_constant() {
        let spelled = PROJECT_ROWIDS.to_string();
        assert_eq!(spelled, "1099511627776");
        let moves = PROJECT_RANGES
            .iter()
            .find(|sql| sql.starts_with("UPDATE memories_fts SET rowid"))
            .expect("the move");
        assert_eq!(moves.matches(spelled.as_str()).count(), 2);
        let below_project_2 = (2 * PROJECT_ROWIDS).to_string();
        let down = FIRST_PROJECT_FROM_ZERO
            .iter()
            .find(|sql| sql.starts_with("UPDATE memories_fts SET rowid"))
            .expect("the move down");
        assert!(down.contains(&format!("rowid - {spelled}")));
        assert!(down.contains(&format!("rowid < {below_project_2}")));
    }

    #[test]
    fn versions_increase_and_statements_are_idempotent() {
        let mut last = 0;
        for m in MIGRATIONS {
            assert!(m.version > last, "migration {} out of order", m.version);
            last = m.version;
            for sql in m.statements {
                assert!(
                    sql.contains("IF NOT EXISTS")
                        || sql.starts_with("DROP TABLE IF EXISTS")
                        || sql.starts_with("INSERT OR IGNORE")
                        || sql.starts_with("INSERT OR REPLACE")
                        // Replaced by the statement after it.
                        || sql.starts_with("DROP TRIGGER IF EXISTS")
                        // Moves only the rows it has not moved yet.
                        || (sql.starts_with("UPDATE memories_fts SET rowid")
                            && sql.contains("WHERE rowid < 1099511627776"))
                        // Only until a project holds key 0, which the last one gives.
                        || sql.ends_with("NOT EXISTS (SELECT 1 FROM projects WHERE key = 0)")
                        // Fails once applied; the runner then finds the version in the
                        // ledger and goes on.
                        || (sql.starts_with("ALTER TABLE ") && sql.contains(" ADD COLUMN ")),
                    "not idempotent: {sql}"
                );
            }
        }
        assert_eq!(latest_version(), last);
    }
}
