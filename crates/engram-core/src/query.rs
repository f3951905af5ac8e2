//! Query sanitization for FTS5.
//!
//! No user text ever reaches FTS5 query syntax: queries are split into alphanumeric
//! tokens, stop words are dropped, and the MATCH expression is built only from those tokens,
//! each double-quoted and joined with `OR`. Operators, quotes, parentheses, column filters
//! and `NEAR`/`AND`/`NOT` in the input are therefore inert.

/// Most tokens kept from one query; longer queries keep their first tokens.
pub const MAX_QUERY_TOKENS: usize = 32;
/// Longest token kept, in characters; longer runs are truncated.
pub const MAX_TOKEN_CHARS: usize = 64;

/// English and programming-prose words too common to help ranking, sorted, none longer
/// than 8 bytes (looked up as [`STOP_KEYS`]).
const STOP_WORDS: &[&str] = &[
    "a", "about", "after", "all", "also", "am", "an", "and", "any", "are", "as", "at", "be",
    "been", "before", "but", "by", "can", "could", "did", "do", "does", "doing", "for", "from",
    "had", "has", "have", "having", "he", "her", "here", "him", "his", "how", "i", "if", "in",
    "into", "is", "it", "its", "just", "me", "my", "no", "nor", "not", "of", "on", "or", "our",
    "out", "over", "she", "should", "so", "some", "such", "than", "that", "the", "their", "them",
    "then", "there", "these", "they", "this", "those", "to", "too", "under", "up", "very", "was",
    "we", "were", "what", "when", "where", "which", "while", "who", "why", "will", "with", "would",
    "you", "your",
];

/// Splits text into lowercase search tokens.
///
/// Runs of letters and digits are tokens; identifiers are also split into their parts
/// (`parseConfig` → `parseconfig`, `parse`, `config`; `max_retries` → `max`, `retries`, and
/// the joined form), so a query for either form finds the other. Stop words and single
/// characters are dropped; duplicates are removed keeping first occurrence.
///
/// ```
/// use engram_core::query::tokenize;
/// assert_eq!(tokenize("Why does parseConfig fail?"), ["parseconfig", "parse", "config", "fail"]);
/// ```
pub fn tokenize(text: &str) -> Vec<String> {
    let mut tokens = token_counts(text);
    tokens.truncate(MAX_QUERY_TOKENS);
    tokens.into_iter().map(|(token, _)| token).collect()
}

/// Most distinct tokens [`token_counts`] reports.
pub const MAX_COUNTED_TOKENS: usize = 4096;

/// Every distinct search token of `text` (as [`tokenize`] makes them, unbounded up to
/// [`MAX_COUNTED_TOKENS`]) with how often it occurs, in order of first occurrence. Long
/// queries (an issue report) choose their most telling tokens from these.
///
/// ```
/// use engram_core::query::token_counts;
/// let counts = token_counts("retry the retry_policy; retry later");
/// assert_eq!(counts[0], ("retry".to_owned(), 3));
/// assert_eq!(counts[1], ("retrypolicy".to_owned(), 1));
/// ```
pub fn token_counts(text: &str) -> Vec<(String, u32)> {
    let mut tokens: Vec<(String, u32)> = Vec::new();
    let mut index: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for_each_token(text, |token| match index.get(token) {
        Some(&i) => tokens[i].1 += 1,
        None if tokens.len() < MAX_COUNTED_TOKENS => {
            index.insert(token.to_owned(), tokens.len());
            tokens.push((token.to_owned(), 1));
        }
        None => {}
    });
    tokens
}

/// Calls `f` with every search token of `text` in order of occurrence, repeats included:
/// the tokens [`token_counts`] counts, without building a table. Plain lower-case words
/// (most of prose) are passed without allocating.
///
/// ```
/// use engram_core::query::for_each_token;
/// let mut seen = Vec::new();
/// for_each_token("The parseConfig parse", |t| seen.push(t.to_owned()));
/// assert_eq!(seen, ["parseconfig", "parse", "config", "parse"]);
/// ```
pub fn for_each_token(text: &str, mut f: impl FnMut(&str)) {
    let mut emit = |token: &str| {
        let token = truncate(token);
        if token.chars().nth(1).is_some() && !is_stop_word(token) {
            f(token);
        }
    };
    for word in text
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
    {
        let plain = word
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
        if plain {
            emit(word);
            continue;
        }
        let parts = identifier_parts(word);
        emit(&parts.concat());
        if parts.len() > 1 {
            for part in &parts {
                emit(part);
            }
        }
    }
}

/// Whether `word` is a stop word (too common to help ranking).
pub fn is_stop_word(word: &str) -> bool {
    // NUL pads the keys, and no token holds one.
    let bytes = word.as_bytes();
    bytes.len() <= 8 && !bytes.contains(&0) && STOP_KEYS.binary_search(&key_of(bytes)).is_ok()
}

/// [`STOP_WORDS`] as integers, found by binary search: ranking tokenizes every candidate's
/// content on each search, and comparing strings there cost a twentieth of a search.
const STOP_KEYS: [u64; STOP_WORDS.len()] = {
    let mut keys = [0; STOP_WORDS.len()];
    let mut i = 0;
    while i < keys.len() {
        assert!(STOP_WORDS[i].len() <= 8, "stop words fit in a key");
        keys[i] = key_of(STOP_WORDS[i].as_bytes());
        i += 1;
    }
    keys
};

