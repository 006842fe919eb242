//! The live tree of tasks (Bash commands, subagents, workflows) built from `system/task_*`,
//! `system/background_tasks_changed` and `tool_progress` lines.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::turns::TurnEvent;
use byre_proto::{
    AssistantMessage, BackgroundTask, BackgroundTasksChangedMessage, CliMessage, ContentBlock,
    Number, SystemMessage, TaskNotificationMessage, TaskProgressMessage, TaskStartedMessage,
    TaskStatus, TaskType, TaskUpdatedMessage, TaskUsage, ToolProgressMessage,
};

/// The live tree of tasks. Feed it every CLI line with [`observe`](Self::observe).
///
/// The CLI reports a task's life on several lines, none of which holds the whole picture:
///
/// - `task_started` opens it (its id, the tool call that started it, its kind, whether it runs
///   in the background, a subagent's type, prompt and depth);
/// - `task_progress` (subagents only) brings usage so far, the last tool used and what the
///   subagent is doing now;
/// - `task_updated` patches it (`status`, `end_time`, ...): a terminal status such as `killed`
///   may arrive this way; it is not sent for a foreground Bash;
/// - `task_notification` ends it (`completed`, `failed`, `stopped`) with a summary, usage and
///   output file;
/// - `background_tasks_changed` lists *every* background task now running: each one replaces
///   the last, and a task missing from it is no longer running;
/// - `tool_progress` heartbeats (every 30 s) name the running tool call as
///   `<id>-heartbeat-N`, with `parent_tool_use_id` the call itself (not a subagent).
///
/// A [`TaskTree`] folds these into one [`Task`] per task id and reports changes as
/// [`TaskEvent`]s. Tasks nest: a task started from a tool call that a subagent made (an
/// `assistant` line whose `parent_tool_use_id` is the subagent's Agent call) is a child of that
/// subagent's task, and so is a task whose `task_started` names a `parent_task_id` or carries
/// that `parent_tool_use_id`. The `assistant` and `user` lines of a subagent (those with a
/// `parent_tool_use_id`) are counted on its task; [`TaskTree::owner_of`] tells which task a
/// line belongs to, so they can be kept apart from the parent's conversation.
///
/// # Memory
///
/// Finished tasks are kept, so their summary and usage stay readable, until
/// [`TaskTree::forget_finished`] is called (for example after each `result`). It removes every
/// task that is no longer running and has no running descendant.
#[derive(Debug, Default)]
pub struct TaskTree {
    /// Every task kept, by the order in which it was first seen.
    tasks: BTreeMap<u64, Task>,
    /// Task id → key in `tasks`.
    by_id: HashMap<String, u64>,
    /// The tool call that started a task → key in `tasks`.
    by_tool_use: HashMap<String, u64>,
    /// Tool calls made inside a subagent → the subagent's Agent call id.
    nested_calls: HashMap<String, String>,
    /// Subagent lines seen before their task started, by Agent call id.
    pending: HashMap<String, MessageCounts>,
    /// The last `background_tasks_changed` set.
    background: Vec<BackgroundTask>,
    next_key: u64,
    /// Where the tree stood when the last turn ended (see [`TaskTree::on_turn`]).
    turn_ended: Option<TaskMark>,
}

