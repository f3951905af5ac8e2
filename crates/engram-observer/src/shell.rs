//! Shell commands read as file accesses: `cat`/`sed -n`/`nl`/`head`/`grep`/`find` are reads
//! and searches; `sed -i`, heredocs, redirections and Python `open(…, 'w')` are edits; test
//! runners and scripts are runs.
//!
//! This is a reader for what agents type, not a shell: it splits on `&&`, `||`, `;`, `|`,
//! `&` and newlines, honours quotes, escapes, `$(…)` and heredocs, follows `cd` within one
//! command, and ignores what it does not recognise.

use std::sync::OnceLock;

use regex_lite::Regex;

use crate::action::Action;

/// The actions of one shell command line (possibly several commands and heredocs).
pub fn actions(command: &str) -> Vec<Action> {
    let mut out = Vec::new();
    let mut cwd = String::new();
    for simple in split(command) {
        simple_actions(&simple, &mut cwd, &mut out);
    }
    out
}

/// What a shell command is about, for recognising retries: the program and its
/// subcommand (`git commit`, `mix test`), or `None` for an empty command.
pub fn subject(command: &str) -> Option<String> {
    let simple = split(command).into_iter().find(|s| {
        s.words
            .first()
            .is_some_and(|w| w != "cd" && !w.contains('='))
    })?;
    let program = simple.words.first()?;
    let program = program.rsplit('/').next().unwrap_or(program);
    Some(match simple.words.get(1) {
        Some(sub) if !sub.starts_with('-') && !sub.contains(['/', '.', '"', '\'']) => {
            format!("{program} {sub}")
        }
        _ => program.to_owned(),
    })
}

/// One simple command: its words, its redirections and the body of its heredoc, if any.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct Simple {
    words: Vec<String>,
    /// `(operator, target)`: `>`, `>>` or `<`.
    redirects: Vec<(&'static str, String)>,
    heredoc: Option<String>,
}

