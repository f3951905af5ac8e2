//! What a bug report carries besides its point: pasted environment listings (`pip list` /
//! `pip freeze` / `npm ls` tables, `name==version` pin lists, `name: version` reports such
//! as `xr.show_versions()`, pip's install log), and what issue templates put in every
//! report: their hidden HTML comments and their task lists.
//!
//! A listing names every package installed, so its words are about the environment, not
//! the problem: dozens of package names crowd the keyword path's token budget and the
//! dense model's window, and the few that are also words of the code base (`attrs`,
//! `packaging`, `coverage`) pull in unrelated chunks. A template's comment is the same
//! text in every report of a project ("please post a minimal, complete and verifiable
//! example"), and the rendered issue does not show it, so the reporter never said it; a
//! template's task list is ticked, not written. A test runner's framing is the same kind
//! of text: pytest opens every session with a banner and a header (`platform linux --
//! Python 3.8.1, pytest-5.4.1`, `rootdir: /home/me/proj`, `plugins: …`) and closes it
//! with `=== 1 failed in 0.03s ===`, whatever the failure, as `cargo test` prints
//! `running 2 tests` and `test result: …` and Jest its `Test Suites: …` tally; the runner
//! wrote those words, not the reporter, and a header's `session` or `platform` sends the
//! graph path to whatever defines them. Query analysis drops all four before it looks at
//! the text.

use std::borrow::Cow;

/// Fewest consecutive `name version` rows that make a listing; one or two such lines
/// ("pytest 7.1.2", "return 1.0") are the report's own words.
pub const MIN_LISTING_ROWS: usize = 3;
/// Fewest `name==version` pins on one line that make it a pin list.
pub const MIN_PINS: usize = 3;

/// Words a value in a `name: value` version report may be instead of a version.
const ABSENT_VERSIONS: [&str; 4] = ["None", "installed", "unknown", "N/A"];

/// `text` without its HTML comments ([`without_comments`]), its environment listings
/// ([`without_listings`]), its task lists ([`without_task_lists`]) and a test runner's
/// framing ([`without_runner_framing`]). Borrowed when nothing is dropped.
///
/// ```
/// use engram_retrieval::analysis::noise::without_noise;
/// let report = "merge drops attrs\n<!-- Please post an MCVE -->\nnumpy: 1.16.1\n\
///               pandas: 0.23.4\nscipy: None\nsee merge.py";
/// assert_eq!(without_noise(report), "merge drops attrs\n\nsee merge.py");
/// ```
pub fn without_noise(text: &str) -> Cow<'_, str> {
    let text = then(without_comments(text), without_listings);
    let text = then(text, without_task_lists);
    then(text, without_runner_framing)
}

/// `step` applied to `text`, borrowing from the original while nothing is dropped.
fn then<'a>(text: Cow<'a, str>, step: fn(&str) -> Cow<'_, str>) -> Cow<'a, str> {
    match text {
        Cow::Borrowed(text) => step(text),
        Cow::Owned(text) => Cow::Owned(step(&text).into_owned()),
    }
}

/// `text` without its closed `<!-- … -->` comments, which may span lines. An unclosed
/// `<!--` and what follows it stay: that is more likely a literal than a comment.
pub fn without_comments(text: &str) -> Cow<'_, str> {
    if !text.contains("<!--") {
        return Cow::Borrowed(text);
    }
    let mut kept = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find("<!--") {
        let Some(close) = rest[open + 4..].find("-->") else {
            break;
        };
        kept.push_str(&rest[..open]);
        rest = &rest[open + 4 + close + 3..];
    }
    kept.push_str(rest);
    if kept.len() == text.len() {
        Cow::Borrowed(text)
    } else {
        Cow::Owned(kept)
    }
}

