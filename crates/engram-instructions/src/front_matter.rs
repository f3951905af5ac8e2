//! The front matter of Cursor, Windsurf and Copilot rule files: where a rule applies.
//!
//! Only the flat `key: value` subset these tools write is read (with `globs` also as a
//! YAML list); other keys are kept as they are, so nothing is silently dropped.

use serde::Serialize;

use crate::ImportError;

/// What a rule file's front matter says.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FrontMatter {
    /// `description`: when the rule applies, in words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `globs` (Cursor, Windsurf) or `applyTo` (Copilot): the files it applies to.
    pub globs: Vec<String>,
    /// `alwaysApply` (Cursor) or `trigger: always_on` (Windsurf).
    pub always_apply: bool,
    /// Windsurf's `trigger` as written (`always_on`, `glob`, `manual`, `model_decision`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trigger: Option<String>,
    /// Keys engram does not interpret, with their values as written.
    pub other: Vec<(String, String)>,
}

/// Splits `text` into its front matter and the line its body starts on (0-based), when it
/// opens with a `---` line; a front matter that is never closed is an error.
pub(crate) fn split(text: &str) -> Result<(Option<FrontMatter>, usize), ImportError> {
    let mut lines = text.lines();
    if lines.next().map(str::trim_end) != Some("---") {
        return Ok((None, 0));
    }
    let mut body: Vec<&str> = Vec::new();
    for (index, line) in lines.enumerate() {
        if line.trim_end() == "---" {
            return Ok((Some(parse(&body)), index + 2));
        }
        body.push(line);
    }
    Err(ImportError::Malformed {
        line: 1,
        problem: "front matter opened with `---` is never closed".into(),
    })
}

fn parse(lines: &[&str]) -> FrontMatter {
    let mut front = FrontMatter::default();
    let mut list_key: Option<String> = None;
    for line in lines {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        if let (Some(item), Some(key)) = (trimmed.strip_prefix("- "), list_key.as_deref()) {
            if key == "globs" || key == "applyTo" {
                front.globs.extend(globs(item));
            }
            continue;
        }
        let Some((key, value)) = trimmed.split_once(':') else {
            continue;
        };
        let (key, value) = (key.trim(), unquote(value.trim()));
        list_key = value.is_empty().then(|| key.to_owned());
        match key {
            "description" if !value.is_empty() => front.description = Some(value.to_owned()),
            "description" => {}
            "globs" | "applyTo" => front.globs.extend(globs(value)),
            "alwaysApply" => front.always_apply = value.eq_ignore_ascii_case("true"),
            "trigger" => {
                front.always_apply |= value == "always_on";
                front.trigger = Some(value.to_owned());
            }
            _ => front.other.push((key.to_owned(), value.to_owned())),
        }
    }
    front
}

/// The globs of one `globs` value: a comma-separated string, quoted or not, or an inline
/// YAML list.
fn globs(value: &str) -> Vec<String> {
    let value = value.trim().trim_start_matches('[').trim_end_matches(']');
    value
        .split(',')
        .map(|g| unquote(g.trim()).to_owned())
        .filter(|g| !g.is_empty())
        .collect()
}

fn unquote(value: &str) -> &str {
    for quote in ['"', '\''] {
        if let Some(inner) = value
            .strip_prefix(quote)
            .and_then(|v| v.strip_suffix(quote))
        {
            return inner;
        }
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursor_front_matter_with_a_comma_separated_glob_string() {
        let text = "---\ndescription: Webapp\nglobs: apps/webapp/**/*.tsx,apps/webapp/**/*.ts\nalwaysApply: false\n---\nbody";
        let (front, body) = split(text).expect("parses");
        let front = front.expect("has front matter");
        assert_eq!(front.description.as_deref(), Some("Webapp"));
        assert_eq!(
            front.globs,
            vec!["apps/webapp/**/*.tsx", "apps/webapp/**/*.ts"]
        );
        assert!(!front.always_apply);
        assert_eq!(text.lines().nth(body), Some("body"));
    }

    #[test]
    fn empty_values_quoted_globs_lists_and_windsurf_triggers() {
        let (front, _) = split("---\ndescription: \nglobs: \nalwaysApply: true\n---\n").unwrap();
        let front = front.unwrap();
        assert_eq!(front.description, None);
        assert!(front.globs.is_empty() && front.always_apply);

        let (front, _) = split("---\nglobs: \"**/*.go\"\n---\n").unwrap();
        assert_eq!(front.unwrap().globs, vec!["**/*.go"]);

        let (front, _) = split("---\nglobs:\n  - src/**\n  - 'lib/*.rs'\n---\n").unwrap();
        assert_eq!(front.unwrap().globs, vec!["src/**", "lib/*.rs"]);

        let (front, _) = split("---\ntrigger: always_on\nowner: me\n---\n").unwrap();
        let front = front.unwrap();
        assert!(front.always_apply);
        assert_eq!(front.other, vec![("owner".to_owned(), "me".to_owned())]);
    }

    #[test]
    fn no_front_matter_and_an_unclosed_one() {
        assert_eq!(split("# Title\n").unwrap(), (None, 0));
        assert!(matches!(
            split("---\ndescription: x\n"),
            Err(ImportError::Malformed { line: 1, .. })
        ));
    }
}
