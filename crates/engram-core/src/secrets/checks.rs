//! The checks that keep the generic rules from redacting code: which names hold secrets,
//! which values could be passwords, and which look random enough to be keys.

/// What a key-like name holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum NameFamily {
    /// A password: any plausible value is a secret.
    Password,
    /// A key or token: only a random-looking value is.
    Key,
}

/// Words that name a password on their own.
const PASSWORD_WORDS: &[&str] = &[
    "password",
    "passwords",
    "passwd",
    "pwd",
    "pass",
    "passphrase",
    "passcode",
];

/// Words that name a key or token on their own.
const KEY_WORDS: &[&str] = &[
    "secret",
    "secrets",
    "token",
    "tokens",
    "apikey",
    "apitoken",
    "accesstoken",
    "authtoken",
    "accountkey",
    "credential",
    "credentials",
    "auth",
];

/// Words that make a following `key` a secret (`api_key`, `SigningKey`, `ACCESS_KEY`).
const KEY_QUALIFIERS: &[&str] = &[
    "api",
    "access",
    "secret",
    "private",
    "signing",
    "encryption",
    "master",
    "account",
    "client",
    "auth",
    "service",
    "subscription",
    "license",
    "app",
    "consumer",
    "shared",
    "storage",
    "deploy",
    "ssh",
    "session",
    "webhook",
    "admin",
    "root",
    "write",
    "hmac",
    "crypt",
    "jwt",
];

/// Classifies an assigned-to name by its words (`DB_PASSWORD`, `_authToken`, `X-Api-Key`).
pub(super) fn name_family(name: &str) -> Option<NameFamily> {
    let words = words(name);
    if words.iter().any(|w| PASSWORD_WORDS.contains(&w.as_str())) {
        return Some(NameFamily::Password);
    }
    let key = words.iter().enumerate().any(|(i, w)| {
        KEY_WORDS.contains(&w.as_str())
            || (w == "key" && i > 0 && KEY_QUALIFIERS.contains(&words[i - 1].as_str()))
    });
    key.then_some(NameFamily::Key)
}

/// The lowercase words of an identifier, split at separators and case changes.
fn words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let chars: Vec<char> = name.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_ascii_alphanumeric() {
            push_word(&mut words, &mut word);
            continue;
        }
        let prev = i.checked_sub(1).map(|p| chars[p]);
        let next = chars.get(i + 1).copied();
        let lower_to_upper = c.is_ascii_uppercase() && prev.is_some_and(|p| p.is_ascii_lowercase());
        // The last capital of a run starts a word: `APIKey` is `api`, `key`.
        let run_end = c.is_ascii_uppercase()
            && prev.is_some_and(|p| p.is_ascii_uppercase())
            && next.is_some_and(|n| n.is_ascii_lowercase());
        if lower_to_upper || run_end {
            push_word(&mut words, &mut word);
        }
        word.push(c.to_ascii_lowercase());
    }
    push_word(&mut words, &mut word);
    words
}

fn push_word(words: &mut Vec<String>, word: &mut String) {
    if !word.is_empty() {
        words.push(std::mem::take(word));
    }
}

/// Values that name a type, a placeholder or a literal rather than hold a password.
const NOT_PASSWORDS: &[&str] = &[
    "string",
    "str",
    "bool",
    "boolean",
    "int",
    "integer",
    "number",
    "none",
    "null",
    "nil",
    "undefined",
    "true",
    "false",
    "required",
    "optional",
    "text",
    "any",
    "object",
    "bytes",
    "char",
    "varchar",
    "field",
    "hidden",
    "input",
    "redacted",
    "masked",
    "secret",
    "password",
    "empty",
    "unset",
    "default",
    "value",
    "example",
    "placeholder",
    "self",
    "this",
];

/// Whether `value`, assigned to a password name, could be a real password.
pub(super) fn plausible_password(value: &str) -> bool {
    let value = value.trim_end_matches(['}', ')', ']', '>']);
    if value.chars().count() < 4
        || value
            .chars()
            .all(|c| c == value.chars().next().unwrap_or(c))
    {
        return false;
    }
    // Interpolations, references, markers (ours included) and paths are not passwords.
    if value.starts_with([
        '$', '<', '{', '%', '[', '(', '/', '~', '@', '&', '*', '#', '!',
    ]) || value.starts_with("./")
        || value.contains(['(', '[', '{'])
    {
        return false;
    }
    let lower = value.to_ascii_lowercase();
    // `self.password`, `config.db.pass`: a reference to the password, not the password.
    let reference = value.contains('.') && is_identifier_path(value) && !has_digit(value);
    !(NOT_PASSWORDS.contains(&lower.as_str()) || reference)
}

