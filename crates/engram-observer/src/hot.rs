//! The files a session cared about most.

use serde::Serialize;

use crate::scratchpad::Scratchpad;

/// A file ranked by how much a session worked on it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HotFile {
    /// The project-relative path.
    pub path: String,
    /// The rank score (higher is hotter).
    pub score: f64,
    /// Reads and file-scoped searches.
    pub reads: u32,
    /// Edits.
    pub edits: u32,
}

/// Files the session wrote from scratch count for this share of their score: reproduction
/// scripts and scratch files are rarely what a later session needs.
const CREATED_SHARE: f64 = 0.3;

impl Scratchpad {
    /// The `n` hottest project files: editing a file weighs more than reading it, repeated
    /// work counts with diminishing returns, files a memory may not cite (scratch, deleted,
    /// created and not known to be there; [`Scratchpad::citable`]) are left out and files
    /// the session created itself count for less.
    pub fn hot_files(&self, n: usize) -> Vec<HotFile> {
        let mut hot: Vec<HotFile> = self
            .files
            .iter()
            .enumerate()
            .filter(|&(id, _)| self.citable(id as u32))
            .map(|(_, f)| {
                let mut score = (1.0 + f64::from(f.reads)).ln();
                if f.edits > 0 {
                    score += 2.0 + (1.0 + f64::from(f.edits)).ln();
                }
                if f.created {
                    score *= CREATED_SHARE;
                }
                HotFile {
                    path: f.path.clone(),
                    score,
                    reads: f.reads,
                    edits: f.edits,
                }
            })
            .collect();
        hot.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then_with(|| a.path.cmp(&b.path))
        });
        hot.truncate(n);
        hot
    }
}
