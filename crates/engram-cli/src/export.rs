//! `engram export` (JSON, Markdown, or a section written into CLAUDE.md / AGENTS.md) and
//! `engram load-export` (a JSON export read back into an empty project).

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args;
use engram::{Database, Engram, ProjectExport};

use crate::CliError;

/// `engram export`.
#[derive(Args)]
pub struct ExportArgs {
    /// `json` (every field with history and origins; `engram load-export` reads it back)
    /// or `markdown` (for people: by module and type).
    #[arg(long, default_value = "json", value_parser = ["json", "markdown"])]
    pub format: String,
    /// Write it to this file instead of standard output.
    #[arg(long, conflicts_with = "into")]
    pub out: Option<PathBuf>,
    /// Write engram's section into this CLAUDE.md or AGENTS.md: between two marker
    /// comments, replacing the last section; every other byte of the file stays.
    #[arg(long)]
    pub into: Option<PathBuf>,
}

/// Runs `engram export`.
pub async fn run<D: Database>(engram: &Engram<D>, args: &ExportArgs) -> Result<(), CliError> {
    if let Some(file) = &args.into {
        return into_file(engram, file).await;
    }
    let text = if args.format == "markdown" {
        engram.export_markdown().await?
    } else {
        let export = engram.export().await?;
        if export.redacted > 0 {
            eprintln!(
                "warning: {} secrets were redacted on the way out",
                export.redacted
            );
        }
        format!(
            "{}\n",
            serde_json::to_string_pretty(&export)
                .map_err(|e| CliError::Usage(format!("cannot encode the export: {e}")))?
        )
    };
    match &args.out {
        Some(path) => write_whole(path, &text),
        None => std::io::stdout()
            .write_all(text.as_bytes())
            .map_err(|e| CliError::Usage(format!("cannot write the export: {e}"))),
    }
}

/// Writes the section into `file` (created when missing) and says what it did.
async fn into_file<D: Database>(engram: &Engram<D>, file: &Path) -> Result<(), CliError> {
    let before = match std::fs::read(file) {
        Ok(bytes) => String::from_utf8(bytes).map_err(|_| {
            CliError::Usage(format!(
                "{} is not UTF-8 text: nothing written",
                file.display()
            ))
        })?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => {
            return Err(CliError::Usage(format!(
                "cannot read {}: {e}",
                file.display()
            )))
        }
    };
    let body = engram.export_section(&project_path(file)).await?;
    let after = engram_instructions::section::splice(&before, &body)
        .map_err(|e| CliError::Usage(format!("{} {e}: nothing written", file.display())))?;
    if after == before {
        eprintln!("{}: engram's section is up to date", file.display());
        return Ok(());
    }
    write_whole(file, &after)?;
    eprintln!("{}: engram's section written", file.display());
    Ok(())
}

/// The file's path from its project's root (`/`-separated), as imports name it.
fn project_path(file: &Path) -> String {
    let absolute = std::path::absolute(file).unwrap_or_else(|_| file.to_path_buf());
    let folder = absolute.parent().unwrap_or(Path::new("."));
    let root = engram_cli::hook::project_root(folder);
    absolute
        .strip_prefix(&root)
        .unwrap_or(&absolute)
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

/// Writes `text` to `path` whole: to a file beside it first, then renamed over it, so a
/// failure leaves the old file as it was.
fn write_whole(path: &Path, text: &str) -> Result<(), CliError> {
    let staged = path.with_extension("engram-tmp");
    let failed =
        |e: std::io::Error| CliError::Usage(format!("cannot write {}: {e}", path.display()));
    std::fs::write(&staged, text).map_err(failed)?;
    std::fs::rename(&staged, path).map_err(|e| {
        let _ = std::fs::remove_file(&staged);
        failed(e)
    })
}

/// Runs `engram load-export FILE`: the export read back, then the memories embedded when
/// a model is loaded.
pub async fn load<D: Database>(engram: &Engram<D>, path: &str, json: bool) -> Result<(), CliError> {
    let text = crate::read_input(path)?;
    let export = ProjectExport::from_json(&text).map_err(engram::EngramError::from)?;
    let loaded = engram.load_export(&export).await?;
    if engram.embedding_status().await?.is_some() {
        while engram.embed_pending(64).await?.embedded > 0 {}
    }
    if json {
        say!("{}", serde_json::to_string(&loaded).unwrap_or_default());
    } else {
        say!(
            "loaded {} memories, {} history entries and {} origins",
            loaded.memories,
            loaded.history,
            loaded.origins
        );
    }
    Ok(())
}