/// One task, as far as its lines told.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Task {
    /// The task id.
    pub task_id: String,
    /// The current run of it (a continued subagent starts a new run of the same task).
    pub run_id: Option<String>,
    /// The tool call that started it.
    pub tool_use_id: Option<String>,
    /// What it does (from `task_started`, or a `task_updated` patch).
    pub description: Option<String>,
    /// What a subagent is doing now (the `description` of its last `task_progress`).
    pub activity: Option<String>,
    /// `local_bash`, `local_agent`, ...
    pub task_type: Option<TaskType>,
    /// The subagent's type.
    pub subagent_type: Option<String>,
    /// Whether it runs in the background.
    pub is_backgrounded: bool,
    /// The subagent's prompt.
    pub prompt: Option<String>,
    /// The nesting depth of a subagent (1 for one the main agent started).
    pub spawn_depth: Option<u64>,
    /// The task it runs inside, if any.
    pub parent_task_id: Option<String>,
    /// The Agent call it was started under, if known.
    pub parent_tool_use_id: Option<String>,
    /// The last status reported (`running` from the start).
    pub status: TaskStatus,
    /// Tokens, tool uses and time (from `task_progress` or `task_notification`).
    pub usage: Option<TaskUsage>,
    /// The last tool a subagent used.
    pub last_tool_name: Option<String>,
    /// The summary of `task_notification`.
    pub summary: Option<String>,
    /// Where its output went (`""` for a foreground Bash).
    pub output_file: Option<String>,
    /// When it ended (milliseconds since the epoch), from a `task_updated` patch.
    pub end_time: Option<Number>,
    /// Its error, from a `task_updated` patch.
    pub error: Option<String>,
    /// Whether the last `background_tasks_changed` listed it.
    pub in_background_set: bool,
    /// The subagent's own `assistant` and `user` lines seen so far.
    pub messages: MessageCounts,
    /// `tool_progress` heartbeats seen for its tool call.
    pub heartbeats: u64,
    /// Seconds since its tool call started, as the last heartbeat said.
    pub last_elapsed: Option<f64>,
    /// Whether `task_started` was seen (a task first seen on a later line is built from it).
    pub seen_start: bool,
    running: bool,
    notified: bool,
}

/// How many lines of a subagent's own conversation were seen.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MessageCounts {
    /// `assistant` lines (one per content block).
    pub assistant: u64,
    /// `user` lines (the prompt, tool results).
    pub user: u64,
}

/// Which kind of subagent line a [`TaskEvent::SubagentMessage`] reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessageRole {
    /// An `assistant` line.
    Assistant,
    /// A `user` line.
    User,
}

/// What changed in the tree.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum TaskEvent {
    /// A task (or a new run of it) started.
    Started {
        /// The task.
        task_id: String,
        /// The tool call that started it.
        tool_use_id: Option<String>,
        /// Its kind.
        task_type: Option<TaskType>,
        /// Whether it runs in the background.
        is_backgrounded: bool,
        /// The task it runs inside, if any.
        parent_task_id: Option<String>,
    },
    /// A subagent reported progress.
    Progress {
        /// The task.
        task_id: String,
        /// Usage so far.
        usage: Option<TaskUsage>,
        /// The last tool it used.
        last_tool_name: Option<String>,
        /// What it is doing now.
        description: Option<String>,
    },
    /// A `task_updated` patch was applied (`old_status == new_status` when the patch holds no
    /// status). A terminal `new_status` means the task no longer runs.
    Updated {
        /// The task.
        task_id: String,
        /// The status before.
        old_status: TaskStatus,
        /// The status after.
        new_status: TaskStatus,
    },
    /// `task_notification`: the task (this run of it) ended. Sent once per run.
    Finished {
        /// The task.
        task_id: String,
        /// How it ended.
        status: TaskStatus,
        /// Its summary.
        summary: Option<String>,
    },
    /// `background_tasks_changed`: the full set of running background tasks.
    BackgroundSetChanged {
        /// Every background task now running.
        running: Vec<String>,
        /// Tasks that joined the set.
        added: Vec<String>,
        /// Tasks that left it (they no longer run).
        removed: Vec<String>,
    },
    /// A `tool_progress` heartbeat of a running tool call.
    Heartbeat {
        /// The tool call (without the `-heartbeat-N` suffix).
        tool_use_id: String,
        /// Its task, or `None` for a plain tool call that has no task.
        task_id: Option<String>,
        /// The tool.
        tool_name: Option<String>,
        /// Seconds since the call started.
        elapsed: Option<f64>,
    },
    /// An `assistant` or `user` line of a subagent's own conversation.
    SubagentMessage {
        /// The subagent's Agent call.
        parent_tool_use_id: String,
        /// Its task, or `None` when that task has not started (yet).
        task_id: Option<String>,
        /// Which kind of line.
        role: MessageRole,
    },
}

