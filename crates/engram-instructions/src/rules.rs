//! Blocks made into rules: one rule per list item, paragraph, table row or code block,
//! with a short lead-in ("When writing tests:") carried into the items it introduces, a
//! code block kept with the rule that announces it, and headings kept as the section.

use engram_core::MemoryType;

use crate::blocks::{Block, Spanned};
use crate::classify::classify;
use crate::mentions::{files_named, imports};

/// A rule's text is cut to this many bytes (at a line or sentence boundary): a memory is
/// a rule, not a copy of the file.
pub const MAX_RULE_BYTES: usize = 4000;

/// A lead-in of at most this many words is carried into the items it introduces; a
/// longer one is a rule of its own.
const MAX_LEAD_IN_WORDS: usize = 12;

/// A folded list (a lead-in with short items, or an item with children) longer than this
/// is split back into one rule per item.
const MAX_FOLDED_BYTES: usize = 1500;

/// Items of at most this many words are names, folded into the paragraph before them.
const BARE_ITEM_WORDS: usize = 3;

/// Items of at most this many words are folded into their lead-in.
const SHORT_ITEM_WORDS: usize = 10;

/// One rule of an instruction file.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Rule {
    /// The rule as written, unwrapped (nested items and code kept on their own lines).
    pub text: String,
    /// Its first line in the file, 1-based.
    pub line: usize,
    /// Its last line in the file.
    pub end_line: usize,
    /// The headings it sits under, outermost first.
    pub section: Vec<String>,
    /// The kind of memory it is.
    pub memory_type: MemoryType,
    /// Project files it names, from the project root.
    pub files: Vec<String>,
}

/// What the blocks of one file hold: its rules and its `@path` imports (with their lines).
pub(crate) struct Read {
    pub rules: Vec<Rule>,
    pub imports: Vec<(String, usize)>,
}

/// A rule before it is typed: its text, lines, and the info string of its code, if it
/// is a code block.
struct Draft {
    text: String,
    line: usize,
    end: usize,
    code: Option<String>,
}

/// Makes `blocks` (of a file in `folder`) into rules.
pub(crate) fn rules_of(blocks: &[Spanned], folder: &str) -> Read {
    let mut read = Read {
        rules: Vec::new(),
        imports: Vec::new(),
    };
    let mut section: Vec<(usize, String)> = Vec::new();
    let mut i = 0;
    while i < blocks.len() {
        let spanned = &blocks[i];
        if let Block::Heading { level, text } = &spanned.block {
            section.retain(|(l, _)| l < level);
            section.push((*level, clean_heading(text)));
            i += 1;
            continue;
        }
        let headings: Vec<String> = section.iter().map(|(_, h)| h.clone()).collect();
        let (drafts, taken) = drafts_at(blocks, i);
        for draft in drafts {
            for (target, _) in imports_with_line(&draft) {
                read.imports.push((target, draft.line));
            }
            if let Some(rule) = finish(draft, &headings, folder) {
                read.rules.push(rule);
            }
        }
        i += taken;
    }
    read
}

/// The drafts made from the blocks at `i`, and how many blocks they took.
fn drafts_at(blocks: &[Spanned], i: usize) -> (Vec<Draft>, usize) {
    let spanned = &blocks[i];
    let next_code = match blocks.get(i + 1).map(|s| &s.block) {
        Some(Block::Code { info, body }) => Some((info, body, blocks[i + 1].end)),
        _ => None,
    };
    match &spanned.block {
        Block::Paragraph { text } => {
            if text.trim_end().ends_with(':') {
                if let Some((info, body, end)) = next_code {
                    return (vec![with_code(text, spanned.line, info, body, end)], 2);
                }
            }
            if matches!(
                blocks.get(i + 1).map(|s| &s.block),
                Some(Block::Item { .. })
            ) {
                let (drafts, taken) = lead_in(text, spanned.line, blocks, i + 1);
                if text.trim_end().ends_with(':') || drafts.len() == 1 {
                    return (drafts, taken);
                }
            }
            (vec![plain(text.clone(), spanned)], 1)
        }
        Block::Item { lines } => {
            let text = lines.join("\n");
            if let (true, Some((info, body, end))) = (text.trim_end().ends_with(':'), next_code) {
                return (vec![with_code(&text, spanned.line, info, body, end)], 2);
            }
            (split_folded(lines, spanned), 1)
        }
        Block::Code { info, body } => (
            vec![Draft {
                text: fenced(info, body),
                line: spanned.line,
                end: spanned.end,
                code: Some(info.clone()),
            }],
            1,
        ),
        Block::Row { header, cells } => (vec![plain(row_text(header, cells), spanned)], 1),
        Block::Heading { .. } => (Vec::new(), 1),
    }
}

