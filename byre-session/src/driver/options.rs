//! Options: how to start a session, and the handlers it serves.

use std::collections::HashMap;
use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use super::commands::McpHandlerFactory;
use super::error::HandlerError;
use super::handlers::{HookHandler, RequestHandler};
use byre_proto::{CliRequest, HookEvent, HookInput, HookOutput, InitializeRequest};
use byre_transport::{Launch, ProcessOptions};
use serde_json::Value;

/// How to start a session.
///
/// A builder: start from [`Options::new`] and chain setters; what is not set is the CLI's own
/// default, but for the system prompt: empty unless given, as with the official SDKs
/// ([`Options::cli_system_prompt`] keeps the CLI's own). The guide's `docs/driving.md` lists
/// the setters by what they serve, and `docs/sdk-options.md` gives byre's name for each option
/// of the official SDKs.
///
/// ```no_run
/// use byre_session::{Claude, Options};
/// use byre_session::proto::PermissionMode;
///
/// # async fn run() -> Result<(), byre_session::Error> {
/// let options = Options::new()
///     .model("claude-sonnet-4-5")
///     .system_prompt("You review pull requests. Be brief.")
///     .allowed_tools(["Read", "Grep", "Bash(git diff:*)"])
///     .permission_mode(PermissionMode::DEFAULT) // ask for the rest; no one asks: denied
///     .max_turns(8)
///     .cwd("/work/repo")
///     .transcript("review.jsonl"); // every line exchanged, for `byre replay`
/// let (claude, events) = Claude::start(options).await?;
/// # drop((claude, events));
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Default)]
pub struct Options {
    /// How to launch the CLI (argv and environment).
    pub(crate) launch: Launch,
    /// The initialize request (hooks are added from [`Options::hook`]).
    pub(crate) initialize: InitializeRequest,
    /// Process settings (stderr buffer, shutdown grace).
    pub(crate) process: ProcessOptions,
    /// The longest line accepted from the CLI; 64 MiB by default.
    pub(crate) max_line: Option<usize>,
    /// Events buffered before reading from the CLI pauses; 256 by default. The stream hands
    /// them over in batches, so up to twice this many wait at once (the queue, and the batch
    /// the consumer took), plus the events of the batch of lines being handed over.
    pub(crate) event_buffer: Option<usize>,
    /// Writes a transcript here.
    pub(crate) transcript: Option<PathBuf>,
    /// Writes each session's transcript to a new file in this folder.
    pub(crate) transcript_dir: Option<PathBuf>,
    /// Keeps `stream_event` lines in the transcript (left out by default: they are most of its
    /// size).
    pub(crate) transcript_stream_events: bool,
    /// Starts the transcript with two notes: the command line that started the CLI (a
    /// wrapper's included) and its working directory. Off by default. With
    /// [`Delivery::Argv`](byre_transport::Delivery::Argv) the command line holds `--settings`
    /// and `--mcp-config`; the secrets the session knows of in them (the MCP servers' `env`
    /// and `headers`, the settings' `env`) are redacted in the note as everywhere else.
    pub(crate) transcript_launch: bool,
    /// How long `initialize` and other requests may take; 60 s by default.
    pub(crate) request_timeout: Option<Duration>,
    /// The stall watch ([`Options::stall_timeout`]).
    pub(crate) stall: Option<crate::StallPolicy>,
    /// Limits shared with other sessions ([`Options::limits`]).
    pub(crate) limits: Option<crate::Limits>,
    /// How long a handler may take to answer one of the CLI's requests (hook, permission
    /// prompt, MCP message, ...) before the CLI gets an error answer and the handler is
    /// stopped. No limit by default: a permission prompt may wait for a person.
    pub(crate) handler_timeout: Option<Duration>,
    /// Starts with a CLI older than [`OLDEST_SUPPORTED_CLI`](crate::OLDEST_SUPPORTED_CLI)
    /// instead of failing with [`Error::UnsupportedCli`](crate::Error::UnsupportedCli). Off by
    /// default.
    pub(crate) any_cli_version: bool,
    /// Starts the CLI; a local child process ([`Local`](byre_transport::Local)) when `None`.
    pub(crate) spawn: Option<Arc<dyn byre_transport::Spawn>>,
    pub(super) settings_file: Option<PathBuf>,
    pub(super) verbatim_prompts: bool,
    pub(super) skills: Option<super::settings::Skills>,
    pub(super) system_prompt_file: Option<PathBuf>,
    /// The CLI keeps its own system prompt ([`Options::cli_system_prompt`]) when none is
    /// given; otherwise the session starts with an empty one, as the official SDKs do.
    pub(super) cli_system_prompt: bool,
    pub(super) hooks: Vec<(Hook, HookHandler)>,
    pub(super) handlers: HashMap<&'static str, RequestHandler>,
    pub(super) mcp_servers: Vec<String>,
    pub(super) questions: Option<RequestHandler>,
    /// In-process MCP servers started afresh for each session: the handler of `mcp_message`
    /// for that server is built at start, given the session's [`Outbox`].
    pub(super) mcp_factories: Vec<(String, McpHandlerFactory)>,
    /// The session store ([`Options::session_store`]) and when it is written.
    pub(super) store: Option<Arc<dyn byre_transport::store::SessionStore>>,
    pub(super) store_flush: crate::session::MirrorFlush,
    pub(super) store_project: Option<String>,
    /// How long loading a stored session may take ([`Options::store_load_timeout`]).
    pub(super) store_load_timeout: Option<std::time::Duration>,
    /// A resumed stored session's lease ([`Options::store_lease_ttl`],
    /// [`Options::store_lease_wait`]).
    pub(super) store_lease_ttl: Option<std::time::Duration>,
    pub(super) store_lease_wait: std::time::Duration,
    /// Whether the store's credential variables reach the CLI
    /// ([`Options::pass_store_credentials`]).
    pub(super) pass_store_credentials: bool,
}

