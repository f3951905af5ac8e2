//! What an edit changed, in a few words taken from the edit itself: the definition it
//! touched and the names it brought in or took out (`` `parse` → `parse_strict` in `load` ``).
//! A memory that says "fixed by editing `x.py`" tells a later session where; this says what.

use std::collections::BTreeSet;
use std::sync::OnceLock;

use regex_lite::Regex;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// At most this many names are listed on each side of a change.
const MAX_NAMES: usize = 3;
/// Names shorter than this are too common to say anything (`i`, `x`, `if`).
const MIN_NAME_CHARS: usize = 3;
/// A description longer than this is cut: it is a hint, not a diff.
const MAX_DESCRIPTION_CHARS: usize = 160;

/// Words of the languages agents edit that are not names of the project's code.
const KEYWORDS: &[&str] = &[
    "and", "as", "assert", "async", "await", "break", "case", "catch", "class", "const",
    "continue", "def", "default", "defp", "del", "do", "elif", "else", "end", "enum", "except",
    "export", "extends", "false", "finally", "fn", "for", "from", "func", "function", "if", "impl",
    "import", "in", "is", "let", "match", "mod", "module", "mut", "new", "nil", "none", "not",
    "null", "or", "pass", "pub", "raise", "return", "self", "static", "struct", "super", "switch",
    "this", "throw", "true", "try", "type", "use", "var", "void", "where", "while", "with",
    "yield", "None", "True", "False", "elsif", "unless", "then", "int", "str", "bool",
];

/// Calls whose only use is debugging output: a print added while investigating and left or
/// removed says nothing about the change.
const DEBUG_NAMES: &[&str] = &[
    "print",
    "pprint",
    "DEBUG",
    "debug",
    "console.log",
    "console.error",
    "IO.inspect",
    "dbg",
    "sys.stderr.write",
    "sys.stdout.write",
    "breakpoint",
    "pdb.set_trace",
    "eprintln",
    "println",
    "logger.debug",
    "logging.debug",
];

/// What one edit did to a file's code: the names it brought in and took out, the
/// definition it sat in, or that it reverted the file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Edit {
    /// The step it was made at.
    pub step: u32,
    /// Names the edit brought in.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub added: Vec<String>,
    /// Names the edit took out.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub removed: Vec<String>,
    /// The function, method or type it sat in, when its text shows the header.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub definition: Option<String>,
    /// It put the file back as it was (`git checkout -- f`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub revert: bool,
}

/// The net change of `edits`, in order, described: names that one edit added and a later
/// one removed again (a debugging print) cancel out, and a revert undoes what came
/// before. `None` when nothing is left to say.
pub fn describe<'a>(edits: impl IntoIterator<Item = &'a Edit>) -> Option<String> {
    let mut added: BTreeSet<&str> = BTreeSet::new();
    let mut removed: BTreeSet<&str> = BTreeSet::new();
    let mut definitions: Vec<&str> = Vec::new();
    let mut any = false;
    for edit in edits {
        if edit.revert {
            added.clear();
            removed.clear();
            definitions.clear();
            any = false;
            continue;
        }
        any = true;
        for name in &edit.added {
            if !removed.remove(name.as_str()) {
                added.insert(name);
            }
        }
        for name in &edit.removed {
            if !added.remove(name.as_str()) {
                removed.insert(name);
            }
        }
        if let Some(definition) = edit.definition.as_deref() {
            if !definitions.contains(&definition) {
                definitions.push(definition);
            }
        }
    }
    // `raw` that became `raw.get` is a call added on it, not a name removed.
    let extends = |name: &str, others: &BTreeSet<&str>| {
        others.iter().any(|o| {
            o.len() > name.len() && o.starts_with(name) && o[name.len()..].starts_with('.')
        })
    };
    let removed: Vec<&str> = removed
        .iter()
        .copied()
        .filter(|name| !extends(name, &added))
        .collect();
    let added: Vec<&str> = added.into_iter().collect();
    let mut out = match (removed.as_slice(), added.as_slice()) {
        ([], []) if !any => return None,
        ([], []) => "rewrote lines".to_owned(),
        ([gone], [came]) => format!("`{gone}` → `{came}`"),
        (_, []) => format!("removed {}", listed(&removed)),
        ([], _) => format!("added {}", listed(&added)),
        (_, _) => format!("{} → {}", listed(&removed), listed(&added)),
    };
    if !definitions.is_empty() {
        let shown: Vec<String> = definitions
            .iter()
            .take(2)
            .map(|d| format!("`{d}`"))
            .collect();
        out.push_str(&format!(" in {}", shown.join(", ")));
    }
    if out.chars().count() > MAX_DESCRIPTION_CHARS {
        out = out.chars().take(MAX_DESCRIPTION_CHARS - 1).collect();
        out.push('…');
    }
    Some(out)
}

