//! The embedded default: a libSQL database file opened in-process with the `libsql` crate's
//! local engine (SQLite with FTS5, `F32_BLOB` vectors, `vector_distance_cos` and the
//! `libsql_vector_idx` index) — the same SQL text as the remote server runs.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

use std::time::Duration;

use engram_store::{Database, Rows, SqlError, Statement, StoreError, Value};
use futures::lock::Mutex;

/// Prepared statements kept per connection: engram sends the same few SQL texts over and
/// over, and compiling the search statement costs more than running it on a small project.
const STATEMENT_CACHE: usize = 64;

/// A local libSQL database.
///
/// One connection serves every call; an async mutex serializes calls so transactions never
/// interleave (SQLite has one writer anyway). Statements are prepared once per SQL text
/// (SQLite recompiles them itself after a schema change).
pub struct LocalDatabase {
    path: String,
    // Kept alive for the connection's sake.
    _db: libsql::Database,
    conn: Mutex<Connection>,
}

/// The connection and its prepared statements.
struct Connection {
    conn: libsql::Connection,
    prepared: Vec<(String, libsql::Statement)>,
}

impl Connection {
    /// Runs `statement` through a cached prepared statement.
    async fn run(&mut self, statement: &Statement) -> Result<Rows, SqlError> {
        let index = match self
            .prepared
            .iter()
            .position(|(sql, _)| *sql == statement.sql)
        {
            Some(i) => i,
            None => {
                let prepared = self.conn.prepare(&statement.sql).await.map_err(sql_error)?;
                if self.prepared.len() >= STATEMENT_CACHE {
                    self.prepared.remove(0);
                }
                self.prepared.push((statement.sql.clone(), prepared));
                self.prepared.len() - 1
            }
        };
        let conn = &self.conn;
        let prepared = &self.prepared[index].1;
        prepared.reset();
        let result = collect(conn, prepared, statement).await;
        prepared.reset();
        result
    }
}

fn sql_error(e: libsql::Error) -> SqlError {
    // The primary result code decides what a caller can do: wait (busy, locked), repair
    // (corrupt, not a database) or fix the statement (everything else).
    let code = match &e {
        libsql::Error::SqliteFailure(code, _) => match code & 0xff {
            5 => "SQLITE_BUSY",
            6 => "SQLITE_LOCKED",
            11 => "SQLITE_CORRUPT",
            19 => "SQLITE_CONSTRAINT",
            26 => "SQLITE_NOTADB",
            _ => "SQLITE_ERROR",
        },
        _ => "SQLITE_ERROR",
    };
    SqlError {
        message: e.to_string(),
        code: Some(code.into()),
    }
}

async fn collect(
    conn: &libsql::Connection,
    prepared: &libsql::Statement,
    statement: &Statement,
) -> Result<Rows, SqlError> {
    let params: Vec<libsql::Value> = statement.params.iter().map(to_libsql).collect();
    let before = conn.total_changes();
    let mut rows = prepared
        .query(libsql::params::Params::Positional(params))
        .await
        .map_err(sql_error)?;
    let columns: Vec<String> = (0..rows.column_count())
        .map(|i| rows.column_name(i).unwrap_or_default().to_owned())
        .collect();
    let mut out = Vec::new();
    while let Some(row) = rows.next().await.map_err(sql_error)? {
        let mut values = Vec::with_capacity(columns.len());
        for i in 0..columns.len() as i32 {
            values.push(from_libsql(row.get_value(i).map_err(sql_error)?));
        }
        out.push(values);
    }
    let changed = conn.total_changes() != before;
    Ok(Rows {
        columns,
        rows: out,
        affected_row_count: if changed { conn.changes() } else { 0 },
        last_insert_rowid: changed.then(|| conn.last_insert_rowid()),
    })
}

/// Read-write, created if missing, and without SQLite's per-connection mutex
/// (`SQLITE_OPEN_NOMUTEX`, which `libsql::OpenFlags` does not name): the one connection is
/// only ever used under [`LocalDatabase`]'s own lock, so SQLite's lock around every call
/// (taken again for each statement FTS5 runs per matched row to read its length) only costs.
fn open_flags() -> libsql::OpenFlags {
    libsql::OpenFlags::default()
        | libsql::OpenFlags::from_bits_retain(libsql::ffi::SQLITE_OPEN_NOMUTEX)
}

/// How much of a database file SQLite maps into memory (`PRAGMA mmap_size`). Mapped pages
/// are read in place rather than copied in by one `read` call each; a hybrid search touches
/// a few hundred pages scattered over the file (its picked memories, their vectors, graph
/// rows), and at 10K memories those calls were a sixth of its time (1.79 to 1.52 ms p50).
/// The mapping takes address space, not memory; past this size the file is read as before.
pub const MMAP_BYTES: u64 = 1 << 30;

