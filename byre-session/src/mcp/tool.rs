//! The light tool API: a [`Tool`] is a name, a description, an input schema derived from a Rust
//! type, and an async handler; a [`ToolServer`] serves a set of them as an rmcp server.
//!
//! A handler returns `Ok` with a [`ToolOutput`] (text, images, structured content) or `Err` with
//! anything displayable. Every failure the model can act on is a tool result with `isError: true`
//! that the model reads, never a JSON-RPC error: the handler's `Err`, arguments that do not
//! decode into the input type, an unknown tool name, a handler that panics.

use crate::HandlerError;
use std::future::{ready, Future};
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;

use futures::FutureExt;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorCode,
    Implementation, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
    ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use super::{check_name, McpError};

/// Runs a tool on its raw arguments.
type Run = Arc<dyn Fn(Value) -> Pin<Box<dyn Future<Output = CallToolResult> + Send>> + Send + Sync>;

/// One tool: its MCP definition and its handler.
///
/// The input type derives `serde::Deserialize` and [`JsonSchema`] (its doc comments become the
/// schema's descriptions); the handler returns a [`ToolOutput`] (or a string), or a
/// [`HandlerError`] the model reads (`Err("why".into())`, or `?` on any error).
/// [`McpServer::tools`](crate::mcp::McpServer::tools) serves tools to the CLI in-process; the
/// guide's `docs/mcp-tools.md` has a whole program.
///
/// ```
/// use byre_session::{McpServer, Options, Tool, ToolOutput};
/// use byre_session::schemars::{self, JsonSchema};
///
/// #[derive(serde::Deserialize, JsonSchema)]
/// struct Add {
///     /// The first number.
///     a: i64,
///     /// The second number.
///     b: i64,
/// }
///
/// let add = Tool::new("add", "Add two integers.", |args: Add| async move {
///     match args.a.checked_add(args.b) {
///         Some(sum) => Ok(ToolOutput::text(sum.to_string())),
///         None => Err("the sum does not fit in 64 bits".into()), // a result with isError: true
///     }
/// })?;
/// assert_eq!(add.name(), "add");
/// // The model calls it as mcp__calc__add.
/// let options = Options::new().serve_mcp(McpServer::tools("calc", [add])?);
/// # drop(options);
/// # Ok::<(), byre_session::McpError>(())
/// ```
#[derive(Clone)]
pub struct Tool {
    definition: rmcp::model::Tool,
    run: Run,
}

impl std::fmt::Debug for Tool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tool")
            .field("definition", &self.definition)
            .finish_non_exhaustive()
    }
}

impl Tool {
    /// A tool whose input is `I`: its JSON schema is derived from `I` (as rmcp derives it: JSON
    /// Schema 2020-12, doc comments become descriptions) and the arguments are decoded into `I`
    /// before `handler` runs. `I` must be a struct (an object schema).
    pub fn new<I, F, Fut, O>(name: &str, description: &str, handler: F) -> Result<Tool, McpError>
    where
        I: DeserializeOwned + JsonSchema + 'static,
        F: Fn(I) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<O, HandlerError>> + Send + 'static,
        O: Into<ToolOutput>,
    {
        check_name("tool", name)?;
        let schema = rmcp::handler::server::tool::schema_for_input::<I>().map_err(|message| {
            McpError::InputSchema {
                tool: name.to_owned(),
                message,
            }
        })?;
        let run: Run = Arc::new(
            move |arguments| match serde_json::from_value::<I>(arguments) {
                Ok(input) => run_handler(|| handler(input)),
                Err(e) => Box::pin(ready(failure(format!("invalid arguments: {e}")))),
            },
        );
        Ok(Tool {
            definition: rmcp::model::Tool::new(name.to_owned(), description.to_owned(), schema),
            run,
        })
    }

    /// A tool with a hand-written JSON schema for its input (an object schema:
    /// `{"type": "object", ...}`), whose handler takes the arguments as JSON.
    pub fn with_schema<F, Fut, O>(
        name: &str,
        description: &str,
        input_schema: Value,
        handler: F,
    ) -> Result<Tool, McpError>
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<O, HandlerError>> + Send + 'static,
        O: Into<ToolOutput>,
    {
        check_name("tool", name)?;
        let schema = match input_schema {
            Value::Object(map) if map.get("type") == Some(&Value::from("object")) => map,
            other => {
                return Err(McpError::InputSchema {
                    tool: name.to_owned(),
                    message: format!("expected an object with \"type\": \"object\", got {other}"),
                })
            }
        };
        let run: Run = Arc::new(move |arguments| run_handler(|| handler(arguments)));
        Ok(Tool {
            definition: rmcp::model::Tool::new(
                name.to_owned(),
                description.to_owned(),
                Arc::new(schema),
            ),
            run,
        })
    }

    /// Sets a human-readable title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.definition.title = Some(title.into());
        self
    }

    /// Sets the MCP annotations (read-only, destructive, idempotent, open-world hints).
    pub fn annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.definition.annotations = Some(annotations);
        self
    }

    /// Declares the tool's structured output, with a schema derived from `O`; the handler
    /// should then answer with [`ToolOutput::structured`].
    pub fn output_schema<O: JsonSchema + 'static>(mut self) -> Self {
        self.definition.output_schema = Some(rmcp::handler::server::tool::schema_for_output::<O>());
        self
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.definition.name
    }

    /// The MCP definition, as `tools/list` gives it.
    pub fn definition(&self) -> &rmcp::model::Tool {
        &self.definition
    }

    /// Runs the tool on `arguments`, as a `tools/call` would.
    pub async fn call(&self, arguments: Value) -> CallToolResult {
        (self.run)(arguments).await
    }
}

