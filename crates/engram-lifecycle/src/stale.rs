//! Staleness against the code: whether what a memory cites — its files, the symbol it
//! targets, the code names it mentions in those files — still exists and is unchanged.
//!
//! A memory is stale when a file it cites was deleted, or a symbol it is attached to was
//! removed or its text changed. It is attached to a symbol by its target node, or by
//! naming one that is defined in a file it cites (`get_records` in a memory about
//! `src/_pytest/logging.py`). A change elsewhere in a cited file, or in code that depends
//! on the symbol, leaves it alone: the memory's own subject did not change. A renamed
//! file is not staleness: the memory's paths follow it.

use std::collections::{BTreeMap, BTreeSet};

/// What happened to a symbol between two versions of the code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SymbolChange {
    /// Its text changed.
    Changed,
    /// It no longer exists.
    Removed,
}

/// A definition of the code before the change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Symbol {
    /// Its node id.
    pub id: String,
    /// Its qualified name (`Class.method`).
    pub qualified: String,
}

/// What changed in the code between two index calls.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CodeChange {
    /// Files that moved, old path → new path (same content).
    pub renamed: BTreeMap<String, String>,
    /// Files deleted (renames excluded).
    pub deleted: BTreeSet<String>,
    /// Symbols whose text changed or that were removed, by node id.
    pub symbols: BTreeMap<String, SymbolChange>,
    /// The definitions each changed file had before the change.
    pub definitions: BTreeMap<String, Vec<Symbol>>,
}

/// What a memory cites.
#[derive(Debug, Clone, Copy)]
pub struct Cited<'a> {
    /// Its related files.
    pub files: &'a [String],
    /// The node it targets, if any.
    pub target_node: Option<&'a str>,
    /// The code names its text mentions ([`symbol_names`]).
    pub names: &'a [String],
}

/// What a code change does to one memory.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Verdict {
    /// Its related files after renames, when one of them moved.
    pub renamed_files: Option<Vec<String>>,
    /// Its target node after a rename, when the node's file moved.
    pub renamed_target: Option<String>,
    /// Why it is stale, when it is.
    pub stale: Option<String>,
}

impl CodeChange {
    /// Whether nothing a memory could cite changed.
    pub fn is_empty(&self) -> bool {
        self.renamed.is_empty() && self.deleted.is_empty() && self.symbols.is_empty()
    }

    /// The files whose memories may be affected: moved, deleted, or with a changed symbol.
    pub fn affected_files(&self) -> BTreeSet<&str> {
        let mut files: BTreeSet<&str> = self.renamed.keys().map(String::as_str).collect();
        files.extend(self.deleted.iter().map(String::as_str));
        files.extend(self.symbols.keys().map(|id| node_file(id)));
        files
    }

    /// The verdict for a memory citing `cited`.
    pub fn judge(&self, cited: Cited<'_>) -> Verdict {
        let mut verdict = Verdict::default();
        if cited.files.iter().any(|f| self.renamed.contains_key(f)) {
            let files = cited
                .files
                .iter()
                .map(|f| self.renamed.get(f).unwrap_or(f).clone())
                .collect();
            verdict.renamed_files = Some(files);
        }
        verdict.renamed_target = cited.target_node.and_then(|t| self.moved_node(t));
        verdict.stale = self.stale_reason(cited);
        verdict
    }

    /// Node `id` under its file's new path, when that file was renamed.
    fn moved_node(&self, id: &str) -> Option<String> {
        match id.strip_prefix("file:") {
            Some(path) => self.renamed.get(path).map(|to| format!("file:{to}")),
            None => {
                let (path, rest) = id.split_once('#')?;
                self.renamed.get(path).map(|to| format!("{to}#{rest}"))
            }
        }
    }

    fn stale_reason(&self, cited: Cited<'_>) -> Option<String> {
        if let Some(target) = cited.target_node {
            if let Some(change) = self.symbols.get(target) {
                return Some(describe(*change, target));
            }
            if self.deleted.contains(node_file(target)) {
                return Some(format!("file deleted: {}", node_file(target)));
            }
        }
        for file in cited.files {
            if self.deleted.contains(file) {
                return Some(format!("file deleted: {file}"));
            }
        }
        // A memory attached to a node is about that node: the other names in its text
        // (its class, a call it makes) are not its subject.
        if cited.target_node.is_some() {
            return None;
        }
        for file in cited.files {
            let Some(definitions) = self.definitions.get(file) else {
                continue;
            };
            for symbol in definitions {
                let Some(change) = self.symbols.get(&symbol.id) else {
                    continue;
                };
                if cited
                    .names
                    .iter()
                    .any(|n| names_symbol(n, &symbol.qualified, definitions, cited.names))
                {
                    return Some(describe(*change, &symbol.id));
                }
            }
        }
        None
    }
}

