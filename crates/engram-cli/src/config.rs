//! The project's settings file, `.engram/config.toml` at the project's root: the database,
//! the project, the model and the trust level, so a team can commit them once. A flag
//! beats an environment variable, which beats the file, which beats the defaults.
//!
//! ```toml
//! database = ".engram/engram.db"   # a file (relative to the project's root) or a libsql:// / https:// URL
//! project = "billing"
//! model = "minilm"                 # or "static"
//! model_dir = "~/.cache/engram/models"
//! trust_level = 3                  # 1 cautious … 4 autonomous
//! ```

use std::path::{Path, PathBuf};

use clap::parser::ValueSource;
use clap::ArgMatches;
use engram::TrustLevel;
use serde::Deserialize;

use crate::{CliError, Target};

/// The settings file's name under `.engram/`.
pub const CONFIG_FILE: &str = "config.toml";

/// What `.engram/config.toml` may set.
#[derive(Debug, Default, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProjectConfig {
    /// A database file (relative paths are from the project's root) or a libSQL URL.
    pub database: Option<String>,
    /// The project whose memories to use.
    pub project: Option<String>,
    /// The bundled model: `minilm` or `static`.
    pub model: Option<String>,
    /// The folder holding the model's files (`~` is the home folder).
    pub model_dir: Option<String>,
    /// The project's trust level, 1 to 4, applied to its database on every open.
    pub trust_level: Option<u8>,
}

impl ProjectConfig {
    /// The settings of the project at `root`: empty when it has no file, an error naming
    /// the file and the line when the file is not valid.
    pub fn read(root: &Path) -> Result<ProjectConfig, CliError> {
        let path = root.join(crate::hook::ENGRAM_DIR).join(CONFIG_FILE);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(e) => return Err(usage(&path, &e.to_string())),
        };
        let config: ProjectConfig = toml::from_str(&text).map_err(|e| usage(&path, e.message()))?;
        if let Some(model) = &config.model {
            if model != "minilm" && model != "static" {
                return Err(usage(&path, "model must be \"minilm\" or \"static\""));
            }
        }
        if let Some(level) = config.trust_level {
            TrustLevel::from_number(level.into()).map_err(|e| usage(&path, &e.to_string()))?;
        }
        Ok(config)
    }

    /// The trust level it sets.
    pub fn trust(&self) -> Option<TrustLevel> {
        self.trust_level
            .and_then(|level| TrustLevel::from_number(level.into()).ok())
    }

    /// Lays the settings under `target`: each replaces a value only when neither a flag nor
    /// an environment variable gave it (`matches` says where each came from). A relative
    /// database path is taken from `root`.
    pub fn apply(&self, target: &mut Target, matches: &ArgMatches, root: &Path) {
        let unset = |id: &str| {
            matches!(
                matches.value_source(id),
                None | Some(ValueSource::DefaultValue)
            )
        };
        if let Some(database) = &self.database {
            if is_url(database) {
                if unset("url") && unset("db") {
                    target.url = Some(database.clone());
                }
            } else if unset("db") {
                target.db = root
                    .join(expand_home(database))
                    .to_string_lossy()
                    .into_owned();
            }
        }
        if let (Some(project), true) = (&self.project, unset("project")) {
            target.project = project.clone();
        }
        if let (Some(model), true) = (&self.model, unset("local_model")) {
            target.local_model = model.clone();
        }
        if let (Some(dir), true) = (&self.model_dir, unset("model_dir")) {
            target.model_dir = Some(expand_home(dir));
        }
        target.trust_level = self.trust();
    }
}

/// Whether `database` names a server rather than a file.
fn is_url(database: &str) -> bool {
    ["libsql://", "https://", "http://", "wss://", "ws://"]
        .iter()
        .any(|scheme| database.starts_with(scheme))
}

/// `path` with a leading `~/` read as the home folder.
fn expand_home(path: &str) -> PathBuf {
    match (path.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ => PathBuf::from(path),
    }
}

fn usage(path: &Path, problem: &str) -> CliError {
    CliError::Usage(format!("{}: {}", path.display(), problem.trim()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(text: &str) -> Result<ProjectConfig, String> {
        toml::from_str(text).map_err(|e| e.to_string())
    }

    #[test]
    fn every_setting_reads_and_unknown_keys_are_refused() {
        let config = parsed(
            "database = \"libsql://db.example\"\nproject = \"billing\"\nmodel = \"static\"\ntrust_level = 3\n",
        )
        .unwrap();
        assert_eq!(config.project.as_deref(), Some("billing"));
        assert_eq!(config.trust(), Some(TrustLevel::Confident));
        assert!(is_url(config.database.as_deref().unwrap()));
        assert!(parsed("projet = \"typo\"")
            .unwrap_err()
            .contains("unknown field"));
        assert!(parsed("trust_level = \"high\"").is_err());
    }
}
