//! engram on an embedded libSQL file, for the test binaries that use one. (Kept out of
//! `common`: the rusqlite test binary must not link libSQL's SQLite as well.)
#![allow(dead_code)]

use engram::{Engram, EngramConfig, Host};
use engram_libsql::LocalDatabase;

use crate::common::{temp_db, TempDb};

/// A fresh embedded libSQL file in the temp folder, and its path (which deletes the file when
/// dropped, after the database: bind them in this order).
pub async fn open_db(name: &str) -> (TempDb, LocalDatabase) {
    let path = temp_db(name);
    let db = LocalDatabase::open(path.to_str().expect("utf-8 temp path"))
        .await
        .expect("open");
    (path, db)
}

/// engram on `db` with the default project and the native host.
pub async fn open_engram(db: &LocalDatabase) -> Engram<&LocalDatabase> {
    Engram::open(db, EngramConfig::default(), Host::native())
        .await
        .expect("engram")
}