/// `text` without its environment listings:
/// - runs of at least [`MIN_LISTING_ROWS`] lines (blank lines inside continue a run) that
///   are each a package and a version: a table row, optionally with a location column, or
///   a pin; with them go the command that printed them (`$ pip list`) and the table's
///   header and rule;
/// - lines that pin at least [`MIN_PINS`] packages;
/// - version reports: runs of `name: value` lines of which at least [`MIN_LISTING_ROWS`]
///   give a version. The whole run goes, so the `OS: Linux` and `machine: x86_64` lines
///   among the versions go with them;
/// - pip's install log: `Installing collected packages: zipp, six, …`, `Successfully
///   installed six-1.16.0 …`, `Requirement already satisfied: …`, `Collecting six==1.16`,
///   `Downloading` / `Using cached` a wheel or an sdist, and the `Found existing
///   installation` / `Uninstalling` / `Successfully uninstalled` lines of an upgrade.
///
/// Borrowed when nothing is dropped.
///
/// ```
/// use engram_retrieval::analysis::noise::without_listings;
/// let report = "pytest.raises loses the message\nPackage  Version\n-------- -------\n\
///               attrs    19.1.0\nboto3    1.9.51\nsix      1.12.0\nsee str(e)";
/// assert_eq!(without_listings(report), "pytest.raises loses the message\nsee str(e)");
/// assert_eq!(without_listings("pytest 7.1.2 on linux"), "pytest 7.1.2 on linux");
/// ```
pub fn without_listings(text: &str) -> Cow<'_, str> {
    let lines: Vec<&str> = text.lines().collect();
    let mut drop: Vec<bool> = lines
        .iter()
        .map(|line| is_pin_list(line) || is_pip_log_line(line))
        .collect();
    drop_runs(&lines, &mut drop, |line| {
        if is_listing_row(line) {
            Some(true)
        } else {
            is_listing_frame(line).then_some(false)
        }
    });
    drop_runs(&lines, &mut drop, report_row);
    without_marked(text, &lines, &drop)
}

/// `text` without its task lists: runs of at least [`MIN_LISTING_ROWS`] Markdown task
/// items (`- [x] …`, `* [ ] …`; blank lines inside continue a run). In a report these are
/// the template's confirmations ("a detailed description of the bug", "minimal example"),
/// the same words in every report of the project. Borrowed when nothing is dropped.
///
/// ```
/// use engram_retrieval::analysis::noise::without_task_lists;
/// let report = "where drops attrs\n- [X] Minimal example\n- [X] Complete example\n\
///               - [ ] New issue\nsee merge";
/// assert_eq!(without_task_lists(report), "where drops attrs\nsee merge");
/// ```
pub fn without_task_lists(text: &str) -> Cow<'_, str> {
    let lines: Vec<&str> = text.lines().collect();
    let mut drop = vec![false; lines.len()];
    drop_runs(&lines, &mut drop, |line| is_task_item(line).then_some(true));
    without_marked(text, &lines, &drop)
}

/// `text` without a test runner's framing:
/// - pytest's `=`-ruled section lines (`=== test session starts ===`, `=== FAILURES ===`,
///   `=== 1 failed in 0.03s ===`) and the session header after a `test session starts`
///   banner (`platform …`, `rootdir: …`, `plugins: …`, `collected 2 items`, up to the
///   first other line);
/// - the status and tally lines of `cargo test` and Jest (`running 2 tests`, `test result:
///   …`, cargo's `Compiling` / `Finished` / `Running` lines, `Test Suites: … total`).
///
/// What the run printed between them stays: progress lines, `_`-ruled test names,
/// `test parser::empty ... FAILED`, tracebacks, panics, assertion messages and the
/// summary's `FAILED test_x.py::test_y` lines are the report's evidence. So does Go's
/// output, whose `=== RUN` and `FAIL <package>` lines name the test and the package.
/// Borrowed when nothing is dropped.
///
/// ```
/// use engram_retrieval::analysis::noise::without_runner_framing;
/// let run = "==== test session starts ====\nplatform linux -- Python 3.8.1, pytest-5.4.1\n\
///            rootdir: /tmp/repro\ncollected 1 item\n\ntest_a.py F\n==== FAILURES ====\n\
///            ____ test_a ____\nE   assert 1 == 2\n==== 1 failed in 0.03s ====";
/// assert_eq!(
///     without_runner_framing(run),
///     "\ntest_a.py F\n____ test_a ____\nE   assert 1 == 2"
/// );
/// ```
pub fn without_runner_framing(text: &str) -> Cow<'_, str> {
    let lines: Vec<&str> = text.lines().collect();
    let mut drop = vec![false; lines.len()];
    let mut in_header = false;
    for (line, dropped) in lines.iter().zip(drop.iter_mut()) {
        if let Some(title) = ruled_title(line) {
            *dropped = true;
            in_header = title.to_ascii_lowercase().contains("session starts");
            continue;
        }
        in_header = in_header && is_session_header(line);
        *dropped = in_header || is_runner_status(line);
    }
    without_marked(text, &lines, &drop)
}

