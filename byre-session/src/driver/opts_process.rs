//! Options for the CLI's process: its program, working directory and environment, how the
//! options reach it, timeouts and limits, its stderr and diagnostics, and a custom spawner.

use super::options::Options;
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

impl Options {
    /// The working directory of the CLI (the caller's by default).
    pub fn cwd(mut self, dir: impl Into<PathBuf>) -> Self {
        self.launch.cwd = Some(dir.into());
        self
    }

    /// The `claude` binary (found on `PATH` and the usual places by default).
    pub fn program(mut self, path: impl Into<PathBuf>) -> Self {
        self.launch.program = Some(path.into());
        self
    }

    /// Sets an environment variable for the CLI.
    pub fn env(mut self, name: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.launch.env.push((name.into(), value.into()));
        self
    }

    /// Removes an inherited environment variable from the CLI's environment.
    pub fn env_remove(mut self, name: impl Into<OsString>) -> Self {
        self.launch.env_remove.push(name.into());
        self
    }

    /// Starts the CLI with a cleared environment, as the TypeScript SDK's `env` (which replaces
    /// the process environment) does: of this process's variables only those `allow` names
    /// are passed on (names, or prefixes ending in `*`: `LC_*`), then byre's own and those set
    /// with [`Options::env`]. [`Options::clear_env`] allows what the CLI needs to run.
    pub fn env_allow<I, S>(mut self, allow: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.launch.env_allow = Some(allow.into_iter().map(Into::into).collect());
        self
    }

    /// Starts the CLI with a cleared environment holding only what it needs to run
    /// ([`byre_transport::DEFAULT_ENV_ALLOW`]: `PATH`, `HOME`, the locale, proxies and
    /// certificates, `ANTHROPIC_*`, `CLAUDE_*`, ...), and those set with [`Options::env`].
    pub fn clear_env(self) -> Self {
        self.env_allow(byre_transport::DEFAULT_ENV_ALLOW.iter().copied())
    }

    /// Passes the session store's credential variables on to the CLI. By default a session
    /// with a store ([`Options::session_store`]) starts the CLI without the variables the store
    /// may have been configured from
    /// ([`SessionStore::credential_vars`](byre_transport::store::SessionStore::credential_vars):
    /// `AWS_*`, `GOOGLE_*`, `AZURE_*` for object storage), so that a model's `printenv` cannot
    /// put them in the conversation; a variable set with [`Options::env`] is passed all the
    /// same.
    pub fn pass_store_credentials(mut self) -> Self {
        self.pass_store_credentials = true;
        self
    }

    /// Starts the CLI with `spawner` instead of as a local child process: through a wrapper
    /// command ([`Wrapper`](byre_transport::Wrapper): `sudo -u`, `nice`, `docker exec`,
    /// `ssh`) or any [`Spawn`](byre_transport::Spawn) implementation. Each spawner documents
    /// how it is stopped.
    pub fn spawn(mut self, spawner: impl byre_transport::Spawn + 'static) -> Self {
        self.spawn = Some(std::sync::Arc::new(spawner));
        self
    }

    /// How the settings, MCP servers (with their `env` and `headers`), subagents and system
    /// prompts reach the CLI: in the `initialize` request over stdin, with
    /// `--await-initialize` ([`Delivery::Initialize`](byre_transport::Delivery), the
    /// default: nothing secret on the command line), or as flags
    /// ([`Delivery::Argv`](byre_transport::Delivery), visible to every user of the machine in
    /// `ps`).
    pub fn delivery(mut self, delivery: byre_transport::Delivery) -> Self {
        self.launch.delivery = delivery;
        self
    }

