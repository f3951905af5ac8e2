//! Pieces both tokenizers hold whole in their vocabularies (`words.rs`, generated from
//! them): one token each, whatever their length.

use super::pieces::{Kind, Pieces};
use super::words;

/// Which table holds what follows the piece before it: the spaced one after a single space
/// (which the token then includes), the bare one at the start, after a line break or after
/// a run of marks; none after a single mark, a tab or a non-ASCII character, which the
/// tokenizers glue on.
fn table_after(
    pieces: &Pieces<'_>,
    i: usize,
    spaced: &'static str,
    bare: &'static str,
) -> Option<&'static str> {
    match pieces.at(i.checked_sub(1)) {
        None => Some(bare),
        Some(p) if p.kind == Kind::Space && p.text.ends_with(' ') => Some(spaced),
        Some(p) if p.kind == Kind::Space && p.text.ends_with('\n') => Some(bare),
        // A single mark goes into the next piece (`-waiting` is three tokens, not two)
        // unless a space before it takes it (` <`) or it ends a run of marks.
        Some(p) if p.kind == Kind::Mark && !mark_glues_on(pieces, i - 1) => Some(bare),
        _ => None,
    }
}

/// The charge of the word at `i` when each of its parts is a whole-token word: one token
/// a part. A word splits at each lower→upper case change (`callHandlers`: `call`,
/// `Handlers`), and each part must be all lowercase or capitalized. A word glued to a
/// non-ASCII letter after it is left to the shape rules.
pub(super) fn word_charge(pieces: &Pieces<'_>, i: usize) -> Option<usize> {
    let word = pieces.get(i);
    if pieces
        .at(Some(i + 1))
        .is_some_and(|p| p.kind == Kind::Other && p.text.chars().any(char::is_alphabetic))
    {
        return None;
    }
    let mut parts = camel_parts(word.text);
    let head = parts.next()?;
    if marked_head(pieces, i).is_none() {
        let first = table_after(pieces, i, words::SPACED, words::BARE)?;
        holds(first, head).then_some(())?;
    }
    let mut total = 1;
    for part in parts {
        holds(words::BARE, part).then_some(())?;
        total += 1;
    }
    Some(total)
}

/// The mark before the word at `i` when the two are one token (`_send`, `.filter`): a
/// single mark, not part of a longer run, which the tokenizers put into the word's piece.
fn marked_head<'a>(pieces: &Pieces<'a>, i: usize) -> Option<&'a str> {
    let mark = pieces
        .at(i.checked_sub(1))
        .filter(|p| p.kind == Kind::Mark)?;
    if !mark_glues_on(pieces, i - 1) {
        return None;
    }
    let head = camel_parts(pieces.get(i).text).next()?;
    let joined = pieces.text(i - 1, 2);
    let marked = &joined[..mark.text.len() + head.len()];
    holds(words::MARKED, marked).then_some(marked)
}

/// Whether the tokenizers put the mark at `i` into the piece after it: not when it ends a
/// run of marks, nor when a space before it takes it into a piece of their own.
fn mark_glues_on(pieces: &Pieces<'_>, i: usize) -> bool {
    match pieces.at(i.checked_sub(1)) {
        Some(p) if p.kind == Kind::Mark => false,
        Some(p) if p.kind == Kind::Space && p.text.ends_with(' ') => false,
        _ => true,
    }
}

/// Whether the single mark at `i` goes into the next word's token.
pub(super) fn absorbs_mark(pieces: &Pieces<'_>, i: usize) -> bool {
    pieces.at(Some(i + 1)).is_some_and(|p| p.kind == Kind::Word)
        && marked_head(pieces, i + 1).is_some()
        && word_charge(pieces, i + 1).is_some()
}

/// Whether the space before the piece at `i` goes into that piece's token.
pub(super) fn absorbs_space(pieces: &Pieces<'_>, i: usize) -> bool {
    let Some(next) = pieces.at(Some(i)) else {
        return false;
    };
    match next.kind {
        Kind::Word => {
            word_charge(pieces, i).is_some()
                && camel_parts(next.text)
                    .next()
                    .is_some_and(|head| holds(words::SPACED, head))
        }
        Kind::Mark => {
            let marks = pieces.marks_from(i);
            marks >= 2 && holds(words::SPACED_MARKS, pieces.text(i, marks))
        }
        _ => false,
    }
}

/// The charge of the `count` ≥ 2 punctuation marks from `i`: one when the run is one token,
/// else one per longest known run from its start on (`====…` in a few).
pub(super) fn marks_charge(pieces: &Pieces<'_>, i: usize, count: usize) -> usize {
    let run = pieces.text(i, count);
    let whole = table_after(pieces, i, words::SPACED_MARKS, words::BARE_MARKS);
    if whole.is_some_and(|table| holds(table, run)) {
        return 1;
    }
    let mut total = 0;
    let mut rest = run;
    while !rest.is_empty() {
        let take = (2..=rest.len().min(LONGEST_MARKS))
            .rev()
            .find(|&n| holds(words::BARE_MARKS, &rest[..n]))
            .unwrap_or(1);
        rest = &rest[take..];
        total += 1;
    }
    total
}

/// Longer than any run in the marks tables.
const LONGEST_MARKS: usize = 128;

/// Whether a non-ASCII character other than a letter is one token.
pub(super) fn symbol(text: &str) -> bool {
    holds(words::SYMBOLS, text)
}

/// `word` split at each lower→upper case change; a part that is not all lowercase,
/// capitalized or all uppercase ends the split with an empty part, which no table holds.
fn camel_parts(word: &str) -> impl Iterator<Item = &str> {
    let bytes = word.as_bytes();
    let mut start = 0;
    std::iter::from_fn(move || {
        if start >= bytes.len() {
            return None;
        }
        let mut end = start + 1;
        while end < bytes.len()
            && !(bytes[end].is_ascii_uppercase() && bytes[end - 1].is_ascii_lowercase())
        {
            end += 1;
        }
        let part = &word[start..end];
        let rest = &part.as_bytes()[1..];
        let shaped = part.as_bytes()[0].is_ascii_alphabetic()
            && (rest.iter().all(u8::is_ascii_lowercase)
                || part.bytes().all(|b| b.is_ascii_uppercase()));
        start = if shaped { end } else { bytes.len() };
        Some(if shaped { part } else { "" })
    })
}

/// Whether `table` (entries one per line, in byte order) holds `key`: a binary search over
/// its bytes, each probe widened to the line it falls in.
fn holds(table: &str, key: &str) -> bool {
    let bytes = table.as_bytes();
    let (mut low, mut high) = (0, bytes.len());
    while low < high {
        let middle = low + (high - low) / 2;
        let start = bytes[low..middle]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(low, |at| low + at + 1);
        let end = bytes[start..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(bytes.len(), |at| start + at);
        match table[start..end].cmp(key) {
            std::cmp::Ordering::Equal => return true,
            std::cmp::Ordering::Less => low = end + 1,
            std::cmp::Ordering::Greater => high = start,
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::holds;

    #[test]
    fn a_table_holds_exactly_its_lines() {
        let table = "a\nbb\nc\nde\nf\n";
        for key in ["a", "bb", "c", "de", "f"] {
            assert!(holds(table, key), "{key}");
        }
        for key in ["", "b", "bbb", "d", "e", "g", "0"] {
            assert!(!holds(table, key), "{key}");
        }
        assert!(!holds("", "a"));
    }
}