/// Cargo's status verbs whose line is `<verb> <crate> v<version> …`.
const CARGO_CRATE_VERBS: [&str; 5] = [
    "Compiling",
    "Checking",
    "Documenting",
    "Downloaded",
    "Fresh",
];

/// A line a test runner prints about the run rather than about a test, whatever failed:
/// - `cargo test`: `running 3 tests`, `test result: FAILED. 2 passed; 1 failed; …`, and
///   cargo's own status lines (`Compiling engram v0.1.0 (/src)`, ``Finished `test`
///   profile … target(s) in 4.2s``, `Running unittests src/lib.rs (target/debug/deps/…)`,
///   `Doc-tests engram`);
/// - Jest's tally: `Test Suites: 1 failed, 3 total`, `Tests: …`, `Snapshots: …`,
///   `Time: 2.3 s`, `Ran all test suites.`
fn is_runner_status(line: &str) -> bool {
    let line = line.trim();
    let words: Vec<&str> = line.split_whitespace().collect();
    match words.as_slice() {
        ["running", n, "test" | "tests"] => n.parse::<u32>().is_ok(),
        ["test", "result:", "ok." | "FAILED.", ..] => true,
        ["Finished", ..] => line.contains(" target(s) in "),
        ["Running", rest @ ..] => {
            rest.first() == Some(&"unittests")
                || line.contains("(target/")
                || line.contains("(target\\")
        }
        ["Doc-tests", _crate] => true,
        [verb, _crate, version, ..] if CARGO_CRATE_VERBS.contains(verb) => {
            version.starts_with('v') && is_version(version)
        }
        ["Test", "Suites:", ..] | ["Tests:", ..] | ["Snapshots:", ..] => line.ends_with(" total"),
        ["Time:", seconds, ..] => seconds.trim_end_matches(['m', 's']).parse::<f64>().is_ok(),
        ["Ran", "all", "test", suites, ..] => suites.starts_with("suites"),
        _ => false,
    }
}

/// The title of a line ruled with `=` on both sides (`=== FAILURES ===`; empty for a bare
/// rule of at least three), or `None`.
fn ruled_title(line: &str) -> Option<&str> {
    let line = line.trim();
    let title = line.trim_start_matches('=');
    if line.len() - title.len() < 3 {
        return None;
    }
    let inner = title.trim_end_matches('=');
    (title.len() - inner.len() >= 3 || inner.is_empty()).then(|| inner.trim())
}

/// A line of pytest's session header: `platform …`, `collecting …`, `collected N items`,
/// or a lowercase `key: value` line (`rootdir: …`, `cachedir: …`, `plugins: …`, and the
/// lines plugins add, such as `django: settings …`).
fn is_session_header(line: &str) -> bool {
    let line = line.trim();
    if ["platform ", "collecting ", "collected "]
        .iter()
        .any(|start| line.starts_with(start))
    {
        return true;
    }
    let key_value = line
        .split_once(": ")
        .or_else(|| Some((line.strip_suffix(':')?, "")));
    key_value.is_some_and(|(key, _)| {
        !key.is_empty() && key.chars().all(|c| c.is_ascii_lowercase() || c == ' ')
    })
}