/// What one tool call did to the code of the files it edited, when the call says: an
/// `Edit` or `MultiEdit` (`old_string` → `new_string`), a `sed -i 's/a/b/'`, or a revert
/// (`git checkout -- f`, `git restore f`). `None` for whole-file writes and anything else.
pub fn edit_of(tool: &str, input: &Value, step: u32) -> Option<Edit> {
    let text = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
    let (old, new) = match tool.to_ascii_lowercase().as_str() {
        "edit" | "str_replace" | "edit_file" => {
            let old = text(input, "old_string").or_else(|| text(input, "old_str"))?;
            let new = text(input, "new_string")
                .or_else(|| text(input, "new_str"))
                .unwrap_or_default();
            (old, new)
        }
        "multiedit" => {
            let edits = input.get("edits").and_then(Value::as_array)?;
            let (mut old, mut new) = (String::new(), String::new());
            for edit in edits {
                old.push_str(&text(edit, "old_string").unwrap_or_default());
                old.push('\n');
                new.push_str(&text(edit, "new_string").unwrap_or_default());
                new.push('\n');
            }
            (old, new)
        }
        "bash" | "shell" | "run" | "terminal" | "exec" => {
            let command = ["command", "cmd", "script"]
                .iter()
                .find_map(|k| text(input, k))?;
            if is_revert(&command) {
                return Some(Edit {
                    step,
                    revert: true,
                    ..Edit::default()
                });
            }
            sed_substitution(&command)?
        }
        _ => return None,
    };
    if old.trim() == new.trim() {
        return None;
    }
    let before = names(&old);
    let after = names(&new);
    Some(Edit {
        step,
        added: after.difference(&before).cloned().collect(),
        removed: before.difference(&after).cloned().collect(),
        definition: definition_in(&new).or_else(|| definition_in(&old)),
        revert: false,
    })
}

/// What one tool call changed in the files it edited, described (see [`edit_of`]).
pub fn change_of(tool: &str, input: &Value) -> Option<String> {
    let edit = edit_of(tool, input, 0)?;
    match edit.revert {
        true => Some("reverted".to_owned()),
        false => describe([&edit]),
    }
}

/// Whether a shell command puts files back as they were in git.
fn is_revert(command: &str) -> bool {
    static REVERT: OnceLock<Option<Regex>> = OnceLock::new();
    REVERT
        .get_or_init(|| Regex::new(r"\bgit\s+(checkout\s+(\S+\s+)?--|restore)\s").ok())
        .as_ref()
        .is_some_and(|re| re.is_match(command))
}

/// The text a `sed -i 's/old/new/'` replaces and what it puts instead.
fn sed_substitution(command: &str) -> Option<(String, String)> {
    static SED: OnceLock<Option<Regex>> = OnceLock::new();
    if !command.contains("sed ") || !command.contains(" -i") {
        return None;
    }
    let sed = SED
        .get_or_init(|| {
            Regex::new(
                r#"s([/|#,@])((?:\\.|[^\\])*?)([/|#,@])((?:\\.|[^\\])*?)[/|#,@][gIp0-9]*['"]"#,
            )
            .ok()
        })
        .as_ref()?;
    let captures = sed.captures(command)?;
    let (old, new) = (captures.get(2)?.as_str(), captures.get(4)?.as_str());
    Some((unescape(old), unescape(new)))
}