/// Shows no secret: [`Launch`]'s `Debug` redacts the environment's values, the settings' `env`
/// and the MCP servers' `env` and `headers`; the `initialize` request (which may hold them
/// too) is left out.
impl std::fmt::Debug for Options {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Options")
            .field("launch", &self.launch)
            .field("process", &self.process)
            .field("max_line", &self.max_line)
            .field("event_buffer", &self.event_buffer)
            .field("transcript", &self.transcript)
            .field("transcript_dir", &self.transcript_dir)
            .field("request_timeout", &self.request_timeout)
            .field("stall", &self.stall)
            .field("limits", &self.limits)
            .field("handler_timeout", &self.handler_timeout)
            .field("spawn", &self.spawn)
            .field("hooks", &self.hooks.len())
            .field("handlers", &self.handlers.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl Options {
    /// The transcript file of a session started now: the one given, or a new name in the
    /// folder given.
    pub(crate) fn transcript_path(&self) -> Option<PathBuf> {
        static COUNT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        if let Some(path) = &self.transcript {
            return Some(path.clone());
        }
        let dir = self.transcript_dir.as_ref()?;
        let n = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis());
        Some(dir.join(format!("{ms}-{}-{n}.jsonl", std::process::id())))
    }

    /// Options with every default.
    pub fn new() -> Self {
        Self::default()
    }

    /// What the CLI is started with, as set so far: its program, arguments and environment
    /// (for a test or a log; its `Debug` shows no secret).
    pub fn launch(&self) -> &Launch {
        &self.launch
    }

    /// Registers a hook handler: for every call of an event (`.hook(HookEvent::STOP, ..)`),
    /// or as a [`Hook`] describes it (its matcher, timeout, and what a failure means,
    /// [`Hook::fail_closed`]). Callback ids are `hook_0`, `hook_1`, ... in registration order.
    /// A handler that fails, panics or times out lets the action go on (the CLI's `onFailure:
    /// continue`) unless the hook fails closed, as one that guards something should.
    pub fn hook<F, Fut>(mut self, hook: impl Into<Hook>, handler: F) -> Self
    where
        F: Fn(HookInput, Option<String>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<HookOutput, HandlerError>> + Send + 'static,
    {
        let hook = hook.into();
        let handler = Arc::new(handler);
        let timeout = hook.timeout;
        // A failed guard of a tool call denies it with the reason, so the model reads why;
        // the CLI's `onFailure: block` covers every other event, and a CLI-side timeout.
        let deny_on_failure = hook.fail_closed && hook.event == HookEvent::PRE_TOOL_USE;
        let handler: HookHandler = Arc::new(move |input, id| {
            let fut = handler(input, id);
            Box::pin(async move {
                let fut = futures::FutureExt::catch_unwind(std::panic::AssertUnwindSafe(fut));
                let answer = match timeout {
                    // The CLI gives up at `limit`; byre stops the handler a little before, so
                    // that its own answer (with the reason) is the one the CLI gets.
                    Some(limit) => tokio::time::timeout(limit - (limit / 4).min(EARLY), fut)
                        .await
                        .map_err(|_| format!("the hook did not answer within {limit:?}")),
                    None => Ok(fut.await),
                };
                let failure = match answer {
                    Ok(Ok(Ok(output))) => return Ok(output),
                    Ok(Ok(Err(e))) => e.to_string(),
                    Ok(Err(_)) => "the hook handler panicked".to_owned(),
                    Err(timed_out) => timed_out,
                };
                if deny_on_failure {
                    Ok(HookOutput::deny_tool(format!(
                        "blocked: the PreToolUse hook failed ({failure})"
                    )))
                } else {
                    Err(failure)
                }
            })
        });
        self.hooks.push((hook, handler));
        self
    }

    /// Answers `can_use_tool`, the CLI's permission prompts (and starts the CLI with
    /// `--permission-prompt-tool stdio`): [`Options::on_request`] for
    /// [`CanUseToolRequest`](byre_proto::CanUseToolRequest).
    pub fn can_use_tool<F, Fut>(self, handler: F) -> Self
    where
        F: Fn(byre_proto::CanUseToolRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<byre_proto::PermissionResult, HandlerError>> + Send + 'static,
    {
        self.on_request(handler)
    }

    /// Answers the CLI's requests of one kind with `handler`, typed: `R` is
    /// [`CanUseToolRequest`](byre_proto::CanUseToolRequest) (permission prompts, as
    /// [`Options::can_use_tool`]), [`ElicitationRequest`](byre_proto::ElicitationRequest) (an MCP
    /// server asks the user to fill in a form or open a URL; declined without a handler) or
    /// [`UserDialogRequest`](byre_proto::UserDialogRequest) (a dialog of a kind declared in
    /// `initialize.supportedDialogKinds`; an error without a handler). A handler that fails
    /// answers the CLI with its error. Hooks and in-process MCP servers have their own
    /// registrations ([`Options::hook`], [`Options::serve_mcp`]); a subtype byre does not
    /// model is answered by [`Options::raw_handler`].
    ///
    /// ```no_run
    /// use byre_session::proto::{ElicitationRequest, ElicitationResponse};
    /// use byre_session::Options;
    ///
    /// let options = Options::new().on_request(|request: ElicitationRequest| async move {
    ///     eprintln!("{} asks: {}", request.mcp_server_name, request.message);
    ///     Ok(ElicitationResponse::decline())
    /// });
    /// ```
    pub fn on_request<R, F, Fut>(mut self, handler: F) -> Self
    where
        R: byre_proto::CliRequestBody,
        F: Fn(R) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R::Answer, HandlerError>> + Send + 'static,
    {
        let handler = Arc::new(handler);
        self.handlers.insert(
            R::SUBTYPE,
            Arc::new(move |request| {
                let handler = handler.clone();
                Box::pin(async move {
                    let request = R::from_request(request)
                        .ok_or_else(|| format!("not a {} request", R::SUBTYPE))?;
                    let answer = handler(request).await.map_err(|e| e.to_string())?;
                    serde_json::to_value(answer).map_err(|e| e.to_string())
                })
            }),
        );
        if R::SUBTYPE == <byre_proto::CanUseToolRequest as byre_proto::CliRequestBody>::SUBTYPE {
            self.launch.permission_prompt_tool = Some("stdio".into());
        }
        self
    }

    /// Answers the model's `AskUserQuestion` calls: `handler` gets the questions and returns
    /// the answers (question text → answer; several choices as their labels joined with
    /// `", "`), which the model reads as the tool's result; an error denies the call with that
    /// message. Permission prompts for other tools go to the [`Options::can_use_tool`]
    /// handler, and are denied when there is none. Starts the CLI with
    /// `--permission-prompt-tool stdio`, which is what makes the CLI offer the tool.
    pub fn ask_user_question<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(byre_proto::AskUserQuestionInput) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<(String, String)>, HandlerError>> + Send + 'static,
    {
        let handler = Arc::new(handler);
        self.questions = Some(Arc::new(move |request| {
            let handler = handler.clone();
            Box::pin(async move {
                let CliRequest::CanUseTool(request) = request else {
                    return Err("not a can_use_tool request".to_owned());
                };
                let input = match byre_proto::AskUserQuestionInput::from_request(&request) {
                    Some(Ok(input)) => input,
                    Some(Err(e)) => return Err(format!("the questions do not decode: {e}")),
                    None => return Err("not an AskUserQuestion call".to_owned()),
                };
                let result = match handler(input.clone()).await {
                    Ok(answers) => input.answered(answers),
                    Err(message) => byre_proto::PermissionResult::deny(message.to_string()),
                };
                serde_json::to_value(result).map_err(|e| e.to_string())
            })
        }));
        self.launch.permission_prompt_tool = Some("stdio".into());
        self
    }

    /// Declares the in-process MCP server `name` (in `--mcp-config`, with `alwaysLoad` as given)
    /// whose `mcp_message` handler `factory` builds afresh for each session; it replaces an
    /// earlier one of the same name declared this way.
    #[cfg_attr(not(feature = "mcp"), allow(dead_code))]
    pub(crate) fn mcp_server_per_session(
        mut self,
        name: &str,
        always_load: bool,
        factory: McpHandlerFactory,
    ) -> Self {
        self.launch.sdk_servers.retain(|s| s.name != name);
        self.mcp_factories.retain(|(n, _)| n != name);
        self.launch.sdk_servers.push(byre_transport::SdkServer {
            name: name.to_owned(),
            always_load,
        });
        self.mcp_servers.push(name.to_owned());
        self.mcp_factories.push((name.to_owned(), factory));
        self
    }

    /// Answers a CLI request subtype byre does not model (one a newer CLI sends) with an
    /// untyped handler; the ones byre models are typed with [`Options::on_request`]. Hooks
    /// (`hook_callback`) and in-process MCP (`mcp_message`) have their own setters,
    /// [`Options::hook`] and [`Options::serve_mcp`]: a handler given here for either fails
    /// the start with [`UsageError::ReservedSubtype`](crate::UsageError).
    pub fn raw_handler(mut self, subtype: &'static str, handler: RequestHandler) -> Self {
        self.handlers.insert(subtype, handler);
        self
    }

    /// Continues session `session_id` (`--resume=`): the same id, the whole conversation.
    /// Resuming works from any working directory, with the same `HOME`.
    pub fn resume(mut self, session_id: impl Into<String>) -> Self {
        self.launch.resume = Some(session_id.into());
        self
    }

    /// Forks session `session_id` at the message with uuid `at` (an `assistant` or `user` line's
    /// `uuid`) into a new session, running in `cwd`: the conversation is kept up to and
    /// including that message, the original session is untouched. Returns the options and the
    /// new session's id.
    pub fn fork(
        mut self,
        session_id: impl Into<String>,
        at: impl Into<String>,
        cwd: impl Into<PathBuf>,
    ) -> (Self, String) {
        let new_id = new_session_id();
        self.launch.resume = Some(session_id.into());
        self.launch.resume_session_at = Some(at.into());
        self.launch.fork_session = true;
        self.launch.session_id = Some(new_id.clone());
        self.launch.cwd = Some(cwd.into());
        (self, new_id)
    }
}

/// The transcript note of the command line: `argv: ["/path/to/claude","--output-format",...]`.
pub(super) fn launch_note(argv: &[std::ffi::OsString]) -> String {
    let argv: Vec<String> = argv
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    format!("argv: {}", Value::from(argv))
}

impl Options {
    /// Every secret value the session knows of, for its transcript to redact: the MCP
    /// servers' `env` and `headers` and the settings' `env` (in the launch and in
    /// `initialize`), the values of variables set for the CLI whose names say they are secret
    /// (`*KEY*`, `*TOKEN*`, `*SECRET*`, `*PASSWORD*`, `*CREDENTIAL*`), and such variables of this
    /// process: the API key and the store's credentials.
    pub(super) fn secrets(&self) -> Vec<String> {
        let mut found = Vec::new();
        let mut config = |config: Option<&Value>| {
            for key in ["env", "headers"] {
                if let Some(Value::Object(values)) = config.and_then(|c| c.get(key)) {
                    found.extend(values.values().filter_map(Value::as_str).map(str::to_owned));
                }
            }
        };
        for server in self.launch.mcp_servers.values() {
            config(Some(server));
        }
        if let Some(Value::Object(servers)) = &self.initialize.mcp_servers {
            for server in servers.values() {
                config(Some(server));
            }
        }
        let settings = Value::Object(self.launch.settings.clone());
        config(Some(&settings));
        config(self.initialize.settings.as_ref());
        for (name, value) in &self.launch.env {
            if secret_name(name) {
                found.extend(value.to_str().map(str::to_owned));
            }
        }
        let mut names: Vec<std::ffi::OsString> =
            API_KEY_VARS.iter().map(std::ffi::OsString::from).collect();
        if let Some(store) = &self.store {
            names.extend(store.credential_vars());
        }
        for name in names.iter().filter(|n| secret_name(n)) {
            found.extend(std::env::var(name).ok());
        }
        found
    }
}

/// The variables that carry the CLI's own credentials.
const API_KEY_VARS: [&str; 3] = [
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "CLAUDE_CODE_OAUTH_TOKEN",
];

/// Whether a variable's name says its value is secret.
fn secret_name(name: &std::ffi::OsStr) -> bool {
    let name = name.to_string_lossy().to_ascii_uppercase();
    ["KEY", "TOKEN", "SECRET", "PASSWORD", "CREDENTIAL"]
        .iter()
        .any(|word| name.contains(word))
}

/// A random version-4 UUID, for a new session id (`Launch::session_id`, `--session-id`).
pub fn new_session_id() -> String {
    byre_transport::new_uuid()
}

/// Routes `AskUserQuestion` permission prompts to `questions`, others to `permissions` (denied
/// when there is none).
pub(super) fn route_questions(
    questions: RequestHandler,
    permissions: Option<RequestHandler>,
) -> RequestHandler {
    Arc::new(move |request| match &request {
        CliRequest::CanUseTool(r) if r.tool_name == byre_proto::ASK_USER_QUESTION => {
            questions(request)
        }
        _ => match &permissions {
            Some(permissions) => permissions(request),
            None => Box::pin(async {
                serde_json::to_value(byre_proto::PermissionResult::deny(
                    "this host answers only AskUserQuestion",
                ))
                .map_err(|e| e.to_string())
            }),
        },
    })
}

/// How much sooner than the CLI byre stops a hook handler that runs out of time.
const EARLY: Duration = Duration::from_millis(250);

/// A hook registration: the event, which tools it matches, how long it may take and what a
/// failure means. `Hook::new(HookEvent::PRE_TOOL_USE).matcher("Bash").fail_closed()`; a bare
/// [`HookEvent`] is a hook for every call of that event.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Hook {
    pub(super) event: HookEvent,
    pub(super) matcher: Option<String>,
    pub(super) timeout: Option<Duration>,
    pub(super) fail_closed: bool,
}

impl From<HookEvent> for Hook {
    fn from(event: HookEvent) -> Self {
        Hook::new(event)
    }
}

impl Hook {
    /// A hook for `event`, matching every tool, with the CLI's timeout (60 s), failing open.
    pub fn new(event: HookEvent) -> Self {
        Hook {
            event,
            matcher: None,
            timeout: None,
            fail_closed: false,
        }
    }

    /// Only for tools matching `matcher` (`"Bash"`, `"Write|Edit"`).
    pub fn matcher(mut self, matcher: impl Into<String>) -> Self {
        self.matcher = Some(matcher.into());
        self
    }

    /// How long the handler may take (whole seconds, rounded up, as the CLI counts them): the
    /// CLI stops waiting then, and byre stops the handler.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// A failure blocks the action the hook guards (`onFailure: "block"`): a handler that
    /// returns an error, panics or times out blocks the tool call, and the model is told why.
    /// The CLI ignores this for `Stop`, `SubagentStop`, `TaskCompleted` and `TeammateIdle`.
    /// [`Claude::start`](crate::Claude::start) fails with
    /// [`UsageError::OnFailureUnsupported`](crate::UsageError::OnFailureUnsupported) when the
    /// CLI does not support it.
    pub fn fail_closed(mut self) -> Self {
        self.fail_closed = true;
        self
    }

    /// Its registration in `initialize.hooks`, calling back `id`.
    pub(super) fn registration(&self, id: String) -> byre_proto::HookMatcher {
        let mut matcher = byre_proto::HookMatcher::new(self.matcher.clone(), vec![id]);
        if let Some(timeout) = self.timeout {
            let secs = timeout.as_secs() + u64::from(timeout.subsec_nanos() > 0);
            matcher.timeout = Some(secs.max(1).into());
        }
        if self.fail_closed {
            matcher.on_failure = Some("block".to_owned());
        }
        matcher
    }
}
