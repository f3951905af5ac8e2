//! Supersede and retire scored on the instruction history, against a label read off the
//! versions themselves. After a commit, a rule of a file's previous version is *kept* when
//! its repository still says it somewhere (any file as of that commit: a rule that moved to
//! another file is kept), compared as text with case, spacing, emphasis and code marks
//! ignored; otherwise it *changed or went*, and its memory should now be superseded or
//! retired. A rule is *acted on* when its memory is no longer live after the import.
//! Precision: acted-on rules that changed or went, of all acted on; recall: of all that
//! changed or went, those acted on. A reformatting the label cannot see through (a rule
//! re-worded by hand without a change of meaning) counts as changed: recall is then
//! measured against more than the README's hand counts.

use std::collections::{BTreeMap, HashSet};

use engram::{Engram, FileImport};
use engram_store::Database;

use crate::CliError;

/// A rule as imported: its memory and its text.
#[derive(Debug, Clone)]
pub struct Imported {
    /// The memory holding it.
    pub id: String,
    /// Its text.
    pub text: String,
}

/// The rules `file` holds after its import.
pub fn rules_of(file: &FileImport) -> Vec<Imported> {
    file.rules
        .iter()
        .map(|r| Imported {
            id: r.id.clone(),
            text: r.text.clone(),
        })
        .collect()
}

/// A rule's text as the label compares it: lower case, emphasis and code marks dropped,
/// list numbering dropped, spaces collapsed.
pub fn normalized(text: &str) -> String {
    let cleaned: String = text
        .chars()
        .filter(|c| !matches!(c, '*' | '`'))
        .collect::<String>()
        .to_lowercase();
    let words: Vec<&str> = cleaned.split_whitespace().collect();
    let start = usize::from(words.first().is_some_and(|w| {
        w.len() > 1
            && w.ends_with(['.', ')'])
            && w[..w.len() - 1].chars().all(|c| c.is_ascii_digit())
    }));
    words[start..].join(" ")
}

/// What one folder's imports did against the label.
#[derive(Debug, Default, Clone)]
pub struct Tally {
    /// Changed or went, and acted on.
    pub right: usize,
    /// Kept, yet acted on.
    pub wrong: Vec<String>,
    /// Changed or went, and not acted on.
    pub missed: Vec<String>,
}

impl Tally {
    /// Precision and recall (1.0 when there was nothing to act on, or nothing acted on).
    pub fn precision_recall(&self) -> (f64, f64) {
        let acted = self.right + self.wrong.len();
        let should = self.right + self.missed.len();
        let ratio = |part: usize, whole: usize| {
            if whole == 0 {
                1.0
            } else {
                part as f64 / whole as f64
            }
        };
        (ratio(self.right, acted), ratio(self.right, should))
    }

    /// Adds `other`'s counts.
    pub fn add(&mut self, other: &Tally) {
        self.right += other.right;
        self.wrong.extend(other.wrong.iter().cloned());
        self.missed.extend(other.missed.iter().cloned());
    }
}

/// Scores one file's step: `before` its rules at its last import, `said` the normalized
/// texts its repository holds now. One read per memory.
pub async fn score<D: Database>(
    engram: &Engram<D>,
    before: &[Imported],
    said: &HashSet<String>,
) -> Result<Tally, CliError> {
    // A memory may hold several rules of the file (a rule said twice): it is kept if any is.
    let mut by_memory: BTreeMap<&str, (bool, &str)> = BTreeMap::new();
    for rule in before {
        let kept = said.contains(&normalized(&rule.text));
        let entry = by_memory
            .entry(rule.id.as_str())
            .or_insert((false, rule.text.as_str()));
        entry.0 |= kept;
    }
    let mut tally = Tally::default();
    for (id, (kept, text)) in by_memory {
        let live = engram.get_any(id).await?.is_some_and(|m| !m.deprecated);
        let short: String = text.replace('\n', " ").chars().take(110).collect();
        match (kept, live) {
            (false, false) => tally.right += 1,
            (true, false) => tally.wrong.push(short),
            (false, true) => tally.missed.push(short),
            (true, true) => {}
        }
    }
    Ok(tally)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_label_ignores_form_not_words() {
        assert_eq!(
            normalized("3. **NEVER**  use `cargo update`\n  for the lockfile"),
            normalized("NEVER use cargo update for the lockfile")
        );
        assert_ne!(
            normalized("Default to 1-4 sentences"),
            normalized("Default to 2-3 sentences")
        );
        let tally = Tally {
            right: 3,
            wrong: vec!["a".into()],
            missed: vec!["b".into(), "c".into()],
        };
        assert_eq!(tally.precision_recall(), (0.75, 0.6));
    }
}
