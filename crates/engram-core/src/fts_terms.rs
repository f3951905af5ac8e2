//! The terms SQLite's FTS5 `porter unicode61` tokenizer indexes for a text: what the keyword
//! index (`memories_fts`) holds, so an in-memory index built from the same texts holds the
//! same terms, counts and document lengths.
//!
//! `unicode61` (with its default `remove_diacritics=1`) keeps runs of token characters: ASCII
//! letters and digits, and the non-ASCII code points of `table::TOKEN_RANGES`; every other
//! character separates tokens. Each kept character is folded (lower case, diacritics removed;
//! a combining mark may fold to nothing), and `porter` stems each token
//! ([`crate::porter::stem`]). The table was probed from FTS5 itself, one code point at a
//! time (`scripts/fts5-unicode-table.py`), and a conformance test checks it against the
//! libSQL engine.

#[rustfmt::skip]
mod table;

/// The non-ASCII code points `unicode61` keeps in tokens, as sorted inclusive ranges; exposed
/// so conformance tests can probe FTS5 at their edges.
pub const TOKEN_RANGES: &[(u32, u32)] = table::TOKEN_RANGES;

/// The token code points `unicode61` folds to another, or to nothing (0), sorted.
pub const FOLDS: &[(u32, u32)] = table::FOLDS;

/// Calls `each` with every term `porter unicode61` indexes for `text`, in order.
///
/// ```
/// let mut terms = Vec::new();
/// engram_core::fts_terms::for_each_term("Réservations: parse_config() → 12s", |t| {
///     terms.push(t.to_owned())
/// });
/// assert_eq!(terms, ["reserv", "pars", "config", "12"]);
/// ```
pub fn for_each_term(text: &str, mut each: impl FnMut(&str)) {
    let mut token = String::new();
    let mut flush = |token: &mut String| {
        if !token.is_empty() {
            each(&crate::porter::stem(token));
            token.clear();
        }
    };
    for c in text.chars() {
        match fold(c) {
            Fold::Keep(kept) => token.push(kept),
            Fold::Drop => {}
            Fold::Separator => flush(&mut token),
        }
    }
    flush(&mut token);
}

/// How many terms `porter unicode61` indexes for `text`: the length FTS5 records for it.
pub fn term_count(text: &str) -> usize {
    let mut count = 0;
    for_each_term(text, |_| count += 1);
    count
}

/// What `unicode61` does with one character.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fold {
    /// A token character, folded.
    Keep(char),
    /// A token character that folds to nothing (a combining mark): it neither separates
    /// tokens nor appears in one.
    Drop,
    /// Not a token character.
    Separator,
}

fn fold(c: char) -> Fold {
    if c.is_ascii() {
        return if c.is_ascii_alphanumeric() {
            Fold::Keep(c.to_ascii_lowercase())
        } else {
            Fold::Separator
        };
    }
    let code = u32::from(c);
    let in_token = table::TOKEN_RANGES
        .binary_search_by(|&(first, last)| {
            if last < code {
                std::cmp::Ordering::Less
            } else if first > code {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_ok();
    if !in_token {
        return Fold::Separator;
    }
    match table::FOLDS.binary_search_by_key(&code, |&(from, _)| from) {
        Err(_) => Fold::Keep(c),
        Ok(i) => match char::from_u32(table::FOLDS[i].1) {
            Some('\0') | None => Fold::Drop,
            Some(folded) => Fold::Keep(folded),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        for_each_term(text, |t| out.push(t.to_owned()));
        out
    }

    #[test]
    fn tables_are_sorted_and_disjoint() {
        assert!(table::TOKEN_RANGES.iter().all(|(a, b)| a <= b));
        assert!(table::TOKEN_RANGES.windows(2).all(|w| w[0].1 < w[1].0));
        assert!(table::FOLDS.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(table::FOLDS.iter().all(|&(from, _)| from >= 0x80));
    }

    #[test]
    fn ascii_punctuation_separates_and_case_folds() {
        assert_eq!(
            terms("Max_Retries=3;FOO-bar"),
            ["max", "retri", "3", "foo", "bar"]
        );
        assert_eq!(terms("  "), Vec::<String>::new());
    }

    #[test]
    fn diacritics_fold_and_lone_marks_vanish() {
        assert_eq!(terms("Ñandú naïve"), ["nandu", "naiv"]);
        // A combining diaeresis inside a token is dropped; on its own it makes no token.
        assert_eq!(terms("x\u{308}y \u{308} z"), ["xy", "z"]);
        assert_eq!(term_count("x\u{308}y \u{308} z"), 2);
    }

    #[test]
    fn symbols_separate_and_other_scripts_stay_tokens() {
        assert_eq!(terms("a→b"), ["a", "b"]);
        assert_eq!(terms("ΣΑΣ x²y"), ["σασ", "x²y"]);
    }
}
