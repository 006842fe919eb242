//! In-process MCP tools: an `add` tool written with byre's light `Tool` API and a `reverse` tool
//! on an rmcp `#[tool_router]` server, both served to the CLI over the control channel.
//!
//! It runs offline: byre-testkit's fake Messages API plays the model, scripted to call both
//! tools. `cargo run -p byre-session --example mcp_tools` (the CLI comes from `BYRE_CLAUDE_BIN`,
//! or is installed into `.cli/` on first use). With a real account, start from `Options::new()`
//! instead of the fake model's options and ask for the same.

use byre_session::proto::{CliMessage, ContentBlock, McpStatusRequest, MessageContent};
use byre_session::rmcp::handler::server::wrapper::Parameters;
use byre_session::rmcp::model::{Implementation, ServerCapabilities, ServerConfig};
use byre_session::rmcp::{self, tool, tool_handler, tool_router};
use byre_session::schemars::{self, JsonSchema};
use byre_session::{Claude, Event, McpServer, StreamExt, Tool, ToolOutput};
use byre_testkit::{ClaudeEnv, FakeModel, Match, Reply, Rule, Script};
use serde::Deserialize;
use serde_json::json;

/// The input of `add`; its JSON schema is derived from this type.
#[derive(Deserialize, JsonSchema)]
struct Add {
    /// The first number.
    a: i64,
    /// The second number.
    b: i64,
}

/// The input of `reverse`.
#[derive(Deserialize, JsonSchema)]
struct Reverse {
    /// The text to reverse.
    text: String,
}

/// An rmcp server with one tool, written with rmcp's own macros.
#[derive(Clone)]
struct TextTools;

#[tool_router]
impl TextTools {
    #[tool(description = "Reverse a text, character by character.")]
    async fn reverse(&self, Parameters(args): Parameters<Reverse>) -> String {
        args.text.chars().rev().collect()
    }
}

#[tool_handler]
impl rmcp::ServerHandler for TextTools {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("text", "1.0.0"))
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The light API: a name, a description, a typed input and an async handler. An `Err` is a
    // tool result with `isError: true` that the model reads.
    let add = Tool::new("add", "Add two integers.", |args: Add| async move {
        match args.a.checked_add(args.b) {
            Some(sum) => Ok(ToolOutput::text(sum.to_string())),
            None => Err("the sum does not fit in 64 bits".into()),
        }
    })?;
    let (_model, env) = fake_model().await?;
    let options = env
        .options()?
        .serve_mcp(McpServer::tools("calc", [add])?)
        .serve_mcp(McpServer::rmcp("text", TextTools)?);

    let (claude, mut events) = Claude::start(options).await?;
    claude.send("Add 2 and 40, then reverse the word 'byre'.")?;
    while let Some(event) = events.next().await {
        match event {
            Event::Message(CliMessage::Assistant(a)) => {
                for block in &a.message.content {
                    match block {
                        ContentBlock::ToolUse(t) => {
                            println!("[model calls {} {}]", t.name, t.input)
                        }
                        ContentBlock::Text(t) => println!("{}", t.text),
                        _ => {}
                    }
                }
            }
            Event::Message(CliMessage::User(u)) => {
                if let MessageContent::Blocks(blocks) = &u.message.content {
                    for block in blocks {
                        if let ContentBlock::ToolResult(r) = block {
                            let text = r.content.as_ref().map(MessageContent::text);
                            println!("[tool answers {:?}]", text.unwrap_or_default());
                        }
                    }
                }
            }
            Event::Message(CliMessage::Result(_)) => break,
            _ => {}
        }
    }
    let status = claude.request(McpStatusRequest::default()).await?;
    for server in status.mcp_servers.unwrap_or_default() {
        let tools: Vec<_> = server
            .tools
            .iter()
            .flatten()
            .map(|t| t.name.clone())
            .collect();
        println!(
            "[server {}: {:?}, tools {:?}]",
            server.name, server.status, tools
        );
    }
    claude.close().await?;
    Ok(())
}

/// A fake model scripted to call both tools, and a scratch environment for the CLI.
async fn fake_model() -> Result<(FakeModel, ClaudeEnv), Box<dyn std::error::Error>> {
    let script = Script::new()
        .rule(
            Rule::when(Match::tool_result_contains("eryb"))
                .reply(Reply::text("2 + 40 = 42, and 'byre' reversed is 'eryb'.")),
        )
        .rule(
            Rule::when(Match::tool_result_contains("42")).reply(Reply::tool_use(
                "mcp__text__reverse",
                json!({"text": "byre"}),
            )),
        )
        .rule(Rule::any().reply(Reply::tool_use("mcp__calc__add", json!({"a": 2, "b": 40}))));
    let model = FakeModel::start(script).await?;
    let env = ClaudeEnv::new(&model.base_url())?;
    Ok((model, env))
}
