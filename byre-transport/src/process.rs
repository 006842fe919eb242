//! The CLI process: started by a spawner (by default in its own process group), stderr always
//! drained into a bounded buffer, and shut down without leaving a zombie or an orphan.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::task::JoinHandle;

use crate::launch::{Launch, LaunchError};
use crate::spawn::{
    program_of, spawn_local, ChildHandle, CliOutput, CliStdin, Spawn, SpawnRequest, Spawned,
};

/// Called with each stderr line of the CLI, without its newline.
pub type StderrCallback = Arc<dyn Fn(&str) + Send + Sync>;

/// How the process is run and stopped.
#[derive(Clone)]
pub struct ProcessOptions {
    /// How many bytes of stderr to keep (the most recent ones). Default 64 KiB.
    pub stderr_capacity: usize,
    /// Called with every stderr line, as it arrives (a line longer than
    /// [`STDERR_LINE_LIMIT`] in pieces of that size).
    pub on_stderr_line: Option<StderrCallback>,
    /// After closing stdin, how long to wait for the CLI to exit by itself (it flushes its
    /// session file then). Default 5 s.
    pub exit_grace: Duration,
    /// After SIGTERM, how long to wait before SIGKILL. Default 5 s.
    pub term_grace: Duration,
    /// How many bytes the CLI's stdout pipe is asked to hold (Linux only; `None` keeps the
    /// system's default, 64 KiB). Default 256 KiB.
    ///
    /// With the default size a CLI writing fast and its reader take turns at every 64 KiB,
    /// each waking the other; a larger pipe lets both run. The kernel caps the size at
    /// `/proc/sys/fs/pipe-max-size` for users without `CAP_SYS_RESOURCE` (1 MiB unless
    /// changed), and counts pipe memory per user: past `/proc/sys/fs/pipe-user-pages-soft`
    /// (64 MiB unless changed), that user's new pipes get only two pages. A program running
    /// many sessions as an unprivileged user may want a smaller size here.
    pub stdout_pipe_size: Option<usize>,
    /// Whether a local CLI is watched (Unix only): the host process has one watchdog, a small
    /// `/bin/sh` process started with its first watched CLI, in a process group of its own,
    /// that waits on a pipe only this process holds and, when this process is gone, however it
    /// died (SIGKILL, a panic with `abort`, `std::process::exit` without closing the session),
    /// ends the process group of every CLI still registered with it (SIGTERM, then SIGKILL
    /// after 2 s). Default `true`. A watched CLI costs a line written to that pipe at its start
    /// and another once byre has ended its group; no process or descriptor of its own. On Linux
    /// the watchdog also ends the processes carrying the CLI's tag
    /// ([`tag_descendants`](ProcessOptions::tag_descendants)), and it removes the
    /// [`watchdog_removes`](ProcessOptions::watchdog_removes) paths.
    pub watchdog: bool,
    /// Folders the watchdog removes (`rm -rf`) when this process is gone without having
    /// stopped the CLI: scratch folders that must not outlive it, such as the scratch config
    /// (with a copy of the sign-in) a stored session is resumed from. Removed once the CLI's
    /// group has been sent SIGTERM, and again before the SIGKILL, in case a CLI that was
    /// stopping wrote there meanwhile. Nothing is removed when byre stops the CLI itself: the
    /// owner of the folder removes it then. Empty by default.
    pub watchdog_removes: Vec<PathBuf>,
    /// Whether a local CLI's descendants are tagged (Linux only): the CLI's environment gets
    /// [`PROCESS_TAG_VAR`](crate::PROCESS_TAG_VAR) with a random value, which every process it
    /// starts inherits unless it clears it, and each signal that stops the CLI's process group
    /// (SIGTERM, SIGKILL, at shutdown, on drop, from the watchdog) also goes to every process
    /// carrying that value, and to the process group each of them leads, found in `/proc`.
    /// So a tool that left the group (`setsid`, a daemonising dev server) ends with the CLI.
    /// Default `true`. Each look through `/proc` reads the environment of every process started
    /// since the CLI (of every process, when the kernel has started more than half of
    /// `pid_max` processes and threads since), 4 to 10 µs a process on a two-core virtual
    /// machine, on the thread that stops the CLI: once for a CLI that exits when its input
    /// ends with nothing outside its group, up to four or five times when it must be killed or
    /// something left the group (100 stand-in CLIs closed at once took 1 ms of CPU each for
    /// it). `false` keeps the environment as it was and ends the process group only.
    pub tag_descendants: bool,
}

impl Default for ProcessOptions {
    fn default() -> Self {
        ProcessOptions {
            stderr_capacity: 64 * 1024,
            on_stderr_line: None,
            exit_grace: Duration::from_secs(5),
            term_grace: Duration::from_secs(5),
            stdout_pipe_size: Some(256 * 1024),
            watchdog: true,
            watchdog_removes: Vec::new(),
            tag_descendants: true,
        }
    }
}

