//! The tools an agent calls — `search_memory`, `record_memory`, `analyze_impact` — as
//! JSON-schema definitions an agent SDK takes as they are, and the parsing of the calls the
//! model makes with them.
//!
//! The schemas and the parsers describe the same arguments: every property a schema lists
//! is accepted, anything else is refused by name (`additionalProperties: false`), and the
//! tests check the two against each other.

use engram_core::validate::from_json;
use engram_core::{MemoryType, ValidationError};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// The search tool's name.
pub const SEARCH_MEMORY: &str = "search_memory";
/// The record tool's name.
pub const RECORD_MEMORY: &str = "record_memory";
/// The impact tool's name.
pub const ANALYZE_IMPACT: &str = "analyze_impact";
/// Results `search_memory` returns when the model does not say.
pub const DEFAULT_TOOL_RESULTS: u32 = 5;
/// Most results `search_memory` returns: more would crowd the model's context.
pub const MAX_TOOL_RESULTS: u32 = 10;
/// Deepest `analyze_impact` goes (the closure table stores three hops).
pub const MAX_IMPACT_DEPTH: u32 = 3;

/// What a server offering the tools tells the model about engram when a client connects
/// (MCP's `instructions`).
pub const SERVER_INSTRUCTIONS: &str = "engram is this project's long-term memory. Call \
search_memory before changing unfamiliar code or when an error looks familiar; call \
record_memory when you learn something a later session should know (a trap, an error and its \
fix, an approach that failed, a decision); call analyze_impact before changing a widely used \
file or function.";

/// One tool, described for a model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolDefinition {
    /// The name the model calls it by.
    pub name: &'static str,
    /// When and why to call it, written for the model.
    pub description: &'static str,
    /// Its arguments as a JSON schema (an object).
    pub input_schema: Value,
}

/// The shape an SDK expects its tool list in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolFormat {
    /// `{name, description, input_schema}` (Anthropic's Messages API, Claude Agent SDK).
    #[default]
    Anthropic,
    /// `{type: "function", function: {name, description, parameters}}` (OpenAI's Chat
    /// Completions and most OpenAI-compatible servers).
    #[serde(rename = "openai")]
    OpenAi,
    /// `{name, description, inputSchema}` (a Model Context Protocol `tools/list` entry).
    Mcp,
}

impl ToolFormat {
    /// Every format.
    pub const ALL: [ToolFormat; 3] = [ToolFormat::Anthropic, ToolFormat::OpenAi, ToolFormat::Mcp];

    /// The format's name: `anthropic`, `openai` or `mcp`.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolFormat::Anthropic => "anthropic",
            ToolFormat::OpenAi => "openai",
            ToolFormat::Mcp => "mcp",
        }
    }

    /// Parses a format name; `None` for anything but the three.
    pub fn parse(name: &str) -> Option<ToolFormat> {
        ToolFormat::ALL.into_iter().find(|f| f.as_str() == name)
    }
}

