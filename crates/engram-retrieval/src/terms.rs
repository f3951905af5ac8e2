//! Word sets for scoring and diversity: each word of a text, lightly stemmed and hashed,
//! kept as a sorted list so membership is a binary search and overlap a linear merge.
//!
//! Ranking compares a few dozen candidates with each other and with the query; hashing
//! each word once and never building a `HashSet<String>` keeps that off the search's
//! critical path. Hash collisions (64-bit FNV-1a) are vanishingly rare among the few
//! hundred words involved and would only make two words count as one.

use engram_core::query::for_each_token;

/// The distinct words of a text as sorted 64-bit hashes of their light stems.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TermSet(Vec<u64>);

impl TermSet {
    /// The words of `text` (tokens as the keyword path makes them, each [`light_stem`]med).
    ///
    /// ```
    /// use engram_retrieval::terms::{term_hash, TermSet};
    /// let set = TermSet::of("Run the migrations before tests");
    /// assert!(set.contains(term_hash("migration")));
    /// assert!(!set.contains(term_hash("the")));
    /// assert_eq!(set.len(), 3); // run, migration, test ("the", "before" are stop words)
    /// ```
    pub fn of(text: &str) -> Self {
        let mut hashes = Vec::new();
        for_each_token(text, |token| hashes.push(term_hash(token)));
        hashes.sort_unstable();
        hashes.dedup();
        TermSet(hashes)
    }

    /// Whether the set holds the word whose [`term_hash`] is `hash`.
    pub fn contains(&self, hash: u64) -> bool {
        self.0.binary_search(&hash).is_ok()
    }

    /// How many distinct words.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether the text had no words.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Shared words over all words of both sets, in `[0, 1]` (0 when both are empty).
    pub fn jaccard(&self, other: &TermSet) -> f64 {
        let (a, b) = (&self.0, &other.0);
        if a.is_empty() && b.is_empty() {
            return 0.0;
        }
        let (mut i, mut j, mut shared) = (0, 0, 0usize);
        while i < a.len() && j < b.len() {
            match a[i].cmp(&b[j]) {
                std::cmp::Ordering::Less => i += 1,
                std::cmp::Ordering::Greater => j += 1,
                std::cmp::Ordering::Equal => {
                    shared += 1;
                    i += 1;
                    j += 1;
                }
            }
        }
        shared as f64 / (a.len() + b.len() - shared) as f64
    }
}

/// The hash of a token's [`light_stem`] (FNV-1a, 64 bits): what [`TermSet`] stores.
pub fn term_hash(token: &str) -> u64 {
    light_stem(token)
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        })
}

/// `word` without one common English suffix, keeping at least three characters, so
/// `migrations` and `migration` are one word, as the keyword index's Porter stemmer would
/// have them.
///
/// ```
/// use engram_retrieval::terms::light_stem;
/// assert_eq!(light_stem("migrations"), "migr");
/// assert_eq!(light_stem("tests"), "test");
/// assert_eq!(light_stem("uses"), "use");
/// ```
pub fn light_stem(word: &str) -> &str {
    for suffix in ["ations", "ation", "ings", "ing", "ies", "ed", "es", "s"] {
        if let Some(base) = word.strip_suffix(suffix) {
            if base.chars().count() >= 3 {
                return base;
            }
        }
    }
    word
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jaccard_counts_shared_words_once() {
        let a = TermSet::of("postgres connection refused retry");
        let b = TermSet::of("postgres connections refused later");
        // postgres, connection, refused shared; retry and later not: 3 / 5.
        assert!((a.jaccard(&b) - 3.0 / 5.0).abs() < 1e-12);
        assert_eq!(a.jaccard(&a), 1.0);
        assert_eq!(TermSet::of("").jaccard(&TermSet::of("the")), 0.0);
    }

    #[test]
    fn identifiers_contribute_their_parts() {
        let set = TermSet::of("parseConfig failed");
        for word in ["parseconfig", "parse", "config", "failed", "fail"] {
            assert!(set.contains(term_hash(word)), "{word}");
        }
    }
}