/// Whether code name `name`, among the `names` a memory writes, names the definition
/// `qualified` of a file that has `definitions`: the whole qualified name, or its last
/// part when that names one definition of the file or the memory also names the rest
/// (`get_records` names `LogCaptureFixture.get_records`; `suspend`, in a file whose three
/// classes each have one, names none of them unless the memory names the class too).
pub fn names_symbol(name: &str, qualified: &str, definitions: &[Symbol], names: &[String]) -> bool {
    if name == qualified {
        return true;
    }
    let Some((owner, last)) = qualified.rsplit_once('.') else {
        return false;
    };
    if last != name {
        return false;
    }
    let namesakes = definitions
        .iter()
        .filter(|d| d.qualified.rsplit('.').next() == Some(name))
        .count();
    namesakes == 1
        || names
            .iter()
            .any(|n| n == owner || owner.ends_with(&format!(".{n}")))
}

/// The code names a memory's text mentions, as written: its code spans that are names
/// (a trailing `()` dropped) and bare words shaped like code (`snake_case`, `camelCase`,
/// `Type.method`, `call()`). Leading underscores stay: `_suspend` is not `suspend`.
pub fn symbol_names(text: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let mut push = |word: &str| {
        let word = word.trim_end_matches("()");
        let shaped = !word.is_empty()
            && word
                .chars()
                .next()
                .is_some_and(|c| c.is_alphabetic() || c == '_')
            && word
                .chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '_' | '.'));
        if shaped && !names.iter().any(|n| n == word) {
            names.push(word.to_owned());
        }
    };
    let mut in_code = false;
    for part in text.split('`') {
        if in_code {
            push(part.trim());
        } else {
            for raw in part.split_whitespace() {
                let word = raw.trim_matches(|c: char| !(c.is_alphanumeric() || c == '_'));
                let call = raw.contains("()");
                let camel = word
                    .chars()
                    .zip(word.chars().skip(1))
                    .any(|(a, b)| a.is_lowercase() && b.is_uppercase());
                let inner = word.get(1..word.len().saturating_sub(1)).unwrap_or("");
                if call || camel || inner.contains('_') || inner.contains('.') {
                    push(word);
                }
            }
        }
        in_code = !in_code;
    }
    names
}

fn describe(change: SymbolChange, id: &str) -> String {
    match change {
        SymbolChange::Changed => format!("symbol changed: {id}"),
        SymbolChange::Removed => format!("symbol removed: {id}"),
    }
}

