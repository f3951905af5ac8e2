//! Pasted environment listings in a query: the `pip list` / `pip freeze` / `npm ls` tables
//! and `name==version` pin lists that bug reports carry.
//!
//! A listing names every package installed, so its words are about the environment, not
//! the problem: dozens of package names crowd the keyword path's token budget and the
//! dense model's window, and the few that are also words of the code base (`attrs`,
//! `packaging`, `coverage`) pull in unrelated chunks. Query analysis drops them before it
//! looks at the text.

use std::borrow::Cow;

/// Fewest consecutive `name version` rows that make a listing; one or two such lines
/// ("pytest 7.1.2", "return 1.0") are the report's own words.
pub const MIN_LISTING_ROWS: usize = 3;
/// Fewest `name==version` pins on one line that make it a pin list.
pub const MIN_PINS: usize = 3;

/// `text` without its environment listings: runs of at least [`MIN_LISTING_ROWS`] lines that
/// are each a package and a version (a table row, optionally with a location column, or a
/// pin), and lines that pin at least [`MIN_PINS`] packages. Borrowed when nothing is dropped.
///
/// ```
/// use engram_retrieval::noise::without_listings;
/// let report = "pytest.raises loses the message\nPackage  Version\n-------- -------\n\
///               attrs    19.1.0\nboto3    1.9.51\nsix      1.12.0\nsee str(e)";
/// assert_eq!(
///     without_listings(report),
///     "pytest.raises loses the message\nPackage  Version\n-------- -------\nsee str(e)"
/// );
/// assert_eq!(without_listings("pytest 7.1.2 on linux"), "pytest 7.1.2 on linux");
/// ```
pub fn without_listings(text: &str) -> Cow<'_, str> {
    let lines: Vec<&str> = text.lines().collect();
    let mut drop = vec![false; lines.len()];
    let mut run_start = 0;
    for i in 0..=lines.len() {
        let row = lines.get(i).is_some_and(|line| is_listing_row(line));
        if row {
            continue;
        }
        if i - run_start >= MIN_LISTING_ROWS {
            drop[run_start..i].iter_mut().for_each(|d| *d = true);
        }
        if let Some(line) = lines.get(i) {
            drop[i] = is_pin_list(line);
        }
        run_start = i + 1;
    }
    if !drop.contains(&true) {
        return Cow::Borrowed(text);
    }
    let kept: Vec<&str> = lines
        .iter()
        .zip(&drop)
        .filter(|(_, dropped)| !**dropped)
        .map(|(line, _)| *line)
        .collect();
    Cow::Owned(kept.join("\n"))
}

/// `name version [location]` or a single pin `name==version`.
fn is_listing_row(line: &str) -> bool {
    let mut fields = line.split_whitespace();
    match (fields.next(), fields.next(), fields.next(), fields.next()) {
        (Some(pin), None, _, _) => is_pin(pin),
        (Some(name), Some(version), _, None) => is_package_name(name) && is_version(version),
        _ => false,
    }
}

/// At least [`MIN_PINS`] of the line's comma- or space-separated items are pins.
fn is_pin_list(line: &str) -> bool {
    line.split(|c: char| c == ',' || c.is_whitespace())
        .filter(|item| is_pin(item))
        .count()
        >= MIN_PINS
}

/// `name==version` (also `===`, `~=`, `>=` as freeze files and constraints write them).
fn is_pin(item: &str) -> bool {
    ["===", "==", "~=", ">="].iter().any(|op| {
        item.split_once(op)
            .is_some_and(|(name, version)| is_package_name(name) && is_version(version))
    })
}

fn is_package_name(word: &str) -> bool {
    word.chars().next().is_some_and(char::is_alphanumeric)
        && word
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | '[' | ']' | '@' | '/'))
}

/// Starts with a digit, has a dot, and holds only what release numbers hold
/// (`1.9.51`, `0.13.0rc1`, `2.0.0.post1`, `1.0+local`).
fn is_version(word: &str) -> bool {
    let word = word.strip_prefix('v').unwrap_or(word);
    word.starts_with(|c: char| c.is_ascii_digit())
        && word.contains('.')
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '+' | '-' | '_'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pip_list_table_with_locations_is_dropped() {
        let text = "caplog fails\n```\nPackage    Version   Location\n\
                    ---------- --------- --------\n\
                    attrs      19.3.0\n\
                    mypkg      0.1.dev0  /home/me/src/mypkg\n\
                    packaging  20.4\n\
                    pluggy     0.13.1\n```\nthe end";
        assert_eq!(
            without_listings(text),
            "caplog fails\n```\nPackage    Version   Location\n\
             ---------- --------- --------\n```\nthe end"
        );
    }

    #[test]
    fn freeze_output_and_inline_pins_are_dropped() {
        let freeze = "broken\nattrs==19.3.0\npluggy==0.13.1\nsix==1.15.0\nafter";
        assert_eq!(without_listings(freeze), "broken\nafter");
        let tox = "py37 installed: attrs==19.3.0,pluggy==0.13.0,py==1.8.0\nrun";
        assert_eq!(without_listings(tox), "run");
    }

    #[test]
    fn short_runs_and_code_stay() {
        for text in [
            "pytest 7.1.2\npython 3.10.4\nthe fixture is not found",
            "def f():\n    return 1.0\n    x = 2.5",
            "deps == 2 items, a==b",
            "",
        ] {
            assert_eq!(without_listings(text), text, "{text}");
        }
    }
}
