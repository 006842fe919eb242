//! Hook events: the [`HookEvent`] names, the [`HookInput`] union over every event's input, and
//! the [`HookMatcher`] registrations of `initialize`.

use serde_json::Value;

use super::inputs::*;
use crate::wire::{open_enum, wire_enum, wire_struct, Extra, Number};

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
    POST_TOOL_USE_FAILURE "PostToolUseFailure" =>
        PostToolUseFailure(PostToolUseFailureHookInput),
    /// After a batch of parallel tool calls.
    POST_TOOL_BATCH "PostToolBatch" => PostToolBatch(PostToolBatchHookInput),
    /// A notification for the user.
    NOTIFICATION "Notification" => Notification(NotificationHookInput),
    /// The user submitted a prompt.
    USER_PROMPT_SUBMIT "UserPromptSubmit" => UserPromptSubmit(UserPromptSubmitHookInput),
    /// A slash command or MCP prompt was expanded.
    USER_PROMPT_EXPANSION "UserPromptExpansion" =>
        UserPromptExpansion(UserPromptExpansionHookInput),
    /// A session started, resumed, was cleared or compacted.
    SESSION_START "SessionStart" => SessionStart(SessionStartHookInput),
    /// A session ended.
    SESSION_END "SessionEnd" => SessionEnd(SessionEndHookInput),
    /// The agent is about to stop.
    STOP "Stop" => Stop(StopHookInput),
    /// The turn ended on an API error.
    STOP_FAILURE "StopFailure" => StopFailure(StopFailureHookInput),
    /// An interrupt ended the main conversation's turn (CLI 2.1.337 and later; its output is
    /// ignored).
    INTERRUPT "Interrupt" => Interrupt(InterruptHookInput),
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
    PRE_SKILL_SHELL_COMMAND "PreSkillShellCommand" =>
        PreSkillShellCommand(PreSkillShellCommandHookInput),
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

    /// The shell command of a Bash tool call (its input's `command`), for the events about
    /// one tool call; `None` for another tool or event.
    pub fn bash_command(&self) -> Option<&str> {
        bash_command(self.tool_name()?, self.tool_input()?)
    }
}

/// `input`'s `command` when `tool` is Bash.
pub(crate) fn bash_command<'a>(tool: &str, input: &'a Value) -> Option<&'a str> {
    (tool == "Bash").then(|| input.get("command")?.as_str())?
}
