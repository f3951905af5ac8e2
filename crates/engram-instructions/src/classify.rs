//! The memory type of a rule, from its words and the section it sits in.
//!
//! Instruction files say a handful of kinds of thing, and each has words that give it
//! away: commands to run (a workflow recipe), hard rules (`MUST`, `NEVER`: a requirement),
//! traps (`note that`, `otherwise it fails`: a gotcha), leanings and response style
//! (`prefer`, `be terse`: a preference), choices made (`we use`: a decision), coding
//! conventions stated as imperatives (a pattern) and descriptions of the code (a module
//! insight). The first kind whose words a rule has wins, in that order.

use engram_core::MemoryType;

use crate::mentions::code_spans;

/// Programs whose invocation, in a code span or a shell block, makes a rule a recipe.
const COMMANDS: &[&str] = &[
    "cargo",
    "npm",
    "pnpm",
    "yarn",
    "npx",
    "bun",
    "bunx",
    "deno",
    "node",
    "just",
    "make",
    "cmake",
    "go",
    "python",
    "python3",
    "pip",
    "pytest",
    "uv",
    "uvx",
    "poetry",
    "git",
    "gh",
    "docker",
    "mix",
    "bundle",
    "bin/rails",
    "rails",
    "rake",
    "gem",
    "ruby",
    "gradle",
    "./gradlew",
    "gradlew",
    "mvn",
    "dotnet",
    "swift",
    "xcodebuild",
    "julia",
    "tox",
    "nox",
    "ruff",
    "mypy",
    "pyright",
    "eslint",
    "prettier",
    "biome",
    "tsc",
    "vitest",
    "jest",
    "playwright",
    "turbo",
    "nx",
    "bazel",
    "kubectl",
    "terraform",
    "psql",
    "sqlite3",
    "curl",
    "rustup",
    "clippy",
    "rg",
    "task",
    "hatch",
    "pre-commit",
    "bin/test",
    "bin/rspec",
    "rspec",
];

/// Info strings of fenced code that is a shell session.
const SHELL_INFOS: &[&str] = &[
    "",
    "bash",
    "sh",
    "shell",
    "zsh",
    "console",
    "terminal",
    "fish",
    "powershell",
    "ps1",
    "cmd",
];

/// Words of hard rules.
const REQUIREMENT_WORDS: &[&str] = &[
    "must",
    "never",
    "always",
    "required",
    "requires",
    "mandatory",
    "critical",
    "forbidden",
    "prohibited",
    "only",
    "ensure",
    "shall",
];

/// Phrases of hard rules that are more than one word.
const REQUIREMENT_PHRASES: &[&str] = &[
    "do not",
    "don't",
    "dont",
    "make sure",
    "is not allowed",
    "are not allowed",
    "not negotiable",
    "no exceptions",
];

/// Phrases of traps and surprises.
const GOTCHA_PHRASES: &[&str] = &[
    "note that",
    "beware",
    "careful",
    "caveat",
    "gotcha",
    "pitfall",
    "watch out",
    "known issue",
    "will fail",
    "fails if",
    "fails when",
    "otherwise",
    "won't work",
    "doesn't work",
    "does not work",
    "silently",
    "breaks",
    "unexpected",
    "surprising",
    "warning",
    "caution",
    "trap",
    "be aware",
    "can hang",
    "flaky",
];

/// Words of leanings, and of how a person wants to be answered.
const PREFERENCE_WORDS: &[&str] = &[
    "prefer",
    "prefers",
    "preferred",
    "favor",
    "favour",
    "avoid",
    "ideally",
    "should",
    "try",
    "consider",
    "recommended",
    "terse",
    "concise",
    "casual",
    "tone",
    "respond",
    "response",
    "responses",
    "answer",
    "answers",
    "reply",
    "replies",
    "explain",
    "explanation",
    "explanations",
    "emoji",
    "emojis",
    "me",
    "my",
    "i",
];