/// `text` without the `lines` marked in `drop`; borrowed when none is.
fn without_marked<'a>(text: &'a str, lines: &[&str], drop: &[bool]) -> Cow<'a, str> {
    if !drop.contains(&true) {
        return Cow::Borrowed(text);
    }
    let kept: Vec<&str> = lines
        .iter()
        .zip(drop)
        .filter(|(_, dropped)| !**dropped)
        .map(|(line, _)| *line)
        .collect();
    Cow::Owned(kept.join("\n"))
}

/// Marks in `drop` each run of lines that `member` accepts holding at least
/// [`MIN_LISTING_ROWS`] lines that count (`Some(true)`). Blank lines continue a run but
/// neither start nor end one.
fn drop_runs(lines: &[&str], drop: &mut [bool], member: impl Fn(&str) -> Option<bool>) {
    let mut run: Option<(usize, usize)> = None;
    let mut counted = 0;
    for i in 0..=lines.len() {
        let line = lines.get(i).copied();
        if line.is_some_and(|l| l.trim().is_empty()) {
            continue;
        }
        if let Some(counts) = line.and_then(&member) {
            let (first, _) = run.unwrap_or((i, i));
            run = Some((first, i));
            counted += usize::from(counts);
            continue;
        }
        if let Some((first, last)) = run.take() {
            if counted >= MIN_LISTING_ROWS {
                drop[first..=last].iter_mut().for_each(|d| *d = true);
            }
        }
        counted = 0;
    }
}

/// A Markdown task-list item: `- [ ] …`, `* [x] …`.
fn is_task_item(line: &str) -> bool {
    let line = line.trim_start();
    let Some(rest) = line.strip_prefix(['-', '*', '+']) else {
        return false;
    };
    let rest = rest.trim_start();
    ["[ ]", "[x]", "[X]"].iter().any(|b| rest.starts_with(b))
}

/// A line that frames a listing without being a row of it: the command that printed it
/// (`$ pip list`, `pip freeze`, `python -m pip list --format=columns`, `conda list`), the
/// table's header (`Package Version [Location]`, newer pip's `Editable project location`)
/// or its rule of dashes. It goes with the rows, never alone.
fn is_listing_frame(line: &str) -> bool {
    let words: Vec<&str> = line.split_whitespace().collect();
    let is_rule = |w: &&str| w.len() >= 3 && w.bytes().all(|b| b == b'-');
    if !words.is_empty() && words.iter().all(is_rule) {
        return true;
    }
    let command = match words.as_slice() {
        ["$" | ">" | "%", rest @ ..] => rest,
        all => all,
    };
    let command = match command {
        ["python" | "python3", "-m", rest @ ..] => rest,
        all => all,
    };
    match command {
        ["pip" | "pip3" | "conda", "list" | "freeze", options @ ..] => {
            options.iter().all(|o| o.starts_with('-'))
        }
        ["Package", "Version", rest @ ..] => rest
            .iter()
            .all(|w| matches!(*w, "Location" | "Editable" | "project" | "location")),
        _ => false,
    }
}

/// A `name version [location]` table row or a single pin `name==version`.
fn is_listing_row(line: &str) -> bool {
    let mut fields = line.split_whitespace();
    match (fields.next(), fields.next(), fields.next(), fields.next()) {
        (Some(pin), None, _, _) => is_pin(pin),
        (Some(name), Some(version), _, None) => is_package_name(name) && is_version(version),
        _ => false,
    }
}

