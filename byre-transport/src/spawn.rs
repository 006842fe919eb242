//! How the CLI is started: the [`Spawn`] trait, the local child process that is the default,
//! and [`Wrapper`], which runs the CLI through another command (`env`, `sudo -u`, `nice`,
//! `docker exec`, `ssh`).

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::future::Future;
use std::io;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::process::{Child, Command};

use crate::descendants::{sweep, Tag, PROCESS_TAG_VAR};
use crate::launch::{find_claude, Launch, LaunchError, CLAUDE_BIN_VAR};
use crate::os::{signal_group, Signal};

mod remote;
mod watchdog;

/// A boxed future, as the object-safe traits here return.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The write end of the CLI's stdin.
pub type CliStdin = Box<dyn AsyncWrite + Send + Unpin>;

/// The read end of the CLI's stdout (or stderr).
pub type CliOutput = Box<dyn AsyncRead + Send + Unpin>;

/// What a spawner is asked to start.
#[derive(Debug)]
#[non_exhaustive]
pub struct SpawnRequest<'a> {
    /// The launch: [`Launch::program`] (the CLI to run, if one was named), its working
    /// directory ([`Launch::cwd`]) and environment ([`Launch::env_changes`]).
    pub launch: &'a Launch,
    /// The CLI's arguments (from [`Launch::args`] unless a caller chose others).
    pub args: Vec<OsString>,
    /// How many bytes a local stdout pipe is asked to hold
    /// ([`ProcessOptions::stdout_pipe_size`](crate::ProcessOptions::stdout_pipe_size)).
    pub stdout_pipe_size: Option<usize>,
    /// Whether a local CLI gets a watchdog that ends its process group when this process dies
    /// ([`ProcessOptions::watchdog`](crate::ProcessOptions::watchdog)).
    pub watchdog: bool,
    /// Folders a local CLI's watchdog removes when this process dies
    /// ([`ProcessOptions::watchdog_removes`](crate::ProcessOptions::watchdog_removes)).
    pub watchdog_removes: Vec<PathBuf>,
    /// Whether a local CLI's descendants are tagged, so that stopping it ends those that left
    /// its process group too (Linux;
    /// [`ProcessOptions::tag_descendants`](crate::ProcessOptions::tag_descendants)).
    pub tag_descendants: bool,
}

impl<'a> SpawnRequest<'a> {
    /// A request to run `launch` with its own arguments.
    pub fn new(launch: &'a Launch) -> Self {
        SpawnRequest {
            launch,
            args: launch.args(),
            stdout_pipe_size: None,
            watchdog: true,
            watchdog_removes: Vec::new(),
            tag_descendants: true,
        }
    }

    /// The same request with `args` instead.
    pub fn with_args(mut self, args: Vec<OsString>) -> Self {
        self.args = args;
        self
    }

    /// The same request asking for a stdout pipe of `size` bytes.
    pub fn with_stdout_pipe_size(mut self, size: Option<usize>) -> Self {
        self.stdout_pipe_size = size;
        self
    }

    /// The same request with a watchdog or without.
    pub fn with_watchdog(mut self, watchdog: bool) -> Self {
        self.watchdog = watchdog;
        self
    }

    /// The same request with folders for the watchdog to remove when this process dies.
    pub fn with_watchdog_removes(mut self, paths: Vec<PathBuf>) -> Self {
        self.watchdog_removes = paths;
        self
    }

    /// The same request with the CLI's descendants tagged or not.
    pub fn with_tag_descendants(mut self, tag: bool) -> Self {
        self.tag_descendants = tag;
        self
    }
}

/// A started CLI: its three streams and a handle on its life.
pub struct Spawned {
    /// Writes to the CLI's stdin; dropping it is the CLI's end of input.
    pub stdin: CliStdin,
    /// Reads the CLI's stdout.
    pub stdout: CliOutput,
    /// Reads the CLI's stderr, if the spawner has it (it is always drained when given).
    pub stderr: Option<CliOutput>,
    /// Waits for the CLI and stops it.
    pub child: Box<dyn ChildHandle>,
    /// What was run, program first: for the transcript's launch note and for errors. It must
    /// hold nothing secret (byre's own launch keeps secrets off the command line).
    pub argv: Vec<OsString>,
}