/// Splits a command line into simple commands.
fn split(text: &str) -> Vec<Simple> {
    let chars: Vec<char> = text.chars().collect();
    let mut commands = Vec::new();
    let mut current = Simple::default();
    let mut word = String::new();
    let mut in_word = false;
    let mut pending_redirect: Option<&'static str> = None;
    let mut pending_heredocs: Vec<(String, bool)> = Vec::new();
    let mut heredoc_owner: Vec<usize> = Vec::new();
    let mut i = 0;

    // Ends the word being read, routing it to a pending redirection if there is one.
    fn finish_word(
        word: &mut String,
        in_word: &mut bool,
        current: &mut Simple,
        pending: &mut Option<&'static str>,
    ) {
        if !*in_word {
            return;
        }
        let text = std::mem::take(word);
        match pending.take() {
            Some(op) => current.redirects.push((op, text)),
            None => current.words.push(text),
        }
        *in_word = false;
    }

    while i < chars.len() {
        let c = chars[i];
        match c {
            '\'' => {
                in_word = true;
                i += 1;
                while i < chars.len() && chars[i] != '\'' {
                    word.push(chars[i]);
                    i += 1;
                }
                i += 1;
            }
            '"' => {
                in_word = true;
                i += 1;
                while i < chars.len() && chars[i] != '"' {
                    if chars[i] == '\\' && i + 1 < chars.len() {
                        i += 1;
                    }
                    word.push(chars[i]);
                    i += 1;
                }
                i += 1;
            }
            '\\' if i + 1 < chars.len() => {
                if chars[i + 1] != '\n' {
                    in_word = true;
                    word.push(chars[i + 1]);
                }
                i += 2;
            }
            '$' if chars.get(i + 1) == Some(&'(') => {
                in_word = true;
                let mut depth = 0;
                while i < chars.len() {
                    word.push(chars[i]);
                    if chars[i] == '(' {
                        depth += 1;
                    } else if chars[i] == ')' {
                        depth -= 1;
                        if depth == 0 {
                            i += 1;
                            break;
                        }
                    }
                    i += 1;
                }
            }
            '#' if !in_word => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            ' ' | '\t' => {
                finish_word(&mut word, &mut in_word, &mut current, &mut pending_redirect);
                i += 1;
            }
            '\n' | ';' | '&' | '|' => {
                finish_word(&mut word, &mut in_word, &mut current, &mut pending_redirect);
                // `2>&1` and `&>`: an `&` right after a redirection operator belongs to it.
                if c == '&' && chars.get(i + 1) == Some(&'>') {
                    pending_redirect = Some(">");
                    i += 2;
                    continue;
                }
                if !current.words.is_empty() || !current.redirects.is_empty() {
                    commands.push(std::mem::take(&mut current));
                }
                i += 1;
                if c == '\n' && !pending_heredocs.is_empty() {
                    // Heredoc bodies follow the line that opened them.
                    for ((delimiter, strip_tabs), owner) in
                        pending_heredocs.drain(..).zip(heredoc_owner.drain(..))
                    {
                        let mut body = String::new();
                        while i < chars.len() {
                            let end = chars[i..]
                                .iter()
                                .position(|&c| c == '\n')
                                .map_or(chars.len(), |p| i + p);
                            let line: String = chars[i..end].iter().collect();
                            i = (end + 1).min(chars.len().max(end));
                            let probe = if strip_tabs {
                                line.trim_start_matches('\t')
                            } else {
                                line.as_str()
                            };
                            if probe.trim_end() == delimiter {
                                break;
                            }
                            body.push_str(&line);
                            body.push('\n');
                        }
                        if let Some(command) = commands.get_mut(owner) {
                            command.heredoc = Some(body);
                        }
                    }
                }
            }
            '>' | '<' => {
                let numbered_fd = in_word && word.chars().all(|c| c.is_ascii_digit());
                if numbered_fd {
                    word.clear();
                    in_word = false;
                }
                finish_word(&mut word, &mut in_word, &mut current, &mut pending_redirect);
                if c == '<' && chars.get(i + 1) == Some(&'<') {
                    // A heredoc: `<<EOF`, `<<'EOF'`, `<<-"EOF"`.
                    i += 2;
                    let strip_tabs = chars.get(i) == Some(&'-');
                    if strip_tabs {
                        i += 1;
                    }
                    while i < chars.len() && chars[i] == ' ' {
                        i += 1;
                    }
                    let mut delimiter = String::new();
                    while i < chars.len()
                        && !matches!(chars[i], ' ' | '\t' | '\n' | ';' | '&' | '|' | '>')
                    {
                        if !matches!(chars[i], '\'' | '"') {
                            delimiter.push(chars[i]);
                        }
                        i += 1;
                    }
                    pending_heredocs.push((delimiter, strip_tabs));
                    heredoc_owner.push(commands.len());
                    continue;
                }
                let op = if c == '<' {
                    "<"
                } else if chars.get(i + 1) == Some(&'>') {
                    i += 1;
                    ">>"
                } else {
                    ">"
                };
                i += 1;
                if chars.get(i) == Some(&'&') {
                    // `>&2`: a descriptor, not a file.
                    i += 1;
                    while i < chars.len() && chars[i].is_ascii_digit() {
                        i += 1;
                    }
                    continue;
                }
                pending_redirect = Some(op);
            }
            _ => {
                in_word = true;
                word.push(c);
                i += 1;
            }
        }
    }
    finish_word(&mut word, &mut in_word, &mut current, &mut pending_redirect);
    if !current.words.is_empty() || !current.redirects.is_empty() {
        commands.push(current);
    }
    commands
}

/// Programs that only show files.
const READERS: &[&str] = &[
    "cat", "nl", "head", "tail", "less", "more", "bat", "wc", "view", "stat", "file", "diff",
];
/// Programs whose run is worth remembering (tests, scripts, builds, linters).
const RUNNERS: &[&str] = &[
    "python", "python2", "python3", "pytest", "py.test", "tox", "nox", "node", "npm", "npx",
    "yarn", "pnpm", "bun", "deno", "cargo", "go", "make", "mix", "elixir", "iex", "ruby", "rake",
    "bundle", "java", "mvn", "gradle", "pylint", "flake8", "mypy", "ruff", "black", "eslint",
    "tsc", "jest", "vitest", "pip", "pip3", "uv", "bash", "sh", "zsh", "dotnet", "php", "rspec",
];

