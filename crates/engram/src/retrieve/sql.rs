//! The one statement that fetches every candidate path and the file adjacency the boost
//! needs. Parameters are always bound; the SQL text varies only by which paths run and by
//! the vector index table name (a hash, never user text).

use engram_core::schema::NODE_SHORT_NAME;

use crate::sql::MEMORY_COLUMNS;
use crate::vector_index::VectorIndex;

/// Keyword candidates.
pub(crate) const KEYWORD_CANDIDATES: u32 = 20;
/// Dense candidates (dense top 30).
pub(crate) const DENSE_CANDIDATES: u32 = 30;
/// Graph candidates (graph top 15).
pub(crate) const GRAPH_CANDIDATES: u32 = 15;

/// The keyword path's score, higher is better: BM25 with the content counted once, tags
/// three times and file paths twice (the memory id column is not searched).
const BM25: &str = "-bm25(memories_fts, 0.0, 1.0, 3.0, 2.0)";

/// Parameter numbers of the statement.
///
/// Limits are written `LIMIT ?n + 0`: recent SQLite reads a bare `LIMIT ?n` at prepare
/// time and then expires the prepared statement whenever that parameter is bound again,
/// which made every search recompile its (large) statement.
pub(crate) mod param {
    pub const PROJECT: usize = 1;
    pub const MATCH: usize = 2;
    pub const VECTOR: usize = 3;
    pub const MODEL: usize = 4;
    pub const DIMS: usize = 5;
    pub const TYPES: usize = 6;
    /// JSON object of the code names the graph path looks up, each with its weight.
    pub const IDENTIFIERS: usize = 7;
    pub const RECENT_FILES: usize = 8;
    pub const FILES: usize = 9;
    pub const MODULES: usize = 10;
    pub const MIN_CONFIDENCE: usize = 11;
    pub const SCOPES: usize = 12;
    pub const EXCLUDE: usize = 13;
    pub const KEYWORD_LIMIT: usize = 14;
    pub const DENSE_LIMIT: usize = 15;
    pub const GRAPH_LIMIT: usize = 16;
    pub const ANN_CANDIDATES: usize = 17;
    pub const TERMS: usize = 18;
    /// JSON array of the memory ids the resident vectors rank best.
    pub const DENSE_IDS: usize = 19;
    /// The change-log position the resident vectors reflect.
    pub const KNOWN_SEQ: usize = 20;
    /// Most vector changes one statement returns.
    pub const CHANGE_LIMIT: usize = 21;
    /// The lowest similarity the resident vectors picked (below every similarity when the
    /// pick holds the whole set); NULL when no ids are passed.
    pub const DENSE_FLOOR: usize = 22;
    /// JSON array of `[memory id, score]` the resident keywords rank best; NULL when FTS5
    /// answers.
    pub const KEYWORD_PICK: usize = 23;
    /// The change-log position the resident keywords reflect.
    pub const KEYWORD_SEQ: usize = 24;
    /// JSON array of the path suffixes of the files the query names.
    pub const NAMED_FILES: usize = 25;
    /// How many parameters the statement binds.
    pub const COUNT: usize = 25;
}

/// How the dense path finds neighbours.
pub(crate) enum DenseSource<'a> {
    /// No dense path.
    Off,
    /// Exact cosine over every vector of the model.
    Exact,
    /// libSQL's DiskANN index (then re-scored exactly).
    Index(&'a VectorIndex),
    /// The ids the instance's resident vectors rank best (`?DENSE_IDS`), re-scored and
    /// filtered here, with the exact scan as the fallback; the statement also returns the
    /// vector changes after `?KNOWN_SEQ`.
    Resident,
}

/// What the graph path has to look up; it runs when any is true.
#[derive(Clone, Copy, Default)]
pub(crate) struct GraphInputs {
    /// The query holds code names (`?IDENTIFIERS`).
    pub names: bool,
    /// The context lists recent files (`?RECENT_FILES`).
    pub recent: bool,
    /// The query names files (`?NAMED_FILES`).
    pub named: bool,
}

impl GraphInputs {
    /// Whether the graph path runs.
    pub(crate) fn any(&self) -> bool {
        self.names || self.recent || self.named
    }
}

/// Which paths the statement runs.
pub(crate) struct Paths<'a> {
    pub keyword: bool,
    /// The keyword path takes the resident keywords' pick (`?KEYWORD_PICK`) when they are
    /// current, and the statement returns the memory changes after `?KEYWORD_SEQ`.
    pub resident_keywords: bool,
    pub dense: DenseSource<'a>,
    pub graph: GraphInputs,
    pub adjacency: bool,
    /// The query filters by type, file, module or scope, or excludes ids.
    pub filters: bool,
    /// The filters whose memories the exact forms may start from instead.
    pub narrow: Narrow,
    /// Memories are injected unasked: each must clear the project's injection floor (its
    /// trust level's threshold) besides `?MIN_CONFIDENCE`.
    pub injection_floor: bool,
}

