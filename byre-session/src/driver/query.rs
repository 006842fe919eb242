//! The one-shot form: [`query`] runs one prompt to its result, as a [`Query`] that streams the
//! turn's events or gives its typed outcome, and closes the session after.

use std::pin::Pin;
use std::task::{Context, Poll};

use futures::future::BoxFuture;
use futures::{ready, FutureExt, Stream, StreamExt};

use super::claude::{Claude, Events};
use super::error::Error;
use super::options::Options;
use super::turn::{TurnError, TurnOutput};
use crate::session::Event;

/// Runs one prompt to its result: starts a session and sends `prompt`. Start-up failures are
/// returned at once; the [`Query`] then gives the turn's events as a `Stream`, or its outcome
/// with [`finish`](Query::finish) or [`on_text`](Query::on_text), and closes the session.
///
/// ```no_run
/// use byre_session::{query, Options, StreamExt};
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// // The outcome, the text printed as it streams:
/// let answer = query("Say hello", Options::new()).await?.on_text(|t| print!("{t}")).await?;
/// println!("\n${:.4}", answer.cost_usd().unwrap_or(0.0));
///
/// // Or every event:
/// let mut events = query("Say hello again", Options::new()).await?;
/// while let Some(event) = events.next().await {
///     if let Some(text) = event.text() {
///         print!("{text}");
///     }
/// }
/// # Ok(())
/// # }
/// ```
pub async fn query(prompt: impl Into<String>, options: Options) -> Result<Query, Error> {
    let (claude, events) = Claude::start(options).await?;
    claude.send(prompt)?;
    Ok(Query {
        claude,
        events,
        ended: false,
        closing: None,
    })
}

/// One prompt on its way to its result ([`query`]).
///
/// As a `Stream` it gives every event up to and including the turn's `result`, then closes the
/// session and ends. [`finish`](Query::finish) and [`on_text`](Query::on_text) read the turn
/// to its typed outcome instead, and close the session. Dropped early, the session is dropped
/// with it: its CLI's stdin is closed, and the CLI is stopped if it has not exited within the
/// session's exit grace ([`Options::exit_grace`]).
#[must_use = "a query does nothing until its events are read"]
pub struct Query {
    claude: Claude,
    events: Events,
    ended: bool,
    closing: Option<BoxFuture<'static, ()>>,
}

impl Query {
    /// The session's handle, to interrupt it or ask it something while the turn runs (from
    /// another task: clone it).
    pub fn claude(&self) -> &Claude {
        &self.claude
    }

    /// Reads the rest of the turn to its result and gives the outcome ([`TurnError::Ended`]
    /// once the stream has given the result already).
    pub async fn finish(self) -> Result<TurnOutput, TurnError> {
        self.on_text(|_| {}).await
    }

    /// Reads the rest of the turn to its result, calling `on_text` with each piece of the
    /// answer's text as it arrives, and gives the outcome (as [`finish`](Query::finish)). A
    /// turn that went well but whose transcript lines or store entries were not all written
    /// gives [`TurnError::Session`] with [`Error::NotWritten`](crate::Error::NotWritten).
    pub async fn on_text(mut self, on_text: impl FnMut(&str)) -> Result<TurnOutput, TurnError> {
        if self.ended {
            if let Some(closing) = self.closing.take() {
                closing.await;
            }
            return Err(TurnError::Ended);
        }
        let outcome = self.events.turn().on_text(on_text).await;
        match (outcome, self.claude.close().await) {
            (Ok(_), Err(lost @ crate::Error::NotWritten(_))) => Err(TurnError::Session(lost)),
            // The CLI's end after the result (an exit status of 1 after an error result) adds
            // nothing to the outcome.
            (outcome, _) => outcome,
        }
    }

    /// The turn is over: close the session while the stream is polled to its end.
    fn end(&mut self) {
        self.ended = true;
        let claude = self.claude.clone();
        self.closing = Some(
            async move {
                let _ = claude.close().await;
            }
            .boxed(),
        );
    }
}

impl Stream for Query {
    type Item = Event;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Event>> {
        let this = self.get_mut();
        loop {
            if let Some(closing) = &mut this.closing {
                ready!(closing.poll_unpin(cx));
                this.closing = None;
            }
            if this.ended {
                return Poll::Ready(None);
            }
            match ready!(this.events.poll_next_unpin(cx)) {
                Some(event) => {
                    if this.events.ends_turn(&event) {
                        this.end();
                    }
                    return Poll::Ready(Some(event));
                }
                None => this.end(),
            }
        }
    }
}

impl std::fmt::Debug for Query {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Query")
            .field("claude", &self.claude)
            .field("ended", &self.ended)
            .field("closing", &self.closing.is_some())
            .finish_non_exhaustive()
    }
}
