//! The Porter stemmer (M. F. Porter, "An algorithm for suffix stripping", 1980), as SQLite's
//! FTS5 `porter` tokenizer applies it to the keyword index.
//!
//! The keyword path needs a query term's stem to look up its document frequency in the
//! index's vocabulary (`memories_fts_vocab`). A stem that differs from FTS5's only makes the
//! lookup miss, and a missed term is simply kept in the query, so a disagreement costs
//! speed, never results. A conformance test compares these stems with FTS5's own.

/// The Porter stem of a token, as FTS5's `porter` tokenizer makes it: tokens of 3 to 64
/// bytes are stemmed (any byte other than a vowel counts as a consonant, so digits and
/// non-ASCII letters take part: `12s` → `12`), shorter and longer ones come back unchanged.
/// Tokens reach the stemmer lower-cased by `unicode61`, so the suffix rules only ever match
/// lower-case ASCII.
///
/// ```
/// use engram_core::porter::stem;
/// assert_eq!(stem("running"), "run");
/// assert_eq!(stem("generalizations"), "gener");
/// assert_eq!(stem("happy"), "happi");
/// assert_eq!(stem("caresses"), "caress");
/// ```
pub fn stem(word: &str) -> String {
    if !(MIN_STEMMED..=MAX_STEMMED).contains(&word.len()) {
        return word.to_owned();
    }
    let mut w = word.as_bytes().to_vec();
    step1a(&mut w);
    step1b(&mut w);
    step1c(&mut w);
    step2(&mut w);
    step3(&mut w);
    step4(&mut w);
    step5(&mut w);
    // Suffixes are ASCII and cut at ASCII letters, so the bytes stay UTF-8 (short of a
    // double-consonant rule splitting a multi-byte character, which no text word reaches).
    String::from_utf8(w).unwrap_or_else(|_| word.to_owned())
}

/// Shortest token FTS5 stems, in bytes.
const MIN_STEMMED: usize = 3;
/// Longest token FTS5 stems, in bytes.
const MAX_STEMMED: usize = 64;

/// Whether `w[i]` is a consonant: not a vowel, and `y` only after a vowel (or first).
fn consonant(w: &[u8], i: usize) -> bool {
    match w[i] {
        b'a' | b'e' | b'i' | b'o' | b'u' => false,
        b'y' => i == 0 || !consonant(w, i - 1),
        _ => true,
    }
}

/// The measure m of `w`: the number of vowel-consonant sequences in `[C](VC)^m[V]`.
fn measure(w: &[u8]) -> usize {
    let mut m = 0;
    let mut i = 0;
    while i < w.len() && consonant(w, i) {
        i += 1;
    }
    loop {
        while i < w.len() && !consonant(w, i) {
            i += 1;
        }
        if i >= w.len() {
            return m;
        }
        while i < w.len() && consonant(w, i) {
            i += 1;
        }
        m += 1;
    }
}

fn has_vowel(w: &[u8]) -> bool {
    (0..w.len()).any(|i| !consonant(w, i))
}

/// Ends with a double consonant.
fn double_consonant(w: &[u8]) -> bool {
    let n = w.len();
    n >= 2 && w[n - 1] == w[n - 2] && consonant(w, n - 1)
}

/// Ends consonant-vowel-consonant, the last not `w`, `x` or `y`.
fn cvc(w: &[u8]) -> bool {
    let n = w.len();
    n >= 3
        && consonant(w, n - 3)
        && !consonant(w, n - 2)
        && consonant(w, n - 1)
        && !matches!(w[n - 1], b'w' | b'x' | b'y')
}

/// If `w` ends with `suffix`, the stem before it.
fn stem_of<'a>(w: &'a [u8], suffix: &str) -> Option<&'a [u8]> {
    w.strip_suffix(suffix.as_bytes())
}

fn replace(w: &mut Vec<u8>, suffix_len: usize, with: &str) {
    w.truncate(w.len() - suffix_len);
    w.extend_from_slice(with.as_bytes());
}

fn step1a(w: &mut Vec<u8>) {
    if w.ends_with(b"sses") || w.ends_with(b"ies") {
        w.truncate(w.len() - 2);
    } else if !w.ends_with(b"ss") && w.ends_with(b"s") {
        w.pop();
    }
}

fn step1b(w: &mut Vec<u8>) {
    if let Some(stem) = stem_of(w, "eed") {
        if measure(stem) > 0 {
            w.pop();
        }
        return;
    }
    let removed = ["ed", "ing"].into_iter().find_map(|suffix| {
        stem_of(w, suffix)
            .filter(|stem| has_vowel(stem))
            .map(|_| suffix.len())
    });
    let Some(len) = removed else { return };
    w.truncate(w.len() - len);
    if w.ends_with(b"at") || w.ends_with(b"bl") || w.ends_with(b"iz") {
        w.push(b'e');
    } else if double_consonant(w) && !matches!(w.last(), Some(b'l' | b's' | b'z')) {
        w.pop();
    } else if measure(w) == 1 && cvc(w) {
        w.push(b'e');
    }
}