/// A paragraph ending in `:` and the list after it: short items fold into it as one
/// rule; otherwise each item is a rule, carrying a short lead-in before its text.
fn lead_in(lead: &str, line: usize, blocks: &[Spanned], first: usize) -> (Vec<Draft>, usize) {
    let items: Vec<&Spanned> = blocks[first..]
        .iter()
        .take_while(|s| matches!(s.block, Block::Item { .. }))
        .collect();
    let texts: Vec<String> = items
        .iter()
        .map(|s| match &s.block {
            Block::Item { lines } => lines.join("\n"),
            _ => String::new(),
        })
        .collect();
    let taken = 1 + items.len();
    let end = items.last().map_or(line, |s| s.end);
    let short = texts.iter().all(|t| words(t) <= SHORT_ITEM_WORDS);
    let bare = texts.iter().all(|t| words(t) <= BARE_ITEM_WORDS);
    if bare && !lead.trim_end().ends_with(':') {
        // A description followed by a list of names (files, types): the names belong to
        // it.
        return (
            vec![Draft {
                text: format!("{lead}\n- {}", texts.join("\n- ")),
                line,
                end,
                code: None,
            }],
            taken,
        );
    }
    let folded = format!("{lead}\n- {}", texts.join("\n- "));
    if short && folded.len() <= MAX_FOLDED_BYTES {
        return (
            vec![Draft {
                text: folded,
                line,
                end,
                code: None,
            }],
            taken,
        );
    }
    let lead_words = words(lead);
    let mut drafts = Vec::new();
    if lead_words > MAX_LEAD_IN_WORDS {
        drafts.push(Draft {
            text: lead.to_owned(),
            line,
            end: line,
            code: None,
        });
    }
    let carried = (3..=MAX_LEAD_IN_WORDS).contains(&lead_words);
    for (item, text) in items.iter().zip(texts) {
        drafts.push(Draft {
            text: if carried {
                format!("{} {text}", lead.trim_end())
            } else {
                text
            },
            line: item.line,
            end: item.end,
            code: None,
        });
    }
    (drafts, taken)
}

/// An item with nested items: one rule, unless it is too long, then one rule per child
/// carrying the parent's text as its lead.
fn split_folded(lines: &[String], spanned: &Spanned) -> Vec<Draft> {
    let text = lines.join("\n");
    if text.len() <= MAX_FOLDED_BYTES || lines.len() < 3 {
        return vec![plain(text, spanned)];
    }
    let parent = lines[0].trim_end_matches(':');
    lines[1..]
        .iter()
        .map(|child| Draft {
            text: format!("{parent}: {}", child.trim_start_matches("- ")),
            line: spanned.line,
            end: spanned.end,
            code: None,
        })
        .collect()
}

fn plain(text: String, spanned: &Spanned) -> Draft {
    Draft {
        text,
        line: spanned.line,
        end: spanned.end,
        code: None,
    }
}

fn with_code(text: &str, line: usize, info: &str, body: &str, end: usize) -> Draft {
    Draft {
        text: format!("{text}\n{}", fenced(info, body)),
        line,
        end,
        code: Some(info.to_owned()),
    }
}

fn fenced(info: &str, body: &str) -> String {
    format!("```{info}\n{body}\n```")
}

/// A table row as one line: `header: cell` pairs when the table has a header, else the
/// cells joined.
fn row_text(header: &[String], cells: &[String]) -> String {
    let pairs: Vec<String> = cells
        .iter()
        .enumerate()
        .filter(|(_, c)| !c.is_empty())
        .map(|(i, cell)| match header.get(i).filter(|h| !h.is_empty()) {
            Some(h) if i > 0 => format!("{h}: {cell}"),
            _ => cell.clone(),
        })
        .collect();
    pairs.join(" — ")
}

/// The `@path` imports of a draft (not inside its code).
fn imports_with_line(draft: &Draft) -> Vec<(String, usize)> {
    if draft.code.is_some() && draft.text.starts_with("```") {
        return Vec::new();
    }
    let prose = draft.text.split("\n```").next().unwrap_or("");
    imports(prose)
        .into_iter()
        .map(|t| (t, draft.line))
        .collect()
}

/// The rule a draft makes, or `None` when it says nothing by itself (a lone import, a
/// one- or two-word line, a bare link).
fn finish(draft: Draft, section: &[String], folder: &str) -> Option<Rule> {
    let text = cut(draft.text.trim());
    let prose = text.split("\n```").next().unwrap_or("");
    let only_imports = prose
        .split_whitespace()
        .all(|w| w.starts_with('@') || w == "," || w == "-");
    if only_imports && draft.code.is_none() {
        return None;
    }
    if draft.code.is_none() && words(prose) < 3 && !prose.contains('`') {
        return None;
    }
    let code = draft.code.as_deref();
    let text = if code.is_some() && text.starts_with("```") {
        // Code on its own says what it is about by its section.
        match section.last() {
            Some(heading) => format!("{heading}:\n{text}"),
            None => text,
        }
    } else {
        text
    };
    Some(Rule {
        memory_type: classify(&text, section, code),
        files: files_named(&text, folder),
        text,
        line: draft.line,
        end_line: draft.end,
        section: section.to_vec(),
    })
}

