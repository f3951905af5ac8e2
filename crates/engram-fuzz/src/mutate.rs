//! Structured mutations of seed inputs, from a seeded random stream (reproducible).

/// Tokens that steer parsers of JSON, shell, SQL-ish query text and source code into their
/// less travelled paths.
const TOKENS: &[&[u8]] = &[
    b"{",
    b"}",
    b"[",
    b"]",
    b"\"",
    b"\\",
    b":",
    b",",
    b"null",
    b"true",
    b"-1",
    b"1e999",
    b"18446744073709551616",
    b"\"\\u0000\"",
    b"\"\\ud800\"",
    b"\n",
    b"\r\n",
    b"\t",
    b"\0",
    b"|",
    b"&&",
    b";",
    b"$(",
    b"`",
    b"'",
    b">",
    b"<",
    b"*",
    b"(",
    b")",
    b"NEAR",
    b"OR",
    b"AND",
    b"NOT",
    b"^",
    b"\xff",
    b"\xc3\x28",
    b"\xf0\x9f\x92\xa9",
    b"</memory>",
    b"[Memory #",
    b"\x1b[2J",
    b"password=",
    b"sk-",
    b"-----BEGIN PRIVATE KEY-----",
    b"def ",
    b"fn ",
    b"function ",
    b"class ",
    b"impl ",
    b"import ",
    b"func ",
];

/// Most inputs kept to mutate further.
const POOL: usize = 256;
/// Longest input made.
const MAX_LEN: usize = 64 * 1024;

/// Makes inputs from seeds and from inputs it kept.
pub struct Mutator {
    state: u64,
    pool: Vec<Vec<u8>>,
    seeds: usize,
}

impl Mutator {
    /// A mutator over `seeds` driven by the random stream `seed`.
    pub fn new(seed: u64, mut seeds: Vec<Vec<u8>>) -> Self {
        if seeds.is_empty() {
            seeds.push(Vec::new());
        }
        Mutator {
            state: seed | 1,
            seeds: seeds.len(),
            pool: seeds,
        }
    }

    fn next(&mut self) -> u64 {
        // xorshift64*: fast and good enough to pick mutations.
        self.state ^= self.state >> 12;
        self.state ^= self.state << 25;
        self.state ^= self.state >> 27;
        self.state.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }

    /// The next input: a pool entry with one to four mutations.
    pub fn next_input(&mut self) -> Vec<u8> {
        let pick = self.below(self.pool.len());
        let mut input = self.pool[pick].clone();
        for _ in 0..=self.below(4) {
            self.mutate(&mut input);
        }
        input.truncate(MAX_LEN);
        input
    }

    /// Keeps a passing input now and then, so mutations build on mutations.
    pub fn keep_if_new(&mut self, input: &[u8]) {
        if self.below(64) != 0 {
            return;
        }
        if self.pool.len() < POOL {
            self.pool.push(input.to_vec());
        } else {
            // Seeds stay; kept inputs take each other's places.
            let slot = self.seeds + self.below(POOL - self.seeds.min(POOL - 1));
            if let Some(place) = self.pool.get_mut(slot) {
                *place = input.to_vec();
            }
        }
    }

    fn mutate(&mut self, input: &mut Vec<u8>) {
        let at = self.below(input.len() + 1);
        match self.below(9) {
            0 if !input.is_empty() => {
                let i = self.below(input.len());
                input[i] ^= 1 << self.below(8);
            }
            1 if !input.is_empty() => {
                let i = self.below(input.len());
                input[i] = self.next() as u8;
            }
            2 => {
                let token = TOKENS[self.below(TOKENS.len())];
                input.splice(at..at, token.iter().copied());
            }
            3 if !input.is_empty() => {
                let end = (at + 1 + self.below(16)).min(input.len());
                input.drain(at.min(end)..end);
            }
            4 => {
                // A piece of another pool entry.
                let pick = self.below(self.pool.len());
                let other = self.pool[pick].clone();
                if !other.is_empty() {
                    let from = self.below(other.len());
                    let to = (from + 1 + self.below(64)).min(other.len());
                    input.splice(at..at, other[from..to].iter().copied());
                }
            }
            5 => {
                // Deep nesting: the same opener many times, and maybe its closers.
                let (open, close): (&[u8], &[u8]) = match self.below(4) {
                    0 => (b"[", b"]"),
                    1 => (b"{\"a\":", b"}"),
                    2 => (b"(", b")"),
                    _ => (b"{", b"}"),
                };
                let depth = 1 + self.below(5_000);
                let mut nest = open.repeat(depth);
                if self.below(2) == 0 {
                    nest.extend(close.repeat(depth));
                }
                input.splice(at..at, nest);
            }
            6 if !input.is_empty() => {
                // Repeat a span.
                let end = (at + 1 + self.below(32)).min(input.len());
                let span = input[at.min(end)..end].to_vec();
                for _ in 0..self.below(8) {
                    input.splice(at..at, span.iter().copied());
                }
            }
            7 => input.truncate(at),
            _ => {
                let n = self.next().to_string();
                input.splice(at..at, n.into_bytes());
            }
        }
    }
}
