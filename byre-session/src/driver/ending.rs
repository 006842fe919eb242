//! The end of a session: the CLI's stdout ending (an exit, a crash, a closed output, or a
//! process it started holding the pipe after it exited), the CLI closing its stdin while it
//! runs, and the host closing the session (a `terminate` cuts a `close` short).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use byre_transport::{CliProcess, ExitInfo, LaunchError, Stopped};

use super::commands::{Command, Direct};
use super::error::Error;
use super::error::NotWritten;
use super::reader;
use super::reader::{DRAIN_MAX, DRAIN_QUIET};
use super::run::{child_exit, Driver};
use super::unwritten::Transcript;
use super::writer::Undelivered;

/// After a write to the CLI's stdin failed, how long the CLI may take to show that it is
/// exiting (a process that exits closes its stdin first) before it counts as having closed
/// its input while it runs.
const EXITING_WITHIN: Duration = Duration::from_millis(200);

impl Driver {
    /// The CLI has exited: lets what is queued reach the store, reports what did not, and
    /// gives the stored session's lease back.
    pub(super) async fn finish_mirror(&mut self) {
        let Some(run) = &mut self.store else { return };
        let (failures, lease) = run.finish().await;
        for (key, entries, why) in failures {
            self.session.mirror_failed(key, entries, why);
        }
        if let Some(why) = lease {
            tracing::warn!(%why, "the stored session's lease");
            self.note(&format!("session store: {why}"));
        }
    }

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
            match &self.stop(process, false).await {
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
            }
        };
        if let Some(undelivered) = self.writer_task.try_failed() {
            self.note_undelivered(&undelivered);
        }
        self.running.abort_all();
        self.running_ids.clear();
        self.session.handle_exit(why.clone());
        self.shared.lock().expect("shared state").ended = Some(why.clone());
        // An `initialize` still waiting fails as the core says.
        self.settle().await;
        self.finish_mirror().await;
        self.flush_transcript();
        let result = self.exit.clone().ok_or_else(|| Error::Closed(why.clone()));
        let result = self.with_losses(result);
        for waiter in std::mem::take(&mut self.exit_waiters) {
            // A caller that stopped waiting has nothing to be told.
            let _ = waiter.send(result.clone());
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
        let result = match self.process.take() {
            Some(process) => self
                .stop(process, now)
                .await
                .map_err(|e| Error::Closed(e.to_string())),
            None => self.ended_base(),
        };
        // A write may have failed while the CLI stopped (it exited with lines still queued).
        if let Some(undelivered) = self.writer_task.try_failed() {
            self.note_undelivered(&undelivered);
        }
        let result = self.end("closed by the host", result).await;
        // A consumer that stopped reading must not make `close` wait forever: the last events
        // go in over the queue's capacity.
        self.events.push_all(self.session.events_mut());
        self.seen = 0;
        result
    }

    /// A write to the CLI's stdin failed: the lines not written are noted in the transcript.
    /// A CLI that is exiting (its stdin closes as it exits) then ends as any exit does. One that
    /// still runs has closed its input, so nothing sent to it can arrive: the session ends with
    /// [`Error::InputClosed`] and the CLI is stopped at once, its output read and delivered
    /// meanwhile. Returns whether the session ended here.
    pub(super) async fn input_closed(&mut self, undelivered: Undelivered) -> bool {
        self.writer = None;
        let not_delivered = self.note_undelivered(&undelivered);
        let Some(mut process) = self.process.take() else {
            return false;
        };
        let exiting = tokio::time::timeout(EXITING_WITHIN, process.wait()).await;
        if matches!(exiting, Ok(Ok(_))) {
            self.process = Some(process);
            return false;
        }
        let error = undelivered.error;
        tracing::warn!(%error, not_delivered, "the CLI closed its stdin while it ran");
        self.note(&format!(
            "the CLI closed its stdin while it ran ({error}): stopping it"
        ));
        let exit = self.stop(process, true).await;
        let error = Error::InputClosed {
            error: Arc::new(error),
            not_delivered,
            exit: exit.ok(),
        };
        self.shared.lock().expect("shared state").failure = Some(error.clone());
        // Its waiters are answered there; the session's end is told to later calls by
        // `ended_result`.
        let _ended = self.end(&error.to_string(), Err(error.clone())).await;
        true
    }

    /// Notes in the transcript each line a failed write left unwritten; returns how many.
    pub(super) fn note_undelivered(&mut self, undelivered: &Undelivered) -> usize {
        let Some(t) = &mut self.transcript else {
            return undelivered.lines().count();
        };
        let mut count = 0;
        for line in undelivered.lines() {
            count += 1;
            t.note(&format!(
                "not delivered ({}): {}",
                undelivered.error,
                String::from_utf8_lossy(line)
            ));
        }
        count
    }

    /// How the session ended, for a `close` or `wait` that comes after the CLI is gone
    /// ([`Error::NotWritten`] when it lost transcript lines or store entries).
    pub(super) fn ended_result(&self) -> Result<ExitInfo, Error> {
        self.with_losses(self.ended_base())
    }

    /// How the session ended, leaving out what it did not write.
    fn ended_base(&self) -> Result<ExitInfo, Error> {
        let shared = self.shared.lock().expect("shared state");
        match (&shared.failure, &self.exit) {
            (Some(failure), _) => Err(failure.clone()),
            (None, Some(exit)) => Ok(exit.clone()),
            (None, None) => Err(Error::Closed(shared.ended.clone().unwrap_or_default())),
        }
    }

    /// `result`, or [`Error::NotWritten`] holding it when the transcript lost lines or the
    /// store entries.
    pub(super) fn with_losses(&self, result: Result<ExitInfo, Error>) -> Result<ExitInfo, Error> {
        let transcript = self.transcript.as_ref().and_then(Transcript::loss);
        let store = self.session.store_losses();
        if transcript.is_none() && store.is_empty() {
            return result;
        }
        let (exit, failure) = match result {
            Ok(exit) => (Some(exit), None),
            // Counted afresh: more may have been lost since.
            Err(Error::NotWritten(before)) => (before.exit.clone(), before.failure.clone()),
            Err(error) => (self.exit.clone(), Some(error)),
        };
        Err(Error::NotWritten(Arc::new(NotWritten {
            exit,
            failure,
            transcript,
            store: store.to_vec(),
        })))
    }

    /// Ends the session once the CLI is stopped: the core fails what still waits, the handle
    /// learns `why` (unless it knows a reason already), what waits for the store gets there
    /// (or is reported), the transcript is flushed, and every `close` and `wait` gets how it
    /// ended: `result`, or [`Error::NotWritten`] holding it. Returns that.
    async fn end(&mut self, why: &str, result: Result<ExitInfo, Error>) -> Result<ExitInfo, Error> {
        self.session.handle_exit(why);
        self.shared
            .lock()
            .expect("shared state")
            .ended
            .get_or_insert_with(|| why.to_owned());
        self.running.abort_all();
        self.settle().await;
        self.finish_mirror().await;
        self.flush_transcript();
        let result = self.with_losses(result);
        for waiter in std::mem::take(&mut self.exit_waiters) {
            // A caller that stopped waiting has nothing to be told.
            let _ = waiter.send(result.clone());
        }
        result
    }

    /// Stops the CLI: SIGTERM to its group after the exit grace (`now`: at once), SIGKILL
    /// after the term grace. Meanwhile what it writes is read and delivered at the consumer's
    /// pace, and the handle's commands are carried out: a `terminate` (the host itself being
    /// stopped by a signal) ends the grace at once, and a `close` or `wait` gets the same end.
    async fn stop(&mut self, mut process: CliProcess, now: bool) -> std::io::Result<ExitInfo> {
        let grace_over = tokio::time::Instant::now() + self.exit_grace;
        // The CLI during its exit grace; then the stop under way.
        let mut waiting = None;
        let mut stopping: Option<Stopping> = None;
        if now || process.try_status().is_some() {
            stopping = Some(Box::pin(process.terminate()));
        } else {
            waiting = Some(process);
        }
        let mut reading = true;
        let mut commands_open = true;
        let exit = loop {
            // While the CLI exits, its lines reach the stream as fast as the consumer takes
            // them, no faster: memory stays within the usual bounds. A consumer that stopped
            // reading holds the CLI up, and the grace periods end it.
            self.observe_events();
            let (events, pending) = (&mut self.events, self.session.events_mut());
            let has_event = !pending.is_empty();
            let step = tokio::select! {
                exit = stopped(&mut stopping) => break exit,
                () = child_exit(&mut waiting) => Stop::Exited,
                () = tokio::time::sleep_until(grace_over), if waiting.is_some() => Stop::GraceOver,
                command = self.commands.recv(), if commands_open => Stop::Command(command),
                lines = self.reader.next(), if reading && !has_event => Stop::Lines(lines),
                pushed = std::future::poll_fn(|cx| events.poll_push(pending, cx)),
                    if has_event => Stop::Pushed(pushed.is_ok()),
            };
            match step {
                Stop::Exited => {
                    // It exited by itself within the grace.
                    if let Some(process) = waiting.take() {
                        stopping = Some(Box::pin(async move {
                            let mut exit = process.shutdown().await?;
                            exit.stopped = Stopped::Exited;
                            Ok(exit)
                        }));
                    }
                }
                Stop::GraceOver => escalate(&mut waiting, &mut stopping),
                Stop::Command(Some(Command::Direct(Direct::Wait(reply)))) => {
                    self.exit_waiters.push(reply)
                }
                Stop::Command(Some(command)) => {
                    if let Some((reply, now)) = self.command(command).await {
                        if now && waiting.is_some() {
                            self.note("terminated during the exit grace: stopping the CLI now");
                            escalate(&mut waiting, &mut stopping);
                        }
                        self.exit_waiters.push(reply);
                    }
                    // What it sent cannot be written (stdin is closed): the transcript says so.
                    self.flush_transmit().await;
                }
                Stop::Command(None) => commands_open = false,
                Stop::Lines(Some(lines)) => self.on_lines(lines),
                Stop::Lines(None) => reading = false,
                Stop::Pushed(delivered) => {
                    if !delivered {
                        // Nobody listens: what the CLI still writes is dropped.
                        self.events.discard(self.session.events_mut());
                    }
                    self.seen = self.seen.min(self.session.events_mut().len());
                }
            }
        };
        // The CLI is gone: what is left in its pipe is read (at most the pipe's size and the
        // reader's batches), for as long as it keeps coming, within bounds: a process it
        // started may hold the pipe open.
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
        exit
    }
}

/// A stop under way: the process's own shutdown or termination.
type Stopping = Pin<Box<dyn Future<Output = std::io::Result<ExitInfo>> + Send>>;

/// What one turn of [`Driver::stop`]'s loop found (short-lived: its size does not matter).
#[allow(clippy::large_enum_variant)]
enum Stop {
    /// The CLI exited within its exit grace.
    Exited,
    /// The exit grace is over.
    GraceOver,
    Command(Option<Command>),
    Lines(Option<Vec<reader::Line>>),
    /// Events went into the queue (`false`: nobody listens).
    Pushed(bool),
}

/// Ends the exit grace: the CLI is terminated now (nothing, once its stop is under way).
fn escalate(waiting: &mut Option<CliProcess>, stopping: &mut Option<Stopping>) {
    if let Some(process) = waiting.take() {
        *stopping = Some(Box::pin(process.terminate()));
    }
}

/// Waits for the stop under way to end (never, while there is none).
async fn stopped(stopping: &mut Option<Stopping>) -> std::io::Result<ExitInfo> {
    match stopping {
        Some(stopping) => stopping.await,
        None => std::future::pending().await,
    }
}
