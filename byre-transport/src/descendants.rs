//! The processes a local CLI started that left its process group (a daemon that called
//! `setsid`, a dev server started in the background): each local CLI gets a random tag in its
//! environment, which every descendant that keeps its environment inherits, and on Linux
//! stopping the CLI ends every process found in `/proc` with that tag, and the process group
//! each of them leads.
//!
//! Elsewhere there is no `/proc` to search: the tag is not set, and stopping the CLI ends its
//! process group only.

use crate::os::Signal;

/// The environment variable that tags every process a local CLI started (Linux): a random
/// value per CLI, inherited by whatever keeps its environment. Stopping the CLI ends every
/// process that carries its value, wherever it moved (another process group or session).
///
/// A process meant to outlive the session can leave it by starting without the variable, in
/// a session of its own: `env -u BYRE_PROCESS_TAG setsid server`.
pub const PROCESS_TAG_VAR: &str = "BYRE_PROCESS_TAG";

/// The tag of one CLI: its value, 122 random bits that no process but the CLI's descendants
/// carries, and where their pids lie.
// Where there is no `/proc`, where the pids lie is of no use.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub(crate) struct Tag {
    value: String,
    /// The CLI's pid (0 until it started).
    pid: u32,
    /// How many processes and threads the kernel had started when the CLI was about to start.
    forks: Option<u64>,
}

impl Tag {
    /// A new tag, for a CLI about to start.
    pub(crate) fn new() -> Tag {
        Tag {
            value: crate::sessions::new_uuid(),
            pid: 0,
            forks: forks(),
        }
    }

    /// The same tag, for the CLI that started as `pid`.
    pub(crate) fn started(self, pid: u32) -> Tag {
        Tag { pid, ..self }
    }

    /// Its value.
    pub(crate) fn value(&self) -> &str {
        &self.value
    }
}

/// Sends `signal` to every process that carries `tag` in [`PROCESS_TAG_VAR`] (but this one),
/// and to the process group each of them leads, so that the members of a daemon's group that
/// dropped the tag go too. With SIGKILL it looks again until a look finds no process it has not
/// signalled yet (one that forked while it looked), at most [`SWEEP_ROUNDS`] times; SIGTERM
/// leaves them running, so one look is enough (the SIGKILL that follows looks again). A
/// process whose environment cannot be read (another user's) is skipped. How many processes
/// it signalled.
///
/// Each look reads the environment of every process started since the CLI (their pids were
/// allocated after its own), or of every process when the pids may have wrapped around since
/// (more new processes and threads than half of `pid_max`): 4 to 10 µs a process on the
/// two-core test machine, up to 25 µs when it is busy.
#[cfg(target_os = "linux")]
pub(crate) fn sweep(tag: &Tag, signal: Signal) -> usize {
    use std::collections::HashSet;

    let needle = format!("\0{PROCESS_TAG_VAR}={}\0", tag.value);
    let finder = memchr::memmem::Finder::new(needle.as_bytes());
    let me = std::process::id();
    let mut signalled = HashSet::new();
    let mut buf = Vec::new();
    let rounds = match signal {
        Signal::Term => 1,
        Signal::Kill => SWEEP_ROUNDS,
    };
    for _ in 0..rounds {
        let Ok(dir) = std::fs::read_dir("/proc") else {
            break;
        };
        let since = tag.since();
        let mut new = 0;
        for entry in dir.flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            if pid == me
                || since.is_some_and(|since| !since.contains(pid))
                || signalled.contains(&pid)
                || !carries(pid, &finder, &mut buf)
            {
                continue;
            }
            if linux::signal_tagged(pid, signal, || carries(pid, &finder, &mut buf)) {
                signalled.insert(pid);
                new += 1;
            }
        }
        if new == 0 {
            break;
        }
    }
    signalled.len()
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn sweep(_tag: &Tag, _signal: Signal) -> usize {
    0
}

/// The pids allocated from `from` to `to`, the allocation having wrapped around to the lowest
/// pids at most once in between.
#[cfg(any(target_os = "linux", test))]
#[derive(Debug, Clone, Copy)]
struct Pids {
    from: u32,
    to: u32,
}

#[cfg(any(target_os = "linux", test))]
impl Pids {
    fn contains(self, pid: u32) -> bool {
        match self.from <= self.to {
            true => (self.from..=self.to).contains(&pid),
            false => pid >= self.from || pid <= self.to,
        }
    }
}

