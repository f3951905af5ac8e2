//! Markdown read into the blocks rules are made of: headings, list items (with what is
//! nested under them), paragraphs, fenced code and table rows, each with its lines.
//!
//! Only the structure instruction files use is recognised; anything else is text.

/// One block of an instruction file's body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Block {
    /// `#`-headings (and setext ones), with their level.
    Heading { level: usize, text: String },
    /// A top-level list item: its own text first, then what is nested under it (child
    /// items as `- …` lines, code fences kept whole).
    Item { lines: Vec<String> },
    /// Consecutive lines of text.
    Paragraph { text: String },
    /// A fenced code block, with its info string.
    Code { info: String, body: String },
    /// One row of a table, with the table's header cells.
    Row {
        header: Vec<String>,
        cells: Vec<String>,
    },
}

/// A block with the lines it spans, 1-based and inclusive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Spanned {
    pub block: Block,
    pub line: usize,
    pub end: usize,
}

/// A block being read.
enum Open {
    Paragraph {
        lines: Vec<String>,
        start: usize,
        end: usize,
    },
    Item {
        indent: usize,
        content_indent: usize,
        lines: Vec<String>,
        start: usize,
        end: usize,
        after_blank: bool,
    },
}

/// Reads `lines` (the body, whose first line is line `first_line` of the file).
pub(crate) fn read(lines: &[&str], first_line: usize) -> Vec<Spanned> {
    let mut reader = Reader {
        out: Vec::new(),
        open: None,
    };
    let mut i = 0;
    while i < lines.len() {
        let number = first_line + i;
        i += reader.line(lines, i, number);
    }
    reader.close();
    reader.out
}

struct Reader {
    out: Vec<Spanned>,
    open: Option<Open>,
}

impl Reader {
    /// Reads the line at `i` (line `number` of the file) and what belongs to it; returns
    /// how many lines it took.
    fn line(&mut self, lines: &[&str], i: usize, number: usize) -> usize {
        let line = lines[i];
        let trimmed = line.trim();
        let indent = indent_of(line);
        if let Some(fence) = fence_of(trimmed) {
            return self.fence(lines, i, number, fence, indent);
        }
        if trimmed.is_empty() {
            match &mut self.open {
                Some(Open::Item { after_blank, .. }) => *after_blank = true,
                _ => self.close(),
            }
            return 1;
        }
        if trimmed.starts_with("<!--") {
            self.close();
            let taken = lines[i..]
                .iter()
                .position(|l| l.contains("-->"))
                .map_or(lines.len() - i, |p| p + 1);
            return taken;
        }
        if let Some((level, text)) = heading_of(trimmed) {
            self.close();
            self.push(Block::Heading { level, text }, number, number);
            return 1;
        }
        if is_rule_line(trimmed) {
            self.setext_or_break(trimmed, number);
            return 1;
        }
        if trimmed.starts_with('|') && indent < 4 {
            return self.table(lines, i, number);
        }
        if let Some((marker_len, text)) = item_of(trimmed) {
            self.item(indent, marker_len, text, number);
            return 1;
        }
        self.text(indent, trimmed, number);
        1
    }

    fn fence(
        &mut self,
        lines: &[&str],
        i: usize,
        number: usize,
        fence: Fence,
        indent: usize,
    ) -> usize {
        let closing = lines[i + 1..]
            .iter()
            .position(|l| fence.closes(l.trim()))
            .map(|p| i + 1 + p);
        let body_end = closing.unwrap_or(lines.len());
        let body: Vec<&str> = lines[i + 1..body_end]
            .iter()
            .map(|l| strip_indent(l, indent))
            .collect();
        let body = body.join("\n");
        let end = number + (body_end - i) - usize::from(closing.is_none());
        let taken = closing.map_or(lines.len() - i, |c| c - i + 1);
        if let Some(Open::Item {
            indent: item_indent,
            lines: item_lines,
            end: item_end,
            after_blank,
            ..
        }) = &mut self.open
        {
            if indent > *item_indent {
                item_lines.push(format!("```{}\n{}\n```", fence.info, body));
                *item_end = end;
                // Text after the fence does not continue the fence's line.
                *after_blank = true;
                return taken;
            }
        }
        self.close();
        self.push(
            Block::Code {
                info: fence.info,
                body,
            },
            number,
            end,
        );
        taken
    }

    /// A `---`/`***`/`===` line: under a one-line paragraph it makes that line a heading,
    /// elsewhere it is a break.
    fn setext_or_break(&mut self, trimmed: &str, number: usize) {
        if let Some(Open::Paragraph { lines, start, .. }) = &self.open {
            if lines.len() == 1 && !trimmed.starts_with('*') {
                let level = if trimmed.starts_with('=') { 1 } else { 2 };
                let (text, start) = (lines[0].clone(), *start);
                self.open = None;
                self.push(Block::Heading { level, text }, start, number);
                return;
            }
        }
        self.close();
    }

