//! `engram mcp`: engram's tools (`search_memory`, `record_memory`, `analyze_impact`) and
//! its prompt (`session_context`, the session start's packed context) served over the Model
//! Context Protocol on stdin/stdout, so an MCP client (Claude Code, Cursor, an agent SDK)
//! can use the project's memory directly.
//!
//! The stdio transport is one JSON-RPC message per line each way. Each line is answered by
//! `Engram::answer_mcp`, the same request handling the Worker serves over HTTP, so a tool
//! added once is offered by both; a line that is not a valid message gets a JSON-RPC error
//! rather than being dropped.

use engram::{Database, Engram};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::CliError;

/// Serves `engram` over MCP on stdio until the client closes stdin.
pub async fn serve<D: Database>(engram: &Engram<D>) -> Result<(), CliError> {
    let mut stdin = BufReader::new(tokio::io::stdin());
    let mut stdout = tokio::io::stdout();
    let io_error = |e: std::io::Error| CliError::Usage(format!("MCP over stdio: {e}"));
    let mut bytes = Vec::new();
    loop {
        bytes.clear();
        if stdin
            .read_until(b'\n', &mut bytes)
            .await
            .map_err(io_error)?
            == 0
        {
            break;
        }
        // A line that is not UTF-8 still gets its JSON-RPC parse error, not an exit.
        let line = String::from_utf8_lossy(&bytes);
        if line.trim().is_empty() {
            continue;
        }
        let Some(mut reply) = engram.answer_mcp(line.trim_end()).await else {
            continue;
        };
        reply.push('\n');
        if let Err(e) = stdout.write_all(reply.as_bytes()).await {
            // The client went away: nothing left to answer.
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                return Ok(());
            }
            return Err(io_error(e));
        }
        stdout.flush().await.map_err(io_error)?;
    }
    Ok(())
}
