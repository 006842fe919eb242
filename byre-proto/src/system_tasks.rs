//! The `system` lines of background work: a task started, its progress, updates and end, and
//! the list of background tasks.

use serde_json::Value;

use crate::values::{TaskStatus, TaskType};
use crate::wire::{wire_struct, Number};

wire_struct! {
    /// `system/task_started`.
    pub struct TaskStartedMessage {
        /// The task.
        "task_id" task_id: req String,
        /// This run of it.
        "run_id" run_id: opt String,
        /// The tool call that started it.
        "tool_use_id" tool_use_id: opt String,
        /// What it does.
        "description" description: opt String,
        /// The subagent's type.
        "subagent_type" subagent_type: opt String,
        /// Whether it runs in the background.
        "is_backgrounded" is_backgrounded: opt bool,
        /// Nesting depth of subagents.
        "spawn_depth" spawn_depth: opt u64,
        /// The parent task.
        "parent_task_id" parent_task_id: opt String,
        /// `local_bash`, `local_agent`, ...
        "task_type" task_type: opt TaskType,
        /// The workflow's name.
        "workflow_name" workflow_name: opt String,
        /// The subagent's prompt.
        "prompt" prompt: opt String,
        /// Kept out of the transcript.
        "skip_transcript" skip_transcript: opt bool,
        /// An ambient task.
        "ambient" ambient: opt bool,
        /// This line's id.
        "uuid" uuid: opt String,
        /// When the CLI wrote this line (RFC 3339, UTC; CLI 2.1.337 and later).
        "written_at" written_at: opt String,
        /// The session.
        "session_id" session_id: opt String,
    }
}

wire_struct! {
    /// `system/task_progress`.
    pub struct TaskProgressMessage {
        /// The task.
        "task_id" task_id: req String,
        /// This run of it.
        "run_id" run_id: opt String,
        /// The tool call that started it.
        "tool_use_id" tool_use_id: opt String,
        /// What it is doing.
        "description" description: opt String,
        /// The subagent's type.
        "subagent_type" subagent_type: opt String,
        /// Tokens, tool uses and time so far.
        "usage" usage: opt TaskUsage,
        /// The last tool it used.
        "last_tool_name" last_tool_name: opt String,
        /// A summary.
        "summary" summary: opt String,
        /// This line's id.
        "uuid" uuid: opt String,
        /// When the CLI wrote this line (RFC 3339, UTC; CLI 2.1.337 and later).
        "written_at" written_at: opt String,
        /// The session.
        "session_id" session_id: opt String,
    }
}

wire_struct! {
    /// Usage of a task.
    pub struct TaskUsage {
        /// Tokens.
        "total_tokens" total_tokens: opt u64,
        /// Tool calls.
        "tool_uses" tool_uses: opt u64,
        /// Time.
        "duration_ms" duration_ms: opt Number,
    }
}

wire_struct! {
    /// `system/task_updated`.
    pub struct TaskUpdatedMessage {
        /// The task.
        "task_id" task_id: req String,
        /// This run of it.
        "run_id" run_id: opt String,
        /// What changed.
        "patch" patch: opt TaskPatch,
        /// This line's id.
        "uuid" uuid: opt String,
        /// When the CLI wrote this line (RFC 3339, UTC; CLI 2.1.337 and later).
        "written_at" written_at: opt String,
        /// The session.
        "session_id" session_id: opt String,
    }
}

wire_struct! {
    /// The changed fields of a task.
    pub struct TaskPatch {
        /// The new status.
        "status" status: opt TaskStatus,
        /// A new description.
        "description" description: opt String,
        /// When it ended (milliseconds since the epoch).
        "end_time" end_time: opt Number,
        /// Time spent paused.
        "total_paused_ms" total_paused_ms: opt Number,
        /// Its error.
        "error" error: opt String,
        /// Whether it runs in the background.
        "is_backgrounded" is_backgrounded: opt bool,
    }
}

wire_struct! {
    /// `system/task_notification`.
    pub struct TaskNotificationMessage {
        /// The task.
        "task_id" task_id: req String,
        /// This run of it.
        "run_id" run_id: opt String,
        /// The tool call that started it.
        "tool_use_id" tool_use_id: opt String,
        /// `completed`, `failed` or `stopped`.
        "status" status: opt TaskStatus,
        /// Why (`worker_restart`, `unfinished_at_resume`).
        "reason" reason: opt String,
        /// The task's type, as on `task_started`; only with `unfinished_at_resume`.
        "task_type" task_type: opt TaskType,
        /// Where its output went (`""` for a foreground Bash).
        "output_file" output_file: opt String,
        /// A summary.
        "summary" summary: opt String,
        /// Whether the summary is the subagent's report.
        "summary_is_report" summary_is_report: opt bool,
        /// Tokens, tool uses and time.
        "usage" usage: opt TaskUsage,
        /// Links to resources it made.
        "resource_links" resource_links: opt Vec<Value>,
        /// Kept out of the transcript.
        "skip_transcript" skip_transcript: opt bool,
        /// An ambient task.
        "ambient" ambient: opt bool,
        /// How long the task ran (CLI 2.1.337 and later).
        "duration_ms" duration_ms: opt Number,
        /// This line's id.
        "uuid" uuid: opt String,
        /// When the CLI wrote this line (RFC 3339, UTC; CLI 2.1.337 and later).
        "written_at" written_at: opt String,
        /// The session.
        "session_id" session_id: opt String,
    }
}

wire_struct! {
    /// `system/background_tasks_changed`.
    pub struct BackgroundTasksChangedMessage {
        /// Every background task now running.
        "tasks" tasks: req Vec<BackgroundTask>,
        /// This line's id.
        "uuid" uuid: opt String,
        /// When the CLI wrote this line (RFC 3339, UTC; CLI 2.1.337 and later).
        "written_at" written_at: opt String,
        /// The session.
        "session_id" session_id: opt String,
    }
}

wire_struct! {
    /// A background task.
    pub struct BackgroundTask {
        /// The task.
        "task_id" task_id: req String,
        /// This run of it.
        "run_id" run_id: opt String,
        /// Its kind.
        "task_type" task_type: opt TaskType,
        /// The subagent's type.
        "subagent_type" subagent_type: opt String,
        /// What it does.
        "description" description: opt String,
        /// The parent task.
        "parent_task_id" parent_task_id: opt String,
        /// An ambient task.
        "ambient" ambient: opt bool,
        /// When it started (milliseconds since the Unix epoch; CLI 2.1.337 and later).
        "start_time" start_time: opt Number,
    }
}
