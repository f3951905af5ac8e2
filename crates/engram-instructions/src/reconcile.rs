//! A new version of an imported file matched against the rules imported from it before,
//! by meaning rather than by position: a line diff pairs moved and reworded rules wrongly.
//!
//! A rule with the same normalized text is unchanged wherever it moved. Of the rest, a
//! pair the lifecycle judges a duplicate is the same rule reformatted; a pair it judges a
//! contradiction, or whose words overlap enough, is the rule revised (the new form
//! supersedes the old). What is left of the old rules was removed, and of the new ones
//! added.

use std::collections::BTreeSet;

use engram_lifecycle::judge::{judge, Change, Judgement, Stated};
use engram_lifecycle::text::{jaccard, normalized, Claim};

/// Two rules whose content words overlap this much (Jaccard) are one rule reworded.
pub const REVISED_OVERLAP: f64 = 0.5;

/// A rule imported before, as the reconciler compares it.
#[derive(Debug, Clone)]
pub struct Known<'a> {
    /// Its text when it was imported.
    pub text: &'a str,
    /// The files it is about.
    pub files: &'a [String],
}

/// What became of one rule of the new version.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The same text as known rule `known` (perhaps moved).
    Unchanged {
        /// The index of the known rule.
        known: usize,
    },
    /// Known rule `known` in another form only (emphasis, wrapping, a word added).
    Reformatted {
        /// The index of the known rule.
        known: usize,
    },
    /// Known rule `known` revised: reworded or with a changed value or polarity.
    Revised {
        /// The index of the known rule.
        known: usize,
        /// The change the lifecycle found, if it found one (else a rewording).
        change: Option<Change>,
    },
    /// A new rule.
    Added,
}

/// The new version's outcome per rule, and the known rules it no longer has.
#[derive(Debug, Clone, PartialEq)]
pub struct Reconciled {
    /// One per new rule, in order.
    pub outcomes: Vec<Outcome>,
    /// Indexes of known rules that were removed.
    pub removed: Vec<usize>,
}

