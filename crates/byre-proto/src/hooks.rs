//! Hooks: the events, their registrations, the input the CLI sends in `hook_callback` and the
//! output the host answers with.

use serde_json::Value;

use crate::permissions::{PermissionResult, PermissionUpdate};
use crate::values::{AssistantError, PermissionMode, TaskStatus};
use crate::wire::{open_enum, wire_enum, wire_struct, Extra, Number, Unknown};

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
    /// One hook registration of `initialize`: which callbacks run for which tools.
    pub struct HookMatcher {
        /// A tool-name matcher (`"Bash"`, `"Write|Edit"`); `null` or absent matches all.
        "matcher" matcher: opt String,
        /// The callback ids (`hook_0`, `hook_1`, ... in registration order).
        "hookCallbackIds" hook_callback_ids: req Vec<String>,
        /// Seconds before the CLI gives up on a callback (CLI default 60).
        "timeout" timeout: opt Number,
        /// `continue` (default) or `block`: what a failed callback means for the guarded
        /// action. Needs `hook_on_failure_supported` in the `initialize` answer.
        "onFailure" on_failure: opt String,
    }
}

impl HookMatcher {
    /// A registration as the host sends it: with no matcher it writes `"matcher": null`.
    pub fn new(matcher: Option<String>, ids: Vec<String>) -> Self {
        let mut registration = HookMatcher {
            matcher,
            hook_callback_ids: ids,
            timeout: None,
            on_failure: None,
            extra: Extra::new(),
        };
        registration.set_null("matcher", registration.matcher.is_none());
        registration
    }
}

