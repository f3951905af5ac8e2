//! Edits a JSON file in place by splicing text, so that everything the edit does not touch
//! keeps its bytes: a person's formatting, key order, other settings. Serializing a parsed
//! value back would rewrite the whole file.
//!
//! [`Tree::parse`] records where every value lies in the text; the edit functions return a
//! [`Splice`] (a byte range and its replacement). Appending after the last element and
//! removing that element again are exact inverses, which makes install → uninstall give
//! the original file back.

use serde_json::Value;

/// One replacement of `text[start..end]` by `with`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Splice {
    /// First byte replaced.
    pub start: usize,
    /// One past the last byte replaced.
    pub end: usize,
    /// The new text.
    pub with: String,
}

/// Applies splices that do not overlap, in any order.
pub fn apply(text: &str, mut splices: Vec<Splice>) -> String {
    splices.sort_by_key(|s| std::cmp::Reverse(s.start));
    let mut out = text.to_owned();
    for splice in splices {
        out.replace_range(splice.start..splice.end, &splice.with);
    }
    out
}

/// Where a JSON value lies in its text, with its children.
#[derive(Debug, Clone)]
pub struct Node {
    /// The value's first byte (`{`, `[`, `"`, a digit, …).
    pub start: usize,
    /// One past its last byte.
    pub end: usize,
    /// What it holds.
    pub kind: Kind,
}

/// A value's children.
#[derive(Debug, Clone)]
pub enum Kind {
    /// An object's members in text order.
    Object(Vec<Member>),
    /// An array's elements in text order.
    Array(Vec<Node>),
    /// A string, number, boolean or null.
    Scalar,
}

/// One `"key": value` of an object.
#[derive(Debug, Clone)]
pub struct Member {
    /// The decoded key.
    pub key: String,
    /// The key's opening quote.
    pub start: usize,
    /// The value.
    pub value: Node,
}

impl Node {
    /// The members, when this is an object.
    pub fn members(&self) -> Option<&[Member]> {
        match &self.kind {
            Kind::Object(members) => Some(members),
            _ => None,
        }
    }

    /// The elements, when this is an array.
    pub fn elements(&self) -> Option<&[Node]> {
        match &self.kind {
            Kind::Array(elements) => Some(elements),
            _ => None,
        }
    }

    /// The member named `key`, when this is an object that has one.
    pub fn member(&self, key: &str) -> Option<&Member> {
        self.members()?.iter().find(|m| m.key == key)
    }

    /// The value's own text, parsed.
    pub fn value(&self, text: &str) -> Value {
        serde_json::from_str(&text[self.start..self.end]).unwrap_or(Value::Null)
    }
}

/// A parsed text and its root value's place.
pub struct Tree<'a> {
    /// The whole text.
    pub text: &'a str,
    /// The root value.
    pub root: Node,
}

