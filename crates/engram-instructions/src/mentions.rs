//! What a rule's text points at: the project files it names (`mdc:` links, relative
//! markdown links, code spans that are paths) and the files it imports (`@path`).

/// Extensions of the files a code span can name.
const FILE_EXTENSIONS: &[&str] = &[
    "rs", "ts", "tsx", "js", "jsx", "mjs", "cjs", "py", "pyi", "go", "rb", "ex", "exs", "jl", "kt",
    "kts", "java", "cs", "c", "h", "cc", "cpp", "hpp", "swift", "m", "php", "sql", "sh", "toml",
    "yaml", "yml", "json", "md", "mdc", "txt", "lock", "prisma", "proto", "html", "css", "scss",
    "vue", "svelte", "gradle", "xml", "ini", "cfg",
];

/// Files a rule names, at most this many.
pub(crate) const MAX_FILES: usize = 8;

/// The project files `text` names, as paths from the project root: `mdc:` links are from
/// the root already; relative links and `./`/`../` paths are resolved against `folder`
/// (the instruction file's folder); other code-span paths are kept as written.
pub(crate) fn files_named(text: &str, folder: &str) -> Vec<String> {
    let mut files: Vec<String> = Vec::new();
    let mut add = |path: Option<String>| {
        if let Some(path) = path {
            if files.len() < MAX_FILES && !files.contains(&path) {
                files.push(path);
            }
        }
    };
    for target in link_targets(text) {
        if let Some(rooted) = target.strip_prefix("mdc:") {
            add(clean(rooted, ""));
        } else if !target.contains("://") && !target.starts_with('#') && looks_like_file(target) {
            add(clean(target.split('#').next().unwrap_or(target), folder));
        }
    }
    for span in code_spans(text) {
        if looks_like_path(span) {
            let relative = span.starts_with("./") || span.starts_with("../");
            add(clean(span, if relative { folder } else { "" }));
        }
    }
    files
}

/// The `@path` imports in `text` (a line that is only `@AGENTS.md`, or one mid-sentence
/// as in "Follow @../core/POLICY.md"), outside code spans, as written.
pub(crate) fn imports(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut in_code = false;
    let mut previous = ' ';
    for (at, c) in text.char_indices() {
        if c == '`' {
            in_code = !in_code;
        } else if c == '@' && !in_code && previous.is_whitespace() {
            let rest = &text[at + 1..];
            let end = rest
                .find(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | ')' | '`' | '"'))
                .unwrap_or(rest.len());
            let target = rest[..end].trim_end_matches(['.', ':']);
            if target.contains('/') || looks_like_file(target) {
                found.push(target.to_owned());
            }
        }
        previous = c;
    }
    found
}

/// Where `target`, imported from the file at `from`, is from the project root; `None`
/// when it is outside the project (absolute, `~`, or above the root).
pub fn resolve_import(from: &str, target: &str) -> Option<String> {
    resolve_in(
        from.rsplit_once('/').map_or("", |(folder, _)| folder),
        target,
    )
}

/// Where `target`, imported relative to `folder`, is from the project root.
pub(crate) fn resolve_in(folder: &str, target: &str) -> Option<String> {
    if target.starts_with('/') || target.starts_with('~') || target.contains('\\') {
        return None;
    }
    clean(target, folder)
}

/// `path` joined to `folder` with `.` and `..` resolved; `None` above the root.
fn clean(path: &str, folder: &str) -> Option<String> {
    let mut parts: Vec<&str> = folder.split('/').filter(|p| !p.is_empty()).collect();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            part => parts.push(part),
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

/// The targets of markdown links `[text](target)`.
fn link_targets(text: &str) -> Vec<&str> {
    let mut targets = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        let Some(end) = after.find(')') else { break };
        let target = after[..end].split_whitespace().next().unwrap_or("");
        if !target.is_empty() {
            targets.push(target);
        }
        rest = &after[end..];
    }
    targets
}

/// The contents of the inline code spans of `text`.
pub(crate) fn code_spans(text: &str) -> Vec<&str> {
    let mut spans = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find('`') {
        let after = &rest[open + 1..];
        let Some(close) = after.find('`') else { break };
        spans.push(&after[..close]);
        rest = &after[close + 1..];
    }
    spans
}

fn looks_like_file(target: &str) -> bool {
    let name = target.rsplit('/').next().unwrap_or(target);
    name.rsplit_once('.')
        .is_some_and(|(stem, ext)| !stem.is_empty() && FILE_EXTENSIONS.contains(&ext))
}

/// A code span that is a path: no spaces, globs, schemes or scopes, and either a folder
/// separator with a file-like last part or a known extension.
fn looks_like_path(span: &str) -> bool {
    let forbidden = |c: char| {
        c.is_whitespace()
            || matches!(
                c,
                '*' | '?' | '<' | '>' | '{' | '}' | '$' | '=' | '(' | '"' | '\'' | ','
            )
    };
    if span.is_empty()
        || span.contains(forbidden)
        || span.contains("://")
        || span.contains("::")
        || span.starts_with('-')
        || span.starts_with('@')
        || span.starts_with('/')
        || span.starts_with('~')
    {
        return false;
    }
    looks_like_file(span) && (span.contains('/') || span.matches('.').count() == 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_from_mdc_links_relative_links_and_path_spans() {
        let text = "See [env.server.ts](mdc:apps/webapp/app/env.server.ts), [guide](../docs/guide.md), `src/lib.rs`, `./local.ts`, `Cargo.toml`, `**/*.go`, `@trigger.dev/core`, `std::fs`, `v1.2.3` and [site](https://x.dev/a.md).";
        assert_eq!(
            files_named(text, "apps/webapp"),
            vec![
                "apps/webapp/app/env.server.ts",
                "apps/docs/guide.md",
                "src/lib.rs",
                "apps/webapp/local.ts",
                "Cargo.toml",
            ]
        );
    }

    #[test]
    fn imports_alone_mid_sentence_and_not_in_code_or_addresses() {
        assert_eq!(imports("@AGENTS.md"), vec!["AGENTS.md"]);
        assert_eq!(
            imports("Follow @../oxc_formatter_core/FORMATTER_POLICY.md , then"),
            vec!["../oxc_formatter_core/FORMATTER_POLICY.md"]
        );
        assert_eq!(
            imports("@.github/copilot-instructions.md"),
            vec![".github/copilot-instructions.md"]
        );
        assert!(imports("write to me@example.com or use `@trigger.dev/core`").is_empty());
        assert!(imports("ping @someone about it").is_empty());
    }

    #[test]
    fn imports_resolve_inside_the_project_only() {
        assert_eq!(
            resolve_import(
                "crates/oxc_formatter/AGENTS.md",
                "../oxc_formatter_core/P.md"
            ),
            Some("crates/oxc_formatter_core/P.md".into())
        );
        assert_eq!(
            resolve_import("CLAUDE.md", "AGENTS.md"),
            Some("AGENTS.md".into())
        );
        assert_eq!(resolve_import("CLAUDE.md", "../outside.md"), None);
        assert_eq!(resolve_import("CLAUDE.md", "~/.claude/me.md"), None);
        assert_eq!(resolve_import("CLAUDE.md", "/etc/passwd"), None);
    }
}
