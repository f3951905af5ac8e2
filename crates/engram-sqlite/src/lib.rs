//! engram storage on plain SQLite through rusqlite: the in-wasm embedded engine for browsers
//! and other hosts with no server (SQLite compiled to wasm by `sqlite-wasm-rs`, FTS5
//! included), and natively the same code on a bundled SQLite.
//!
//! SQLite lacks libSQL's vector functions, so this backend registers `vector32`, `vector`,
//! `vector_extract` and `vector_distance_cos` as scalar functions with libSQL's semantics
//! (`F32_BLOB` layout, cosine distance); engram's SQL text is the same on every engine.
//! Without the vector index, nearest-neighbour queries run as `ORDER BY distance LIMIT k`.

#![warn(missing_docs)]

mod files;
mod functions;
#[cfg(all(target_family = "wasm", target_os = "unknown"))]
mod opfs;

use std::rc::Rc;
use std::time::Duration;

use engram_store::{Database, Rows, SqlError, Statement, StoreError, Value};
use rusqlite::types::{ToSqlOutput, ValueRef};

pub use files::{FileError, FileHandle, HostFiles};
pub use functions::register_vector_functions;

/// How many prepared statements are kept per connection: compiling the search's candidate
/// statement costs more than running it on a small database.
const STATEMENT_CACHE: usize = 64;

/// How long a connection waits for another connection's lock on a shared file before it
/// answers busy.
const BUSY_WAIT: Duration = Duration::from_secs(5);

/// A SQLite database: in memory, or a file where the platform has a file system.
pub struct SqliteDatabase {
    conn: rusqlite::Connection,
    name: String,
    /// The VFS the connection's file goes through; declared after `conn` so it outlives it.
    _vfs: Option<files::FilesVfs>,
}

impl SqliteDatabase {
    /// A private in-memory database.
    pub fn open_in_memory() -> Result<Self, StoreError> {
        let conn = rusqlite::Connection::open_in_memory().map_err(engine)?;
        Self::init(conn, ":memory:".to_owned(), None)
    }

    /// A database file (native hosts, or a wasm VFS registered by the host).
    pub fn open(path: &str) -> Result<Self, StoreError> {
        let conn = rusqlite::Connection::open(path).map_err(engine)?;
        Self::init(conn, path.to_owned(), None)
    }

    /// The database file at the absolute `path`, kept through the host's `files`: SQLite's
    /// rollback journal beside it, a lock file that lets connections in several processes
    /// take turns on it. A file in WAL mode (the engram CLI's) is opened exclusively: its
    /// index then lives in this connection's memory instead of a shared-memory file the
    /// host cannot map, and other connections are busy until this one closes.
    pub fn open_with_files(path: &str, files: Rc<dyn HostFiles>) -> Result<Self, StoreError> {
        let wal = files::in_wal_mode(&*files, path).map_err(StoreError::Engine)?;
        let vfs = files::register(files).map_err(StoreError::Engine)?;
        let conn = rusqlite::Connection::open_with_flags_and_vfs(path, file_flags(), vfs.name())
            .map_err(|e| match vfs.last_error() {
                Some(cause) => StoreError::Engine(format!("{e}: {cause}")),
                None => engine(e),
            })?;
        if wal {
            conn.execute_batch("PRAGMA locking_mode = EXCLUSIVE")
                .map_err(engine)?;
        }
        Self::init(conn, path.to_owned(), Some(vfs))
    }

    fn init(
        conn: rusqlite::Connection,
        name: String,
        vfs: Option<files::FilesVfs>,
    ) -> Result<Self, StoreError> {
        register_vector_functions(&conn).map_err(engine)?;
        conn.execute_batch("PRAGMA foreign_keys = ON; PRAGMA temp_store = MEMORY")
            .map_err(engine)?;
        conn.busy_timeout(BUSY_WAIT).map_err(engine)?;
        conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
        Ok(SqliteDatabase {
            conn,
            name,
            _vfs: vfs,
        })
    }