/// The filters the exact forms can start from, each through an index of its memories:
/// files (each memory under each of its files in `memory_files`), modules
/// (`memory_modules`) and types (the (project, type, confidence) index). With several, the
/// statement starts from the one that lists fewest memories (counted through its index, up
/// to [`NARROW_SCAN_MAX`] + 1 each): a module's memories are fewer than a common type's,
/// a rare type's fewer than a module's. The query's other filters apply to those memories
/// as to any.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Narrow {
    /// `?FILES` is set.
    pub files: bool,
    /// `?MODULES` is set.
    pub modules: bool,
    /// `?TYPES` is set.
    pub types: bool,
}

impl Narrow {
    /// Whether any filter can narrow the exact forms.
    pub(crate) fn any(&self) -> bool {
        self.files || self.modules || self.types
    }

    /// The lists the set filters read, files first (the first of equally short lists is
    /// read).
    fn lists(&self) -> Vec<List> {
        [
            (self.files, List::Files),
            (self.modules, List::Modules),
            (self.types, List::Types),
        ]
        .into_iter()
        .filter_map(|(set, list)| set.then_some(list))
        .collect()
    }
}

/// Most memories the narrowing filters ([`Narrow`]) may select for the exact forms to start
/// from those memories instead of from every keyword match or every vector of the project:
/// the keyword form still walks the matches, but works out BM25 and looks up a memory only
/// for the selected memories' keyword rows; the dense form scores their vectors alone. A
/// rare type (the planner's recipes, a tool call's `types: ["dead_end"]`) or a module's
/// memories were otherwise answered by scoring everything. Past this many, collecting and
/// checking the rows costs more than it saves, and the general forms answer
/// (docs/search-internals.md, "Measurements behind the code").
pub(crate) const NARROW_SCAN_MAX: usize = 4096;

/// The memories of the narrowing filter that pass every filter (`narrow`, through the
/// filter's index); `narrow_small` holds whether they are few enough (at most
/// [`NARROW_SCAN_MAX`]), and decides between the narrowed and the general exact forms;
/// `narrowk` adds each one's keyword rowid. With several narrowing filters, `narrow_by`
/// names the one listing fewest memories (a deprecated memory's entries count too), only
/// its list is read, and it must hold at most [`NARROW_SCAN_MAX`] entries.
fn narrow_ctes(paths: &Paths<'_>, filter: &str) -> String {
    let lists = paths.narrow.lists();
    let cap = NARROW_SCAN_MAX + 1;
    let (narrow, small) = match lists.as_slice() {
        [] => return String::new(),
        // One list: its memories that pass the filter, in one pass, and whether there are
        // few enough of them. A type's are read through the index the list is.
        [List::Types] => (
            format!(
                "narrow AS MATERIALIZED (SELECT m.rowid AS rid, m.id AS id FROM {} \
AND {filter} LIMIT {cap}), ",
                List::Types.entries()
            ),
            format!("SELECT count(*) <= {NARROW_SCAN_MAX} AS yes FROM narrow"),
        ),
        [list] => (
            format!(
                "narrow AS MATERIALIZED (SELECT m.rowid AS rid, m.id AS id FROM ({}) s \
CROSS JOIN memories m ON m.id = s.id WHERE {filter} LIMIT {cap}), ",
                list.ids()
            ),
            format!("SELECT count(*) <= {NARROW_SCAN_MAX} AS yes FROM narrow"),
        ),
        // Several: each list counted through its index (up to the cap), the shortest
        // read alone (the others under a LIMIT of 0), the filter applied once.
        _ => {
            let counts: Vec<String> = lists
                .iter()
                .enumerate()
                .map(|(i, list)| {
                    format!(
                        "SELECT '{}' AS name, {i} AS k, \
(SELECT count(*) FROM (SELECT 1 FROM {} LIMIT {cap})) AS n",
                        list.name(),
                        list.entries()
                    )
                })
                .collect();
            let reads: Vec<String> = lists
                .iter()
                .map(|list| {
                    format!(
                        "SELECT id FROM ({} \
LIMIT CASE WHEN (SELECT name FROM narrow_by) = '{}' THEN {cap} ELSE 0 END)",
                        list.ids(),
                        list.name()
                    )
                })
                .collect();
            (
                format!(
                    "narrow_by AS MATERIALIZED (SELECT name, n FROM ({}) ORDER BY n, k LIMIT 1), \
narrow AS MATERIALIZED (SELECT m.rowid AS rid, m.id AS id FROM ({}) s \
CROSS JOIN memories m ON m.id = s.id WHERE {filter}), ",
                    counts.join(" UNION ALL "),
                    reads.join(" UNION ALL ")
                ),
                format!("SELECT n <= {NARROW_SCAN_MAX} AS yes FROM narrow_by"),
            )
        }
    };
    format!(
        "{narrow}narrow_small AS MATERIALIZED ({small}), \
narrowk AS MATERIALIZED (SELECT k.keyword_rowid AS kr FROM narrow t \
CROSS JOIN memory_keyword_rows k ON k.memory_id = t.id), "
    )
}

/// One narrowing filter's list of memories, as the statement reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum List {
    /// `memory_files` under `?FILES`.
    Files,
    /// `memory_modules` under `?MODULES`.
    Modules,
    /// The (project, type, confidence) index under `?TYPES`.
    Types,
}