fn simple_actions(simple: &Simple, cwd: &mut String, out: &mut Vec<Action>) {
    let mut words: &[String] = &simple.words;
    // Leading assignments and wrappers do not change what runs.
    while let Some(first) = words.first() {
        let wrapper = matches!(first.as_str(), "sudo" | "env" | "time" | "nohup" | "exec");
        let assignment = first.contains('=') && !first.starts_with('-') && !first.starts_with('=');
        if wrapper || assignment {
            words = &words[1..];
        } else if first == "timeout" {
            words = words.get(2..).unwrap_or_default();
        } else {
            break;
        }
    }
    for (op, target) in &simple.redirects {
        if target.starts_with("/dev/") || target.is_empty() {
            continue;
        }
        let path = join(cwd, target);
        match *op {
            ">" => out.push(Action::Edit {
                path,
                created: true,
            }),
            ">>" => out.push(Action::Edit {
                path,
                created: false,
            }),
            _ => out.push(Action::Read {
                path,
                partial: false,
            }),
        }
    }
    let Some(first) = words.first() else {
        return;
    };
    let program = first.rsplit('/').next().unwrap_or(first).to_owned();
    let args = &words[1..];
    let file = |arg: &String| join(cwd, arg);
    match program.as_str() {
        "cd" => {
            let target = args
                .iter()
                .find(|a| !matches!(a.as_str(), "-P" | "-L" | "-e" | "--"))
                .map(String::as_str)
                .unwrap_or("");
            // An absolute folder is kept as it is (the normalizer places it under a root, or
            // leaves what is outside the project out); home is not the project.
            *cwd = match target {
                "" | "~" => String::new(),
                "-" => cwd.clone(),
                t if t.starts_with('~') => "~".to_owned(),
                t => join(cwd, t),
            };
        }
        p if READERS.contains(&p) => {
            let partial = matches!(p, "head" | "tail" | "wc" | "stat" | "file");
            let value_options: &[&str] =
                &["-n", "-c", "-w", "-s", "-v", "-l", "--lines", "--bytes"];
            for arg in operands(args, value_options) {
                out.push(Action::Read {
                    path: file(arg),
                    partial,
                });
            }
        }
        "sed" => sed(args, cwd, out),
        "grep" | "egrep" | "fgrep" | "rg" | "ag" | "ack" => grep(args, cwd, out),
        "find" | "fd" => {
            let name = args
                .windows(2)
                .find(|w| matches!(w[0].as_str(), "-name" | "-iname" | "-path" | "-regex"))
                .map(|w| w[1].clone());
            let root = args.first().filter(|a| !a.starts_with('-')).cloned();
            let pattern = match (root, name) {
                (Some(root), Some(name)) => format!("{}/{}", join(cwd, &root), name),
                (None, Some(name)) => name,
                (Some(root), None) => join(cwd, &root),
                (None, None) => ".".to_owned(),
            };
            out.push(Action::Glob { pattern });
        }
        "ls" | "tree" => {
            let dirs: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
            if dirs.is_empty() {
                out.push(Action::Glob {
                    pattern: if cwd.is_empty() {
                        ".".to_owned()
                    } else {
                        cwd.clone()
                    },
                });
            }
            for dir in dirs {
                out.push(Action::Glob { pattern: file(dir) });
            }
        }
        "rm" | "unlink" => {
            for arg in args.iter().filter(|a| !a.starts_with('-')) {
                out.push(Action::Delete { path: file(arg) });
            }
        }
        "touch" | "tee" | "ed" | "ex" | "truncate" => {
            for arg in args
                .iter()
                .filter(|a| !a.starts_with('-') && !a.starts_with('+'))
            {
                out.push(Action::Edit {
                    path: file(arg),
                    created: program == "touch" || program == "tee",
                });
            }
        }
        "mv" | "cp" => {
            let paths: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
            if let Some((target, sources)) = paths.split_last() {
                for source in sources {
                    out.push(if program == "mv" {
                        Action::Delete { path: file(source) }
                    } else {
                        Action::Read {
                            path: file(source),
                            partial: false,
                        }
                    });
                }
                out.push(Action::Edit {
                    path: file(target),
                    created: true,
                });
            }
        }
        "git" => git(args, cwd, out),
        p if RUNNERS.contains(&p) || p.starts_with("python") || first.starts_with("./") => {
            run(&program, args, simple, cwd, out)
        }
        _ => {}
    }
}

/// Non-option arguments, skipping the values of options that take one.
fn operands<'a>(args: &'a [String], value_options: &[&str]) -> Vec<&'a String> {
    let mut out = Vec::new();
    let mut skip = false;
    for arg in args {
        if skip {
            skip = false;
            continue;
        }
        if arg.starts_with('-') && arg.len() > 1 {
            skip = value_options.contains(&arg.as_str());
            continue;
        }
        if arg.starts_with('+') {
            continue;
        }
        out.push(arg);
    }
    out
}

