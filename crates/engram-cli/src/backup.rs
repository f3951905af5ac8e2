//! Rolling backups of the local database file, and the guard that refuses to start over
//! on a file that lost its memories.
//!
//! Once a day (at the first command that opens the file) the database is copied with
//! `VACUUM INTO` (a consistent snapshot, even while another process writes) to
//! `<db>.backups/<time>-n<memories>.db`; the newest [`KEEP`] are kept. The memory count in
//! the name is what the guard compares against without opening the backup: rows of
//! `memories` are never deleted (forgetting keeps the row), so a file holding fewer rows
//! than its newest backup has lost data, and engram says so instead of writing into it.

use std::path::{Path, PathBuf};

use engram::{Database, EngramError};
use engram_store::{Statement, StoreError, Value};

use crate::CliError;

/// How many backups are kept.
pub const KEEP: usize = 3;
/// How old the newest backup may be before the next command makes another.
const EVERY_MILLIS: i64 = 24 * 60 * 60 * 1000;

/// One backup file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Backup {
    /// Its path.
    pub path: PathBuf,
    /// When it was taken (Unix milliseconds).
    pub taken_at_ms: i64,
    /// Memory rows it holds.
    pub memories: u64,
}

/// The folder the backups of `db` go to.
pub fn folder(db: &Path) -> PathBuf {
    let mut name = db.as_os_str().to_owned();
    name.push(".backups");
    PathBuf::from(name)
}

/// The backups of `db`, newest first.
pub fn list(db: &Path) -> Vec<Backup> {
    let Ok(entries) = std::fs::read_dir(folder(db)) else {
        return Vec::new();
    };
    let mut backups: Vec<Backup> = entries
        .filter_map(Result::ok)
        .filter_map(|entry| parse_name(&entry.path()))
        .collect();
    backups.sort_by_key(|b| std::cmp::Reverse(b.taken_at_ms));
    backups
}

/// `<millis>-n<memories>.db`.
fn parse_name(path: &Path) -> Option<Backup> {
    let stem = path.file_name()?.to_str()?.strip_suffix(".db")?;
    let (millis, memories) = stem.split_once("-n")?;
    Some(Backup {
        path: path.to_owned(),
        taken_at_ms: millis.parse().ok()?,
        memories: memories.parse().ok()?,
    })
}

/// Before the file is opened (opening writes a header to an empty file): refuses a
/// missing or empty file while a backup holds memories.
pub fn guard_file(path: &Path) -> Result<(), CliError> {
    let empty = std::fs::metadata(path).map_or(true, |m| m.len() == 0);
    match list(path).into_iter().next() {
        Some(newest) if empty && newest.memories > 0 => Err(lost_data(path, 0, &newest)),
        _ => Ok(()),
    }
}

/// The refusal of a file that holds `rows` memories when `newest` holds more.
fn lost_data(path: &Path, rows: u64, newest: &Backup) -> CliError {
    CliError::Engram(EngramError::Store(StoreError::Integrity(format!(
        "{} holds {rows} memories but its backup {} holds {}: the file lost data. \
         Nothing was written. Run `engram repair --restore` to bring the backup back \
         (the current file is kept beside it), or move {} away to start over.",
        path.display(),
        newest.path.display(),
        newest.memories,
        folder(path).display(),
    ))))
}

/// Refuses a database file that holds fewer memory rows than its newest backup (an
/// emptied, truncated or replaced file): nothing is written to it.
pub async fn guard<D: Database>(db: &D, path: &Path) -> Result<(), CliError> {
    let Some(newest) = list(path).into_iter().next() else {
        return Ok(());
    };
    let rows = memory_rows(db).await?;
    if rows < newest.memories {
        return Err(lost_data(path, rows, &newest));
    }
    Ok(())
}

/// Makes a backup when the newest is older than a day (or there is none) and the file
/// holds memories; keeps the newest [`KEEP`]. Returns the new backup, if one was made.
pub async fn rotate<D: Database>(
    db: &D,
    path: &Path,
    now_ms: i64,
) -> Result<Option<Backup>, CliError> {
    let backups = list(path);
    if backups
        .first()
        .is_some_and(|b| now_ms - b.taken_at_ms < EVERY_MILLIS)
    {
        return Ok(None);
    }
    if memory_rows(db).await? == 0 {
        return Ok(None);
    }
    take(db, path, now_ms).await.map(Some)
}

