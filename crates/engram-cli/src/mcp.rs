//! `engram mcp`: engram's tools (`search_memory`, `record_memory`, `analyze_impact`) and
//! its prompt (`session_context`, the session start's packed context) served over the Model
//! Context Protocol on stdin/stdout, so an MCP client (Claude Code, Cursor, an agent SDK)
//! can use the project's memory directly.
//!
//! rmcp runs the protocol on tasks that must be `Send`; engram is single-threaded by
//! design (it runs in wasm), so the engram stays on the command's own task and the
//! protocol side hands it each tool call and prompt request through a channel.

use engram::agent_loop::{prompts, tools};
use engram::{Database, Engram, EngramError, PromptOutput, ToolOutput};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, GetPromptRequestParams,
    GetPromptResponse, GetPromptResult, Implementation, ListPromptsResult, ListToolsResult,
    PaginatedRequestParams, Prompt, PromptArgument, PromptMessage, Role, ServerCapabilities,
    ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use tokio::sync::{mpsc, oneshot};

use crate::CliError;

/// One request on its way to the engram, with where to send the answer.
enum Request {
    /// A tool call.
    Tool {
        name: String,
        arguments: String,
        reply: oneshot::Sender<Result<ToolOutput, EngramError>>,
    },
    /// A prompt.
    Prompt {
        name: String,
        arguments: String,
        reply: oneshot::Sender<Result<PromptOutput, EngramError>>,
    },
}

/// The protocol side: lists the tools and prompts and forwards requests.
struct McpServer {
    calls: mpsc::UnboundedSender<Request>,
}

impl McpServer {
    /// Hands `request` to the engram and waits for its answer.
    async fn ask<T>(
        &self,
        request: impl FnOnce(oneshot::Sender<T>) -> Request,
    ) -> Result<T, ErrorData> {
        let (reply, answer) = oneshot::channel();
        if self.calls.send(request(reply)).is_err() {
            return Err(ErrorData::internal_error("engram has shut down", None));
        }
        answer
            .await
            .map_err(|_| ErrorData::internal_error("engram dropped the request", None))
    }
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_prompts()
                .build(),
        )
        .with_server_info(Implementation::new("engram", env!("CARGO_PKG_VERSION")))
        .with_instructions(tools::SERVER_INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools = tools::definitions()
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
        let name = request.name.into_owned();
        let answer = self
            .ask(|reply| Request::Tool {
                name,
                arguments: arguments.to_string(),
                reply,
            })
            .await?;
        let result = match answer {
            Ok(output) => CallToolResult::success(vec![ContentBlock::text(output.text)]),
            // The model should see why its call failed (a bad argument, an unreachable
            // database), so failures are tool results marked as errors, not protocol errors.
            Err(error) => {
                CallToolResult::error(vec![ContentBlock::text(format!("engram: {error}"))])
            }
        };
        Ok(result.into())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let prompts = prompts::definitions()
            .into_iter()
            .map(|p| {
                let arguments = p
                    .arguments
                    .iter()
                    .map(|a| {
                        PromptArgument::new(a.name)
                            .with_description(a.description)
                            .with_required(a.required)
                    })
                    .collect();
                Prompt::new(p.name, Some(p.description), Some(arguments)).with_title(p.title)
            })
            .collect();
        Ok(ListPromptsResult::with_all_items(prompts))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let arguments = serde_json::Value::Object(request.arguments.unwrap_or_default());
        let name = request.name;
        let answer = self
            .ask(|reply| Request::Prompt {
                name,
                arguments: arguments.to_string(),
                reply,
            })
            .await?;
        match answer {
            Ok(output) => {
                let message = PromptMessage::new_text(Role::User, output.text);
                let mut result = GetPromptResult::new(vec![message]);
                result.description = Some(output.description);
                Ok(result.into())
            }
            // A person picked the prompt, not a model: a bad argument is the request's
            // fault, answered as invalid params naming it.
            Err(EngramError::Invalid(error)) => {
                Err(ErrorData::invalid_params(format!("engram: {error}"), None))
            }
            Err(error) => Err(ErrorData::internal_error(format!("engram: {error}"), None)),
        }
    }
}

/// Serves `engram` over MCP on stdio until the client disconnects.
pub async fn serve<D: Database>(engram: &Engram<D>) -> Result<(), CliError> {
    let (calls, mut incoming) = mpsc::unbounded_channel::<Request>();
    let running = McpServer { calls }
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| CliError::Usage(format!("MCP session did not start: {e}")))?;
    let finished = running.waiting();
    tokio::pin!(finished);
    loop {
        tokio::select! {
            _ = &mut finished => return Ok(()),
            // The client may have given up on a request; nothing to do then.
            Some(request) = incoming.recv() => match request {
                Request::Tool { name, arguments, reply } => {
                    let _ = reply.send(engram.call_tool(&name, &arguments).await);
                }
                Request::Prompt { name, arguments, reply } => {
                    let _ = reply.send(engram.get_prompt(&name, &arguments).await);
                }
            },
        }
    }
}