fn sed(args: &[String], cwd: &str, out: &mut Vec<Action>) {
    let mut in_place = false;
    let mut quiet = false;
    let mut script_given = false;
    let mut operands = Vec::new();
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        match arg.as_str() {
            "-e" | "-f" | "--expression" => {
                script_given = true;
                iter.next();
            }
            "-n" | "--quiet" | "--silent" => quiet = true,
            a if a.starts_with("-i") || a.starts_with("--in-place") => in_place = true,
            a if a.starts_with('-') && a.len() > 1 => {
                // Bundled flags such as `-ni` or `-En`.
                in_place |= a[1..].contains('i');
                quiet |= a[1..].contains('n');
            }
            _ => operands.push(arg),
        }
    }
    let files = if script_given {
        &operands[..]
    } else {
        operands.get(1..).unwrap_or_default()
    };
    // Broken quoting in long sed scripts spills script text into operands; files have a
    // name with an extension or a folder.
    for path in files.iter().filter(|p| crate::paths::looks_like_file(p)) {
        let path = join(cwd, path);
        out.push(if in_place {
            Action::Edit {
                path,
                created: false,
            }
        } else {
            Action::Read {
                path,
                partial: quiet,
            }
        });
    }
}

fn grep(args: &[String], cwd: &str, out: &mut Vec<Action>) {
    let value_options: &[&str] = &[
        "-e",
        "-f",
        "-A",
        "-B",
        "-C",
        "-m",
        "--include",
        "--exclude",
        "--exclude-dir",
        "-g",
        "--glob",
        "-t",
        "--type",
        "--max-count",
    ];
    let explicit: Vec<&String> = args
        .windows(2)
        .filter(|w| w[0] == "-e" || w[0] == "--regexp")
        .map(|w| &w[1])
        .collect();
    let operands = operands(args, value_options);
    let (patterns, scopes): (Vec<&String>, &[&String]) = if explicit.is_empty() {
        match operands.split_first() {
            Some((pattern, scopes)) => (vec![*pattern], scopes),
            None => return,
        }
    } else {
        (explicit, &operands[..])
    };
    for pattern in patterns {
        if scopes.is_empty() {
            out.push(Action::Search {
                pattern: pattern.clone(),
                scope: None,
            });
        }
        for scope in scopes {
            out.push(Action::Search {
                pattern: pattern.clone(),
                scope: Some(join(cwd, scope)),
            });
        }
    }
}

fn git(args: &[String], cwd: &str, out: &mut Vec<Action>) {
    let Some(sub) = args.first() else { return };
    let paths = || {
        args[1..]
            .iter()
            .filter(|a| !a.starts_with('-') && a.as_str() != "HEAD" && !a.contains(".."))
            .map(|a| join(cwd, a))
    };
    match sub.as_str() {
        // Reverting a file is an edit of it.
        "checkout" | "restore" if args.iter().any(|a| a == "--") || sub == "restore" => {
            for path in paths() {
                out.push(Action::Edit {
                    path,
                    created: false,
                });
            }
        }
        "grep" => grep(&args[1..], cwd, out),
        "rm" => {
            for path in paths() {
                out.push(Action::Delete { path });
            }
        }
        _ => {}
    }
}

fn run(program: &str, args: &[String], simple: &Simple, cwd: &str, out: &mut Vec<Action>) {
    let first_operand = args.iter().find(|a| !a.starts_with('-'));
    let module = args
        .windows(2)
        .find(|w| w[0] == "-m")
        .map(|w| w[1].as_str());
    let test = matches!(
        program,
        "pytest" | "py.test" | "tox" | "nox" | "jest" | "vitest" | "rspec"
    ) || matches!(module, Some("pytest" | "unittest" | "nose"))
        || args.first().is_some_and(|a| a == "test")
        || first_operand.is_some_and(|a| {
            let name = a.rsplit('/').next().unwrap_or(a);
            name.starts_with("test_") || name.ends_with("_test.py")
        });
    let command = match (module, first_operand) {
        (Some(m), _) => format!("{program} -m {m}"),
        (None, Some(a)) if !args.iter().any(|a| a == "-c") => format!("{program} {a}"),
        _ if args.iter().any(|a| a == "-c") => format!("{program} -c"),
        _ => program.to_owned(),
    };
    out.push(Action::Run { command, test });
    // Python that writes files: `python -c "open('x', 'w')…"` or a heredoc script.
    if program.starts_with("python") {
        let inline = args
            .windows(2)
            .find(|w| w[0] == "-c")
            .map(|w| w[1].as_str());
        for script in inline.into_iter().chain(simple.heredoc.as_deref()) {
            for path in python_writes(script) {
                out.push(Action::Edit {
                    path: join(cwd, &path),
                    created: false,
                });
            }
        }
    }
}

