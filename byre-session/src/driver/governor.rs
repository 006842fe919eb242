//! One session's part in shared [`Limits`]: its prompts wait for a running-turn permit (and
//! out a rate-limit hold), the permit is held until the session is idle, and each result's
//! cost and each rate limit reported spent reach the shared limits.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, UNIX_EPOCH};

use byre_proto::{CliMessage, ResultMessage, UserMessage};
use tokio::sync::OwnedSemaphorePermit;

use super::limits::Limits;
use crate::turns::TurnTracker;

type Admission = Pin<Box<dyn Future<Output = Option<OwnedSemaphorePermit>> + Send>>;

/// The session's side of the limits.
pub(super) struct Governor {
    limits: Limits,
    /// Held from the first prompt until the session is idle.
    permit: Option<OwnedSemaphorePermit>,
    /// Prompts sent while the session waits for its permit, in order.
    waiting: VecDeque<UserMessage>,
    /// The wait for the permit, kept so it keeps its place in the queue.
    admission: Option<Admission>,
    /// The session's cumulative cost at its last result.
    last_total: Option<f64>,
}

impl std::fmt::Debug for Governor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Governor")
            .field("limits", &self.limits)
            .field("permit", &self.permit.is_some())
            .field("waiting", &self.waiting.len())
            .finish_non_exhaustive()
    }
}

impl Governor {
    pub(super) fn new(limits: Limits) -> Self {
        Governor {
            limits,
            permit: None,
            waiting: VecDeque::new(),
            admission: None,
            last_total: None,
        }
    }

    /// A prompt to send: given back when it may go now, else kept until the session is
    /// admitted ([`Governor::poll_admitted`]).
    pub(super) fn admit(&mut self, message: UserMessage) -> Option<UserMessage> {
        let free = !self.limits.caps_turns() && self.limits.held_until().is_none();
        if self.waiting.is_empty() && (self.permit.is_some() || free) {
            return Some(message);
        }
        self.waiting.push_back(message);
        if self.admission.is_none() {
            self.admission = Some(Box::pin(self.limits.clone().admit()));
        }
        None
    }

    /// Whether prompts wait to be admitted.
    pub(super) fn waits(&self) -> bool {
        self.admission.is_some()
    }

    /// The prompts that may go now, once the session is admitted.
    pub(super) fn poll_admitted(&mut self, cx: &mut Context<'_>) -> Poll<Vec<UserMessage>> {
        let Some(admission) = &mut self.admission else {
            return Poll::Pending;
        };
        let permit = std::task::ready!(admission.as_mut().poll(cx));
        self.admission = None;
        if permit.is_some() {
            self.permit = permit;
        }
        Poll::Ready(self.waiting.drain(..).collect())
    }

    /// Gives the permit back once the session is idle: no turn running, none queued in the
    /// CLI, no prompt waiting here.
    pub(super) fn release_if_idle(&mut self, turns: &TurnTracker) {
        if self.permit.is_some()
            && self.waiting.is_empty()
            && !turns.turn_running()
            && turns.queued_user_messages() == 0
        {
            self.permit = None;
        }
    }

    /// Counts what a result cost, and holds new turns while a rate limit is spent.
    pub(super) fn observe(&mut self, message: &CliMessage) {
        match message {
            CliMessage::Result(result) => {
                let session = result.session_id.as_deref().unwrap_or_default();
                let cost = self.turn_cost(result);
                self.limits.spend(session, cost);
            }
            CliMessage::RateLimitEvent(event) => {
                let info = &event.rate_limit_info;
                let resets = info.resets_at.as_ref().and_then(|n| n.as_f64());
                if let (Some("rejected"), Some(resets)) = (info.status.as_deref(), resets) {
                    if resets.is_finite() && resets > 0.0 {
                        self.limits
                            .hold_until(UNIX_EPOCH + Duration::from_secs_f64(resets));
                    }
                }
            }
            _ => {}
        }
    }

    /// What the turn of `result` cost: its models' costs since the last result, else the
    /// growth of the session's cumulative cost.
    fn turn_cost(&mut self, result: &ResultMessage) -> f64 {
        let total = result.total_cost_usd.as_ref().and_then(|n| n.as_f64());
        let since_last = result.model_usage_since_last_result.as_ref().map(|models| {
            models
                .values()
                .filter_map(|usage| usage.cost_usd.as_ref().and_then(|n| n.as_f64()))
                .sum::<f64>()
        });
        let cost = match (since_last, total) {
            (Some(cost), _) => cost,
            (None, Some(total)) => total - self.last_total.unwrap_or_default(),
            (None, None) => 0.0,
        };
        if total.is_some() {
            self.last_total = total;
        }
        cost
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(json: &str) -> CliMessage {
        json.parse().expect("a CLI line")
    }

    #[test]
    fn results_are_counted_and_a_spent_rate_limit_holds_new_turns() {
        let limits = Limits::new();
        let mut governor = Governor::new(limits.clone());
        // The turn's own models' cost when the CLI gives it; else the growth of the total.
        governor.observe(&line(
            r#"{"type":"result","subtype":"success","session_id":"s","total_cost_usd":0.5,
            "model_usage_since_last_result":{"m":{"costUSD":0.2}}}"#,
        ));
        assert!((limits.spent_by("s") - 0.2).abs() < 1e-12);
        governor.observe(&line(
            r#"{"type":"result","subtype":"success","session_id":"s","total_cost_usd":0.8}"#,
        ));
        assert!((limits.spent_by("s") - 0.5).abs() < 1e-12);
        let resets = std::time::SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs()
            + 100;
        let event = |status: &str| {
            line(&format!(
                r#"{{"type":"rate_limit_event",
                "rate_limit_info":{{"status":"{status}","resetsAt":{resets}}}}}"#
            ))
        };
        governor.observe(&event("allowed_warning"));
        assert!(limits.held_until().is_none(), "a warning holds nothing");
        governor.observe(&event("rejected"));
        assert!(limits.held_until().is_some());
        // A prompt now waits for the hold to end.
        assert!(governor.admit(UserMessage::prompt("later")).is_none());
        assert!(governor.waits());
    }
}
