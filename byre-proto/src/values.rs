//! Open string values the CLI keeps extending: each is named constants plus any other string.

use crate::wire::open_enum;

open_enum! {
    /// Why the model stopped (`stop_reason` of API messages, stream deltas and results).
    pub struct StopReason {
        /// The model finished its answer.
        END_TURN = "end_turn",
        /// The model asked for a tool.
        TOOL_USE = "tool_use",
        /// The output token limit was reached.
        MAX_TOKENS = "max_tokens",
        /// A stop sequence was generated.
        STOP_SEQUENCE = "stop_sequence",
        /// A long-running server tool paused the turn.
        PAUSE_TURN = "pause_turn",
        /// The model refused.
        REFUSAL = "refusal",
        /// The context window is full.
        MODEL_CONTEXT_WINDOW_EXCEEDED = "model_context_window_exceeded",
    }
}

open_enum! {
    /// Why a run of the agent loop ended (`terminal_reason` of a result).
    pub struct TerminalReason {
        /// The turn ran to its end.
        COMPLETED = "completed",
        /// Interrupted while tools ran.
        ABORTED_TOOLS = "aborted_tools",
        /// Interrupted while the API streamed.
        ABORTED_STREAMING = "aborted_streaming",
        /// Blocked by a context limit.
        BLOCKING_LIMIT = "blocking_limit",
        /// Tripped the rapid-refill breaker.
        RAPID_REFILL_BREAKER = "rapid_refill_breaker",
        /// The prompt was too long.
        PROMPT_TOO_LONG = "prompt_too_long",
        /// An image could not be used.
        IMAGE_ERROR = "image_error",
        /// The model failed.
        MODEL_ERROR = "model_error",
        /// The API returned an error.
        API_ERROR = "api_error",
        /// Repeated malformed tool calls.
        MALFORMED_TOOL_USE_EXHAUSTED = "malformed_tool_use_exhausted",
        /// A Stop hook prevented the stop.
        STOP_HOOK_PREVENTED = "stop_hook_prevented",
        /// A hook stopped the run.
        HOOK_STOPPED = "hook_stopped",
        /// A PreToolUse hook deferred a tool call.
        TOOL_DEFERRED = "tool_deferred",
        /// The deferred tool was not available.
        TOOL_DEFERRED_UNAVAILABLE = "tool_deferred_unavailable",
        /// `--max-turns` was reached.
        MAX_TURNS = "max_turns",
        /// The run was moved to the background.
        BACKGROUND_REQUESTED = "background_requested",
        /// `--max-budget-usd` was reached.
        BUDGET_EXHAUSTED = "budget_exhausted",
        /// Structured output retries ran out.
        STRUCTURED_OUTPUT_RETRY_EXHAUSTED = "structured_output_retry_exhausted",
        /// The turn could not be set up.
        TURN_SETUP_FAILED = "turn_setup_failed",
    }
}

open_enum! {
    /// The `subtype` of a `result` message.
    pub struct ResultSubtype {
        /// The turn ended normally (`is_error` may still be true after an API error).
        SUCCESS = "success",
        /// The turn was cut short, for example by an interrupt, or start-up failed.
        ERROR_DURING_EXECUTION = "error_during_execution",
        /// `--max-turns` was reached.
        ERROR_MAX_TURNS = "error_max_turns",
        /// `--max-budget-usd` was reached.
        ERROR_MAX_BUDGET_USD = "error_max_budget_usd",
        /// Structured output could not be produced.
        ERROR_MAX_STRUCTURED_OUTPUT_RETRIES = "error_max_structured_output_retries",
    }
}

open_enum! {
    /// A permission mode (`--permission-mode`, `set_permission_mode`, `permissionMode`).
    pub struct PermissionMode {
        /// Ask for anything not allowed by rules.
        DEFAULT = "default",
        /// Accept file edits without asking.
        ACCEPT_EDITS = "acceptEdits",
        /// Never ask (refused as root unless `IS_SANDBOX=1`).
        BYPASS_PERMISSIONS = "bypassPermissions",
        /// Plan only, run nothing.
        PLAN = "plan",
        /// Deny anything that would ask.
        DONT_ASK = "dontAsk",
        /// Let a classifier decide.
        AUTO = "auto",
    }
}

open_enum! {
    /// The error kind of an assistant message or API retry (`SDKAssistantMessageError`).
    pub struct AssistantError {
        /// No valid credentials.
        AUTHENTICATION_FAILED = "authentication_failed",
        /// The organisation is not allowed.
        OAUTH_ORG_NOT_ALLOWED = "oauth_org_not_allowed",
        /// The account is on hold.
        ACCOUNT_ON_HOLD = "account_on_hold",
        /// The account needs verification.
        VERIFICATION_REQUIRED = "verification_required",
        /// A billing problem.
        BILLING_ERROR = "billing_error",
        /// Rate limited.
        RATE_LIMIT = "rate_limit",
        /// The API is overloaded.
        OVERLOADED = "overloaded",
        /// The request was invalid.
        INVALID_REQUEST = "invalid_request",
        /// The model does not exist.
        MODEL_NOT_FOUND = "model_not_found",
        /// The API failed.
        SERVER_ERROR = "server_error",
        /// Unclassified.
        UNKNOWN = "unknown",
        /// The output token limit was reached.
        MAX_OUTPUT_TOKENS = "max_output_tokens",
        /// Cloud provider credentials failed.
        CLOUD_CREDENTIAL_ERROR = "cloud_credential_error",
    }
}

