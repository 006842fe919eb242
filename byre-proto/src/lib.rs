//! Lossless, IO-free types for every message of the Claude Code CLI's stream-json protocol.
//!
//! byre-proto turns one line of the protocol into a typed value and back. It does no IO, has
//! no async runtime and no clock: framing lines is `byre-transport`'s job, and the state of a
//! session is `byre-session`'s.
//!
//! To drive the CLI, depend on byre-session, which re-exports this crate as `byre_session::proto`;
//! the guide's [protocol page][protocol] reads CLI output with these types, and the [guide][guide]
//! covers the rest by task. byre-testkit runs the real CLI offline against a fake model, and the
//! recorded lines in the repository's `testdata/transcripts/` decode with these types.
//!
//! ```
//! use byre_proto::{CliMessage, SystemMessage};
//!
//! let line = br#"{"type":"system","subtype":"init","session_id":"s1","model":"m","tools":[]}"#;
//! match CliMessage::from_slice(line)? {
//!     CliMessage::System(SystemMessage::Init(init)) => {
//!         assert_eq!(init.session_id.as_deref(), Some("s1"));
//!     }
//!     other => panic!("unexpected {other:?}"),
//! }
//! # Ok::<(), byre_proto::DecodeError>(())
//! ```
//!
//! # The wire format
//!
//! Both directions are NDJSON: exactly one JSON object per `\n`-terminated line, UTF-8.
//! Newlines inside strings are escaped, so a line is a message. The CLI writes on stdout
//! ([`CliMessage`]) and reads on stdin ([`HostMessage`]). Lines can be large: the CLI writes
//! single lines of several megabytes (a long answer, a big tool result, a `system/init` with
//! many MCP tools).
//!
//! ## The envelope
//!
//! Every message is an object with a string `type`. Its position is not fixed: in a `result`
//! line `type` is about the 19th key, and in a start-up failure `result` it is the first.
//! byre finds every field by key. Most messages also carry `session_id` and `uuid`; lines
//! that belong to a subagent carry `parent_tool_use_id` naming the Agent tool call.
//!
//! ## The families
//!
//! - **Conversation** — `assistant` (one line per content block; `message.stop_reason` is
//!   always `null` there), `user` (tool results with `tool_use_result` and
//!   `tool_result_meta`; synthetic lines; echoes with `isReplay`), `result` (the end of a
//!   turn: `subtype` `success` or `error_*`, cumulative `total_cost_usd` and `modelUsage`,
//!   per-turn `usage`, `terminal_reason`, `origin` on turns the CLI started by itself).
//! - **`system`**, tagged again by `subtype`: `init` (sent at the start of *every* turn, not at
//!   launch), `status`, `task_*`, `background_tasks_changed`, `thinking_tokens`,
//!   `notification`, `permission_denied`, `session_state_changed`, hooks, and more: see
//!   [`SystemMessage`].
//! - **Streaming** — `stream_event` wraps a raw Anthropic streaming event ([`StreamEvent`]):
//!   `message_start`, `content_block_start`, `content_block_delta` (text, input JSON,
//!   thinking, signature, citations), `content_block_stop`, `message_delta`, `message_stop`.
//! - **Progress and bookkeeping** — `tool_progress` heartbeats (their `parent_tool_use_id` is
//!   the running tool itself), `command_lifecycle` for host messages that carried a `uuid`,
//!   `rate_limit_event`, `auth_status`, `tool_use_summary`, `prompt_suggestion`,
//!   `conversation_reset`, `active_goal`, `keep_alive`, `transcript_mirror`.
//! - **Control** — either side sends `control_request` (`request_id`, `request.subtype`) and
//!   the other answers once with `control_response` (`response.subtype` `success` with a
//!   payload, or `error` with `error` and `error_code`); `control_cancel_request` withdraws a
//!   request. Host → CLI bodies are [`HostRequest`], each naming its success payload through
//!   [`ControlRequestBody`]; CLI → host bodies are [`CliRequest`] (`can_use_tool`,
//!   `hook_callback`, `mcp_message`, `elicitation`, `request_user_dialog`).
//!
//! ## Forward compatibility
//!
//! The CLI changes often, so nothing it sends is an error unless the line is not a message
//! at all (not JSON, not an object, no string `type`: a [`DecodeError`] that keeps the line's
//! length and first bytes). Everything else decodes:
//!
//! - an unknown `type`, `system` subtype, control subtype, content block, stream event,
//!   delta or hook event becomes an `Unknown` variant holding the object's keys;
//! - every struct keeps the fields it does not know in `extra`;
//! - a typed optional field received as `null` decodes as `None` and its `null` is remembered
//!   (`is_null`, `set_null`), so null and absent stay distinct; a field that holds any JSON
//!   value is an `Option<Value>` (absent is `None`) and keeps `null` as `Some(Value::Null)`;
//! - numbers keep their form: integers stay integers, and floats decode to the nearest `f64`
//!   and are written back exactly;
//! - values the CLI extends (stop reasons, terminal reasons, permission modes, task status,
//!   error kinds, ...) are open strings: named constants plus any other string;
//! - a line whose `type` is known is always delivered as that type, whatever is inside it: a
//!   part that does not fit the model (a value nested deeper than the 128 levels a `Value`
//!   holds, a number out of `f64`'s range, a field of another type, a required field missing)
//!   is kept as its JSON text where it sits, a [`Misfit`] in the [`Extra`] of the object around
//!   it, and the rest stays typed. [`CliMessage::decode`] lists the misfits of a line (none
//!   for anything today's CLI writes); decoding has no depth limit that valid JSON can reach,
//!   and its stack stays bounded.
//!
//! Encoding a decoded message gives back the same JSON value (key order may differ; a misfit
//! is written back as the text it came in). A key repeated in one object is kept once (the
//! first `type`; the last of other keys). The [`FindUnknown`] trait tells whether a decoded
//! tree is fully typed, and where it is not.
//!
//! ## Example lines
//!
//! Each is one line on the wire; the longer ones are wrapped here.
//!
//! ```text
//! {"type":"user","message":{"role":"user","content":"hi"},"parent_tool_use_id":null,
//!  "session_id":""}
//! {"type":"control_request","request_id":"req_1","request":{"subtype":"interrupt"}}
//! {"type":"stream_event","event":{"type":"content_block_delta","index":0,
//!  "delta":{"type":"text_delta","text":"He"}},"session_id":"s","parent_tool_use_id":null,
//!  "uuid":"u"}
//! {"type":"control_response","response":{"subtype":"error","request_id":"r",
//!  "error":"Unsupported control request subtype: x","error_code":"unsupported_request"}}
//! ```
//!
//! [protocol]: https://github.com/byre-rs/byre/blob/main/docs/protocol.md
//! [guide]: https://github.com/byre-rs/byre/blob/main/docs/README.md

