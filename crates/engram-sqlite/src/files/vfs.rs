//! The VFS itself: SQLite's file calls routed to [`HostFiles`], temporary files in memory.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::{AtomicU32, Ordering};

use rsqlite_vfs::{
    register_vfs, AccessMode, FileKind, LockLevel, MemChunksFile, OpenOptions, OpenRequest,
    OpenedFile, OsCallback, SQLiteIoMethods, SQLiteVfs, SyncOptions, VfsError, VfsErrorCode,
    VfsFile, VfsRegistration, VfsResult, VfsStore,
};

use super::lock::FileLock;
use super::{FileError, FileHandle, HostFiles};

/// Longest path SQLite may hand the VFS, journal suffixes included.
const MAX_PATH: i32 = 4096;

/// A registered VFS over one host's files, unregistered when dropped (after the connection
/// that uses it has closed).
pub struct FilesVfs {
    name: String,
    registration: Option<VfsRegistration<AppData>>,
    error: Rc<RefCell<Option<VfsError>>>,
}

impl FilesVfs {
    /// The name to open connections with.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The host's words for the last failed file call, which SQLite's own error omits.
    pub fn last_error(&self) -> Option<String> {
        self.error.borrow().as_ref().map(|e| e.message().to_owned())
    }
}

impl Drop for FilesVfs {
    // Unregistering a VFS is an FFI call into SQLite.
    #[allow(unsafe_code)]
    fn drop(&mut self) {
        if let Some(registration) = self.registration.take() {
            // SAFETY: the owner drops the connection before this, so no file of this VFS
            // is open, and the engine is single-threaded.
            if let Err((registration, _)) = unsafe { registration.unregister() } {
                let _ = registration.into_raw();
            }
        }
    }
}

/// Registers a VFS over `files` under a fresh name.
// Registering a VFS hands SQLite raw callbacks; rsqlite-vfs builds them from safe traits.
#[allow(unsafe_code)]
pub fn register(files: Rc<dyn HostFiles>) -> Result<FilesVfs, String> {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let name = format!("engram-files-{}", NEXT.fetch_add(1, Ordering::Relaxed));
    let error = Rc::<RefCell<Option<VfsError>>>::default();
    let data = AppData {
        files,
        os: host_os(),
        error: error.clone(),
    };
    // SAFETY: the VFS's callbacks only touch its own app data and the files SQLite opened
    // through it; registration happens on the engine's one thread.
    let registration = unsafe { register_vfs::<Io, Vfs>(&name, data, false) }
        .map_err(|e| format!("registering the file VFS: {e}"))?;
    Ok(FilesVfs {
        name,
        registration: Some(registration),
        error,
    })
}

#[cfg(all(target_family = "wasm", target_os = "unknown"))]
fn host_os() -> Rc<dyn OsCallback> {
    Rc::new(sqlite_wasm_rs::WasmOsCallback)
}

#[cfg(not(all(target_family = "wasm", target_os = "unknown")))]
fn host_os() -> Rc<dyn OsCallback> {
    Rc::new(StdOs)
}

/// Sleep, time and randomness from the standard library, for native builds.
#[cfg(not(all(target_family = "wasm", target_os = "unknown")))]
struct StdOs;

#[cfg(not(all(target_family = "wasm", target_os = "unknown")))]
impl OsCallback for StdOs {
    fn sleep(&self, duration: std::time::Duration) {
        std::thread::sleep(duration);
    }

    fn random(&self, buf: &mut [u8]) -> usize {
        // SQLite only seeds temporary names with this; the clock's nanoseconds suffice.
        let mut seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0x9e37_79b9, |d| d.as_nanos() as u64);
        for byte in buf.iter_mut() {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            *byte = seed as u8;
        }
        buf.len()
    }

    fn epoch_timestamp_in_ms(&self) -> VfsResult<i64> {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .map_err(|_| VfsError::new(VfsErrorCode::Error, "clock before 1970".into()))
    }
}

#[derive(Clone)]
struct AppData {
    files: Rc<dyn HostFiles>,
    os: Rc<dyn OsCallback>,
    error: Rc<RefCell<Option<VfsError>>>,
}

/// A file SQLite opened: a host file (the database, its journal) or a temporary one.
enum DbFile {
    Host(HostFile),
    Memory(MemChunksFile),
}

struct HostFile {
    files: Rc<dyn HostFiles>,
    handle: FileHandle,
    /// Only the main database takes locks.
    lock: Option<FileLock>,
}

impl HostFile {
    fn lock(&mut self) -> Option<&mut FileLock> {
        self.lock.as_mut()
    }
}

impl VfsFile for DbFile {
    fn read(&mut self, buf: &mut [u8], offset: u64) -> VfsResult<usize> {
        match self {
            DbFile::Host(file) => {
                let mut done = 0;
                while done < buf.len() {
                    let n = file
                        .files
                        .read_at(file.handle, &mut buf[done..], offset + done as u64)
                        .map_err(|e| io(VfsErrorCode::IoRead, e))?;
                    if n == 0 {
                        break;
                    }
                    done += n;
                }
                Ok(done)
            }
            DbFile::Memory(file) => file.read(buf, offset),
        }
    }

