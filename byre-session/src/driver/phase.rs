//! Where a session is on its way to its end ([`Phase`]), and what a stop under way waits on.
//! The driver loop moves between the phases (`ending.rs` says what each move does).

use std::future::Future;
use std::pin::Pin;
use std::time::Instant;

use byre_transport::{CliProcess, ExitInfo};
use tokio::sync::oneshot;

use super::error::Error;
use super::reader::{DRAIN_MAX, DRAIN_QUIET};

/// Where the session is on its way to its end.
pub(super) enum Phase {
    /// The CLI runs. `exited`: once it was seen to exit by itself, the clock of reading the
    /// rest of its stdout, until it ends or stays quiet (a process it started may hold it).
    Running { exited: Option<Drain> },
    /// The CLI is being stopped; what it writes is still read and delivered at the consumer's
    /// pace, and the handle's commands are carried out.
    Stopping(Box<Stopping>),
    /// The CLI is gone: what is left in its pipe is read, for as long as it keeps coming
    /// (`drain`); then the session ends.
    Draining {
        exit: std::io::Result<ExitInfo>,
        then: Then,
        drain: Drain,
    },
    /// The session has ended: its last events are handed over and commands refused, until the
    /// handle goes away.
    Ended,
}

/// A stop under way.
pub(super) struct Stopping {
    /// The CLI during its exit grace (stdin closed), which ends at `grace_over`.
    pub(super) waiting: Option<CliProcess>,
    pub(super) grace_over: Instant,
    /// Then its shutdown or termination.
    pub(super) under_way: Option<StopFuture>,
    /// What the session does once the CLI is gone.
    pub(super) then: Then,
}

/// A CLI's shutdown or termination.
pub(super) type StopFuture = Pin<Box<dyn Future<Output = std::io::Result<ExitInfo>> + Send>>;

/// Why the CLI is stopped, and so how the session ends once it is gone.
pub(super) enum Then {
    /// Its stdout ended; `running`: while it still ran (it closed its output).
    OutputEnded { running: bool },
    /// The host closed the session (`reply`: the `close` that waits; none when every handle
    /// went away). The driver ends with it.
    Closed(Option<oneshot::Sender<Result<ExitInfo, Error>>>),
    /// The CLI closed its stdin while it ran: nothing sent to it can arrive.
    InputClosed {
        error: std::io::Error,
        not_delivered: usize,
    },
}

/// What a stop under way came to.
pub(super) enum StopStep {
    /// The CLI exited by itself within its exit grace.
    Exited,
    /// The stop ended: how the CLI ended.
    Stopped(std::io::Result<ExitInfo>),
}

impl Phase {
    /// Whether the CLI runs and the driver serves it (handlers, timeouts, the store).
    pub(super) fn is_running(&self) -> bool {
        matches!(self, Phase::Running { .. })
    }

    /// When the phase's own clock next needs the loop: the end of a drain or of an exit grace.
    pub(super) fn deadline(&self) -> Option<Instant> {
        match self {
            Phase::Stopping(stop) if stop.waiting.is_some() => Some(stop.grace_over),
            _ => self.drain()?.until(),
        }
    }

    /// The clock of reading what a gone CLI left in its pipe, while that is read.
    pub(super) fn drain(&self) -> Option<&Drain> {
        match self {
            Phase::Running {
                exited: Some(drain),
            }
            | Phase::Draining { drain, .. } => Some(drain),
            _ => None,
        }
    }

    /// [`Phase::drain`], to move its clock.
    pub(super) fn drain_mut(&mut self) -> Option<&mut Drain> {
        match self {
            Phase::Running {
                exited: Some(drain),
            }
            | Phase::Draining { drain, .. } => Some(drain),
            _ => None,
        }
    }

    /// What the stop under way comes to next (never, outside [`Phase::Stopping`]).
    pub(super) async fn stop_step(&mut self) -> StopStep {
        if let Phase::Stopping(stop) = self {
            if let Some(under_way) = &mut stop.under_way {
                return StopStep::Stopped(under_way.await);
            }
            if let Some(process) = &mut stop.waiting {
                if process.wait().await.is_ok() {
                    return StopStep::Exited;
                }
            }
        }
        std::future::pending().await
    }
}

/// The clock of reading what a CLI left in its pipe once it is gone: until the pipe stays
/// quiet for [`DRAIN_QUIET`], at most [`DRAIN_MAX`] of reading. Time in which the consumer
/// holds reading up does not count, so no line is left unread because the program was slow.
pub(super) struct Drain {
    since: Instant,
    last_lines: Instant,
    paused: Option<Instant>,
}

impl Drain {
    /// A drain starting `now`.
    pub(super) fn new(now: Instant) -> Drain {
        Drain {
            since: now,
            last_lines: now,
            paused: None,
        }
    }

    /// When it is over (none while it is paused).
    pub(super) fn until(&self) -> Option<Instant> {
        match self.paused {
            Some(_) => None,
            None => Some((self.last_lines + DRAIN_QUIET).min(self.since + DRAIN_MAX)),
        }
    }

    /// Lines came `now`.
    pub(super) fn lines(&mut self, now: Instant) {
        self.last_lines = now;
    }

    /// Whether reading may go on `now` (`false`: the consumer holds it up, and the clock
    /// stops until it may).
    pub(super) fn reading(&mut self, may: bool, now: Instant) {
        match (may, self.paused) {
            (false, None) => self.paused = Some(now),
            (true, Some(at)) => {
                let held = now.saturating_duration_since(at);
                self.since += held;
                self.last_lines += held;
                self.paused = None;
            }
            _ => {}
        }
    }
}