/// Whether `value` looks like a generated key: long, mixed and of high entropy.
pub(super) fn looks_random(value: &str) -> bool {
    let len = value.chars().count();
    let plain = value
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "+/=_-.~".contains(c));
    // Punctuation beyond base64's is code far more often than a key, unless the value is
    // long and very mixed (`SECRET_KEY = 'x8#k…'`).
    if !plain {
        let printable = value.chars().all(|c| c.is_ascii_graphic());
        return printable && len >= 32 && shannon_entropy(value) >= 4.3;
    }
    if len < 8 {
        return false;
    }
    if is_identifier_path(value) && !has_digit(value) || is_snake_words(value) {
        return false;
    }
    let letter = value.chars().any(|c| c.is_ascii_alphabetic());
    let entropy = shannon_entropy(value);
    (letter && has_digit(value) && entropy >= 3.0) || (len >= 20 && entropy >= 3.5)
}

fn has_digit(value: &str) -> bool {
    value.chars().any(|c| c.is_ascii_digit())
}

/// `config.db.url`, `getToken`: identifiers joined by dots.
fn is_identifier_path(value: &str) -> bool {
    value.split('.').all(|part| {
        let mut chars = part.chars();
        chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// `user_token_v2`, `read-only`: lowercase words joined by `_` or `-`.
fn is_snake_words(value: &str) -> bool {
    let parts: Vec<&str> = value.split(['_', '-']).collect();
    parts.len() > 1
        && parts.iter().all(|part| {
            let mut chars = part.chars();
            chars.next().is_some_and(|c| c.is_ascii_lowercase())
                && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        })
}

/// Bits per character of `value`'s character distribution.
fn shannon_entropy(value: &str) -> f64 {
    let mut counts = [0u32; 128];
    let mut total = 0u32;
    for byte in value.bytes().filter(u8::is_ascii) {
        counts[byte as usize] += 1;
        total += 1;
    }
    if total == 0 {
        return 0.0;
    }
    let total = f64::from(total);
    counts
        .iter()
        .filter(|&&n| n > 0)
        .map(|&n| {
            let p = f64::from(n) / total;
            -p * p.log2()
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_split_into_words() {
        assert_eq!(words("DB_PASSWORD"), ["db", "password"]);
        assert_eq!(words("_authToken"), ["auth", "token"]);
        assert_eq!(words("APIKey"), ["api", "key"]);
        assert_eq!(words("X-Api-Key"), ["x", "api", "key"]);
    }

    #[test]
    fn names_are_classified_by_their_words() {
        assert_eq!(name_family("DB_PASSWORD"), Some(NameFamily::Password));
        assert_eq!(name_family("SECRET_KEY_BASE"), Some(NameFamily::Key));
        assert_eq!(name_family("aws_secret_access_key"), Some(NameFamily::Key));
        assert_eq!(name_family("AccountKey"), Some(NameFamily::Key));
        assert_eq!(name_family("author"), None);
        assert_eq!(name_family("sort_key"), None);
        assert_eq!(name_family("keyboard"), None);
        assert_eq!(name_family("bypass"), None);
    }

    #[test]
    fn code_is_not_a_password() {
        for value in [
            "string",
            "str",
            "request.form",
            "hashPassword(pw)",
            "${DB_PASSWORD}",
            "$PASSWORD",
            "[REDACTED:password]",
            "/home/user",
            "****",
        ] {
            assert!(!plausible_password(value), "{value}");
        }
        for value in ["hunter22", "S3cret!", "letmein99", "changeme"] {
            assert!(plausible_password(value), "{value}");
        }
    }

    #[test]
    fn only_random_values_are_keys() {
        for value in [
            "getToken",
            "user_token_v2",
            "Optional",
            "4096",
            "bearer",
            "v1.2.3",
        ] {
            assert!(!looks_random(value), "{value}");
        }
        for value in [
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
            "abc123def456",
        ] {
            assert!(looks_random(value), "{value}");
        }
    }
}
