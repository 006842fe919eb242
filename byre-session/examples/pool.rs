//! Pool: an orchestrator's queue of short jobs, each run in a fresh session taken from a pool
//! of three CLIs started ahead of need, three jobs at a time.
//!
//! `cargo run -p byre-session --example pool`.

use std::sync::Arc;

use byre_session::proto::CliMessage;
use byre_session::{Event, Options, Pool, StreamExt};
use tokio::task::JoinSet;

const JOBS: [&str; 6] = [
    "Name a prime number between 10 and 20. Answer with the number only.",
    "Name a colour of the rainbow. One word.",
    "Name a planet with rings. One word.",
    "Name a chess piece. One word.",
    "Name a programming language older than 1970. One word.",
    "Name a metal that is liquid at room temperature. One word.",
];

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let pool = Arc::new(Pool::new(Options::new(), 3)?);
    let mut running = JoinSet::new();
    for (n, job) in JOBS.into_iter().enumerate() {
        // At most three at once: wait for one to finish before taking a fourth session.
        if running.len() == 3 {
            running.join_next().await;
        }
        let pool = pool.clone();
        running.spawn(async move {
            let (claude, mut events) = match pool.take().await {
                Ok(session) => session,
                Err(e) => return eprintln!("job {n}: no session: {e}"),
            };
            if let Err(e) = claude.send(job) {
                return eprintln!("job {n}: {e}");
            }
            while let Some(event) = events.next().await {
                if let Event::Message(CliMessage::Result(result)) = event {
                    let answer = result.result.as_deref().unwrap_or("(no answer)").trim();
                    println!("job {n}: {answer}");
                    break;
                }
            }
            let _ = claude.close().await;
        });
    }
    while running.join_next().await.is_some() {}
    // Ends the sessions still waiting.
    if let Ok(pool) = Arc::try_unwrap(pool) {
        pool.close().await;
    }
    Ok(())
}