/// Phrases of choices made.
const DECISION_PHRASES: &[&str] = &[
    "we use",
    "we chose",
    "we decided",
    "we picked",
    "we switched",
    "we moved",
    "we migrated",
    "we standardized",
    "is built on",
    "is built with",
    "we rely on",
    "the project uses",
    "this project uses",
    "the repo uses",
    "uses",
    "instead of",
];

/// Verbs a convention opens with.
const IMPERATIVES: &[&str] = &[
    "use",
    "add",
    "keep",
    "write",
    "put",
    "place",
    "follow",
    "name",
    "call",
    "return",
    "pass",
    "check",
    "handle",
    "include",
    "import",
    "export",
    "define",
    "create",
    "mark",
    "wrap",
    "run",
    "test",
    "document",
    "update",
    "remove",
    "delete",
    "read",
    "ask",
    "let",
    "make",
    "treat",
    "give",
    "be",
    "suggest",
    "cite",
    "split",
    "leave",
    "store",
    "log",
    "throw",
    "raise",
    "catch",
    "validate",
    "map",
    "override",
    "prefix",
    "separate",
    "group",
    "sort",
    "reuse",
    "extend",
    "implement",
    "annotate",
    "register",
    "set",
    "specify",
    "start",
    "stop",
    "list",
    "link",
    "commit",
    "push",
    "open",
    "fix",
    "look",
    "search",
    "see",
    "refer",
    "consult",
    "verify",
    "confirm",
    "respect",
    "stick",
    "match",
    "format",
    "lint",
    "build",
];

/// The type of a rule with `text`, under the headings `section` (outermost first),
/// that came from fenced code with `info` when `code` is set.
pub(crate) fn classify(text: &str, section: &[String], code: Option<&str>) -> MemoryType {
    let lower = text.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '-'))
        .filter(|w| !w.is_empty())
        .collect();
    let has_word = |list: &[&str]| words.iter().any(|w| list.contains(w));
    let has_phrase = |list: &[&str]| list.iter().any(|p| contains_phrase(&lower, p));
    if let Some(kind) = by_opening_word(&words) {
        return kind;
    }
    if is_recipe(text, section, code) {
        return MemoryType::WorkflowRecipe;
    }
    if code.is_some() {
        return MemoryType::Pattern;
    }
    if has_word(REQUIREMENT_WORDS) || has_phrase(REQUIREMENT_PHRASES) {
        return MemoryType::Requirement;
    }
    if has_phrase(GOTCHA_PHRASES) {
        return MemoryType::Gotcha;
    }
    if has_word(PREFERENCE_WORDS) {
        return MemoryType::Preference;
    }
    if has_phrase(DECISION_PHRASES) {
        return MemoryType::Decision;
    }
    let first = words.first().copied().unwrap_or("");
    if IMPERATIVES.contains(&first) {
        return MemoryType::Pattern;
    }
    MemoryType::ModuleInsight
}

/// The kind a rule's opening word says outright: `ALWAYS`/`NEVER`/`No …` open a hard
/// rule, `PREFER`/`AVOID` a leaning, `Be …` how to answer; later words ("…if clippy must
/// be disabled") do not overturn it.
fn by_opening_word(words: &[&str]) -> Option<MemoryType> {
    let opening: Vec<&str> = words
        .iter()
        .copied()
        .skip_while(|w| matches!(*w, "please" | "important" | "note"))
        .take(2)
        .collect();
    match opening.as_slice() {
        ["always" | "never" | "must" | "no" | "don't" | "dont", ..] | ["do", "not"] => {
            Some(MemoryType::Requirement)
        }
        ["prefer" | "avoid" | "favor" | "favour" | "be", ..] => Some(MemoryType::Preference),
        _ => None,
    }
}

