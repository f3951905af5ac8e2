//! The file VFS over real files: what one connection writes another (standing in for
//! another process, with its own lock owner) reads after a reopen; a held lock makes the
//! other wait and then answer busy; a lock left by a process that is gone is taken over.
#![cfg(not(target_family = "wasm"))]

use std::cell::RefCell;
use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Read, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use engram_sqlite::{FileError, FileHandle, HostFiles, SqliteDatabase};
use engram_store::{Database, Statement, Value};
use futures::executor::block_on;

/// `HostFiles` on `std::fs`, as one process named `owner`; owners named `gone-*` are
/// processes that no longer run.
struct StdFiles {
    owner: String,
    open: RefCell<HashMap<FileHandle, File>>,
    next: RefCell<FileHandle>,
}

impl StdFiles {
    fn new(owner: &str) -> Rc<Self> {
        Rc::new(StdFiles {
            owner: owner.to_owned(),
            open: RefCell::default(),
            next: RefCell::new(1),
        })
    }

    fn with<T>(
        &self,
        file: FileHandle,
        f: impl FnOnce(&File) -> std::io::Result<T>,
    ) -> Result<T, FileError> {
        let open = self.open.borrow();
        let file = open
            .get(&file)
            .ok_or_else(|| FileError::new("bad handle"))?;
        f(file).map_err(err)
    }
}

fn err(e: std::io::Error) -> FileError {
    FileError::new(e.to_string())
}

impl HostFiles for StdFiles {
    fn open(&self, path: &str, create: bool) -> Result<FileHandle, FileError> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(create)
            .truncate(false)
            .open(path)
            .map_err(err)?;
        let handle = *self.next.borrow();
        *self.next.borrow_mut() += 1;
        self.open.borrow_mut().insert(handle, file);
        Ok(handle)
    }
    fn read_at(&self, file: FileHandle, buf: &mut [u8], offset: u64) -> Result<usize, FileError> {
        self.with(file, |f| f.read_at(buf, offset))
    }
    fn write_at(&self, file: FileHandle, data: &[u8], offset: u64) -> Result<(), FileError> {
        self.with(file, |f| f.write_all_at(data, offset))
    }
    fn truncate(&self, file: FileHandle, size: u64) -> Result<(), FileError> {
        self.with(file, |f| f.set_len(size))
    }
    fn size(&self, file: FileHandle) -> Result<u64, FileError> {
        self.with(file, |f| f.metadata().map(|m| m.len()))
    }
    fn sync(&self, file: FileHandle) -> Result<(), FileError> {
        self.with(file, File::sync_all)
    }
    fn close(&self, file: FileHandle) -> Result<(), FileError> {
        self.open.borrow_mut().remove(&file);
        Ok(())
    }
    fn exists(&self, path: &str) -> Result<bool, FileError> {
        Ok(Path::new(path).exists())
    }
    fn remove(&self, path: &str) -> Result<(), FileError> {
        match std::fs::remove_file(path) {
            Err(e) if e.kind() != ErrorKind::NotFound => Err(err(e)),
            _ => Ok(()),
        }
    }
    fn create_new(&self, path: &str, contents: &str) -> Result<bool, FileError> {
        match OpenOptions::new().write(true).create_new(true).open(path) {
            Ok(mut file) => file
                .write_all(contents.as_bytes())
                .map(|()| true)
                .map_err(err),
            Err(e) if e.kind() == ErrorKind::AlreadyExists => Ok(false),
            Err(e) => Err(err(e)),
        }
    }
    fn read_text(&self, path: &str) -> Result<Option<String>, FileError> {
        let mut text = String::new();
        match File::open(path) {
            Ok(mut file) => file
                .read_to_string(&mut text)
                .map(|_| Some(text))
                .map_err(err),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
            Err(e) => Err(err(e)),
        }
    }
    fn owner(&self) -> String {
        self.owner.clone()
    }
    fn owner_alive(&self, owner: &str) -> bool {
        !owner.starts_with("gone-")
    }
}

/// A fresh folder for one test, removed when dropped.
struct Folder(PathBuf);

impl Folder {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("engram-files-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Folder(dir)
    }
    fn db(&self) -> String {
        self.0.join("memory.db").to_string_lossy().into_owned()
    }
}

impl Drop for Folder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn open(path: &str, owner: &str) -> SqliteDatabase {
    SqliteDatabase::open_with_files(path, StdFiles::new(owner)).unwrap()
}

fn sql(db: &SqliteDatabase, text: &str) -> Result<Vec<Vec<Value>>, String> {
    let mut results = block_on(db.pipeline(&[Statement::new(text)])).map_err(|e| e.to_string())?;
    results
        .remove(0)
        .map(|rows| rows.rows)
        .map_err(|e| format!("{} {:?}", e.message, e.code))
}