impl List {
    /// The list's name in `narrow_by`.
    fn name(self) -> &'static str {
        match self {
            List::Files => "files",
            List::Modules => "modules",
            List::Types => "types",
        }
    }

    /// The list's entries: `FROM` and `WHERE` of its rows, one per memory and listed value.
    fn entries(self) -> String {
        use param::*;
        let listed = |table: &str, column: &str, values: usize| {
            format!(
                "{table} nl WHERE nl.project_id = ?{PROJECT} \
AND nl.{column} IN (SELECT value FROM json_each(?{values}))"
            )
        };
        match self {
            List::Files => listed("memory_files", "path", FILES),
            List::Modules => listed("memory_modules", "module", MODULES),
            List::Types => format!(
                "memories m INDEXED BY idx_memories_type_conf WHERE m.project_id = ?{PROJECT} \
AND m.type IN (SELECT value FROM json_each(?{TYPES}))"
            ),
        }
    }

    /// The ids of the list's memories, each once.
    fn ids(self) -> String {
        match self {
            List::Types => format!("SELECT m.id AS id FROM {}", self.entries()),
            _ => format!("SELECT DISTINCT nl.memory_id AS id FROM {}", self.entries()),
        }
    }
}

/// `general(limit)`, an exact form ordered by metric under `LIMIT limit`, or, when the
/// query has a narrowing filter that selects few memories, `narrowed(limit)`, the same rows
/// found from those memories. Both arms are written, each under a LIMIT that is 0 unless it is the
/// one to run: SQLite tests a LIMIT before the loop, where a `WHERE` on a constant did not
/// spare the sorted subquery below it its scan.
fn narrowed_or_general(
    paths: &Paths<'_>,
    limit: usize,
    narrowed: impl Fn(&str) -> String,
    general: impl Fn(&str) -> String,
) -> String {
    if !paths.narrow.any() {
        return general(&format!("?{limit} + 0"));
    }
    let small = "(SELECT yes FROM narrow_small)";
    format!(
        "SELECT rid, metric FROM ({}) UNION ALL SELECT rid, metric FROM ({})",
        narrowed(&format!("CASE WHEN {small} THEN ?{limit} ELSE 0 END")),
        general(&format!("CASE WHEN {small} THEN 0 ELSE ?{limit} END")),
    )
}

/// The filter every path applies to memory `m` (project, live, and the query's filters).
/// Without `filters` (no types, files, modules, scopes or exclusions, each of which binds
/// NULL then) only the project, liveness and confidence conditions are written: the same
/// rows, in a statement a quarter shorter. Length counts because libSQL's local rows each
/// carry a copy of the statement's text.
fn filter(filters: bool, injection_floor: bool) -> String {
    use param::*;
    let least = if injection_floor {
        format!(
            "max(?{MIN_CONFIDENCE}, {})",
            crate::manage::inject_floor_sql(PROJECT)
        )
    } else {
        format!("?{MIN_CONFIDENCE}")
    };
    if !filters {
        return format!(
            "m.project_id = ?{PROJECT} AND m.deprecated = 0 AND m.confidence >= {least}"
        );
    }
    format!(
        "m.project_id = ?{PROJECT} AND m.deprecated = 0 \
AND (?{TYPES} IS NULL OR m.type IN (SELECT value FROM json_each(?{TYPES}))) \
AND (?{FILES} IS NULL OR EXISTS (SELECT 1 FROM json_each(m.related_files) f \
WHERE f.value IN (SELECT value FROM json_each(?{FILES})))) \
AND (?{MODULES} IS NULL OR EXISTS (SELECT 1 FROM json_each(m.related_modules) d \
WHERE d.value IN (SELECT value FROM json_each(?{MODULES})))) \
AND m.confidence >= {least} \
AND (?{SCOPES} IS NULL OR m.scope IN (SELECT value FROM json_each(?{SCOPES}))) \
AND (?{EXCLUDE} IS NULL OR m.id NOT IN (SELECT value FROM json_each(?{EXCLUDE})))"
    )
}

/// A path that runs nothing: no rows.
const EMPTY_PATH: &str = "SELECT NULL AS rid, NULL AS metric WHERE 0";

