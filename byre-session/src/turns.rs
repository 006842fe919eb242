//! Turn tracking: when the CLI starts and ends turns, what started them, when the run is
//! over, and the session id.

use std::collections::VecDeque;
use std::fmt;

use byre_proto::{
    CliMessage, CommandState, Origin, ResultMessage, ResultSubtype, SessionState, SystemMessage,
    TerminalReason,
};

/// Turn tracking for one CLI process: fed with what the host sends and what the CLI writes.
///
/// Call [`sent_user`](Self::sent_user) when writing a `user` line to the CLI and
/// [`observe`](Self::observe) with every line the CLI writes, in order; handle the events
/// `observe` returns. The queries can be asked at any time.
///
/// A [`TurnTracker`] is told what the host sends ([`TurnTracker::sent_user`] for each `user`
/// line) and sees every line the CLI writes ([`TurnTracker::observe`]). It answers with
/// [`TurnEvent`]s and with queries ([`TurnTracker::turn_running`], [`TurnTracker::is_idle`],
/// [`TurnTracker::may_close_stdin`], [`TurnTracker::session_id`]). It does no IO, reads no
/// clock and keeps only a little state: the running turn, the host messages the CLI has not
/// started yet, the background tasks, the task notifications that still owe a turn, the last
/// session state the CLI reported and the session id.
///
/// # The rules
///
/// - **A turn starts** when the CLI starts working: at `command_lifecycle` `started` (sent
///   only for host messages that carried a `uuid`, and *before* the turn's `system/init`), or
///   at `system/init` when no turn is running. The CLI sends `system/init` at the start of
///   every turn, not at launch. A `result` that arrives when no turn runs (a start-up failure
///   such as `--resume` of an unknown id, which sends a `result` and nothing else) starts and
///   ends one at once, so every `result` ends exactly one turn and every
///   [`TurnEvent::TurnEnded`] follows its [`TurnEvent::TurnStarted`].
/// - **A turn ends** at its `result`, exactly once. Lines that come after it do not belong to
///   a new turn: `command_lifecycle` `completed` (or `cancelled`) for the turn's messages
///   arrives *after* the `result`, and a background subagent's nested lines (those with a
///   `parent_tool_use_id`) can come after its parent's `result` too. Only `started` and
///   `system/init` start turns.
/// - **Queued messages merge.** Host messages sent while a turn runs are queued by the CLI,
///   and *all* of them become *one* next turn (3 inputs gave 2 turns in the recordings). The
///   turn's `user_message_uuids` (on `system/init` and on the `result`) and the `started`
///   states say which messages it took; uuids that join a running turn are reported by
///   [`TurnEvent::TurnMerged`], and [`TurnEvent::TurnEnded`] lists them all. The CLI reads
///   stdin in order, so when it starts a message, every message sent before it is taken too
///   (by this turn or an earlier one). Host messages without a `uuid` cannot be told apart:
///   a turn takes every one queued at its start. That is exact when they were sent while a
///   turn ran (they merge), but when several are sent at once before the first turn starts,
///   the first turn takes them all although the CLI may run the later ones as a second turn,
///   which is then reported with [`TurnOrigin::Other`]. Send uuids to make this exact.
/// - **Turns the CLI starts by itself.** When a background task (Bash with
///   `run_in_background`, a background subagent) finishes, the CLI sends `task_notification`
///   and `background_tasks_changed` without it, then starts a turn with no host input to tell
///   the model (a new `system/init`, no user line on stdout). Its `result` carries
///   `origin.kind == "task-notification"` with the task's `runId`. A `task_notification` for a
///   task known to run in the background therefore owes a turn: the next turn that starts
///   with no host message waiting is [`TurnOrigin::TaskNotification`], and the `result`'s
///   `origin` is authoritative when the turn ends. A foreground task's notification (a Bash
///   that ran long, a foreground subagent, an interrupted command) comes inside its turn and
///   owes nothing.
/// - **The run is over** ([`TurnEvent::RunIdle`]) when the CLI says `idle` with
///   `system/session_state_changed` and nothing else is left: no turn runs, no host message
///   waits, no background task runs and no task notification still owes a turn. The CLI
///   says `idle` after every `result`, also while a background task it started still runs
///   (a background Bash, observed with 2.1.332 and 2.1.328; for a background subagent it
///   stays `running`), so its word alone is not enough. It sends those lines when the
///   host asks for them (`CLAUDE_CODE_SDK_READS_SESSION_STATE=1`, which byre sets); the
///   recordings since 2.1.332 have them. Without them the tracker judges by what it saw.
/// - **stdin may be closed** ([`TurnTracker::may_close_stdin`]) when nothing runs or waits, as
///   above. When the host serves hooks, SDK MCP servers or permission prompts, the CLI may
///   still need stdin for their answers after a `result`, so then the run must also be idle by
///   the CLI's own report, if it sends reports at all.
/// - **The session id** comes with the first turn (`system/init`), not at launch, so with
///   uuids it is reported just after the first [`TurnEvent::TurnStarted`] (whose `started`
///   line comes before the `system/init`). The `result` carries it too, which covers a
///   start-up failure (no `system/init`; its id is the one `--resume` asked for). It is
///   reported once per process, and again if it changes (a tracker that outlives a
///   `--resume --fork-session` restart; `/clear` may do it in-process, not recorded). Other
///   lines carry it as well, but only these turn boundaries are trusted to change it.
#[derive(Debug, Clone, Default)]
pub struct TurnTracker {
    /// How many turns have started.
    started: u64,
    /// The running turn.
    current: Option<Turn>,
    /// Host messages the CLI has not started, in the order sent, with their uuids.
    queued: VecDeque<Option<String>>,
    /// Ids of the tasks running in the background.
    background: Vec<String>,
    /// Run ids of finished background tasks whose notification turn has not started.
    notifications: VecDeque<Option<String>>,
    /// The last state the CLI reported with `session_state_changed`, if it reports any.
    reported: Option<SessionState>,
    session_id: Option<String>,
}

