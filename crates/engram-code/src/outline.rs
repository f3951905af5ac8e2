//! What one file declares and uses: definitions (with containers), calls, imports and
//! inheritance — the per-file half of the layer-1 graph. Pure: parses the text it is given.

use serde::{Deserialize, Serialize};
use tree_sitter::{Node, Parser, Query, QueryCursor, StreamingIterator, Tree};

use crate::syntax::{definition_kind, definition_name, is_type_container};
use crate::Language;

/// A definition in a file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Definition {
    /// `function`, `method`, `class`, `impl`, `trait`, `interface`, `type`, `module`, …
    pub kind: String,
    /// The name as written (`contains`).
    pub name: String,
    /// Qualified by its container (`HashSet::contains`, `Store.get`).
    pub qualified: String,
    /// The enclosing definition's qualified name, if any.
    pub container: Option<String>,
    /// First line, 1-based.
    pub start_line: u32,
    /// Last line, 1-based.
    pub end_line: u32,
    /// Visible outside its file: `export` (JS/TS), `pub` (Rust), a capital letter (Go), no
    /// leading underscore at module level (Python).
    pub exported: bool,
    /// A hash of the definition's text ([`content_hash`]): tells a changed symbol from one
    /// that only moved.
    pub hash: String,
}

/// A call (or `new X`) inside a file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Call {
    /// The called name (the last segment: `save` in `store.save()`).
    pub callee: String,
    /// The qualified name of the definition the call is in; `None` at file level.
    pub caller: Option<String>,
    /// Line, 1-based.
    pub line: u32,
}

/// An import of another module.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Import {
    /// As written: `./store`, `..utils.db`, `crate::store::Store`, `github.com/x/y/pkg`;
    /// Rust `mod name;` declarations appear as `mod name`.
    pub specifier: String,
    /// Names imported from it, when listed.
    pub names: Vec<String>,
    /// Line, 1-based.
    pub line: u32,
}

/// `class A extends B`, `class A(B)`, `impl Trait for Type`, `class A implements I`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Heritage {
    /// The subtype's qualified name.
    pub child: String,
    /// The supertype's name as written (last segment).
    pub parent: String,
    /// `extends` or `implements`.
    pub kind: String,
}

/// Everything the graph needs from one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileOutline {
    /// The file's path.
    pub path: String,
    /// Its language.
    pub language: Language,
    /// [`content_hash`] of the whole text.
    pub hash: String,
    /// Number of lines.
    pub lines: u32,
    /// Definitions in source order.
    pub definitions: Vec<Definition>,
    /// Calls in source order.
    pub calls: Vec<Call>,
    /// Imports in source order.
    pub imports: Vec<Import>,
    /// Inheritance and trait implementations.
    pub heritage: Vec<Heritage>,
}

/// A stable 64-bit FNV-1a hash of `text` as 16 hex digits: the same on every platform and
/// build, which is all change detection needs (it is not a defence against collisions
/// crafted on purpose).
pub fn content_hash(text: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in text.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{hash:016x}")
}

/// Outlines `source` (the contents of `path`); `None` for unsupported languages. Compiles
/// the language's queries each time: to outline many files, reuse an [`Outliner`].
pub fn outline_file(path: &str, source: &str) -> Option<FileOutline> {
    Outliner::new().outline(path, source)
}

/// Outlines files, keeping one parser and each language's compiled queries.
pub struct Outliner {
    parser: Parser,
    queries: std::collections::HashMap<Language, Option<Query>>,
}

impl Default for Outliner {
    fn default() -> Self {
        Outliner::new()
    }
}

impl Outliner {
    /// An outliner with nothing compiled yet.
    pub fn new() -> Self {
        Outliner {
            parser: Parser::new(),
            queries: std::collections::HashMap::new(),
        }
    }

    /// Outlines `source` (the contents of `path`); `None` for unsupported languages.
    pub fn outline(&mut self, path: &str, source: &str) -> Option<FileOutline> {
        let language = Language::from_path(path)?;
        self.parser.set_language(&language.grammar()).ok()?;
        let tree = self.parser.parse(source, None)?;
        let mut outline = FileOutline {
            path: path.to_owned(),
            language,
            hash: content_hash(source),
            lines: source.lines().count() as u32,
            definitions: Vec::new(),
            calls: Vec::new(),
            imports: Vec::new(),
            heritage: Vec::new(),
        };
        let mut walker = Walker {
            language,
            source,
            outline: &mut outline,
            spans: Vec::new(),
        };
        walker.walk(tree.root_node(), None, false, false, 0);
        let spans = std::mem::take(&mut walker.spans);
        let query = self
            .queries
            .entry(language)
            .or_insert_with(|| tags_query(language));
        if let Some(query) = query {
            collect_calls(query, &tree, source, &spans, &mut outline.calls);
        }
        Some(outline)
    }
}

