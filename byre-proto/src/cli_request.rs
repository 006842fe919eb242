//! Requests from the CLI to the host (`can_use_tool`, `hook_callback`, `mcp_message`,
//! `elicitation`, `request_user_dialog`) and the typed answers the host gives.

use serde::Serialize;
use serde_json::Value;

use crate::hooks::{HookInput, HookOutput};
use crate::mcp::JsonRpcMessage;
use crate::permissions::{
    AskUserQuestionInput, PermissionResult, PermissionUpdate, ASK_USER_QUESTION,
};
use crate::wire::{wire_enum, wire_struct};

wire_enum! {
    /// A request from the CLI to the host, tagged by `subtype`.
    pub enum CliRequest tag "subtype" {
        /// May this tool run? (Only with `--permission-prompt-tool stdio`.) Answer with a
        /// [`PermissionResult`].
        "can_use_tool" => CanUseTool(CanUseToolRequest),
        /// Run a hook callback registered at `initialize`. Answer with a [`HookOutput`].
        "hook_callback" => HookCallback(HookCallbackRequest),
        /// A JSON-RPC message for an in-process MCP server. Answer with a
        /// [`McpMessageResponse`].
        "mcp_message" => McpMessage(McpMessageRequest),
        /// An MCP server asks the user for input. Answer with an [`ElicitationResponse`].
        "elicitation" => Elicitation(ElicitationRequest),
        /// Show a dialog of a kind the host declared. Answer with a [`UserDialogResponse`].
        "request_user_dialog" => RequestUserDialog(UserDialogRequest),
    }
}

wire_struct! {
    /// `can_use_tool`: may this tool call run? Answer with [`allow`](Self::allow) or
    /// [`deny`](Self::deny), each a [`PermissionResult`].
    ///
    /// byre-session's `Options::can_use_tool` hands each request to the program's handler;
    /// the guide's `docs/permissions.md` says when the CLI asks.
    ///
    /// ```
    /// use byre_proto::{CanUseToolRequest, PermissionResult};
    /// use serde_json::json;
    ///
    /// let request: CanUseToolRequest = serde_json::from_value(json!({
    ///     "tool_name": "Bash",
    ///     "input": {"command": "rm -rf target"},
    ///     "tool_use_id": "toolu_01",
    /// }))?;
    /// let command = request.input["command"].as_str().unwrap_or("");
    /// let answer = if request.tool_name == "Bash" && command.starts_with("rm ") {
    ///     request.deny("no deleting in this session")
    /// } else {
    ///     request.allow() // with the input unchanged
    /// };
    /// assert!(matches!(answer, PermissionResult::Deny(_)));
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub struct CanUseToolRequest {
        /// The tool.
        "tool_name" tool_name: req String,
        /// Its input.
        "input" input: req Value,
        /// The tool call.
        "tool_use_id" tool_use_id: opt String,
        /// Its display name.
        "display_name" display_name: opt String,
        /// A description of the call.
        "description" description: opt String,
        /// A title for the prompt.
        "title" title: opt String,
        /// Rules the user could add to stop being asked.
        "permission_suggestions" permission_suggestions: opt Vec<PermissionUpdate>,
        /// The path that made it ask.
        "blocked_path" blocked_path: opt String,
        /// Why it asks (may hold ANSI colours).
        "decision_reason" decision_reason: opt String,
        /// The kind of reason (`rule`, `mode`, `hook`, ...).
        "decision_reason_type" decision_reason_type: opt String,
        /// Whether a classifier could approve it.
        "classifier_approvable" classifier_approvable: opt bool,
        /// Hide "always allow".
        "suppress_always_allow_rule" suppress_always_allow_rule: opt bool,
        /// Default the prompt to no.
        "default_to_no" default_to_no: opt bool,
        /// The ask rule that matched.
        "matched_ask_rule" matched_ask_rule: any Value,
        /// The subagent asking.
        "agent_id" agent_id: opt String,
        /// The MCP server of the tool.
        "mcp_server" mcp_server: any Value,
        /// Whether a person must answer.
        "requires_user_interaction" requires_user_interaction: opt bool,
        /// With a `rule` reason, and for an MCP tool's ask without one (CLI 2.1.337 and
        /// later): `true` when nothing asked for a person on this call but the default prompt
        /// of a tool no rule allows and, at most, an `always_ask` policy the host itself set.
        "server_policy_ask_only" server_policy_ask_only: opt bool,
    }
}