impl TaskTree {
    /// An empty tree.
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes one CLI line and reports what changed. Lines that say nothing about tasks give
    /// no events.
    #[must_use = "the events say what changed"]
    pub fn observe(&mut self, line: &CliMessage) -> Vec<TaskEvent> {
        match line {
            CliMessage::System(SystemMessage::TaskStarted(m)) => vec![self.started(m)],
            CliMessage::System(SystemMessage::TaskProgress(m)) => vec![self.progress(m)],
            CliMessage::System(SystemMessage::TaskUpdated(m)) => vec![self.updated(m)],
            CliMessage::System(SystemMessage::TaskNotification(m)) => {
                self.notification(m).into_iter().collect()
            }
            CliMessage::System(SystemMessage::BackgroundTasksChanged(m)) => {
                vec![self.background_changed(m)]
            }
            CliMessage::ToolProgress(m) => vec![self.heartbeat(m)],
            CliMessage::Assistant(m) => self.nested_assistant(m).into_iter().collect(),
            CliMessage::User(m) => match m.parent_tool_use_id.as_deref() {
                Some(parent) => vec![self.nested_message(parent, MessageRole::User)],
                None => Vec::new(),
            },
            _ => Vec::new(),
        }
    }

    /// The task with this id.
    pub fn get(&self, task_id: &str) -> Option<&Task> {
        self.by_id.get(task_id).map(|k| &self.tasks[k])
    }

    /// The task started by this tool call.
    pub fn by_tool_use_id(&self, tool_use_id: &str) -> Option<&Task> {
        self.by_tool_use.get(tool_use_id).map(|k| &self.tasks[k])
    }

    /// Every task kept, in the order first seen.
    pub fn tasks(&self) -> impl Iterator<Item = &Task> {
        self.tasks.values()
    }

    /// The tasks still running, in the order first seen.
    pub fn running(&self) -> impl Iterator<Item = &Task> {
        self.tasks.values().filter(|t| t.running)
    }

    /// The tasks that run inside task `task_id`, in the order first seen.
    pub fn children<'a>(&'a self, task_id: &'a str) -> impl Iterator<Item = &'a Task> + 'a {
        self.tasks
            .values()
            .filter(move |t| t.parent_task_id.as_deref() == Some(task_id))
    }

    /// The tasks that run inside no other task (or whose parent is no longer kept).
    pub fn roots(&self) -> impl Iterator<Item = &Task> {
        self.tasks.values().filter(|t| {
            t.parent_task_id
                .as_deref()
                .is_none_or(|p| !self.by_id.contains_key(p))
        })
    }

    /// Whether a background task is still running: one listed in the last
    /// `background_tasks_changed` that has not ended since, or a running backgrounded task.
    pub fn any_running_background(&self) -> bool {
        let listed = self
            .background
            .iter()
            .any(|b| self.get(&b.task_id).is_none_or(|t| t.running));
        listed || self.tasks.values().any(|t| t.running && t.is_backgrounded)
    }

    /// The last `background_tasks_changed` set, as the CLI sent it.
    pub fn background_set(&self) -> &[BackgroundTask] {
        &self.background
    }

    /// The task a line belongs to: a subagent's `assistant`, `user` or `stream_event` line
    /// (by `parent_tool_use_id`), a `tool_progress` heartbeat (by its tool call), or a
    /// `task_*` line. `None` for lines of the main conversation.
    pub fn owner_of(&self, line: &CliMessage) -> Option<&Task> {
        match line {
            CliMessage::ToolProgress(m) => m
                .task_id
                .as_deref()
                .and_then(|id| self.get(id))
                .or_else(|| self.by_tool_use_id(m.tool_call_id())),
            CliMessage::System(SystemMessage::TaskStarted(m)) => self.get(&m.task_id),
            CliMessage::System(SystemMessage::TaskProgress(m)) => self.get(&m.task_id),
            CliMessage::System(SystemMessage::TaskUpdated(m)) => self.get(&m.task_id),
            CliMessage::System(SystemMessage::TaskNotification(m)) => self.get(&m.task_id),
            other => self.by_tool_use_id(other.parent_tool_use_id()?),
        }
    }

    /// How many tasks are kept.
    pub fn len(&self) -> usize {
        self.tasks.len()
    }

    /// Whether no task is kept.
    pub fn is_empty(&self) -> bool {
        self.tasks.is_empty()
    }

    /// Forgets every task that no longer runs and has no running descendant, with what was
    /// kept for it (and the counts of subagent lines whose task never started). Returns how
    /// many tasks were forgotten.
    pub fn forget_finished(&mut self) -> usize {
        self.forget_finished_before(TaskMark(u64::MAX))
    }

    /// Takes a turn's start or end: as a turn starts, the tasks that had finished when the
    /// last one ended are forgotten (those still running stay, with their ancestors), so a
    /// long session's tree stays small. The session core calls it.
    pub fn on_turn(&mut self, event: &TurnEvent) {
        match event {
            TurnEvent::TurnStarted { .. } => {
                if let Some(mark) = self.turn_ended.take() {
                    self.forget_finished_before(mark);
                }
            }
            TurnEvent::TurnEnded { .. } => self.turn_ended = Some(self.mark()),
            _ => {}
        }
    }

    /// Where the tree stands now: the tasks seen so far are before the mark.
    pub fn mark(&self) -> TaskMark {
        TaskMark(self.next_key)
    }

    /// [`TaskTree::forget_finished`], for the tasks first seen before `mark` only. Returns how
    /// many tasks were forgotten.
    pub fn forget_finished_before(&mut self, mark: TaskMark) -> usize {
        let mut keep: BTreeSet<u64> = BTreeSet::new();
        for (&key, task) in &self.tasks {
            if !task.running && key < mark.0 {
                continue;
            }
            // Keep the task and every ancestor, so the tree stays connected.
            let mut at = Some(key);
            while let Some(k) = at {
                if !keep.insert(k) {
                    break;
                }
                at = self.tasks[&k]
                    .parent_task_id
                    .as_deref()
                    .and_then(|p| self.by_id.get(p).copied());
            }
        }
        let before = self.tasks.len();
        self.tasks.retain(|k, _| keep.contains(k));
        self.by_id.retain(|_, k| keep.contains(k));
        self.by_tool_use.retain(|_, k| keep.contains(k));
        let by_tool_use = &self.by_tool_use;
        self.nested_calls
            .retain(|_, agent| by_tool_use.contains_key(agent));
        self.pending.clear();
        before - self.tasks.len()
    }
}