/// engram's tools, in the order an SDK should list them.
pub fn definitions() -> Vec<ToolDefinition> {
    let types: Vec<&str> = MemoryType::ALL.iter().map(|t| t.as_str()).collect();
    vec![
        ToolDefinition {
            name: SEARCH_MEMORY,
            description: "Search the project's long-term memory: gotchas, decisions, error \
fixes, dead ends, recipes and patterns learned in earlier sessions. Call it before changing \
unfamiliar code, when an error looks familiar, or when you wonder how something was done \
before. Returns the best matches with their ids, types and files.",
            input_schema: json!({
                "type": "object",
                "properties": {
                    "query": {
                        "type": "string",
                        "description": "What you want to know, in words or identifiers (an error message, a function name, a question)."
                    },
                    "types": {
                        "type": "array",
                        "items": { "type": "string", "enum": types },
                        "description": "Only these kinds of memory (all when absent)."
                    },
                    "files": {
                        "type": "array",
                        "items": { "type": "string" },
                        "description": "Only memories about these files (project-relative paths)."
                    },
                    "limit": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": MAX_TOOL_RESULTS,
                        "description": format!("How many results at most (default {DEFAULT_TOOL_RESULTS}).")
                    }
                },
                "required": ["query"],
                "additionalProperties": false
            }),
        },
        ToolDefinition {
            name: RECORD_MEMORY,
            description: "Record something a future session should know: a trap you hit \
(gotcha), an error and its fix (error_pattern), an approach that failed and why (dead_end), \
a decision and its reason, a user preference, or the steps of a recurring task \
(workflow_recipe). One fact per call, in a sentence or two that stand on their own; never \
secrets.",
            input_schema: json!({
                "type": "object",
                "properties": {
                    "type": {
                        "type": "string",
                        "enum": types,
                        "description": "The kind of knowledge."
                    },
                    "content": {
                        "type": "string",
                        "description": "The knowledge itself, self-contained."
                    },
                    "files": {
                        "type": "array",
                        "items": { "type": "string" },
                        "description": "Project-relative paths of the files it is about."
                    },
                    "modules": {
                        "type": "array",
                        "items": { "type": "string" },
                        "description": "Modules or packages it is about."
                    },
                    "tags": {
                        "type": "array",
                        "items": { "type": "string" },
                        "description": "Keywords to find it by."
                    },
                    "confidence": {
                        "type": "number",
                        "minimum": 0,
                        "maximum": 1,
                        "description": "How sure you are (default 0.8)."
                    },
                    "replaces": {
                        "type": "string",
                        "description": "The id of a memory you were shown that this one corrects or updates (it was wrong or is outdated): that one is retired."
                    }
                },
                "required": ["type", "content"],
                "additionalProperties": false
            }),
        },
        ToolDefinition {
            name: ANALYZE_IMPACT,
            description: "Before changing a file, function or class, list what depends on \
it (callers, importers, subclasses, up to three hops) grouped by file, with the memories \
attached to any of them.",
            input_schema: json!({
                "type": "object",
                "properties": {
                    "target": {
                        "type": "string",
                        "description": "A project-relative file path, a qualified name (Store.get) or a node id (src/auth.ts#function:verifyJwt)."
                    },
                    "max_depth": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": MAX_IMPACT_DEPTH,
                        "description": format!("How many hops to follow (default {MAX_IMPACT_DEPTH}).")
                    }
                },
                "required": ["target"],
                "additionalProperties": false
            }),
        },
    ]
}

/// engram's tools as a JSON array in `format`.
pub fn render(format: ToolFormat) -> Value {
    let tools = definitions().into_iter().map(|t| match format {
        ToolFormat::Anthropic => json!({
            "name": t.name, "description": t.description, "input_schema": t.input_schema
        }),
        ToolFormat::OpenAi => json!({
            "type": "function",
            "function": { "name": t.name, "description": t.description, "parameters": t.input_schema }
        }),
        ToolFormat::Mcp => json!({
            "name": t.name, "description": t.description, "inputSchema": t.input_schema
        }),
    });
    Value::Array(tools.collect())
}

/// `search_memory`'s arguments.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SearchMemoryArgs {
    /// What to look for.
    pub query: String,
    /// Only these types.
    #[serde(default)]
    pub types: Vec<MemoryType>,
    /// Only memories about these files.
    #[serde(default)]
    pub files: Vec<String>,
    /// How many results at most.
    #[serde(default)]
    pub limit: Option<u32>,
}

/// `record_memory`'s arguments.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordMemoryArgs {
    /// The kind of knowledge.
    #[serde(rename = "type")]
    pub memory_type: MemoryType,
    /// The knowledge.
    pub content: String,
    /// Files it is about.
    #[serde(default)]
    pub files: Vec<String>,
    /// Modules it is about.
    #[serde(default)]
    pub modules: Vec<String>,
    /// Keywords.
    #[serde(default)]
    pub tags: Vec<String>,
    /// How sure the agent is.
    #[serde(default)]
    pub confidence: Option<f64>,
    /// The id of a memory this one corrects or updates: that one is retired.
    #[serde(default)]
    pub replaces: Option<String>,
}

