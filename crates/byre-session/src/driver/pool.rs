//! Sessions started ahead of need: a [`Pool`] keeps a number of CLIs launched and initialized,
//! so that taking one costs no start-up time.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use tokio::sync::{mpsc, Mutex, OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinHandle;

use super::{Claude, Error, Events, Options};

/// A session started by the pool, or why it did not start, with the permit it holds.
type Started = (Result<(Claude, Events), Error>, OwnedSemaphorePermit);

/// Keeps `size` sessions started and initialized with the same [`Options`], and hands them
/// out: [`Pool::take`] returns one at once when one is ready, and the pool starts another in
/// its place. A CLI takes a second or more to start (more with plugins, MCP servers or a slow
/// disk), so an orchestrator that runs many short sessions can take that time off each.
///
/// Each session is a process of its own, with its own session id (captured from its first
/// turn, as for [`Claude::start`]); options that fix the session id (`resume`, `fork`,
/// `launch.session_id`) are refused, as every session would claim the same one. A session
/// that ended while it waited (its CLI crashed or was killed) is never handed out: `take`
/// closes it and takes the next. A session that failed to start is handed out as its error,
/// once; the pool then starts another.
///
/// Dropping the pool stops it from starting more and closes the sessions still waiting (as
/// dropping a [`Claude`] and its [`Events`] does); [`Pool::close`] also waits for their CLIs to
/// exit. Sessions already taken are the taker's.
///
/// ```no_run
/// use byre_session::driver::{Options, Pool};
///
/// # async fn run() -> Result<(), byre_session::driver::Error> {
/// let pool = Pool::new(Options::new(), 4)?;
/// let (claude, events) = pool.take().await?; // ready at once, once the pool has warmed up
/// claude.send("hello")?;
/// # drop(events);
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct Pool {
    ready: Mutex<mpsc::UnboundedReceiver<Started>>,
    waiting: Arc<AtomicUsize>,
    filler: JoinHandle<()>,
}

impl Pool {
    /// Starts `size` sessions with `options` (at least one), in the background; must be
    /// called within a tokio runtime.
    pub fn new(options: Options, size: usize) -> Result<Pool, Error> {
        if options.launch.session_id.is_some() || options.launch.resume.is_some() {
            return Err(Error::InvalidInput(
                "a pool's sessions each need their own session id: leave resume, fork and \
                 session_id unset"
                    .into(),
            ));
        }
        let permits = Arc::new(Semaphore::new(size.max(1)));
        let (tx, rx) = mpsc::unbounded_channel();
        let waiting = Arc::new(AtomicUsize::new(0));
        let counter = waiting.clone();
        let filler = tokio::spawn(async move {
            // Each permit is one session starting or waiting; taking a session gives its
            // permit back, and this loop starts the next.
            while let Ok(permit) = permits.clone().acquire_owned().await {
                let options = options.clone();
                let tx = tx.clone();
                let counter = counter.clone();
                tokio::spawn(async move {
                    let started = Claude::start(options).await;
                    counter.fetch_add(1, Ordering::Relaxed);
                    if let Err(mpsc::error::SendError((started, _permit))) =
                        tx.send((started, permit))
                    {
                        // The pool is gone: close what just started.
                        counter.fetch_sub(1, Ordering::Relaxed);
                        if let Ok((claude, _events)) = started {
                            let _ = claude.close().await;
                        }
                    }
                });
            }
        });
        Ok(Pool {
            ready: Mutex::new(rx),
            waiting,
            filler,
        })
    }

    /// A started, initialized session: at once when one is waiting, otherwise when the next
    /// one has started. Fails with the error of a session that could not start (the pool
    /// starts another in its place).
    pub async fn take(&self) -> Result<(Claude, Events), Error> {
        let mut ready = self.ready.lock().await;
        loop {
            let Some((started, permit)) = ready.recv().await else {
                return Err(Error::Closed("the pool has stopped".into()));
            };
            self.waiting.fetch_sub(1, Ordering::Relaxed);
            // The pool starts the next one now.
            drop(permit);
            match started {
                Ok((claude, events)) if claude.has_ended() => {
                    drop(events);
                    let _ = claude.close().await;
                }
                other => return other,
            }
        }
    }

    /// The sessions started (or failed) and waiting to be taken.
    pub fn waiting(&self) -> usize {
        self.waiting.load(Ordering::Relaxed)
    }

    /// Stops starting sessions, closes those waiting and waits for their CLIs to exit. A
    /// session still starting is stopped too (without waiting for it).
    pub async fn close(mut self) {
        self.filler.abort();
        let ready = self.ready.get_mut();
        ready.close();
        while let Some((started, _permit)) = ready.recv().await {
            self.waiting.fetch_sub(1, Ordering::Relaxed);
            if let Ok((claude, events)) = started {
                drop(events);
                let _ = claude.close().await;
            }
        }
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.filler.abort();
    }
}
