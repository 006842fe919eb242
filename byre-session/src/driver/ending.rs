//! The moves between a session's phases on its way to its end: the CLI's stdout ending (an
//! exit, a crash, a closed output, or a process it started holding the pipe after it exited),
//! the CLI closing its stdin while it runs, and the host closing the session (a `terminate`
//! cuts a `close` short).

use std::sync::Arc;
use std::time::{Duration, Instant};

use byre_transport::{CliProcess, ExitInfo, LaunchError, Stopped};
use tokio::sync::oneshot;

use super::error::{Error, NotWritten};
use super::phase::{Drain, Phase, StopStep, Stopping, Then};
use super::run::Driver;
use super::unwritten::Transcript;
use super::writer::Undelivered;

/// After a write to the CLI's stdin failed, how long the CLI may take to show that it is
/// exiting (a process that exits closes its stdin first) before it counts as having closed
/// its input while it runs.
const EXITING_WITHIN: Duration = Duration::from_millis(200);

impl Driver {
    /// Starts stopping `process` (`now`: without the exit grace); `then` happens once it is
    /// gone and its output read.
    fn begin_stop(&mut self, mut process: CliProcess, now: bool, then: Then) {
        let mut stop = Stopping {
            waiting: None,
            grace_over: Instant::now() + self.exit_grace,
            under_way: None,
            then,
        };
        if now || process.try_status().is_some() {
            stop.under_way = Some(Box::pin(process.terminate()));
        } else {
            stop.waiting = Some(process);
        }
        self.phase = Phase::Stopping(Box::new(stop));
    }

    /// Ends the exit grace: the CLI is terminated now (nothing, once its stop is under way).
    pub(super) fn escalate(&mut self) {
        if let Phase::Stopping(stop) = &mut self.phase {
            if let Some(process) = stop.waiting.take() {
                stop.under_way = Some(Box::pin(process.terminate()));
            }
        }
    }

    /// The stop under way moved on: the CLI exited within its grace (its shutdown finishes
    /// it), or the stop ended and what is left in the CLI's pipe is read next.
    pub(super) fn on_stop_step(&mut self, step: StopStep) {
        let Phase::Stopping(stop) = &mut self.phase else {
            return;
        };
        match step {
            StopStep::Exited => {
                if let Some(process) = stop.waiting.take() {
                    stop.under_way = Some(Box::pin(async move {
                        let mut exit = process.shutdown().await?;
                        exit.stopped = Stopped::Exited;
                        Ok(exit)
                    }));
                }
            }
            StopStep::Stopped(exit) => {
                let Phase::Stopping(stop) = std::mem::replace(&mut self.phase, Phase::Ended) else {
                    return;
                };
                self.phase = Phase::Draining {
                    exit,
                    then: stop.then,
                    drain: Drain::new(Instant::now()),
                };
            }
        }
    }

    /// A `terminate` while the CLI is being stopped: it is stopped now.
    pub(super) fn terminate_now(&mut self) {
        if matches!(&self.phase, Phase::Stopping(stop) if stop.waiting.is_some()) {
            self.note("terminated during the exit grace: stopping the CLI now");
            self.escalate();
        }
    }

