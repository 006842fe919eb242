//! Permissions: the CLI asks the host before running a tool (`--permission-prompt-tool stdio`);
//! this host allows reads and asks on the terminal for everything else.
//!
//! `cargo run -p byre-session --example permissions -- "create notes.txt with a haiku"`.

use std::io::Write;

use byre_session::proto::{CliMessage, PermissionResult};
use byre_session::{Claude, Event, Options, StreamExt};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let prompt = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "Create hello.txt saying hi.".into());
    let options = Options::new().can_use_tool(|request| async move {
        if matches!(request.tool_name.as_str(), "Read" | "Glob" | "Grep") {
            return Ok(PermissionResult::allow(request.input));
        }
        let question = format!("Allow {} {}? [y/N] ", request.tool_name, request.input);
        // Ask on the terminal without blocking the runtime.
        let answer = tokio::task::spawn_blocking(move || {
            print!("{question}");
            let _ = std::io::stdout().flush();
            let mut line = String::new();
            let _ = std::io::stdin().read_line(&mut line);
            line.trim().eq_ignore_ascii_case("y")
        })
        .await
        .map_err(|e| e.to_string())?;
        Ok(if answer {
            PermissionResult::allow(request.input)
        } else {
            PermissionResult::deny("the user said no")
        })
    });
    // With a permission handler and no mode chosen, byre starts the CLI in `default` mode,
    // which asks the handler.
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
