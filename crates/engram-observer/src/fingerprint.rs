//! Error fingerprints: the same failure recognised across runs, sessions and machines.

/// The line of a tool's output that names the failure, normalized so that line numbers,
/// addresses, quoted values and paths do not make the same error look new; at most 160
/// characters. Empty output gives an empty fingerprint.
pub fn error_signature(output: &str) -> String {
    normalize(failure_line(output))
}

/// The line naming the failure, unnormalized (for templates), at most 200 characters.
pub fn error_line(output: &str) -> String {
    failure_line(output).chars().take(200).collect()
}

/// [`error_signature`] and [`error_line`] of one output, finding the failure line once.
pub fn error_parts(output: &str) -> (String, String) {
    let line = failure_line(output);
    (normalize(line), line.chars().take(200).collect())
}

/// The last line naming an exception or error outright; else the first line mentioning an
/// error, a failure or an assertion; else the first line.
fn failure_line(output: &str) -> &str {
    let lines = meaningful_lines(output);
    if let Some(line) = lines.iter().rev().find(|line| names_failure(line)) {
        return line;
    }
    let mentions = |line: &&&str| {
        let lower = line.to_ascii_lowercase();
        ["error", "fail", "assert", "exception", "panic"]
            .iter()
            .any(|w| lower.contains(w))
    };
    lines
        .iter()
        .find(mentions)
        .or_else(|| lines.first())
        .copied()
        .unwrap_or("")
}

/// Non-empty lines, without the runner's own `Exit code N` banner.
fn meaningful_lines(output: &str) -> Vec<&str> {
    output
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("Exit code "))
        .collect()
}

fn names_failure(line: &str) -> bool {
    let head = line.split([':', ' ', '(']).next().unwrap_or("");
    let exception = head
        .rsplit('.')
        .next()
        .is_some_and(|n| n.ends_with("Error") || n.ends_with("Exception") || n == "Failed");
    exception
        || line.starts_with("error")
        || line.starts_with("Error")
        || line.starts_with("E   ")
        || line.starts_with("FAILED")
        || line.starts_with("fatal:")
        || line.contains("command not found")
        || line.contains("No such file")
}

fn normalize(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' | '"' | '`' => {
                // Quoted values vary between runs; keep the quotes only.
                for next in chars.by_ref() {
                    if next == c {
                        break;
                    }
                }
                out.push(c);
                out.push(c);
            }
            '0'..='9' => {
                while chars
                    .peek()
                    .is_some_and(|n| n.is_ascii_hexdigit() || *n == 'x')
                {
                    chars.next();
                }
                out.push('N');
            }
            '/' => {
                // A path: keep only its file name.
                let mut segment = String::new();
                while let Some(&n) = chars.peek() {
                    if n.is_whitespace() || matches!(n, ':' | ',' | ')' | '\'' | '"') {
                        break;
                    }
                    segment.push(n);
                    chars.next();
                }
                out.push('/');
                out.push_str(segment.rsplit('/').next().unwrap_or(""));
            }
            c => out.push(c),
        }
        if out.len() >= 160 {
            break;
        }
    }
    out.trim().to_owned()
}

/// A stable 64-bit FNV-1a hash in hex, for ids derived from text.
pub fn stable_hash(text: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in text.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{hash:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_failure_same_signature() {
        let a = "Traceback (most recent call last):\n  File \"/testbed/a.py\", line 12\nImportError: cannot import name 'x' from 'requests.compat' (/testbed/requests/compat.py)";
        let b = "Traceback:\n  File \"/other/a.py\", line 98\nImportError: cannot import name 'y' from 'requests.compat' (/x/requests/compat.py)";
        assert_eq!(error_signature(a), error_signature(b));
        assert!(error_signature(a).starts_with("ImportError: cannot import name"));
        assert_ne!(
            error_signature(a),
            error_signature("TypeError: bad operand")
        );
        assert_eq!(error_signature(""), "");
        let exunit = "Exit code 2\nRunning ExUnit with seed: 1\n\n  1) test mount (AppTest)\n     Assertion with == failed\n";
        assert_eq!(error_line(exunit), "Assertion with == failed");
        assert_eq!(stable_hash("a"), stable_hash("a"));
        assert_ne!(stable_hash("a"), stable_hash("b"));
    }
}