#[cfg(target_os = "linux")]
impl Tag {
    /// The pids allocated since the CLI's own, which every process it started has; `None`
    /// when that cannot be told (the pids may have wrapped around past it since, or `/proc`
    /// shows another pid namespace than this process's), and every pid is a candidate.
    fn since(&self) -> Option<Pids> {
        let before = self.forks?;
        if self.pid == 0 || !same_pid_namespace() {
            return None;
        }
        let max: u64 = read_proc("/proc/sys/kernel/pid_max")?.trim().parse().ok()?;
        // More starts than pids between the two would bring the allocation round again: half
        // of them leaves room for pids the kernel skipped as taken.
        if forks()?.saturating_sub(before) >= max / 2 {
            return None;
        }
        // `/proc/loadavg` ends with the last pid allocated in this process's pid namespace.
        let loadavg = read_proc("/proc/loadavg")?;
        let last = loadavg.split_whitespace().last()?.parse().ok()?;
        Some(Pids {
            from: self.pid,
            to: last,
        })
    }
}

/// How many processes and threads the kernel has started since it booted (`processes` in
/// `/proc/stat`, for every pid namespace).
#[cfg(target_os = "linux")]
fn forks() -> Option<u64> {
    read_proc("/proc/stat")?
        .lines()
        .find_map(|line| line.strip_prefix("processes ")?.trim().parse().ok())
}

#[cfg(not(target_os = "linux"))]
fn forks() -> Option<u64> {
    None
}

/// Whether `/proc` numbers processes as this process sees them (it may be another pid
/// namespace's, in a container).
#[cfg(target_os = "linux")]
fn same_pid_namespace() -> bool {
    static SAME: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *SAME.get_or_init(|| {
        std::fs::read_link("/proc/self")
            .is_ok_and(|link| link.to_str() == Some(&std::process::id().to_string()))
    })
}

#[cfg(target_os = "linux")]
fn read_proc(path: &str) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// Whether the environment of `pid` holds the entry `finder` looks for.
#[cfg(target_os = "linux")]
fn carries(pid: u32, finder: &memchr::memmem::Finder<'_>, buf: &mut Vec<u8>) -> bool {
    std::fs::File::open(format!("/proc/{pid}/environ")).is_ok_and(|file| holds(file, finder, buf))
}