/// The candidate statement for `paths`. Rows: `kind` (`keyword`, `dense`, `graph`, `adj` or
/// `vec`), rank (tied metrics share a rank), metric, then [`MEMORY_COLUMNS`] for hits (a
/// dense neighbour counts only with a positive cosine similarity: one orthogonal or opposite
/// to the query is no evidence, and would otherwise tie the whole set at rank 1 when the
/// query resembles nothing); for `adj` rows the second column is one file and the fourth the other, the rest NULL; for `vec` rows (resident vectors
/// only) the second is a memory id, the third its change position and the fourth its vector
/// or NULL. The last parameter is always referenced (in a condition that is always true) so
/// that engines which refuse bindings beyond the statement's highest parameter accept every
/// variant.
pub(crate) fn candidates(paths: &Paths<'_>) -> String {
    use param::*;
    let filter = filter(paths.filters, paths.injection_floor);
    // Every path returns its memories' rowids and metrics (ids only break ties inside a
    // path): the hits and the candidate files then reach `memories` by rowid instead of a
    // seek in the TEXT id index and another by rowid. A rowid only holds within this statement (VACUUM may renumber a
    // table without an INTEGER PRIMARY KEY), which is all it is used for.
    let empty = EMPTY_PATH;
    let keyword_ctes = keyword_ctes(paths, &filter);
    let dense_ctes = dense_ctes(paths, &filter);
    let graph_ctes = if paths.graph.any() {
        graph_ctes(&paths.graph, &filter)
    } else {
        format!("gr AS ({empty}), ")
    };
    let adjacency = adjacency_ctes(paths);
    let nulls = vec!["NULL"; crate::row::MEMORY_COLUMN_COUNT - 1].join(", ");
    let changes = resident_changes(paths, &nulls);
    let narrow_ctes = narrow_ctes(paths, &filter);
    format!(
        "WITH {narrow_ctes}{keyword_ctes}{dense_ctes}{graph_ctes}{adjacency}\
SELECT h.kind, h.rank, h.metric, {MEMORY_COLUMNS} FROM (\
SELECT 'keyword' AS kind, rid, metric, RANK() OVER (ORDER BY metric DESC) AS rank FROM kw \
UNION ALL \
SELECT 'dense', rid, metric, RANK() OVER (ORDER BY metric DESC) FROM dn WHERE metric > 0 \
UNION ALL \
SELECT 'graph', rid, metric, {GRAPH_RANK} FROM gr\
) h CROSS JOIN memories m ON m.rowid = h.rid \
UNION ALL \
SELECT 'adj', a, NULL, b, {nulls} FROM adj WHERE coalesce(?{COUNT}, 0) IS NOT NULL{changes}"
    )
}

/// The keyword path's CTEs (`kw`, and the terms and forms it is built from).
///
/// Preparing this statement costs more than running it (about 8 M instructions,
/// against about 3 M to run it at 10K memories), and a server prepares it on every
/// request: sqld does not cache statements. SQLite expands a CTE's whole definition
/// again at each reference, nested references included, so the text references each
/// CTE as few times as it can: a fast form is read once, and the common-term filter
/// reads its kept terms once.
/// The fast form ranks the FTS matches alone (rowids and BM25 only: no content read and
/// no join per match) and filters the best 4 × limit; when at least `limit` survive
/// they are exactly the filtered top `limit` (every other match ranks below all of
/// them). Otherwise the exact form filters every match ([`fast_or_exact`]). `CROSS
/// JOIN` keeps the matches as the outer loop (the planner otherwise scans every memory
/// of the project).
/// Terms in at least half the rows are left out of the MATCH: FTS5's BM25 gives them an
/// idf of 1e-6, so they rank nothing, yet scoring every row they match is most of a
/// search's time on a large memory. `?TERMS` pairs each single-term token with its
/// Porter stem; the vocabulary gives the stem's document frequency (a stem it does not
/// know keeps its token). If every term is that common, the full expression runs; and
/// the exact form always uses the full expression, so a memory that only shares common
/// terms is still found when the rarer terms match fewer than `limit` memories.
/// Both forms read only the project's rows: its keyword rows have the rowids of its range
/// (schema v9), and FTS5 applies rowid bounds while it walks the term lists, so it ranks
/// that project's matches instead of every project's, filtered afterwards. BM25's
/// statistics are the whole table's either way.
/// With resident keywords, the fast form takes their pick instead: the same best
/// 4 × limit matches of the same terms, scored as FTS5 scores them (the index mirrors
/// the table), so filtering them gives the same rows. The pick arrives best first (score,
/// then id, as the statement orders them) and the JSON array is the outer loop, so the
/// first `limit` that pass the filters are the filtered top `limit`: the scan stops
/// there instead of looking up every picked memory. The pick counts only when no
/// memory changed after the index's position; otherwise FTS5's fast form runs, behind a
/// LIMIT that is 0 when the pick counts.
fn keyword_ctes(paths: &Paths<'_>, filter: &str) -> String {
    use param::*;
    let empty = EMPTY_PATH;
    if paths.keyword {
        let in_range = engram_core::schema::in_project_rowids("rowid", &format!("?{PROJECT}"));
        // Whether the pick counts is written out where it is read, twice: an index seek
        // each, cheaper than the temporary table a shared CTE would fill.
        let pick_counts = format!(
            "(?{KEYWORD_PICK} IS NOT NULL AND NOT EXISTS (SELECT 1 FROM memory_changes c \
INDEXED BY idx_memory_changes_seq WHERE c.seq > ?{KEYWORD_SEQ}))"
        );
        let fts_fast_limit = if paths.resident_keywords {
            format!("CASE WHEN {pick_counts} THEN 0 ELSE ?{KEYWORD_LIMIT} * 4 END")
        } else {
            format!("?{KEYWORD_LIMIT} * 4")
        };
        let fts_fast = format!(
            "SELECT m.rowid AS rid, f.metric AS metric FROM (\
SELECT x.memory_id AS memory_id, r.metric AS metric FROM (\
SELECT rowid AS rid, {BM25} AS metric FROM memories_fts \
WHERE memories_fts MATCH (SELECT e FROM kwexpr) AND {in_range} \
ORDER BY metric DESC LIMIT {fts_fast_limit}) r \
CROSS JOIN memories_fts x ON x.rowid = r.rid) f \
CROSS JOIN memories m ON m.id = f.memory_id \
WHERE {filter} ORDER BY metric DESC, m.id LIMIT ?{KEYWORD_LIMIT} + 0"
        );
        let fast = if paths.resident_keywords {
            format!(
                "kwfast AS MATERIALIZED (SELECT rid, metric FROM (\
SELECT m.rowid AS rid, p.metric AS metric FROM (\
SELECT json_extract(value, '$[0]') AS id, json_extract(value, '$[1]') AS metric \
FROM json_each(?{KEYWORD_PICK}) LIMIT CASE WHEN {pick_counts} THEN -1 ELSE 0 END) p \
CROSS JOIN memories m ON m.id = p.id \
WHERE {filter} LIMIT ?{KEYWORD_LIMIT} + 0) \
UNION ALL SELECT rid, metric FROM ({fts_fast})), "
            )
        } else {
            format!("kwfast AS MATERIALIZED ({fts_fast}), ")
        };
        format!(
            "kwterms AS MATERIALIZED (SELECT json_extract(value, '$[0]') AS token, \
json_extract(value, '$[1]') AS stem FROM json_each(?{TERMS})), \
kwkept AS MATERIALIZED (SELECT t.token AS token FROM kwterms t WHERE t.stem IS NULL \
OR 2 * coalesce((SELECT voc.doc FROM memories_fts_vocab voc WHERE voc.term = t.stem), 0) \
< (SELECT count(*) FROM memories_fts_docsize)), \
kwexpr AS MATERIALIZED (SELECT coalesce(\
(SELECT group_concat('\"' || token || '\"', ' OR ') FROM kwkept), ?{MATCH}) AS e), \
{fast}\
{}, ",
            fast_or_exact(
                "kw",
                "kwfast",
                &narrowed_or_general(
                    paths,
                    KEYWORD_LIMIT,
                    // One FTS5 cursor over the matches, keeping the narrowed memories' keyword rows
                    // (`+rowid`: a rowid constraint handed to FTS5 would open a cursor,
                    // and compute BM25's statistics, per row), so BM25 is worked out and a
                    // memory looked up only for those.
                    |limit| {
                        format!(
                            "SELECT m.rowid AS rid, g.metric AS metric FROM (\
SELECT memory_id, {BM25} AS metric FROM memories_fts \
WHERE memories_fts MATCH ?{MATCH} AND {in_range} AND +rowid IN (SELECT kr FROM narrowk)) g \
CROSS JOIN memories m ON m.id = g.memory_id ORDER BY metric DESC, m.id LIMIT {limit}"
                        )
                    },
                    |limit| {
                        format!(
                            "SELECT m.rowid AS rid, g.metric AS metric FROM (\
SELECT memory_id, {BM25} AS metric FROM memories_fts \
WHERE memories_fts MATCH ?{MATCH} AND {in_range}) g \
CROSS JOIN memories m ON m.id = g.memory_id \
WHERE {filter} ORDER BY metric DESC, m.id LIMIT {limit}"
                        )
                    },
                ),
                KEYWORD_LIMIT
            )
        )
    } else {
        format!("kw AS ({empty}), ")
    }
}