    /// The drain after a stop is over (stdout ended, stayed quiet or was read long enough):
    /// the session ends as its stop said. Returns whether the driver ends with it.
    pub(super) async fn drained(&mut self) -> bool {
        let Phase::Draining { exit, then, .. } = std::mem::replace(&mut self.phase, Phase::Ended)
        else {
            return false;
        };
        if !self.reader.is_done() {
            self.note("stdout still open after the CLI exited: not read further");
            self.reader.stop();
        }
        self.exited(exit.as_ref().cloned().map_err(|e| e.to_string()));
        // A write may have failed while the CLI stopped (it exited with lines still queued).
        if let Some(undelivered) = self.writer_task.try_failed() {
            self.note_undelivered(&undelivered);
        }
        match then {
            Then::OutputEnded { running } => {
                let why = match &exit {
                    Ok(info) => {
                        let how = match info.stopped {
                            Stopped::Terminated => " after SIGTERM",
                            Stopped::Killed => " after SIGKILL",
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
                let result = self.exit.clone().ok_or_else(|| Error::Closed(why.clone()));
                let result = self.end(&why, result).await;
                self.answer_waiters(result);
                false
            }
            Then::Closed(reply) => {
                let result = exit.map_err(|e| Error::Closed(e.to_string()));
                self.close_with(reply, result).await;
                true
            }
            Then::InputClosed {
                error,
                not_delivered,
            } => {
                let error = Error::InputClosed {
                    error: Arc::new(error),
                    not_delivered,
                    exit: exit.ok(),
                };
                self.shared.lock().expect("shared state").failure = Some(error.clone());
                // The session's end is told to later calls by `ended_result`.
                let result = self.end(&error.to_string(), Err(error.clone())).await;
                self.answer_waiters(result);
                false
            }
        }
    }

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
    pub(super) async fn output_ended(&mut self, held: bool) {
        let Some(mut process) = self.process.take() else {
            return;
        };
        self.note(match held {
            true => "stdout still open after the CLI exited: a process it started holds it",
            false => "stdout closed",
        });
        if held {
            self.reader.stop();
        }
        // Its stdin closes too (once what is queued is written), so a CLI that closed only its
        // output sees the end of its input at once.
        self.writer = None;
        if self.lines_read > 0 {
            let running = process.try_status().is_none();
            self.begin_stop(process, false, Then::OutputEnded { running });
            return;
        }
        let error: LaunchError = process.exited_early().await;
        if let LaunchError::ExitedEarly {
            status,
            stderr_tail,
            ..
        } = &error
        {
            self.exited(Ok(ExitInfo {
                status: *status,
                stopped: Stopped::AlreadyExited,
                stderr_tail: stderr_tail.clone(),
            }));
        }
        // Nothing was read, so `initialize` cannot have been answered.
        let why = error.to_string();
        self.set_ready(Err(error.into()));
        if let Some(undelivered) = self.writer_task.try_failed() {
            self.note_undelivered(&undelivered);
        }
        let result = self.exit.clone().ok_or_else(|| Error::Closed(why.clone()));
        let result = self.end(&why, result).await;
        self.answer_waiters(result);
    }

    /// Records how the CLI ended: in the transcript, and for [`Claude::wait`].
    pub(super) fn exited(&mut self, exit: Result<ExitInfo, String>) {
        match exit {
            Ok(info) => {
                let how = match info.stopped {
                    Stopped::Terminated => " (after SIGTERM)",
                    Stopped::Killed => " (after SIGKILL)",
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

    /// The host closes the session (`now`: without the exit grace; `reply`: the `close` that
    /// waits). Returns whether the driver ends now (the CLI was gone already); else the CLI is
    /// being stopped.
    pub(super) async fn close(
        &mut self,
        reply: Option<oneshot::Sender<Result<ExitInfo, Error>>>,
        now: bool,
    ) -> bool {
        self.close_stdin().await;
        match self.process.take() {
            Some(process) => {
                self.begin_stop(process, now, Then::Closed(reply));
                false
            }
            None => {
                let result = self.ended_base();
                self.close_with(reply, result).await;
                true
            }
        }
    }

    /// Ends a session the host closed, with `result`, and tells the `close` that waits.
    async fn close_with(
        &mut self,
        reply: Option<oneshot::Sender<Result<ExitInfo, Error>>>,
        result: Result<ExitInfo, Error>,
    ) {
        let result = self.end("closed by the host", result).await;
        // A consumer that stopped reading must not make `close` wait forever: the last events
        // go in over the queue's capacity.
        self.events.push_all(self.session.events_mut());
        self.seen = 0;
        self.exit_waiters.extend(reply);
        self.answer_waiters(result);
    }

    /// A write to the CLI's stdin failed: the lines not written are noted in the transcript.
    /// A CLI that is exiting (its stdin closes as it exits) then ends as any exit does. One that
    /// still runs has closed its input, so nothing sent to it can arrive: the session ends with
    /// [`Error::InputClosed`] and the CLI is stopped at once, its output read and delivered
    /// meanwhile.
    pub(super) async fn input_closed(&mut self, undelivered: Undelivered) {
        self.writer = None;
        let not_delivered = self.note_undelivered(&undelivered);
        let Some(mut process) = self.process.take() else {
            return;
        };
        let exiting = tokio::time::timeout(EXITING_WITHIN, process.wait()).await;
        if matches!(exiting, Ok(Ok(_))) {
            self.process = Some(process);
            return;
        }
        let error = undelivered.error;
        tracing::warn!(%error, not_delivered, "the CLI closed its stdin while it ran");
        self.note(&format!(
            "the CLI closed its stdin while it ran ({error}): stopping it"
        ));
        let then = Then::InputClosed {
            error,
            not_delivered,
        };
        self.begin_stop(process, true, then);
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

    /// Ends the session once the CLI is gone: handlers still running are cancelled, the core
    /// fails what still waits, the handle learns `why` (unless it knows a reason already), what
    /// waits for the store gets there (or is reported), and the transcript is flushed.
    /// Returns how it ended: `result`, or [`Error::NotWritten`] holding it.
    async fn end(&mut self, why: &str, result: Result<ExitInfo, Error>) -> Result<ExitInfo, Error> {
        self.phase = Phase::Ended;
        self.running.abort_all();
        self.running_ids.clear();
        self.session.handle_exit(why);
        self.shared
            .lock()
            .expect("shared state")
            .ended
            .get_or_insert_with(|| why.to_owned());
        // An `initialize` still waiting fails as the core says.
        self.settle().await;
        self.finish_mirror().await;
        self.flush_transcript();
        self.with_losses(result)
    }

    /// Tells every `close` and `wait` how the session ended.
    fn answer_waiters(&mut self, result: Result<ExitInfo, Error>) {
        for waiter in std::mem::take(&mut self.exit_waiters) {
            // A caller that stopped waiting (a host stopped by a signal) has nothing to be told.
            let _ = waiter.send(result.clone());
        }
    }
}