/// Makes a backup now (`engram backup`), keeping the newest [`KEEP`].
pub async fn take<D: Database>(db: &D, path: &Path, now_ms: i64) -> Result<Backup, CliError> {
    let memories = memory_rows(db).await?;
    let dir = folder(path);
    std::fs::create_dir_all(&dir)
        .map_err(|e| CliError::Usage(format!("cannot create {}: {e}", dir.display())))?;
    let target = dir.join(format!("{now_ms}-n{memories}.db"));
    let partial = dir.join(format!("{now_ms}.partial"));
    let _ = std::fs::remove_file(&partial);
    let into = Statement::with_params(
        "VACUUM INTO ?1",
        vec![Value::from(partial.to_string_lossy().as_ref())],
    );
    db.pipeline(&[into])
        .await
        .map_err(EngramError::from)?
        .into_iter()
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| EngramError::from(StoreError::Sql(e)))?;
    // Only a complete copy gets a backup's name.
    std::fs::rename(&partial, &target)
        .map_err(|e| CliError::Usage(format!("cannot write {}: {e}", target.display())))?;
    for old in list(path).into_iter().skip(KEEP) {
        let _ = std::fs::remove_file(old.path);
    }
    Ok(Backup {
        path: target,
        taken_at_ms: now_ms,
        memories,
    })
}

/// Puts `backup` (the newest when `None`) in place of the database file; the file it
/// replaces is kept as `<db>.damaged-<time>` with its `-wal` and `-shm`.
pub fn restore(path: &Path, backup: Option<&Path>, now_ms: i64) -> Result<Backup, CliError> {
    let chosen = match backup {
        Some(file) => parse_name(file).unwrap_or(Backup {
            path: file.to_owned(),
            taken_at_ms: 0,
            memories: 0,
        }),
        None => list(path).into_iter().next().ok_or_else(|| {
            CliError::Usage(format!(
                "no backup of {} in {}",
                path.display(),
                folder(path).display()
            ))
        })?,
    };
    if !chosen.path.is_file() {
        return Err(CliError::Usage(format!(
            "no backup at {}",
            chosen.path.display()
        )));
    }
    for suffix in ["", "-wal", "-shm"] {
        let mut from = path.as_os_str().to_owned();
        from.push(suffix);
        let from = PathBuf::from(from);
        if from.exists() {
            let mut aside = path.as_os_str().to_owned();
            aside.push(format!(".damaged-{now_ms}{suffix}"));
            std::fs::rename(&from, PathBuf::from(aside)).map_err(|e| {
                CliError::Usage(format!("cannot move {} aside: {e}", from.display()))
            })?;
        }
    }
    std::fs::copy(&chosen.path, path)
        .map_err(|e| CliError::Usage(format!("cannot copy {}: {e}", chosen.path.display())))?;
    Ok(chosen)
}

/// Rows of `memories`, forgotten ones included (0 before the schema exists).
async fn memory_rows<D: Database>(db: &D) -> Result<u64, CliError> {
    let results = db
        .pipeline(&[Statement::new("SELECT count(*) FROM memories")])
        .await
        .map_err(EngramError::from)?;
    let count = match results.into_iter().next() {
        Some(Ok(rows)) => rows
            .rows
            .first()
            .and_then(|r| r.first())
            .and_then(|v| v.as_i64("count").ok())
            .unwrap_or(0),
        _ => 0,
    };
    Ok(u64::try_from(count).unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backup_names_carry_time_and_count() {
        let backup = parse_name(Path::new("/x/e.db.backups/1764640000000-n200.db")).unwrap();
        assert_eq!(backup.taken_at_ms, 1_764_640_000_000);
        assert_eq!(backup.memories, 200);
        assert!(parse_name(Path::new("/x/e.db.backups/1764640000000.partial")).is_none());
        assert!(parse_name(Path::new("/x/e.db.backups/notes.txt")).is_none());
    }
}
