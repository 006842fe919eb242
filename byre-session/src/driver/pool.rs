//! Sessions started ahead of need: a [`Pool`] keeps a number of CLIs launched and initialized,
//! so that taking one costs no start-up time.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use tokio::sync::{oneshot, Notify, OwnedSemaphorePermit, Semaphore};
use tokio::task::{JoinHandle, JoinSet};

use super::{Claude, Error, Events, Options};

/// Keeps `size` sessions started and initialized with the same [`Options`], and hands them
/// out: [`Pool::take`] returns one at once when one is ready, and the pool starts another in
/// its place. A CLI takes a while to start (more with plugins, MCP servers or a slow disk),
/// so an orchestrator that runs many short sessions can take that time off each.
///
/// Each session is a process of its own, with its own session id (captured from its first
/// turn, as for [`Claude::start`]); options that would make the sessions share one (`resume`,
/// `fork`, `continue_conversation`, `launch.session_id`) are refused. With
/// [`Options::transcript`] set to `run.jsonl`, the sessions write `run.1.jsonl`, `run.2.jsonl`,
/// ... in the order they were started.
///
/// The pool watches the sessions that wait: one whose CLI exits (crashed, killed) is dropped
/// and another is started in its place, and one known to have ended is never handed out (a
/// CLI can still die just as it is taken). A session that failed to start is handed out as its
/// error, once; the pool then starts another.
///
/// Dropping the pool, or [`Pool::close`], stops it from starting more and ends the sessions
/// still waiting or starting (as dropping a [`Claude`] and its [`Events`] does); `close` also
/// waits for the waiting ones to exit. Sessions already taken are the taker's.
///
/// ```no_run
/// use byre_session::{Options, Pool};
///
/// # async fn run() -> Result<(), byre_session::Error> {
/// let pool = Pool::new(Options::new(), 4)?;
/// let (claude, events) = pool.take().await?; // at once, once the pool has warmed up
/// claude.send("hello")?;
/// # drop(events);
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct Pool {
    shared: Arc<Shared>,
    filler: JoinHandle<()>,
}

/// What the pool's tasks and its handle share.
#[derive(Debug, Default)]
struct Shared {
    /// The sessions waiting to be taken (and start failures), oldest first.
    ready: Mutex<VecDeque<Waiting>>,
    /// Told when one is added.
    added: Notify,
}

/// A session waiting to be taken, or why one did not start.
#[derive(Debug)]
struct Waiting {
    /// Told when the session is taken: its watcher stops.
    taken: Option<oneshot::Sender<()>>,
    started: Result<(Claude, Events), Error>,
    /// Gives the pool's slot back when dropped.
    _permit: OwnedSemaphorePermit,
}

impl Pool {
    /// Starts `size` sessions with `options` (at least one), in the background, on the
    /// current tokio runtime (an error outside one).
    pub fn new(options: Options, size: usize) -> Result<Pool, Error> {
        let launch = &options.launch;
        if launch.session_id.is_some() || launch.resume.is_some() || launch.continue_conversation {
            return Err(Error::InvalidInput(
                "a pool's sessions each need their own session id: leave resume, fork, \
                 continue_conversation and session_id unset"
                    .into(),
            ));
        }
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| {
            Error::InvalidInput("a pool needs a tokio runtime to start its sessions in".into())
        })?;
        let shared = Arc::new(Shared::default());
        let permits = Arc::new(Semaphore::new(size.max(1)));
        let filler = runtime.spawn(fill(options, permits, shared.clone()));
        Ok(Pool { shared, filler })
    }

    /// A started, initialized session: at once when one is waiting, otherwise when the next
    /// one has started. Fails with the error of a session that could not start (the pool
    /// starts another in its place). Cancel-safe: a session is removed from the pool only as
    /// it is returned.
    pub async fn take(&self) -> Result<(Claude, Events), Error> {
        loop {
            // Registered before looking, so an addition between the look and the wait is not
            // missed.
            let added = self.shared.added.notified();
            let next = self.shared.ready.lock().expect("pool state").pop_front();
            match next {
                Some(mut waiting) => {
                    if let Some(taken) = waiting.taken.take() {
                        let _ = taken.send(());
                    }
                    match waiting.started {
                        Ok((claude, events)) if claude.has_ended() => drop((claude, events)),
                        other => return other,
                    }
                }
                None if self.filler.is_finished() => {
                    return Err(Error::Closed("the pool has stopped".into()));
                }
                None => added.await,
            }
        }
    }

    /// The sessions started (or failed) and waiting to be taken.
    pub fn waiting(&self) -> usize {
        self.shared.ready.lock().expect("pool state").len()
    }

    /// Stops starting sessions, ends those still starting, and closes those waiting, waiting
    /// for their CLIs to exit.
    pub async fn close(mut self) {
        self.filler.abort();
        let _ = (&mut self.filler).await;
        let waiting: Vec<Waiting> = self
            .shared
            .ready
            .lock()
            .expect("pool state")
            .drain(..)
            .collect();
        for waiting in waiting {
            if let Ok((claude, events)) = waiting.started {
                drop(events);
                let _ = claude.close().await;
            }
        }
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.filler.abort();
        // Dropping the waiting sessions' handles ends their CLIs.
        self.shared.ready.lock().expect("pool state").clear();
    }
}

/// Starts a session for every free slot, for as long as the pool lives; aborting it ends the
/// sessions still starting and the watchers (whose sessions then end with the pool).
async fn fill(options: Options, permits: Arc<Semaphore>, shared: Arc<Shared>) {
    let mut tasks = JoinSet::new();
    let mut started = 0usize;
    while let Ok(permit) = permits.clone().acquire_owned().await {
        while tasks.try_join_next().is_some() {}
        started += 1;
        let mut options = options.clone();
        if let Some(path) = &options.transcript {
            options.transcript = Some(numbered(path, started));
        }
        let shared = shared.clone();
        tasks.spawn(async move {
            let started = Claude::start(options).await;
            let watched = started.as_ref().ok().map(|(claude, _)| claude.clone());
            let (taken_tx, taken_rx) = oneshot::channel();
            shared.ready.lock().expect("pool state").push_back(Waiting {
                taken: Some(taken_tx),
                started,
                _permit: permit,
            });
            shared.added.notify_waiters();
            let Some(claude) = watched else { return };
            // Until it is taken: when its CLI exits, drop it, which frees its slot.
            tokio::select! {
                _ = taken_rx => {}
                _ = claude.wait() => {
                    shared
                        .ready
                        .lock()
                        .expect("pool state")
                        .retain(|w| !matches!(&w.started, Ok((c, _)) if c.same_session(&claude)));
                }
            }
        });
    }
}

/// `run.jsonl` → `run.<n>.jsonl`; `run` → `run.<n>`.
fn numbered(path: &Path, n: usize) -> PathBuf {
    let stem = path.file_stem().unwrap_or_default().to_string_lossy();
    let name = match path.extension() {
        Some(ext) => format!("{stem}.{n}.{}", ext.to_string_lossy()),
        None => format!("{stem}.{n}"),
    };
    path.with_file_name(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transcripts_are_numbered() {
        assert_eq!(
            numbered(Path::new("/tmp/run.jsonl"), 2),
            PathBuf::from("/tmp/run.2.jsonl")
        );
        assert_eq!(numbered(Path::new("log"), 1), PathBuf::from("log.1"));
    }

    #[test]
    fn a_pool_needs_a_runtime() {
        assert!(matches!(
            Pool::new(Options::new(), 1),
            Err(Error::InvalidInput(_))
        ));
    }
}