/// The dense path's CTE (`dn`) from the source `paths` names.
///
/// The resident form mirrors the keyword path's: the ids the in-memory vectors rank
/// best are re-scored from the stored vectors and filtered, together with every memory
/// whose vector changed after the set's position (another writer's, unknown to the set
/// when it picked). The floor is the lowest similarity picked plus the in-memory
/// similarities' error bound, and a row counts only if its exact similarity reaches it.
/// Every memory outside both lists is unchanged and unpicked, so scores at most the
/// floor: when at least `limit` rows count, they are exactly the filtered top `limit`,
/// in this one statement whatever changed. Otherwise the exact scan runs. The changed
/// list is read only when ids are passed (a set still loading picks none). A changed id
/// joins the picked ones only if not picked already: a UNION would build a table of
/// every id per search, where the NOT IN list is built only when something changed.
// Written only for the paths that read it: the statement is built on every search.
fn dense_ctes(paths: &Paths<'_>, filter: &str) -> String {
    use param::*;
    let empty = EMPTY_PATH;
    let narrowed_scan = |limit: &str| {
        format!(
            "SELECT t.rid AS rid, 1.0 - vector_distance_cos(e.embedding, ?{VECTOR}) AS metric \
FROM narrow t CROSS JOIN memory_embeddings e ON e.memory_id = t.id \
WHERE e.model_id = ?{MODEL} AND e.dims = ?{DIMS} ORDER BY metric DESC, t.id LIMIT {limit}"
        )
    };
    let exact_scan = || {
        narrowed_or_general(paths, DENSE_LIMIT, narrowed_scan, |limit| {
            format!(
                "SELECT m.rowid AS rid, 1.0 - vector_distance_cos(e.embedding, ?{VECTOR}) AS metric \
FROM memory_embeddings e JOIN memories m ON m.id = e.memory_id \
WHERE e.model_id = ?{MODEL} AND e.dims = ?{DIMS} AND {filter} \
ORDER BY metric DESC, m.id LIMIT {limit}"
            )
        })
    };
    match paths.dense {
        DenseSource::Off => format!("dn AS ({empty}), "),
        DenseSource::Exact => format!("dn AS MATERIALIZED ({}), ", exact_scan()),
        // The index knows nothing of projects, types or forgotten memories: its nearest
        // neighbours are filtered after it, and when fewer than `limit` survive (a small
        // project in a large database, a rare type) the exact scan answers instead, in the
        // same statement ([`fast_or_exact`]). So it does below the index's threshold, where
        // the scan is faster and the index is not searched at all.
        DenseSource::Index(index) => format!(
            "dnann AS MATERIALIZED (\
SELECT m.rowid AS rid, 1.0 - vector_distance_cos(v.embedding, ?{VECTOR}) AS metric \
FROM {} CROSS JOIN {} v ON v.rowid = t.id JOIN memories m ON m.id = v.memory_id \
WHERE {filter} ORDER BY metric DESC, m.id LIMIT ?{DENSE_LIMIT} + 0), {}, ",
            index.nearest(VECTOR, ANN_CANDIDATES, PROJECT),
            index.table(),
            fast_or_exact("dn", "dnann", &exact_scan(), DENSE_LIMIT)
        ),
        DenseSource::Resident => {
            // The fallback: every vector of the model, in the compound's later arm (see
            // the keyword path).
            let exact_fallback = narrowed_or_general(paths, DENSE_LIMIT, narrowed_scan, |limit| {
                format!(
                    "SELECT m.rowid AS rid, g.metric AS metric FROM (\
SELECT allv.memory_id AS memory_id, \
1.0 - vector_distance_cos(allv.embedding, ?{VECTOR}) AS metric FROM memory_embeddings allv \
WHERE allv.model_id = ?{MODEL} AND allv.dims = ?{DIMS}) g \
CROSS JOIN memories m ON m.id = g.memory_id \
WHERE {filter} ORDER BY metric DESC, m.id LIMIT {limit}"
                )
            });
            format!(
                "dnchanged AS (SELECT c.memory_id AS id FROM embedding_changes c \
INDEXED BY idx_embedding_changes_seq WHERE c.seq > ?{KNOWN_SEQ} \
LIMIT CASE WHEN ?{DENSE_FLOOR} IS NULL THEN 0 ELSE -1 END), \
dnfast AS MATERIALIZED (SELECT rid, metric FROM (\
SELECT m.id AS id, 1.0 - vector_distance_cos(e.embedding, ?{VECTOR}) AS metric, m.rowid AS rid \
FROM (SELECT value AS id FROM json_each(?{DENSE_IDS}) UNION ALL SELECT id FROM dnchanged \
WHERE id NOT IN (SELECT value FROM json_each(?{DENSE_IDS}))) j \
CROSS JOIN memory_embeddings e ON e.memory_id = j.id \
CROSS JOIN memories m ON m.id = e.memory_id \
WHERE e.model_id = ?{MODEL} AND e.dims = ?{DIMS} AND {filter}) \
WHERE metric >= ?{DENSE_FLOOR} \
ORDER BY metric DESC, id LIMIT ?{DENSE_LIMIT} + 0), \
{}, ",
                fast_or_exact("dn", "dnfast", &exact_fallback, DENSE_LIMIT)
            )
        }
    }
}

