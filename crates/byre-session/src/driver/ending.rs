//! The end of a session: the CLI's stdout ending (an exit, a crash, a closed output, or a
//! process it started holding the pipe after it exited), and the host closing the session.

use std::future::Future;
use std::pin::Pin;
use std::time::{Duration, Instant};

use byre_transport::{CliProcess, ExitInfo, LaunchError};

use super::error::Error;
use super::run::Driver;

/// After the CLI has exited, how long its stdout may stay quiet before byre stops reading it:
/// what the CLI wrote is in the pipe already, and a process it started (in a session of its
/// own, out of the group's reach) may hold the pipe open for ever.
pub(super) const DRAIN_QUIET: Duration = Duration::from_millis(500);

/// After the CLI has exited, the longest byre reads what is left of its stdout.
pub(super) const DRAIN_MAX: Duration = Duration::from_secs(2);

impl Driver {
    /// The CLI's stdout ended (`held`: the CLI exited, but a process it started still holds
    /// its stdout open, so byre stopped reading): the CLI is stopped if it still runs, and the
    /// session ends with the reason.
    pub(super) async fn on_exit(&mut self, held: bool) {
        let Some(mut process) = self.process.take() else {
            return;
        };
        self.note(match held {
            true => "stdout still open after the CLI exited: a process it started holds it",
            false => "stdout closed",
        });
        // Its stdin closes too (once what is queued is written), so a CLI that closed only its
        // output sees the end of its input at once.
        self.writer = None;
        let running = process.try_status().is_none();
        let why = if self.lines_read == 0 {
            let error: LaunchError = process.exited_early().await;
            if let LaunchError::ExitedEarly {
                status,
                stderr_tail,
                ..
            } = &error
            {
                self.exited(Ok(ExitInfo {
                    status: *status,
                    stopped: byre_transport::Stopped::AlreadyExited,
                    stderr_tail: stderr_tail.clone(),
                }));
            }
            // Nothing was read, so `initialize` cannot have been answered.
            let why = error.to_string();
            self.set_ready(Err(error.into()));
            why
        } else {
            let exit = process.shutdown().await;
            let why = match &exit {
                Ok(info) => {
                    let how = match info.stopped {
                        byre_transport::Stopped::Terminated => " after SIGTERM",
                        byre_transport::Stopped::Killed => " after SIGKILL",
                        _ => "",
                    };
                    let stderr = info.stderr_tail.trim();
                    if running {
                        format!(
                            "the CLI closed its output while still running; it was stopped \
                             ({}{how}); stderr: {stderr}",
                            info.status
                        )
                    } else {
                        format!("the CLI exited ({}); stderr: {stderr}", info.status)
                    }
                }
                Err(e) => e.to_string(),
            };
            self.exited(exit.map_err(|e| e.to_string()));
            why
        };
        self.running.abort_all();
        self.running_ids.clear();
        self.session.handle_exit(why.clone());
        self.shared.lock().expect("shared state").ended = Some(why.clone());
        // An `initialize` still waiting fails as the core says.
        self.settle().await;
        self.finish_mirror().await;
        let waiters = std::mem::take(&mut self.exit_waiters);
        for waiter in waiters {
            let _ = waiter.send(self.exit.clone().ok_or_else(|| Error::Closed(why.clone())));
        }
        if let Some(t) = &mut self.transcript {
            let _ = t.flush();
        }
    }

    /// Records how the CLI ended: in the transcript, and for [`Claude::wait`].
    pub(super) fn exited(&mut self, exit: Result<ExitInfo, String>) {
        match exit {
            Ok(info) => {
                let how = match info.stopped {
                    byre_transport::Stopped::Terminated => " (after SIGTERM)",
                    byre_transport::Stopped::Killed => " (after SIGKILL)",
                    _ => "",
                };
                self.note(&format!("exited: {}{how}", info.status));
                tracing::info!(status = %info.status, stopped = ?info.stopped, "the CLI exited");
                self.exit = Some(info);
            }
            Err(why) => {
                tracing::warn!(%why, "could not wait for the CLI");
                self.note(&format!("could not wait for the CLI: {why}"));
            }
        }
    }