/// A word of at most 8 bytes as an integer: its bytes big-endian, padded on the right with
/// zeros, so keys order as their words do (and sorted words give sorted keys).
const fn key_of(word: &[u8]) -> u64 {
    let mut key = 0;
    let mut i = 0;
    while i < 8 {
        key <<= 8;
        if i < word.len() {
            key |= word[i] as u64;
        }
        i += 1;
    }
    key
}

/// `token` cut to its first [`MAX_TOKEN_CHARS`] characters.
fn truncate(token: &str) -> &str {
    match token.char_indices().nth(MAX_TOKEN_CHARS) {
        Some((end, _)) => &token[..end],
        None => token,
    }
}

/// Splits an identifier at underscores and lower→upper case changes, lowercased.
fn identifier_parts(word: &str) -> Vec<String> {
    let mut parts = Vec::new();
    for piece in word.split('_').filter(|p| !p.is_empty()) {
        let mut current = String::new();
        let mut prev_lower = false;
        for c in piece.chars() {
            if c.is_uppercase() && prev_lower && !current.is_empty() {
                parts.push(std::mem::take(&mut current));
            }
            prev_lower = c.is_lowercase() || c.is_ascii_digit();
            current.extend(c.to_lowercase());
        }
        if !current.is_empty() {
            parts.push(current);
        }
    }
    parts
}

/// Builds a safe FTS5 MATCH expression from query text, or `None` when nothing searchable
/// remains (then the caller must not run a MATCH at all).
///
/// ```
/// use engram_core::query::match_expression;
/// assert_eq!(match_expression("db AND (lock*)").as_deref(), Some(r#""db" OR "lock""#));
/// assert_eq!(match_expression("the of ^\"*"), None);
/// ```
pub fn match_expression(text: &str) -> Option<String> {
    match_expression_of(&tokenize(text))
}

/// Whether [`match_expression_of`] keeps `token`: a non-empty run of letters, digits and
/// underscores.
pub fn is_match_token(token: &str) -> bool {
    !token.is_empty() && token.chars().all(|c| c.is_alphanumeric() || c == '_')
}

/// Builds the MATCH expression from tokens made by [`tokenize`] or [`token_counts`];
/// anything that is not a run of letters, digits and underscores is dropped, so the result
/// is safe whatever the caller passes.
pub fn match_expression_of<'a>(tokens: impl IntoIterator<Item = &'a String>) -> Option<String> {
    let tokens: Vec<&String> = tokens.into_iter().filter(|t| is_match_token(t)).collect();
    if tokens.is_empty() {
        return None;
    }
    // Tokens hold only letters, digits and no quotes, so quoting them makes every token a
    // plain phrase; FTS5 keywords such as NEAR or AND lose their meaning inside quotes.
    Some(
        tokens
            .iter()
            .map(|t| format!("\"{t}\""))
            .collect::<Vec<_>>()
            .join(" OR "),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_words_are_found_by_their_keys() {
        assert!(STOP_WORDS.windows(2).all(|w| w[0] < w[1]));
        assert!(STOP_KEYS.windows(2).all(|k| k[0] < k[1]));
        assert!(STOP_WORDS.iter().all(|w| is_stop_word(w)));
        for word in [
            "migration",
            "zz",
            "",
            "a\0",
            "the\0",
            "thes",
            "aboutness",
            "i_",
        ] {
            assert!(!is_stop_word(word), "{word:?}");
        }
    }

    #[test]
    fn hostile_fts_syntax_is_inert() {
        let hostile = [
            r#"" OR 1=1 --"#,
            "content:secret",
            "NEAR(a b, 3)",
            "foo* ^bar",
            "\"unterminated",
            "a AND NOT b",
            "{content tags}: x",
            "'); DROP TABLE memories; --",
        ];
        for input in hostile {
            if let Some(expr) = match_expression(input) {
                for clause in expr.split(" OR ") {
                    let inner = clause
                        .strip_prefix('"')
                        .and_then(|c| c.strip_suffix('"'))
                        .unwrap_or_else(|| panic!("unquoted clause {clause:?} from {input:?}"));
                    assert!(
                        inner.chars().all(|c| c.is_alphanumeric() || c == '_'),
                        "{input:?} produced {expr:?}"
                    );
                }
            }
        }
        assert_eq!(
            match_expression("NEAR(a b, 3)").as_deref(),
            Some("\"near\"")
        );
        assert_eq!(
            match_expression("'); DROP TABLE memories; --").as_deref(),
            Some("\"drop\" OR \"table\" OR \"memories\"")
        );
    }

    #[test]
    fn identifiers_are_split_and_joined() {
        assert_eq!(tokenize("max_retries"), ["maxretries", "max", "retries"]);
        assert_eq!(tokenize("HTTPServer"), ["httpserver"]);
        assert_eq!(
            tokenize("getHTTPResponse"),
            ["gethttpresponse", "get", "httpresponse"]
        );
    }

    #[test]
    fn non_ascii_letters_are_tokens() {
        assert_eq!(tokenize("Größe der Datei"), ["größe", "der", "datei"]);
        assert_eq!(tokenize("数据库 锁"), ["数据库"]);
    }

    #[test]
    fn tokens_are_bounded() {
        let long = "word".repeat(100);
        assert_eq!(tokenize(&long)[0].chars().count(), MAX_TOKEN_CHARS);
        let many: String = (0..100).map(|i| format!("tok{i} ")).collect();
        assert_eq!(tokenize(&many).len(), MAX_QUERY_TOKENS);
    }
}
