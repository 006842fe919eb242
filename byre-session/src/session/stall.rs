//! The stall watch: a turn that hears nothing from the CLI for a set time (no line at all:
//! a running tool's `tool_progress` heartbeat is a line) is reported once per silence, and
//! the CLI interrupted when asked. Time the CLI spends waiting for the host (a permission
//! prompt, a hook, an in-process tool) is not silence, and the clock starts again when the
//! host answers or sends.

use std::time::{Duration, Instant};

/// What to do when a turn goes silent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StallPolicy {
    /// How long a turn may hear nothing from the CLI.
    pub after: Duration,
    /// Whether the core also sends `interrupt`, so a CLI that still reads ends the turn.
    pub interrupt: bool,
}

impl StallPolicy {
    /// Reports a turn silent for `after`, and interrupts it.
    pub fn new(after: Duration) -> Self {
        StallPolicy {
            after,
            interrupt: true,
        }
    }
}

/// The watch's clock.
#[derive(Debug, Default)]
pub(super) struct StallWatch {
    policy: Option<StallPolicy>,
    /// The last sign of life: a line, a message or answer sent.
    since: Option<Instant>,
    /// Whether this silence was reported already.
    reported: bool,
}

impl StallWatch {
    pub(super) fn new(policy: Option<StallPolicy>) -> Self {
        StallWatch {
            policy,
            since: None,
            reported: false,
        }
    }

    /// Something happened at `now` (a line read, a message or answer sent): the silence, if
    /// any, is over.
    pub(super) fn alive(&mut self, now: Instant) {
        self.since = Some(now);
        self.reported = false;
    }

    /// When the running turn counts as stalled; `None` when no turn waits on the CLI
    /// (`waiting`: a turn runs or is queued, and the CLI waits for no answer of the host's).
    pub(super) fn deadline(&self, waiting: bool) -> Option<Instant> {
        let policy = self.policy?;
        if !waiting || self.reported {
            return None;
        }
        self.since?.checked_add(policy.after)
    }

    /// At `now`: how long the turn has been silent, once, when that is past the limit; with
    /// whether to interrupt.
    pub(super) fn check(&mut self, now: Instant, waiting: bool) -> Option<(Duration, bool)> {
        let deadline = self.deadline(waiting)?;
        if now < deadline {
            return None;
        }
        self.reported = true;
        let silent = now.saturating_duration_since(self.since?);
        Some((silent, self.policy?.interrupt))
    }
}
