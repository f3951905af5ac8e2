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
//! - ASCII punctuation and symbols: one token each;
//! - a run of whitespace: one token, plus one per line break;
//! - any other character: one token per UTF-8 byte (a byte-level BPE never spends more).
//!
//! A test checks the estimate against the real cl100k and o200k tokenizers over every text of
//! the evaluation data (code, issue reports, transcripts): it never undercounts; what it
//! overcounts, the price of never overflowing, is in docs/retrieval.md.

/// An upper-bound estimate of the tokens `text` costs a byte-level BPE tokenizer.
///
/// ```
/// use engram_retrieval::tokens::estimate;
/// assert_eq!(estimate(""), 0);
/// assert_eq!(estimate("hello"), 3);
/// assert_eq!(estimate("retry 3x"), 1 + 3 + 1 + 1);
/// ```
pub fn estimate(text: &str) -> usize {
    let mut total = 0;
    let mut word = String::new();
    let (mut space, mut breaks) = (0usize, 0usize);
    for c in text.chars() {
        if c.is_ascii_whitespace() {
            total += word_charge(&word);
            word.clear();
            space += 1;
            breaks += usize::from(c == '\n');
            continue;
        }
        total += space_charge(space, breaks);
        (space, breaks) = (0, 0);
        if c.is_ascii_alphanumeric() {
            word.push(c);
            continue;
        }
        total += word_charge(&word);
        word.clear();
        total += if c.is_ascii() { 1 } else { c.len_utf8() };
    }
    total + word_charge(&word) + space_charge(space, breaks)
}

/// A run of `n` whitespace characters holding `breaks` line breaks: the tokenizers split a
/// run's last character off onto the next word, very long runs into several tokens, and
/// consecutive line breaks apart.
fn space_charge(n: usize, breaks: usize) -> usize {
    match n {
        0 => 0,
        1 => 1,
        n => 2 + n / 16 + breaks.saturating_sub(1),
    }
}

/// The charge of a run of ASCII letters and digits.
fn word_charge(word: &str) -> usize {
    if word.is_empty() {
        return 0;
    }
    let bytes = word.as_bytes();
    let class_changes = bytes
        .windows(2)
        .filter(|w| w[0].is_ascii_digit() != w[1].is_ascii_digit())
        .count();
    let has_digits = bytes.iter().any(u8::is_ascii_digit);
    let case_changes = bytes
        .windows(2)
        .filter(|w| w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase())
        .count();
    if class_changes >= 2 || (has_digits && class_changes >= 1 && case_changes >= 1) {
        // An id or a hash (`011CY2vzF`, `a3f9c2e1`, `01164hogfWqDf`): no merges to count on.
        return word.len();
    }
    let mut total = 0;
    let (mut letters, mut uppers, mut digits) = (0usize, 0usize, 0usize);
    let mut last_lower = false;
    let mut flush = |letters: &mut usize, uppers: &mut usize, digits: &mut usize| {
        total += if *uppers >= 2 {
            *letters
        } else if *letters <= 4 {
            letters.div_ceil(2)
        } else {
            2 + (*letters - 4).div_ceil(3)
        } + digits.div_ceil(3);
        (*letters, *uppers, *digits) = (0, 0, 0);
    };
    for &b in bytes {
        if b.is_ascii_digit() {
            if letters > 0 {
                flush(&mut letters, &mut uppers, &mut digits);
            }
            digits += 1;
            last_lower = false;
            continue;
        }
        if digits > 0 || (b.is_ascii_uppercase() && last_lower) {
            flush(&mut letters, &mut uppers, &mut digits);
        }
        letters += 1;
        if b.is_ascii_uppercase() {
            uppers += 1;
        }
        last_lower = b.is_ascii_lowercase();
    }
    flush(&mut letters, &mut uppers, &mut digits);
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_are_charged_as_documented() {
        assert_eq!(estimate("getHTTPResponse"), 2 + 12);
        assert_eq!(estimate("getResponse"), 2 + 4);
        assert_eq!(estimate("1234567"), 3);
        assert_eq!(estimate("a\n\n  b"), 1 + 3 + 1);
        assert_eq!(estimate("configuration"), 2 + 3);
        assert_eq!(estimate("数据"), 6);
        assert_eq!(estimate("{}();"), 5);
        assert_eq!(estimate("a3f9c2e1"), 8);
        assert_eq!(estimate("utf8"), 2 + 1);
    }
}