    fn table(&mut self, lines: &[&str], i: usize, number: usize) -> usize {
        self.close();
        let rows: Vec<&str> = lines[i..]
            .iter()
            .take_while(|l| l.trim().starts_with('|'))
            .map(|l| l.trim())
            .collect();
        let has_header = rows.get(1).is_some_and(|r| is_separator_row(r));
        let header = if has_header {
            cells_of(rows[0])
        } else {
            Vec::new()
        };
        let first_body = if has_header { 2 } else { 0 };
        for (offset, row) in rows.iter().enumerate().skip(first_body) {
            if is_separator_row(row) {
                continue;
            }
            let cells = cells_of(row);
            if cells.iter().all(|c| c.is_empty()) {
                continue;
            }
            let at = number + offset;
            self.push(
                Block::Row {
                    header: header.clone(),
                    cells,
                },
                at,
                at,
            );
        }
        rows.len()
    }

    fn item(&mut self, indent: usize, marker_len: usize, text: &str, number: usize) {
        if let Some(Open::Item {
            indent: item_indent,
            lines,
            end,
            after_blank,
            ..
        }) = &mut self.open
        {
            if indent > *item_indent {
                lines.push(format!("- {text}"));
                *end = number;
                *after_blank = false;
                return;
            }
        }
        self.close();
        self.open = Some(Open::Item {
            indent,
            content_indent: indent + marker_len + 1,
            lines: vec![text.to_owned()],
            start: number,
            end: number,
            after_blank: false,
        });
    }

    fn text(&mut self, indent: usize, trimmed: &str, number: usize) {
        let text = trimmed.trim_start_matches('>').trim_start();
        match &mut self.open {
            Some(Open::Item {
                indent: item_indent,
                content_indent,
                lines,
                end,
                after_blank,
                ..
            }) if !*after_blank || indent >= *content_indent || indent > *item_indent => {
                if *after_blank {
                    lines.push(text.to_owned());
                } else if let Some(last) = lines.last_mut() {
                    last.push(' ');
                    last.push_str(text);
                }
                *end = number;
                *after_blank = false;
            }
            Some(Open::Paragraph { lines, end, .. }) => {
                lines.push(text.to_owned());
                *end = number;
            }
            _ => {
                self.close();
                self.open = Some(Open::Paragraph {
                    lines: vec![text.to_owned()],
                    start: number,
                    end: number,
                });
            }
        }
    }

    fn close(&mut self) {
        match self.open.take() {
            Some(Open::Paragraph { lines, start, end }) => self.push(
                Block::Paragraph {
                    text: lines.join(" "),
                },
                start,
                end,
            ),
            Some(Open::Item {
                lines, start, end, ..
            }) => self.push(Block::Item { lines }, start, end),
            None => {}
        }
    }

    fn push(&mut self, block: Block, line: usize, end: usize) {
        self.out.push(Spanned { block, line, end });
    }
}

/// An opening code fence: its character, length and info string.
struct Fence {
    marker: char,
    len: usize,
    info: String,
}

impl Fence {
    fn closes(&self, trimmed: &str) -> bool {
        let run = trimmed.chars().take_while(|c| *c == self.marker).count();
        run >= self.len && trimmed[run * self.marker.len_utf8()..].trim().is_empty()
    }
}

fn fence_of(trimmed: &str) -> Option<Fence> {
    let marker = trimmed.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let len = trimmed.chars().take_while(|c| *c == marker).count();
    if len < 3 {
        return None;
    }
    let info = trimmed[len..].trim();
    // An inline span (```a```) on one line is text, not a fence.
    if marker == '`' && info.contains('`') {
        return None;
    }
    Some(Fence {
        marker,
        len,
        info: info.to_owned(),
    })
}

fn heading_of(trimmed: &str) -> Option<(usize, String)> {
    let level = trimmed.chars().take_while(|c| *c == '#').count();
    if level == 0 || level > 6 {
        return None;
    }
    let rest = &trimmed[level..];
    if !(rest.is_empty() || rest.starts_with(' ') || rest.starts_with('\t')) {
        return None;
    }
    let text = rest.trim().trim_end_matches('#').trim();
    Some((level, text.to_owned()))
}

/// `---`, `***`, `___` or `===` (three or more, spaces allowed).
fn is_rule_line(trimmed: &str) -> bool {
    let Some(first) = trimmed.chars().next() else {
        return false;
    };
    matches!(first, '-' | '*' | '_' | '=')
        && trimmed.chars().filter(|c| *c == first).count() >= 3
        && trimmed.chars().all(|c| c == first || c == ' ')
}

