//! Provisioning of the Claude Code CLI: find the binary, or install it with npm.
//!
//! [`claude_bin`] looks, in order, at:
//!
//! 1. `BYRE_CLAUDE_BIN`: a binary chosen by the caller. It must exist and be executable; its
//!    version is not checked, so a different CLI can be tried on purpose (tests then hold it
//!    to byre's model less strictly, see [`strictness`](crate::strictness)).
//! 2. The CLI installed into `<install dir>/<version>/` for [`PINNED_CLI_VERSION`], the
//!    install dir being the one [`install_dir`] names: `BYRE_CLI_DIR`, the byre repository's
//!    `.cli` folder when run inside that repository, else a per-user cache folder
//!    (`$XDG_CACHE_HOME/byre/cli` or `$HOME/.cache/byre/cli`). It is used when its
//!    `--version` is the version of its folder.
//! 3. Otherwise the pinned CLI is installed there with npm, and checked again: from
//!    `@anthropic-ai/claude-code` when npm has the version there, else from the TypeScript
//!    Agent SDK's native package for this platform, in the release that bundles it (newer CLIs
//!    ship there first; [`source_of`](crate::source_of)).
//!
//! [`claude_bin_version`] does the same for any version (the matrix's older CLI, a new one to
//! check for drift), each in a folder of its own.
//!
//! Installs are serialised across processes with a lock file in the install dir, so test
//! binaries running in parallel run npm once. Every failure is a [`ProvisionError`] that says
//! what to do; nothing is silently skipped.

use std::ffi::OsString;
use std::fs::{self, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

use crate::npm::{self, installed_bin, CLI_PACKAGE};

/// The CLI version byre is tested against: every message it writes is fully modelled.
pub const PINNED_CLI_VERSION: &str = "2.1.337";

/// The older CLI versions byre's real-CLI suites also run on (`cargo xtask test`), where
/// tests assert behaviour and report, rather than fail on, what byre does not model.
pub const MATRIX_CLI_VERSIONS: &[&str] = &["2.1.332", "2.1.328"];

/// How long `claude --version` may take.
const VERSION_TIMEOUT: Duration = Duration::from_secs(60);

/// A lock file older than this is taken to be left over from a crashed install.
const STALE_LOCK: Duration = Duration::from_secs(20 * 60);

/// Why the CLI could not be provided.
#[derive(Debug, thiserror::Error)]
pub enum ProvisionError {
    /// `BYRE_CLAUDE_BIN` names a file that does not exist.
    #[error(
        "BYRE_CLAUDE_BIN is set to {path}, which does not exist; unset it to let byre-testkit \
         install the pinned CLI ({CLI_PACKAGE}@{PINNED_CLI_VERSION})"
    )]
    Missing {
        /// The path given.
        path: PathBuf,
    },
    /// The binary is not an executable file.
    #[error("{path} is not an executable file (check its permissions, or unset BYRE_CLAUDE_BIN)")]
    NotExecutable {
        /// The binary.
        path: PathBuf,
    },
    /// npm is not installed.
    #[error(
        "npm was not found on PATH ({source}); it is needed to install \
         {CLI_PACKAGE}@{version}. Install Node.js with npm (e.g. `apt-get install \
         nodejs npm` / `brew install node`), or set BYRE_CLAUDE_BIN to a claude \
         {version} binary"
    )]
    NpmMissing {
        /// The version that was to be installed.
        version: String,
        /// The error from starting npm.
        source: io::Error,
    },
    /// Neither the CLI's package nor the SDK's has this version.
    #[error(
        "npm has no Claude Code CLI {version}: not as {CLI_PACKAGE}@{version}, and no \
         @anthropic-ai/claude-agent-sdk release bundles it"
    )]
    NoPackage {
        /// The version asked for.
        version: String,
    },
    /// An npm command failed.
    #[error("`{command}` failed ({status}); last lines of its stderr:\n{stderr_tail}")]
    NpmFailed {
        /// The command line that was run.
        command: String,
        /// How it ended.
        status: String,
        /// The end of what npm wrote on stderr.
        stderr_tail: String,
    },
    /// npm succeeded but the binary is not where it should be.
    #[error("`npm install` succeeded but {path} does not exist; remove {dir} and try again")]
    NotInstalled {
        /// Where the binary was expected.
        path: PathBuf,
        /// The install dir.
        dir: PathBuf,
    },
    /// The binary reports another version than the one installed.
    #[error(
        "{path} reports version {found:?}, but {wanted} was installed; remove {dir} to \
         reinstall, or set BYRE_CLAUDE_BIN"
    )]
    WrongVersion {
        /// The binary.
        path: PathBuf,
        /// The version it printed.
        found: String,
        /// The version installed.
        wanted: String,
        /// The install dir.
        dir: PathBuf,
    },
    /// `claude --version` did not run or printed something unexpected.
    #[error("`{path} --version` failed: {detail}")]
    Version {
        /// The binary.
        path: PathBuf,
        /// What went wrong.
        detail: String,
    },
    /// No `Cargo.lock` above the start folder.
    #[error("could not find the project root: no Cargo.lock in {start} or above it")]
    NoProjectRoot {
        /// Where the search started.
        start: PathBuf,
    },
    /// Neither `BYRE_CLI_DIR`, the byre repository, `XDG_CACHE_HOME` nor `HOME` gives a
    /// folder to install the CLI in.
    #[error(
        "no folder to install the CLI in: this is not the byre repository and neither \
         BYRE_CLI_DIR, XDG_CACHE_HOME nor HOME is set; set BYRE_CLI_DIR to choose one"
    )]
    NoInstallDir,
    /// A file-system error.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The error.
        source: io::Error,
    },
}