impl fmt::Debug for Spawned {
    /// The program and the number of its arguments, not the arguments: with
    /// `Delivery::Argv` they hold the MCP servers' `env` and `headers` and the settings.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Spawned")
            .field("child", &self.child)
            .field("program", &self.argv.first())
            .field("arguments", &self.argv.len().saturating_sub(1))
            .finish_non_exhaustive()
    }
}

/// The life of a started CLI, as byre's shutdown drives it: close stdin and wait, then
/// [`terminate`](ChildHandle::terminate) and wait, then [`kill`](ChildHandle::kill); `kill`
/// again once the CLI has exited, for anything it left behind, and when the handle is dropped.
pub trait ChildHandle: Send + fmt::Debug {
    /// Its process id on this machine, if it has one (for logs and for tests).
    fn id(&self) -> Option<u32>;
    /// Its exit status if it has exited; does not block.
    fn try_wait(&mut self) -> io::Result<Option<ExitStatus>>;
    /// Waits for it to exit.
    fn wait(&mut self) -> BoxFuture<'_, io::Result<ExitStatus>>;
    /// Asks it to stop (SIGTERM for a local process group, and on Linux for every process
    /// carrying its tag).
    fn terminate(&mut self);
    /// Ends it and whatever it started, now (SIGKILL for a local process group, and on Linux
    /// for every process carrying its tag). Called from `Drop` too, so it must not wait.
    fn kill(&mut self);
}

/// Starts the CLI. The default is [`Local`]; [`Wrapper`] runs it through another command;
/// implement it to start the CLI any other way (a container API, a remote executor), as long
/// as the streams reach the CLI's stdin, stdout and stderr, and [`ChildHandle`] waits for it
/// and stops it.
///
/// A spawner that logs each start and hands the rest to [`Local`]:
///
/// ```
/// use byre_transport::{BoxFuture, LaunchError, Local, Spawn, SpawnRequest, Spawned};
///
/// #[derive(Debug)]
/// struct Logged;
///
/// impl Spawn for Logged {
///     fn spawn<'a>(
///         &'a self,
///         request: SpawnRequest<'a>,
///     ) -> BoxFuture<'a, Result<Spawned, LaunchError>> {
///         Box::pin(async move {
///             eprintln!("starting the CLI in {:?}", request.launch.cwd);
///             Local.spawn(request).await
///         })
///     }
/// }
/// ```
///
/// `Options::spawn(Logged)` (in byre-session) then starts every session through it.
pub trait Spawn: Send + Sync + fmt::Debug {
    /// Starts the CLI as `request` says.
    fn spawn<'a>(
        &'a self,
        request: SpawnRequest<'a>,
    ) -> BoxFuture<'a, Result<Spawned, LaunchError>>;
}

/// The default: the CLI as a local child process, found by [`find_claude`], in its own process
/// group.
///
/// Shutdown: stdin is closed, the CLI gets [`exit_grace`](crate::ProcessOptions::exit_grace)
/// to exit by itself, then SIGTERM goes to its process group, then SIGKILL; the group is
/// killed once the CLI has exited and when the handle is dropped, so no tool it started is left
/// behind. On Linux each signal also goes to every process that carries the CLI's tag
/// ([`PROCESS_TAG_VAR`](crate::PROCESS_TAG_VAR)) and to the group each of them leads, so a tool
/// that moved itself to another process group or session (`setsid`, a daemonising server) is
/// ended too, unless it also dropped the tag from its environment. Elsewhere such a tool is out
/// of reach.
#[derive(Debug, Clone, Copy, Default)]
pub struct Local;

impl Spawn for Local {
    fn spawn<'a>(
        &'a self,
        mut request: SpawnRequest<'a>,
    ) -> BoxFuture<'a, Result<Spawned, LaunchError>> {
        Box::pin(async move {
            let program = find_claude(request.launch.program.as_deref())?;
            let mut argv = vec![program.clone().into_os_string()];
            argv.extend(std::mem::take(&mut request.args));
            spawn_local(argv, request.launch, true, &request)
        })
    }
}