/// A point in a [`TaskTree`]'s history, from [`TaskTree::mark`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct TaskMark(u64);

impl Task {
    /// Whether it still runs: it started, no terminal status or notification came, and it did
    /// not leave the background set.
    pub fn is_running(&self) -> bool {
        self.running
    }

    /// Whether `status` ends a task (`completed`, `failed`, `killed`, `stopped`).
    pub fn is_terminal(status: &TaskStatus) -> bool {
        [
            TaskStatus::COMPLETED,
            TaskStatus::FAILED,
            TaskStatus::KILLED,
            TaskStatus::STOPPED,
        ]
        .contains(status)
    }

    fn new(task_id: &str) -> Self {
        Task {
            task_id: task_id.to_owned(),
            run_id: None,
            tool_use_id: None,
            description: None,
            activity: None,
            task_type: None,
            subagent_type: None,
            is_backgrounded: false,
            prompt: None,
            spawn_depth: None,
            parent_task_id: None,
            parent_tool_use_id: None,
            status: TaskStatus::RUNNING,
            usage: None,
            last_tool_name: None,
            summary: None,
            output_file: None,
            end_time: None,
            error: None,
            in_background_set: false,
            messages: MessageCounts::default(),
            heartbeats: 0,
            last_elapsed: None,
            seen_start: false,
            running: true,
            notified: false,
        }
    }
}

impl MessageCounts {
    /// Both counts added.
    pub fn total(&self) -> u64 {
        self.assistant + self.user
    }

    fn add(&mut self, role: MessageRole) {
        match role {
            MessageRole::Assistant => self.assistant += 1,
            MessageRole::User => self.user += 1,
        }
    }
}

impl TaskEvent {
    /// The task the event is about, if one.
    pub fn task_id(&self) -> Option<&str> {
        match self {
            TaskEvent::Started { task_id, .. }
            | TaskEvent::Progress { task_id, .. }
            | TaskEvent::Updated { task_id, .. }
            | TaskEvent::Finished { task_id, .. } => Some(task_id),
            TaskEvent::Heartbeat { task_id, .. } | TaskEvent::SubagentMessage { task_id, .. } => {
                task_id.as_deref()
            }
            TaskEvent::BackgroundSetChanged { .. } => None,
        }
    }
}