open_enum! {
    /// Where the CLI's API key came from (`apiKeySource` of `system/init`).
    pub struct ApiKeySource {
        /// The `ANTHROPIC_API_KEY` environment variable.
        ANTHROPIC_API_KEY = "ANTHROPIC_API_KEY",
        /// An `apiKeyHelper` command.
        API_KEY_HELPER = "apiKeyHelper",
        /// The key managed by `/login`.
        LOGIN_MANAGED_KEY = "/login managed key",
        /// No key.
        NONE = "none",
        /// Legacy: user settings.
        USER = "user",
        /// Legacy: project settings.
        PROJECT = "project",
        /// Legacy: organisation.
        ORG = "org",
        /// Legacy: temporary.
        TEMPORARY = "temporary",
        /// Legacy: OAuth.
        OAUTH = "oauth",
    }
}

open_enum! {
    /// The status of a background or foreground task.
    pub struct TaskStatus {
        /// Not started yet.
        PENDING = "pending",
        /// Running.
        RUNNING = "running",
        /// Finished.
        COMPLETED = "completed",
        /// Failed.
        FAILED = "failed",
        /// Killed.
        KILLED = "killed",
        /// Stopped (for example by an interrupt).
        STOPPED = "stopped",
        /// Paused.
        PAUSED = "paused",
    }
}

open_enum! {
    /// The kind of a task (`task_type`).
    pub struct TaskType {
        /// A Bash command.
        LOCAL_BASH = "local_bash",
        /// A subagent.
        LOCAL_AGENT = "local_agent",
        /// A workflow.
        LOCAL_WORKFLOW = "local_workflow",
        /// An MCP task.
        MCP_TASK = "mcp_task",
    }
}

open_enum! {
    /// The session state of `system/session_state_changed`.
    pub struct SessionState {
        /// Nothing running: the run is over.
        IDLE = "idle",
        /// A turn is running.
        RUNNING = "running",
        /// Waiting for the host (a permission prompt, a dialog).
        REQUIRES_ACTION = "requires_action",
    }
}

open_enum! {
    /// The state of a queued user message in `command_lifecycle`.
    pub struct CommandState {
        /// Waiting for the current turn.
        QUEUED = "queued",
        /// Its turn started.
        STARTED = "started",
        /// Its turn finished.
        COMPLETED = "completed",
        /// Dropped.
        CANCELLED = "cancelled",
    }
}

open_enum! {
    /// The priority of a user message or notification.
    pub struct Priority {
        /// Interrupt what runs now.
        NOW = "now",
        /// After the current step.
        NEXT = "next",
        /// When idle.
        LATER = "later",
        /// Low.
        LOW = "low",
        /// Medium.
        MEDIUM = "medium",
        /// High.
        HIGH = "high",
        /// Immediate.
        IMMEDIATE = "immediate",
    }
}

open_enum! {
    /// The status of an MCP server.
    pub struct McpServerState {
        /// Connected.
        CONNECTED = "connected",
        /// Failed to connect.
        FAILED = "failed",
        /// Needs authentication.
        NEEDS_AUTH = "needs-auth",
        /// Connecting.
        PENDING = "pending",
        /// Disabled.
        DISABLED = "disabled",
    }
}

open_enum! {
    /// The role of an API message.
    pub struct Role {
        /// The user (and tool results).
        USER = "user",
        /// The model.
        ASSISTANT = "assistant",
        /// A system message (the CLI inserts one in API requests).
        SYSTEM = "system",
    }
}

open_enum! {
    /// How hard the model thinks (`--effort`, an agent's `effort`; a model lists the levels it
    /// takes in `supportedEffortLevels`).
    pub struct Effort {
        /// The least effort.
        LOW = "low",
        /// Medium effort.
        MEDIUM = "medium",
        /// High effort.
        HIGH = "high",
        /// More than high.
        XHIGH = "xhigh",
        /// The most effort.
        MAX = "max",
    }
}

open_enum! {
    /// Where the CLI asks for permissions (`--permission-prompts`).
    pub struct PermissionPrompts {
        /// The host is asked (`can_use_tool`).
        HOST = "host",
        /// Nothing is asked: what would ask is denied.
        NONE = "none",
    }
}

open_enum! {
    /// How thinking is shown in the output (`--thinking-display`).
    pub struct ThinkingDisplay {
        /// A summary of the thinking.
        SUMMARIZED = "summarized",
        /// No thinking text.
        OMITTED = "omitted",
    }
}

open_enum! {
    /// The service tier a call ran on (`usage.service_tier`).
    pub struct ServiceTier {
        /// The standard tier.
        STANDARD = "standard",
        /// The priority tier.
        PRIORITY = "priority",
        /// The batch tier.
        BATCH = "batch",
    }
}

open_enum! {
    /// The speed a call ran at (`usage.speed`).
    pub struct Speed {
        /// The standard speed.
        STANDARD = "standard",
    }
}

open_enum! {
    /// The API provider a model was called through (`modelUsage`'s `provider`).
    pub struct ModelProvider {
        /// Anthropic's own API.
        FIRST_PARTY = "firstParty",
    }
}

open_enum! {
    /// How a model's cost was computed (`modelUsage`'s `costBasis`).
    pub struct CostBasis {
        /// From list prices.
        LIST = "list",
    }
}

open_enum! {
    /// Whether fast mode is on (`fast_mode_state` of `system/init`, results and the
    /// `initialize` answer).
    pub struct FastModeState {
        /// Off.
        OFF = "off",
    }
}

open_enum! {
    /// Why fast mode is not available (`fast_mode_disabled_reason`).
    pub struct FastModeDisabledReason {
        /// A program driving the CLI has to opt in to it.
        SDK_OPT_IN_REQUIRED = "sdk_opt_in_required",
    }
}

open_enum! {
    /// The CLI's view mode (`view_mode` of `system/init`).
    pub struct ViewMode {
        /// The default view.
        DEFAULT = "default",
    }
}