wire_struct! {
    /// `hook_callback`.
    pub struct HookCallbackRequest {
        /// The registered callback (`hook_0`, ...).
        "callback_id" callback_id: req String,
        /// The hook's input.
        "input" input: req HookInput,
        /// The tool call (a random UUID for events without one).
        "tool_use_id" tool_use_id: opt String,
    }
}

wire_struct! {
    /// `mcp_message` from the CLI.
    pub struct McpMessageRequest {
        /// The in-process server.
        "server_name" server_name: req String,
        /// The JSON-RPC message.
        "message" message: req JsonRpcMessage,
    }
}

wire_struct! {
    /// The answer to `mcp_message`: the server's JSON-RPC response (for a notification, the
    /// acknowledgement `{"jsonrpc":"2.0","result":{}}`).
    pub struct McpMessageResponse {
        /// The JSON-RPC response.
        "mcp_response" mcp_response: req JsonRpcMessage,
    }
}

impl McpMessageResponse {
    /// Wraps a JSON-RPC response.
    pub fn new(mcp_response: JsonRpcMessage) -> Self {
        McpMessageResponse {
            mcp_response,
            extra: Default::default(),
        }
    }
}

wire_struct! {
    /// `elicitation`.
    pub struct ElicitationRequest {
        /// The MCP server asking.
        "mcp_server_name" mcp_server_name: req String,
        /// What it asks.
        "message" message: req String,
        /// `form` or `url`.
        "mode" mode: opt String,
        /// The URL to open (`url` mode).
        "url" url: opt String,
        /// The elicitation.
        "elicitation_id" elicitation_id: opt String,
        /// The JSON schema of the form.
        "requested_schema" requested_schema: any Value,
        /// The order of the form's properties.
        "property_order" property_order: opt Vec<String>,
        /// A title.
        "title" title: opt String,
        /// A display name.
        "display_name" display_name: opt String,
        /// A description.
        "description" description: opt String,
    }
}

wire_struct! {
    /// The answer to `elicitation`.
    pub struct ElicitationResponse {
        /// `accept`, `decline` or `cancel`.
        "action" action: req String,
        /// The form's content, on `accept`.
        "content" content: any Value,
    }
}

impl ElicitationRequest {
    /// Accepts with `content` (the form's fields).
    pub fn accept(&self, content: Value) -> ElicitationResponse {
        ElicitationResponse::accept(content)
    }

    /// Declines.
    pub fn decline(&self) -> ElicitationResponse {
        ElicitationResponse::decline()
    }
}

impl ElicitationResponse {
    /// Declines.
    pub fn decline() -> Self {
        ElicitationResponse {
            action: "decline".into(),
            content: None,
            extra: Default::default(),
        }
    }

    /// Accepts with `content`.
    pub fn accept(content: Value) -> Self {
        ElicitationResponse {
            action: "accept".into(),
            content: Some(content),
            extra: Default::default(),
        }
    }
}

wire_struct! {
    /// `request_user_dialog`.
    pub struct UserDialogRequest {
        /// The dialog kind (one declared in `initialize.supportedDialogKinds`).
        "dialog_kind" dialog_kind: req String,
        /// Its payload.
        "payload" payload: any Value,
        /// The tool call.
        "tool_use_id" tool_use_id: opt String,
    }
}

wire_struct! {
    /// The answer to `request_user_dialog`.
    pub struct UserDialogResponse {
        /// `completed` or `cancelled`.
        "behavior" behavior: req String,
        /// The result, when completed.
        "result" result: any Value,
    }
}