/// The CLI run through another command: `env -u VAR`, `sudo -u agent`, `nice -n 10`,
/// `docker exec`, `ssh`. The CLI named is [`Launch::program`], else `BYRE_CLAUDE_BIN`, else
/// `claude` as the wrapper finds it; [`Wrapper::cli`] names another (a path inside a container
/// or on a remote host). Nothing of the environment's values is put on the command line.
///
/// The wrapper is a local child process in its own process group, stopped as [`Local`] stops
/// the CLI, so the guarantees hold for whatever stays in that group, and on Linux for whatever
/// keeps the wrapper's tag (a wrapper that passes its environment on, as `env` and `nice` do,
/// tags the CLI and its tools; `docker exec` and `ssh` start nothing locally but the client).
/// Per wrapper:
/// - [`Wrapper::new`] (`env`, `nice`, `sudo`, a script that `exec`s): the working directory
///   and the environment are the wrapper's, which passes them on. A wrapper that changes user
///   (`sudo -u other`) may keep byre from signalling the CLI: stopping then rests on the CLI
///   exiting at the end of its input, and on the wrapper relaying SIGTERM (sudo does). sudo
///   resets the environment unless told to keep it (`--preserve-env=NAME,...`).
/// - [`Wrapper::docker_exec`]: `docker exec -i [-w DIR] [-e NAME]... CONTAINER CLI ARGS...`.
///   Each variable byre sets goes as `-e NAME`, so docker reads its value from its own
///   environment and the command line holds only names. Killing the `docker` client does not
///   stop a process inside the container, so the CLI runs under a watchdog there (a `sh`
///   script, [`Wrapper::remote_grace`]): when its input ends (byre closed it, or the host
///   running byre died) it gets the grace to exit, then SIGTERM, then SIGKILL, with its group.
/// - [`Wrapper::ssh`]: `ssh -T [-o SendEnv=NAME]... DESTINATION -- 'cd DIR && exec CLI ARGS'`,
///   every argument quoted for the remote shell. Variables go by name through `SendEnv`, which
///   the server passes on only where its `AcceptEnv` allows; otherwise set them on the remote
///   host. The CLI runs under the same watchdog as in a container: when the ssh client ends
///   (with its host, or stopped by byre), the remote CLI's input ends and it is ended after
///   the grace.
#[derive(Debug, Clone)]
pub struct Wrapper {
    program: OsString,
    args: Vec<OsString>,
    kind: WrapperKind,
    target: Option<OsString>,
    cli: Option<PathBuf>,
    /// The remote watchdog's grace (`docker exec`, `ssh`); `None`: no watchdog.
    remote_grace: Option<Duration>,
}

/// How long the remote watchdog lets a CLI whose input ended exit by itself.
pub const REMOTE_GRACE: Duration = Duration::from_secs(5);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WrapperKind {
    Prefix,
    Docker,
    Ssh,
}

impl Wrapper {
    /// Runs `PROGRAM [ARGS...] CLI CLI_ARGS...`, with the launch's directory and environment.
    pub fn new(program: impl Into<OsString>) -> Self {
        Wrapper {
            program: program.into(),
            args: Vec::new(),
            kind: WrapperKind::Prefix,
            target: None,
            cli: None,
            remote_grace: None,
        }
    }

    /// Runs the CLI inside a running container with `docker exec -i`.
    pub fn docker_exec(container: impl Into<OsString>) -> Self {
        Wrapper {
            kind: WrapperKind::Docker,
            target: Some(container.into()),
            remote_grace: Some(REMOTE_GRACE),
            ..Wrapper::new("docker")
        }
    }

    /// Runs the CLI on another host with `ssh -T`.
    pub fn ssh(destination: impl Into<OsString>) -> Self {
        Wrapper {
            kind: WrapperKind::Ssh,
            target: Some(destination.into()),
            remote_grace: Some(REMOTE_GRACE),
            ..Wrapper::new("ssh")
        }
    }

    /// Another wrapper program in place of `env`, `docker` or `ssh` (a full path, `podman`).
    pub fn program(mut self, program: impl Into<OsString>) -> Self {
        self.program = program.into();
        self
    }

