//! engram's tools, run: the model's call of `search_memory`, `record_memory` or
//! `analyze_impact` becomes a search, a stored memory or an impact report, with a short
//! text for the model and the structured answer for the host.

use engram_agent::inject::line;
use engram_agent::tools::{
    AnalyzeImpactArgs, RecordMemoryArgs, SearchMemoryArgs, ToolCall, DEFAULT_TOOL_RESULTS,
};
use engram_core::{MemorySource, NewMemory};
use engram_store::Database;
use serde::Serialize;
use serde_json::json;

use crate::retrieve::query::SearchQuery;
use crate::{Engram, EngramError};

/// Attached memories an impact answer lists for the model; the report has them all.
const MAX_IMPACT_MEMORIES: usize = 10;

/// `n` and `noun`, plural unless `n` is 1.
fn counted(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// What a tool call returned.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolOutput {
    /// The tool that ran.
    pub tool: &'static str,
    /// The answer for the model, as the tool result's text.
    pub text: String,
    /// The memories the answer shows (a search's hits, the impact's attached memories), to
    /// add to the session's shown set.
    pub memory_ids: Vec<String>,
    /// The structured answer: the search response, `{id, redacted, …}` for a recorded
    /// memory, or the impact report.
    pub data: serde_json::Value,
}

impl<D: Database> Engram<D> {
    /// Runs the model's call of engram's tool `name` with `arguments` (the JSON object the
    /// model wrote; see [`engram_agent::tools::definitions`] for the schemas). A call the
    /// tool cannot take is a validation error naming the argument, so the host can hand
    /// the message back to the model.
    pub async fn call_tool(&self, name: &str, arguments: &str) -> Result<ToolOutput, EngramError> {
        match ToolCall::parse(name, arguments)? {
            ToolCall::SearchMemory(args) => self.search_memory_tool(args).await,
            ToolCall::RecordMemory(args) => self.record_memory_tool(args).await,
            ToolCall::AnalyzeImpact(args) => self.analyze_impact_tool(args).await,
        }
    }

    async fn search_memory_tool(&self, args: SearchMemoryArgs) -> Result<ToolOutput, EngramError> {
        let mut query = SearchQuery::new(args.query.as_str());
        query.limit = args.limit.unwrap_or(DEFAULT_TOOL_RESULTS);
        query.types = args.types;
        query.files = args.files;
        let found = self.search(&query).await?;
        let mut text = if found.hits.is_empty() {
            format!("No memories match \"{}\".\n", args.query.trim())
        } else {
            format!(
                "{} memor{} for \"{}\":\n",
                found.hits.len(),
                if found.hits.len() == 1 { "y" } else { "ies" },
                args.query.trim()
            )
        };
        for hit in &found.hits {
            text.push_str(&line(&hit.memory));
            if hit.memory.flags.needs_review {
                text.push_str(&format!(
                    "  (needs review: {})\n",
                    hit.memory.review_reason()
                ));
            }
        }
        Ok(ToolOutput {
            tool: engram_agent::tools::SEARCH_MEMORY,
            memory_ids: found.hits.iter().map(|h| h.memory.id.clone()).collect(),
            text,
            data: serde_json::to_value(&found).unwrap_or_default(),
        })
    }

    async fn record_memory_tool(&self, args: RecordMemoryArgs) -> Result<ToolOutput, EngramError> {
        let mut memory = NewMemory::new(args.memory_type, args.content);
        memory.related_files = args.files;
        memory.related_modules = args.modules;
        memory.tags = args.tags;
        memory.source = MemorySource::AgentExplicit;
        if let Some(confidence) = args.confidence {
            memory.confidence = confidence;
        }
        // The memory it replaces must be live and this project's before anything is stored.
        let replaced = match args.replaces.as_deref() {
            Some(id) => Some(self.live(id).await?),
            None => None,
        };
        let stored = self.remember(memory).await?;
        let mut text = format!("Recorded {} as memory #{}.", args.memory_type, stored.id);
        if let Some(old) = replaced {
            text.push_str(&self.replace_declared(&old, &stored).await?);
        }
        if !stored.redacted.is_empty() {
            text.push_str(&format!(
                " Secrets were redacted before storing ({}).",
                stored.redacted.join(", ")
            ));
        }
        text.push('\n');
        Ok(ToolOutput {
            tool: engram_agent::tools::RECORD_MEMORY,
            text,
            memory_ids: Vec::new(),
            data: json!({
                "id": stored.id,
                "redacted": stored.redacted,
                "embeddingModel": stored.embedding_model,
                "embeddingError": stored.embedding_error,
            }),
        })
    }