/// A turn, numbered from 1 in the order turns started in one [`TurnTracker`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TurnId(u64);

impl TurnId {
    /// The turn's number.
    pub fn get(self) -> u64 {
        self.0
    }
}

impl fmt::Display for TurnId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "turn {}", self.0)
    }
}

/// What made the CLI start a turn.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TurnOrigin {
    /// User messages the host sent.
    Host,
    /// A background task finished and the CLI started the turn by itself to report it.
    TaskNotification {
        /// The task's run id (`run_id` of the task lines, `origin.runId` of the `result`).
        run_id: Option<String>,
    },
    /// Nothing the tracker saw explains it: a start-up failure `result`, or a turn the CLI
    /// started for a reason it did not announce.
    Other,
}

/// How a turn ended: the fields of its `result` that say so.
///
/// The `result` line itself can be megabytes long (it repeats the final text); the caller
/// has it, since it passed it to [`TurnTracker::observe`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnOutcome {
    /// `success`, or an error such as `error_during_execution` after an interrupt.
    pub subtype: ResultSubtype,
    /// Whether the turn ended in error (an API error gives `success` with `is_error`).
    pub is_error: bool,
    /// Why the turn stopped (`completed`, `aborted_tools`, `aborted_streaming`, ...).
    pub terminal_reason: Option<TerminalReason>,
}

/// What a [`TurnTracker`] reports.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TurnEvent {
    /// The session id, the first time it is seen or when it changed.
    SessionId {
        /// The id now.
        session_id: String,
        /// The id before, when it changed.
        previous: Option<String>,
    },
    /// The CLI started a turn.
    TurnStarted {
        /// The turn.
        turn: TurnId,
        /// The uuids of the host messages it started with, when they had uuids.
        user_message_uuids: Vec<String>,
        /// What started it.
        origin: TurnOrigin,
    },
    /// More host messages joined the running turn (queued messages merge).
    TurnMerged {
        /// The turn.
        turn: TurnId,
        /// Every message uuid of the turn so far.
        user_message_uuids: Vec<String>,
    },
    /// The turn's `result` arrived.
    TurnEnded {
        /// The turn.
        turn: TurnId,
        /// What started it (the `result`'s `origin` corrects a guess).
        origin: TurnOrigin,
        /// Every host message uuid the turn took.
        user_message_uuids: Vec<String>,
        /// How it ended.
        outcome: TurnOutcome,
    },
    /// The run is over: the CLI reported `session_state_changed` `idle` and no turn runs,
    /// no host message waits and no background task runs or owes a turn. Only from a CLI
    /// that reports its state (byre asks for it).
    RunIdle,
}

impl TurnTracker {
    /// A tracker for a CLI process that has not started any turn.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records a `user` line the host writes to the CLI, with its `uuid` if it has one.
    pub fn sent_user(&mut self, uuid: Option<&str>) {
        self.queued.push_back(uuid.map(str::to_owned));
    }