/// A rule about running something: a shell block, or a text whose code spans invoke a
/// known program and that opens with one or says to run it.
fn is_recipe(text: &str, section: &[String], code: Option<&str>) -> bool {
    if let Some(info) = code {
        let info = info.split_whitespace().next().unwrap_or("").to_lowercase();
        if SHELL_INFOS.contains(&info.as_str()) {
            return true;
        }
    }
    let invokes = |span: &str| {
        let first = span.split_whitespace().next().unwrap_or("");
        COMMANDS.contains(&first)
    };
    let spans = code_spans(text);
    let Some(first_command) = spans.iter().position(|s| invokes(s)) else {
        return false;
    };
    let lower = text.to_lowercase();
    let opens_with_it =
        lower.trim_start_matches(['*', '_', ' ']).starts_with('`') && first_command == 0;
    let says_run = ["run ", "running ", "execute ", "use `", "via `", "with `"]
        .iter()
        .any(|p| lower.contains(p));
    let in_commands_section = section.iter().any(|h| {
        let h = h.to_lowercase();
        [
            "command", "build", "test", "running", "setup", "workflow", "develop", "install",
            "release", "debug",
        ]
        .iter()
        .any(|w| h.contains(w))
    });
    opens_with_it || says_run || in_commands_section
}

/// Whether `phrase` occurs in `lower` at word boundaries.
fn contains_phrase(lower: &str, phrase: &str) -> bool {
    let mut from = 0;
    while let Some(at) = lower[from..].find(phrase) {
        let start = from + at;
        let end = start + phrase.len();
        let before = lower[..start].chars().next_back();
        let after = lower[end..].chars().next();
        let boundary = |c: Option<char>| c.is_none_or(|c| !c.is_alphanumeric());
        if boundary(before) && boundary(after) {
            return true;
        }
        from = end;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(text: &str) -> MemoryType {
        classify(text, &[], None)
    }

    #[test]
    fn each_kind_by_its_words() {
        assert_eq!(
            kind("`pnpm vitest run <path>` - Run specific test file"),
            MemoryType::WorkflowRecipe
        );
        assert_eq!(
            kind("When making changes for Windows from Unix, use `cargo xwin clippy` to check compilation"),
            MemoryType::WorkflowRecipe
        );
        assert_eq!(
            kind("NEVER perform builds with the release profile, unless asked"),
            MemoryType::Requirement
        );
        assert_eq!(
            kind("Don't skip tests due to type issues - fix the types instead"),
            MemoryType::Requirement
        );
        assert_eq!(
            kind("Note that while resources and resource templates are different objects, they are both in `src/resources/`."),
            MemoryType::Gotcha
        );
        assert_eq!(
            kind("PREFER let chains over nested `if let` statements"),
            MemoryType::Preference
        );
        assert_eq!(kind("Be terse"), MemoryType::Preference);
        assert_eq!(
            kind("The webapp uses an express server, written in TypeScript."),
            MemoryType::Decision
        );
        assert_eq!(
            kind("Place the ID class in the same file as its aggregate"),
            MemoryType::Pattern
        );
        assert_eq!(
            kind("`@internal/run-engine` has all the code needed to trigger a run."),
            MemoryType::ModuleInsight
        );
    }

    #[test]
    fn code_blocks_are_recipes_when_shell_and_patterns_otherwise() {
        assert_eq!(
            classify("Build:", &[], Some("bash")),
            MemoryType::WorkflowRecipe
        );
        assert_eq!(
            classify("Example:", &[], Some("csharp")),
            MemoryType::Pattern
        );
    }

    #[test]
    fn a_command_in_a_commands_section_is_a_recipe() {
        let section = vec!["Development Commands".to_owned()];
        assert_eq!(
            classify("Build packages with `pnpm build`", &section, None),
            MemoryType::WorkflowRecipe
        );
        assert_eq!(
            classify("The build is slow on CI", &section, None),
            MemoryType::ModuleInsight
        );
    }
}
