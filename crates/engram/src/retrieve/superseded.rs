//! On request, each hit shows the retired memories it superseded: one more read for the
//! whole batch, and none when no query asked.

use engram_store::{Database, Statement, Value};

use crate::row::memory_from_row;
use crate::sql::MEMORY_COLUMNS;
use crate::{Engram, EngramError, SearchQuery, SearchResponse};

impl<D: Database> Engram<D> {
    /// Fills [`crate::SearchHit::superseded`] for the responses whose query asked.
    pub(super) async fn attach_superseded(
        &self,
        queries: &[SearchQuery],
        responses: &mut [SearchResponse],
    ) -> Result<(), EngramError> {
        let ids: Vec<&str> = queries
            .iter()
            .zip(responses.iter())
            .filter(|(query, _)| query.include_superseded)
            .flat_map(|(_, response)| response.hits.iter().map(|h| h.memory.id.as_str()))
            .collect();
        if ids.is_empty() {
            return Ok(());
        }
        let rows = self
            .single(Statement::with_params(
                superseded_by_any(),
                vec![
                    Value::from(self.project_id()),
                    Value::from(serde_json::to_string(&ids).unwrap_or_else(|_| "[]".into())),
                ],
            ))
            .await?;
        let retired = rows
            .rows
            .iter()
            .map(|row| memory_from_row(row))
            .collect::<Result<Vec<_>, _>>()?;
        for (query, response) in queries.iter().zip(responses.iter_mut()) {
            if !query.include_superseded {
                continue;
            }
            for hit in &mut response.hits {
                hit.superseded = retired
                    .iter()
                    .filter(|m| m.superseded_by.as_deref() == Some(hit.memory.id.as_str()))
                    .cloned()
                    .collect();
            }
        }
        Ok(())
    }
}

/// The project's memories superseded by any of `?2` (a JSON array of ids), newest first.
fn superseded_by_any() -> String {
    format!(
        "SELECT {MEMORY_COLUMNS} FROM memories m WHERE m.project_id = ?1 AND m.deprecated = 1 \
AND m.superseded_by IN (SELECT value FROM json_each(?2)) ORDER BY m.deprecated_at DESC, m.id"
    )
}