impl fmt::Debug for ProcessOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProcessOptions")
            .field("stderr_capacity", &self.stderr_capacity)
            .field("on_stderr_line", &self.on_stderr_line.is_some())
            .field("exit_grace", &self.exit_grace)
            .field("term_grace", &self.term_grace)
            .field("stdout_pipe_size", &self.stdout_pipe_size)
            .field("watchdog", &self.watchdog)
            .field("watchdog_removes", &self.watchdog_removes)
            .field("tag_descendants", &self.tag_descendants)
            .finish()
    }
}

/// The most recent stderr output, shared between the drain task and its readers.
#[derive(Clone, Debug, Default)]
pub struct StderrTail {
    inner: Arc<Mutex<Ring>>,
}

#[derive(Debug, Default)]
struct Ring {
    bytes: VecDeque<u8>,
    capacity: usize,
    dropped: u64,
}

impl StderrTail {
    fn with_capacity(capacity: usize) -> Self {
        StderrTail {
            inner: Arc::new(Mutex::new(Ring {
                bytes: VecDeque::new(),
                capacity,
                dropped: 0,
            })),
        }
    }

    fn push(&self, data: &[u8]) {
        let mut ring = self.inner.lock().expect("stderr buffer lock");
        let capacity = ring.capacity;
        if data.len() >= capacity {
            let cut = data.len() - capacity;
            let old = ring.bytes.len() as u64;
            ring.dropped += old + cut as u64;
            ring.bytes.clear();
            ring.bytes.extend(&data[cut..]);
            return;
        }
        let overflow = (ring.bytes.len() + data.len()).saturating_sub(capacity);
        ring.bytes.drain(..overflow);
        ring.dropped += overflow as u64;
        ring.bytes.extend(data);
    }

    /// The kept text (lossily as UTF-8).
    pub fn text(&self) -> String {
        let ring = self.inner.lock().expect("stderr buffer lock");
        let (a, b) = ring.bytes.as_slices();
        let mut bytes = Vec::with_capacity(a.len() + b.len());
        bytes.extend_from_slice(a);
        bytes.extend_from_slice(b);
        String::from_utf8_lossy(&bytes).into_owned()
    }

    /// How many older bytes were dropped to keep within the capacity.
    pub fn dropped(&self) -> u64 {
        self.inner.lock().expect("stderr buffer lock").dropped
    }
}

/// How a shutdown ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stopped {
    /// The process had already exited.
    AlreadyExited,
    /// It exited by itself after stdin was closed.
    Exited,
    /// It exited after SIGTERM to its process group.
    Terminated,
    /// It was killed with SIGKILL.
    Killed,
}

/// The end of a process.
#[derive(Debug, Clone)]
pub struct ExitInfo {
    /// Its exit status.
    pub status: ExitStatus,
    /// How it got there.
    pub stopped: Stopped,
    /// The end of its stderr.
    pub stderr_tail: String,
}

/// A running CLI process.
///
/// Started by a [`Spawn`]er: by default ([`Local`](crate::Local)) the CLI leads its own process
/// group, so signals reach the tools it started too (and on Linux, those that left the group
/// but carry its tag: [`ProcessOptions::tag_descendants`]). Its stderr is always read (an
/// unread pipe would block it) into a bounded [`StderrTail`]. Dropping a `CliProcess` whose
/// process still runs kills it ([`ChildHandle::kill`]: the whole group and the tagged
/// processes, for a local one); tokio reaps a local child, so no zombie is left.
pub struct CliProcess {
    child: Box<dyn ChildHandle>,
    pid: u32,
    program: PathBuf,
    argv: Vec<OsString>,
    stdin: Option<CliStdin>,
    stdout: Option<CliOutput>,
    stderr: StderrTail,
    stderr_task: Option<JoinHandle<()>>,
    options: ProcessOptions,
    status: Option<ExitStatus>,
}

impl fmt::Debug for CliProcess {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CliProcess")
            .field("pid", &self.pid)
            .field("program", &self.program)
            .field("child", &self.child)
            .field("status", &self.status)
            .finish_non_exhaustive()
    }
}

impl CliProcess {
    /// Starts `program` as `launch` says, with piped stdio, in its own process group.
    pub fn spawn(
        program: &Path,
        launch: &Launch,
        options: ProcessOptions,
    ) -> Result<CliProcess, LaunchError> {
        Self::spawn_args(program, launch.args(), launch, options)
    }