#[test]
fn what_one_connection_writes_survives_a_reopen_and_another_owner_reads_it() {
    let folder = Folder::new("reopen");
    let path = folder.db();
    {
        let db = open(&path, "first");
        sql(&db, "CREATE TABLE notes (body TEXT)").unwrap();
        block_on(db.transaction(&[
            Statement::new("INSERT INTO notes VALUES ('one')"),
            Statement::new("INSERT INTO notes VALUES ('two')"),
        ]))
        .unwrap();
    }
    assert!(Path::new(&path).exists(), "the database is a real file");
    assert!(
        !Path::new(&format!("{path}.lock")).exists(),
        "no lock is left behind"
    );
    assert!(
        !Path::new(&format!("{path}-journal")).exists(),
        "no journal is left behind"
    );

    let db = open(&path, "second");
    let rows = sql(&db, "SELECT body FROM notes ORDER BY body").unwrap();
    assert_eq!(
        rows,
        vec![
            vec![Value::Text("one".into())],
            vec![Value::Text("two".into())]
        ]
    );
    assert_eq!(
        sql(&db, "PRAGMA integrity_check").unwrap(),
        vec![vec![Value::Text("ok".into())]]
    );

    // The file is plain SQLite: the native engine reads the same rows.
    drop(db);
    let native = SqliteDatabase::open(&path).unwrap();
    assert_eq!(
        sql(&native, "SELECT count(*) FROM notes").unwrap(),
        vec![vec![Value::Integer(2)]]
    );
}

#[test]
fn a_held_write_lock_makes_another_owner_wait_then_answer_busy() {
    let folder = Folder::new("busy");
    let path = folder.db();
    let writer = open(&path, "writer");
    sql(&writer, "CREATE TABLE notes (body TEXT)").unwrap();
    let other = open(&path, "other");
    sql(&other, "PRAGMA busy_timeout = 20").unwrap();

    sql(&writer, "BEGIN IMMEDIATE").unwrap();
    sql(&writer, "INSERT INTO notes VALUES ('pending')").unwrap();
    let refused = sql(&other, "INSERT INTO notes VALUES ('blocked')").unwrap_err();
    assert!(refused.contains("SQLITE_BUSY"), "{refused}");
    sql(&writer, "COMMIT").unwrap();

    sql(&other, "INSERT INTO notes VALUES ('after')").unwrap();
    let rows = sql(&writer, "SELECT body FROM notes ORDER BY rowid").unwrap();
    assert_eq!(
        rows,
        vec![
            vec![Value::Text("pending".into())],
            vec![Value::Text("after".into())]
        ]
    );
}

#[test]
fn a_lock_left_by_a_process_that_is_gone_is_taken_over_and_a_live_one_is_not() {
    let folder = Folder::new("stale");
    let path = folder.db();
    let lock = format!("{path}.lock");
    let db = open(&path, "me");
    sql(&db, "CREATE TABLE notes (body TEXT)").unwrap();
    sql(&db, "PRAGMA busy_timeout = 20").unwrap();

    std::fs::write(&lock, "gone-1234@host").unwrap();
    sql(&db, "INSERT INTO notes VALUES ('after a crash')").unwrap();
    assert!(!Path::new(&lock).exists());

    std::fs::write(&lock, "4321@host").unwrap();
    let refused = sql(&db, "SELECT count(*) FROM notes").unwrap_err();
    assert!(refused.contains("SQLITE_BUSY"), "{refused}");
    std::fs::remove_file(&lock).unwrap();
    assert_eq!(
        sql(&db, "SELECT count(*) FROM notes").unwrap(),
        vec![vec![Value::Integer(1)]]
    );
}

#[test]
fn the_storage_suite_passes_on_a_file_through_the_vfs() {
    let folder = Folder::new("suite");
    let db = open(&folder.db(), "suite");
    block_on(engram_conformance::storage_suite(&db, "files")).unwrap();
}

#[test]
fn a_file_in_wal_mode_opens_exclusively_and_keeps_its_rows() {
    let folder = Folder::new("wal");
    let path = folder.db();
    {
        let native = SqliteDatabase::open(&path).unwrap();
        sql(&native, "PRAGMA journal_mode = WAL").unwrap();
        sql(&native, "CREATE TABLE notes (body TEXT)").unwrap();
        sql(&native, "INSERT INTO notes VALUES ('written in WAL mode')").unwrap();
    }
    let db = open(&path, "first");
    assert_eq!(
        sql(&db, "SELECT body FROM notes").unwrap(),
        vec![vec![Value::Text("written in WAL mode".into())]]
    );
    sql(&db, "INSERT INTO notes VALUES ('and through the VFS')").unwrap();
    // Exclusive: the lock stays with the first connection until it closes.
    let other = open(&path, "second");
    sql(&other, "PRAGMA busy_timeout = 20").unwrap();
    let refused = sql(&other, "SELECT count(*) FROM notes").unwrap_err();
    assert!(refused.contains("SQLITE_BUSY"), "{refused}");
    drop(db);
    assert_eq!(
        sql(&other, "SELECT count(*) FROM notes").unwrap(),
        vec![vec![Value::Integer(2)]]
    );
    drop(other);
    let native = SqliteDatabase::open(&path).unwrap();
    assert_eq!(
        sql(&native, "PRAGMA integrity_check").unwrap(),
        vec![vec![Value::Text("ok".into())]]
    );
    assert_eq!(
        sql(&native, "SELECT count(*) FROM notes").unwrap(),
        vec![vec![Value::Integer(2)]]
    );
}