fn step1c(w: &mut [u8]) {
    if let Some(stem) = stem_of(w, "y") {
        if has_vowel(stem) {
            let n = w.len();
            w[n - 1] = b'i';
        }
    }
}

/// Replaces the longest listed suffix when the stem before it has measure above `min`.
fn rule_list(w: &mut Vec<u8>, rules: &[(&str, &str)], min: usize) {
    let Some(&(suffix, with)) = rules
        .iter()
        .filter(|(suffix, _)| w.ends_with(suffix.as_bytes()))
        .max_by_key(|(suffix, _)| suffix.len())
    else {
        return;
    };
    if measure(&w[..w.len() - suffix.len()]) > min {
        replace(w, suffix.len(), with);
    }
}

fn step2(w: &mut Vec<u8>) {
    rule_list(
        w,
        &[
            ("ational", "ate"),
            ("tional", "tion"),
            ("enci", "ence"),
            ("anci", "ance"),
            ("izer", "ize"),
            ("bli", "ble"),
            ("alli", "al"),
            ("entli", "ent"),
            ("eli", "e"),
            ("ousli", "ous"),
            ("ization", "ize"),
            ("ation", "ate"),
            ("ator", "ate"),
            ("alism", "al"),
            ("iveness", "ive"),
            ("fulness", "ful"),
            ("ousness", "ous"),
            ("aliti", "al"),
            ("iviti", "ive"),
            ("biliti", "ble"),
            ("logi", "log"),
        ],
        0,
    );
}

fn step3(w: &mut Vec<u8>) {
    rule_list(
        w,
        &[
            ("icate", "ic"),
            ("ative", ""),
            ("alize", "al"),
            ("iciti", "ic"),
            ("ical", "ic"),
            ("ful", ""),
            ("ness", ""),
        ],
        0,
    );
}

fn step4(w: &mut Vec<u8>) {
    const SUFFIXES: [&str; 19] = [
        "al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent", "ion",
        "ou", "ism", "ate", "iti", "ous", "ive", "ize",
    ];
    let Some(suffix) = SUFFIXES
        .iter()
        .filter(|s| w.ends_with(s.as_bytes()))
        .max_by_key(|s| s.len())
    else {
        return;
    };
    let stem = &w[..w.len() - suffix.len()];
    let allowed = *suffix != "ion" || matches!(stem.last(), Some(b's' | b't'));
    if allowed && measure(stem) > 1 {
        let n = stem.len();
        w.truncate(n);
    }
}

fn step5(w: &mut Vec<u8>) {
    if let Some(stem) = stem_of(w, "e") {
        let m = measure(stem);
        if m > 1 || (m == 1 && !cvc(stem)) {
            w.pop();
        }
    }
    if measure(w) > 1 && double_consonant(w) && w.last() == Some(&b'l') {
        w.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::stem;

    #[test]
    fn the_papers_examples() {
        for (word, expected) in [
            ("caresses", "caress"),
            ("ponies", "poni"),
            ("ties", "ti"),
            ("cats", "cat"),
            ("feed", "feed"),
            ("agreed", "agre"),
            ("plastered", "plaster"),
            ("bled", "bled"),
            ("motoring", "motor"),
            ("sing", "sing"),
            ("conflated", "conflat"),
            ("hopping", "hop"),
            ("falling", "fall"),
            ("filing", "file"),
            ("sky", "sky"),
            ("relational", "relat"),
            ("triplicate", "triplic"),
            ("adjustment", "adjust"),
            ("adoption", "adopt"),
            ("controlling", "control"),
        ] {
            assert_eq!(stem(word), expected, "{word}");
        }
    }

    #[test]
    fn short_and_long_tokens_pass_through() {
        assert_eq!(stem("is"), "is");
        let long = "abcdefghijklmnopqrstuvwxyz".repeat(3);
        assert_eq!(stem(&format!("{long}ing")), format!("{long}ing"));
        assert_eq!(stem(&format!("{}ing", &long[..61])), &long[..61]);
    }

    #[test]
    fn digits_and_other_letters_count_as_consonants() {
        assert_eq!(stem("12s"), "12");
        assert_eq!(stem("123ing"), "123ing");
        assert_eq!(stem("utf8s"), "utf8");
        assert_eq!(stem("café"), "café");
        assert_eq!(stem("cafés"), "café");
    }
}
