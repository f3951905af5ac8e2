//! The lock file beside a database: held from a connection's first shared lock to its
//! last unlock, so one connection at a time reads or writes the file.

use std::rc::Rc;

use rsqlite_vfs::{LockLevel, VfsError, VfsErrorCode, VfsResult};

use super::HostFiles;

/// One connection's hold on `<db>.lock`.
pub(super) struct FileLock {
    files: Rc<dyn HostFiles>,
    path: String,
    owner: String,
    level: LockLevel,
    held: bool,
}

impl FileLock {
    /// The lock for the database at `db_path`, not yet taken.
    pub(super) fn new(files: Rc<dyn HostFiles>, db_path: &str) -> Self {
        let owner = files.owner();
        FileLock {
            files,
            path: format!("{db_path}.lock"),
            owner,
            level: LockLevel::None,
            held: false,
        }
    }

    /// Raises this connection's lock to `level`, taking the lock file first if needed.
    pub(super) fn lock(&mut self, level: LockLevel) -> VfsResult<()> {
        if level > LockLevel::None && !self.held {
            self.take()?;
        }
        self.level = self.level.max(level);
        Ok(())
    }

    /// Lowers this connection's lock to `level`; at none the lock file goes.
    pub(super) fn unlock(&mut self, level: LockLevel) -> VfsResult<()> {
        self.level = self.level.min(level);
        if self.level == LockLevel::None && self.held {
            self.files
                .remove(&self.path)
                .map_err(|e| io(VfsErrorCode::IoUnlock, e))?;
            self.held = false;
        }
        Ok(())
    }

    /// Whether any connection holds a reserved (write) lock: ours, or another's lock file.
    pub(super) fn reserved(&self) -> VfsResult<bool> {
        if self.held {
            return Ok(self.level >= LockLevel::Reserved);
        }
        self.files
            .exists(&self.path)
            .map_err(|e| io(VfsErrorCode::IoCheckReservedLock, e))
    }

    /// Releases the lock file if this connection still holds it.
    pub(super) fn release(&mut self) {
        if self.held {
            let _ = self.files.remove(&self.path);
            self.held = false;
        }
        self.level = LockLevel::None;
    }

    fn take(&mut self) -> VfsResult<()> {
        if self.try_create()? {
            return Ok(());
        }
        // A lock file left by a process that is gone (it crashed mid-transaction) is
        // taken over once; SQLite then rolls back its hot journal.
        let holder = self
            .files
            .read_text(&self.path)
            .map_err(|e| io(VfsErrorCode::IoLock, e))?;
        let stale = holder.is_some_and(|holder| {
            let holder = holder.trim();
            !holder.is_empty() && holder != self.owner && !self.files.owner_alive(holder)
        });
        if stale {
            self.files
                .remove(&self.path)
                .map_err(|e| io(VfsErrorCode::IoLock, e))?;
            if self.try_create()? {
                return Ok(());
            }
        }
        Err(VfsError::new(
            VfsErrorCode::Busy,
            format!("{} is held by another connection", self.path).into(),
        ))
    }

    fn try_create(&mut self) -> VfsResult<bool> {
        let created = self
            .files
            .create_new(&self.path, &self.owner)
            .map_err(|e| io(VfsErrorCode::IoLock, e))?;
        self.held = created;
        Ok(created)
    }
}

impl Drop for FileLock {
    fn drop(&mut self) {
        self.release();
    }
}

fn io(code: VfsErrorCode, error: super::FileError) -> VfsError {
    VfsError::new(code, error.message.into())
}