/// Matches `new` rules (text and files) against `known` ones.
pub fn reconcile(known: &[Known<'_>], new: &[(&str, &[String])]) -> Reconciled {
    let mut outcomes: Vec<Option<Outcome>> = vec![None; new.len()];
    let mut taken = vec![false; known.len()];
    let known_forms: Vec<String> = known.iter().map(|k| normalized(k.text)).collect();
    for (i, (text, _)) in new.iter().enumerate() {
        let form = normalized(text);
        if let Some(k) = (0..known.len()).find(|&k| !taken[k] && known_forms[k] == form) {
            taken[k] = true;
            outcomes[i] = Some(Outcome::Unchanged { known: k });
        }
    }
    let pairs = scored_pairs(known, new, &outcomes, &taken);
    for (_, i, k, outcome) in pairs {
        if outcomes[i].is_none() && !taken[k] {
            taken[k] = true;
            outcomes[i] = Some(outcome);
        }
    }
    Reconciled {
        outcomes: outcomes
            .into_iter()
            .map(|o| o.unwrap_or(Outcome::Added))
            .collect(),
        removed: (0..known.len()).filter(|&k| !taken[k]).collect(),
    }
}

/// Every candidate pairing of a still-unmatched new rule with an unmatched known rule,
/// best first: reformatting before revision, then by word overlap.
fn scored_pairs(
    known: &[Known<'_>],
    new: &[(&str, &[String])],
    outcomes: &[Option<Outcome>],
    taken: &[bool],
) -> Vec<(f64, usize, usize, Outcome)> {
    let known_words: Vec<BTreeSet<String>> =
        known.iter().map(|k| Claim::of(k.text).words).collect();
    let mut pairs = Vec::new();
    for (i, (text, files)) in new.iter().enumerate() {
        if outcomes[i].is_some() {
            continue;
        }
        let words = Claim::of(text).words;
        for (k, old) in known.iter().enumerate() {
            if taken[k] {
                continue;
            }
            let overlap = jaccard(&words, &known_words[k]);
            let stated = |content, files| Stated {
                content,
                files,
                target: None,
            };
            let retouched = overlap >= REVISED_OVERLAP && only_retouched(text, old.text);
            let outcome = match judge(stated(text, files), stated(old.text, old.files), None) {
                _ if retouched => Some((2.0 + overlap, Outcome::Reformatted { known: k })),
                Judgement::Duplicate { .. } => {
                    Some((2.0 + overlap, Outcome::Reformatted { known: k }))
                }
                Judgement::Supersedes { change } => Some((
                    1.0 + overlap,
                    Outcome::Revised {
                        known: k,
                        change: Some(change),
                    },
                )),
                _ if overlap >= REVISED_OVERLAP => Some((
                    overlap,
                    Outcome::Revised {
                        known: k,
                        change: None,
                    },
                )),
                _ => None,
            };
            if let Some((score, outcome)) = outcome {
                pairs.push((score, i, k, outcome));
            }
        }
    }
    pairs.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
    pairs
}

/// Normalized texts this close (in character edits) are one rule with its typos fixed.
const RETOUCH_EDITS: usize = 8;

/// Whether `new` is `old` with a few characters fixed (a typo, a hyphen, a plural) and
/// the same values and negations: not a revision of the rule.
fn only_retouched(new: &str, old: &str) -> bool {
    let (a, b) = (normalized(new), normalized(old));
    if !within_edits(&a, &b, RETOUCH_EDITS) {
        return false;
    }
    let (n, o) = (Claim::of(new), Claim::of(old));
    n.values == o.values && n.negation_heads == o.negation_heads
}

/// Whether the Levenshtein distance of `a` and `b` (in characters) is at most `limit`,
/// computed in a band of that width.
fn within_edits(a: &str, b: &str, limit: usize) -> bool {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    if a.len().abs_diff(b.len()) > limit {
        return false;
    }
    let far = limit + 1;
    let mut previous: Vec<usize> = (0..=b.len()).map(|j| j.min(far)).collect();
    for i in 1..=a.len() {
        let mut current = vec![far; b.len() + 1];
        current[0] = i.min(far);
        let from = i.saturating_sub(limit).max(1);
        let to = (i + limit).min(b.len());
        for j in from..=to {
            let substitution = previous[j - 1] + usize::from(a[i - 1] != b[j - 1]);
            current[j] = substitution
                .min(previous[j] + 1)
                .min(current[j - 1] + 1)
                .min(far);
        }
        if current.iter().all(|d| *d > limit) {
            return false;
        }
        previous = current;
    }
    previous[b.len()] <= limit
}

#[cfg(test)]
mod tests {
    use super::*;

    const NO_FILES: &[String] = &[];

    fn known(texts: &[&'static str]) -> Vec<Known<'static>> {
        texts
            .iter()
            .map(|t| Known {
                text: t,
                files: NO_FILES,
            })
            .collect()
    }

    #[test]
    fn moved_reworded_changed_removed_and_added_rules() {
        let old = known(&[
            "ALWAYS attempt to add a test case for changed behavior",
            "PREFER running specific tests over running the entire test suite",
            "Read and copy the style of similar tests when adding new tests",
            "Use `yarn run lint` to lint the extension",
        ]);
        let new: Vec<(&str, &[String])> = vec![
            ("PREFER running specific tests over running the entire test suite", NO_FILES),
            ("Use `pnpm run lint` to lint the extension", NO_FILES),
            ("ALWAYS ensure that new tests use the same style as existing tests for all parts of the test", NO_FILES),
            ("ALWAYS check whether the behavior of a new test is already covered by an existing test", NO_FILES),
        ];
        let got = reconcile(&old, &new);
        assert_eq!(got.outcomes[0], Outcome::Unchanged { known: 1 });
        assert!(matches!(
            got.outcomes[1],
            Outcome::Revised {
                known: 3,
                change: Some(Change::Value { .. })
            }
        ));
        assert_eq!(got.outcomes[3], Outcome::Added);
        assert!(got.removed.contains(&0));
    }

    #[test]
    fn a_fixed_typo_is_a_reformat_and_a_changed_number_a_revision() {
        let old = known(&[
            "Keep components pure and side-effect free during rendering, which leads to fewer bugs",
            "The MSRV is 1.86.0 for every crate of the workspace",
        ]);
        let new: Vec<(&str, &[String])> = vec![
            ("Keep components pure and side effect free during rendering, which lead to fewer bugs", NO_FILES),
            ("The MSRV is 1.87.0 for every crate of the workspace", NO_FILES),
        ];
        let got = reconcile(&old, &new).outcomes;
        assert_eq!(got[0], Outcome::Reformatted { known: 0 });
        assert!(
            matches!(got[1], Outcome::Revised { known: 1, .. }),
            "{got:?}"
        );
    }

    #[test]
    fn edits_are_counted_in_a_band() {
        assert!(within_edits("kitten", "sitting", 3));
        assert!(!within_edits("kitten", "sitting", 2));
        assert!(within_edits("", "abc", 3));
        assert!(!within_edits("abcdefgh", "", 3));
    }

    #[test]
    fn emphasis_and_wrapping_are_the_same_rule() {
        let old = known(&["Run `just ready` **before** submitting\nchanges"]);
        let new: Vec<(&str, &[String])> =
            vec![("Run `just ready` before submitting changes", NO_FILES)];
        assert_eq!(
            reconcile(&old, &new).outcomes,
            vec![Outcome::Unchanged { known: 0 }]
        );
    }
}
