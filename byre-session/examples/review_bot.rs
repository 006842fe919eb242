//! A small CI review bot: a system prompt, allowed tools and a turn limit; one in-process MCP
//! tool; a PreToolUse hook that denies `rm` and fails closed; a permission handler that is
//! asked; the answer streamed; a structured verdict; a second turn interrupted once it has
//! said enough; the cost and session id.
//!
//! It runs offline: byre-testkit's fake Messages API plays the model as `review_bot.json`
//! (beside this file) says. `cargo run -p byre-session --example
//! review_bot`. With a real account, start from `Options::new()` instead of `env.options()?`
//! and drop the fake model.

use byre_session::proto::{HookEvent, HookOutput};
use byre_session::schemars::{self, JsonSchema};
use byre_session::{Claude, Hook, McpServer, Tool, TurnError};
use byre_testkit::{ClaudeEnv, FakeModel, Script};
use serde::Deserialize;

/// The verdict the bot asks for, as structured output.
#[derive(Deserialize, JsonSchema)]
struct Verdict {
    approve: bool,
    summary: String,
}

/// The MCP tool's input (none).
#[derive(Deserialize, JsonSchema)]
struct NoInput {}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let script = Script::from_json(include_str!("review_bot.json"))?;
    let model = FakeModel::start(script).await?;
    let env = ClaudeEnv::new(&model.base_url())?;
    std::fs::write(env.cwd().join("diff.txt"), "- let n = 1;\n+ let n = 2;\n")?;
    let stats = Tool::new(
        "diff_stats",
        "Count the changed lines.",
        |_: NoInput| async { Ok("1 line removed, 1 added") },
    )?;
    let guard = Hook::new(HookEvent::PRE_TOOL_USE)
        .matcher("Bash")
        .fail_closed();
    let options = env
        .options()?
        .system_prompt("You review code changes. Never delete files.")
        .allowed_tools(["Read", "mcp__repo__diff_stats"])
        .max_turns(8)
        .output_schema::<Verdict>()
        .serve_mcp(McpServer::tools("repo", [stats])?)
        .hook(guard, |input, _| async move {
            Ok(match input.bash_command() {
                Some(c) if c.contains("rm ") => HookOutput::deny_tool("no deleting in a review"),
                _ => HookOutput::none(),
            })
        })
        .can_use_tool(|request| async move {
            eprintln!("[permission asked: {}]", request.tool_name);
            Ok(request.allow())
        });
    let (claude, mut events) = Claude::start(options).await?;

    claude.send("Review the change in diff.txt")?;
    let review = events.turn().on_text(|text| print!("{text}")).await?;
    let Verdict { approve, summary } = review.structured()?;
    println!("\nverdict: approve={approve} ({summary})");

    claude.send("Now explain every line in detail")?;
    // Interrupted once the first sentence has streamed.
    let second = events
        .turn()
        .interrupt_when(|text| text.contains("sets n."));
    match second.on_text(|text| print!("{text}")).await {
        Err(TurnError::Interrupted { .. }) => println!("\n[interrupted]"),
        other => println!("\n[not interrupted: {other:?}]"),
    }
    let (cost, session) = (review.cost_usd().unwrap_or(0.0), review.session_id());
    println!("cost ${cost:.4} · session {}", session.unwrap_or("?"));
    claude.close().await?;
    Ok(())
}