/// `analyze_impact`'s arguments.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnalyzeImpactArgs {
    /// The file, name or node.
    pub target: String,
    /// Hops to follow.
    #[serde(default)]
    pub max_depth: Option<u32>,
}

/// A call the model made to one of engram's tools, parsed and checked.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolCall {
    /// `search_memory`.
    SearchMemory(SearchMemoryArgs),
    /// `record_memory`.
    RecordMemory(RecordMemoryArgs),
    /// `analyze_impact`.
    AnalyzeImpact(AnalyzeImpactArgs),
}

impl ToolCall {
    /// Parses the model's call of tool `name` with `arguments` (the JSON object it wrote).
    /// Errors name the offending argument (`arguments.limit`); an unknown tool is an error
    /// on `name` that lists engram's tools.
    pub fn parse(name: &str, arguments: &str) -> Result<ToolCall, ValidationError> {
        let within = |e: ValidationError| prefixed("arguments", e);
        let call = match name {
            SEARCH_MEMORY => ToolCall::SearchMemory(from_json(arguments).map_err(within)?),
            RECORD_MEMORY => ToolCall::RecordMemory(from_json(arguments).map_err(within)?),
            ANALYZE_IMPACT => ToolCall::AnalyzeImpact(from_json(arguments).map_err(within)?),
            other => {
                return Err(ValidationError::field(
                    "name",
                    format!(
                        "unknown tool {other:?}; engram's tools are \
{SEARCH_MEMORY}, {RECORD_MEMORY} and {ANALYZE_IMPACT}"
                    ),
                ))
            }
        };
        call.check().map_err(within)?;
        Ok(call)
    }

    /// The tool's name.
    pub fn name(&self) -> &'static str {
        match self {
            ToolCall::SearchMemory(_) => SEARCH_MEMORY,
            ToolCall::RecordMemory(_) => RECORD_MEMORY,
            ToolCall::AnalyzeImpact(_) => ANALYZE_IMPACT,
        }
    }

    /// The bounds the schemas state that serde does not check.
    fn check(&self) -> Result<(), ValidationError> {
        let blank = |field: &str, text: &str| {
            if text.trim().is_empty() {
                Err(ValidationError::field(field, "must not be empty"))
            } else {
                Ok(())
            }
        };
        match self {
            ToolCall::SearchMemory(args) => {
                blank("query", &args.query)?;
                match args.limit {
                    Some(n) if !(1..=MAX_TOOL_RESULTS).contains(&n) => Err(ValidationError::field(
                        "limit",
                        format!("must be from 1 to {MAX_TOOL_RESULTS}, got {n}"),
                    )),
                    _ => Ok(()),
                }
            }
            // The memory's own rules (length, confidence, paths) are `remember`'s.
            ToolCall::RecordMemory(args) => blank("content", &args.content),
            ToolCall::AnalyzeImpact(args) => {
                blank("target", &args.target)?;
                match args.max_depth {
                    Some(n) if !(1..=MAX_IMPACT_DEPTH).contains(&n) => Err(ValidationError::field(
                        "max_depth",
                        format!("must be from 1 to {MAX_IMPACT_DEPTH}, got {n}"),
                    )),
                    _ => Ok(()),
                }
            }
        }
    }
}

