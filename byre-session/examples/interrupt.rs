//! Interrupt: one task streams the answer while another interrupts it after a few seconds;
//! the session stays usable for the next prompt.
//!
//! `cargo run -p byre-session --example interrupt`.

use std::time::Duration;

use byre_session::proto::{CliMessage, ContentBlock};
use byre_session::{Claude, Event, Options, StreamExt};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (claude, mut events) = Claude::start(Options::new()).await?;
    claude.send("Write a very long story about a lighthouse keeper.")?;

    let interrupter = claude.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(5)).await;
        match interrupter.interrupt().await {
            Ok(_) => eprintln!("\n[interrupted]"),
            Err(e) => eprintln!("\n[interrupt failed: {e}]"),
        }
    });

    let mut turns = 0;
    while let Some(event) = events.next().await {
        match event {
            Event::Message(CliMessage::Assistant(a)) => {
                for block in &a.message.content {
                    if let ContentBlock::Text(t) = block {
                        print!("{}", t.text);
                    }
                }
            }
            Event::Message(CliMessage::Result(result)) => {
                println!("\n[turn ended: {}]", result.subtype);
                turns += 1;
                if turns == 2 {
                    break;
                }
                claude.send("In one sentence: how does it end?")?;
            }
            _ => {}
        }
    }
    claude.close().await?;
    Ok(())
}
