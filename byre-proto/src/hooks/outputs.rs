//! What a hook callback answers: [`HookOutput`], its per-event [`HookSpecificOutput`] and the
//! constructors for common answers.

use serde_json::Value;

use super::events::HookEvent;
use crate::permissions::PermissionResult;
use crate::wire::{open_enum, wire_enum, wire_struct, Number, Unknown};

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
    ///
    /// The constructors cover the common answers; a hook handler of byre-session returns one
    /// (the guide's `docs/hooks.md` has a whole hook).
    ///
    /// ```
    /// use byre_proto::HookOutput;
    /// use serde_json::json;
    ///
    /// // From a PreToolUse hook: do not run the tool, and tell the model why.
    /// let deny = HookOutput::deny_tool("no deleting here");
    /// assert_eq!(
    ///     serde_json::to_value(&deny)?,
    ///     json!({"hookSpecificOutput": {
    ///         "hookEventName": "PreToolUse",
    ///         "permissionDecision": "deny",
    ///         "permissionDecisionReason": "no deleting here",
    ///     }}),
    /// );
    /// // No opinion: the action goes on as if no hook ran.
    /// assert_eq!(serde_json::to_value(HookOutput::none())?, json!({}));
    /// // Stop the agent, with a warning for the user.
    /// let stop = HookOutput::stop("the build is red").system_message("stopped by the CI hook");
    /// assert_eq!(stop.continue_, Some(false));
    /// # Ok::<(), serde_json::Error>(())
    /// ```
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
        serde_json::from_value(Value::Object(fields.clone()))
            .unwrap_or(HookSpecificOutput::Unknown(Unknown::boxed(fields)))
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

    /// Sets `reason`, the text that goes with a `decision` (to the model, or to the user).
    pub fn reason(mut self, reason: impl Into<String>) -> Self {
        self.reason = Some(reason.into());
        self
    }

    /// Sets `continue`: `false` stops the agent after this hook (see [`HookOutput::stop`],
    /// which also gives the reason shown).
    pub fn continue_(mut self, go_on: bool) -> Self {
        self.continue_ = Some(go_on);
        self
    }

    /// Sets `suppressOutput`: the hook's output is kept out of the transcript.
    pub fn suppress_output(mut self) -> Self {
        self.suppress_output = Some(true);
        self
    }
}
