//! SQL of instruction imports. Every value is a bound parameter.

use crate::sql::MEMORY_COLUMNS;

/// The stored hash of an imported file (`?1` project, `?2` file).
pub const IMPORTED_FILE: &str =
    "SELECT sha256 FROM imported_files WHERE project_id = ?1 AND file = ?2";

/// The rules imported from a file before (`?1` project, `?2` file): the memory's columns,
/// then the origin's rule key, text, lines, and how many files the memory has as origins.
pub fn origins_of_file() -> String {
    format!(
        "SELECT {MEMORY_COLUMNS}, o.rule_key, o.rule_text, o.line, o.end_line, \
(SELECT count(*) FROM memory_origins x WHERE x.memory_id = o.memory_id) \
FROM memory_origins o JOIN memories m ON m.id = o.memory_id \
WHERE o.project_id = ?1 AND o.file = ?2 ORDER BY o.line"
    )
}

/// Records where a rule came from (`?1` project, `?2` file, `?3` rule key, `?4` memory,
/// `?5` line, `?6` end line, `?7` section, `?8` rule text).
pub const UPSERT_ORIGIN: &str = "INSERT OR REPLACE INTO memory_origins \
(project_id, file, rule_key, memory_id, line, end_line, section, rule_text) \
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)";

/// Drops a rule's origin (`?1` project, `?2` file, `?3` rule key).
pub const DELETE_ORIGIN: &str =
    "DELETE FROM memory_origins WHERE project_id = ?1 AND file = ?2 AND rule_key = ?3";

/// Retires a live memory no file says any more (`?1` id, `?2` project, `?3` now).
pub const RETIRE_UNSOURCED: &str = "UPDATE memories SET deprecated = 1, deprecated_at = ?3 \
WHERE id = ?1 AND project_id = ?2 AND deprecated = 0 \
AND NOT EXISTS (SELECT 1 FROM memory_origins WHERE memory_id = ?1)";

/// A reformatted rule's new wording (`?1` id, `?2` project, `?3` content, `?4` content
/// key, `?5` now).
pub const REWORD: &str = "UPDATE memories SET content = ?3, content_key = ?4, updated_at = ?5 \
WHERE id = ?1 AND project_id = ?2 AND deprecated = 0";

/// Records an imported file's hash (`?1` project, `?2` file, `?3` format, `?4` sha256,
/// `?5` rules, `?6` now).
pub const UPSERT_IMPORTED_FILE: &str = "INSERT OR REPLACE INTO imported_files \
(project_id, file, format, sha256, rules, imported_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)";