impl TaskTree {
    /// The key of task `task_id`, made (from what later lines tell) if it was not seen yet.
    fn entry(&mut self, task_id: &str, tool_use_id: Option<&str>) -> u64 {
        if let Some(&key) = self.by_id.get(task_id) {
            return key;
        }
        let key = self.next_key;
        self.next_key += 1;
        let mut task = Task::new(task_id);
        task.in_background_set = self.background.iter().any(|b| b.task_id == task_id);
        self.tasks.insert(key, task);
        self.by_id.insert(task_id.to_owned(), key);
        if let Some(tool) = tool_use_id {
            self.link_tool(key, tool);
        }
        key
    }

    /// Records that `tool` started task `key`, taking the subagent lines seen before.
    fn link_tool(&mut self, key: u64, tool: &str) {
        self.by_tool_use.insert(tool.to_owned(), key);
        let task = self.tasks.get_mut(&key).expect("linking a kept task");
        task.tool_use_id = Some(tool.to_owned());
        if let Some(counts) = self.pending.remove(tool) {
            task.messages.assistant += counts.assistant;
            task.messages.user += counts.user;
        }
    }

    fn started(&mut self, m: &TaskStartedMessage) -> TaskEvent {
        let key = self.entry(&m.task_id, m.tool_use_id.as_deref());
        if let Some(tool) = m.tool_use_id.as_deref() {
            self.link_tool(key, tool);
        }
        // Which subagent it runs inside: named outright, or the subagent made its tool call.
        let parent_tool = m
            .extra
            .get("parent_tool_use_id")
            .and_then(|v| v.as_str())
            .map(str::to_owned)
            .or_else(|| {
                let tool = m.tool_use_id.as_deref()?;
                self.nested_calls.get(tool).cloned()
            });
        let parent_task = m.parent_task_id.clone().or_else(|| {
            let parent = self.by_tool_use_id(parent_tool.as_deref()?)?;
            (parent.task_id != m.task_id).then(|| parent.task_id.clone())
        });
        let task = self.tasks.get_mut(&key).expect("entry made it");
        task.run_id = m.run_id.clone().or(task.run_id.take());
        task.description = m.description.clone().or(task.description.take());
        task.task_type = m.task_type.clone().or(task.task_type.take());
        task.subagent_type = m.subagent_type.clone().or(task.subagent_type.take());
        task.is_backgrounded = m.is_backgrounded.unwrap_or(task.is_backgrounded);
        task.prompt = m.prompt.clone().or(task.prompt.take());
        task.spawn_depth = m.spawn_depth.or(task.spawn_depth);
        task.parent_task_id = parent_task.or(task.parent_task_id.take());
        task.parent_tool_use_id = parent_tool.or(task.parent_tool_use_id.take());
        task.status = TaskStatus::RUNNING;
        task.running = true;
        task.notified = false;
        task.seen_start = true;
        TaskEvent::Started {
            task_id: task.task_id.clone(),
            tool_use_id: task.tool_use_id.clone(),
            task_type: task.task_type.clone(),
            is_backgrounded: task.is_backgrounded,
            parent_task_id: task.parent_task_id.clone(),
        }
    }

    fn progress(&mut self, m: &TaskProgressMessage) -> TaskEvent {
        let key = self.entry(&m.task_id, m.tool_use_id.as_deref());
        let task = self.tasks.get_mut(&key).expect("entry made it");
        if m.usage.is_some() {
            task.usage = m.usage.clone();
        }
        if m.last_tool_name.is_some() {
            task.last_tool_name = m.last_tool_name.clone();
        }
        if m.description.is_some() {
            task.activity = m.description.clone();
        }
        if m.subagent_type.is_some() {
            task.subagent_type = m.subagent_type.clone();
        }
        if m.summary.is_some() {
            task.summary = m.summary.clone();
        }
        TaskEvent::Progress {
            task_id: m.task_id.clone(),
            usage: m.usage.clone(),
            last_tool_name: m.last_tool_name.clone(),
            description: m.description.clone(),
        }
    }

    fn updated(&mut self, m: &TaskUpdatedMessage) -> TaskEvent {
        let key = self.entry(&m.task_id, None);
        let task = self.tasks.get_mut(&key).expect("entry made it");
        let old_status = task.status.clone();
        if let Some(patch) = &m.patch {
            if let Some(status) = &patch.status {
                task.status = status.clone();
                task.running = !Task::is_terminal(status);
            }
            if patch.description.is_some() {
                task.description = patch.description.clone();
            }
            if patch.end_time.is_some() {
                task.end_time = patch.end_time.clone();
            }
            if patch.error.is_some() {
                task.error = patch.error.clone();
            }
            if let Some(bg) = patch.is_backgrounded {
                task.is_backgrounded = bg;
            }
        }
        TaskEvent::Updated {
            task_id: m.task_id.clone(),
            old_status,
            new_status: task.status.clone(),
        }
    }

