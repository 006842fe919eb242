//! Limits any number of sessions share in one process: how many run a turn at once, how much
//! they may spend together, and a hold on new turns while the API's rate limit is spent.
//! Each session given the same [`Limits`] ([`Options::limits`](crate::Options::limits)) takes
//! part; what it spent is counted at each result, per session and in all.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};

/// Limits shared by sessions: clone it into each one's options.
///
/// ```no_run
/// use byre_session::{Limits, Options};
///
/// // At most two turns at once among every session given these limits, $5 in all.
/// let limits = Limits::new().max_running_turns(2).budget_usd(5.0);
/// let options = Options::new().limits(limits.clone());
/// // ... start any number of sessions with `options`, then:
/// println!("spent ${:.2} of $5", limits.spent_usd());
/// ```
#[derive(Clone, Debug, Default)]
pub struct Limits(Arc<Inner>);

#[derive(Debug, Default)]
struct Inner {
    /// Permits for running turns, and how many there are.
    turns: Option<(Arc<Semaphore>, usize)>,
    /// The shared budget, in US dollars.
    budget: Option<f64>,
    state: Mutex<State>,
    /// Wakes the sessions that wait for a rate-limit hold to end.
    changed: Notify,
}

#[derive(Debug, Default)]
struct State {
    /// What each session spent (by session id), and in all.
    spent: HashMap<String, f64>,
    total: f64,
    /// No turn starts before this (a rate limit the CLI reported as spent).
    hold_until: Option<SystemTime>,
}

impl Limits {
    /// No limit yet: each setter adds one. Set them before cloning the limits into options.
    pub fn new() -> Self {
        Limits::default()
    }

    /// At most `n` sessions run a turn at once (at least one); a prompt sent to another waits,
    /// in the order sent, until one of them is idle. A session holds its place from its first
    /// prompt until it is idle (its result, and no prompt queued).
    pub fn max_running_turns(mut self, n: usize) -> Self {
        let n = n.max(1);
        self.inner_mut().turns = Some((Arc::new(Semaphore::new(n)), n));
        self
    }

    /// The sessions may spend `usd` together: once it is spent, `Claude::send` refuses new
    /// prompts ([`Error::BudgetSpent`](crate::Error::BudgetSpent)), and each session starts
    /// with what is left as its own `--max-budget-usd`, so the CLI itself ends a turn that
    /// would go beyond it. Spending is counted from each result (the CLI reports cost there),
    /// so the sessions running when the budget runs out can each go over by one model call.
    pub fn budget_usd(mut self, usd: f64) -> Self {
        self.inner_mut().budget = Some(usd.max(0.0));
        self
    }

    fn inner_mut(&mut self) -> &mut Inner {
        Arc::get_mut(&mut self.0).expect("set the limits before cloning them into options")
    }

    /// What the sessions spent together, in US dollars.
    pub fn spent_usd(&self) -> f64 {
        self.state().total
    }

    /// What the session `session_id` spent, in US dollars.
    pub fn spent_by(&self, session_id: &str) -> f64 {
        self.state()
            .spent
            .get(session_id)
            .copied()
            .unwrap_or_default()
    }

    /// What is left of the budget; `None` without one.
    pub fn remaining_usd(&self) -> Option<f64> {
        let budget = self.0.budget?;
        Some((budget - self.spent_usd()).max(0.0))
    }

    /// How many sessions run a turn now (with [`max_running_turns`](Limits::max_running_turns)).
    pub fn running_turns(&self) -> usize {
        match &self.0.turns {
            Some((permits, n)) => n - permits.available_permits(),
            None => 0,
        }
    }

    /// Until when new turns wait for the API's rate limit, if they do.
    pub fn held_until(&self) -> Option<SystemTime> {
        self.state()
            .hold_until
            .filter(|until| *until > SystemTime::now())
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.0.state.lock().expect("limits")
    }

    /// Whether the budget is spent: the spend and the budget.
    pub(crate) fn spent_budget(&self) -> Option<(f64, f64)> {
        let budget = self.0.budget?;
        let spent = self.spent_usd();
        (spent >= budget).then_some((spent, budget))
    }

    /// Whether a turn needs a permit before it starts.
    pub(crate) fn caps_turns(&self) -> bool {
        self.0.turns.is_some()
    }

    /// Counts `usd` more spent by `session_id`.
    pub(crate) fn spend(&self, session_id: &str, usd: f64) {
        if !(usd.is_finite() && usd > 0.0) {
            return;
        }
        let mut state = self.state();
        *state.spent.entry(session_id.to_owned()).or_default() += usd;
        state.total += usd;
    }

    /// Holds new turns until `until` (a rate limit reported as spent, with its reset).
    pub(crate) fn hold_until(&self, until: SystemTime) {
        let mut state = self.state();
        if state.hold_until.is_none_or(|held| held < until) {
            state.hold_until = Some(until);
        }
        drop(state);
        self.0.changed.notify_waiters();
    }

    /// Waits out a rate-limit hold, then for a running-turn permit (`None` without a cap).
    /// Cancel-safe; kept alive, it keeps its place in the queue.
    pub(crate) async fn admit(self) -> Option<OwnedSemaphorePermit> {
        loop {
            let notified = self.0.changed.notified();
            let Some(until) = self.held_until() else {
                break;
            };
            let wait = until
                .duration_since(SystemTime::now())
                .unwrap_or(Duration::ZERO);
            tokio::select! {
                () = tokio::time::sleep(wait) => {}
                () = notified => {}
            }
        }
        let (permits, _) = self.0.turns.as_ref()?;
        permits.clone().acquire_owned().await.ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn new_turns_wait_out_a_spent_rate_limit_and_a_full_cap() {
        let limits = Limits::new().max_running_turns(1);
        let first = limits.clone().admit().await.expect("a permit");
        assert_eq!(limits.running_turns(), 1);
        // The cap is full: the next waits until the first is given back.
        let next = tokio::spawn(limits.clone().admit());
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!next.is_finished());
        drop(first);
        let second = next.await.unwrap().expect("a permit");
        drop(second);
        // A rate limit spent until 300 ms from now holds every new turn until then.
        let until = SystemTime::now() + Duration::from_millis(300);
        limits.hold_until(until);
        assert!(limits.held_until().is_some());
        let started = std::time::Instant::now();
        let permit = limits.clone().admit().await;
        assert!(permit.is_some());
        assert!(
            started.elapsed() >= Duration::from_millis(250),
            "{:?}",
            started.elapsed()
        );
        assert!(limits.held_until().is_none());
    }

    #[test]
    fn spending_is_counted_per_session_and_in_all() {
        let limits = Limits::new().budget_usd(1.0);
        limits.spend("a", 0.25);
        limits.spend("b", 0.5);
        limits.spend("a", f64::NAN);
        limits.spend("a", -3.0);
        assert_eq!(limits.spent_by("a"), 0.25);
        assert_eq!(limits.spent_usd(), 0.75);
        assert_eq!(limits.remaining_usd(), Some(0.25));
        assert_eq!(limits.spent_budget(), None);
        limits.spend("b", 0.25);
        assert_eq!(limits.spent_budget(), Some((1.0, 1.0)));
    }
}