/// The candidates' files and the neighbouring pairs among them (`adj`), for the boost.
///
/// The files of every candidate, and the pairs among them that neighbour each other in
/// the code graph (its file links) or by co-access. Each candidate file looks up both
/// kinds of link in one join, its key for the other kind being NULL (which seeks
/// nothing), so the candidates are referenced twice: every reference to a CTE expands
// its whole definition again, and SQLite 3.54 refuses a statement that reaches 1,000
// cursors. A link is found from the file it starts at; both ends are candidates.
fn adjacency_ctes(paths: &Paths<'_>) -> String {
    use param::*;
    if paths.adjacency {
        format!(
            "cand AS (SELECT rid FROM kw UNION ALL SELECT rid FROM dn UNION ALL SELECT rid FROM gr), \
cfiles AS MATERIALIZED (SELECT DISTINCT f.value AS path FROM cand \
CROSS JOIN memories m ON m.rowid = cand.rid, json_each(m.related_files) f), \
adj AS (SELECT DISTINCT src.path AS a, dst.path AS b FROM cfiles src \
CROSS JOIN (SELECT 0 AS role UNION ALL SELECT 1) r \
LEFT JOIN graph_file_links l ON l.project_id = ?{PROJECT} \
AND l.file_a = CASE WHEN r.role = 0 THEN src.path END AND l.stale_at IS NULL \
LEFT JOIN observer_co_access_edges co ON co.project_id = ?{PROJECT} \
AND co.file_a = CASE WHEN r.role = 1 THEN src.path END \
CROSS JOIN cfiles dst ON dst.path = coalesce(l.file_b, co.file_b) \
WHERE src.path <> dst.path) "
        )
    } else {
        "adj AS (SELECT NULL AS a, NULL AS b WHERE 0) ".to_owned()
    }
}

