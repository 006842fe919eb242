//! Hooks: block `rm` commands before they run, and log every tool the agent used.
//!
//! Run with an API key (`ANTHROPIC_API_KEY`) or a logged-in `claude`:
//! `cargo run -p byre-session --example hooks -- "clean up the temp files"`.

use byre_session::proto::{CliMessage, HookEvent, HookInput, HookOutput};
use byre_session::{Claude, Event, Hook, Options, StreamExt};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let prompt = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "List the files here.".into());
    let options = Options::new()
        .hook(
            Hook::new(HookEvent::PRE_TOOL_USE).matcher("Bash"),
            |input, _tool_use_id| async move {
                let command = match &input {
                    HookInput::PreToolUse(i) => i
                        .tool_input
                        .as_ref()
                        .and_then(|v| v["command"].as_str().map(str::to_owned)),
                    _ => None,
                };
                Ok(match command {
                    Some(c) if c.contains("rm ") => {
                        HookOutput::deny_tool("deleting files is not allowed here")
                    }
                    _ => HookOutput::none(),
                })
            },
        )
        .hook(HookEvent::POST_TOOL_USE, |input, _| async move {
            eprintln!("[hook] used {}", input.tool_name().unwrap_or("?"));
            Ok(HookOutput::none())
        });
    let (claude, mut events) = Claude::start(options).await?;
    claude.send(prompt)?;
    while let Some(event) = events.next().await {
        if let Event::Message(CliMessage::Result(result)) = event {
            println!("{}", result.result.unwrap_or_default());
            break;
        }
    }
    claude.close().await?;
    Ok(())
}