    /// The agent said `stored` replaces `old`: `old` is retired (unless a person's word
    /// or already replaced by the write itself); the sentence saying what happened.
    async fn replace_declared(
        &self,
        old: &engram_core::Memory,
        stored: &crate::Remembered,
    ) -> Result<String, EngramError> {
        if stored.id == old.id {
            return Ok(format!(
                " It says what memory #{} said and was merged into it (its wording kept where it says more).",
                old.id
            ));
        }
        if stored.superseded.as_deref() == Some(old.id.as_str()) {
            return Ok(format!(" It replaces memory #{}, now retired.", old.id));
        }
        Ok(
            if self
                .supersede_declared(old, &stored.id, MemorySource::AgentExplicit)
                .await?
            {
                format!(" It replaces memory #{}, now retired.", old.id)
            } else {
                format!(
                    " Memory #{} is a person's word and stays; yours is kept beside it for review.",
                    old.id
                )
            },
        )
    }

    async fn analyze_impact_tool(
        &self,
        args: AnalyzeImpactArgs,
    ) -> Result<ToolOutput, EngramError> {
        use engram_agent::tools::MAX_IMPACT_DEPTH;
        use std::fmt::Write;
        let report = self
            .analyze_impact(&args.target, args.max_depth.unwrap_or(MAX_IMPACT_DEPTH))
            .await?;
        let mut text = String::new();
        if report.targets.is_empty() {
            let _ = writeln!(
                text,
                "Nothing in the code graph is named {:?} (index the project's files first, or name a file path or a qualified name).",
                args.target
            );
        } else if report.impacted.is_empty() {
            let _ = writeln!(
                text,
                "Nothing in the code graph depends on {}.",
                args.target
            );
        } else {
            let _ = writeln!(
                text,
                "Changing {} impacts {} in {}:",
                args.target,
                counted(report.impacted.len(), "definition"),
                counted(report.files.len(), "file")
            );
            for file in &report.files {
                let names: Vec<&str> = report
                    .impacted
                    .iter()
                    .filter(|n| n.path == file.path)
                    .map(|n| n.label.as_str())
                    .take(6)
                    .collect();
                let _ = writeln!(
                    text,
                    "- {} ({} hop{}): {}",
                    file.path,
                    file.depth,
                    if file.depth == 1 { "" } else { "s" },
                    names.join(", ")
                );
            }
        }
        // Nearest first, then the ones to trust (reviewed, confident); content last, so
        // the order never depends on ids.
        let mut memories: Vec<_> = report.memories.iter().collect();
        memories.sort_by(|a, b| {
            (a.depth, a.needs_review)
                .cmp(&(b.depth, b.needs_review))
                .then_with(|| b.confidence.total_cmp(&a.confidence))
                .then_with(|| a.content.cmp(&b.content))
        });
        if !memories.is_empty() {
            let _ = writeln!(text, "Memories attached:");
            for m in memories.iter().take(MAX_IMPACT_MEMORIES) {
                let review = if m.needs_review {
                    " (needs review)"
                } else {
                    ""
                };
                let _ = writeln!(
                    text,
                    "- [{}]{review} {} [Memory #{}: {}]",
                    m.memory_type,
                    engram_core::quote::for_prompt(m.content.trim()),
                    m.id,
                    engram_core::quote::chip_text(&m.attached_to)
                );
            }
            if memories.len() > MAX_IMPACT_MEMORIES {
                let _ = writeln!(
                    text,
                    "- … and {} more (see the report)",
                    memories.len() - MAX_IMPACT_MEMORIES
                );
            }
        }
        Ok(ToolOutput {
            tool: engram_agent::tools::ANALYZE_IMPACT,
            memory_ids: memories
                .iter()
                .take(MAX_IMPACT_MEMORIES)
                .map(|m| m.id.clone())
                .collect(),
            text,
            data: serde_json::to_value(&report).unwrap_or_default(),
        })
    }
}