/// `text` cut to [`MAX_RULE_BYTES`] at the last line or sentence end before it.
fn cut(text: &str) -> String {
    if text.len() <= MAX_RULE_BYTES {
        return text.to_owned();
    }
    let mut end = MAX_RULE_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let head = &text[..end];
    let at = head
        .rfind('\n')
        .or_else(|| head.rfind(". ").map(|p| p + 1))
        .unwrap_or(end);
    let mut out = head[..at].trim_end().to_owned();
    if out.matches("```").count() % 2 == 1 {
        out.push_str("\n```");
    }
    out.push_str(" …");
    out
}

/// A heading without markdown emphasis, numbering or emoji.
fn clean_heading(text: &str) -> String {
    let text = text.replace(['*', '`'], "");
    text.trim_start_matches(|c: char| !c.is_alphanumeric())
        .trim()
        .to_owned()
}

fn words(text: &str) -> usize {
    text.split_whitespace().count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::read;

    fn rules(text: &str) -> Vec<Rule> {
        let lines: Vec<&str> = text.lines().collect();
        rules_of(&read(&lines, 1), "").rules
    }

    #[test]
    fn items_are_rules_under_their_headings() {
        let got = rules("# Title\n\n## Testing\n\n- Run `just test` before you push\n- NEVER skip a failing test\n");
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].text, "Run `just test` before you push");
        assert_eq!(got[0].section, vec!["Title", "Testing"]);
        assert_eq!(got[0].memory_type, MemoryType::WorkflowRecipe);
        assert_eq!(
            (got[1].line, got[1].memory_type),
            (6, MemoryType::Requirement)
        );
    }

    #[test]
    fn a_short_lead_in_with_short_items_is_one_rule() {
        let got = rules("There are four major MCP object types:\n\n- Tools (src/tools/)\n- Prompts (src/prompts)\n\nAfter that, a paragraph of words.\n");
        assert_eq!(
            got[0].text,
            "There are four major MCP object types:\n- Tools (src/tools/)\n- Prompts (src/prompts)"
        );
        assert_eq!((got[0].line, got[0].end_line), (1, 4));
        assert_eq!(got[1].text, "After that, a paragraph of words.");
    }

    #[test]
    fn a_lead_in_before_long_items_is_carried_into_each() {
        let got = rules("When writing tests:\n- use the fixtures that the other tests in this folder already use\n- keep each test to one behaviour, named for what it shows\n");
        assert_eq!(got.len(), 2);
        assert!(got[0]
            .text
            .starts_with("When writing tests: use the fixtures"));
    }

    #[test]
    fn code_stays_with_the_rule_that_announces_it_and_lone_code_takes_its_heading() {
        let got = rules("## Setup\n\nInstall the tools:\n\n```bash\njust init\n```\n\n## Example\n\n```rust\nfn a() {}\n```\n");
        assert_eq!(got[0].text, "Install the tools:\n```bash\njust init\n```");
        assert_eq!(got[0].memory_type, MemoryType::WorkflowRecipe);
        assert_eq!(got[1].text, "Example:\n```rust\nfn a() {}\n```");
        assert_eq!(got[1].memory_type, MemoryType::Pattern);
    }

    #[test]
    fn imports_are_not_rules_and_short_lines_are_dropped() {
        let lines: Vec<&str> = vec![
            "@AGENTS.md",
            "",
            "Overview",
            "",
            "Follow @../core/POLICY.md , always.",
        ];
        let read = rules_of(&read(&lines, 1), "crates/fmt");
        assert_eq!(
            read.imports,
            vec![
                ("AGENTS.md".to_owned(), 1),
                ("../core/POLICY.md".to_owned(), 5)
            ]
        );
        assert_eq!(read.rules.len(), 1);
        assert_eq!(read.rules[0].line, 5);
    }

    #[test]
    fn table_rows_pair_cells_with_the_header() {
        let got = rules("| Command | Purpose |\n|---|---|\n| `just fmt` | Format all code |\n");
        assert_eq!(got[0].text, "`just fmt` — Purpose: Format all code");
    }

    #[test]
    fn a_long_rule_is_cut_at_a_sentence() {
        let sentence = "This sentence is one of many in a long paragraph. ";
        let got = rules(&sentence.repeat(200));
        assert!(got[0].text.len() <= MAX_RULE_BYTES + 4);
        assert!(
            got[0].text.ends_with(". …"),
            "{}",
            &got[0].text[got[0].text.len() - 20..]
        );
    }
}
