//! Permissions: rule updates (`PermissionUpdate`) and the answer to `can_use_tool`.

use serde_json::Value;

use crate::values::PermissionMode;
use crate::wire::{open_enum, wire_enum, wire_struct};

wire_enum! {
    /// A change to permission rules, directories or mode, tagged by `type`. Sent by the CLI as
    /// suggestions and by the host in an allow answer.
    pub enum PermissionUpdate tag "type" {
        /// Add rules.
        "addRules" => AddRules(RulesUpdate),
        /// Replace rules.
        "replaceRules" => ReplaceRules(RulesUpdate),
        /// Remove rules.
        "removeRules" => RemoveRules(RulesUpdate),
        /// Set the permission mode.
        "setMode" => SetMode(ModeUpdate),
        /// Add working directories.
        "addDirectories" => AddDirectories(DirectoriesUpdate),
        /// Remove working directories.
        "removeDirectories" => RemoveDirectories(DirectoriesUpdate),
    }
}

wire_struct! {
    /// Rules to add, replace or remove.
    pub struct RulesUpdate {
        /// The rules.
        "rules" rules: req Vec<PermissionRule>,
        /// `allow`, `deny` or `ask`.
        "behavior" behavior: req PermissionBehavior,
        /// Where to store them.
        "destination" destination: opt PermissionDestination,
    }
}

wire_struct! {
    /// A permission rule: a tool, optionally narrowed (`Bash` + `npm test`).
    pub struct PermissionRule {
        /// The tool.
        "toolName" tool_name: req String,
        /// What it applies to; absent for the whole tool.
        "ruleContent" rule_content: opt String,
    }
}

wire_struct! {
    /// A permission mode change.
    pub struct ModeUpdate {
        /// The mode.
        "mode" mode: req PermissionMode,
        /// Where to store it.
        "destination" destination: opt PermissionDestination,
    }
}

wire_struct! {
    /// Directories to add or remove.
    pub struct DirectoriesUpdate {
        /// Absolute paths.
        "directories" directories: req Vec<String>,
        /// Where to store them.
        "destination" destination: opt PermissionDestination,
    }
}

open_enum! {
    /// What a rule does.
    pub struct PermissionBehavior {
        /// Allow.
        ALLOW = "allow",
        /// Deny.
        DENY = "deny",
        /// Ask.
        ASK = "ask",
    }
}

open_enum! {
    /// Where a permission update is stored.
    pub struct PermissionDestination {
        /// `~/.claude/settings.json`.
        USER_SETTINGS = "userSettings",
        /// `.claude/settings.json`.
        PROJECT_SETTINGS = "projectSettings",
        /// `.claude/settings.local.json`.
        LOCAL_SETTINGS = "localSettings",
        /// This session only.
        SESSION = "session",
        /// As if given on the command line.
        CLI_ARG = "cliArg",
    }
}

wire_enum! {
    /// The answer to `can_use_tool`, tagged by `behavior`.
    pub enum PermissionResult tag "behavior" {
        /// Run the tool.
        "allow" => Allow(PermissionAllow),
        /// Do not run it.
        "deny" => Deny(PermissionDeny),
    }
}

wire_struct! {
    /// Allow a tool call.
    #[derive(Default)]
    pub struct PermissionAllow {
        /// The input to run it with (send the original input if unchanged).
        "updatedInput" updated_input: any Value,
        /// Rule changes to apply (all or none are applied).
        "updatedPermissions" updated_permissions: opt Vec<PermissionUpdate>,
        /// The tool call.
        "toolUseID" tool_use_id: opt String,
        /// `user_temporary`, `user_permanent`, `user_reject` or `config` (a configured rule).
        "decisionClassification" decision_classification: opt String,
    }
}

wire_struct! {
    /// Deny a tool call.
    #[derive(Default)]
    pub struct PermissionDeny {
        /// What the model is told.
        "message" message: opt String,
        /// Also interrupt the turn.
        "interrupt" interrupt: opt bool,
        /// The tool call.
        "toolUseID" tool_use_id: opt String,
        /// `user_temporary`, `user_permanent`, `user_reject` or `config` (a configured rule).
        "decisionClassification" decision_classification: opt String,
    }
}

impl PermissionResult {
    /// Allow with this input.
    pub fn allow(updated_input: Value) -> Self {
        PermissionResult::Allow(PermissionAllow {
            updated_input: Some(updated_input),
            ..Default::default()
        })
    }

    /// Deny with a message for the model.
    pub fn deny(message: impl Into<String>) -> Self {
        PermissionResult::Deny(PermissionDeny {
            message: Some(message.into()),
            ..Default::default()
        })
    }

    /// Deny and interrupt the turn.
    pub fn deny_and_interrupt(message: impl Into<String>) -> Self {
        PermissionResult::Deny(PermissionDeny {
            message: Some(message.into()),
            interrupt: Some(true),
            ..Default::default()
        })
    }
}

/// The name of the tool that asks the user multiple-choice questions. The CLI offers it when
/// the host answers permission prompts (`--permission-prompt-tool stdio`), and asks the host
/// with `can_use_tool` each time the model calls it; the host answers by allowing the call
/// with the user's answers added to its input ([`AskUserQuestionInput::answered`]).
pub const ASK_USER_QUESTION: &str = "AskUserQuestion";

wire_struct! {
    /// The input of an `AskUserQuestion` call: one to four questions, and, in the host's
    /// answer, the user's answers.
    pub struct AskUserQuestionInput {
        /// The questions.
        "questions" questions: req Vec<Question>,
        /// The answers, keyed by question text (set by the host).
        "answers" answers: opt std::collections::BTreeMap<String, String>,
        /// Notes per question, keyed by question text (set by the host).
        "annotations" annotations: opt std::collections::BTreeMap<String, QuestionAnnotation>,
        /// Where the question comes from.
        "metadata" metadata: opt Value,
    }
}

wire_struct! {
    /// One question of an `AskUserQuestion` call.
    pub struct Question {
        /// The question.
        "question" question: req String,
        /// A short label for it.
        "header" header: opt String,
        /// The choices.
        "options" options: opt Vec<QuestionOption>,
        /// Whether several choices may be picked.
        "multiSelect" multi_select: opt bool,
    }
}

wire_struct! {
    /// One choice of a question.
    pub struct QuestionOption {
        /// The choice, as the answer gives it.
        "label" label: req String,
        /// What it means.
        "description" description: opt String,
        /// Content to show for it.
        "preview" preview: opt String,
    }
}

wire_struct! {
    /// The user's notes on a question's answer.
    pub struct QuestionAnnotation {
        /// Free text.
        "notes" notes: opt String,
        /// The preview of the chosen option.
        "preview" preview: opt String,
    }
}

impl AskUserQuestionInput {
    /// The permission answer that gives the model these answers (question text → answer;
    /// for several choices, their labels joined with `", "`): the call is allowed with its
    /// input plus `answers`. Every field of the original input is kept.
    pub fn answered<Q, A>(mut self, answers: impl IntoIterator<Item = (Q, A)>) -> PermissionResult
    where
        Q: Into<String>,
        A: Into<String>,
    {
        let map = self.answers.get_or_insert_with(Default::default);
        map.extend(answers.into_iter().map(|(q, a)| (q.into(), a.into())));
        PermissionResult::allow(serde_json::to_value(&self).unwrap_or(Value::Null))
    }
}
