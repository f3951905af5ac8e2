//! SQL of the agent loop: the memories about files, the standing memories and the task
//! calibrations. Every value is bound; the SQL text holds only placeholders and limits.

use crate::sql::MEMORY_COLUMNS;

/// The live memories about the paths in `?2` (a JSON array) through the file index, of the
/// types in `?3` (`[]`: any), most confident first, at most `limit` rows (`?1` project).
pub fn memories_about_files(limit: u32) -> String {
    format!(
        "SELECT {MEMORY_COLUMNS} FROM json_each(?2) f \
CROSS JOIN memory_files mf ON mf.project_id = ?1 AND mf.path = f.value \
CROSS JOIN memories m ON m.id = mf.memory_id \
WHERE m.project_id = ?1 AND m.deprecated = 0 \
AND (?3 = '[]' OR m.type IN (SELECT value FROM json_each(?3))) \
ORDER BY m.confidence DESC, m.id LIMIT {limit}"
    )
}

/// The live rules imported from instruction files whose front-matter globs (`glob:` tags)
/// match one of the paths in `?2` (every suffix of each file, so a project-relative glob
/// matches an absolute path); `?1` project. Only imported memories are read, through
/// their origins, so the cost is the project's rule count. SQLite's `GLOB` lets `*` cross
/// `/`, so a leading `**/` is dropped (every suffix is tried: `**/Domain/*.cs` matches
/// `app/Domain/Order.cs`, not `MyDomain/Order.cs`) and an inner `/**/` is read as `/*`
/// (`src/**/*.ts` matches `src/b.ts` and `src/a/b.ts`); so a `*` also crosses folders,
/// and braces are not expanded (such a glob matches nothing).
pub fn rules_for_files(limit: u32) -> String {
    format!(
        "SELECT {MEMORY_COLUMNS} FROM memories m WHERE m.id IN \
(SELECT memory_id FROM memory_origins WHERE project_id = ?1) \
AND m.project_id = ?1 AND m.deprecated = 0 AND EXISTS (SELECT 1 FROM json_each(m.tags) t, json_each(?2) f \
WHERE t.value GLOB 'glob:*' AND f.value GLOB replace(CASE WHEN substr(t.value, 6, 3) = '**/' \
THEN substr(t.value, 9) ELSE substr(t.value, 6) END, '/**/', '/*')) \
ORDER BY m.confidence DESC, m.id LIMIT {limit}"
    )
}

/// The project's standing memories: its `rows` most confident of each of `standing_types`
/// types (`?2` …), then its latest work in progress (the next parameter); `?1` project.
pub fn standing(standing_types: usize, rows: u32) -> String {
    // Per type, its most confident rows through the (project, type, confidence) index,
    // so the cost does not grow with how many decisions a project holds; and the
    // latest work in progress through the (project, type) index. Both are named: left
    // to itself the planner reads the work in progress through the index of live
    // memories, which is every memory of the project.
    let live = "m.project_id = ?1 AND m.deprecated = 0 AND m.needs_review = 0";
    let mut parts: Vec<String> = (0..standing_types)
        .map(|i| {
            format!(
                "SELECT * FROM (SELECT {MEMORY_COLUMNS} FROM memories m \
INDEXED BY idx_memories_type_conf \
WHERE {live} AND m.type = ?{} ORDER BY m.confidence DESC LIMIT {rows})",
                i + 2
            )
        })
        .collect();
    parts.push(format!(
        "SELECT * FROM (SELECT {MEMORY_COLUMNS} FROM memories m \
INDEXED BY idx_memories_project_type \
WHERE {live} AND m.type = ?{} ORDER BY m.created_at DESC, m.id LIMIT 1)",
        standing_types + 2
    ));
    parts.join(" UNION ALL ")
}

/// The calibration totals of the named modules (`?1` project, `?2` methodology, `?3` JSON
/// array of modules).
pub const SELECT_CALIBRATIONS: &str = "SELECT module, methodology, samples, planned_steps, \
actual_steps, memory_id FROM task_calibrations WHERE project_id = ?1 AND methodology = ?2 \
AND module IN (SELECT value FROM json_each(?3))";

/// Adds one work unit to a module's totals (`?1` project, `?2` module, `?3` methodology,
/// `?4` planned, `?5` actual, `?6` the new memory, `?7` now): the arithmetic is the
/// database's, so two runtimes reporting at once both count.
pub const ADD_CALIBRATION_SAMPLE: &str = "INSERT INTO task_calibrations (project_id, module, \
methodology, samples, planned_steps, actual_steps, memory_id, updated_at) \
VALUES (?1, ?2, ?3, 1, ?4, ?5, ?6, ?7) ON CONFLICT (project_id, module, methodology) DO UPDATE \
SET samples = samples + 1, planned_steps = planned_steps + excluded.planned_steps, \
actual_steps = actual_steps + excluded.actual_steps, memory_id = excluded.memory_id, \
updated_at = excluded.updated_at";

/// The calibrations of the modules in `?3` (a JSON array; `[]`: every module) with their
/// memories, most sampled first, at most `limit` (`?1` project, `?2` methodology).
pub fn calibrations_with_memories(limit: u32) -> String {
    format!(
        "SELECT {MEMORY_COLUMNS}, c.module, c.methodology, c.samples, \
c.planned_steps, c.actual_steps, c.memory_id FROM task_calibrations c \
JOIN memories m ON m.id = c.memory_id AND m.deprecated = 0 \
WHERE c.project_id = ?1 AND c.methodology = ?2 AND (json_array_length(?3) = 0 \
OR c.module IN (SELECT value FROM json_each(?3))) \
ORDER BY c.samples DESC, c.module LIMIT {limit}"
    )
}
