//! Applies the schema migrations of [`engram_core::schema`].

use engram_core::schema::{
    self, Existing, CREATE_LEDGER, MIGRATIONS, RECORD_APPLIED, SELECT_APPLIED, SELECT_OBJECTS,
};

use crate::{Database, Statement, StoreError, Value};

/// Brings the database up to the latest schema; returns the versions it applied.
///
/// Each pending migration runs in its own transaction together with its ledger row.
/// Already-applied versions are skipped, and every statement is idempotent, so concurrent
/// openers converge. `now` is the RFC 3339 time recorded in the ledger.
pub async fn migrate<D: Database>(db: &D, now: &str) -> Result<Vec<u32>, StoreError> {
    // What the database is, read before anything is written: one round trip that also
    // reads the ledger of a database that has one.
    let mut results = db
        .pipeline(&[
            Statement::new(SELECT_OBJECTS),
            Statement::new(SELECT_APPLIED),
        ])
        .await?
        .into_iter();
    let objects = results
        .next()
        .transpose()?
        .ok_or_else(|| StoreError::Protocol("missing result for the schema query".into()))?;
    let objects: Vec<(String, String, String)> = objects
        .rows
        .iter()
        .map(|row| match row.as_slice() {
            [Value::Text(kind), Value::Text(name), Value::Text(sql)] => {
                Ok((kind.clone(), name.clone(), sql.clone()))
            }
            _ => Err(StoreError::Decode("a schema row is not three texts".into())),
        })
        .collect::<Result<_, _>>()?;
    let applied = match schema::classify(&objects) {
        Existing::Foreign(reason) => {
            return Err(StoreError::Integrity(format!(
                "not an engram database: {reason}; nothing was changed"
            )))
        }
        Existing::Fresh => {
            db.pipeline(&[Statement::new(CREATE_LEDGER)])
                .await?
                .into_iter()
                .collect::<Result<Vec<_>, _>>()?;
            crate::Rows::default()
        }
        Existing::Engram => results
            .next()
            .transpose()?
            .ok_or_else(|| StoreError::Protocol("missing result for the ledger query".into()))?,
    };
    let applied: Vec<i64> = applied
        .rows
        .iter()
        .map(|row| row.first().map_or(Ok(0), |v| v.as_i64("schema version")))
        .collect::<Result<_, _>>()?;
    if let Some(&newest) = applied.iter().max() {
        if newest > i64::from(schema::latest_version()) {
            return Err(StoreError::Engine(format!(
                "database schema version {newest} is newer than this engram build knows ({}); upgrade engram",
                schema::latest_version()
            )));
        }
    }
    let mut done = Vec::new();
    for migration in MIGRATIONS {
        if applied.contains(&i64::from(migration.version)) {
            continue;
        }
        let present = added_columns_present(db, migration.statements).await?;
        let mut statements: Vec<Statement> = migration
            .statements
            .iter()
            .filter(|sql| !present.iter().any(|p| p == *sql))
            .map(|sql| Statement::new(*sql))
            .collect();
        statements.push(Statement::with_params(
            RECORD_APPLIED,
            vec![
                Value::from(migration.version),
                Value::from(migration.name),
                Value::from(now),
            ],
        ));
        if let Err(error) = db.transaction(&statements).await {
            // A statement that is not idempotent (`ALTER TABLE … ADD COLUMN`) fails when
            // another opener applied this version first; then the ledger has it.
            if !version_applied(db, migration.version).await? {
                return Err(error);
            }
            continue;
        }
        done.push(migration.version);
    }
    Ok(done)
}

/// Whether the ledger records `version` now.
async fn version_applied<D: Database>(db: &D, version: u32) -> Result<bool, StoreError> {
    let rows = db
        .pipeline(&[Statement::new(SELECT_APPLIED)])
        .await?
        .into_iter()
        .next()
        .transpose()?
        .unwrap_or_default();
    Ok(rows.rows.iter().any(|row| {
        row.first().and_then(|v| v.as_i64("schema version").ok()) == Some(i64::from(version))
    }))
}

/// The `ALTER TABLE … ADD COLUMN` statements of `statements` whose column is already
/// there (a database whose ledger lost a version it had applied): they would fail, and
/// the column they add is present. One read, only for migrations that add columns.
async fn added_columns_present<D: Database>(
    db: &D,
    statements: &[&'static str],
) -> Result<Vec<&'static str>, StoreError> {
    let adds: Vec<(&'static str, &str, &str)> = statements
        .iter()
        .filter_map(|sql| {
            let mut words = sql.split_whitespace();
            match (
                words.next(),
                words.next(),
                words.next(),
                words.next(),
                words.next(),
                words.next(),
            ) {
                (
                    Some("ALTER"),
                    Some("TABLE"),
                    Some(table),
                    Some("ADD"),
                    Some("COLUMN"),
                    Some(column),
                ) => Some((*sql, table, column)),
                _ => None,
            }
        })
        .collect();
    if adds.is_empty() {
        return Ok(Vec::new());
    }
    let reads: Vec<Statement> = adds
        .iter()
        .map(|(_, table, column)| {
            Statement::with_params(
                "SELECT count(*) FROM pragma_table_info(?1) WHERE name = ?2",
                vec![Value::from(*table), Value::from(*column)],
            )
        })
        .collect();
    let results = db.pipeline(&reads).await?;
    let mut present = Vec::new();
    for ((sql, _, _), result) in adds.iter().zip(results) {
        let rows = result?;
        let count = rows
            .rows
            .first()
            .and_then(|r| r.first())
            .map_or(Ok(0), |v| v.as_i64("column count"))?;
        if count > 0 {
            present.push(*sql);
        }
    }
    Ok(present)
}