struct Walker<'a> {
    language: Language,
    source: &'a str,
    outline: &'a mut FileOutline,
    /// Byte ranges of definitions with their qualified names, to attribute calls.
    spans: Vec<(usize, usize, String)>,
}

impl Walker<'_> {
    fn text(&self, node: Node) -> String {
        self.source
            .get(node.byte_range())
            .unwrap_or_default()
            .to_owned()
    }

    fn line(node: Node) -> u32 {
        node.start_position().row as u32 + 1
    }

    fn walk(
        &mut self,
        node: Node,
        container: Option<&str>,
        in_type: bool,
        exported_parent: bool,
        depth: usize,
    ) {
        if depth >= crate::MAX_SYNTAX_DEPTH {
            return;
        }
        let depth = depth + 1;
        let mut cursor = node.walk();
        let children: Vec<Node> = node.named_children(&mut cursor).collect();
        for child in children {
            self.imports_of(child);
            let exported_here = exported_parent || child.kind() == "export_statement";
            let kind = if matches!(child.kind(), "export_statement" | "decorated_definition") {
                None
            } else {
                definition_kind(self.language, child, in_type)
            };
            let Some(kind) = kind else {
                self.walk(child, container, in_type, exported_here, depth);
                continue;
            };
            let Some(name) = definition_name(child, self.source) else {
                self.walk(child, container, in_type, exported_here, depth);
                continue;
            };
            let separator = if self.language == Language::Rust {
                "::"
            } else {
                "."
            };
            // Go methods already carry their receiver (`Store.Get`).
            let qualified = match container {
                Some(c) if !name.contains('.') => format!("{c}{separator}{name}"),
                _ => name.clone(),
            };
            let exported = exported_here || self.is_exported(child, &name, container.is_none());
            self.heritage_of(child, &qualified);
            self.outline.definitions.push(Definition {
                kind: kind.to_owned(),
                name: name.clone(),
                qualified: qualified.clone(),
                // Go methods are declared outside their type; the receiver is the container.
                container: container.map(str::to_owned).or_else(|| {
                    (self.language == Language::Go && kind == "method")
                        .then(|| {
                            name.split_once('.')
                                .map(|(receiver, _)| receiver.to_owned())
                        })
                        .flatten()
                }),
                start_line: Self::line(child),
                end_line: child.end_position().row as u32 + 1,
                exported,
                hash: content_hash(self.source.get(child.byte_range()).unwrap_or_default()),
            });
            self.spans
                .push((child.start_byte(), child.end_byte(), qualified.clone()));
            let opens_type = is_type_container(kind);
            // `impl Trait for Type` methods belong to the type.
            let inner = if kind == "impl" {
                child
                    .child_by_field_name("type")
                    .map(|t| {
                        self.text(t)
                            .split('<')
                            .next()
                            .unwrap_or_default()
                            .to_owned()
                    })
                    .unwrap_or(qualified)
            } else {
                qualified
            };
            self.walk(child, Some(&inner), opens_type, false, depth);
        }
    }

    fn is_exported(&self, node: Node, name: &str, top_level: bool) -> bool {
        match self.language {
            Language::Rust => {
                let mut cursor = node.walk();
                let public = node
                    .children(&mut cursor)
                    .any(|c| c.kind() == "visibility_modifier");
                public
            }
            Language::Go => name
                .rsplit('.')
                .next()
                .and_then(|n| n.chars().next())
                .is_some_and(char::is_uppercase),
            Language::Python => top_level && !name.starts_with('_'),
            _ => node
                .parent()
                .is_some_and(|p| p.kind() == "export_statement"),
        }
    }

    fn heritage_of(&mut self, node: Node, child: &str) {
        let mut push = |parent: String, kind: &str| {
            let parent = last_segment(&parent);
            if !parent.is_empty() {
                self.outline.heritage.push(Heritage {
                    child: child.to_owned(),
                    parent,
                    kind: kind.to_owned(),
                });
            }
        };
        match (self.language, node.kind()) {
            (Language::Rust, "impl_item") => {
                if let Some(tr) = node.child_by_field_name("trait") {
                    let ty = node
                        .child_by_field_name("type")
                        .map(|t| self.text(t))
                        .unwrap_or_default();
                    let ty = ty.split('<').next().unwrap_or_default().to_owned();
                    self.outline.heritage.push(Heritage {
                        child: ty,
                        parent: last_segment(&self.text(tr)),
                        kind: "implements".into(),
                    });
                }
            }
            (Language::Python, "class_definition") => {
                if let Some(bases) = node.child_by_field_name("superclasses") {
                    let mut cursor = bases.walk();
                    for base in bases.named_children(&mut cursor) {
                        if matches!(base.kind(), "identifier" | "attribute") {
                            push(self.source[base.byte_range()].to_owned(), "extends");
                        }
                    }
                }
            }
            (Language::TypeScript | Language::Tsx | Language::JavaScript, _) => {
                let mut stack = vec![node];
                while let Some(n) = stack.pop() {
                    let mut cursor = n.walk();
                    for c in n.named_children(&mut cursor) {
                        match c.kind() {
                            "class_heritage" | "extends_type_clause" => stack.push(c),
                            "extends_clause" => {
                                if let Some(v) = c.child_by_field_name("value") {
                                    push(self.source[v.byte_range()].to_owned(), "extends");
                                }
                            }
                            "implements_clause" => {
                                let mut cc = c.walk();
                                for t in c.named_children(&mut cc) {
                                    push(self.source[t.byte_range()].to_owned(), "implements");
                                }
                            }
                            "identifier" | "type_identifier" | "member_expression"
                            | "generic_type"
                                if n.kind() == "class_heritage"
                                    || n.kind() == "extends_type_clause" =>
                            {
                                push(self.source[c.byte_range()].to_owned(), "extends");
                            }
                            _ => {}
                        }
                    }
                }
            }
            _ => {}
        }
    }

    fn imports_of(&mut self, node: Node) {
        let line = Self::line(node);
        let unquote = |s: String| {
            s.trim_matches(|c| c == '"' || c == '\'' || c == '`')
                .to_owned()
        };
        let import = match (self.language, node.kind()) {
            (Language::Rust, "use_declaration") => node.child_by_field_name("argument").map(|a| {
                let text = self.text(a);
                let (path, names) = split_use(&text);
                Import {
                    specifier: path,
                    names,
                    line,
                }
            }),
            (Language::Rust, "mod_item") if node.child_by_field_name("body").is_none() => {
                node.child_by_field_name("name").map(|n| Import {
                    specifier: format!("mod {}", self.text(n)),
                    names: Vec::new(),
                    line,
                })
            }
            (Language::Python, "import_statement") => {
                let mut cursor = node.walk();
                let modules: Vec<Node> = node.children_by_field_name("name", &mut cursor).collect();
                for m in modules {
                    let target = m.child_by_field_name("name").unwrap_or(m);
                    let specifier = self.text(target);
                    self.outline.imports.push(Import {
                        specifier,
                        names: Vec::new(),
                        line,
                    });
                }
                None
            }
            (Language::Python, "import_from_statement") => {
                node.child_by_field_name("module_name").map(|m| {
                    let mut cursor = node.walk();
                    let names = node
                        .children_by_field_name("name", &mut cursor)
                        .map(|n| {
                            let n = n.child_by_field_name("name").unwrap_or(n);
                            self.text(n)
                        })
                        .collect();
                    Import {
                        specifier: self.text(m),
                        names,
                        line,
                    }
                })
            }
            (
                Language::TypeScript | Language::Tsx | Language::JavaScript,
                "import_statement" | "export_statement",
            ) => node.child_by_field_name("source").map(|s| {
                let mut names = Vec::new();
                let mut stack = vec![node];
                while let Some(n) = stack.pop() {
                    let mut cursor = n.walk();
                    for c in n.named_children(&mut cursor) {
                        match c.kind() {
                            "import_specifier" | "export_specifier" => {
                                if let Some(name) = c.child_by_field_name("name") {
                                    names.push((name.start_byte(), self.text(name)));
                                }
                            }
                            "identifier" if n.kind() == "import_clause" => {
                                names.push((c.start_byte(), self.text(c)))
                            }
                            "import_clause" | "named_imports" | "export_clause"
                            | "namespace_import" => stack.push(c),
                            _ => {}
                        }
                    }
                }
                names.sort();
                let names = names.into_iter().map(|(_, n)| n).collect();
                Import {
                    specifier: unquote(self.text(s)),
                    names,
                    line,
                }
            }),
            (Language::TypeScript | Language::Tsx | Language::JavaScript, "call_expression") => {
                let function = node.child_by_field_name("function").map(|f| self.text(f));
                let argument = node
                    .child_by_field_name("arguments")
                    .and_then(|a| a.named_child(0))
                    .filter(|a| a.kind() == "string");
                match (function.as_deref(), argument) {
                    (Some("require"), Some(arg)) => Some(Import {
                        specifier: unquote(self.text(arg)),
                        names: Vec::new(),
                        line,
                    }),
                    _ => None,
                }
            }
            (Language::Go, "import_spec") => node.child_by_field_name("path").map(|p| Import {
                specifier: unquote(self.text(p)),
                names: Vec::new(),
                line,
            }),
            _ => None,
        };
        if let Some(import) = import {
            self.outline.imports.push(import);
        }
    }
}