fn io_err(what: impl Into<String>) -> impl FnOnce(io::Error) -> ProvisionError {
    let what = what.into();
    move |source| ProvisionError::Io { what, source }
}

/// Paths already checked by this process, so repeated calls do not rerun `--version`.
static VERIFIED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// The path of a usable `claude` binary, installing the pinned CLI when needed.
///
/// Blocking: it may run npm for a minute or more the first time. See the module
/// documentation for the order in which places are tried.
pub fn claude_bin() -> Result<PathBuf, ProvisionError> {
    if let Some(path) = std::env::var_os("BYRE_CLAUDE_BIN").filter(|p| !p.is_empty()) {
        let path = PathBuf::from(path);
        if !path.exists() {
            return Err(ProvisionError::Missing { path });
        }
        check_executable(&path)?;
        return Ok(path);
    }
    claude_bin_version(PINNED_CLI_VERSION)
}

/// The path of the CLI `version` (`2.1.328`), installed into `<install dir>/<version>/` when
/// it is not there yet. `BYRE_CLAUDE_BIN` plays no part.
pub fn claude_bin_version(version: &str) -> Result<PathBuf, ProvisionError> {
    let is_version = !version.is_empty()
        && version
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || ".-+".contains(c));
    if !is_version {
        return Err(ProvisionError::Version {
            path: PathBuf::from(version),
            detail: "not a version number".into(),
        });
    }
    let dir = install_dir()?.join(version);
    let mut bin = installed_bin(&dir);
    // One thread of this process at a time; the lock file handles other processes.
    let mut verified = VERIFIED.lock().unwrap_or_else(|e| e.into_inner());
    if verified.contains(&bin) && bin.exists() {
        return Ok(bin);
    }
    if installed_version(&bin).as_deref() != Some(version) {
        fs::create_dir_all(&dir).map_err(io_err(format!("could not create {}", dir.display())))?;
        let _lock = InstallLock::acquire(&dir)?;
        // Another process may have installed it while this one waited.
        if installed_version(&bin).as_deref() != Some(version) {
            npm::install(&dir, version)?;
            bin = installed_bin(&dir);
            if !bin.exists() {
                return Err(ProvisionError::NotInstalled { path: bin, dir });
            }
            check_executable(&bin)?;
            let found = cli_version(&bin)?;
            if found != version {
                return Err(ProvisionError::WrongVersion {
                    path: bin,
                    found,
                    wanted: version.to_owned(),
                    dir,
                });
            }
        }
    }
    verified.push(bin.clone());
    Ok(bin)
}

/// The version a `claude` binary reports: the first word of `claude --version`
/// (`2.1.328 (Claude Code)` gives `2.1.328`).
pub fn cli_version(bin: &Path) -> Result<String, ProvisionError> {
    let version_err = |detail: String| ProvisionError::Version {
        path: bin.to_path_buf(),
        detail,
    };
    let (status, stdout, stderr) = run_with_timeout(
        Command::new(bin)
            .arg("--version")
            .env("DISABLE_AUTOUPDATER", "1")
            .env("DISABLE_TELEMETRY", "1")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env_remove("CLAUDECODE"),
        VERSION_TIMEOUT,
    )
    .map_err(|e| version_err(e.to_string()))?;
    if !status.success() {
        return Err(version_err(format!(
            "it exited with {status}: {}",
            tail(&stderr, 10)
        )));
    }
    let text = String::from_utf8_lossy(&stdout);
    let word = text.split_whitespace().next().unwrap_or("");
    let looks_like_version = !word.is_empty()
        && word.contains('.')
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || ".-+".contains(c));
    if !looks_like_version {
        return Err(version_err(format!("unexpected output {:?}", text.trim())));
    }
    Ok(word.to_string())
}