/// `sed`'s escapes dropped (`\(` → `(`, `\/` → `/`).
fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(next) = chars.next() {
                out.push(if next == 'n' { '\n' } else { next });
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn listed(names: &[&str]) -> String {
    let shown: Vec<String> = names
        .iter()
        .take(MAX_NAMES)
        .map(|n| format!("`{n}`"))
        .collect();
    let more = names.len().saturating_sub(MAX_NAMES);
    if more > 0 {
        format!("{} and {more} more", shown.join(", "))
    } else {
        shown.join(", ")
    }
}

/// The code names in `text`: identifiers, dotted paths and string literals' words left
/// out, keywords dropped.
fn names(text: &str) -> BTreeSet<String> {
    static NAME: OnceLock<Option<Regex>> = OnceLock::new();
    let Some(name) = NAME
        .get_or_init(|| Regex::new(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*").ok())
        .as_ref()
    else {
        return BTreeSet::new();
    };
    let mut out = BTreeSet::new();
    for line in text.lines() {
        // Comments say why, not what changed in the code.
        let code = line.split_once(" #").map_or(line, |(code, _)| code);
        let code = code.split_once("//").map_or(code, |(code, _)| code);
        let code = code.trim_start();
        if code.starts_with('#') {
            continue;
        }
        for found in name.find_iter(code) {
            let word = found.as_str();
            if word.len() >= MIN_NAME_CHARS
                && !KEYWORDS.contains(&word)
                && !DEBUG_NAMES.contains(&word)
            {
                out.insert(word.to_owned());
            }
        }
    }
    out
}

/// The function, method or type a snippet defines, when it shows its header.
fn definition_in(text: &str) -> Option<String> {
    static DEFINITION: OnceLock<Option<Regex>> = OnceLock::new();
    let definition = DEFINITION
        .get_or_init(|| {
            Regex::new(
                r"(?m)^\s*(?:pub(?:\([a-z]+\))?\s+|export\s+|async\s+|static\s+)*(?:def|defp|fn|func|function|class|struct|enum|trait|impl|module)\s+([A-Za-z_][A-Za-z0-9_]*)",
            )
            .ok()
        })
        .as_ref()?;
    definition
        .captures(text)
        .and_then(|c| c.get(1))
        .map(|m| m.as_str().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_edit_says_which_names_changed_and_where() {
        let input = json!({
            "file_path": "src/config.py",
            "old_string": "def load(path):\n    return parse(path)\n",
            "new_string": "def load(path):\n    return parse_strict(path)\n",
        });
        assert_eq!(
            change_of("Edit", &input).as_deref(),
            Some("`parse` → `parse_strict` in `load`")
        );
        let added =
            json!({"old_string": "x = 1", "new_string": "x = 1\ntimeout = DEFAULT_TIMEOUT"});
        assert_eq!(
            change_of("Edit", &added).as_deref(),
            Some("added `DEFAULT_TIMEOUT`, `timeout`")
        );
        let same = json!({"old_string": "a = 1", "new_string": "a = 1"});
        assert_eq!(change_of("Edit", &same), None);
    }

    #[test]
    fn debugging_prints_say_nothing_about_the_change() {
        let first = edit_of(
            "Edit",
            &json!({"old_string": "x = load()", "new_string": "x = load()\nprint(x)\nDEBUG = 1"}),
            1,
        );
        let said = describe(first.iter());
        assert_eq!(said.as_deref(), Some("rewrote lines"));
        let fix = edit_of(
            "Edit",
            &json!({"old_string": "x = load()", "new_string": "x = load_strict()\nprint(x)"}),
            2,
        );
        assert_eq!(
            describe(fix.iter()).as_deref(),
            Some("`load` → `load_strict`")
        );
    }

    #[test]
    fn a_sed_substitution_and_a_revert_are_read_from_the_command() {
        let sed = json!({"command": "sed -i 's/self.headers\\[.Content-Length.\\] = .0./pass/' requests/models.py"});
        let said = change_of("bash", &sed).unwrap_or_default();
        assert!(said.contains("self.headers"), "{said}");
        let revert = json!({"command": "git checkout -- src/a.py"});
        assert_eq!(change_of("Bash", &revert).as_deref(), Some("reverted"));
        assert_eq!(change_of("bash", &json!({"command": "cat src/a.py"})), None);
    }
}
