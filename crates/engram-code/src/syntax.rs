//! What each grammar's nodes mean to engram: which are definitions (and of what kind),
//! which are comments, and where a definition's name is.

use tree_sitter::Node;

use crate::Language;

/// The kind of a definition node, or `None` for anything else. `in_type` says whether the
/// node sits inside a class, impl or trait body (functions there are methods).
pub(crate) fn definition_kind(
    language: Language,
    node: Node,
    in_type: bool,
) -> Option<&'static str> {
    if !node.is_named() {
        return None;
    }
    let function = if in_type { "method" } else { "function" };
    Some(match (language, node.kind()) {
        (Language::Rust, "function_item" | "function_signature_item") => function,
        (Language::Rust, "impl_item") => "impl",
        (Language::Rust, "trait_item") => "trait",
        (Language::Rust, "struct_item" | "enum_item" | "union_item" | "type_item") => "type",
        (Language::Rust, "mod_item") => "module",
        (Language::Rust, "macro_definition") => "macro",
        (Language::Rust, "const_item" | "static_item") => "constant",
        (Language::Python, "function_definition") => function,
        (Language::Python, "class_definition") => "class",
        (Language::Python, "decorated_definition") => {
            return node
                .child_by_field_name("definition")
                .and_then(|d| definition_kind(language, d, in_type))
        }
        (Language::Go, "function_declaration") => "function",
        (Language::Go, "method_declaration") => "method",
        (Language::Go, "type_declaration") => "type",
        (
            Language::TypeScript | Language::Tsx | Language::JavaScript,
            "function_declaration" | "generator_function_declaration" | "function_signature",
        ) => "function",
        (
            Language::TypeScript | Language::Tsx | Language::JavaScript,
            "class_declaration" | "abstract_class_declaration" | "class",
        ) => "class",
        (
            Language::TypeScript | Language::Tsx | Language::JavaScript,
            "method_definition" | "method_signature" | "abstract_method_signature",
        ) => "method",
        (Language::TypeScript | Language::Tsx, "interface_declaration") => "interface",
        (Language::TypeScript | Language::Tsx, "type_alias_declaration" | "enum_declaration") => {
            "type"
        }
        (Language::TypeScript | Language::Tsx, "internal_module" | "module") => "module",
        (Language::TypeScript | Language::Tsx | Language::JavaScript, "export_statement") => {
            return node
                .child_by_field_name("declaration")
                .and_then(|d| definition_kind(language, d, in_type))
        }
        (
            Language::TypeScript | Language::Tsx | Language::JavaScript,
            "lexical_declaration" | "variable_declaration",
        ) => {
            // `const handler = (req) => …` is a function in all but syntax.
            let value = first_declarator(node)?.child_by_field_name("value")?;
            match value.kind() {
                "arrow_function" | "function_expression" | "function" => function,
                "class" => "class",
                _ => return None,
            }
        }
        _ => return None,
    })
}

/// Whether a definition of this kind holds methods (its functions are methods).
pub(crate) fn is_type_container(kind: &str) -> bool {
    matches!(kind, "class" | "impl" | "trait" | "interface")
}

/// Whether `node` belongs to the item after it: a comment, or a Rust attribute
/// (`#[cfg(…)]`, `#[derive(…)]`).
pub(crate) fn is_leading(node: Node) -> bool {
    matches!(
        node.kind(),
        "comment" | "line_comment" | "block_comment" | "attribute_item"
    )
}

/// The name of a definition node, as written in the source.
pub(crate) fn definition_name(node: Node, source: &str) -> Option<String> {
    let text = |n: Node| source.get(n.byte_range()).map(str::to_owned);
    match node.kind() {
        "decorated_definition" => node
            .child_by_field_name("definition")
            .and_then(|d| definition_name(d, source)),
        "export_statement" => node
            .child_by_field_name("declaration")
            .and_then(|d| definition_name(d, source)),
        // `impl Trait for Type` is named by its type (and trait).
        "impl_item" => {
            let ty = node
                .child_by_field_name("type")
                .and_then(base_type)
                .and_then(text)?;
            match node
                .child_by_field_name("trait")
                .and_then(base_type)
                .and_then(text)
            {
                Some(tr) => Some(format!("{tr} for {ty}")),
                None => Some(ty),
            }
        }
        // Go methods are named by their receiver type: `func (s *Store) Get` → `Store.Get`.
        "method_declaration" => {
            let name = node.child_by_field_name("name").and_then(text)?;
            let receiver = node.child_by_field_name("receiver").and_then(text);
            let ty = receiver.as_deref().and_then(|r| {
                r.trim_matches(|c| c == '(' || c == ')')
                    .split_whitespace()
                    .last()
                    .map(|t| {
                        t.trim_start_matches('*')
                            .split('[')
                            .next()
                            .unwrap_or(t)
                            .to_owned()
                    })
            });
            Some(match ty {
                Some(ty) if !ty.is_empty() => format!("{ty}.{name}"),
                _ => name,
            })
        }
        "lexical_declaration" | "variable_declaration" => first_declarator(node)
            .and_then(|d| d.child_by_field_name("name"))
            .and_then(text),
        "type_declaration" => {
            let mut cursor = node.walk();
            let spec = node
                .named_children(&mut cursor)
                .find(|c| matches!(c.kind(), "type_spec" | "type_alias"));
            spec.and_then(|s| s.child_by_field_name("name"))
                .and_then(text)
        }
        _ => node.child_by_field_name("name").and_then(text),
    }
}

/// `HashSet<T, S>` → `HashSet`: names leave generic arguments out.
fn base_type(node: Node) -> Option<Node> {
    match node.kind() {
        "generic_type" => node.child_by_field_name("type"),
        _ => Some(node),
    }
}

fn first_declarator(node: Node) -> Option<Node> {
    let mut cursor = node.walk();
    let found = node
        .named_children(&mut cursor)
        .find(|c| c.kind() == "variable_declarator");
    found
}