/// The folder the pinned CLI is installed in, the first of:
///
/// 1. `BYRE_CLI_DIR`, when set and not empty;
/// 2. `<project root>/.cli` when the [`project_root`] is the byre repository itself (it holds
///    `byre-testkit/Cargo.toml`), so byre's own tests and `cargo xtask` keep the CLI
///    next to the code;
/// 3. `$XDG_CACHE_HOME/byre/cli`, when `XDG_CACHE_HOME` is an absolute path;
/// 4. `$HOME/.cache/byre/cli`, when `HOME` is set and not empty.
///
/// Other projects testing with byre-testkit thus share one install per user, and nothing is
/// written into their source tree. Fails with [`ProvisionError::NoInstallDir`] when none of
/// these applies.
pub fn install_dir() -> Result<PathBuf, ProvisionError> {
    let env = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    let cli_dir = env("BYRE_CLI_DIR");
    // Look for the repository only when BYRE_CLI_DIR does not decide.
    let repository = match cli_dir {
        Some(_) => None,
        None => byre_repository(),
    };
    choose_install_dir(
        cli_dir,
        repository.as_deref(),
        env("XDG_CACHE_HOME"),
        env("HOME"),
    )
    .ok_or(ProvisionError::NoInstallDir)
}

/// [`install_dir`]'s choice, from `BYRE_CLI_DIR`, the byre repository's root (if inside it),
/// `XDG_CACHE_HOME` and `HOME`.
fn choose_install_dir(
    cli_dir: Option<OsString>,
    repository: Option<&Path>,
    xdg_cache_home: Option<OsString>,
    home: Option<OsString>,
) -> Option<PathBuf> {
    if let Some(dir) = cli_dir.filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    if let Some(root) = repository {
        return Some(root.join(".cli"));
    }
    // The XDG base directory specification says to ignore a relative path.
    let cache = match xdg_cache_home.map(PathBuf::from) {
        Some(dir) if dir.is_absolute() => dir,
        _ => PathBuf::from(home.filter(|h| !h.is_empty())?).join(".cache"),
    };
    Some(cache.join("byre").join("cli"))
}

/// The root of the byre repository, when the [`project_root`] is that repository (it holds
/// `byre-testkit/Cargo.toml`); `None` for any other project, or outside one.
pub(crate) fn byre_repository() -> Option<PathBuf> {
    project_root()
        .ok()
        .filter(|root| root.join("byre-testkit/Cargo.toml").is_file())
}

/// The nearest folder holding `Cargo.lock`, at or above `CARGO_MANIFEST_DIR` (read at run
/// time) or the current directory.
pub fn project_root() -> Result<PathBuf, ProvisionError> {
    let start = match std::env::var_os("CARGO_MANIFEST_DIR").filter(|d| !d.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => std::env::current_dir().map_err(io_err("could not read the current directory"))?,
    };
    start
        .ancestors()
        .find(|dir| dir.join("Cargo.lock").is_file())
        .map(Path::to_path_buf)
        .ok_or(ProvisionError::NoProjectRoot { start })
}

/// The version `bin` reports, or `None` when it is missing or does not run (npm will then
/// replace it).
fn installed_version(bin: &Path) -> Option<String> {
    if !bin.exists() {
        return None;
    }
    cli_version(bin).ok()
}

fn check_executable(path: &Path) -> Result<(), ProvisionError> {
    let meta = fs::metadata(path).map_err(io_err(format!("could not stat {}", path.display())))?;
    #[cfg(unix)]
    let executable = {
        use std::os::unix::fs::PermissionsExt;
        meta.is_file() && meta.permissions().mode() & 0o111 != 0
    };
    #[cfg(not(unix))]
    let executable = meta.is_file();
    if executable {
        Ok(())
    } else {
        Err(ProvisionError::NotExecutable {
            path: path.to_path_buf(),
        })
    }
}