/// `crate::store::{Store, open}` → (`crate::store`, [Store, open]);
/// `crate::store::Store` → (`crate::store::Store`, [Store]).
fn split_use(text: &str) -> (String, Vec<String>) {
    let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    if let Some((path, list)) = compact.split_once("::{") {
        let names = list
            .trim_end_matches('}')
            .split(',')
            .filter(|n| !n.is_empty())
            .map(|n| {
                n.split("::")
                    .last()
                    .unwrap_or(n)
                    .split("as")
                    .next()
                    .unwrap_or(n)
                    .to_owned()
            })
            .collect();
        return (path.to_owned(), names);
    }
    let last = compact.rsplit("::").next().unwrap_or(&compact).to_owned();
    (compact, vec![last])
}

fn last_segment(text: &str) -> String {
    let base = text.split('<').next().unwrap_or(text);
    base.rsplit(['.', ':'])
        .next()
        .unwrap_or(base)
        .trim()
        .to_owned()
}

/// Calls found by the grammar's own tags query (`@reference.call`, `@reference.class`).
fn collect_calls(
    query: &Query,
    tree: &Tree,
    source: &str,
    spans: &[(usize, usize, String)],
    out: &mut Vec<Call>,
) {
    let name_index = query.capture_index_for_name("name");
    let mut cursor = QueryCursor::new();
    let mut matches = cursor.matches(query, tree.root_node(), source.as_bytes());
    while let Some(m) = matches.next() {
        let is_call = m.captures().iter().any(|c| {
            let name = query.capture_names()[c.index as usize];
            name == "reference.call" || name == "reference.class"
        });
        if !is_call {
            continue;
        }
        let Some(capture) = m.captures().iter().find(|c| Some(c.index) == name_index) else {
            continue;
        };
        let node = capture.node;
        let at = node.start_byte();
        // The innermost definition holding the call.
        let caller = spans
            .iter()
            .filter(|(s, e, _)| *s <= at && at < *e)
            .min_by_key(|(s, e, _)| e - s)
            .map(|(_, _, q)| q.clone());
        out.push(Call {
            callee: last_segment(&source[node.byte_range()]),
            caller,
            line: node.start_position().row as u32 + 1,
        });
    }
    out.sort_by(|a, b| (a.line, &a.callee).cmp(&(b.line, &b.callee)));
    // Overlapping patterns (JavaScript's and TypeScript's `new X`) report a call twice.
    out.dedup();
}

fn tags_query(language: Language) -> Option<Query> {
    let grammar = language.grammar();
    let source = match language {
        // The grammar's tags miss path calls (`Pool::connect()`, `Self::new()`).
        Language::Rust => format!(
            "{}\n(call_expression function: (scoped_identifier name: (identifier) @name)) @reference.call",
            tree_sitter_rust::TAGS_QUERY
        ),
        Language::Python => tree_sitter_python::TAGS_QUERY.to_owned(),
        Language::Go => tree_sitter_go::TAGS_QUERY.to_owned(),
        Language::JavaScript => tree_sitter_javascript::TAGS_QUERY.to_owned(),
        // TypeScript's tags extend JavaScript's, as the tree-sitter CLI combines them.
        Language::TypeScript | Language::Tsx => format!(
            "{}\n{}",
            tree_sitter_javascript::TAGS_QUERY,
            tree_sitter_typescript::TAGS_QUERY
        ),
    };
    Query::new(&grammar, &source).ok()
}