/// The file a node id belongs to (`file:src/a.ts` and `src/a.ts#function:f` → `src/a.ts`).
fn node_file(id: &str) -> &str {
    match id.strip_prefix("file:") {
        Some(path) => path,
        None => id.split_once('#').map_or(id, |(path, _)| path),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change() -> CodeChange {
        let mut change = CodeChange::default();
        change
            .renamed
            .insert("src/users.ts".into(), "src/users/index.ts".into());
        change.deleted.insert("src/routes.ts".into());
        change.symbols.insert(
            "src/_pytest/logging.py#method:LogCaptureFixture.get_records".into(),
            SymbolChange::Changed,
        );
        change.symbols.insert(
            "src/_pytest/logging.py#function:catching_logs".into(),
            SymbolChange::Removed,
        );
        change.definitions.insert(
            "src/_pytest/logging.py".into(),
            vec![
                Symbol {
                    id: "src/_pytest/logging.py#method:LogCaptureFixture.get_records".into(),
                    qualified: "LogCaptureFixture.get_records".into(),
                },
                Symbol {
                    id: "src/_pytest/logging.py#function:catching_logs".into(),
                    qualified: "catching_logs".into(),
                },
                Symbol {
                    id: "src/_pytest/logging.py#method:LogCaptureFixture.clear".into(),
                    qualified: "LogCaptureFixture.clear".into(),
                },
            ],
        );
        change
    }

    fn cited<'a>(files: &'a [String], names: &'a [String]) -> Cited<'a> {
        Cited {
            files,
            target_node: None,
            names,
        }
    }

    #[test]
    fn a_named_symbol_that_changed_or_went_makes_its_memory_stale() {
        let change = change();
        let files = vec!["src/_pytest/logging.py".to_owned()];
        let names = vec!["get_records".to_owned()];
        assert_eq!(
            change.judge(cited(&files, &names)).stale.as_deref(),
            Some("symbol changed: src/_pytest/logging.py#method:LogCaptureFixture.get_records")
        );
        let names = vec!["catching_logs".to_owned()];
        assert_eq!(
            change.judge(cited(&files, &names)).stale.as_deref(),
            Some("symbol removed: src/_pytest/logging.py#function:catching_logs")
        );
    }

    #[test]
    fn a_memory_with_a_target_is_about_that_node_alone() {
        let change = change();
        let files = vec!["src/_pytest/logging.py".to_owned()];
        let names = vec![
            "LogCaptureFixture.clear".to_owned(),
            "get_records".to_owned(),
        ];
        let on_clear = Cited {
            files: &files,
            target_node: Some("src/_pytest/logging.py#method:LogCaptureFixture.clear"),
            names: &names,
        };
        assert_eq!(
            change.judge(on_clear),
            Verdict::default(),
            "clear did not change"
        );
    }

    #[test]
    fn a_change_elsewhere_in_the_file_leaves_the_memory_alone() {
        let change = change();
        let files = vec!["src/_pytest/logging.py".to_owned()];
        for names in [vec![], vec!["clear".to_owned()], vec!["records".to_owned()]] {
            assert_eq!(change.judge(cited(&files, &names)), Verdict::default());
        }
        // The name is only a symbol of the files the memory cites.
        let other = vec!["src/_pytest/capture.py".to_owned()];
        let names = vec!["get_records".to_owned()];
        assert_eq!(change.judge(cited(&other, &names)), Verdict::default());
    }

    #[test]
    fn a_deleted_file_or_target_makes_it_stale_and_a_rename_moves_its_paths() {
        let change = change();
        let files = vec!["src/routes.ts".to_owned(), "src/users.ts".to_owned()];
        let verdict = change.judge(cited(&files, &[]));
        assert_eq!(
            verdict.stale.as_deref(),
            Some("file deleted: src/routes.ts")
        );
        assert_eq!(
            verdict.renamed_files,
            Some(vec!["src/routes.ts".into(), "src/users/index.ts".into()])
        );
        let moved = change.judge(Cited {
            files: &[],
            target_node: Some("src/users.ts#function:getUser"),
            names: &[],
        });
        assert_eq!(
            moved.renamed_target.as_deref(),
            Some("src/users/index.ts#function:getUser")
        );
        assert_eq!(moved.stale, None);
        let target = Cited {
            files: &[],
            target_node: Some("src/_pytest/logging.py#function:catching_logs"),
            names: &[],
        };
        assert!(change
            .judge(target)
            .stale
            .is_some_and(|r| r.starts_with("symbol removed")));
    }

    #[test]
    fn affected_files_are_the_moved_deleted_and_changed_ones() {
        let change = change();
        assert_eq!(
            change.affected_files().into_iter().collect::<Vec<_>>(),
            ["src/_pytest/logging.py", "src/routes.ts", "src/users.ts"]
        );
        assert!(CodeChange::default().is_empty());
    }

    #[test]
    fn a_name_is_the_whole_qualified_name_or_an_unambiguous_last_part() {
        let symbol = |q: &str| Symbol {
            id: format!("src/_pytest/capture.py#method:{q}"),
            qualified: q.into(),
        };
        let file = [
            symbol("CaptureManager.suspend"),
            symbol("FDCaptureBinary.suspend"),
            symbol("CaptureFixture._suspend"),
            symbol("LogCaptureFixture.get_records"),
        ];
        let names = |n: &[&str]| n.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let says = |n: &str, q: &str, all: &[&str]| names_symbol(n, q, &file, &names(all));
        assert!(says(
            "get_records",
            "LogCaptureFixture.get_records",
            &["get_records"]
        ));
        assert!(says(
            "CaptureManager.suspend",
            "CaptureManager.suspend",
            &[]
        ));
        assert!(!says(
            "CaptureManager",
            "CaptureManager.suspend",
            &["CaptureManager"]
        ));
        assert!(!says(
            "records",
            "LogCaptureFixture.get_records",
            &["records"]
        ));
        assert!(
            !says("suspend", "FDCaptureBinary.suspend", &["suspend"]),
            "two classes have a suspend"
        );
        assert!(says(
            "suspend",
            "FDCaptureBinary.suspend",
            &["FDCaptureBinary", "suspend"]
        ));
        assert!(!says("suspend", "CaptureFixture._suspend", &["suspend"]));
    }

    #[test]
    fn symbol_names_keep_case_and_underscores() {
        assert_eq!(
            symbol_names("`_suspend()` calls `FDCapture.done` and get_records, not Frame"),
            ["_suspend", "FDCapture.done", "get_records"]
        );
        assert_eq!(
            symbol_names("`--collect-only` and `src/a.py`, see main()"),
            ["main"]
        );
    }
}
