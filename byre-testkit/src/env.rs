//! The offline environment of one CLI run: a scratch `HOME` (with the CLI's `TMPDIR` in it), a
//! scratch working directory, and the variables that point the CLI at a fake API and keep it
//! off the network.

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tempfile::TempDir;

/// The dummy API key given to the CLI. It only ever reaches the fake API on loopback.
pub const OFFLINE_API_KEY: &str = "sk-ant-offline-test";

/// Inherited variables always removed from the child's environment: they could reach a real
/// account, route traffic elsewhere, or make the child think it is nested in another CLI.
const REMOVED: &[&str] = &[
    "CLAUDECODE",
    "ANTHROPIC_AUTH_TOKEN",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "ANTHROPIC_BEDROCK_BASE_URL",
    "ANTHROPIC_VERTEX_BASE_URL",
    "CLAUDE_CODE_USE_BEDROCK",
    "CLAUDE_CODE_USE_VERTEX",
    "CLAUDE_CONFIG_DIR",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
    "no_proxy",
];

/// Any other inherited variable with one of these prefixes is removed too (model overrides,
/// custom headers, other providers, ...), unless [`ClaudeEnv`] sets it itself.
const REMOVED_PREFIXES: &[&str] = &["ANTHROPIC_", "CLAUDE_"];

/// The variable naming a folder where [`ClaudeEnv::options`] keeps a transcript of every
/// session (`Options::transcripts_in`).
pub const LINES_VAR: &str = "BYRE_TEST_LINES";

/// The offline environment for one CLI run.
///
/// [`ClaudeEnv::new`] creates a fresh temporary `HOME` and working directory (both removed
/// when the last `ClaudeEnv` sharing them is dropped) and sets:
///
/// - `ANTHROPIC_BASE_URL` to the fake API, `ANTHROPIC_API_KEY` to [`OFFLINE_API_KEY`];
/// - `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC`, `DISABLE_TELEMETRY`, `DISABLE_AUTOUPDATER`,
///   `DISABLE_ERROR_REPORTING` to `1`;
/// - `HOME` to the scratch home, and `TMPDIR` to a folder in it (the CLI's temporary files
///   go away with the home);
/// - `IS_SANDBOX=1` when running as root (the CLI refuses
///   `--dangerously-skip-permissions`-style modes as root otherwise).
///
/// It removes inherited variables that could reach a real account or confuse the child
/// (`CLAUDECODE`, tokens, Bedrock/Vertex switches, proxies, any other `ANTHROPIC_*` /
/// `CLAUDE_*`). Everything else, `PATH` included, is inherited.
///
/// Clones share the same directories. [`ClaudeEnv::with_cwd`] and
/// [`ClaudeEnv::with_fresh_cwd`] keep the home (and so the CLI's sessions) and change the
/// working directory, as resuming or forking from another directory needs.
#[derive(Debug, Clone)]
pub struct ClaudeEnv {
    /// Keeps the scratch home alive.
    _home: Arc<TempDir>,
    home_path: PathBuf,
    /// Keeps a scratch working directory alive; `None` for a directory given by the caller.
    _cwd_dir: Option<Arc<TempDir>>,
    cwd_path: PathBuf,
    vars: Vec<(String, String)>,
    removed: Vec<OsString>,
}

impl ClaudeEnv {
    /// Options for byre-session's [`Claude`](byre_session::Claude) that run the pinned CLI
    /// (installed on first use) offline in this environment: its binary, this working
    /// directory, these variables, and a 10 s exit grace. Add your own options to them.
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// use byre_testkit::{ClaudeEnv, FakeModel, Reply, Rule, Script};
    ///
    /// let script = Script::new().rule(Rule::any().reply(Reply::text("Hi.")));
    /// let model = FakeModel::start(script).await?;
    /// let env = ClaudeEnv::new(&model.base_url())?;
    /// let (claude, mut events) = byre_session::Claude::start(env.options()?).await?;
    /// claude.send("Say hi")?;
    /// let answer = events.turn().finish().await?;
    /// assert_eq!(answer.text, "Hi.");
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// When [`LINES_VAR`] names a folder, each session started with these options also keeps
    /// a transcript there (unless the test gives one of its own), so that a test suite's every
    /// line from the real CLI can be held to byre's model afterwards (`cargo xtask test` does).
    pub fn options(&self) -> Result<byre_session::Options, crate::ProvisionError> {
        let mut options = byre_session::Options::new()
            .program(crate::claude_bin()?)
            .cwd(self.cwd())
            .exit_grace(std::time::Duration::from_secs(10));
        if let Some(dir) = std::env::var_os(LINES_VAR).filter(|d| !d.is_empty()) {
            options = options.transcripts_in(dir);
        }
        Ok(self.apply_options(options))
    }

    /// `options` with this environment's variables set and removed (the binary and working
    /// directory left as they are).
    pub fn apply_options(&self, mut options: byre_session::Options) -> byre_session::Options {
        for (name, value) in self.vars() {
            options = options.env(name, value);
        }
        for name in self.removed() {
            options = options.env_remove(name.clone());
        }
        options
    }