    /// An argument for the wrapper itself, before the container or destination.
    pub fn arg(mut self, arg: impl Into<OsString>) -> Self {
        self.args.push(arg.into());
        self
    }

    /// Arguments for the wrapper itself.
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// How long the remote watchdog of [`Wrapper::docker_exec`] and [`Wrapper::ssh`] lets a
    /// CLI whose input ended exit by itself before it ends it ([`REMOTE_GRACE`] by default);
    /// `None` runs the CLI without the watchdog (a remote host without `sh`, `mkfifo` or
    /// `mktemp`).
    pub fn remote_grace(mut self, grace: Option<Duration>) -> Self {
        if self.kind != WrapperKind::Prefix {
            self.remote_grace = grace;
        }
        self
    }

    /// The CLI as the wrapper should run it (a path inside the container or on the host).
    pub fn cli(mut self, path: impl Into<PathBuf>) -> Self {
        self.cli = Some(path.into());
        self
    }

    /// The full command line for `launch` with the CLI's `args`.
    pub fn argv(&self, launch: &Launch, args: Vec<OsString>) -> Vec<OsString> {
        let cli = self
            .cli
            .clone()
            .or_else(|| launch.program.clone())
            .or_else(|| {
                std::env::var_os(CLAUDE_BIN_VAR)
                    .filter(|p| !p.is_empty())
                    .map(PathBuf::from)
            })
            .unwrap_or_else(|| PathBuf::from("claude"));
        let mut argv = vec![self.program.clone()];
        let set: Vec<OsString> = launch
            .env_changes()
            .into_iter()
            .filter_map(|(name, value)| value.map(|_| name))
            .collect();
        match self.kind {
            WrapperKind::Prefix => {
                argv.extend(self.args.iter().cloned());
                argv.push(cli.into_os_string());
                argv.extend(args);
            }
            WrapperKind::Docker => {
                argv.push("exec".into());
                argv.push("-i".into());
                if let Some(cwd) = &launch.cwd {
                    argv.push("-w".into());
                    argv.push(cwd.clone().into_os_string());
                }
                for name in set {
                    argv.push("-e".into());
                    argv.push(name);
                }
                argv.extend(self.args.iter().cloned());
                argv.extend(self.target.clone());
                argv.extend(self.remote(cli, args));
            }
            WrapperKind::Ssh => {
                argv.push("-T".into());
                for name in set {
                    argv.push("-o".into());
                    let mut option = OsString::from("SendEnv=");
                    option.push(name);
                    argv.push(option);
                }
                argv.extend(self.args.iter().cloned());
                argv.extend(self.target.clone());
                argv.push("--".into());
                let mut command = String::new();
                if let Some(cwd) = &launch.cwd {
                    command.push_str("cd ");
                    command.push_str(&shell_quote(cwd.as_os_str()));
                    command.push_str(" && ");
                }
                command.push_str("exec");
                for arg in &self.remote(cli, args) {
                    command.push(' ');
                    command.push_str(&shell_quote(arg));
                }
                argv.push(command.into());
            }
        }
        argv
    }
}

impl Wrapper {
    /// The CLI's command line on the remote side: under the watchdog, unless it is off.
    fn remote(&self, cli: PathBuf, args: Vec<OsString>) -> Vec<OsString> {
        let mut command = vec![cli.into_os_string()];
        command.extend(args);
        match self.remote_grace {
            Some(grace) => remote::watched(grace, command),
            None => command,
        }
    }
}

impl Spawn for Wrapper {
    fn spawn<'a>(
        &'a self,
        mut request: SpawnRequest<'a>,
    ) -> BoxFuture<'a, Result<Spawned, LaunchError>> {
        Box::pin(async move {
            let argv = self.argv(request.launch, std::mem::take(&mut request.args));
            // A container or remote host has its own working directory.
            let local_cwd = self.kind == WrapperKind::Prefix;
            spawn_local(argv, request.launch, local_cwd, &request)
        })
    }
}