/// The last `lines` lines of `bytes`, as text.
pub(crate) fn tail(bytes: &[u8], lines: usize) -> String {
    let text = String::from_utf8_lossy(bytes);
    let all: Vec<&str> = text.trim_end().lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// Runs `command` with piped output, killing it if it takes longer than `timeout`.
pub(crate) fn run_with_timeout(
    command: &mut Command,
    timeout: Duration,
) -> io::Result<(std::process::ExitStatus, Vec<u8>, Vec<u8>)> {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let mut stdout = child.stdout.take().expect("piped");
    let mut stderr = child.stderr.take().expect("piped");
    let out = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = stdout.read_to_end(&mut buf);
        buf
    });
    let err = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = stderr.read_to_end(&mut buf);
        buf
    });
    let deadline = Instant::now() + timeout;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("no answer within {}s", timeout.as_secs()),
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let stdout = out.join().unwrap_or_default();
    let stderr = err.join().unwrap_or_default();
    Ok((status, stdout, stderr))
}

/// `<dir>/.install.lock`, created exclusively and removed on drop.
pub(crate) struct InstallLock {
    path: PathBuf,
}

impl InstallLock {
    pub(crate) fn acquire(dir: &Path) -> Result<InstallLock, ProvisionError> {
        let path = dir.join(".install.lock");
        let mut announced = false;
        loop {
            match OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(mut file) => {
                    let _ = writeln!(file, "{}", std::process::id());
                    return Ok(InstallLock { path });
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    if lock_is_stale(&path) {
                        let _ = fs::remove_file(&path);
                        continue;
                    }
                    if !announced {
                        eprintln!(
                            "byre-testkit: waiting for another process installing into {}",
                            path.display()
                        );
                        announced = true;
                    }
                    std::thread::sleep(Duration::from_millis(250));
                }
                Err(source) => {
                    return Err(ProvisionError::Io {
                        what: format!("could not create the lock file {}", path.display()),
                        source,
                    })
                }
            }
        }
    }
}

impl Drop for InstallLock {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
    }
}

/// A lock is stale when it is old, or (where `/proc` exists) when the process that wrote it is
/// gone.
fn lock_is_stale(path: &Path) -> bool {
    let Ok(meta) = fs::metadata(path) else {
        return false;
    };
    let age = meta
        .modified()
        .ok()
        .and_then(|m| SystemTime::now().duration_since(m).ok())
        .unwrap_or_default();
    if age > STALE_LOCK {
        return true;
    }
    let pid = fs::read_to_string(path)
        .ok()
        .and_then(|s| s.trim().parse::<u32>().ok());
    match pid {
        Some(pid) if Path::new("/proc/self").exists() => {
            !Path::new(&format!("/proc/{pid}")).exists()
        }
        // Written but not yet holding a pid: give the writer a moment.
        None => age > Duration::from_secs(10),
        Some(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(s: &str) -> Option<OsString> {
        Some(OsString::from(s))
    }

    #[test]
    fn byre_cli_dir_comes_first() {
        assert_eq!(
            choose_install_dir(os("/x/cli"), Some(Path::new("/repo")), os("/c"), os("/h")),
            Some(PathBuf::from("/x/cli"))
        );
    }

    #[test]
    fn inside_the_repository_the_cli_goes_to_its_dot_cli() {
        assert_eq!(
            choose_install_dir(None, Some(Path::new("/repo")), os("/c"), os("/h")),
            Some(PathBuf::from("/repo/.cli"))
        );
    }

    #[test]
    fn elsewhere_the_cli_goes_to_the_user_cache() {
        assert_eq!(
            choose_install_dir(None, None, os("/c"), os("/h")),
            Some(PathBuf::from("/c/byre/cli"))
        );
        assert_eq!(
            choose_install_dir(None, None, None, os("/h")),
            Some(PathBuf::from("/h/.cache/byre/cli"))
        );
        // A relative XDG_CACHE_HOME is ignored, as the specification says.
        assert_eq!(
            choose_install_dir(None, None, os("rel"), os("/h")),
            Some(PathBuf::from("/h/.cache/byre/cli"))
        );
        assert_eq!(choose_install_dir(None, None, os("rel"), None), None);
        assert_eq!(choose_install_dir(os(""), None, None, os("")), None);
    }

    #[test]
    fn this_crate_runs_inside_the_byre_repository() {
        // Its tests run from the repository (cargo sets CARGO_MANIFEST_DIR for them).
        let root = byre_repository().expect("the byre repository");
        assert!(root.join("byre-testkit/src/cli.rs").is_file());
    }
}