/// Decodes `payload` as the host's success answer to a CLI request of this `subtype`,
/// re-encodes it and compares. Returns `None` for a subtype byre does not know, else the paths
/// of any `Unknown` inside and of any field byre does not model (marked `(unmodelled)`), or
/// why it did not decode or round-trip.
pub fn check_answer_payload(
    subtype: &str,
    payload: Option<&Value>,
) -> Option<Result<Vec<String>, String>> {
    use crate::validate::check_payload;
    Some(match subtype {
        "can_use_tool" => check_payload::<PermissionResult>(payload),
        "hook_callback" => check_payload::<HookOutput>(payload),
        "mcp_message" => check_payload::<McpMessageResponse>(payload),
        "elicitation" => check_payload::<ElicitationResponse>(payload),
        "request_user_dialog" => check_payload::<UserDialogResponse>(payload),
        _ => return None,
    })
}

/// A request the CLI sends the host that a program answers with a handler of its own, typed:
/// its `subtype`, its answer, and how to take it out of a [`CliRequest`]. Hook callbacks and
/// MCP messages are not among them: byre answers those through the hooks and MCP servers a
/// program registers.
pub trait CliRequestBody: Sized + Send + 'static {
    /// The wire `subtype`.
    const SUBTYPE: &'static str;
    /// The success payload of the answer.
    type Answer: Serialize + Send + 'static;
    /// This request, when `request` is one.
    fn from_request(request: CliRequest) -> Option<Self>;
}

macro_rules! cli_request_bodies {
    ($($body:ident: $var:ident, $subtype:literal -> $answer:ty;)*) => {$(
        impl CliRequestBody for $body {
            const SUBTYPE: &'static str = $subtype;
            type Answer = $answer;
            fn from_request(request: CliRequest) -> Option<Self> {
                match request {
                    CliRequest::$var(body) => Some(body),
                    _ => None,
                }
            }
        }
    )*};
}

cli_request_bodies! {
    CanUseToolRequest: CanUseTool, "can_use_tool" -> PermissionResult;
    ElicitationRequest: Elicitation, "elicitation" -> ElicitationResponse;
    UserDialogRequest: RequestUserDialog, "request_user_dialog" -> UserDialogResponse;
}

impl AskUserQuestionInput {
    /// The input of a `can_use_tool` request, when it asks about `AskUserQuestion`.
    pub fn from_request(request: &CanUseToolRequest) -> Option<Result<Self, serde_json::Error>> {
        (request.tool_name == ASK_USER_QUESTION)
            .then(|| serde_json::from_value(request.input.clone()))
    }
}

impl CanUseToolRequest {
    /// Allows the call with its input unchanged.
    pub fn allow(&self) -> PermissionResult {
        PermissionResult::allow(self.input.clone())
    }

    /// Denies the call; the model reads `message`.
    pub fn deny(&self, message: impl Into<String>) -> PermissionResult {
        PermissionResult::deny(message)
    }

    /// The shell command, when the call is Bash's (its input's `command`).
    pub fn bash_command(&self) -> Option<&str> {
        crate::hooks::bash_command(&self.tool_name, &self.input)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A `control_request` body of this subtype, decoded as a [`CliRequest`].
    fn request(subtype: &str, fields: Value) -> CliRequest {
        let mut body = fields;
        body["subtype"] = json!(subtype);
        serde_json::from_value(body).unwrap()
    }

    /// Each typed body is taken out of the request of its own subtype and of no other.
    fn takes_its_own<R: CliRequestBody>(fields: Value) {
        let own = request(R::SUBTYPE, fields);
        assert!(R::from_request(own).is_some(), "{}", R::SUBTYPE);
        let other = request(
            "hook_callback",
            json!({"callback_id": "hook_0", "input": {}}),
        );
        assert!(R::from_request(other).is_none(), "{}", R::SUBTYPE);
    }

    #[test]
    fn typed_bodies_match_their_subtype() {
        takes_its_own::<CanUseToolRequest>(json!({"tool_name": "Bash", "input": {}}));
        takes_its_own::<ElicitationRequest>(json!({"mcp_server_name": "s", "message": "m"}));
        takes_its_own::<UserDialogRequest>(json!({"dialog_kind": "k"}));
    }
}