/// How long a statement waits for another connection's write lock before it fails as
/// busy (and is retried by the caller's write policy).
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

impl LocalDatabase {
    /// Sets how long a statement waits for another connection's write lock (default
    /// [`BUSY_TIMEOUT`]): a caller with a hard time cap of its own (a hook) waits less, so a
    /// lock held by another writer is reported as busy rather than as the cap running out.
    pub async fn set_busy_timeout(&self, timeout: Duration) -> Result<(), StoreError> {
        let conn = self.conn.lock().await;
        conn.conn
            .busy_timeout(timeout)
            .map_err(|e| StoreError::Engine(e.to_string()))
    }

    /// Opens (creating if needed) the database file at `path`; `":memory:"` opens a private
    /// in-memory database.
    pub async fn open(path: &str) -> Result<Self, StoreError> {
        let db = libsql::Builder::new_local(path)
            .flags(open_flags())
            .build()
            .await
            .map_err(|e| StoreError::Engine(format!("cannot open {path}: {e}")))?;
        let conn = db
            .connect()
            .map_err(|e| StoreError::Engine(format!("cannot connect to {path}: {e}")))?;
        conn.busy_timeout(BUSY_TIMEOUT)
            .map_err(|e| StoreError::Engine(e.to_string()))?;
        let local = LocalDatabase {
            path: path.to_owned(),
            _db: db,
            conn: Mutex::new(Connection {
                conn,
                prepared: Vec::new(),
            }),
        };
        if path != ":memory:" {
            // WAL lets readers in other processes proceed during a write; see [`MMAP_BYTES`].
            local
                .pipeline(&[
                    Statement::new("PRAGMA journal_mode = WAL"),
                    Statement::new("PRAGMA synchronous = NORMAL"),
                    Statement::new(format!("PRAGMA mmap_size = {MMAP_BYTES}")),
                ])
                .await?
                .into_iter()
                .collect::<Result<Vec<_>, _>>()?;
        }
        local
            .pipeline(&[Statement::new("PRAGMA foreign_keys = ON")])
            .await?
            .into_iter()
            .collect::<Result<Vec<_>, _>>()?;
        Ok(local)
    }

    /// The file path it was opened with.
    pub fn path(&self) -> &str {
        &self.path
    }
}

impl Database for LocalDatabase {
    async fn pipeline(
        &self,
        statements: &[Statement],
    ) -> Result<Vec<Result<Rows, SqlError>>, StoreError> {
        let mut conn = self.conn.lock().await;
        let mut out = Vec::with_capacity(statements.len());
        for statement in statements {
            out.push(conn.run(statement).await);
        }
        Ok(out)
    }

    async fn transaction(&self, statements: &[Statement]) -> Result<Vec<Rows>, StoreError> {
        let mut conn = self.conn.lock().await;
        conn.run(&Statement::new("BEGIN IMMEDIATE")).await?;
        let mut out = Vec::with_capacity(statements.len());
        for statement in statements {
            match conn.run(statement).await {
                Ok(rows) => out.push(rows),
                Err(error) => {
                    // The original error matters more than a failed rollback.
                    let _ = conn.run(&Statement::new("ROLLBACK")).await;
                    return Err(StoreError::Sql(error));
                }
            }
        }
        if let Err(error) = conn.run(&Statement::new("COMMIT")).await {
            let _ = conn.run(&Statement::new("ROLLBACK")).await;
            return Err(StoreError::Sql(error));
        }
        Ok(out)
    }

    fn describe(&self) -> String {
        format!("embedded libSQL file {}", self.path)
    }
}

/// Runs one statement on `conn` (prepared afresh) and collects its rows.
pub async fn run(conn: &libsql::Connection, statement: &Statement) -> Result<Rows, SqlError> {
    let prepared = conn.prepare(&statement.sql).await.map_err(sql_error)?;
    collect(conn, &prepared, statement).await
}

/// Converts engram's value to libsql's.
pub fn to_libsql(value: &Value) -> libsql::Value {
    match value {
        Value::Null => libsql::Value::Null,
        Value::Integer(v) => libsql::Value::Integer(*v),
        Value::Float(v) => libsql::Value::Real(*v),
        Value::Text(v) => libsql::Value::Text(v.clone()),
        Value::Blob(v) => libsql::Value::Blob(v.clone()),
    }
}

/// Converts libsql's value to engram's.
pub fn from_libsql(value: libsql::Value) -> Value {
    match value {
        libsql::Value::Null => Value::Null,
        libsql::Value::Integer(v) => Value::Integer(v),
        libsql::Value::Real(v) => Value::Float(v),
        libsql::Value::Text(v) => Value::Text(v),
        libsql::Value::Blob(v) => Value::Blob(v),
    }
}