    fn write(&mut self, buf: &[u8], offset: u64) -> VfsResult<()> {
        match self {
            DbFile::Host(file) => file
                .files
                .write_at(file.handle, buf, offset)
                .map_err(|e| io(VfsErrorCode::IoWrite, e)),
            DbFile::Memory(file) => file.write(buf, offset),
        }
    }

    fn truncate(&mut self, size: u64) -> VfsResult<()> {
        match self {
            DbFile::Host(file) => file
                .files
                .truncate(file.handle, size)
                .map_err(|e| io(VfsErrorCode::IoTruncate, e)),
            DbFile::Memory(file) => file.truncate(size),
        }
    }

    fn sync(&mut self, options: SyncOptions) -> VfsResult<()> {
        match self {
            DbFile::Host(file) => file
                .files
                .sync(file.handle)
                .map_err(|e| io(VfsErrorCode::IoSync, e)),
            DbFile::Memory(file) => file.sync(options),
        }
    }

    fn size(&self) -> VfsResult<u64> {
        match self {
            DbFile::Host(file) => file
                .files
                .size(file.handle)
                .map_err(|e| io(VfsErrorCode::IoStat, e)),
            DbFile::Memory(file) => file.size(),
        }
    }

    fn lock(&mut self, level: LockLevel) -> VfsResult<()> {
        match self {
            DbFile::Host(file) => file.lock().map_or(Ok(()), |lock| lock.lock(level)),
            DbFile::Memory(file) => file.lock(level),
        }
    }

    fn unlock(&mut self, level: LockLevel) -> VfsResult<()> {
        match self {
            DbFile::Host(file) => file.lock().map_or(Ok(()), |lock| lock.unlock(level)),
            DbFile::Memory(file) => file.unlock(level),
        }
    }

    fn check_reserved_lock(&self) -> VfsResult<bool> {
        match self {
            DbFile::Host(file) => file.lock.as_ref().map_or(Ok(false), FileLock::reserved),
            DbFile::Memory(file) => file.check_reserved_lock(),
        }
    }
}

#[derive(Clone, Copy, Default)]
struct Store;

impl VfsStore for Store {
    type File = DbFile;
    type AppData = AppData;

    fn record_error(data: &AppData, error: VfsError) {
        data.error.replace(Some(error));
    }

    fn last_error(data: &AppData) -> Option<VfsError> {
        data.error.borrow().clone()
    }

    fn open_file(data: &AppData, request: OpenRequest<'_>) -> VfsResult<OpenedFile<DbFile>> {
        let options = request.options;
        let Some(filename) = request.filename else {
            return Ok(OpenedFile {
                file: DbFile::Memory(MemChunksFile::default()),
                access: options.access(),
            });
        };
        let path = filename.path();
        let cant_open = |e: FileError| io(VfsErrorCode::CantOpen, e);
        if options.exclusive() && data.files.exists(path).map_err(cant_open)? {
            return Err(VfsError::new(
                VfsErrorCode::CantOpen,
                format!("{path} already exists").into(),
            ));
        }
        let handle = data.files.open(path, options.create()).map_err(cant_open)?;
        let lock = (options.kind() == Some(FileKind::MainDb))
            .then(|| FileLock::new(data.files.clone(), path));
        Ok(OpenedFile {
            file: DbFile::Host(HostFile {
                files: data.files.clone(),
                handle,
                lock,
            }),
            access: options.access(),
        })
    }

    fn close_file(
        data: &AppData,
        name: Option<&str>,
        file: DbFile,
        options: OpenOptions,
    ) -> VfsResult<()> {
        let DbFile::Host(mut file) = file else {
            return Ok(());
        };
        if let Some(lock) = file.lock.as_mut() {
            lock.release();
        }
        let closed = data
            .files
            .close(file.handle)
            .map_err(|e| io(VfsErrorCode::IoClose, e));
        if let (true, Some(name)) = (options.delete_on_close(), name) {
            data.files
                .remove(name)
                .map_err(|e| io(VfsErrorCode::IoDelete, e))?;
        }
        closed
    }

    fn access(data: &AppData, name: &str, _mode: AccessMode) -> VfsResult<bool> {
        data.files
            .exists(name)
            .map_err(|e| io(VfsErrorCode::IoAccess, e))
    }

    fn full_pathname(_data: &AppData, name: &str) -> VfsResult<String> {
        // The host hands absolute paths already; SQLite derives the journal's from this.
        Ok(name.to_owned())
    }

    fn delete_file(data: &AppData, name: &str, _sync_dir: bool) -> VfsResult<()> {
        data.files
            .remove(name)
            .map_err(|e| io(VfsErrorCode::IoDelete, e))
    }
}

#[derive(Clone, Copy, Default)]
struct Io;

impl SQLiteIoMethods for Io {
    type Store = Store;
}

#[derive(Clone, Copy, Default)]
struct Vfs;

impl SQLiteVfs<Io> for Vfs {
    type Os = dyn OsCallback;

    fn os(data: &AppData) -> &Self::Os {
        &*data.os
    }

    const MAX_PATH_SIZE: i32 = MAX_PATH;
}

fn io(code: VfsErrorCode, error: FileError) -> VfsError {
    VfsError::new(code, error.message.into())
}