/// `error` with each field moved under `parent` (`limit` → `arguments.limit`).
fn prefixed(parent: &str, mut error: ValidationError) -> ValidationError {
    for v in &mut error.violations {
        // `(root)` is the whole object, `?` a syntax error with no field to name.
        v.field = if v.field == "(root)" || v.field == "?" {
            parent.to_owned()
        } else {
            format!("{parent}.{}", v.field)
        };
    }
    error
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A value the schema `property` accepts.
    fn example(property: &Value) -> Value {
        match property["type"].as_str() {
            Some("string") => match property["enum"].as_array() {
                Some(values) => values[0].clone(),
                None => json!("src/db/migrate.rs"),
            },
            Some("integer") => property["maximum"].clone(),
            Some("number") => json!(0.5),
            Some("array") => json!([example(&property["items"])]),
            other => panic!("no example for schema type {other:?}"),
        }
    }

    #[test]
    fn every_property_a_schema_lists_is_accepted() {
        for tool in definitions() {
            let properties = tool.input_schema["properties"].as_object().unwrap();
            let all: serde_json::Map<String, Value> = properties
                .iter()
                .map(|(name, schema)| (name.clone(), example(schema)))
                .collect();
            let parsed = ToolCall::parse(tool.name, &Value::Object(all).to_string());
            assert_eq!(parsed.map(|c| c.name()), Ok(tool.name));
        }
    }

    #[test]
    fn a_missing_required_argument_is_named_by_itself() {
        for tool in definitions() {
            let properties = tool.input_schema["properties"].as_object().unwrap();
            for required in tool.input_schema["required"].as_array().unwrap() {
                let required = required.as_str().unwrap();
                let without: serde_json::Map<String, Value> = properties
                    .iter()
                    .filter(|(name, _)| *name != required)
                    .map(|(name, schema)| (name.clone(), example(schema)))
                    .collect();
                let err = ToolCall::parse(tool.name, &Value::Object(without).to_string())
                    .expect_err(required);
                assert_eq!(
                    err.first_field(),
                    format!("arguments.{required}"),
                    "{}",
                    tool.name
                );
                assert!(err.to_string().contains(required), "{err}");
            }
        }
    }

    #[test]
    fn unknown_arguments_and_out_of_range_values_are_refused_by_name() {
        let err = ToolCall::parse(SEARCH_MEMORY, r#"{"query":"x","sort":"recency"}"#).unwrap_err();
        assert!(err.to_string().contains("sort"), "{err}");
        let err = ToolCall::parse(SEARCH_MEMORY, r#"{"query":"x","limit":11}"#).unwrap_err();
        assert_eq!(err.first_field(), "arguments.limit");
        let err = ToolCall::parse(SEARCH_MEMORY, r#"{"query":"  "}"#).unwrap_err();
        assert_eq!(err.first_field(), "arguments.query");
        let err =
            ToolCall::parse(ANALYZE_IMPACT, r#"{"target":"a.rs","max_depth":0}"#).unwrap_err();
        assert_eq!(err.first_field(), "arguments.max_depth");
        let err = ToolCall::parse(RECORD_MEMORY, r#"{"type":"rumour","content":"x"}"#).unwrap_err();
        assert_eq!(err.first_field(), "arguments.type");
        for malformed in ["not json", "{not json", r#"{"type":"gotcha","#] {
            let err = ToolCall::parse(RECORD_MEMORY, malformed).unwrap_err();
            assert_eq!(err.first_field(), "arguments", "{malformed}");
        }
        let err = ToolCall::parse("delete_memory", "{}").unwrap_err();
        assert_eq!(err.first_field(), "name");
        assert!(err.to_string().contains(SEARCH_MEMORY), "{err}");
    }

    #[test]
    fn each_format_carries_every_tool_with_its_schema() {
        for format in ToolFormat::ALL {
            assert_eq!(ToolFormat::parse(format.as_str()), Some(format));
            let rendered = render(format);
            let tools = rendered.as_array().unwrap();
            assert_eq!(tools.len(), 3);
            for (tool, definition) in tools.iter().zip(definitions()) {
                let (name, schema) = match format {
                    ToolFormat::Anthropic => (&tool["name"], &tool["input_schema"]),
                    ToolFormat::OpenAi => {
                        assert_eq!(tool["type"], "function");
                        (&tool["function"]["name"], &tool["function"]["parameters"])
                    }
                    ToolFormat::Mcp => (&tool["name"], &tool["inputSchema"]),
                };
                assert_eq!(name, definition.name);
                assert_eq!(schema, &definition.input_schema);
            }
        }
        assert_eq!(ToolFormat::parse("gemini"), None);
    }

    #[test]
    fn the_type_enums_list_every_memory_type() {
        let tools = definitions();
        let listed = tools[1].input_schema["properties"]["type"]["enum"]
            .as_array()
            .unwrap()
            .len();
        assert_eq!(listed, MemoryType::ALL.len());
    }
}