/// A list item's marker length and text: `- `, `* `, `+ `, `1. `, `1) `.
fn item_of(trimmed: &str) -> Option<(usize, &str)> {
    for marker in ["- ", "* ", "+ "] {
        if let Some(text) = trimmed.strip_prefix(marker) {
            return Some((1, text.trim()));
        }
    }
    let digits = trimmed.chars().take_while(char::is_ascii_digit).count();
    if digits == 0 || digits > 3 {
        return None;
    }
    let rest = &trimmed[digits..];
    let text = rest
        .strip_prefix(". ")
        .or_else(|| rest.strip_prefix(") "))?;
    Some((digits + 1, text.trim()))
}

fn is_separator_row(row: &str) -> bool {
    row.chars().any(|c| c == '-')
        && row
            .chars()
            .all(|c| matches!(c, '|' | '-' | ':' | ' ' | '\t'))
}

fn cells_of(row: &str) -> Vec<String> {
    let inner = row.trim().trim_start_matches('|');
    let inner = inner.strip_suffix('|').unwrap_or(inner);
    let mut cells = Vec::new();
    let mut cell = String::new();
    let mut in_code = false;
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                cell.push('|');
                chars.next();
            }
            '`' => {
                in_code = !in_code;
                cell.push(c);
            }
            '|' if !in_code => cells.push(std::mem::take(&mut cell).trim().to_owned()),
            _ => cell.push(c),
        }
    }
    cells.push(cell.trim().to_owned());
    cells
}

fn indent_of(line: &str) -> usize {
    line.chars()
        .take_while(|c| c.is_whitespace())
        .map(|c| if c == '\t' { 4 } else { 1 })
        .sum()
}

fn strip_indent(line: &str, indent: usize) -> &str {
    let mut taken = 0;
    for (at, c) in line.char_indices() {
        if taken >= indent || !(c == ' ' || c == '\t') {
            return &line[at..];
        }
        taken += if c == '\t' { 4 } else { 1 };
    }
    ""
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blocks(text: &str) -> Vec<Spanned> {
        let lines: Vec<&str> = text.lines().collect();
        read(&lines, 1)
    }

    #[test]
    fn wrapped_items_nested_items_and_code_stay_with_their_item() {
        let text = "- NEVER update all\n  dependencies\n- Map IDs using:\n    - `A` for ULIDs\n    - `B` for longs\n- Run:\n  ```bash\n  just test\n  ```\nAfter.\n";
        let got = blocks(text);
        assert_eq!(
            got[0],
            Spanned {
                block: Block::Item {
                    lines: vec!["NEVER update all dependencies".into()]
                },
                line: 1,
                end: 2
            }
        );
        assert_eq!(
            got[1].block,
            Block::Item {
                lines: vec![
                    "Map IDs using:".into(),
                    "- `A` for ULIDs".into(),
                    "- `B` for longs".into()
                ]
            }
        );
        assert_eq!(
            got[2].block,
            Block::Item {
                lines: vec!["Run:".into(), "```bash\njust test\n```".into()]
            }
        );
        assert_eq!((got[2].line, got[2].end), (6, 9));
        // Unindented text after the item's code is not part of it.
        assert_eq!(
            got[3].block,
            Block::Paragraph {
                text: "After.".into()
            }
        );
    }

    #[test]
    fn headings_paragraphs_tables_comments_and_fences() {
        let text = "# Title\n\nSome text\nwrapped.\n\n<!-- hidden\nstill -->\n| Command | Purpose |\n|---|---|\n| `just fmt` | Format \\| lint |\n\n```rust\nfn main() {}\n```\nSetext\n---\n";
        let got: Vec<Block> = blocks(text).into_iter().map(|s| s.block).collect();
        assert_eq!(
            got,
            vec![
                Block::Heading {
                    level: 1,
                    text: "Title".into()
                },
                Block::Paragraph {
                    text: "Some text wrapped.".into()
                },
                Block::Row {
                    header: vec!["Command".into(), "Purpose".into()],
                    cells: vec!["`just fmt`".into(), "Format | lint".into()]
                },
                Block::Code {
                    info: "rust".into(),
                    body: "fn main() {}".into()
                },
                Block::Heading {
                    level: 2,
                    text: "Setext".into()
                },
            ]
        );
    }

    #[test]
    fn an_unclosed_fence_runs_to_the_end() {
        let got = blocks("```\na\nb");
        assert_eq!(
            got,
            vec![Spanned {
                block: Block::Code {
                    info: String::new(),
                    body: "a\nb".into()
                },
                line: 1,
                end: 3
            }]
        );
    }
}