    /// Takes in one line the CLI wrote and returns what it means for turns, in order.
    #[must_use]
    pub fn observe(&mut self, message: &CliMessage) -> Vec<TurnEvent> {
        let mut events = Vec::new();
        let was_idle = self.reported.is_some() && self.is_idle();
        match message {
            CliMessage::System(SystemMessage::Init(init)) => {
                self.note_session(init.session_id.as_deref(), &mut events);
                let named = init.user_message_uuids.as_deref().unwrap_or_default();
                if self.current.is_some() {
                    self.merge(named, true, &mut events);
                } else {
                    self.start(named, None, &mut events);
                }
            }
            CliMessage::CommandLifecycle(lifecycle) => {
                let uuid = std::slice::from_ref(&lifecycle.command_uuid);
                if lifecycle.state == CommandState::STARTED {
                    if self.current.is_some() {
                        self.merge(uuid, true, &mut events);
                    } else {
                        self.start(uuid, None, &mut events);
                    }
                } else if lifecycle.state == CommandState::COMPLETED
                    || lifecycle.state == CommandState::CANCELLED
                {
                    // A message dropped before it ran leaves the queue. For one that ran, this
                    // comes after its turn's result and changes nothing.
                    self.queued
                        .retain(|q| q.as_deref() != Some(&lifecycle.command_uuid));
                }
            }
            CliMessage::Result(result) => {
                self.note_session(result.session_id.as_deref(), &mut events);
                self.end(result, &mut events);
            }
            CliMessage::System(SystemMessage::TaskStarted(task))
                if task.is_backgrounded == Some(true) =>
            {
                self.add_background(&task.task_id);
            }
            CliMessage::System(SystemMessage::TaskUpdated(task))
                if task.patch.as_ref().and_then(|p| p.is_backgrounded) == Some(true) =>
            {
                // A running task was sent to the background.
                self.add_background(&task.task_id);
            }
            CliMessage::System(SystemMessage::BackgroundTasksChanged(changed)) => {
                self.background = changed.tasks.iter().map(|t| t.task_id.clone()).collect();
            }
            CliMessage::System(SystemMessage::TaskNotification(note)) => {
                // The observed order is task_notification, then background_tasks_changed
                // without the task: the task is still listed here.
                if let Some(at) = self.background.iter().position(|id| *id == note.task_id) {
                    self.background.remove(at);
                    self.notifications.push_back(note.run_id.clone());
                }
            }
            CliMessage::System(SystemMessage::SessionStateChanged(changed)) => {
                self.reported = Some(changed.state.clone());
            }
            _ => {}
        }
        // The CLI says `idle` after each result, background tasks still running or not: the
        // run is over when it says so and nothing else is left.
        if !was_idle && self.reported.is_some() && self.is_idle() {
            events.push(TurnEvent::RunIdle);
        }
        events
    }

    /// The session id, once a turn boundary has carried it.
    pub fn session_id(&self) -> Option<&str> {
        self.session_id.as_deref()
    }

    /// Whether a turn is running (started, and its `result` not seen).
    pub fn turn_running(&self) -> bool {
        self.current.is_some()
    }

    /// The running turn, if any.
    pub fn current_turn(&self) -> Option<TurnId> {
        self.current.as_ref().map(|turn| turn.id)
    }

    /// How many host messages the CLI has not started yet.
    pub fn queued_user_messages(&self) -> usize {
        self.queued.len()
    }

    /// Whether a task runs in the background, or one finished and its notification turn has
    /// not started yet.
    pub fn background_work(&self) -> bool {
        !self.background.is_empty() || !self.notifications.is_empty()
    }

    /// Whether the run is over: no turn runs, no host message waits, no background work is
    /// left, and, if the CLI reports its state, it last reported `idle`.
    pub fn is_idle(&self) -> bool {
        self.settled()
            && self
                .reported
                .as_ref()
                .is_none_or(|s| *s == SessionState::IDLE)
    }

    /// Whether the host may close the CLI's stdin now without losing anything.
    ///
    /// Only when no turn runs, no host message waits and no background work is left. When
    /// the host serves hooks, SDK MCP servers or permission prompts
    /// (`has_bidirectional_handlers`), the CLI may still ask it something after a `result`,
    /// so the run must also be idle by the CLI's own report (when it reports its state).
    pub fn may_close_stdin(&self, has_bidirectional_handlers: bool) -> bool {
        if has_bidirectional_handlers {
            self.is_idle()
        } else {
            self.settled()
        }
    }

    fn settled(&self) -> bool {
        self.current.is_none() && self.queued.is_empty() && !self.background_work()
    }

    fn note_session(&mut self, id: Option<&str>, events: &mut Vec<TurnEvent>) {
        let Some(id) = id.filter(|id| !id.is_empty()) else {
            return;
        };
        if self.session_id.as_deref() == Some(id) {
            return;
        }
        let previous = self.session_id.replace(id.to_owned());
        events.push(TurnEvent::SessionId {
            session_id: id.to_owned(),
            previous,
        });
    }

