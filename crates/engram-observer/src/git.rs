//! Cold start: which files change together, from a git log the host supplies.

use std::collections::HashMap;

/// Commits touching more files than this are mass changes (formatting, renames, vendoring)
/// and say nothing about coupling.
pub const MAX_FILES_PER_COMMIT: usize = 30;

/// Pairs of files changed in the same commits, with how many commits, most first, from the
/// output of `git log --name-only --format=commit:%H` (also accepted: plain `commit <sha>`
/// headers or bare 40-character hashes). Paths are kept as git prints them (relative to the
/// repository root); pairs are ordered `(a, b)` with `a < b`.
pub fn co_commits(log: &str) -> Vec<(String, String, u32)> {
    let mut pairs: HashMap<(String, String), u32> = HashMap::new();
    let mut files: Vec<&str> = Vec::new();
    let mut flush = |files: &mut Vec<&str>| {
        files.sort_unstable();
        files.dedup();
        if files.len() >= 2 && files.len() <= MAX_FILES_PER_COMMIT {
            for (i, a) in files.iter().enumerate() {
                for b in &files[i + 1..] {
                    *pairs.entry(((*a).to_owned(), (*b).to_owned())).or_default() += 1;
                }
            }
        }
        files.clear();
    };
    for line in log.lines() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        if is_commit_header(line) {
            flush(&mut files);
        } else if !line.contains('\t') && !line.starts_with(' ') {
            files.push(line);
        }
    }
    flush(&mut files);
    let mut out: Vec<(String, String, u32)> =
        pairs.into_iter().map(|((a, b), n)| (a, b, n)).collect();
    out.sort_by(|x, y| {
        y.2.cmp(&x.2)
            .then_with(|| x.0.cmp(&y.0))
            .then_with(|| x.1.cmp(&y.1))
    });
    out
}

fn is_commit_header(line: &str) -> bool {
    let hash = line
        .strip_prefix("commit:")
        .or_else(|| line.strip_prefix("commit "))
        .unwrap_or(line)
        .trim();
    (hash.len() == 40 || hash.len() == 64) && hash.bytes().all(|b| b.is_ascii_hexdigit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_files_of_the_same_commit() {
        let sha = |c: char| c.to_string().repeat(40);
        let log = format!(
            "commit:{}\n\nsrc/a.py\nsrc/b.py\n\ncommit:{}\n\nsrc/a.py\nsrc/b.py\ntests/test_a.py\n\ncommit {}\nREADME.md\n",
            sha('a'),
            sha('b'),
            sha('c')
        );
        let pairs = co_commits(&log);
        assert_eq!(pairs[0], ("src/a.py".into(), "src/b.py".into(), 2));
        assert_eq!(pairs.len(), 3);
        assert!(pairs.iter().all(|(a, b, _)| a < b));
        let big: String = (0..40).map(|i| format!("f{i}.py\n")).collect();
        assert!(co_commits(&format!("commit:{}\n{big}", sha('d'))).is_empty());
    }
}