    /// How long `initialize` and other requests may take (60 s by default).
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = Some(timeout);
        self
    }

    /// Ends a turn that hears nothing from the CLI for `after` (no line at all; off by
    /// default): the turn gives [`TurnError::Stalled`](crate::TurnError::Stalled), the stream
    /// [`Event::Stalled`](crate::Event::Stalled), and the CLI is sent `interrupt`. Every line
    /// counts as life, a running tool's `tool_progress` heartbeat too (the CLI sends one
    /// every 30 s while a tool runs: keep `after` above that for long tools); time the CLI
    /// spends waiting for this program (a permission prompt, a hook, an in-process tool) is
    /// not silence. [`StallPolicy`](crate::StallPolicy) with `interrupt: false` reports only.
    pub fn stall_timeout(self, after: Duration) -> Self {
        self.stall_policy(crate::StallPolicy::new(after))
    }

    /// Has the CLI export its own OpenTelemetry traces, metrics and logs over OTLP to
    /// `endpoint` (`http://collector:4318`) with `protocol` (`http/protobuf`, `http/json` or
    /// `grpc`): sets `CLAUDE_CODE_ENABLE_TELEMETRY`, `CLAUDE_CODE_ENHANCED_TELEMETRY_BETA`
    /// (its spans), the `OTEL_*_EXPORTER`s, `OTEL_EXPORTER_OTLP_ENDPOINT` and `_PROTOCOL`,
    /// and lifts `DISABLE_TELEMETRY`. Set on the CLI's own environment, so they travel
    /// through wrappers that pass variables by name (`Wrapper::ssh`, `Wrapper::docker_exec`).
    /// With the `otel` feature the CLI's spans join the program's trace.
    pub fn cli_telemetry(self, endpoint: impl Into<String>, protocol: &str) -> Self {
        let endpoint = endpoint.into();
        let vars = [
            ("CLAUDE_CODE_ENABLE_TELEMETRY", "1"),
            ("CLAUDE_CODE_ENHANCED_TELEMETRY_BETA", "1"),
            ("OTEL_TRACES_EXPORTER", "otlp"),
            ("OTEL_METRICS_EXPORTER", "otlp"),
            ("OTEL_LOGS_EXPORTER", "otlp"),
            ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", protocol),
        ];
        let mut options = self;
        options
            .launch
            .env
            .retain(|(name, _)| name != "DISABLE_TELEMETRY");
        for (name, value) in vars {
            options = options.env(name, value);
        }
        options.env_remove("DISABLE_TELEMETRY")
    }

    /// Limits this session shares with every other session given the same
    /// [`Limits`](crate::Limits): turns running at once, a budget, rate-limit holds.
    pub fn limits(mut self, limits: crate::Limits) -> Self {
        self.limits = Some(limits);
        self
    }

    /// The stall watch, in full ([`Options::stall_timeout`]).
    pub fn stall_policy(mut self, policy: crate::StallPolicy) -> Self {
        self.stall = Some(policy);
        self
    }

    /// How long any handler may take before the CLI gets an error answer (no limit by
    /// default).
    pub fn handler_timeout(mut self, timeout: Duration) -> Self {
        self.handler_timeout = Some(timeout);
        self
    }

    /// How long [`Claude::close`](crate::Claude::close) lets the CLI exit by itself before
    /// SIGTERM (5 s by default).
    pub fn exit_grace(mut self, grace: Duration) -> Self {
        self.process.exit_grace = grace;
        self
    }

    /// The longest line accepted from the CLI (64 MiB by default).
    pub fn max_line_bytes(mut self, bytes: usize) -> Self {
        self.max_line = Some(bytes);
        self
    }

    /// The name and email the CLI's git commits carry (`GIT_AUTHOR_*` and `GIT_COMMITTER_*`
    /// in its environment).
    pub fn git_identity(mut self, name: impl Into<String>, email: impl Into<String>) -> Self {
        self.launch.identity = Some(byre_transport::GitIdentity {
            name: name.into(),
            email: email.into(),
        });
        self
    }

    /// Events buffered before reading from the CLI pauses; 256 by default. The stream hands
    /// them over in batches, so up to twice this many wait at once (the queue, and the batch
    /// the consumer took), plus the events of the batch of lines being handed over.
    pub fn event_buffer(mut self, events: usize) -> Self {
        self.event_buffer = Some(events);
        self
    }

    /// How long the CLI may take to exit after SIGTERM before SIGKILL (5 s by default).
    pub fn term_grace(mut self, grace: Duration) -> Self {
        self.process.term_grace = grace;
        self
    }

    /// Whether each local CLI gets a watchdog process that ends it (and what it started) when
    /// the program itself dies, SIGKILL included; on by default.
    pub fn watchdog(mut self, on: bool) -> Self {
        self.process.watchdog = on;
        self
    }

    /// Whether a local CLI and what it starts carry a tag in their environment, by which
    /// stopping the CLI also ends, on Linux, the processes that left its process group; on by
    /// default.
    pub fn tag_descendants(mut self, on: bool) -> Self {
        self.process.tag_descendants = on;
        self
    }

    /// Starts even with a CLI older than the oldest version byre supports
    /// ([`OLDEST_SUPPORTED_CLI`](crate::OLDEST_SUPPORTED_CLI)), which otherwise fails the
    /// start with [`Error::UnsupportedCli`](crate::Error::UnsupportedCli). What byre expects
    /// of the protocol may then not hold.
    pub fn any_cli_version(mut self) -> Self {
        self.any_cli_version = true;
        self
    }

    /// A CLI flag byre has no setter for (`--flag` or `--flag value`; `flag` without dashes).
    pub fn extra_arg(mut self, flag: impl Into<String>, value: Option<String>) -> Self {
        self.launch.extra_args.push((flag.into(), value));
        self
    }

    /// Writes the CLI's debug log on its stderr (`--debug-to-stderr`), where
    /// [`Options::on_stderr`] sees it; [`Options::debug_file`] writes it to a file instead.
    pub fn debug_to_stderr(self) -> Self {
        self.extra_arg("debug-to-stderr", None)
    }

    /// Called with every line the CLI writes on stderr, as it arrives.
    pub fn on_stderr(mut self, callback: impl Fn(&str) + Send + Sync + 'static) -> Self {
        self.process.on_stderr_line = Some(Arc::new(callback));
        self
    }

    /// Writes the CLI's debug log to `file` (`--debug-file`).
    pub fn debug_file(mut self, file: impl Into<PathBuf>) -> Self {
        self.launch.debug_file = Some(file.into());
        self
    }

    /// The program's name, which the CLI puts in its user agent
    /// (`CLAUDE_AGENT_SDK_CLIENT_APP`).
    pub fn client_app(mut self, name: impl Into<String>) -> Self {
        self.launch.client_app = Some(name.into());
        self
    }
}
