//! The input of each hook event, with the fields every input shares.

use serde_json::Value;

use crate::permissions::PermissionUpdate;
use crate::values::{AssistantError, PermissionMode, TaskStatus};
use crate::wire::{wire_struct, Number};

/// Declares a `<Event>HookInput` with the fields every hook input shares, followed by the
/// event's own fields (same syntax as `wire_struct!`).
macro_rules! hook_input {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $(
                $(#[$fmeta:meta])*
                $key:literal $field:ident : $kind:ident $ty:ty
            ),* $(,)?
        }
    ) => {
        wire_struct! {
            $(#[$meta])*
            pub struct $name {
                /// The session.
                "session_id" session_id: opt String,
                /// The session's transcript file.
                "transcript_path" transcript_path: opt String,
                /// The working directory.
                "cwd" cwd: opt String,
                /// The permission mode in force.
                "permission_mode" permission_mode: opt PermissionMode,
                /// The prompt (turn) this hook runs in.
                "prompt_id" prompt_id: opt String,
                /// The subagent this hook runs in; absent in the main agent.
                "agent_id" agent_id: opt String,
                /// The subagent's type (or the main agent's, with `--agent`).
                "agent_type" agent_type: opt String,
                /// The reasoning effort, like `{"level":"medium"}`.
                "effort" effort: any Value,
                $( $(#[$fmeta])* $key $field: $kind $ty, )*
            }
        }
    };
}

wire_struct! {
    /// The MCP server a tool belongs to.
    pub struct HookMcpServer {
        /// The server's name.
        "name" name: opt String,
        /// Where it is configured.
        "source" source: opt String,
    }
}

hook_input! {
    /// `PreToolUse` input.
    pub struct PreToolUseHookInput {
        /// The tool.
        "tool_name" tool_name: req String,
        /// Its input.
        "tool_input" tool_input: any Value,
        /// The tool call.
        "tool_use_id" tool_use_id: opt String,
        /// The MCP server, for an MCP tool.
        "mcp_server" mcp_server: opt HookMcpServer,
    }
}

hook_input! {
    /// `PostToolUse` input.
    pub struct PostToolUseHookInput {
        /// The tool.
        "tool_name" tool_name: req String,
        /// Its input.
        "tool_input" tool_input: any Value,
        /// What it returned.
        "tool_response" tool_response: any Value,
        /// The tool call.
        "tool_use_id" tool_use_id: opt String,
        /// How long it ran, in milliseconds.
        "duration_ms" duration_ms: opt Number,
        /// The MCP server, for an MCP tool.
        "mcp_server" mcp_server: opt HookMcpServer,
    }
}

hook_input! {
    /// `PostToolUseFailure` input.
    pub struct PostToolUseFailureHookInput {
        /// The tool.
        "tool_name" tool_name: req String,
        /// Its input.
        "tool_input" tool_input: any Value,
        /// The tool call.
        "tool_use_id" tool_use_id: opt String,
        /// The error.
        "error" error: opt String,
        /// Whether the tool was interrupted.
        "is_interrupt" is_interrupt: opt bool,
        /// How long it ran, in milliseconds.
        "duration_ms" duration_ms: opt Number,
        /// The MCP server, for an MCP tool.
        "mcp_server" mcp_server: opt HookMcpServer,
    }
}

wire_struct! {
    /// One tool call of a `PostToolBatch`.
    pub struct HookToolCall {
        /// The tool.
        "tool_name" tool_name: opt String,
        /// Its input.
        "tool_input" tool_input: any Value,
        /// The tool call.
        "tool_use_id" tool_use_id: opt String,
        /// What it returned.
        "tool_response" tool_response: any Value,
    }
}

hook_input! {
    /// `PostToolBatch` input.
    pub struct PostToolBatchHookInput {
        /// The calls of the batch.
        "tool_calls" tool_calls: opt Vec<HookToolCall>,
    }
}

hook_input! {
    /// `Interrupt` input: sent once when an interrupt ends the main conversation's turn.
    pub struct InterruptHookInput {
        /// Who stopped the turn: `user` (a person, or a client that does not say who, such as
        /// a program's interrupt), `session` (another session) or `system` (a hook, a plugin,
        /// a permission check, or a service acting by itself).
        "source" source: opt String,
        /// What ended it: `stop`, `permission_denied`, `rewind` or `other`.
        "reason" reason: opt String,
        /// How the stop arrived, where known: `terminal` or `client`.
        "via" via: opt String,
    }
}

hook_input! {
    /// `Notification` input.
    pub struct NotificationHookInput {
        /// The text.
        "message" message: opt String,
        /// A title.
        "title" title: opt String,
        /// The kind of notification.
        "notification_type" notification_type: opt String,
    }
}

hook_input! {
    /// `UserPromptSubmit` input.
    pub struct UserPromptSubmitHookInput {
        /// The prompt.
        "prompt" prompt: opt String,
        /// `user`, `sdk`, `system`, `loop_wakeup`, `schedule_wakeup` or `poll_event`.
        "source" source: opt String,
        /// The session's title.
        "session_title" session_title: opt String,
    }
}

hook_input! {
    /// `UserPromptExpansion` input.
    pub struct UserPromptExpansionHookInput {
        /// `slash_command` or `mcp_prompt`.
        "expansion_type" expansion_type: opt String,
        /// The command.
        "command_name" command_name: opt String,
        /// Its arguments.
        "command_args" command_args: opt String,
        /// Where the command comes from.
        "command_source" command_source: opt String,
        /// The expanded prompt.
        "prompt" prompt: opt String,
    }
}

hook_input! {
    /// `SessionStart` input.
    pub struct SessionStartHookInput {
        /// `startup`, `resume`, `clear`, `compact` or `fork`.
        "source" source: opt String,
        /// The model.
        "model" model: opt String,
        /// The session's title.
        "session_title" session_title: opt String,
        /// Seconds since the last answer (on resume).
        "seconds_since_last_response" seconds_since_last_response: opt Number,
        /// Tokens in the context.
        "context_tokens" context_tokens: opt u64,
        /// Whether the prompt cache has probably expired.
        "prompt_cache_likely_expired" prompt_cache_likely_expired: opt bool,
        /// The estimated cost of rewriting the cache, in USD.
        "estimated_cache_write_usd" estimated_cache_write_usd: opt Number,
    }
}

hook_input! {
    /// `SessionEnd` input.
    pub struct SessionEndHookInput {
        /// `clear`, `resume`, `logout`, `prompt_input_exit` or `other`.
        "reason" reason: opt String,
    }
}

wire_struct! {
    /// A background task listed in `Stop` and `SubagentStop`.
    pub struct HookBackgroundTask {
        /// The task.
        "id" id: opt String,
        /// Its kind.
        "type" task_type: opt String,
        /// Its status.
        "status" status: opt TaskStatus,
        /// What it does.
        "description" description: opt String,
        /// The command, for a shell task.
        "command" command: opt String,
        /// The agent type, for a subagent task.
        "agent_type" agent_type: opt String,
        /// The MCP server, for an MCP task.
        "server" server: opt String,
        /// The tool, for an MCP task.
        "tool" tool: opt String,
        /// A name.
        "name" name: opt String,
    }
}

wire_struct! {
    /// A scheduled prompt listed in `Stop` and `SubagentStop`.
    pub struct HookSessionCron {
        /// The schedule entry.
        "id" id: opt String,
        /// The cron expression.
        "schedule" schedule: opt String,
        /// Whether it repeats.
        "recurring" recurring: opt bool,
        /// The prompt it sends.
        "prompt" prompt: opt String,
    }
}

hook_input! {
    /// `Stop` input.
    pub struct StopHookInput {
        /// Whether a Stop hook already blocked once in this turn.
        "stop_hook_active" stop_hook_active: opt bool,
        /// The text of the last assistant message.
        "last_assistant_message" last_assistant_message: opt String,
        /// Background tasks still running.
        "background_tasks" background_tasks: opt Vec<HookBackgroundTask>,
        /// Scheduled prompts of the session.
        "session_crons" session_crons: opt Vec<HookSessionCron>,
    }
}

hook_input! {
    /// `StopFailure` input.
    pub struct StopFailureHookInput {
        /// The kind of API error.
        "error" error: opt AssistantError,
        /// Details of the error.
        "error_details" error_details: any Value,
        /// The text of the last assistant message.
        "last_assistant_message" last_assistant_message: opt String,
    }
}

hook_input! {
    /// `SubagentStart` input (`agent_id` and `agent_type` name the subagent).
    pub struct SubagentStartHookInput {}
}

hook_input! {
    /// `SubagentStop` input (`agent_id` and `agent_type` name the subagent).
    pub struct SubagentStopHookInput {
        /// Whether a stop hook already blocked once.
        "stop_hook_active" stop_hook_active: opt bool,
        /// The subagent's transcript file.
        "agent_transcript_path" agent_transcript_path: opt String,
        /// The text of the subagent's last message.
        "last_assistant_message" last_assistant_message: opt String,
        /// Background tasks still running.
        "background_tasks" background_tasks: opt Vec<HookBackgroundTask>,
        /// Scheduled prompts.
        "session_crons" session_crons: opt Vec<HookSessionCron>,
    }
}

hook_input! {
    /// `PreCompact` input.
    pub struct PreCompactHookInput {
        /// `manual` or `auto`.
        "trigger" trigger: opt String,
        /// The instructions given to `/compact` (`null` for none).
        "custom_instructions" custom_instructions: opt String,
    }
}

hook_input! {
    /// `PostCompact` input.
    pub struct PostCompactHookInput {
        /// `manual` or `auto`.
        "trigger" trigger: opt String,
        /// The summary that replaced the conversation.
        "compact_summary" compact_summary: opt String,
    }
}

hook_input! {
    /// `PreModelSwitch` input (and `PostModelSwitch`, through [`PostModelSwitchHookInput`]).
    pub struct PreModelSwitchHookInput {
        /// The current model.
        "from_model" from_model: opt String,
        /// The model switched to.
        "to_model" to_model: opt String,
        /// The model as requested (an alias, for example).
        "requested_model" requested_model: opt String,
        /// `command`, `picker` or `sdk` (after a switch also `auto` or `resume`).
        "source" source: opt String,
        /// Tokens in the context.
        "context_tokens" context_tokens: opt u64,
        /// Whether the prompt cache is warm.
        "prompt_cache_warm" prompt_cache_warm: opt bool,
        /// `5m` or `1h`.
        "cache_ttl" cache_ttl: opt String,
        /// The estimated cost of rewriting the cache, in USD.
        "estimated_cache_write_usd" estimated_cache_write_usd: opt Number,
        /// `configured`, `catalog` or `default`: where the price comes from.
        "pricing" pricing: opt String,
    }
}

/// `PostModelSwitch` input: the same fields as [`PreModelSwitchHookInput`] (its `source` may
/// also be `auto` or `resume`).
pub type PostModelSwitchHookInput = PreModelSwitchHookInput;

hook_input! {
    /// `PermissionRequest` input.
    pub struct PermissionRequestHookInput {
        /// The tool.
        "tool_name" tool_name: req String,
        /// Its input.
        "tool_input" tool_input: any Value,
        /// Rule changes the prompt would offer.
        "permission_suggestions" permission_suggestions: opt Vec<PermissionUpdate>,
        /// The MCP server, for an MCP tool.
        "mcp_server" mcp_server: opt HookMcpServer,
    }
}

hook_input! {
    /// `PermissionDenied` input.
    pub struct PermissionDeniedHookInput {
        /// The tool.
        "tool_name" tool_name: req String,
        /// Its input.
        "tool_input" tool_input: any Value,
        /// The tool call.
        "tool_use_id" tool_use_id: opt String,
        /// Why it was denied.
        "reason" reason: opt String,
        /// The MCP server, for an MCP tool.
        "mcp_server" mcp_server: opt HookMcpServer,
    }
}

hook_input! {
    /// `Setup` input.
    pub struct SetupHookInput {
        /// `init` or `maintenance`.
        "trigger" trigger: opt String,
    }
}

hook_input! {
    /// `TeammateIdle` input.
    pub struct TeammateIdleHookInput {
        /// The teammate.
        "teammate_name" teammate_name: opt String,
        /// Its team.
        "team_name" team_name: opt String,
    }
}

hook_input! {
    /// `TaskCreated` input.
    pub struct TaskCreatedHookInput {
        /// The task.
        "task_id" task_id: opt String,
        /// Its subject.
        "task_subject" task_subject: opt String,
        /// Its description.
        "task_description" task_description: opt String,
        /// The teammate it belongs to.
        "teammate_name" teammate_name: opt String,
        /// The team.
        "team_name" team_name: opt String,
    }
}

hook_input! {
    /// `TaskCompleted` input.
    pub struct TaskCompletedHookInput {
        /// The task.
        "task_id" task_id: opt String,
        /// Its subject.
        "task_subject" task_subject: opt String,
        /// Its description.
        "task_description" task_description: opt String,
        /// The teammate it belongs to.
        "teammate_name" teammate_name: opt String,
        /// The team.
        "team_name" team_name: opt String,
    }
}

hook_input! {
    /// `Elicitation` input.
    pub struct ElicitationHookInput {
        /// The MCP server asking.
        "mcp_server_name" mcp_server_name: opt String,
        /// What it asks.
        "message" message: opt String,
        /// `form` or `url`.
        "mode" mode: opt String,
        /// The URL to open, in `url` mode.
        "url" url: opt String,
        /// The elicitation.
        "elicitation_id" elicitation_id: opt String,
        /// The JSON Schema of the expected answer.
        "requested_schema" requested_schema: any Value,
    }
}

hook_input! {
    /// `ElicitationResult` input.
    pub struct ElicitationResultHookInput {
        /// The MCP server that asked.
        "mcp_server_name" mcp_server_name: opt String,
        /// The elicitation.
        "elicitation_id" elicitation_id: opt String,
        /// `form` or `url`.
        "mode" mode: opt String,
        /// `accept`, `decline` or `cancel`.
        "action" action: opt String,
        /// The answer, when accepted.
        "content" content: any Value,
    }
}

hook_input! {
    /// `ConfigChange` input.
    pub struct ConfigChangeHookInput {
        /// `user_settings`, `project_settings`, `local_settings`, `policy_settings` or `skills`.
        "source" source: opt String,
        /// The file that changed.
        "file_path" file_path: opt String,
    }
}

hook_input! {
    /// `WorktreeCreate` input.
    pub struct WorktreeCreateHookInput {
        /// The worktree's name.
        "name" name: opt String,
    }
}

hook_input! {
    /// `WorktreeRemove` input.
    pub struct WorktreeRemoveHookInput {
        /// The worktree's path.
        "worktree_path" worktree_path: opt String,
    }
}

hook_input! {
    /// `InstructionsLoaded` input.
    pub struct InstructionsLoadedHookInput {
        /// The file loaded.
        "file_path" file_path: opt String,
        /// `User`, `Project`, `Local` or `Managed`.
        "memory_type" memory_type: opt String,
        /// `session_start`, `nested_traversal`, `path_glob_match`, `include` or `compact`.
        "load_reason" load_reason: opt String,
        /// The globs that matched.
        "globs" globs: opt Vec<String>,
        /// The file whose access loaded it.
        "trigger_file_path" trigger_file_path: opt String,
        /// The file that included it.
        "parent_file_path" parent_file_path: opt String,
    }
}

hook_input! {
    /// `CwdChanged` input.
    pub struct CwdChangedHookInput {
        /// The previous directory.
        "old_cwd" old_cwd: opt String,
        /// The new directory.
        "new_cwd" new_cwd: opt String,
    }
}

hook_input! {
    /// `FileChanged` input.
    pub struct FileChangedHookInput {
        /// The file.
        "file_path" file_path: opt String,
        /// `change`, `add` or `unlink`.
        "event" event: opt String,
    }
}

hook_input! {
    /// `DirectoryAdded` input.
    pub struct DirectoryAddedHookInput {
        /// The directory.
        "directory" directory: opt String,
        /// `slash_command` or `register_repo_root`.
        "source" source: opt String,
    }
}

hook_input! {
    /// `MessageDisplay` input.
    pub struct MessageDisplayHookInput {
        /// The turn.
        "turn_id" turn_id: opt String,
        /// The message.
        "message_id" message_id: opt String,
        /// The position of this piece in the message.
        "index" index: opt u64,
        /// Whether this is the last piece.
        "final" final_: opt bool,
        /// The text to display.
        "delta" delta: any Value,
    }
}

hook_input! {
    /// `PreSkillShellCommand` input.
    pub struct PreSkillShellCommandHookInput {
        /// `Bash` or `PowerShell`.
        "tool_name" tool_name: opt String,
        /// The tool's input (`{"command": ...}`).
        "tool_input" tool_input: any Value,
        /// The tool call.
        "tool_use_id" tool_use_id: opt String,
        /// The skill's command.
        "command_name" command_name: opt String,
        /// Where the skill comes from.
        "command_source" command_source: opt String,
        /// `user`, `claude` or `other`.
        "invoked_by" invoked_by: opt String,
    }
}
