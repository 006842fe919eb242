//! Fork: ask a question, then fork the session at the first answer into another directory and
//! explore a different follow-up there; the original session is untouched.
//!
//! `cargo run -p byre-session --example fork`.

use byre_session::proto::CliMessage;
use byre_session::{Claude, Event, Options, StreamExt};

/// Runs one prompt and returns the uuid of the first assistant line and the result text.
async fn turn(
    claude: &Claude,
    events: &mut byre_session::Events,
    prompt: &str,
) -> Result<(Option<String>, String), Box<dyn std::error::Error>> {
    claude.send(prompt)?;
    let mut first = None;
    while let Some(event) = events.next().await {
        match event {
            Event::Message(CliMessage::Assistant(a)) if first.is_none() => first = a.uuid.clone(),
            Event::Message(CliMessage::Result(r)) => {
                return Ok((first, r.result.unwrap_or_default()))
            }
            _ => {}
        }
    }
    Err("the session ended early".into())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (claude, mut events) = Claude::start(Options::new()).await?;
    let (at, answer) = turn(&claude, &mut events, "Name one prime number.").await?;
    println!("original: {answer}");
    let (_, answer) = turn(&claude, &mut events, "Now name a larger one.").await?;
    println!("original, second turn: {answer}");
    let session = claude.session_id().ok_or("no session id")?;
    claude.close().await?;

    let dir = std::env::temp_dir().join("byre-fork-example");
    std::fs::create_dir_all(&dir)?;
    let (options, fork_id) = Options::new().fork(&session, at.ok_or("no answer uuid")?, &dir);
    let (fork, mut events) = Claude::start(options).await?;
    let (_, answer) = turn(&fork, &mut events, "Now name an even number instead.").await?;
    println!("fork {fork_id}: {answer}");
    fork.close().await?;
    Ok(())
}
