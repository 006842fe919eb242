//! The shapes of the handlers a session serves: [`HookHandler`] for hook callbacks and
//! [`RequestHandler`] for the CLI's other requests.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use byre_proto::{CliRequest, HookInput, HookOutput};
use serde_json::Value;

/// A hook handler: the hook's input and the tool call id, answered with the hook's output or
/// an error message.
pub type HookHandler = Arc<
    dyn Fn(
            HookInput,
            Option<String>,
        ) -> Pin<Box<dyn Future<Output = Result<HookOutput, String>> + Send>>
        + Send
        + Sync,
>;

/// A handler for any other CLI request (`can_use_tool`, `mcp_message`, `elicitation`,
/// `request_user_dialog`): the request, answered with its success payload or an error.
pub type RequestHandler = Arc<
    dyn Fn(CliRequest) -> Pin<Box<dyn Future<Output = Result<Value, String>> + Send>> + Send + Sync,
>;