    /// A fresh environment whose CLI talks to the API at `base_url` (a loopback URL such as
    /// `http://127.0.0.1:PORT`).
    pub fn new(base_url: &str) -> io::Result<ClaudeEnv> {
        let home = TempDir::with_prefix("byre-home-")?;
        let home_path = home.path().canonicalize()?;
        let cwd = TempDir::with_prefix("byre-cwd-")?;
        let cwd_path = cwd.path().canonicalize()?;
        // The CLI's temporary files (task output, probes, sockets) go inside the scratch home,
        // and so away with it, instead of piling up in the machine's temporary directory.
        let tmp_path = home_path.join("tmp");
        std::fs::create_dir(&tmp_path)?;
        let mut vars: Vec<(String, String)> = vec![
            ("ANTHROPIC_BASE_URL".into(), base_url.into()),
            ("ANTHROPIC_API_KEY".into(), OFFLINE_API_KEY.into()),
            (
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC".into(),
                "1".into(),
            ),
            ("DISABLE_TELEMETRY".into(), "1".into()),
            ("DISABLE_AUTOUPDATER".into(), "1".into()),
            ("DISABLE_ERROR_REPORTING".into(), "1".into()),
            // A scripted 5xx fails the turn at once instead of after the CLI's ten retries
            // (minutes of back-off); `set_var` it back to test retrying.
            ("CLAUDE_CODE_MAX_RETRIES".into(), "0".into()),
            ("HOME".into(), home_path.to_string_lossy().into_owned()),
            ("TMPDIR".into(), tmp_path.to_string_lossy().into_owned()),
        ];
        if running_as_root() {
            vars.push(("IS_SANDBOX".into(), "1".into()));
        }
        let mut removed: Vec<OsString> = REMOVED.iter().map(OsString::from).collect();
        for (name, _) in std::env::vars_os() {
            let Some(text) = name.to_str() else { continue };
            let prefixed = REMOVED_PREFIXES.iter().any(|p| text.starts_with(p));
            let set_here = vars.iter().any(|(k, _)| k == text);
            if prefixed && !set_here && !removed.contains(&name) {
                removed.push(name);
            }
        }
        Ok(ClaudeEnv {
            _home: Arc::new(home),
            home_path,
            _cwd_dir: Some(Arc::new(cwd)),
            cwd_path,
            vars,
            removed,
        })
    }

    /// The same environment (same `HOME`, same variables) working in `path`, an existing
    /// directory the caller keeps alive.
    pub fn with_cwd(&self, path: impl Into<PathBuf>) -> ClaudeEnv {
        let path = path.into();
        let cwd_path = path.canonicalize().unwrap_or(path);
        ClaudeEnv {
            _cwd_dir: None,
            cwd_path,
            ..self.clone()
        }
    }

    /// The same environment working in a new scratch directory.
    pub fn with_fresh_cwd(&self) -> io::Result<ClaudeEnv> {
        let cwd = TempDir::with_prefix("byre-cwd-")?;
        let cwd_path = cwd.path().canonicalize()?;
        Ok(ClaudeEnv {
            _cwd_dir: Some(Arc::new(cwd)),
            cwd_path,
            ..self.clone()
        })
    }

    /// Sets (or overrides) one more variable.
    pub fn set_var(&mut self, name: impl Into<String>, value: impl Into<String>) {
        let (name, value) = (name.into(), value.into());
        self.removed.retain(|r| r.to_str() != Some(name.as_str()));
        match self.vars.iter_mut().find(|(k, _)| *k == name) {
            Some(slot) => slot.1 = value,
            None => self.vars.push((name, value)),
        }
    }

    /// Removes a variable: neither set here nor inherited (e.g. `ANTHROPIC_API_KEY`, to see
    /// what a CLI without credentials does).
    pub fn remove_var(&mut self, name: impl Into<String>) {
        let name = name.into();
        self.vars.retain(|(k, _)| *k != name);
        if !self
            .removed
            .iter()
            .any(|r| r.to_str() == Some(name.as_str()))
        {
            self.removed.push(name.into());
        }
    }

    /// The scratch `HOME` (the CLI keeps its sessions in `HOME/.claude`).
    pub fn home(&self) -> &Path {
        &self.home_path
    }

    /// The working directory the CLI runs in (canonical).
    pub fn cwd(&self) -> &Path {
        &self.cwd_path
    }

    /// The variables set for the child, in the order they are applied.
    pub fn vars(&self) -> &[(String, String)] {
        &self.vars
    }

    /// The inherited variables removed from the child's environment.
    pub fn removed(&self) -> &[OsString] {
        &self.removed
    }

    /// The value this environment gives `name`, if it sets it.
    pub fn var(&self, name: &str) -> Option<&str> {
        self.vars
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// Applies the environment to `cmd`: removes the unwanted variables, sets the others, and
    /// sets the working directory.
    pub fn apply(&self, cmd: &mut tokio::process::Command) {
        for name in &self.removed {
            cmd.env_remove(name);
        }
        for (name, value) in &self.vars {
            cmd.env(name, value);
        }
        cmd.current_dir(&self.cwd_path);
    }

    /// [`ClaudeEnv::apply`] for a blocking [`std::process::Command`].
    pub fn apply_std(&self, cmd: &mut std::process::Command) {
        for name in &self.removed {
            cmd.env_remove(name);
        }
        for (name, value) in &self.vars {
            cmd.env(name, value);
        }
        cmd.current_dir(&self.cwd_path);
    }
}

/// Whether this process runs with effective uid 0: the `Uid:` line of `/proc/self/status`
/// (real, effective, saved, fs), else `USER == "root"`.
pub fn running_as_root() -> bool {
    if let Ok(status) = std::fs::read_to_string("/proc/self/status") {
        let effective = status
            .lines()
            .find_map(|line| line.strip_prefix("Uid:"))
            .and_then(|ids| ids.split_whitespace().nth(1))
            .map(str::to_owned);
        if let Some(uid) = effective {
            return uid == "0";
        }
    }
    std::env::var("USER").is_ok_and(|user| user == "root")
}
