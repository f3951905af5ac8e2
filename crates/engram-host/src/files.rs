//! The optional file probe: whether a file a memory cites still exists.

/// Tells whether project files exist. Hosts with a file system (the CLI, a component with
/// a preopened directory) give one; without it engram relies on the code graph alone.
pub trait FileProbe {
    /// Whether `path` (as a memory cites it: relative to the project root, or absolute)
    /// names an existing file; `None` when the probe cannot tell (a path outside the
    /// root, a folder that is not there either, a permission error), which never counts
    /// as missing.
    fn exists(&self, path: &str) -> Option<bool>;
}

/// A probe over a directory of the local file system.
#[cfg(feature = "native")]
#[derive(Debug, Clone)]
pub struct DirectoryProbe {
    root: std::path::PathBuf,
}

#[cfg(feature = "native")]
impl DirectoryProbe {
    /// Probes paths under `root` (relative paths are taken from it).
    pub fn new(root: impl Into<std::path::PathBuf>) -> Self {
        DirectoryProbe { root: root.into() }
    }
}

#[cfg(feature = "native")]
impl FileProbe for DirectoryProbe {
    fn exists(&self, path: &str) -> Option<bool> {
        let given = std::path::Path::new(path);
        let full = if given.is_absolute() {
            given.to_path_buf()
        } else {
            self.root.join(given)
        };
        // Only the project's own files are looked at: `..` could reach anywhere.
        if given
            .components()
            .any(|c| c == std::path::Component::ParentDir)
            || !full.starts_with(&self.root)
        {
            return None;
        }
        match std::fs::metadata(&full) {
            Ok(meta) => Some(meta.is_file()),
            // Missing, where its folder is there: the file went. With the folder gone too the
            // memory may be of another checkout, so the probe cannot tell.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => match full.parent() {
                Some(parent) if parent.is_dir() => Some(false),
                _ => None,
            },
            Err(_) => None,
        }
    }
}

#[cfg(all(test, feature = "native"))]
mod tests {
    use super::*;

    #[test]
    fn a_directory_probe_sees_its_files_and_nothing_outside() {
        let root = std::env::temp_dir().join(format!("engram-probe-{}", std::process::id()));
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join("src/a.rs"), "fn a() {}").unwrap();
        let probe = DirectoryProbe::new(&root);
        assert_eq!(probe.exists("src/a.rs"), Some(true));
        assert_eq!(probe.exists("src/gone.rs"), Some(false));
        assert_eq!(
            probe.exists("src"),
            Some(false),
            "a directory is not a file"
        );
        assert_eq!(
            probe.exists("lib/gone.rs"),
            None,
            "no folder: another checkout?"
        );
        assert_eq!(
            probe.exists(root.join("src/a.rs").to_str().unwrap()),
            Some(true)
        );
        assert_eq!(probe.exists("../etc/passwd"), None);
        assert_eq!(probe.exists("/etc/passwd"), None);
        std::fs::remove_dir_all(&root).unwrap();
    }
}
