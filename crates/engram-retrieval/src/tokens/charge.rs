//! What the estimate charges a piece by its shape alone.

use super::known;

/// A whitespace run. The tokenizers cut it after its last line break; what is before is one
/// piece, and the blanks after it split their last character off (onto the next word, or
/// into a token of its own), very long runs into several tokens.
pub(super) fn space(run: &str) -> usize {
    let (lines, blanks) = at_last_break(run);
    lines_charge(lines)
        + match blanks.len() {
            0 => 0,
            1 => 1,
            n => 2 + n / 16,
        }
}

/// A whitespace run whose last space went into the next word's token: what is left splits
/// into everything up to its last line break, and the blanks after it.
pub(super) fn absorbed_space(rest: &str) -> usize {
    let (lines, blanks) = at_last_break(rest);
    lines_charge(lines) + usize::from(!blanks.is_empty()) + blanks.len() / 16
}

/// `run` cut after its last line break.
fn at_last_break(run: &str) -> (&str, &str) {
    run.split_at(run.rfind(['\n', '\r']).map_or(0, |i| i + 1))
}

/// A whitespace run ending in a line break (or nothing): one token when the tokenizers hold
/// it whole, else one per line break and per 16 characters.
fn lines_charge(lines: &str) -> usize {
    if lines.is_empty() {
        0
    } else if known::blank_lines(lines) {
        1
    } else {
        let breaks = lines.bytes().filter(|&b| b == b'\n' || b == b'\r').count();
        breaks + lines.len() / 16
    }
}

/// The charge of a run of ASCII letters and digits.
pub(super) fn word(word: &str) -> usize {
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