    /// Starts `program` with exactly `args` (the environment and directory still come from
    /// `launch`): for stand-ins and tests.
    pub fn spawn_args(
        program: &Path,
        args: Vec<OsString>,
        launch: &Launch,
        options: ProcessOptions,
    ) -> Result<CliProcess, LaunchError> {
        let mut argv = vec![program.as_os_str().to_owned()];
        argv.extend(args);
        let request = SpawnRequest::new(launch)
            .with_stdout_pipe_size(options.stdout_pipe_size)
            .with_watchdog(options.watchdog)
            .with_watchdog_removes(options.watchdog_removes.clone())
            .with_tag_descendants(options.tag_descendants);
        let spawned = spawn_local(argv, launch, true, &request)?;
        Ok(Self::from_spawned(spawned, options))
    }

    /// Starts the CLI with `spawner` (the local default is [`Local`](crate::Local)).
    pub async fn start(
        spawner: &dyn Spawn,
        launch: &Launch,
        options: ProcessOptions,
    ) -> Result<CliProcess, LaunchError> {
        let request = SpawnRequest::new(launch)
            .with_stdout_pipe_size(options.stdout_pipe_size)
            .with_watchdog(options.watchdog)
            .with_watchdog_removes(options.watchdog_removes.clone())
            .with_tag_descendants(options.tag_descendants);
        let spawned = spawner.spawn(request).await?;
        Ok(Self::from_spawned(spawned, options))
    }

    /// Takes over a started CLI: drains its stderr, and stops it as [`CliProcess::shutdown`]
    /// says.
    pub fn from_spawned(spawned: Spawned, options: ProcessOptions) -> CliProcess {
        let Spawned {
            stdin,
            stdout,
            stderr: stderr_pipe,
            child,
            argv,
        } = spawned;
        let stderr = StderrTail::with_capacity(options.stderr_capacity.max(1));
        let stderr_task = stderr_pipe.map(|pipe| {
            let tail = stderr.clone();
            let callback = options.on_stderr_line.clone();
            tokio::spawn(drain_stderr(pipe, tail, callback))
        });
        CliProcess {
            pid: child.id().unwrap_or_default(),
            program: program_of(&argv).to_path_buf(),
            argv,
            child,
            stdin: Some(stdin),
            stdout: Some(stdout),
            stderr,
            stderr_task,
            options,
            status: None,
        }
    }

    /// The process id (also its process group id, for a local CLI); 0 when the spawner gave
    /// none.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// What was run, program first (a wrapper's command line includes the wrapper).
    pub fn argv(&self) -> &[OsString] {
        &self.argv
    }

    /// Takes the write end of its stdin.
    pub fn take_stdin(&mut self) -> Option<CliStdin> {
        self.stdin.take()
    }

    /// Takes the read end of its stdout.
    pub fn take_stdout(&mut self) -> Option<CliOutput> {
        self.stdout.take()
    }

    /// The most recent stderr output.
    pub fn stderr(&self) -> &StderrTail {
        &self.stderr
    }

    /// Its exit status, if it has exited (does not block).
    pub fn try_status(&mut self) -> Option<ExitStatus> {
        if self.status.is_none() {
            self.status = self.child.try_wait().ok().flatten();
        }
        self.status
    }

    /// Waits for it to exit by itself.
    pub async fn wait(&mut self) -> std::io::Result<ExitStatus> {
        if let Some(status) = self.status {
            return Ok(status);
        }
        let status = self.child.wait().await?;
        self.status = Some(status);
        Ok(status)
    }

    /// Stops the process: closes stdin, waits [`ProcessOptions::exit_grace`] for it to exit
    /// (the CLI flushes its session file then), terminates it (SIGTERM to a local process
    /// group), waits [`ProcessOptions::term_grace`], then kills it (SIGKILL). Whatever way it
    /// ends, it is killed once more, so that nothing it started is left behind (the rest of a
    /// local process group, and on Linux every process carrying its tag).
    pub async fn shutdown(self) -> std::io::Result<ExitInfo> {
        self.stop(true).await
    }

    /// Stops the process now: closes stdin and terminates it (SIGTERM to a local process group)
    /// without the exit grace, then kills it (SIGKILL) after [`ProcessOptions::term_grace`].
    /// For a host that is itself being stopped.
    pub async fn terminate(self) -> std::io::Result<ExitInfo> {
        self.stop(false).await
    }

    async fn stop(mut self, grace: bool) -> std::io::Result<ExitInfo> {
        let stopped = if self.try_status().is_some() {
            Stopped::AlreadyExited
        } else {
            self.stdin = None;
            if grace && self.wait_for(self.options.exit_grace).await {
                Stopped::Exited
            } else {
                self.child.terminate();
                if self.wait_for(self.options.term_grace).await {
                    Stopped::Terminated
                } else {
                    self.child.kill();
                    self.wait().await?;
                    Stopped::Killed
                }
            }
        };
        // The leader is gone; anything left in its group is an orphan to be.
        self.child.kill();
        let status = self.wait().await?;
        if let Some(task) = self.stderr_task.take() {
            // The pipe closes when the last holder exits; do not wait on a stray holder.
            let _ = tokio::time::timeout(Duration::from_millis(500), task).await;
        }
        Ok(ExitInfo {
            status,
            stopped,
            stderr_tail: self.stderr.text(),
        })
    }

