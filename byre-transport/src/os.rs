//! The operating system's side of a process: signalling a process group, and sizing a pipe.

use tokio::process::ChildStdout;

/// A signal byre sends to the CLI's process group.
#[derive(Clone, Copy)]
pub(crate) enum Signal {
    Term,
    Kill,
}

/// Sends `signal` to the process group `pgid` (nothing for 0).
#[cfg(unix)]
pub(crate) fn signal_group(pgid: u32, signal: Signal) {
    use nix::sys::signal::{killpg, Signal as S};
    use nix::unistd::Pid;
    if pgid == 0 {
        return;
    }
    let signal = match signal {
        Signal::Term => S::SIGTERM,
        Signal::Kill => S::SIGKILL,
    };
    if let Ok(pgid) = i32::try_from(pgid) {
        // ESRCH (no such group) means everything already exited.
        let _ = killpg(Pid::from_raw(pgid), signal);
    }
}

#[cfg(not(unix))]
pub(crate) fn signal_group(_pgid: u32, _signal: Signal) {}

/// Asks the kernel to resize the pipe to `size` bytes, capped at what an unprivileged user may
/// ask for. Where it refuses, the pipe keeps its size: a smaller pipe is slower, not wrong.
#[cfg(target_os = "linux")]
pub(crate) fn resize_pipe(pipe: &ChildStdout, size: usize) {
    use nix::fcntl::{fcntl, FcntlArg};
    use std::os::fd::AsRawFd;
    // Read once: it is a system setting.
    static MAX: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    let max = *MAX.get_or_init(|| {
        std::fs::read_to_string("/proc/sys/fs/pipe-max-size")
            .ok()
            .and_then(|text| text.trim().parse::<usize>().ok())
            .unwrap_or(1 << 20)
    });
    let size = i32::try_from(size.min(max)).unwrap_or(i32::MAX);
    let _ = fcntl(pipe.as_raw_fd(), FcntlArg::F_SETPIPE_SZ(size));
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn resize_pipe(_: &ChildStdout, _: usize) {}
