//! Where an imported memory was written: the instruction files and lines that state it (a
//! rule said in two files, such as Cursor and Windsurf twins, has two origins).

use engram_store::{Database, Statement, Value};
use serde::Serialize;

use crate::row::{count_at, text_at};
use crate::{Engram, EngramError};

/// One place an instruction file states a memory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RuleOrigin {
    /// The file, by its path from the project root.
    pub file: String,
    /// The rule's first line (1-based).
    pub line: u32,
    /// Its last line.
    pub end_line: u32,
    /// The heading it sits under (empty at the top of the file).
    pub section: String,
}

impl<D: Database> Engram<D> {
    /// The instruction files and lines that state memory `id`, by file; empty for a memory
    /// no import wrote. One round trip.
    pub async fn origins(&self, id: &str) -> Result<Vec<RuleOrigin>, EngramError> {
        let rows = self
            .single(Statement::with_params(
                "SELECT file, line, end_line, section FROM memory_origins \
WHERE project_id = ?1 AND memory_id = ?2 ORDER BY file, line",
                vec![Value::from(self.project_id()), Value::from(id)],
            ))
            .await?;
        rows.rows
            .iter()
            .map(|row| {
                let line = |i: usize, what: &str| -> Result<u32, EngramError> {
                    Ok(u32::try_from(count_at(row, i, what)?).unwrap_or(0))
                };
                Ok(RuleOrigin {
                    file: text_at(row, 0, "file")?.unwrap_or_default(),
                    line: line(1, "line")?,
                    end_line: line(2, "end_line")?,
                    section: text_at(row, 3, "section")?.unwrap_or_default(),
                })
            })
            .collect()
    }
}