/// A line of a `name: value` report: `Some(true)` when the value is a version or says the
/// package is absent or present without one (`None`, `installed`), `Some(false)` for
/// another value (`OS: Linux`), `None` when the line is not `name: …`.
fn report_row(line: &str) -> Option<bool> {
    let (name, value) = line.trim_start().split_once(':')?;
    if !is_package_name(name) {
        return None;
    }
    let mut fields = value.split_whitespace();
    Some(match (fields.next(), fields.next()) {
        (Some(version), None) => is_version(version) || ABSENT_VERSIONS.contains(&version),
        _ => false,
    })
}

/// At least [`MIN_PINS`] of the line's comma- or space-separated items are pins.
fn is_pin_list(line: &str) -> bool {
    line.split(|c: char| c == ',' || c.is_whitespace())
        .filter(|item| is_pin(item))
        .count()
        >= MIN_PINS
}

/// A line of pip's install log (see [`without_listings`]): it names the packages pip
/// installs, whatever the problem.
fn is_pip_log_line(line: &str) -> bool {
    let line = line.trim();
    if [
        "Installing collected packages: ",
        "Requirement already satisfied: ",
    ]
    .iter()
    .any(|start| line.starts_with(start))
    {
        return true;
    }
    let words: Vec<&str> = line.split_whitespace().collect();
    match words.as_slice() {
        ["Successfully", "installed" | "uninstalled", packages @ ..] => {
            !packages.is_empty() && packages.iter().all(|p| is_versioned_name(p))
        }
        ["Found", "existing", "installation:", name, version] => {
            is_package_name(name) && is_version(version)
        }
        ["Uninstalling", package] => is_versioned_name(package.trim_end_matches(':')),
        ["Collecting", requirement, rest @ ..] => {
            let name = requirement
                .split(['=', '<', '>', '!', '~', '[', ';'])
                .next()
                .unwrap_or_default();
            is_package_name(name) && rest.first().is_none_or(|w| w.starts_with("(from"))
        }
        ["Downloading", file, ..] | ["Using", "cached", file, ..] => [".whl", ".tar.gz", ".zip"]
            .iter()
            .any(|ext| file.ends_with(ext)),
        _ => false,
    }
}

