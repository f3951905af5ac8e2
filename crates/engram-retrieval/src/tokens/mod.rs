//! Token counts for budgets, without shipping a vocabulary.
//!
//! Agents' models use byte-level BPE tokenizers (cl100k, o200k, Claude's). A budget must
//! never be exceeded, so engram counts with an estimate built to be an upper bound rather
//! than an average: text is split the way those tokenizers pre-split it, and each piece is
//! charged at least what any of them can spend on it:
//!
//! - a run of ASCII letters: one token per two letters (rounded up), and a new run at each
//!   lower→upper case change (`getHTTPResponse` is two runs, `get` and `HTTPResponse`);
//! - a run of digits: one token per three digits (the tokenizers split numbers into groups
//!   of at most three, each a single token);
//! - ASCII punctuation and symbols: one token each, or one for a run both tokenizers hold
//!   whole (with a space before it, or with the line breaks after it); a run they do not
//!   hold whole, one per longest known run in it, plus one;
//! - a run of whitespace: cut after its last line break, one token for what is before when
//!   both hold it whole (else one per line break), and one or two for the blanks after;
//! - any other character: one token per UTF-8 byte (a byte-level BPE never spends more);
//! - but a word both tokenizers hold whole in their vocabularies (`words.rs`, generated from
//!   them) is one token, with the single space before it; a camelCase word, one per part.
//!
//! A test checks the estimate against the real cl100k and o200k tokenizers over every text of
//! the evaluation data (code, issue reports, transcripts): it never undercounts; what it
//! overcounts, the price of never overflowing, is in docs/retrieval.md.

mod charge;
mod known;
mod pieces;
mod words;

use pieces::{Kind, Pieces};

/// An upper-bound estimate of the tokens `text` costs a byte-level BPE tokenizer.
///
/// ```
/// use engram_retrieval::tokens::estimate;
/// assert_eq!(estimate(""), 0);
/// assert_eq!(estimate("hello"), 1);
/// assert_eq!(estimate("retry 3x"), 1 + 1 + 1 + 1);
/// ```
pub fn estimate(text: &str) -> usize {
    let pieces = Pieces::of(text);
    let known = known::charges(&pieces);
    let mut total = 0;
    // Line breaks the marks before a whitespace run took into their token.
    let mut taken = 0;
    let mut i = 0;
    while i < pieces.len() {
        let piece = pieces.get(i);
        let marks = pieces.marks_from(i);
        let next_known = known.get(i + 1).is_some_and(Option::is_some);
        // Marks that take line breaks are known (one token), so only those are asked.
        if piece.kind == Kind::Mark && known[i].is_some() {
            taken = known::lines_after_marks(&pieces, i, marks);
        }
        total += match piece.kind {
            Kind::Mark if marks >= 2 => {
                known[i].unwrap_or_else(|| known::marks_segments(&pieces, i, marks))
            }
            Kind::Mark if next_known && known::mark_glues_on(&pieces, i) => 0,
            Kind::Space => {
                let run = &piece.text[std::mem::take(&mut taken)..];
                match run.strip_suffix(' ') {
                    Some(rest) if next_known => charge::absorbed_space(rest),
                    _ => charge::space(run),
                }
            }
            Kind::Word => known[i].unwrap_or_else(|| charge::word(piece.text)),
            Kind::Mark => 1,
            Kind::Other if known::symbol(piece.text) => 1,
            Kind::Other => piece.text.len(),
        };
        i += marks.max(1);
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_are_charged_by_their_shape() {
        assert_eq!(estimate("getHTTPResponse"), 2 + 12);
        assert_eq!(estimate("1234567"), 3);
        // Blanks after a line break: one token, then the last one goes into the next word.
        assert_eq!(estimate("a\n\n  b"), 1 + 2 + 1);
        assert_eq!(estimate("数据"), 6);
        assert_eq!(estimate("a3f9c2e1"), 8);
        assert_eq!(estimate("utf8"), 2 + 1);
    }

    #[test]
    fn known_words_and_runs_are_one_token_each() {
        assert_eq!(estimate("configuration"), 1);
        // The space goes into the word's token.
        assert_eq!(estimate("the configuration file"), 3);
        // A part per lower→upper change.
        assert_eq!(estimate("getResponse"), 1 + 1);
        // A single mark goes into the word after it.
        assert_eq!(estimate("(configuration"), 1);
        // A run no table holds whole: its longest known runs, and one more.
        assert_eq!(estimate("=====================\"\"\"Create"), 2 + 1 + 1 + 1);
        assert_eq!(estimate("{}();"), 2 + 1);
    }

    #[test]
    fn whitespace_and_marks_the_tokenizers_keep_together_are_one_token() {
        // A space goes into the mark after it.
        assert_eq!(estimate("x = y"), 3);
        // Line breaks go into the marks before them, and a run of them is one token.
        assert_eq!(estimate("f():\n    return"), 1 + 1 + 1 + 1);
        assert_eq!(estimate("a\n\n"), 2);
        // Merges by rank cut `)})</` into three tokens (o200k), not the two longest runs.
        assert_eq!(estimate(")})</"), 3);
    }

    #[test]
    fn what_the_tokenizers_glue_on_falls_back_to_the_shape_rules() {
        // A non-ASCII letter after the word, a tab before it.
        assert_eq!(estimate("configurationé"), 2 + 3 + 2);
        assert_eq!(estimate("\tconfiguration"), 1 + 2 + 3);
        // `-waiting` is not one token, and its mark makes `waiting` another piece.
        assert_eq!(estimate("-waiting"), 1 + 3);
    }
}