/// `arg` quoted for a POSIX shell: in single quotes, each `'` written as `'\''`.
pub fn shell_quote(arg: &OsStr) -> String {
    let text = arg.to_string_lossy();
    if !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(&b))
    {
        return text.into_owned();
    }
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// Starts `argv` as a local child in its own process group, with piped stdio and the launch's
/// environment (and directory, when `use_cwd`).
pub(crate) fn spawn_local(
    argv: Vec<OsString>,
    launch: &Launch,
    use_cwd: bool,
    request: &SpawnRequest<'_>,
) -> Result<Spawned, LaunchError> {
    let program = PathBuf::from(argv.first().cloned().unwrap_or_default());
    let mut command = Command::new(&program);
    command
        .args(&argv[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    #[cfg(unix)]
    command.process_group(0);
    if let (Some(cwd), true) = (&launch.cwd, use_cwd) {
        command.current_dir(cwd);
    }
    for (name, value) in launch.env_changes() {
        match value {
            Some(value) => command.env(name, value),
            None => command.env_remove(name),
        };
    }
    // Only where it can be searched for.
    let tag = (request.tag_descendants && cfg!(target_os = "linux")).then(Tag::new);
    if let Some(tag) = &tag {
        command.env(PROCESS_TAG_VAR, tag.value());
    }
    let mut child = command.spawn().map_err(|source| LaunchError::Spawn {
        path: program.clone(),
        source,
    })?;
    let pid = child.id().unwrap_or_default();
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return Err(LaunchError::Spawn {
            path: program,
            source: io::Error::other("the child's stdio is not piped"),
        });
    };
    if let Some(size) = request.stdout_pipe_size {
        crate::os::resize_pipe(&stdout, size);
    }
    let watchdog = match request.watchdog {
        true => watchdog::watch(pid, tag.as_ref().map(Tag::value), &request.watchdog_removes),
        false => None,
    };
    let stderr = child.stderr.take().map(|e| Box::new(e) as CliOutput);
    Ok(Spawned {
        stdin: Box::new(stdin),
        stdout: Box::new(stdout),
        stderr,
        child: Box::new(LocalChild {
            child,
            pid,
            tag: tag.map(|tag| tag.started(pid)),
            swept: false,
            _watchdog: watchdog,
        }),
        argv,
    })
}

/// A local child leading its own process group.
struct LocalChild {
    child: Child,
    pid: u32,
    /// The value of [`PROCESS_TAG_VAR`] its descendants carry (Linux, unless turned off).
    tag: Option<Tag>,
    /// Whether a sweep found no process with the tag: none can appear after that, as only a
    /// tagged process starts one.
    swept: bool,
    /// Its registration with the host's watchdog, which ends the group if this process dies
    /// without stopping it; dropped after the group was killed.
    _watchdog: Option<watchdog::Watched>,
}

impl LocalChild {
    /// Sends `signal` to every process carrying the tag, until one sweep finds none.
    fn sweep(&mut self, signal: Signal) {
        if let (Some(tag), false) = (&self.tag, self.swept) {
            self.swept = sweep(tag, signal) == 0;
        }
    }
}

impl fmt::Debug for LocalChild {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The tag is not a secret, but nothing to print either.
        f.debug_struct("LocalChild")
            .field("child", &self.child)
            .field("pid", &self.pid)
            .field("tagged", &self.tag.is_some())
            .field("watchdog", &self._watchdog.is_some())
            .finish()
    }
}

impl ChildHandle for LocalChild {
    fn id(&self) -> Option<u32> {
        Some(self.pid).filter(|&pid| pid != 0)
    }

    fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        self.child.try_wait()
    }

    fn wait(&mut self) -> BoxFuture<'_, io::Result<ExitStatus>> {
        Box::pin(self.child.wait())
    }

    fn terminate(&mut self) {
        signal_group(self.pid, Signal::Term);
        self.sweep(Signal::Term);
    }

    fn kill(&mut self) {
        // The leader is killed by `kill_on_drop` too, and tokio reaps it.
        signal_group(self.pid, Signal::Kill);
        self.sweep(Signal::Kill);
    }
}

/// The program a [`Spawned`] ran, for errors.
pub(crate) fn program_of(argv: &[OsString]) -> &Path {
    argv.first().map(Path::new).unwrap_or(Path::new(""))
}