    /// Starts a turn that took the host messages `named` (or, when none is named, the queued
    /// messages without uuids).
    fn start(&mut self, named: &[String], reported: Option<&Origin>, events: &mut Vec<TurnEvent>) {
        let from_host = self.take_queued(named);
        let origin = match notification_origin(reported) {
            Some(origin) => {
                self.forget_notification(&origin);
                origin
            }
            None if from_host => TurnOrigin::Host,
            None => match self.notifications.pop_front() {
                Some(run_id) => TurnOrigin::TaskNotification { run_id },
                None => TurnOrigin::Other,
            },
        };
        self.started += 1;
        let id = TurnId(self.started);
        if self.reported == Some(SessionState::IDLE) {
            // Do not let a stale `idle` from the last run count for this one.
            self.reported = Some(SessionState::RUNNING);
        }
        let mut uuids = Vec::new();
        add_new(&mut uuids, named);
        events.push(TurnEvent::TurnStarted {
            turn: id,
            user_message_uuids: uuids.clone(),
            origin: origin.clone(),
        });
        self.current = Some(Turn { id, origin, uuids });
    }

    /// Adds the host messages `named` to the running turn.
    fn merge(&mut self, named: &[String], report: bool, events: &mut Vec<TurnEvent>) {
        if named.is_empty() {
            return;
        }
        self.take_queued(named);
        let Some(turn) = self.current.as_mut() else {
            return;
        };
        if add_new(&mut turn.uuids, named) && report {
            events.push(TurnEvent::TurnMerged {
                turn: turn.id,
                user_message_uuids: turn.uuids.clone(),
            });
        }
    }

    /// Ends the running turn (starting one first if none runs) with its `result`.
    fn end(&mut self, result: &ResultMessage, events: &mut Vec<TurnEvent>) {
        let named = match (&result.user_message_uuids, &result.user_message_uuid) {
            (Some(list), _) => list.clone(),
            (None, Some(one)) => vec![one.clone()],
            (None, None) => Vec::new(),
        };
        if self.current.is_some() {
            self.merge(&named, false, events);
        } else {
            self.start(&named, result.origin.as_ref(), events);
        }
        let Some(turn) = self.current.take() else {
            return;
        };
        let mut origin = turn.origin;
        if let Some(reported) = notification_origin(result.origin.as_ref()) {
            if reported != origin {
                // The guess at the start was wrong: put back what it took, take the right one.
                if let TurnOrigin::TaskNotification { run_id } = origin {
                    self.notifications.push_front(run_id);
                }
                self.forget_notification(&reported);
            }
            origin = reported;
        }
        events.push(TurnEvent::TurnEnded {
            turn: turn.id,
            origin,
            user_message_uuids: turn.uuids,
            outcome: TurnOutcome {
                subtype: result.subtype.clone(),
                is_error: result.is_error.unwrap_or(false),
                terminal_reason: result.terminal_reason.clone(),
            },
        });
    }

    /// Takes the host messages a starting or growing turn took off the queue; says whether
    /// any host message is in it.
    ///
    /// The CLI reads stdin in order, so everything sent before the last named message went
    /// with it. With no name, the messages without uuids at the head of the queue merge.
    fn take_queued(&mut self, named: &[String]) -> bool {
        if named.is_empty() {
            let before = self.queued.len();
            while let Some(None) = self.queued.front() {
                self.queued.pop_front();
            }
            return self.queued.len() < before;
        }
        let last = self
            .queued
            .iter()
            .rposition(|q| q.as_ref().is_some_and(|uuid| named.contains(uuid)));
        if let Some(last) = last {
            self.queued.drain(..=last);
        }
        true
    }

    fn add_background(&mut self, task_id: &str) {
        if !self.background.iter().any(|id| id == task_id) {
            self.background.push(task_id.to_owned());
        }
    }

    /// Drops the owed notification a notification turn answered (the first one, when the
    /// `result` names no run).
    fn forget_notification(&mut self, origin: &TurnOrigin) {
        let TurnOrigin::TaskNotification { run_id } = origin else {
            return;
        };
        let at = match run_id {
            Some(_) => self.notifications.iter().position(|owed| owed == run_id),
            None => (!self.notifications.is_empty()).then_some(0),
        };
        if let Some(at) = at {
            self.notifications.remove(at);
        }
    }
}

/// The running turn.
#[derive(Debug, Clone)]
struct Turn {
    id: TurnId,
    origin: TurnOrigin,
    uuids: Vec<String>,
}

/// The origin a `result` reports, when it says the CLI started the turn for a task.
fn notification_origin(origin: Option<&Origin>) -> Option<TurnOrigin> {
    let origin = origin.filter(|o| o.kind == TASK_NOTIFICATION)?;
    Some(TurnOrigin::TaskNotification {
        run_id: origin.run_id.clone(),
    })
}

/// Appends the uuids of `new` that `uuids` lacks; says whether any was added.
fn add_new(uuids: &mut Vec<String>, new: &[String]) -> bool {
    let before = uuids.len();
    for uuid in new {
        if !uuids.contains(uuid) {
            uuids.push(uuid.clone());
        }
    }
    uuids.len() > before
}

/// `origin.kind` of a turn the CLI started after a background task finished.
const TASK_NOTIFICATION: &str = "task-notification";