    fn notification(&mut self, m: &TaskNotificationMessage) -> Option<TaskEvent> {
        let key = self.entry(&m.task_id, m.tool_use_id.as_deref());
        if let Some(tool) = m.tool_use_id.as_deref() {
            if !self.by_tool_use.contains_key(tool) {
                self.link_tool(key, tool);
            }
        }
        let task = self.tasks.get_mut(&key).expect("entry made it");
        if let Some(status) = &m.status {
            task.status = status.clone();
        }
        if m.summary.is_some() {
            task.summary = m.summary.clone();
        }
        if m.usage.is_some() {
            task.usage = m.usage.clone();
        }
        if m.output_file.is_some() {
            task.output_file = m.output_file.clone();
        }
        task.running = false;
        if std::mem::replace(&mut task.notified, true) {
            return None;
        }
        Some(TaskEvent::Finished {
            task_id: m.task_id.clone(),
            status: task.status.clone(),
            summary: task.summary.clone(),
        })
    }

    fn background_changed(&mut self, m: &BackgroundTasksChangedMessage) -> TaskEvent {
        let listed = |id: &str| m.tasks.iter().any(|b| b.task_id == id);
        let added = m
            .tasks
            .iter()
            .filter(|b| !self.background.iter().any(|old| old.task_id == b.task_id))
            .map(|b| b.task_id.clone())
            .collect();
        let removed = self
            .background
            .iter()
            .filter(|old| !listed(&old.task_id))
            .map(|old| old.task_id.clone())
            .collect();
        for task in self.tasks.values_mut() {
            let now = listed(&task.task_id);
            if task.in_background_set && !now {
                // Replace semantics: a task that left the set no longer runs.
                task.running = false;
            }
            task.in_background_set = now;
        }
        self.background = m.tasks.clone();
        TaskEvent::BackgroundSetChanged {
            running: m.tasks.iter().map(|b| b.task_id.clone()).collect(),
            added,
            removed,
        }
    }

    fn heartbeat(&mut self, m: &ToolProgressMessage) -> TaskEvent {
        let tool = m.tool_call_id().to_owned();
        let key = m
            .task_id
            .as_deref()
            .and_then(|id| self.by_id.get(id))
            .or_else(|| self.by_tool_use.get(&tool))
            .copied();
        let elapsed = m.elapsed_time_seconds.as_ref().and_then(Number::as_f64);
        let task_id = key.map(|k| {
            let task = self.tasks.get_mut(&k).expect("indexed task is kept");
            task.heartbeats += 1;
            task.last_elapsed = elapsed.or(task.last_elapsed);
            task.task_id.clone()
        });
        TaskEvent::Heartbeat {
            tool_use_id: tool,
            task_id,
            tool_name: m.tool_name.clone(),
            elapsed,
        }
    }

    fn nested_assistant(&mut self, m: &AssistantMessage) -> Option<TaskEvent> {
        let parent = m.parent_tool_use_id.as_deref()?;
        for block in &m.message.content {
            let id = match block {
                ContentBlock::ToolUse(b) | ContentBlock::ServerToolUse(b) => &b.id,
                ContentBlock::McpToolUse(b) => &b.id,
                _ => continue,
            };
            self.nested_calls.insert(id.clone(), parent.to_owned());
        }
        Some(self.nested_message(parent, MessageRole::Assistant))
    }

    fn nested_message(&mut self, parent: &str, role: MessageRole) -> TaskEvent {
        let task_id = match self.by_tool_use.get(parent) {
            Some(key) => {
                let task = self.tasks.get_mut(key).expect("indexed task is kept");
                task.messages.add(role);
                Some(task.task_id.clone())
            }
            None => {
                self.pending.entry(parent.to_owned()).or_default().add(role);
                None
            }
        };
        TaskEvent::SubagentMessage {
            parent_tool_use_id: parent.to_owned(),
            task_id,
            role,
        }
    }
}