    fn run(&self, statement: &Statement) -> Result<Rows, SqlError> {
        let mut stmt = self
            .conn
            .prepare_cached(&statement.sql)
            .map_err(sql_error)?;
        let columns: Vec<String> = stmt.column_names().map(str::to_owned).collect();
        for (i, value) in statement.params.iter().enumerate() {
            stmt.raw_bind_parameter(i + 1, Bind(value))
                .map_err(sql_error)?;
        }
        let before = self.conn.total_changes();
        let mut rows = stmt.raw_query();
        let mut out = Vec::new();
        while let Some(row) = rows.next().map_err(sql_error)? {
            let mut values = Vec::with_capacity(columns.len());
            for i in 0..columns.len() {
                values.push(from_ref(row.get_ref(i).map_err(sql_error)?));
            }
            out.push(values);
        }
        drop(rows);
        let changed = self.conn.total_changes() != before;
        Ok(Rows {
            columns,
            rows: out,
            affected_row_count: if changed { self.conn.changes() } else { 0 },
            last_insert_rowid: changed.then(|| self.conn.last_insert_rowid()),
        })
    }
}

impl Database for SqliteDatabase {
    async fn pipeline(
        &self,
        statements: &[Statement],
    ) -> Result<Vec<Result<Rows, SqlError>>, StoreError> {
        Ok(statements.iter().map(|s| self.run(s)).collect())
    }

    async fn transaction(&self, statements: &[Statement]) -> Result<Vec<Rows>, StoreError> {
        self.run(&Statement::new("BEGIN IMMEDIATE"))?;
        let mut out = Vec::with_capacity(statements.len());
        for statement in statements {
            match self.run(statement) {
                Ok(rows) => out.push(rows),
                Err(error) => {
                    let _ = self.run(&Statement::new("ROLLBACK"));
                    return Err(StoreError::Sql(error));
                }
            }
        }
        if let Err(error) = self.run(&Statement::new("COMMIT")) {
            let _ = self.run(&Statement::new("ROLLBACK"));
            return Err(StoreError::Sql(error));
        }
        Ok(out)
    }

    fn describe(&self) -> String {
        format!("embedded SQLite {} (rusqlite)", self.name)
    }
}

/// How a database file is opened through a VFS: read and write, created if absent, without
/// SQLite's mutexes (the engine is single-threaded).
fn file_flags() -> rusqlite::OpenFlags {
    rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE
        | rusqlite::OpenFlags::SQLITE_OPEN_CREATE
        | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX
}

struct Bind<'a>(&'a Value);

impl rusqlite::ToSql for Bind<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::Borrowed(match self.0 {
            Value::Null => ValueRef::Null,
            Value::Integer(v) => ValueRef::Integer(*v),
            Value::Float(v) => ValueRef::Real(*v),
            Value::Text(v) => ValueRef::Text(v.as_bytes()),
            Value::Blob(v) => ValueRef::Blob(v),
        }))
    }
}

fn from_ref(value: ValueRef<'_>) -> Value {
    match value {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(v) => Value::Integer(v),
        ValueRef::Real(v) => Value::Float(v),
        ValueRef::Text(v) => Value::Text(String::from_utf8_lossy(v).into_owned()),
        ValueRef::Blob(v) => Value::Blob(v.to_vec()),
    }
}

fn sql_error(e: rusqlite::Error) -> SqlError {
    let code = match &e {
        rusqlite::Error::SqliteFailure(f, _) => match f.code {
            rusqlite::ErrorCode::ConstraintViolation => "SQLITE_CONSTRAINT",
            rusqlite::ErrorCode::DatabaseBusy => "SQLITE_BUSY",
            _ => "SQLITE_ERROR",
        },
        _ => "SQLITE_ERROR",
    };
    SqlError {
        message: e.to_string(),
        code: Some(code.to_owned()),
    }
}

fn engine(e: rusqlite::Error) -> StoreError {
    StoreError::Engine(e.to_string())
}