impl<'a> Tree<'a> {
    /// Parses `text`, which must be one JSON value (checked by serde_json first, so the
    /// scanner below only ever sees valid JSON).
    pub fn parse(text: &'a str) -> Result<Tree<'a>, String> {
        serde_json::from_str::<Value>(text).map_err(|e| e.to_string())?;
        let mut scanner = Scanner { text, at: 0 };
        scanner.skip_space();
        let root = scanner.value();
        Ok(Tree { text, root })
    }

    /// Adds `value` as the last element of `array`.
    pub fn append(&self, array: &Node, value: &Value) -> Splice {
        let elements = array.elements().unwrap_or_default();
        match elements.last() {
            Some(last) => self.after(last.end, &elements[0], array, value.clone(), None),
            None => self.first_child(array, Entry::Element(value)),
        }
    }

    /// Adds `"key": value` as the last member of `object`.
    pub fn insert(&self, object: &Node, key: &str, value: &Value) -> Splice {
        let members = object.members().unwrap_or_default();
        match members.last() {
            Some(last) => {
                let first = &members[0];
                let first_node = Node {
                    start: first.start,
                    end: first.value.end,
                    kind: Kind::Scalar,
                };
                self.after(
                    last.value.end,
                    &first_node,
                    object,
                    value.clone(),
                    Some(key),
                )
            }
            None => self.first_child(object, Entry::Member(key, value)),
        }
    }

    /// Removes the element at `index` of `array`, with the separator that joined it.
    pub fn remove_element(&self, array: &Node, index: usize) -> Splice {
        let spans: Vec<(usize, usize)> = array
            .elements()
            .unwrap_or_default()
            .iter()
            .map(|e| (e.start, e.end))
            .collect();
        remove(array, &spans, index)
    }

    /// Removes the member at `index` of `object`, with the separator that joined it.
    pub fn remove_member(&self, object: &Node, index: usize) -> Splice {
        let spans: Vec<(usize, usize)> = object
            .members()
            .unwrap_or_default()
            .iter()
            .map(|m| (m.start, m.value.end))
            .collect();
        remove(object, &spans, index)
    }

    /// A new child after the one ending at `end`, laid out as the first child is: on its
    /// own line at the first child's indentation, or inline after a comma.
    fn after(
        &self,
        end: usize,
        first: &Node,
        parent: &Node,
        value: Value,
        key: Option<&str>,
    ) -> Splice {
        let own_line = self.text[parent.start..first.start].contains('\n');
        let entry = match key {
            Some(key) => format!("{}: ", quoted(key)),
            None => String::new(),
        };
        let with = if own_line {
            let indent = indentation(self.text, first.start);
            format!(",\n{indent}{entry}{}", pretty(&value, indent))
        } else {
            let compact = serde_json::to_string(&value).unwrap_or_default();
            let compact_entry = entry.trim_end().to_owned();
            let space = if compact_entry.is_empty() { "" } else { " " };
            format!(", {compact_entry}{space}{compact}")
        };
        Splice {
            start: end,
            end,
            with,
        }
    }

    /// The first child of an empty container: the container's inside becomes the child on
    /// its own line, one level deeper than the container's line.
    fn first_child(&self, container: &Node, entry: Entry) -> Splice {
        let base = indentation(self.text, container.start);
        let indent = format!("{base}{}", unit(self.text));
        let child = match entry {
            Entry::Element(value) => pretty(value, &indent),
            Entry::Member(key, value) => format!("{}: {}", quoted(key), pretty(value, &indent)),
        };
        Splice {
            start: container.start + 1,
            end: container.end - 1,
            with: format!("\n{indent}{child}\n{base}"),
        }
    }
}

enum Entry<'v> {
    Element(&'v Value),
    Member(&'v str, &'v Value),
}

/// The splice removing child `index` (its span in `spans`) from `container`.
fn remove(container: &Node, spans: &[(usize, usize)], index: usize) -> Splice {
    let (start, end) = match (index, spans.len()) {
        (_, 1) => (container.start + 1, container.end - 1),
        (0, _) => (spans[0].0, spans[1].0),
        (i, _) => (spans[i - 1].1, spans[i].1),
    };
    Splice {
        start,
        end,
        with: String::new(),
    }
}

/// The whitespace that starts the line holding byte `at`.
fn indentation(text: &str, at: usize) -> &str {
    let line_start = text[..at].rfind('\n').map(|i| i + 1).unwrap_or(0);
    let line = &text[line_start..];
    let width = line.len() - line.trim_start_matches([' ', '\t']).len();
    &line[..width]
}

/// One level of indentation as the file uses it: the first indented line's whitespace,
/// else two spaces.
fn unit(text: &str) -> &str {
    text.lines()
        .map(|line| &line[..line.len() - line.trim_start_matches([' ', '\t']).len()])
        .find(|ws| !ws.is_empty())
        .unwrap_or("  ")
}

/// `value` pretty-printed with two-space levels, its lines after the first indented by
/// `indent` (the column its first line starts at).
fn pretty(value: &Value, indent: &str) -> String {
    let text = serde_json::to_string_pretty(value).unwrap_or_default();
    text.replace('\n', &format!("\n{indent}"))
}

fn quoted(key: &str) -> String {
    serde_json::to_string(key).unwrap_or_default()
}

/// A scanner over text already known to be valid JSON.
struct Scanner<'a> {
    text: &'a str,
    at: usize,
}