    /// Writes what is still to be sent, then closes stdin.
    pub(super) async fn close_stdin(&mut self) {
        self.flush_transmit().await;
        if let Some(writer) = self.writer.take() {
            // Closed by the writing task once what is queued is written.
            drop(writer);
            self.note("stdin closed");
        }
    }

    /// Stops the CLI (`now`: without the exit grace) and ends the session.
    pub(super) async fn shutdown(&mut self, now: bool) -> Result<ExitInfo, Error> {
        self.close_stdin().await;
        let process = self.process.take();
        let result = match process {
            Some(process) => {
                // Read what the CLI still writes while it exits (so it never blocks on a full
                // pipe), and deliver it: every line up to the exit reaches the stream.
                let shutdown = match now {
                    true => {
                        Box::pin(process.terminate()) as Pin<Box<dyn Future<Output = _> + Send>>
                    }
                    false => Box::pin(process.shutdown()),
                };
                tokio::pin!(shutdown);
                let mut reading = true;
                let exit = loop {
                    // While the CLI exits, its lines reach the stream as fast as the consumer
                    // takes them, no faster: memory stays within the usual bounds. A consumer
                    // that stopped reading holds the CLI up, and the grace periods end it.
                    self.observe_events();
                    let (events, pending) = (&mut self.events, self.session.events_mut());
                    let has_event = !pending.is_empty();
                    tokio::select! {
                        exit = &mut shutdown => break exit,
                        lines = self.reader.next(), if reading && !has_event => match lines {
                            Some(lines) => self.on_lines(lines),
                            None => reading = false,
                        },
                        pushed = std::future::poll_fn(|cx| events.poll_push(pending, cx)),
                            if has_event => {
                            if pushed.is_err() {
                                // Nobody listens: what the CLI still writes is dropped.
                                events.discard(pending);
                            }
                            self.seen = self.seen.min(self.session.events_mut().len());
                        }
                    }
                };
                // The CLI is gone: what is left in its pipe is read (at most the pipe's size
                // and the reader's batches), for as long as it keeps coming, within bounds: a
                // process it started may hold the pipe open.
                let exited = Instant::now();
                let mut last = exited;
                while reading {
                    let until = (last + DRAIN_QUIET).min(exited + DRAIN_MAX);
                    let until = tokio::time::Instant::from_std(until);
                    match tokio::time::timeout_at(until, self.reader.next()).await {
                        Ok(Some(lines)) => {
                            last = Instant::now();
                            self.on_lines(lines);
                            // Nobody listens: nothing is kept.
                            if self.events.push_now(self.session.events_mut()).is_err() {
                                self.events.discard(self.session.events_mut());
                            }
                            self.seen = self.seen.min(self.session.events_mut().len());
                        }
                        Ok(None) => reading = false,
                        Err(_) => {
                            self.note("stdout still open after the CLI exited: not read further");
                            self.reader.stop();
                            reading = false;
                        }
                    }
                }
                self.exited(exit.as_ref().cloned().map_err(|e| e.to_string()));
                exit.map_err(|e| Error::Closed(e.to_string()))
            }
            None if self.exit.is_some() => Ok(self.exit.clone().expect("checked")),
            None => Err(Error::Closed(
                self.shared
                    .lock()
                    .expect("shared state")
                    .ended
                    .clone()
                    .unwrap_or_default(),
            )),
        };
        self.session.handle_exit("closed by the host");
        self.shared.lock().expect("shared state").ended = Some("closed by the host".into());
        self.running.abort_all();
        for waiter in std::mem::take(&mut self.exit_waiters) {
            let _ = waiter.send(result.clone());
        }
        self.settle().await;
        self.finish_mirror().await;
        // A consumer that stopped reading must not make `close` wait forever: the last events
        // go in over the queue's capacity.
        self.events.push_all(self.session.events_mut());
        self.seen = 0;
        if let Some(t) = &mut self.transcript {
            let _ = t.flush();
        }
        result
    }
}

/// Waits for the CLI to exit (never, once it is gone or when it cannot be waited for).
pub(super) async fn child_exit(process: &mut Option<CliProcess>) {
    if let Some(process) = process {
        if process.wait().await.is_ok() {
            return;
        }
    }
    std::future::pending().await
}
