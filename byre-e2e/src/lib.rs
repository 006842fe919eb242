//! byre's end-to-end scenarios: each one runs the real Claude Code CLI offline against the
//! fake Messages API of byre-testkit, drives it through byre-session's driver (the public
//! API: [`Claude`](byre_session::Claude), its events, hooks, permission and MCP
//! handlers) as the scenario says, and checks what must happen. The e2e test suite runs every
//! scenario; `cargo xtask record` runs them and writes the driver's transcripts to
//! `testdata/transcripts/cli-<version>/<scenario>.jsonl`.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::time::Duration;

use byre_testkit::{claude_bin, ClaudeEnv, FakeModel, ProvisionError, Script, TranscriptLine};

pub mod scenarios;
mod support;

/// How long one scenario may take before it fails.
pub const SCENARIO_TIMEOUT: Duration = Duration::from_secs(120);

/// What every scenario needs: the CLI binary and the project's paths.
#[derive(Debug, Clone)]
pub struct Ctx {
    /// The pinned CLI.
    pub bin: PathBuf,
    /// The workspace root.
    pub root: PathBuf,
}

impl Ctx {
    /// Provisions the pinned CLI (installing it when missing). Fails, never skips, when it
    /// cannot be had.
    pub fn new() -> Result<Ctx, ProvisionError> {
        let bin = claude_bin()?;
        let root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .canonicalize()
            .expect("the workspace root exists");
        Ok(Ctx { bin, root })
    }

    /// Loads `testdata/scenarios/<name>.json`.
    pub fn script(&self, name: &str) -> Result<Script, Failure> {
        let path = self
            .root
            .join("testdata/scenarios")
            .join(format!("{name}.json"));
        Script::from_file(&path).map_err(|e| Failure::new(format!("{}: {e}", path.display())))
    }

    /// Starts the fake model with `testdata/scenarios/<name>.json` and an offline environment
    /// pointed at it.
    pub async fn fake(&self, name: &str) -> Result<(FakeModel, ClaudeEnv), Failure> {
        let model = FakeModel::start(self.script(name)?)
            .await
            .map_err(Failure::from_error)?;
        let env = ClaudeEnv::new(&model.base_url()).map_err(Failure::from_error)?;
        Ok((model, env))
    }
}

/// One recorded CLI process of a scenario: its transcript lines.
#[derive(Debug, Clone)]
pub struct Recording {
    /// The transcript, in order; each message keeps the exact text that went over the pipe.
    pub lines: Vec<TranscriptLine>,
}

impl Recording {
    /// The transcript as the file holds it: one [`TranscriptLine::to_json`] per line, each
    /// ending in a newline.
    pub fn to_jsonl(&self) -> String {
        let mut out = String::new();
        for line in &self.lines {
            out.push_str(&line.to_json());
            out.push('\n');
        }
        out
    }

    /// The messages the CLI wrote, parsed, in order.
    pub fn received(&self) -> Vec<serde_json::Value> {
        self.lines
            .iter()
            .filter(|l| l.is_recv())
            .filter_map(TranscriptLine::msg)
            .collect()
    }
}

/// A scenario's outcome: the transcripts of its CLI processes, in order.
pub type Outcome = Result<Vec<Recording>, Failure>;

/// Why a scenario failed: what was expected and what happened.
#[derive(Debug, Clone)]
pub struct Failure(pub String);

impl Failure {
    /// A failure with this message.
    pub fn new(message: impl Into<String>) -> Self {
        Failure(message.into())
    }

    /// A failure from any error.
    pub fn from_error(error: impl std::fmt::Display) -> Self {
        Failure(error.to_string())
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Failure {}

/// Fails the scenario with a message unless `cond` holds.
#[macro_export]
macro_rules! ensure {
    ($cond:expr, $($msg:tt)+) => {
        if !$cond {
            return Err($crate::Failure::new(format!($($msg)+)));
        }
    };
}

/// A named scenario.
pub struct Scenario {
    /// Its name: the transcript's file name and the e2e test's name.
    pub name: &'static str,
    /// Runs it.
    pub run: fn(Ctx) -> Pin<Box<dyn Future<Output = Outcome> + Send>>,
}

/// Runs one scenario with the scenario timeout.
pub async fn run(scenario: &Scenario, ctx: Ctx) -> Outcome {
    match tokio::time::timeout(SCENARIO_TIMEOUT, (scenario.run)(ctx)).await {
        Ok(outcome) => outcome,
        Err(_) => Err(Failure::new(format!(
            "scenario {} did not finish within {SCENARIO_TIMEOUT:?}",
            scenario.name
        ))),
    }
}
