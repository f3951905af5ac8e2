//! A database kept in the browser's origin-private file system: SQLite's OPFS
//! access-handle pool, which needs a dedicated worker and lets one tab at a time hold it.

use engram_store::{SqlError, StoreError};
use sqlite_wasm_rs::WasmOsCallback;
use sqlite_wasm_vfs::sahpool::{install, OpfsSAHError, OpfsSAHPoolCfgBuilder};

use crate::SqliteDatabase;

/// The VFS name and the OPFS folder engram's databases live in.
const POOL: &str = "engram-opfs";
const FOLDER: &str = ".engram";

impl SqliteDatabase {
    /// The database called `name` in this origin's OPFS (inside a dedicated worker).
    pub async fn open_opfs(name: &str) -> Result<Self, StoreError> {
        let config = OpfsSAHPoolCfgBuilder::new()
            .vfs_name(POOL)
            .directory(FOLDER)
            .build();
        install::<WasmOsCallback>(&config, false)
            .await
            .map_err(pool_error)?;
        let path = format!("/{}", name.trim_start_matches('/'));
        let conn = rusqlite::Connection::open_with_flags_and_vfs(&path, crate::file_flags(), POOL)
            .map_err(crate::engine)?;
        Self::init(conn, format!("opfs:{path}"), None)
    }
}

fn pool_error(error: OpfsSAHError) -> StoreError {
    match error {
        OpfsSAHError::NotSupported => StoreError::Engine(
            "a persistent database in a browser needs OPFS sync access handles, which only a \
             dedicated Worker in a secure context has: open engram inside a Worker, or leave \
             `path` out for an in-memory database"
                .to_owned(),
        ),
        // Another tab's or worker's pool holds the folder's access handles.
        OpfsSAHError::Opfs {
            operation, message, ..
        } if message.contains("NoModificationAllowed") || operation.contains("acquire") => {
            StoreError::Sql(SqlError {
                message: format!(
                    "the database is open in another tab or worker of this site ({operation}: \
                 {message}); close it there, or retry"
                ),
                code: Some("SQLITE_BUSY".to_owned()),
            })
        }
        other => StoreError::Engine(format!("opening the OPFS database: {other}")),
    }
}
