//! Pieces both tokenizers hold whole in their vocabularies (`words.rs`, generated from
//! them): one token each, whatever their length.

use super::pieces::{Kind, Pieces};
use super::words;

/// Which table holds what follows the piece before it: the spaced one after a single space
/// (which the token then includes), the bare one at the start, after a line break or after
/// a run of marks; none after a single mark, a tab or a non-ASCII character, which the
/// tokenizers glue on.
fn table_after(pieces: &Pieces<'_>, i: usize, spaced: Table, bare: Table) -> Option<Table> {
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
/// `Handlers`), and each part must be all lowercase, capitalized or all uppercase. A word
/// glued to a
/// non-ASCII letter after it is left to the shape rules.
fn word_charge(pieces: &Pieces<'_>, i: usize) -> Option<usize> {
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
pub(super) fn mark_glues_on(pieces: &Pieces<'_>, i: usize) -> bool {
    match pieces.at(i.checked_sub(1)) {
        Some(p) if p.kind == Kind::Mark => false,
        Some(p) if p.kind == Kind::Space && p.text.ends_with(' ') => false,
        _ => true,
    }
}

/// For each piece that starts a word or a run of two or more marks, its charge when it is
/// made of whole tokens in its place: a word's parts (see [`word_charge`]), or a run that
/// is one token. A space before such a piece goes into its first token; so does a single
/// mark that glues on (see [`mark_glues_on`]), since only [`MARKED`](words::MARKED) takes
/// a word after it.
pub(super) fn charges(pieces: &Pieces<'_>) -> Vec<Option<usize>> {
    let mut known = vec![None; pieces.len()];
    let mut i = 0;
    while i < pieces.len() {
        let marks = pieces.marks_from(i);
        known[i] = match pieces.get(i).kind {
            Kind::Word => word_charge(pieces, i),
            Kind::Mark if lines_after_marks(pieces, i, marks) > 0 => Some(1),
            Kind::Mark if marks >= 2 => whole_marks(pieces, i, marks),
            Kind::Mark => spaced_mark(pieces, i),
            _ => None,
        };
        i += marks.max(1);
    }
    known
}

/// One token when the `count` ≥ 2 marks from `i` are one in their place.
fn whole_marks(pieces: &Pieces<'_>, i: usize, count: usize) -> Option<usize> {
    let table = table_after(pieces, i, words::SPACED_MARKS, words::BARE_MARKS)?;
    holds(table, pieces.text(i, count)).then_some(1)
}

/// One token when the single mark at `i` and the space before it are one (` =`, ` (`): the
/// tokenizers keep a space before a mark in the mark's piece.
fn spaced_mark(pieces: &Pieces<'_>, i: usize) -> Option<usize> {
    let before = pieces.at(i.checked_sub(1))?;
    (before.kind == Kind::Space
        && before.text.ends_with(' ')
        && holds(words::SPACED_MARKS, pieces.get(i).text))
    .then_some(1)
}

/// How many line-break characters the `count` marks from `i` take from the whitespace after
/// them into one token with them (`):\n`, ` {\n`): the tokenizers end a punctuation piece
/// with the line breaks that follow it. Zero when the vocabularies do not hold that piece
/// whole.
pub(super) fn lines_after_marks(pieces: &Pieces<'_>, i: usize, count: usize) -> usize {
    let Some(after) = pieces.at(Some(i + count)).filter(|p| p.kind == Kind::Space) else {
        return 0;
    };
    let breaks = after
        .text
        .bytes()
        .take_while(|&b| b == b'\n' || b == b'\r')
        .count();
    if breaks == 0 {
        return 0;
    }
    let spaced = pieces
        .at(i.checked_sub(1))
        .is_some_and(|p| p.kind == Kind::Space && p.text.ends_with(' '));
    let start = pieces.get(i).start - usize::from(spaced);
    let end = after.start + breaks;
    if holds(words::MARKS_LINES, pieces.slice(start, end)) {
        breaks
    } else {
        0
    }
}

/// Whether a whitespace run ending in a line break is one token.
pub(super) fn blank_lines(run: &str) -> bool {
    holds(words::LINES, run)
}

/// The charge of `count` ≥ 2 marks from `i` that are not one token: one per longest known
/// run from its start on (`====…` in a few), and one more, since merges by rank can cut a
/// run into more tokens than the longest runs do (`)})</` is three to o200k, not two); never
/// more than one per mark.
pub(super) fn marks_segments(pieces: &Pieces<'_>, i: usize, count: usize) -> usize {
    let mut total = 0;
    let mut rest = pieces.text(i, count);
    while !rest.is_empty() {
        let take = (2..=rest.len().min(LONGEST_MARKS))
            .rev()
            .find(|&n| holds(words::BARE_MARKS, &rest[..n]))
            .unwrap_or(1);
        rest = &rest[take..];
        total += 1;
    }
    (total + 1).min(count)
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

/// Entries grouped by length in bytes: each group `(length, offset, count)` is `count`
/// entries of `length` bytes end to end in `text` from `offset`, in byte order.
#[derive(Clone, Copy)]
pub(super) struct Table {
    pub groups: &'static [(usize, usize, usize)],
    pub text: &'static str,
}

/// Whether `table` holds `key`: a binary search among the entries of its length.
fn holds(table: Table, key: &str) -> bool {
    let Some(&(len, offset, count)) = table.groups.iter().find(|g| g.0 == key.len()) else {
        return false;
    };
    let entries = &table.text.as_bytes()[offset..offset + len * count];
    let (mut low, mut high) = (0, count);
    while low < high {
        let middle = low + (high - low) / 2;
        match entries[middle * len..(middle + 1) * len].cmp(key.as_bytes()) {
            std::cmp::Ordering::Equal => return true,
            std::cmp::Ordering::Less => low = middle + 1,
            std::cmp::Ordering::Greater => high = middle,
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::{holds, Table};

    #[test]
    fn a_table_holds_exactly_its_entries() {
        let table = || Table {
            groups: &[(1, 0, 3), (2, 3, 2)],
            text: "acfbbde",
        };
        for key in ["a", "c", "f", "bb", "de"] {
            assert!(holds(table(), key), "{key}");
        }
        for key in ["", "b", "d", "g", "bbb", "ac", "cf", "dd"] {
            assert!(!holds(table(), key), "{key}");
        }
    }
}