/// Files a Python snippet opens for writing.
fn python_writes(script: &str) -> Vec<String> {
    static OPEN_WRITE: OnceLock<Option<Regex>> = OnceLock::new();
    let Some(re) = OPEN_WRITE
        .get_or_init(|| Regex::new(r#"open\(\s*['"]([^'"]+)['"]\s*,\s*['"][wax]b?\+?['"]"#).ok())
        .as_ref()
    else {
        return Vec::new();
    };
    re.captures_iter(script)
        .filter_map(|c| c.get(1))
        .map(|m| m.as_str().to_owned())
        .collect()
}

/// `path` seen from `cwd` (both as the agent wrote them), without `./` segments.
fn join(cwd: &str, path: &str) -> String {
    let path = path.trim_start_matches("./");
    if cwd.is_empty() || path.starts_with('/') || path.starts_with('~') {
        path.to_owned()
    } else {
        format!("{}/{}", cwd.trim_end_matches('/'), path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(path: &str, partial: bool) -> Action {
        Action::Read {
            path: path.into(),
            partial,
        }
    }
    fn edit(path: &str, created: bool) -> Action {
        Action::Edit {
            path: path.into(),
            created,
        }
    }

    #[test]
    fn readers_and_pipes() {
        assert_eq!(
            actions("nl -ba requests/models.py | sed -n '340,400p'"),
            vec![read("requests/models.py", false)]
        );
        assert_eq!(actions("head -n 50 src/a.py"), vec![read("src/a.py", true)]);
        assert_eq!(
            actions("sed -n '220,230p' src/_pytest/unittest.py"),
            vec![read("src/_pytest/unittest.py", true)]
        );
    }

    #[test]
    fn edits_by_sed_heredoc_and_redirect() {
        assert_eq!(
            actions("sed -i 's/a/b/' requests/sessions.py"),
            vec![edit("requests/sessions.py", false)]
        );
        let heredoc =
            "cat <<'EOF' > reproduce.py\nimport requests\nprint(1) > 2\nEOF\npython3 reproduce.py";
        assert_eq!(
            actions(heredoc),
            vec![
                edit("reproduce.py", true),
                Action::Run {
                    command: "python3 reproduce.py".into(),
                    test: false
                }
            ]
        );
        assert_eq!(
            actions("echo x >> notes.txt 2>&1"),
            vec![edit("notes.txt", false)]
        );
        assert_eq!(
            actions("python -c \"open('setup.cfg', 'w').write('x')\""),
            vec![
                Action::Run {
                    command: "python -c".into(),
                    test: false
                },
                edit("setup.cfg", false)
            ]
        );
    }

    #[test]
    fn searches_runs_and_cd() {
        assert_eq!(
            actions("grep -rn \"def prepare\" requests/ --include=*.py"),
            vec![Action::Search {
                pattern: "def prepare".into(),
                scope: Some("requests/".into())
            }]
        );
        assert_eq!(
            actions("cd reproduction && python3 -m pytest test_x.py -q"),
            vec![Action::Run {
                command: "python3 -m pytest".into(),
                test: true
            }]
        );
        assert_eq!(
            actions("cd sub && cat a.py; rm -f tmp.py"),
            vec![
                read("sub/a.py", false),
                Action::Delete {
                    path: "sub/tmp.py".into()
                }
            ]
        );
        assert_eq!(
            actions("git checkout -- src/x.py"),
            vec![edit("src/x.py", false)]
        );
    }

    #[test]
    fn cd_is_followed_through_compounds_and_absolute_folders() {
        assert_eq!(
            actions("ROOT=$(git rev-parse --show-toplevel) && cd src/app && cat models.py"),
            vec![read("src/app/models.py", false)]
        );
        assert_eq!(
            actions("export X=\"$(pwd)\"; cd lib && sed -n '1,20p' a.ex"),
            vec![read("lib/a.ex", true)]
        );
        // An absolute folder stays absolute: the normalizer places it under the project
        // root, or leaves it out when it is elsewhere.
        assert_eq!(
            actions("cd /testbed/src && cat a.py"),
            vec![read("/testbed/src/a.py", false)]
        );
        assert_eq!(
            actions("cd /tmp/work && cat a.py"),
            vec![read("/tmp/work/a.py", false)]
        );
        assert_eq!(
            actions("cd ~/other && cat a.py"),
            vec![read("~/a.py", false)]
        );
        assert_eq!(
            actions("cd -P lib && cat b.py"),
            vec![read("lib/b.py", false)]
        );
    }

    #[test]
    fn hostile_input_does_not_panic() {
        for text in [
            "", "'", "\"", "<<", "cat <<", "$(", "\\", ">", "a |", "sed -i", "grep",
        ] {
            let _ = actions(text);
        }
    }
}