    async fn wait_for(&mut self, grace: Duration) -> bool {
        matches!(tokio::time::timeout(grace, self.wait()).await, Ok(Ok(_)))
    }

    /// The error for a CLI that closed stdout before writing a line: waits for it to exit and
    /// explains its stderr when byre recognises it.
    pub async fn exited_early(&mut self) -> LaunchError {
        let status = match tokio::time::timeout(self.options.term_grace, self.wait()).await {
            Ok(Ok(status)) => status,
            _ => {
                self.child.kill();
                match self.wait().await {
                    Ok(status) => status,
                    Err(source) => {
                        return LaunchError::Spawn {
                            path: self.program.clone(),
                            source,
                        };
                    }
                }
            }
        };
        if let Some(task) = self.stderr_task.take() {
            let _ = tokio::time::timeout(Duration::from_millis(500), task).await;
        }
        let stderr_tail = self.stderr.text();
        if stderr_tail.contains(ROOT_BYPASS_REFUSAL) {
            return LaunchError::RootBypass {
                status,
                stderr_tail,
            };
        }
        LaunchError::ExitedEarly {
            status,
            hint: exit_hint(&stderr_tail),
            stderr_tail,
        }
    }
}

impl Drop for CliProcess {
    fn drop(&mut self) {
        // For a local child, kill_on_drop kills the leader and tokio reaps it; the group is
        // killed here.
        self.child.kill();
        if let Some(task) = self.stderr_task.take() {
            task.abort();
        }
    }
}

async fn drain_stderr(pipe: CliOutput, tail: StderrTail, callback: Option<StderrCallback>) {
    let mut reader = BufReader::new(pipe);
    // The line being gathered for the callback: cut at STDERR_LINE_LIMIT bytes, so stderr
    // without newlines (progress text separated by `\r`) costs no more than that.
    let mut line = Vec::new();
    let emit = |callback: &StderrCallback, line: &mut Vec<u8>| {
        let text = String::from_utf8_lossy(line);
        callback(text.trim_end_matches(['\n', '\r']));
        line.clear();
    };
    loop {
        let chunk = match reader.fill_buf().await {
            Ok([]) | Err(_) => break,
            Ok(chunk) => chunk,
        };
        tail.push(chunk);
        let read = chunk.len();
        if let Some(callback) = &callback {
            for piece in chunk.split_inclusive(|&b| b == b'\n') {
                let room = STDERR_LINE_LIMIT.saturating_sub(line.len());
                let (now, rest) = piece.split_at(piece.len().min(room));
                line.extend_from_slice(now);
                if line.ends_with(b"\n") || line.len() >= STDERR_LINE_LIMIT {
                    emit(callback, &mut line);
                }
                // What is past the limit starts the next piece of the line.
                for part in rest.chunks(STDERR_LINE_LIMIT) {
                    line.extend_from_slice(part);
                    if line.ends_with(b"\n") || line.len() >= STDERR_LINE_LIMIT {
                        emit(callback, &mut line);
                    }
                }
            }
        }
        reader.consume(read);
    }
    if let (Some(callback), false) = (&callback, line.is_empty()) {
        emit(callback, &mut line);
    }
}

/// The longest stderr line given to [`ProcessOptions::on_stderr_line`]: a longer one (or
/// stderr without newlines) is given in pieces of this many bytes.
pub const STDERR_LINE_LIMIT: usize = 64 * 1024;

/// What the CLI writes on stderr when it refuses `bypassPermissions` as root (it says so in
/// no other way: no exit code or line of its own).
const ROOT_BYPASS_REFUSAL: &str = "cannot be used with root/sudo privileges";

/// Explains a CLI that exited before its first line, from its stderr: for example that
/// `bypassPermissions` is refused as root unless `IS_SANDBOX=1` is set.
pub fn exit_hint(stderr: &str) -> Option<&'static str> {
    if stderr.contains(ROOT_BYPASS_REFUSAL) {
        return Some(
            "the CLI refuses bypassPermissions as root: set IS_SANDBOX=1 in its environment \
             (inside a sandbox) or use another permission mode",
        );
    }
    if stderr.contains("No conversation found with session ID") {
        return Some("the session to resume does not exist (check the id and HOME)");
    }
    if stderr.contains("Invalid API key") || stderr.contains("Please run /login") {
        return Some("the CLI is not logged in: set ANTHROPIC_API_KEY or run `claude /login`");
    }
    None
}