/// The change rows the resident sets catch up from: vectors changed after the resident
/// set's position and memories changed after the resident keywords', as `vec` and `txt`
/// rows after the candidates.
fn resident_changes(paths: &Paths<'_>, nulls: &str) -> String {
    use param::*;
    // The vector changes after the resident set's position (`?KNOWN_SEQ`), at most
    // `?CHANGE_LIMIT`.
    let changes = match paths.dense {
        DenseSource::Resident => format!(
            " UNION ALL SELECT 'vec', vc.id, vc.seq, vc.embedding, {nulls} FROM ({}) vc",
            vector_changes_from([PROJECT, MODEL, DIMS, KNOWN_SEQ, CHANGE_LIMIT])
        ),
        _ => String::new(),
    };
    // The memory changes after the resident keywords' position, at most `?CHANGE_LIMIT`.
    let text_changes = if paths.keyword && paths.resident_keywords {
        let nulls = vec!["NULL"; crate::row::MEMORY_COLUMN_COUNT - 4].join(", ");
        format!(
            " UNION ALL SELECT 'txt', tc.id, tc.seq, tc.content, tc.tags, tc.files, tc.project, {nulls} \
FROM ({}) tc",
            text_changes_from([KEYWORD_SEQ, CHANGE_LIMIT])
        )
    } else {
        String::new()
    };
    format!("{changes}{text_changes}")
}

/// CTE `name`: the rows of the fast form `fast` when it holds `limit` of them (parameter
/// `limit`), else those of `exact`. The two are one `UNION ALL` under `LIMIT limit`: the
/// fast arm yields all its rows or none (a window count beside them decides), and SQLite
/// skips a compound's later arm once its LIMIT is reached, so the exact form runs only when
/// the fast one came short, and nothing references the fast form a second time to count
/// it (each reference costs a server its whole expansion when it prepares the statement).
fn fast_or_exact(name: &str, fast: &str, exact: &str, limit: usize) -> String {
    format!(
        "{name} AS MATERIALIZED (SELECT rid, metric FROM (\
SELECT rid, metric, COUNT(*) OVER () AS n FROM {fast}) WHERE n >= ?{limit} \
UNION ALL SELECT rid, metric FROM ({exact}) LIMIT ?{limit} + 0)"
    )
}

/// A graph candidate's rank: the place of the last candidate with its score. The graph's
/// score is a sum of a few fixed weights, so ties are common — a name defined in many
/// files credits every chunk of each alike — and a group of fifty equal candidates holds
/// no first place: ranking each of them first gave them fifty first places' weight in the
/// fusion. (Keyword and dense scores are continuous, where a tie is a duplicate.)
const GRAPH_RANK: &str = "COUNT(*) OVER (ORDER BY metric DESC)";

/// The graph path's CTEs, ending in `gr`: memories scored by the code names the query
/// holds (the symbols so named, their files), by the recent files and their neighbours,
/// and by the files the query names. Only the parts with input are written: an empty part
/// still opened its temporary tables (for `DISTINCT` and `UNION`) on every search. The
/// score's terms keep one order whichever parts run, so their sums are the same. Every arm
/// names its columns, since any may come first.
fn graph_ctes(inputs: &GraphInputs, filter: &str) -> String {
    use param::*;
    let mut ctes = Vec::new();
    let mut scores = Vec::new();
    if inputs.names {
        let short_name = NODE_SHORT_NAME.replace("label", "n.label");
        ctes.push(format!(
            "names AS MATERIALIZED (SELECT key AS name, value AS weight FROM json_each(?{IDENTIFIERS})), \
sym AS (\
SELECT n.id AS node, n.file_path AS file, names.name AS name, names.weight AS weight FROM names \
CROSS JOIN graph_nodes n INDEXED BY idx_gn_label ON n.project_id = ?{PROJECT} AND n.label = names.name \
WHERE n.stale_at IS NULL \
UNION \
SELECT n.id, n.file_path, names.name, names.weight FROM names \
CROSS JOIN graph_nodes n INDEXED BY idx_gn_short_name ON n.project_id = ?{PROJECT} \
AND {short_name} = names.name WHERE n.stale_at IS NULL), \
symw AS MATERIALIZED (SELECT node, file, weight / COUNT(*) OVER (PARTITION BY name) AS w FROM sym)"
        ));
        scores.push(format!(
            "SELECT m.id AS id, symw.w AS s FROM symw \
CROSS JOIN memories m ON m.project_id = ?{PROJECT} AND m.target_node_id = symw.node \
UNION ALL \
SELECT mf.memory_id AS id, 0.5 * symw.w AS s FROM symw \
CROSS JOIN memory_files mf ON mf.project_id = ?{PROJECT} AND mf.path = symw.file"
        ));
    }
    if inputs.recent {
        ctes.push(format!(
            "recent AS MATERIALIZED (SELECT DISTINCT value AS path FROM json_each(?{RECENT_FILES})), \
near AS MATERIALIZED (\
SELECT nto.file_path AS file FROM recent \
CROSS JOIN graph_nodes nfrom INDEXED BY idx_gn_file ON nfrom.project_id = ?{PROJECT} AND nfrom.file_path = recent.path \
CROSS JOIN graph_edges ge ON ge.project_id = ?{PROJECT} AND ge.from_id = nfrom.id AND ge.stale_at IS NULL \
CROSS JOIN graph_nodes nto ON nto.project_id = ?{PROJECT} AND nto.id = ge.to_id \
UNION \
SELECT nfrom.file_path FROM recent \
CROSS JOIN graph_nodes nto INDEXED BY idx_gn_file ON nto.project_id = ?{PROJECT} AND nto.file_path = recent.path \
CROSS JOIN graph_edges ge INDEXED BY idx_ge_to ON ge.project_id = ?{PROJECT} AND ge.to_id = nto.id \
AND ge.stale_at IS NULL \
CROSS JOIN graph_nodes nfrom ON nfrom.project_id = ?{PROJECT} AND nfrom.id = ge.from_id \
UNION \
SELECT co.file_b FROM recent CROSS JOIN observer_co_access_edges co \
ON co.file_a = recent.path AND co.project_id = ?{PROJECT} \
UNION \
SELECT co.file_a FROM recent CROSS JOIN observer_co_access_edges co INDEXED BY idx_co_access_b \
ON co.file_b = recent.path AND co.project_id = ?{PROJECT})"
        ));
        scores.push(format!(
            "SELECT mf.memory_id AS id, 0.5 AS s FROM recent \
CROSS JOIN memory_files mf ON mf.project_id = ?{PROJECT} AND mf.path = recent.path"
        ));
    }
    if inputs.named {
        // A named file that is also recent counts once, as recent.
        let not_recent = if inputs.recent {
            " WHERE value NOT IN (SELECT path FROM recent)"
        } else {
            ""
        };
        ctes.push(format!(
            "named AS MATERIALIZED (SELECT DISTINCT value AS path FROM json_each(?{NAMED_FILES}){not_recent})"
        ));
        scores.push(format!(
            "SELECT mf.memory_id AS id, 0.5 AS s FROM named \
CROSS JOIN memory_files mf ON mf.project_id = ?{PROJECT} AND mf.path = named.path"
        ));
    }
    if inputs.recent {
        scores.push(format!(
            "SELECT mf.memory_id AS id, 0.3 AS s FROM near \
CROSS JOIN memory_files mf ON mf.project_id = ?{PROJECT} AND mf.path = near.file \
WHERE near.file NOT IN (SELECT path FROM recent)"
        ));
    }
    format!(
        "{}, gscore AS ({}), \
gr AS MATERIALIZED (SELECT m.rowid AS rid, SUM(g.s) AS metric FROM gscore g \
CROSS JOIN memories m ON m.id = g.id WHERE {filter} GROUP BY m.id ORDER BY metric DESC, m.id LIMIT ?{GRAPH_LIMIT} + 0), ",
        ctes.join(", "),
        scores.join(" UNION ALL ")
    )
}

