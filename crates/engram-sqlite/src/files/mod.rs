//! A database file kept through the host's own file calls: SQLite's VFS over a small
//! capability ([`HostFiles`]) the host implements — Node's `fs`, or `std::fs` — so the
//! in-wasm engine keeps a real file with SQLite's rollback journal.
//!
//! Locking is a lock file beside the database (`<db>.lock`, holding its owner): taken
//! exclusively from the first shared lock to the last unlock, so connections in different
//! processes take turns instead of corrupting the file. A connection that finds it held
//! waits (the busy timeout) and then answers `SQLITE_BUSY`; a lock file whose owner is
//! gone is taken over. The host has no shared memory to map, so a file in WAL mode is
//! opened in exclusive locking mode, holding the lock file until it closes.

mod lock;
mod vfs;

pub use vfs::{register, FilesVfs};

/// Whether the database at `path` is in WAL mode: its header's read and write versions
/// (bytes 18 and 19) are 2. A file that does not exist yet, or is shorter, is not.
pub fn in_wal_mode(files: &dyn HostFiles, path: &str) -> Result<bool, String> {
    if !files.exists(path).map_err(|e| e.message)? {
        return Ok(false);
    }
    let handle = files.open(path, false).map_err(|e| e.message)?;
    let mut header = [0u8; 20];
    let read = files.read_at(handle, &mut header, 0);
    let _ = files.close(handle);
    let read = read.map_err(|e| e.message)?;
    Ok(read == header.len() && header[18] == 2 && header[19] == 2)
}

/// A failed file call, with the host's words for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileError {
    /// What went wrong, e.g. `EACCES: permission denied, open '/x/db'`.
    pub message: String,
}

impl FileError {
    /// An error with `message`.
    pub fn new(message: impl Into<String>) -> Self {
        FileError {
            message: message.into(),
        }
    }
}

impl std::fmt::Display for FileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// An open file, as the host numbers it.
pub type FileHandle = u32;

/// The synchronous file calls the database file needs; paths are absolute.
pub trait HostFiles {
    /// Opens `path` for reading and writing, creating it empty if absent and `create`.
    fn open(&self, path: &str, create: bool) -> Result<FileHandle, FileError>;
    /// Reads into `buf` from `offset`; fewer bytes than asked only at the end of the file.
    fn read_at(&self, file: FileHandle, buf: &mut [u8], offset: u64) -> Result<usize, FileError>;
    /// Writes all of `data` at `offset`.
    fn write_at(&self, file: FileHandle, data: &[u8], offset: u64) -> Result<(), FileError>;
    /// Cuts or extends the file to `size` bytes.
    fn truncate(&self, file: FileHandle, size: u64) -> Result<(), FileError>;
    /// The file's size in bytes.
    fn size(&self, file: FileHandle) -> Result<u64, FileError>;
    /// Flushes the file to stable storage.
    fn sync(&self, file: FileHandle) -> Result<(), FileError>;
    /// Closes the file.
    fn close(&self, file: FileHandle) -> Result<(), FileError>;
    /// Whether `path` exists.
    fn exists(&self, path: &str) -> Result<bool, FileError>;
    /// Removes `path`; an absent file is not an error.
    fn remove(&self, path: &str) -> Result<(), FileError>;
    /// Creates `path` holding `contents` only if it does not exist yet; `false` if it does.
    fn create_new(&self, path: &str, contents: &str) -> Result<bool, FileError>;
    /// The text of `path`, or `None` when it does not exist.
    fn read_text(&self, path: &str) -> Result<Option<String>, FileError>;
    /// Who this process is, as written into lock files (e.g. `pid@host`).
    fn owner(&self) -> String;
    /// Whether the process `owner` names may still be running; `true` when unsure.
    fn owner_alive(&self, owner: &str) -> bool;
}
