//! Helpers shared by the tests: a fake model with an offline environment, and running the
//! `byre` binary in it.

use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use byre_testkit::{claude_bin, ClaudeEnv, FakeModel, Script};
use tokio::io::AsyncWriteExt;
use tokio::process::Command;

/// How long one `byre` run may take (the machine may be busy with other tests).
pub(crate) const RUN_TIMEOUT: Duration = Duration::from_secs(120);

/// The `byre` binary under test.
pub(crate) fn byre_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_byre"))
}

/// The pinned CLI (installed on first use).
pub(crate) fn claude() -> PathBuf {
    claude_bin().unwrap_or_else(|e| panic!("cannot provision the CLI: {e}"))
}

/// A fake model and an offline environment (scratch `HOME` and working directory).
pub(crate) struct Offline {
    pub(crate) model: FakeModel,
    pub(crate) env: ClaudeEnv,
}

impl Offline {
    pub(crate) async fn start(script: Script) -> Offline {
        let model = FakeModel::start(script)
            .await
            .expect("the fake model starts");
        let env = ClaudeEnv::new(&model.base_url()).expect("a scratch environment");
        Offline { model, env }
    }

    /// `byre ARGS...` in the offline environment, with nothing else added.
    pub(crate) fn command(&self, args: &[&str]) -> Command {
        byre_in(&self.env, args)
    }

    /// `byre run --claude CLI ARGS...`.
    pub(crate) fn run(&self, args: &[&str]) -> Command {
        run_in(&self.env, args)
    }
}

/// `byre ARGS...` in `env` (another host's `HOME` and working directory, say).
pub(crate) fn byre_in(env: &ClaudeEnv, args: &[&str]) -> Command {
    let mut std_command = std::process::Command::new(byre_bin());
    env.apply_std(&mut std_command);
    std_command.env_remove("BYRE_CLAUDE_BIN").args(args);
    let mut command = Command::from(std_command);
    command.kill_on_drop(true);
    command
}

/// `byre run --claude CLI ARGS...` in `env`.
pub(crate) fn run_in(env: &ClaudeEnv, args: &[&str]) -> Command {
    let claude = claude();
    let mut all = vec!["run", "--claude", claude.to_str().expect("a UTF-8 path")];
    all.extend_from_slice(args);
    byre_in(env, &all)
}

/// The peak resident memory of process `pid` so far (`VmHWM`), in bytes; `None` once it has
/// ended.
pub(crate) fn peak_rss(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// What a finished `byre` wrote and how it ended.
#[derive(Debug)]
pub(crate) struct Out {
    pub(crate) status: ExitStatus,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

impl Out {
    /// The session id of the last closing line on stderr.
    pub(crate) fn session(&self) -> String {
        self.stderr
            .lines()
            .rev()
            .find_map(|l| l.strip_prefix("── ").and(l.rsplit_once("session ")))
            .map(|(_, id)| id.trim().to_owned())
            .unwrap_or_else(|| panic!("no closing line with a session: {self:?}"))
    }
}

/// Runs `command` to its end, feeding `stdin` when given.
pub(crate) async fn output(mut command: Command, stdin: Option<&str>) -> Out {
    command
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().expect("byre starts");
    if let Some(text) = stdin {
        let mut pipe = child.stdin.take().expect("a stdin pipe");
        pipe.write_all(text.as_bytes())
            .await
            .expect("stdin takes the prompt");
        drop(pipe);
    }
    let output = tokio::time::timeout(RUN_TIMEOUT, child.wait_with_output())
        .await
        .expect("byre ends in time")
        .expect("byre's output");
    Out {
        status: output.status,
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}