/// Runs a handler: its `Err` and its panics become error results.
fn run_handler<Fut, O>(
    start: impl FnOnce() -> Fut,
) -> Pin<Box<dyn Future<Output = CallToolResult> + Send>>
where
    Fut: Future<Output = Result<O, HandlerError>> + Send + 'static,
    O: Into<ToolOutput>,
{
    let Ok(fut) = std::panic::catch_unwind(AssertUnwindSafe(start)) else {
        return Box::pin(ready(failure("the tool panicked".to_owned())));
    };
    Box::pin(async move {
        match AssertUnwindSafe(fut).catch_unwind().await {
            Ok(Ok(output)) => output.into().into_result(),
            Ok(Err(e)) => failure(e.to_string()),
            Err(_) => failure("the tool panicked".to_owned()),
        }
    })
}

/// An error result the model reads.
fn failure(message: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message)])
}

/// What a tool answers: content blocks (text, images) and optionally structured content.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolOutput {
    content: Vec<ContentBlock>,
    structured: Option<Value>,
}

impl ToolOutput {
    /// A text answer.
    pub fn text(text: impl Into<String>) -> Self {
        ToolOutput::default().and_text(text)
    }

    /// An image answer: base64-encoded `data` of type `mime_type` (`image/png`, ...).
    pub fn image(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        ToolOutput::default().and_image(data, mime_type)
    }

    /// A structured answer (`structuredContent`); its JSON text is also given as a text block
    /// for clients that read only content.
    pub fn structured<T: Serialize>(value: &T) -> Result<Self, serde_json::Error> {
        let value = serde_json::to_value(value)?;
        Ok(ToolOutput {
            content: vec![ContentBlock::text(value.to_string())],
            structured: Some(value),
        })
    }

    /// An answer made of any MCP content blocks.
    pub fn blocks(content: impl IntoIterator<Item = ContentBlock>) -> Self {
        ToolOutput {
            content: content.into_iter().collect(),
            structured: None,
        }
    }

    /// Adds a text block.
    pub fn and_text(mut self, text: impl Into<String>) -> Self {
        self.content.push(ContentBlock::text(text));
        self
    }

    /// Adds an image block (base64-encoded `data`).
    pub fn and_image(mut self, data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        self.content.push(ContentBlock::image(data, mime_type));
        self
    }

    /// The MCP result.
    pub fn into_result(self) -> CallToolResult {
        let mut result = CallToolResult::success(self.content);
        result.structured_content = self.structured;
        result
    }
}

impl From<String> for ToolOutput {
    fn from(text: String) -> Self {
        ToolOutput::text(text)
    }
}

impl From<&str> for ToolOutput {
    fn from(text: &str) -> Self {
        ToolOutput::text(text)
    }
}

/// An rmcp server made of [`Tool`]s. [`McpServer::tools`](super::McpServer::tools) builds one;
/// build it directly to set its version or instructions.
#[derive(Clone, Debug)]
pub struct ToolServer {
    info: Implementation,
    instructions: Option<String>,
    tools: Arc<Vec<Tool>>,
}

impl ToolServer {
    /// A server named `name` (its `serverInfo`) with `tools`; tool names must be unique.
    pub fn new(name: &str, tools: impl IntoIterator<Item = Tool>) -> Result<Self, McpError> {
        let tools: Vec<Tool> = tools.into_iter().collect();
        for (n, tool) in tools.iter().enumerate() {
            if tools[..n].iter().any(|t| t.name() == tool.name()) {
                return Err(McpError::DuplicateTool(tool.name().to_owned()));
            }
        }
        Ok(ToolServer {
            info: Implementation::new(name, env!("CARGO_PKG_VERSION")),
            instructions: None,
            tools: Arc::new(tools),
        })
    }

    /// Sets the version in `serverInfo` (byre's version by default).
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.info.version = version.into();
        self
    }

    /// Sets the instructions the server gives the client at its handshake.
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// The tools.
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }
}

impl rmcp::ServerHandler for ToolServer {
    fn get_info(&self) -> ServerConfig {
        let mut config = ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(self.info.clone());
        config.instructions = self.instructions.clone();
        config
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(
            self.tools.iter().map(|t| t.definition.clone()).collect(),
        ))
    }

    fn get_tool(&self, name: &str) -> Option<rmcp::model::Tool> {
        self.tools
            .iter()
            .find(|t| t.name() == name)
            .map(|t| t.definition.clone())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some(tool) = self.tools.iter().find(|t| t.name() == request.name) else {
            return Ok(failure(format!("no tool named {:?}", request.name)).into());
        };
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        // A cancelled call drops the handler's future; rmcp sends no answer for it.
        tokio::select! {
            result = tool.call(arguments) => Ok(result.into()),
            () = context.ct.cancelled() => Err(ErrorData::new(
                ErrorCode(super::bridge::REQUEST_CANCELLED as i32),
                "cancelled",
                None,
            )),
        }
    }
}
