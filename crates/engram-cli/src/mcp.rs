//! `engram mcp`: engram's tools (`search_memory`, `record_memory`, `analyze_impact`)
//! served over the Model Context Protocol on stdin/stdout, so an MCP client (Claude Code,
//! Cursor, an agent SDK) can use the project's memory directly.
//!
//! rmcp runs the protocol on tasks that must be `Send`; engram is single-threaded by
//! design (it runs in wasm), so the engram stays on the command's own task and the
//! protocol side hands it each tool call through a channel.

use engram::agent_loop::tools::definitions;
use engram::{Database, Engram, EngramError, ToolOutput};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use tokio::sync::{mpsc, oneshot};

use crate::CliError;

/// What the server tells the model about engram when a client connects.
const INSTRUCTIONS: &str = "engram is this project's long-term memory. Call search_memory \
before changing unfamiliar code or when an error looks familiar; call record_memory when you \
learn something a later session should know (a trap, an error and its fix, an approach that \
failed, a decision); call analyze_impact before changing a widely used file or function.";

/// One tool call on its way to the engram, with where to send the answer.
struct ToolRequest {
    name: String,
    arguments: String,
    reply: oneshot::Sender<Result<ToolOutput, EngramError>>,
}

/// The protocol side: lists the tools and forwards calls.
struct McpServer {
    calls: mpsc::UnboundedSender<ToolRequest>,
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("engram", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools = definitions()
            .into_iter()
            .map(|t| {
                let schema = match t.input_schema {
                    serde_json::Value::Object(map) => map,
                    _ => serde_json::Map::new(),
                };
                Tool::new(t.name, t.description, schema)
            })
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = serde_json::Value::Object(request.arguments.unwrap_or_default());
        let (reply, answer) = oneshot::channel();
        let call = ToolRequest {
            name: request.name.into_owned(),
            arguments: arguments.to_string(),
            reply,
        };
        if self.calls.send(call).is_err() {
            return Err(ErrorData::internal_error("engram has shut down", None));
        }
        let result = match answer.await {
            Ok(Ok(output)) => CallToolResult::success(vec![ContentBlock::text(output.text)]),
            // The model should see why its call failed (a bad argument, an unreachable
            // database), so failures are tool results marked as errors, not protocol errors.
            Ok(Err(error)) => {
                CallToolResult::error(vec![ContentBlock::text(format!("engram: {error}"))])
            }
            Err(_) => return Err(ErrorData::internal_error("engram dropped the call", None)),
        };
        Ok(result.into())
    }
}

/// Serves `engram` over MCP on stdio until the client disconnects.
pub async fn serve<D: Database>(engram: &Engram<D>) -> Result<(), CliError> {
    let (calls, mut incoming) = mpsc::unbounded_channel::<ToolRequest>();
    let running = McpServer { calls }
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| CliError::Usage(format!("MCP session did not start: {e}")))?;
    let finished = running.waiting();
    tokio::pin!(finished);
    loop {
        tokio::select! {
            _ = &mut finished => return Ok(()),
            Some(call) = incoming.recv() => {
                let answer = engram.call_tool(&call.name, &call.arguments).await;
                // The client may have given up on the call; nothing to do then.
                let _ = call.reply.send(answer);
            }
        }
    }
}
