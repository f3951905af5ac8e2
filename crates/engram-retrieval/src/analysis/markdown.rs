//! Where a report marks its code: fenced blocks and inline code spans, read the way
//! Markdown renders them.
//!
//! Counting backticks from the start of the text is not enough. One unmatched backtick
//! (a quoted error message that lost its closing one, or C's `` `quote' `` style inside a
//! fenced traceback) flips everything after it: the prose becomes "code" and the code
//! prose. Markdown confines the damage: a fence is a line of its own and runs to the
//! matching closing line, and an inline span closes with a run of as many backticks
//! within the same paragraph, else its backticks are plain characters.

/// `text` cut into stretches, each with whether Markdown shows it as code: the body of a
/// fenced block (without its opening line, whose info string names a language, not
/// code), or the inside of an inline code span. Stretches borrow from `text`, in order;
/// fence lines and span delimiters are left out.
pub(crate) fn segments(text: &str) -> Vec<(&str, bool)> {
    let mut out = Vec::new();
    let mut paragraph: Option<usize> = None;
    let mut fence: Option<Fence> = None;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        if let Some(open) = &fence {
            if open.is_closed_by(line) {
                out.push((&text[open.body..start], true));
                fence = None;
            }
            continue;
        }
        // A fence or a blank line ends the paragraph before it.
        let opened = Fence::opened_by(line, offset);
        if opened.is_some() || line.trim().is_empty() {
            if let Some(p) = paragraph.take() {
                inline_spans(&text[p..start], &mut out);
            }
            fence = opened;
        } else if paragraph.is_none() {
            paragraph = Some(start);
        }
    }
    // An unclosed fence runs to the end of the text, as Markdown renders it.
    if let Some(open) = fence {
        out.push((&text[open.body..], true));
    } else if let Some(p) = paragraph {
        inline_spans(&text[p..], &mut out);
    }
    out
}

/// An open fenced block: its character, the length of its opening run, and where its
/// body starts.
struct Fence {
    mark: u8,
    run: usize,
    body: usize,
}

impl Fence {
    /// The fence `line` opens, if it is an opening fence: at least three backticks or
    /// tildes, then an info string (a backtick fence's info string has no backtick, else
    /// the line is an inline span such as ```` ```x``` ````). `next` is where the body
    /// starts: the offset just past `line`.
    fn opened_by(line: &str, next: usize) -> Option<Fence> {
        let trimmed = line.trim_start();
        let mark = *trimmed.as_bytes().first()?;
        if mark != b'`' && mark != b'~' {
            return None;
        }
        let run = run_of(trimmed.as_bytes(), mark);
        let info = &trimmed[run..];
        (run >= 3 && !(mark == b'`' && info.contains('`'))).then_some(Fence {
            mark,
            run,
            body: next,
        })
    }

    /// Whether `line` closes this fence: a run of its character at least as long as the
    /// opening one, and nothing after it but spaces.
    fn is_closed_by(&self, line: &str) -> bool {
        let trimmed = line.trim_start();
        let run = run_of(trimmed.as_bytes(), self.mark);
        run >= self.run && trimmed[run..].trim().is_empty()
    }
}

/// Cuts one paragraph into plain stretches and inline code spans: a run of n backticks
/// opens a span that the next run of exactly n closes; a run nothing closes is plain.
fn inline_spans<'a>(paragraph: &'a str, out: &mut Vec<(&'a str, bool)>) {
    let bytes = paragraph.as_bytes();
    let run_at = |i: usize| run_of(&bytes[i..], b'`');
    let mut plain = 0;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'`' {
            i += 1;
            continue;
        }
        let run = run_at(i);
        let mut j = i + run;
        let close = loop {
            match bytes[j..].iter().position(|&b| b == b'`') {
                None => break None,
                Some(k) => {
                    let at = j + k;
                    let len = run_at(at);
                    if len == run {
                        break Some(at);
                    }
                    j = at + len;
                }
            }
        };
        match close {
            Some(at) => {
                out.push((&paragraph[plain..i], false));
                out.push((&paragraph[i + run..at], true));
                i = at + run;
                plain = i;
            }
            None => i += run,
        }
    }
    out.push((&paragraph[plain..], false));
}

/// How many times `mark` repeats at the start of `bytes`.
fn run_of(bytes: &[u8], mark: u8) -> usize {
    bytes.iter().take_while(|&&b| b == mark).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The code stretches of `text`, trimmed.
    fn code(text: &str) -> Vec<&str> {
        segments(text)
            .into_iter()
            .filter(|(_, is_code)| *is_code)
            .map(|(s, _)| s.trim())
            .collect()
    }

    #[test]
    fn fences_and_inline_spans_are_code() {
        let text = "use `caplog`, not ``a ` b``:\n```python\nimport pytest\n```\nafter";
        assert_eq!(code(text), ["caplog", "a ` b", "import pytest"]);
        let plain: String = segments(text)
            .into_iter()
            .filter(|(_, is_code)| !is_code)
            .map(|(s, _)| s)
            .collect();
        assert_eq!(plain, "use , not :\nafter");
    }

    #[test]
    fn an_unmatched_backtick_is_plain_and_flips_nothing_after_it() {
        let text = ">Using pytest.skip is not allowed, use `pytestmark = mark.skip.\n\n\
                    The proposed solution `pytestmark` does not work.";
        assert_eq!(code(text), ["pytestmark"]);
    }

    #[test]
    fn a_backtick_inside_a_fence_does_not_end_it() {
        let text = "Reproducer\r\n```py\r\nAssertion `!Equal(name, \"None\")' failed.\r\n\
                    ```\r\n\r\nRelated: `bpo`";
        assert_eq!(
            code(text),
            ["Assertion `!Equal(name, \"None\")' failed.", "bpo"]
        );
    }

    #[test]
    fn a_span_does_not_cross_a_blank_line() {
        assert_eq!(code("open `here\n\nand `there` too"), ["there"]);
        // Within a paragraph it may cross a line break.
        assert_eq!(code("a `b\nc` d"), ["b\nc"]);
    }

    #[test]
    fn every_short_text_of_marks_cuts_into_ordered_stretches_of_itself() {
        // Each text of up to six characters over the marks that matter, exhaustively:
        // no panic, and the stretches are disjoint slices of the text, in order.
        let alphabet = ['`', '~', 'a', '\n', ' '];
        let mut text = String::new();
        for len in 0..=6u32 {
            for mut n in 0..alphabet.len().pow(len) {
                text.clear();
                for _ in 0..len {
                    text.push(alphabet[n % alphabet.len()]);
                    n /= alphabet.len();
                }
                let base = text.as_ptr() as usize;
                let mut at = 0;
                for (stretch, _) in segments(&text) {
                    let start = stretch.as_ptr() as usize - base;
                    assert!(
                        start >= at && start + stretch.len() <= text.len(),
                        "{text:?}"
                    );
                    at = start + stretch.len();
                }
            }
        }
    }

    #[test]
    fn tilde_fences_close_only_on_their_own_mark_and_length() {
        let text = "~~~~\ncode\n~~~\n```\nstill code\n~~~~\nprose";
        assert_eq!(code(text), ["code\n~~~\n```\nstill code"]);
        // One line with a backtick after the run is an inline span, not a fence.
        assert_eq!(code("```x = 1``` then"), ["x = 1"]);
        // An unclosed fence runs to the end.
        assert_eq!(code("see\n```\nboom"), ["boom"]);
    }
}