/// Whether the NUL-separated entries `reader` gives hold the one `finder` looks for (with a NUL
/// on each side): read in pieces, so a huge environment costs no more memory than a piece and
/// the entry's length (`buf`, reused).
#[cfg(any(target_os = "linux", test))]
fn holds(
    mut reader: impl std::io::Read,
    finder: &memchr::memmem::Finder<'_>,
    buf: &mut Vec<u8>,
) -> bool {
    let keep = finder.needle().len().saturating_sub(1);
    let mut piece = [0u8; 4096];
    buf.clear();
    // The first entry has no NUL before it.
    buf.push(0);
    loop {
        match reader.read(&mut piece) {
            Ok(0) => break,
            Ok(n) => buf.extend_from_slice(&piece[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            // Gone, or not ours to read.
            Err(_) => return false,
        }
        if finder.find(buf).is_some() {
            return true;
        }
        // What may still begin the entry, for the next piece.
        let cut = buf.len().saturating_sub(keep);
        buf.drain(..cut);
    }
    // The last entry may lack its NUL.
    buf.push(0);
    finder.find(buf).is_some()
}

#[cfg(target_os = "linux")]
mod linux {
    use rustix::io::Errno;
    use rustix::process::{
        getpgid, kill_process, kill_process_group, pidfd_open, pidfd_send_signal, Pid, PidfdFlags,
        Signal as S,
    };

    use crate::os::Signal;

    /// Signals `pid`, which carried the tag a moment ago, and the process group it leads,
    /// if `still_tagged` says it still carries the tag once a handle on it is held. Through a
    /// pidfd the signals reach the process that was checked and no other, even if `pid` is
    /// reused meanwhile; and it is stopped (SIGSTOP) while its group is looked up and
    /// signalled, so that it cannot end and leave its pid, and so the id of its group, to
    /// another process in between. Whether it was signalled.
    pub(super) fn signal_tagged(
        pid: u32,
        signal: Signal,
        still_tagged: impl FnOnce() -> bool,
    ) -> bool {
        let Some(target) = i32::try_from(pid).ok().and_then(Pid::from_raw) else {
            return false;
        };
        let handle = match pidfd_open(target, PidfdFlags::empty()) {
            Ok(fd) => Some(fd),
            Err(Errno::SRCH) => return false,
            // Before Linux 5.3, or out of descriptors: by pid, as `kill` does; `pid` would
            // have to be reused between the check and the signal to reach another process.
            Err(_) => None,
        };
        let send = |signal: S| match &handle {
            Some(fd) => pidfd_send_signal(fd, signal),
            None => kill_process(target, signal),
        };
        // Alive when stopped, so alive when checked: the check read its environment.
        if !still_tagged() || send(S::STOP).is_err() {
            return false;
        }
        let signal = match signal {
            Signal::Term => S::TERM,
            Signal::Kill => S::KILL,
        };
        // While it is stopped, a group with its pid as id can only be the one it leads.
        let group = getpgid(Some(target)).is_ok_and(|group| group == target)
            && kill_process_group(target, signal).is_ok();
        // Failing, it is gone already (a stopped process ends by SIGKILL only).
        let sent = send(signal).is_ok() || group;
        if signal != S::KILL {
            // SIGTERM waits for SIGCONT to be handled; ESRCH: it ended anyway.
            let _ = send(S::CONT);
        }
        sent
    }
}

/// The most times [`sweep`] looks through `/proc`: enough for descendants that fork while it
/// looks, bounded for one that forks faster than it can be found.
#[cfg(target_os = "linux")]
const SWEEP_ROUNDS: usize = 8;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pids_since_wrap_around_at_most_once() {
        let plain = Pids { from: 100, to: 200 };
        assert!(plain.contains(100) && plain.contains(150) && plain.contains(200));
        assert!(!plain.contains(99) && !plain.contains(201) && !plain.contains(5));
        let wrapped = Pids {
            from: 32000,
            to: 400,
        };
        assert!(wrapped.contains(32000) && wrapped.contains(32767));
        assert!(wrapped.contains(1) && wrapped.contains(300) && wrapped.contains(400));
        assert!(!wrapped.contains(401) && !wrapped.contains(31999));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_tag_knows_the_pids_started_since() {
        let tag = Tag::new().started(std::process::id());
        let since = tag.since().expect("the pids since this process started");
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let later = tag.since().unwrap();
        assert!(later.contains(child.id()), "{later:?} {}", child.id());
        assert!(since.contains(std::process::id()));
        child.wait().unwrap();
        // Too many starts since for the pids to tell.
        let old = Tag {
            forks: Some(0),
            ..Tag::new().started(std::process::id())
        };
        let max: u64 = read_proc("/proc/sys/kernel/pid_max")
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert_eq!(
            old.since().map(|_| ()),
            (forks().unwrap() < max / 2).then_some(()),
        );
    }

    fn found(environ: &[u8], tag: &str) -> bool {
        let needle = format!("\0{PROCESS_TAG_VAR}={tag}\0");
        let finder = memchr::memmem::Finder::new(needle.as_bytes());
        holds(environ, &finder, &mut Vec::new())
    }

    #[test]
    fn only_the_whole_entry_counts() {
        let tag = "0123abcd";
        let entry = format!("{PROCESS_TAG_VAR}={tag}");
        assert!(
            found(format!("{entry}\0").as_bytes(), tag),
            "first and only"
        );
        assert!(
            found(format!("A=1\0{entry}\0B=2\0").as_bytes(), tag),
            "between"
        );
        assert!(
            found(format!("A=1\0{entry}").as_bytes(), tag),
            "last, no NUL"
        );
        for near in [
            format!("X{entry}\0"),
            format!("{entry}9\0"),
            format!("A={entry}\0"),
            format!("{PROCESS_TAG_VAR}=0123abc\0"),
            String::new(),
        ] {
            assert!(!found(near.as_bytes(), tag), "{near:?}");
        }
    }

    #[test]
    fn an_entry_across_pieces_is_found() {
        let tag = "0123abcd";
        let entry = format!("{PROCESS_TAG_VAR}={tag}");
        // The entry starts at every offset around the end of the first 4096-byte piece, and
        // lies after several pieces of other entries.
        for start in 4080..4100 {
            let mut environ = vec![b'a'; start - 1];
            environ[0..2].copy_from_slice(b"A=");
            environ.push(0);
            environ.extend_from_slice(entry.as_bytes());
            environ.push(0);
            assert!(found(&environ, tag), "at {start}");
            environ.truncate(start);
            environ.extend_from_slice(format!("{entry}x\0").as_bytes());
            assert!(!found(&environ, tag), "a longer value at {start}");
        }
        let mut environ = Vec::new();
        for i in 0..5000 {
            environ.extend_from_slice(format!("V{i}=value\0").as_bytes());
        }
        environ.extend_from_slice(format!("{entry}\0").as_bytes());
        assert!(found(&environ, tag));
    }
}