/// The memory changes after a change-log position, oldest first and at most a limit: id,
/// position, and the memory's content, tags and related files (stored JSON) and project
/// when it is live, which is when the keyword table holds it (NULL content: drop it).
/// `params` numbers the position and the limit. Every project's memories count: BM25's
/// statistics are the table's.
fn text_changes_from([known, limit]: [usize; 2]) -> String {
    format!(
        "SELECT c.memory_id AS id, c.seq AS seq, CASE WHEN cm.deprecated = 0 THEN cm.content END \
AS content, cm.tags AS tags, cm.related_files AS files, cm.project_id AS project \
FROM memory_changes c INDEXED BY idx_memory_changes_seq \
LEFT JOIN memories cm ON cm.id = c.memory_id WHERE c.seq > ?{known} \
ORDER BY c.seq LIMIT ?{limit} + 0"
    )
}

/// The memory changes alone, as the candidate statement returns them (`kind`, id,
/// position, content, tags, files, project), for loading resident keywords ahead of searches:
/// `?1` the index's position, `?2` the most to return.
pub(crate) fn text_changes() -> String {
    format!(
        "SELECT 'txt', tc.id, tc.seq, tc.content, tc.tags, tc.files, tc.project FROM ({}) tc",
        text_changes_from([1, 2])
    )
}

/// The vector changes after a change-log position, oldest first and at most a limit: id,
/// position, and the vector when it is now a live memory's vector of the project and model
/// (NULL: drop it). `params` numbers the project, model, dimensions, position and limit.
fn vector_changes_from([project, model, dims, known, limit]: [usize; 5]) -> String {
    format!(
        "SELECT c.memory_id AS id, c.seq AS seq, CASE WHEN cm.project_id = ?{project} \
AND cm.deprecated = 0 AND ce.model_id = ?{model} AND ce.dims = ?{dims} THEN ce.embedding END \
AS embedding FROM embedding_changes c INDEXED BY idx_embedding_changes_seq \
LEFT JOIN memory_embeddings ce ON ce.memory_id = c.memory_id \
LEFT JOIN memories cm ON cm.id = c.memory_id WHERE c.seq > ?{known} \
ORDER BY c.seq LIMIT ?{limit} + 0"
    )
}

/// The vector changes alone, as the candidate statement returns them (`kind`, id,
/// position, vector), for loading resident vectors ahead of searches: `?1` project,
/// `?2` model, `?3` dimensions, `?4` the set's position, `?5` the most to return.
pub(crate) fn vector_changes() -> String {
    format!(
        "SELECT 'vec', vc.id, vc.seq, vc.embedding FROM ({}) vc",
        vector_changes_from([1, 2, 3, 4, 5])
    )
}
