//! Hooks: the events, their registrations, the input the CLI sends in `hook_callback` and the
//! output the host answers with.

use serde_json::Value;

use crate::wire::{open_enum, wire_enum, wire_struct, Number};

open_enum! {
    /// A hook event name.
    pub struct HookEvent {
        /// Before a tool runs.
        PRE_TOOL_USE = "PreToolUse",
        /// When the agent stops.
        STOP = "Stop",
    }
}

wire_struct! {
    /// One hook registration of `initialize`: which callbacks run for which tools.
    pub struct HookMatcher {
        /// A tool-name matcher (`"Bash"`, `"Write|Edit"`); `null` or absent matches all.
        "matcher" matcher: opt String,
        /// The callback ids (`hook_0`, `hook_1`, ... in registration order).
        "hookCallbackIds" hook_callback_ids: req Vec<String>,
        /// Seconds before the CLI gives up on a callback.
        "timeout" timeout: opt Number,
    }
}

wire_enum! {
    /// The input of a hook callback, tagged by `hook_event_name`.
    pub enum HookInput tag "hook_event_name" {
        /// Stop.
        "Stop" => Stop(StopHookInput),
    }
}

wire_struct! {
    /// Stop input.
    pub struct StopHookInput {
        /// The session.
        "session_id" session_id: opt String,
        /// Whether a Stop hook already blocked once.
        "stop_hook_active" stop_hook_active: opt bool,
    }
}

wire_struct! {
    /// A hook's output.
    #[derive(Default)]
    pub struct HookOutput {
        /// `block` feeds `reason` back to the model.
        "decision" decision: opt String,
        /// Feedback for the model.
        "reason" reason: opt String,
        /// Event-specific output.
        "hookSpecificOutput" hook_specific_output: opt Value,
    }
}