impl Scanner<'_> {
    fn peek(&self) -> u8 {
        self.text.as_bytes().get(self.at).copied().unwrap_or(0)
    }

    fn skip_space(&mut self) {
        while matches!(self.peek(), b' ' | b'\t' | b'\n' | b'\r') {
            self.at += 1;
        }
    }

    fn value(&mut self) -> Node {
        let start = self.at;
        let kind = match self.peek() {
            b'{' => Kind::Object(self.object()),
            b'[' => Kind::Array(self.array()),
            b'"' => {
                self.string();
                Kind::Scalar
            }
            _ => {
                while !matches!(
                    self.peek(),
                    b',' | b']' | b'}' | b' ' | b'\t' | b'\n' | b'\r' | 0
                ) {
                    self.at += 1;
                }
                Kind::Scalar
            }
        };
        Node {
            start,
            end: self.at,
            kind,
        }
    }

    fn object(&mut self) -> Vec<Member> {
        let mut members = Vec::new();
        self.at += 1;
        loop {
            self.skip_space();
            match self.peek() {
                b'}' | 0 => {
                    self.at += 1;
                    return members;
                }
                b',' => self.at += 1,
                _ => {
                    let start = self.at;
                    let key = self.string();
                    self.skip_space();
                    self.at += 1; // the colon
                    self.skip_space();
                    let value = self.value();
                    members.push(Member { key, start, value });
                }
            }
        }
    }

    fn array(&mut self) -> Vec<Node> {
        let mut elements = Vec::new();
        self.at += 1;
        loop {
            self.skip_space();
            match self.peek() {
                b']' | 0 => {
                    self.at += 1;
                    return elements;
                }
                b',' => self.at += 1,
                _ => elements.push(self.value()),
            }
        }
    }

    /// Skips a string and answers its decoded text.
    fn string(&mut self) -> String {
        let start = self.at;
        self.at += 1;
        loop {
            match self.peek() {
                b'\\' => self.at += 2,
                b'"' | 0 => {
                    self.at += 1;
                    break;
                }
                _ => self.at += 1,
            }
        }
        serde_json::from_str(&self.text[start..self.at.min(self.text.len())]).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn round_trip(text: &str, edit: impl Fn(&Tree) -> Splice) -> String {
        let tree = Tree::parse(text).expect("valid");
        let added = apply(text, vec![edit(&tree)]);
        serde_json::from_str::<Value>(&added).expect("the edit keeps the file valid JSON");
        added
    }

    #[test]
    fn appending_then_removing_the_last_element_gives_the_text_back() {
        let text = "{\n    \"a\": [\n        1,\n        {\"x\": true}\n    ],\n    \"b\": \"é\\\"}\"\n}\n";
        let added = round_trip(text, |t| {
            let array = &t.root.member("a").expect("a").value;
            t.append(array, &json!({"k": [1]}))
        });
        assert!(added.contains("{\"x\": true},\n        {\n          \"k\""));
        let tree = Tree::parse(&added).expect("valid");
        let array = &tree.root.member("a").expect("a").value;
        let removed = apply(&added, vec![tree.remove_element(array, 2)]);
        assert_eq!(removed, text);
    }

    #[test]
    fn a_member_added_to_an_empty_object_and_removed_leaves_it_empty() {
        let text = "{}";
        let added = round_trip(text, |t| t.insert(&t.root, "hooks", &json!({"Stop": []})));
        assert_eq!(added, "{\n  \"hooks\": {\n    \"Stop\": []\n  }\n}");
        let tree = Tree::parse(&added).expect("valid");
        assert_eq!(apply(&added, vec![tree.remove_member(&tree.root, 0)]), "{}");
    }

    #[test]
    fn inline_containers_stay_inline_and_tabs_stay_tabs() {
        let inline = round_trip(r#"{"a": [1, 2]}"#, |t| {
            t.append(&t.root.member("a").expect("a").value, &json!(3))
        });
        assert_eq!(inline, r#"{"a": [1, 2, 3]}"#);
        let tabs = round_trip("{\n\t\"a\": 1\n}", |t| t.insert(&t.root, "b", &json!([2])));
        assert_eq!(tabs, "{\n\t\"a\": 1,\n\t\"b\": [\n\t  2\n\t]\n}");
    }

    #[test]
    fn the_first_of_several_members_goes_with_the_space_before_the_next() {
        let text = "{ \"a\": 1, \"b\": {\"c\": [true]} }";
        let tree = Tree::parse(text).expect("valid");
        assert_eq!(
            apply(text, vec![tree.remove_member(&tree.root, 0)]),
            "{ \"b\": {\"c\": [true]} }"
        );
        let b = &tree.root.member("b").expect("b").value;
        assert_eq!(b.value(text), json!({"c": [true]}));
    }

    #[test]
    fn text_that_is_not_json_is_refused() {
        assert!(Tree::parse("{\"a\": }").is_err());
        assert!(Tree::parse("// comment\n{}").is_err());
    }
}