/// `name-version` as pip reports an installed distribution (`PyYAML-6.0`).
fn is_versioned_name(word: &str) -> bool {
    word.rsplit_once('-')
        .is_some_and(|(name, version)| is_package_name(name) && is_version(version))
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

    /// `step` leaves each of `texts` as it was, borrowed.
    fn assert_untouched(step: fn(&str) -> Cow<'_, str>, texts: &[&str]) {
        for text in texts {
            assert!(matches!(step(text), Cow::Borrowed(_)), "{text}");
        }
    }

    #[test]
    fn a_pip_list_table_with_locations_is_dropped() {
        let text = "caplog fails\n```\nPackage    Version   Location\n\
                    ---------- --------- --------\n\
                    attrs      19.3.0\n\
                    mypkg      0.1.dev0  /home/me/src/mypkg\n\
                    packaging  20.4\n\
                    pluggy     0.13.1\n```\nthe end";
        assert_eq!(without_listings(text), "caplog fails\n```\n```\nthe end");
    }

    #[test]
    fn the_command_header_and_rule_go_with_the_rows_never_alone() {
        let text = "xfail ignored\n$ pip list --format=columns\n\
                    Package    Version  Editable project location\n\
                    ---------- -------- --------------------------\n\
                    attrs      19.3.0\npluggy     0.13.1\nsix        1.15.0\nthe end";
        assert_eq!(without_listings(text), "xfail ignored\nthe end");
        // Without rows to frame, a header or a command is the reporter's text.
        assert_untouched(
            without_listings,
            &[
                "Package Version\n-------- -------\nis what pip prints",
                "run pip list\nthen conda list",
                "----\n---\n-----",
            ],
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
    fn a_version_report_is_dropped_but_its_prose_stays() {
        let text = "quantile drops attrs\nINSTALLED VERSIONS\n------------------\n\
                    python: 3.6.8 |Anaconda, Inc.| (default)\nOS: Linux\n\
                    libhdf5: 1.10.2\nlibnetcdf: 4.6.1\n\nxarray: 0.12.3+88.g69c7e01e.dirty\n\
                    pandas: 0.23.4\npydap: installed\nh5netcdf: None\nthe end";
        assert_eq!(
            without_listings(text),
            "quantile drops attrs\nINSTALLED VERSIONS\n------------------\nthe end"
        );
    }

    #[test]
    fn key_value_lines_that_are_not_versions_stay() {
        let text = "expected:\ncolor: red\nwidth: 2\nmode: None\nname: x";
        assert_eq!(without_listings(text), text);
    }

    #[test]
    fn comments_are_dropped_across_lines_and_an_unclosed_one_stays() {
        assert_eq!(
            without_comments("a <!-- one\ntwo --> b <!--three--> c"),
            "a  b  c"
        );
        assert_eq!(without_comments("x <!-- y"), "x <!-- y");
        assert_eq!(without_comments("a <!--x--> b <!-- c"), "a  b <!-- c");
        assert!(matches!(without_comments("plain"), Cow::Borrowed(_)));
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

    #[test]
    fn task_lists_go_in_runs_of_three_whatever_their_marker() {
        let template = "tearDown runs for skipped classes\n\
                        - [x] a detailed description of the bug\n\
                        * [ ] output of pip list\n\n\
                          + [X] minimal example if possible\n\
                        the fixture";
        assert_eq!(
            without_task_lists(template),
            "tearDown runs for skipped classes\nthe fixture"
        );
        // Two items are the reporter's own; so is a list that is not a task list.
        assert_untouched(
            without_task_lists,
            &[
                "- [x] parse_config handles empty files\n- [ ] and comments",
                "- one\n- two\n- three",
                "- [link](x)\n- [y] z\n- [ ]",
            ],
        );
    }

    #[test]
    fn a_session_header_goes_up_to_the_first_line_the_runner_did_not_frame() {
        let run = " ===== test session starts =====\n\
                   platform win32 -- Python 3.9.6, pytest-6.2.5 -- \n\
                   cachedir: .pytest_cache\nrootdir: \nplugins: allure-pytest-2.9.45\n\
                   django: settings: proj.settings (from ini)\n\
                   collecting ... collected 1 item\n\
                   test_s.py::test_right FAILED\n\
                   ===== short test summary info =====\n\
                   FAILED test_s.py::test_right - assert 1 == 75\n\
                   ===== 1 failed in 0.12s =====";
        assert_eq!(
            without_runner_framing(run),
            "test_s.py::test_right FAILED\nFAILED test_s.py::test_right - assert 1 == 75"
        );
    }

    #[test]
    fn key_value_lines_outside_a_session_header_stay() {
        let text = "===== FAILURES =====\nrootdir: /srv\nplatform linux\n\
                    expected: 1\n____ test_a ____";
        assert_eq!(
            without_runner_framing(text),
            "rootdir: /srv\nplatform linux\nexpected: 1\n____ test_a ____"
        );
    }

    #[test]
    fn lines_that_only_start_or_end_with_equals_signs_stay() {
        assert_untouched(
            without_runner_framing,
            &[
                "=== RUN   TestParse\n--- FAIL: TestParse",
                "if (a === b) {\n  x = y ===\n}",
                "a == b\n== c ==",
                "",
            ],
        );
        // A bare rule is framing too: pytest's and unittest's separators, a heading's
        // underline.
        assert_eq!(without_runner_framing("Title\n=====\nbody"), "Title\nbody");
    }

    #[test]
    fn pips_install_log_is_dropped_and_the_report_around_it_stays() {
        let log = "rewrite fails on a number\n$ pip install -r req.txt\n\
                   Collecting pytest==7.3.1 (from -r req.txt (line 1))\n\
                   \u{20} Downloading pytest-7.3.1-py3-none-any.whl (320 kB)\n\
                   \u{20} Using cached six-1.16.0-py2.py3-none-any.whl\n\
                   Requirement already satisfied: zipp in ./venv/lib/python3.8 (3.15.0)\n\
                   Installing collected packages: zipp, six, PyYAML, pluggy\n\
                   \u{20} Found existing installation: pytest 5.1.1\n\
                   \u{20}   Uninstalling pytest-5.1.1:\n\
                   \u{20}     Successfully uninstalled pytest-5.1.1\n\
                   Successfully installed PyYAML-6.0 pluggy-1.0.0 six-1.16.0\n\
                   then import fails";
        assert_eq!(
            without_listings(log),
            "rewrite fails on a number\n$ pip install -r req.txt\nthen import fails"
        );
        assert_untouched(
            without_listings,
            &[
                "Collecting fixtures is slow on Windows",
                "Successfully installed the plugin, then it failed",
                "Downloading the artifact hangs\nUsing cached results",
                "Found existing installation: none",
            ],
        );
    }

    #[test]
    fn cargo_test_status_and_tally_lines_go_and_its_evidence_stays() {
        let run = "   Compiling engram-core v0.1.0 (/work/main/crates/engram-core)\n\
                   \u{20}   Finished `test` profile [unoptimized + debuginfo] target(s) in 41.27s\n\
                   \u{20}    Running unittests src/lib.rs (target/debug/deps/engram_core-3f2a9c)\n\
                   \n\
                   running 2 tests\n\
                   test query::tests::empty_match ... FAILED\n\
                   test query::tests::quotes ... ok\n\
                   thread 'query::tests::empty_match' panicked at src/query.rs:88:9:\n\
                   test result: FAILED. 1 passed; 1 failed; 0 ignored; finished in 0.01s\n\
                   \u{20}  Doc-tests engram_core";
        assert_eq!(
            without_runner_framing(run),
            "\ntest query::tests::empty_match ... FAILED\ntest query::tests::quotes ... ok\n\
             thread 'query::tests::empty_match' panicked at src/query.rs:88:9:"
        );
    }

    #[test]
    fn jest_tally_lines_go_and_its_failures_stay() {
        let run = "FAIL src/parse.test.ts\n  ● parse › rejects an empty file\n\
                   Test Suites: 1 failed, 3 passed, 4 total\n\
                   Tests:       1 failed, 10 passed, 11 total\n\
                   Snapshots:   0 total\nTime:        2.345 s\n\
                   Ran all test suites matching /parse/i.";
        assert_eq!(
            without_runner_framing(run),
            "FAIL src/parse.test.ts\n  ● parse › rejects an empty file"
        );
    }

    #[test]
    fn words_a_runner_prints_stay_in_the_reporters_sentences() {
        assert_untouched(
            without_runner_framing,
            &[
                "running 3 tests in parallel hangs\nRunning the suite twice",
                "test result: it never finishes\nTests: flaky on CI",
                "Compiling the grammar fails\nFinished reading config\nTime: unknown",
                "ok  \tgithub.com/o/r/parser\t0.012s\nFAIL\tgithub.com/o/r/lexer\t0.3s",
            ],
        );
    }

    #[test]
    fn noise_of_every_kind_goes_in_one_pass() {
        let report = "where drops attrs\n<!-- fill this in -->\n- [X] Minimal\n- [X] Complete\n\
                      - [X] Verifiable\nnumpy: 1.16.1\npandas: 0.23.4\nscipy: None\nsee merge";
        assert_eq!(without_noise(report), "where drops attrs\n\nsee merge");
        assert!(matches!(without_noise("plain text"), Cow::Borrowed(_)));
        let run = "skip breaks pdb\n=== test session starts ===\nrootdir: /srv\ntest_a.py s";
        assert_eq!(without_noise(run), "skip breaks pdb\ntest_a.py s");
    }
}