/// Declares `HookEvent` and `HookInput` from one table of events, with the accessors of the
/// fields every input shares. Syntax: `CONSTANT "EventName" => Variant(InputType),`.
macro_rules! hook_inputs {
    ($( $(#[$m:meta])* $konst:ident $tag:literal => $var:ident($ty:ident) ),* $(,)?) => {
        open_enum! {
            /// A hook event name: the key of `initialize.hooks` and the `hook_event_name` of an
            /// input.
            pub struct HookEvent {
                $( $(#[$m])* $konst = $tag, )*
            }
        }

        wire_enum! {
            /// The input of a hook callback, tagged by `hook_event_name`.
            pub enum HookInput tag "hook_event_name" {
                $( $(#[$m])* $tag => $var($ty), )*
            }
        }

        impl HookInput {
            hook_inputs!(@get [$($var)*] session_id transcript_path cwd agent_id);

            /// The fields of the input that byre does not model (a newer CLI's), as received;
            /// `None` for an event byre does not know, which is kept whole in `Unknown`.
            pub fn extra(&self) -> Option<&Extra> {
                match self {
                    $( HookInput::$var(i) => Some(&i.extra), )*
                    HookInput::Unknown(_) => None,
                }
            }
        }
    };
    (@get $vars:tt $($field:ident)*) => {
        $( hook_inputs!(@one $vars $field); )*
    };
    (@one [$($var:ident)*] $field:ident) => {
        #[doc = concat!("The input's `", stringify!($field), "`, if present.")]
        pub fn $field(&self) -> Option<&str> {
            match self {
                $( HookInput::$var(i) => i.$field.as_deref(), )*
                HookInput::Unknown(u) => u.get_str(stringify!($field)),
            }
        }
    };
}

hook_inputs! {
    /// Before a tool runs; may allow, deny, ask, defer or change its input.
    PRE_TOOL_USE "PreToolUse" => PreToolUse(PreToolUseHookInput),
    /// After a tool succeeded.
    POST_TOOL_USE "PostToolUse" => PostToolUse(PostToolUseHookInput),
    /// After a tool failed.
    POST_TOOL_USE_FAILURE "PostToolUseFailure" => PostToolUseFailure(PostToolUseFailureHookInput),
    /// After a batch of parallel tool calls.
    POST_TOOL_BATCH "PostToolBatch" => PostToolBatch(PostToolBatchHookInput),
    /// A notification for the user.
    NOTIFICATION "Notification" => Notification(NotificationHookInput),
    /// The user submitted a prompt.
    USER_PROMPT_SUBMIT "UserPromptSubmit" => UserPromptSubmit(UserPromptSubmitHookInput),
    /// A slash command or MCP prompt was expanded.
    USER_PROMPT_EXPANSION "UserPromptExpansion" => UserPromptExpansion(UserPromptExpansionHookInput),
    /// A session started, resumed, was cleared or compacted.
    SESSION_START "SessionStart" => SessionStart(SessionStartHookInput),
    /// A session ended.
    SESSION_END "SessionEnd" => SessionEnd(SessionEndHookInput),
    /// The agent is about to stop.
    STOP "Stop" => Stop(StopHookInput),
    /// The turn ended on an API error.
    STOP_FAILURE "StopFailure" => StopFailure(StopFailureHookInput),
    /// A subagent started.
    SUBAGENT_START "SubagentStart" => SubagentStart(SubagentStartHookInput),
    /// A subagent is about to stop.
    SUBAGENT_STOP "SubagentStop" => SubagentStop(SubagentStopHookInput),
    /// Before compaction.
    PRE_COMPACT "PreCompact" => PreCompact(PreCompactHookInput),
    /// After compaction.
    POST_COMPACT "PostCompact" => PostCompact(PostCompactHookInput),
    /// Before the model changes.
    PRE_MODEL_SWITCH "PreModelSwitch" => PreModelSwitch(PreModelSwitchHookInput),
    /// After the model changed.
    POST_MODEL_SWITCH "PostModelSwitch" => PostModelSwitch(PostModelSwitchHookInput),
    /// A permission prompt is about to be shown.
    PERMISSION_REQUEST "PermissionRequest" => PermissionRequest(PermissionRequestHookInput),
    /// A tool call was denied.
    PERMISSION_DENIED "PermissionDenied" => PermissionDenied(PermissionDeniedHookInput),
    /// `--init` or maintenance set-up.
    SETUP "Setup" => Setup(SetupHookInput),
    /// A teammate went idle.
    TEAMMATE_IDLE "TeammateIdle" => TeammateIdle(TeammateIdleHookInput),
    /// A task was created.
    TASK_CREATED "TaskCreated" => TaskCreated(TaskCreatedHookInput),
    /// A task was completed.
    TASK_COMPLETED "TaskCompleted" => TaskCompleted(TaskCompletedHookInput),
    /// An MCP server asks the user for input.
    ELICITATION "Elicitation" => Elicitation(ElicitationHookInput),
    /// The user answered an MCP elicitation.
    ELICITATION_RESULT "ElicitationResult" => ElicitationResult(ElicitationResultHookInput),
    /// A settings file or skill changed.
    CONFIG_CHANGE "ConfigChange" => ConfigChange(ConfigChangeHookInput),
    /// A worktree is to be created.
    WORKTREE_CREATE "WorktreeCreate" => WorktreeCreate(WorktreeCreateHookInput),
    /// A worktree is to be removed.
    WORKTREE_REMOVE "WorktreeRemove" => WorktreeRemove(WorktreeRemoveHookInput),
    /// A CLAUDE.md or rules file was loaded.
    INSTRUCTIONS_LOADED "InstructionsLoaded" => InstructionsLoaded(InstructionsLoadedHookInput),
    /// The working directory changed.
    CWD_CHANGED "CwdChanged" => CwdChanged(CwdChangedHookInput),
    /// A watched file changed.
    FILE_CHANGED "FileChanged" => FileChanged(FileChangedHookInput),
    /// A working directory was added.
    DIRECTORY_ADDED "DirectoryAdded" => DirectoryAdded(DirectoryAddedHookInput),
    /// Assistant text is about to be displayed.
    MESSAGE_DISPLAY "MessageDisplay" => MessageDisplay(MessageDisplayHookInput),
    /// Before a skill's shell command runs.
    PRE_SKILL_SHELL_COMMAND "PreSkillShellCommand" => PreSkillShellCommand(PreSkillShellCommandHookInput),
}

impl HookInput {
    /// The event name (`hook_event_name`), known or not.
    pub fn event(&self) -> Option<&str> {
        self.tag()
    }

    /// The event name as a [`HookEvent`].
    pub fn hook_event(&self) -> Option<HookEvent> {
        self.event().map(HookEvent::from)
    }

    /// The tool, for the events about one tool call.
    pub fn tool_name(&self) -> Option<&str> {
        match self {
            HookInput::PreToolUse(i) => Some(&i.tool_name),
            HookInput::PostToolUse(i) => Some(&i.tool_name),
            HookInput::PostToolUseFailure(i) => Some(&i.tool_name),
            HookInput::PermissionRequest(i) => Some(&i.tool_name),
            HookInput::PermissionDenied(i) => Some(&i.tool_name),
            HookInput::PreSkillShellCommand(i) => i.tool_name.as_deref(),
            HookInput::Unknown(u) => u.get_str("tool_name"),
            _ => None,
        }
    }

    /// The tool's input, for the events about one tool call.
    pub fn tool_input(&self) -> Option<&Value> {
        match self {
            HookInput::PreToolUse(i) => i.tool_input.as_ref(),
            HookInput::PostToolUse(i) => i.tool_input.as_ref(),
            HookInput::PostToolUseFailure(i) => i.tool_input.as_ref(),
            HookInput::PermissionRequest(i) => i.tool_input.as_ref(),
            HookInput::PermissionDenied(i) => i.tool_input.as_ref(),
            HookInput::PreSkillShellCommand(i) => i.tool_input.as_ref(),
            HookInput::Unknown(u) => u.get("tool_input"),
            _ => None,
        }
    }
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

open_enum! {
    /// The top-level `decision` of a hook output.
    pub struct HookDecision {
        /// Approve (deprecated for `PreToolUse`: use `permissionDecision`).
        APPROVE = "approve",
        /// Block the action; `reason` is fed back to the model.
        BLOCK = "block",
    }
}

open_enum! {
    /// A hook's `permissionDecision`.
    pub struct PermissionDecisionKind {
        /// Run without asking `can_use_tool`.
        ALLOW = "allow",
        /// Do not run; the reason goes to the model.
        DENY = "deny",
        /// Ask through `can_use_tool`, with the reason as `decision_reason`.
        ASK = "ask",
        /// Stop the run; the result carries the deferred tool call.
        DEFER = "defer",
    }
}

wire_struct! {
    /// A hook's output: the answer to `hook_callback`. `{}` means no opinion.
    #[derive(Default)]
    pub struct HookOutput {
        /// `false` stops the agent.
        "continue" continue_: opt bool,
        /// Hide the hook's output from the transcript.
        "suppressOutput" suppress_output: opt bool,
        /// Shown when `continue` is `false`.
        "stopReason" stop_reason: opt String,
        /// `block` refuses the action and feeds `reason` back to the model.
        "decision" decision: opt HookDecision,
        /// A warning shown to the user.
        "systemMessage" system_message: opt String,
        /// Feedback for the model.
        "reason" reason: opt String,
        /// A terminal escape sequence to emit (OSC 0/1/2/9/99/777 or BEL).
        "terminalSequence" terminal_sequence: opt String,
        /// `true`: the hook goes on in the background.
        "async" async_: opt bool,
        /// Milliseconds the CLI waits for a background hook.
        "asyncTimeout" async_timeout: opt Number,
        /// Output specific to the event.
        "hookSpecificOutput" hook_specific_output: opt HookSpecificOutput,
    }
}

wire_enum! {
    /// Event-specific hook output, tagged by `hookEventName`.
    pub enum HookSpecificOutput tag "hookEventName" {
        /// `PreToolUse`.
        "PreToolUse" => PreToolUse(PreToolUseOutput),
        /// `PostToolUse`.
        "PostToolUse" => PostToolUse(PostToolUseOutput),
        /// `PostToolUseFailure`.
        "PostToolUseFailure" => PostToolUseFailure(AdditionalContextOutput),
        /// `PostToolBatch`.
        "PostToolBatch" => PostToolBatch(AdditionalContextOutput),
        /// `Notification`.
        "Notification" => Notification(AdditionalContextOutput),
        /// `UserPromptSubmit`.
        "UserPromptSubmit" => UserPromptSubmit(UserPromptSubmitOutput),
        /// `UserPromptExpansion`.
        "UserPromptExpansion" => UserPromptExpansion(UserPromptExpansionOutput),
        /// `SessionStart`.
        "SessionStart" => SessionStart(SessionStartOutput),
        /// `Setup`.
        "Setup" => Setup(AdditionalContextOutput),
        /// `Stop`.
        "Stop" => Stop(AdditionalContextOutput),
        /// `SubagentStart`.
        "SubagentStart" => SubagentStart(AdditionalContextOutput),
        /// `SubagentStop`.
        "SubagentStop" => SubagentStop(AdditionalContextOutput),
        /// `PreModelSwitch`.
        "PreModelSwitch" => PreModelSwitch(PreModelSwitchOutput),
        /// `PostModelSwitch`.
        "PostModelSwitch" => PostModelSwitch(AdditionalContextOutput),
        /// `PermissionRequest`.
        "PermissionRequest" => PermissionRequest(PermissionRequestOutput),
        /// `PermissionDenied`.
        "PermissionDenied" => PermissionDenied(PermissionDeniedOutput),
        /// `Elicitation`.
        "Elicitation" => Elicitation(ElicitationOutput),
        /// `ElicitationResult`.
        "ElicitationResult" => ElicitationResult(ElicitationOutput),
        /// `WorktreeCreate`.
        "WorktreeCreate" => WorktreeCreate(WorktreeCreateOutput),
        /// `CwdChanged`.
        "CwdChanged" => CwdChanged(WatchPathsOutput),
        /// `FileChanged`.
        "FileChanged" => FileChanged(WatchPathsOutput),
        /// `MessageDisplay`.
        "MessageDisplay" => MessageDisplay(MessageDisplayOutput),
        /// `PreSkillShellCommand`.
        "PreSkillShellCommand" => PreSkillShellCommand(PreSkillShellCommandOutput),
    }
}

wire_struct! {
    /// `PreToolUse` output.
    #[derive(Default)]
    pub struct PreToolUseOutput {
        /// Allow, deny, ask or defer.
        "permissionDecision" permission_decision: opt PermissionDecisionKind,
        /// Why (shown to the model on deny).
        "permissionDecisionReason" permission_decision_reason: opt String,
        /// The input to run the tool with instead.
        "updatedInput" updated_input: any Value,
        /// Context added for the model.
        "additionalContext" additional_context: opt String,
    }
}

wire_struct! {
    /// `PostToolUse` output.
    #[derive(Default)]
    pub struct PostToolUseOutput {
        /// Context added for the model.
        "additionalContext" additional_context: opt String,
        /// A replacement tool output (must fit the built-in tool's output schema).
        "updatedToolOutput" updated_tool_output: any Value,
        /// A replacement MCP tool output (legacy).
        "updatedMCPToolOutput" updated_mcp_tool_output: any Value,
        /// Context for the permission classifier.
        "classifierContext" classifier_context: opt String,
    }
}

wire_struct! {
    /// The output of the events that can only add context for the model.
    #[derive(Default)]
    pub struct AdditionalContextOutput {
        /// Context added for the model.
        "additionalContext" additional_context: opt String,
    }
}

wire_struct! {
    /// `UserPromptSubmit` output.
    #[derive(Default)]
    pub struct UserPromptSubmitOutput {
        /// Context added for the model.
        "additionalContext" additional_context: opt String,
        /// A title for the session.
        "sessionTitle" session_title: opt String,
        /// Drop the prompt itself.
        "suppressOriginalPrompt" suppress_original_prompt: opt bool,
    }
}

wire_struct! {
    /// `UserPromptExpansion` output.
    #[derive(Default)]
    pub struct UserPromptExpansionOutput {
        /// Context added for the model.
        "additionalContext" additional_context: opt String,
        /// Drop the prompt itself.
        "suppressOriginalPrompt" suppress_original_prompt: opt bool,
    }
}

wire_struct! {
    /// `SessionStart` output.
    #[derive(Default)]
    pub struct SessionStartOutput {
        /// Context added for the model.
        "additionalContext" additional_context: opt String,
        /// A first user message to send.
        "initialUserMessage" initial_user_message: opt String,
        /// A title for the session.
        "sessionTitle" session_title: opt String,
        /// Paths to watch (they fire `FileChanged`).
        "watchPaths" watch_paths: opt Vec<String>,
        /// Reload the skills.
        "reloadSkills" reload_skills: opt bool,
    }
}

wire_struct! {
    /// `PreModelSwitch` output.
    #[derive(Default)]
    pub struct PreModelSwitchOutput {
        /// Allow, deny or ask.
        "permissionDecision" permission_decision: opt PermissionDecisionKind,
        /// Why.
        "permissionDecisionReason" permission_decision_reason: opt String,
    }
}

wire_struct! {
    /// `PermissionRequest` output.
    #[derive(Default)]
    pub struct PermissionRequestOutput {
        /// Allow or deny in place of the prompt.
        "decision" decision: opt PermissionResult,
    }
}

wire_struct! {
    /// `PermissionDenied` output.
    #[derive(Default)]
    pub struct PermissionDeniedOutput {
        /// Let the model retry the call.
        "retry" retry: opt bool,
    }
}

wire_struct! {
    /// `Elicitation` and `ElicitationResult` output.
    #[derive(Default)]
    pub struct ElicitationOutput {
        /// `accept`, `decline` or `cancel`.
        "action" action: opt String,
        /// The answer, with `accept`.
        "content" content: any Value,
    }
}

wire_struct! {
    /// `WorktreeCreate` output.
    #[derive(Default)]
    pub struct WorktreeCreateOutput {
        /// The path of the worktree the hook created.
        "worktreePath" worktree_path: req String,
    }
}

wire_struct! {
    /// `CwdChanged` and `FileChanged` output.
    #[derive(Default)]
    pub struct WatchPathsOutput {
        /// Paths to watch (they fire `FileChanged`).
        "watchPaths" watch_paths: opt Vec<String>,
    }
}

wire_struct! {
    /// `MessageDisplay` output.
    #[derive(Default)]
    pub struct MessageDisplayOutput {
        /// The text to display instead.
        "displayContent" display_content: opt String,
    }
}

wire_struct! {
    /// `PreSkillShellCommand` output.
    #[derive(Default)]
    pub struct PreSkillShellCommandOutput {
        /// Allow, deny or ask.
        "permissionDecision" permission_decision: opt PermissionDecisionKind,
        /// Why.
        "permissionDecisionReason" permission_decision_reason: opt String,
        /// A replacement input (any value blocks the command).
        "updatedInput" updated_input: any Value,
    }
}

impl HookSpecificOutput {
    /// Output for `event` that adds `text` as `additionalContext`. For an event whose output
    /// byre models without that field, the field is kept in `extra` (or, for an event byre
    /// does not know, in an `Unknown` variant) and sent all the same.
    pub fn context(event: impl Into<HookEvent>, text: impl Into<String>) -> Self {
        let mut fields = serde_json::Map::new();
        fields.insert(
            Self::TAG.into(),
            Value::String(event.into().as_str().into()),
        );
        fields.insert("additionalContext".into(), Value::String(text.into()));
        serde_json::from_value(Value::Object(fields.clone())).unwrap_or(
            HookSpecificOutput::Unknown(Unknown {
                fields,
                mismatch: None,
            }),
        )
    }
}

impl HookOutput {
    /// `{}`: no opinion, the action proceeds as if no hook ran.
    pub fn none() -> Self {
        Self::default()
    }

    /// `decision: block` with a reason for the model (keeps a `Stop` going, refuses a prompt,
    /// ...).
    pub fn block(reason: impl Into<String>) -> Self {
        HookOutput {
            decision: Some(HookDecision::BLOCK),
            reason: Some(reason.into()),
            ..Self::default()
        }
    }

    /// `continue: false`: stop the agent, showing `reason`.
    pub fn stop(reason: impl Into<String>) -> Self {
        HookOutput {
            continue_: Some(false),
            stop_reason: Some(reason.into()),
            ..Self::default()
        }
    }

    /// From a `PreToolUse` hook: do not run the tool; `reason` goes to the model.
    pub fn deny_tool(reason: impl Into<String>) -> Self {
        Self::tool_decision(PermissionDecisionKind::DENY, Some(reason.into()))
    }

    /// From a `PreToolUse` hook: run the tool without asking `can_use_tool`.
    pub fn allow_tool(reason: Option<String>) -> Self {
        Self::tool_decision(PermissionDecisionKind::ALLOW, reason)
    }

    /// From a `PreToolUse` hook: ask through `can_use_tool`, with `reason` as its
    /// `decision_reason`.
    pub fn ask_tool(reason: Option<String>) -> Self {
        Self::tool_decision(PermissionDecisionKind::ASK, reason)
    }

    fn tool_decision(decision: PermissionDecisionKind, reason: Option<String>) -> Self {
        let out = PreToolUseOutput {
            permission_decision: Some(decision),
            permission_decision_reason: reason,
            ..Default::default()
        };
        HookOutput {
            hook_specific_output: Some(HookSpecificOutput::PreToolUse(out)),
            ..Self::default()
        }
    }

    /// Adds `text` as `additionalContext` for the model, in `event`'s output.
    pub fn with_context(event: impl Into<HookEvent>, text: impl Into<String>) -> Self {
        HookOutput {
            hook_specific_output: Some(HookSpecificOutput::context(event, text)),
            ..Self::default()
        }
    }

    /// `async: true`: the hook goes on in the background, for at most `timeout_ms`.
    pub fn async_(timeout_ms: Option<u64>) -> Self {
        HookOutput {
            async_: Some(true),
            async_timeout: timeout_ms.map(Number::from),
            ..Self::default()
        }
    }

    /// Sets `systemMessage`, a warning shown to the user.
    pub fn system_message(mut self, message: impl Into<String>) -> Self {
        self.system_message = Some(message.into());
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::FindUnknown;
    use serde_json::json;

    /// Decodes `text`, checks it is fully typed and encodes back to the same value.
    fn decode(text: &str) -> HookInput {
        let original: Value = serde_json::from_str(text).unwrap();
        let input: HookInput = serde_json::from_str(text).unwrap();
        assert!(input.is_fully_typed(), "{:?}", input.unknown_paths());
        assert_eq!(serde_json::to_value(&input).unwrap(), original);
        input
    }

    // From testdata/transcripts/cli-2.1.328/s03a_stop_hook_block.jsonl.
    const STOP: &str = r#"{"session_id": "e824eb88-cb51-4cbb-bfbc-a01d2b8d486c", "transcript_path": "/home/tester/.claude/projects/-srv-work/e824eb88-cb51-4cbb-bfbc-a01d2b8d486c.jsonl", "cwd": "/srv/work", "prompt_id": "2a4e3e80-1b44-4d8e-92dc-7405a3eb1374", "permission_mode": "bypassPermissions", "effort": {"level": "medium"}, "hook_event_name": "Stop", "stop_hook_active": true, "last_assistant_message": "Continuing because the Stop hook asked.", "background_tasks": [], "session_crons": []}"#;

    // From testdata/transcripts/cli-2.1.328/s03b_pretooluse_deny.jsonl.
    const PRE_TOOL_USE: &str = r#"{"session_id": "ba9b850b-a579-40f4-89fe-4f3b7da28faf", "transcript_path": "/home/tester/.claude/projects/-srv-work/ba9b850b-a579-40f4-89fe-4f3b7da28faf.jsonl", "cwd": "/srv/work", "prompt_id": "13016d01-72f6-45ad-bdce-dd00982aedec", "permission_mode": "bypassPermissions", "effort": {"level": "medium"}, "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "echo hi", "description": "Print hi"}, "tool_use_id": "toolu_mock0002"}"#;

    // The transcripts hold no PostToolUse or UserPromptSubmit callback: these two follow the
    // key sets observed with CLI 2.1.328, in the same order.
    const POST_TOOL_USE: &str = r#"{"session_id": "1e468b64-28e1-4fa4-a661-2d591770151f", "transcript_path": "/home/tester/.claude/projects/-srv-work/1e468b64-28e1-4fa4-a661-2d591770151f.jsonl", "cwd": "/srv/work", "prompt_id": "5d0f3b1e-0c57-4d43-9a0e-2b8a3e6f7c11", "permission_mode": "bypassPermissions", "effort": {"level": "medium"}, "hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": {"command": "echo hi", "description": "Print hi"}, "tool_response": {"stdout": "hi", "stderr": "", "interrupted": false, "isImage": false, "noOutputExpected": false}, "tool_use_id": "toolu_mock0001", "duration_ms": 14}"#;

    const USER_PROMPT_SUBMIT: &str = r#"{"session_id": "1e468b64-28e1-4fa4-a661-2d591770151f", "transcript_path": "/home/tester/.claude/projects/-srv-work/1e468b64-28e1-4fa4-a661-2d591770151f.jsonl", "cwd": "/srv/work", "prompt_id": "5d0f3b1e-0c57-4d43-9a0e-2b8a3e6f7c11", "permission_mode": "bypassPermissions", "hook_event_name": "UserPromptSubmit", "prompt": "Run echo hi"}"#;

    #[test]
    fn stop_input() {
        let input = decode(STOP);
        assert_eq!(input.event(), Some("Stop"));
        assert_eq!(input.hook_event(), Some(HookEvent::STOP));
        assert_eq!(
            input.session_id(),
            Some("e824eb88-cb51-4cbb-bfbc-a01d2b8d486c")
        );
        assert_eq!(input.cwd(), Some("/srv/work"));
        assert_eq!(input.tool_name(), None);
        let HookInput::Stop(stop) = input else {
            panic!("not Stop")
        };
        assert_eq!(stop.stop_hook_active, Some(true));
        assert_eq!(
            stop.permission_mode,
            Some(PermissionMode::BYPASS_PERMISSIONS)
        );
        assert_eq!(stop.effort, Some(json!({"level": "medium"})));
        assert_eq!(stop.background_tasks, Some(vec![]));
        assert_eq!(stop.session_crons, Some(vec![]));
        assert!(stop.extra.is_empty());
    }

    #[test]
    fn pre_tool_use_input() {
        let input = decode(PRE_TOOL_USE);
        assert_eq!(input.tool_name(), Some("Bash"));
        assert_eq!(
            input.tool_input(),
            Some(&json!({"command": "echo hi", "description": "Print hi"}))
        );
        let HookInput::PreToolUse(pre) = input else {
            panic!("not PreToolUse")
        };
        assert_eq!(pre.tool_use_id.as_deref(), Some("toolu_mock0002"));
        assert_eq!(
            pre.prompt_id.as_deref(),
            Some("13016d01-72f6-45ad-bdce-dd00982aedec")
        );
        assert!(pre.extra.is_empty());
    }

    #[test]
    fn post_tool_use_input() {
        let HookInput::PostToolUse(post) = decode(POST_TOOL_USE) else {
            panic!("not PostToolUse")
        };
        assert_eq!(post.tool_name, "Bash");
        assert_eq!(post.duration_ms, Some(Number::from(14)));
        assert_eq!(post.tool_response.as_ref().unwrap()["stdout"], "hi");
        assert!(post.extra.is_empty());
    }

    #[test]
    fn user_prompt_submit_input() {
        let HookInput::UserPromptSubmit(p) = decode(USER_PROMPT_SUBMIT) else {
            panic!("not UserPromptSubmit")
        };
        assert_eq!(p.prompt.as_deref(), Some("Run echo hi"));
        assert_eq!(p.effort, None);
        assert!(p.extra.is_empty());
    }

    #[test]
    fn unknown_event_is_kept() {
        let text = r#"{"session_id":"s","hook_event_name":"SomethingNew","x":1}"#;
        let input: HookInput = serde_json::from_str(text).unwrap();
        let HookInput::Unknown(u) = &input else {
            panic!("not Unknown")
        };
        assert_eq!(u.get_str("hook_event_name"), Some("SomethingNew"));
        assert_eq!(input.event(), Some("SomethingNew"));
        assert_eq!(input.session_id(), Some("s"));
        assert_eq!(
            serde_json::to_value(&input).unwrap(),
            serde_json::from_str::<Value>(text).unwrap()
        );
    }

    #[test]
    fn all_events_named() {
        assert_eq!(HookEvent::KNOWN.len(), 34);
        for name in HookEvent::KNOWN {
            let input: HookInput =
                serde_json::from_value(json!({"hook_event_name": name, "tool_name": "T"})).unwrap();
            assert!(
                !matches!(input, HookInput::Unknown(_)),
                "{name} has no HookInput variant"
            );
        }
    }

    #[test]
    fn matcher_writes_null() {
        let m = HookMatcher::new(None, vec!["hook_post".into()]);
        assert_eq!(
            serde_json::to_value(&m).unwrap(),
            json!({"matcher": null, "hookCallbackIds": ["hook_post"]})
        );
        let m = HookMatcher::new(Some("Bash".into()), vec!["hook_pre".into()]);
        assert_eq!(
            serde_json::to_string(&m).unwrap(),
            r#"{"matcher":"Bash","hookCallbackIds":["hook_pre"]}"#
        );
    }

    #[test]
    fn output_constructors() {
        let s = |o: &HookOutput| serde_json::to_string(o).unwrap();
        assert_eq!(s(&HookOutput::none()), "{}");
        assert_eq!(
            s(&HookOutput::block("x")),
            r#"{"decision":"block","reason":"x"}"#
        );
        assert_eq!(
            s(&HookOutput::deny_tool("r")),
            r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"r"}}"#
        );
        assert_eq!(
            s(&HookOutput::allow_tool(None)),
            r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}"#
        );
        assert_eq!(
            s(&HookOutput::stop("done")),
            r#"{"continue":false,"stopReason":"done"}"#
        );
        assert_eq!(
            s(&HookOutput::async_(Some(5000))),
            r#"{"async":true,"asyncTimeout":5000}"#
        );
        assert_eq!(
            s(&HookOutput::with_context(HookEvent::SESSION_START, "ctx")),
            r#"{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"ctx"}}"#
        );
        assert_eq!(
            s(&HookOutput::with_context("Stop", "more")),
            r#"{"hookSpecificOutput":{"hookEventName":"Stop","additionalContext":"more"}}"#
        );
        let denied = HookSpecificOutput::context(HookEvent::PERMISSION_DENIED, "c");
        assert!(
            matches!(&denied, HookSpecificOutput::PermissionDenied(d) if d.extra["additionalContext"] == "c")
        );
        let other = HookOutput::with_context("NewEvent", "c");
        assert_eq!(
            serde_json::to_value(&other).unwrap(),
            json!({"hookSpecificOutput": {"hookEventName": "NewEvent", "additionalContext": "c"}})
        );
    }

    #[test]
    fn outputs_from_transcripts_round_trip() {
        for text in [
            r#"{}"#,
            r#"{"decision": "block", "reason": "keep going"}"#,
            r#"{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "Bash is blocked by the host"}}"#,
            r#"{"continue": false, "async": true, "hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow", "updatedInput": {}}}}"#,
        ] {
            let out: HookOutput = serde_json::from_str(text).unwrap();
            assert!(out.is_fully_typed(), "{text}");
            assert_eq!(
                serde_json::to_value(&out).unwrap(),
                serde_json::from_str::<Value>(text).unwrap()
            );
        }
        let out: HookOutput =
            serde_json::from_str(r#"{"continue": false, "async": true}"#).unwrap();
        assert_eq!((out.continue_, out.async_), (Some(false), Some(true)));
    }
}
