//! Text cut the way the estimate charges it: runs of ASCII whitespace, runs of ASCII
//! letters and digits, single ASCII punctuation marks, and single other characters.

/// What a piece is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Kind {
    Space,
    Word,
    Mark,
    Other,
}

/// One piece and where it starts in the text.
#[derive(Clone, Copy, Debug)]
pub(super) struct Piece<'a> {
    pub kind: Kind,
    pub text: &'a str,
    pub start: usize,
}

/// A text's pieces.
pub(super) struct Pieces<'a> {
    text: &'a str,
    pieces: Vec<Piece<'a>>,
}

impl<'a> Pieces<'a> {
    /// Cuts `text`.
    pub fn of(text: &'a str) -> Self {
        let mut pieces = Vec::new();
        let mut start = 0;
        while let Some(first) = text[start..].chars().next() {
            let run = |keep: fn(&u8) -> bool| {
                text.as_bytes()[start..]
                    .iter()
                    .take_while(|b| keep(b))
                    .count()
            };
            let (kind, len) = if first.is_ascii_whitespace() {
                (Kind::Space, run(u8::is_ascii_whitespace))
            } else if first.is_ascii_alphanumeric() {
                (Kind::Word, run(u8::is_ascii_alphanumeric))
            } else if first.is_ascii_punctuation() {
                (Kind::Mark, 1)
            } else {
                (Kind::Other, first.len_utf8())
            };
            pieces.push(Piece {
                kind,
                text: &text[start..start + len],
                start,
            });
            start += len;
        }
        Pieces { text, pieces }
    }

    /// How many pieces there are.
    pub fn len(&self) -> usize {
        self.pieces.len()
    }

    /// The piece at `i`.
    pub fn get(&self, i: usize) -> Piece<'a> {
        self.pieces[i]
    }

    /// The piece at `i`, if there is one; `None` for `None` (the place before the first).
    pub fn at(&self, i: Option<usize>) -> Option<Piece<'a>> {
        i.and_then(|i| self.pieces.get(i)).copied()
    }

    /// How many punctuation marks follow one another from `i` on.
    pub fn marks_from(&self, i: usize) -> usize {
        self.pieces[i..]
            .iter()
            .take_while(|p| p.kind == Kind::Mark)
            .count()
    }

    /// The text from byte `start` to byte `end`.
    pub fn slice(&self, start: usize, end: usize) -> &'a str {
        &self.text[start..end]
    }

    /// The text of `count` pieces from `i` on.
    pub fn text(&self, i: usize, count: usize) -> &'a str {
        let last = self.pieces[i + count - 1];
        &self.text[self.pieces[i].start..last.start + last.text.len()]
    }
}