mod cli_request;
mod content;
mod control;
mod conversation;
mod decode;
mod events;
mod hooks;
mod host_request;
mod mcp;
mod message;
mod names;
mod permissions;
mod session_file;
mod session_key;
mod stream;
mod surrogates;
mod system;
mod system_tasks;
mod text;
mod validate;
mod values;
mod version;
mod wire;

pub use crate::cli_request::*;
pub use crate::content::*;
pub use crate::control::*;
pub use crate::conversation::*;
pub use crate::decode::{AnyMessage, DecodeError, DecodeErrorKind, Decoded, Direction};
pub use crate::events::*;
pub use crate::hooks::*;
pub use crate::host_request::*;
pub use crate::mcp::*;
pub use crate::message::{CliMessage, HostMessage};
pub use crate::names::{Names, NamesIter};
pub use crate::permissions::*;
pub use crate::session_file::{EntryKind, SessionEntry};
pub use crate::session_key::{InvalidKey, SessionKey};
pub use crate::stream::*;
pub use crate::system::*;
pub use crate::system_tasks::*;
pub use crate::text::{Text, SHARE_LINE_MIN};
pub use crate::validate::{first_difference, round_trips};
pub use crate::values::*;
pub use crate::version::{CliVersion, CliVersionNumber};
pub use crate::wire::{Extra, FindUnknown, Misfit, Number, RawJson, Unknown};
