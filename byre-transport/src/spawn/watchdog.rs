//! The host's watchdog: one small `/bin/sh` process for the whole host process, started with
//! its first local CLI, that ends the process group of every local CLI still registered (and,
//! on Linux, every process carrying one of their tags) when the host dies, however it dies,
//! SIGKILL included, and removes the folders they were given.
//!
//! The host writes a line to the watchdog's input for each CLI it starts (`+ GROUP TAG
//! FOLDERS...`) and one when that CLI's group is gone (`- GROUP`). The input's write end is the
//! host's alone (close-on-exec, so no CLI inherits it): its end is the host's end. The
//! watchdog leads a process group of its own, so a signal to the host's group does not reach
//! it, and ignores SIGTERM, SIGINT and SIGHUP. Should it die (someone killed it), the next
//! registration starts another one and hands it every live registration.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Mutex, MutexGuard};

/// What the watchdog runs. It keeps each registered group as a variable `w_GROUP`: the start
/// time of its leader (the CLI) from `/proc` (`-` where there is none), its tag (or `-`), and
/// its folders (each byte outside a safe set written `\0ooo`); it unsets it when told the group
/// is gone. At the end of its input it ends every group still registered whose leader is still
/// the CLI that started it (the same start time: a pid the kernel gave to another process is
/// left alone), and every process whose environment holds one of their tags (and the group
/// each of those leads): SIGTERM, the folders removed; two seconds later SIGKILL, looking again
/// while a look finds a process it has not signalled yet (at most 8 times, as `sweep` in
/// `descendants.rs` does), the folders removed again. With nothing registered it exits at once.
#[cfg(unix)]
const SCRIPT: &str = concat!(
    "trap '' TERM INT HUP\n",
    "while read -r op g w; do\n",
    "  case $op$g in\n",
    "    +*[!0-9]* | -*[!0-9]*) ;;\n",
    "    +?*) eval \"w_$g=\\$w\" ;;\n",
    "    -?*) unset \"w_$g\" ;;\n",
    "  esac\n",
    "done\n",
    "live=$(set | while IFS='=' read -r name _; do\n",
    "  case $name in w_[0-9]*) echo \"${name#w_}\" ;; esac\n",
    "done)\n",
    "[ -n \"$live\" ] || exit 0\n",
    "groups= pats= folders=\n",
    "for g in $live; do\n",
    "  eval \"set -- \\$w_$g\"\n",
    "  s=$1 t=$2; shift 2\n",
    "  folders=\"$folders $*\"\n",
    "  [ \"$t\" = - ] || pats=\"$pats${pats:+\n}BYRE_PROCESS_TAG=$t\"\n",
    // The leader's start time is the 22nd field of its stat line, the 20th after the name.
    "  if [ \"$s\" != - ]; then\n",
    "    l=; read -r l </proc/\"$g\"/stat 2>/dev/null\n",
    "    set -- ${l##*) }\n",
    "    [ \"${20}\" = \"$s\" ] || continue\n",
    "  fi\n",
    "  groups=\"$groups $g\"\n",
    "done\n",
    "seen=\n",
    "sweep() {\n",
    "  [ -n \"$pats\" ] || return 1\n",
    // grep fails for a process that ended since the list was made, so its status says little.
    "  found=$(grep -lszxF -e \"$pats\" /proc/[0-9]*/environ)\n",
    "  new=1\n",
    "  for f in $found; do\n",
    "    p=${f#/proc/}; p=${p%/environ}\n",
    "    kill -\"$1\" -\"$p\" \"$p\" 2>/dev/null\n",
    "    case \" $seen \" in *\" $p \"*) ;; *) seen=\"$seen $p\"; new=0 ;; esac\n",
    "  done\n",
    "  return $new\n",
    "}\n",
    "remove() {\n",
    "  for e in $folders; do d=$(printf '%bx' \"$e\"); rm -rf -- \"${d%x}\"; done\n",
    "}\n",
    "for g in $groups; do kill -TERM -\"$g\" 2>/dev/null; done\n",
    "sweep TERM\n",
    "remove\n",
    "sleep 2\n",
    "seen=; n=0; while [ $n -lt 8 ] && sweep KILL; do n=$((n + 1)); done\n",
    "for g in $groups; do kill -KILL -\"$g\" 2>/dev/null; done\n",
    "remove\n",
);

/// A local CLI's group, registered with the host's watchdog until this is dropped (when byre
/// has ended the group).
#[derive(Debug)]
pub(crate) struct Watched {
    pgid: u32,
}

impl Drop for Watched {
    fn drop(&mut self) {
        let mut host = lock();
        host.lines.remove(&self.pgid);
        let line = format!("- {}\n", self.pgid);
        if let Some(running) = host.running.as_mut() {
            if running.input.write_all(line.as_bytes()).is_err() {
                // It is gone; the next registration starts another one.
                host.running = None;
            }
        }
    }
}

/// What the host told its watchdog, and the watchdog if it runs.
struct Host {
    running: Option<Running>,
    /// Each live registration's line, for a new watchdog should the running one die.
    lines: BTreeMap<u32, String>,
}

/// A running watchdog.
struct Running {
    /// `None` once let go (a test's).
    child: Option<Child>,
    input: ChildStdin,
}

impl Drop for Running {
    fn drop(&mut self) {
        // Only a watchdog that failed is dropped (the host's runs as long as the process): it
        // is ended and reaped, so it leaves no zombie. Either fails only if it is gone already.
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

static HOST: Mutex<Host> = Mutex::new(Host {
    running: None,
    lines: BTreeMap::new(),
});

fn lock() -> MutexGuard<'static, Host> {
    // A panic while holding it leaves the registrations as they were between two whole steps.
    HOST.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Registers the process group `pgid` (a local CLI's), with its `tag` and the folders to
/// remove, with the host's watchdog, starting the watchdog first if it is not running. `None`
/// where it cannot start (no `/bin/sh`): the CLI then runs without one.
#[cfg(unix)]
pub(crate) fn watch(pgid: u32, tag: Option<&str>, removes: &[PathBuf]) -> Option<Watched> {
    if pgid == 0 {
        return None;
    }
    let started = start_time(pgid);
    let mut line = format!(
        "+ {pgid} {} {}",
        started.as_deref().unwrap_or("-"),
        tag.unwrap_or("-")
    );
    for path in removes {
        line.push(' ');
        encode(path.as_os_str(), &mut line);
    }
    line.push('\n');
    let mut host = lock();
    // Two tries: a watchdog that has died is replaced once.
    for _ in 0..2 {
        if host.running.is_none() {
            host.running = Some(start(host.lines.values())?);
        }
        let running = host.running.as_mut()?;
        if running.input.write_all(line.as_bytes()).is_ok() {
            host.lines.insert(pgid, line);
            return Some(Watched { pgid });
        }
        host.running = None;
    }
    None
}

#[cfg(not(unix))]
pub(crate) fn watch(_pgid: u32, _tag: Option<&str>, _removes: &[PathBuf]) -> Option<Watched> {
    None
}

/// Starts a watchdog and tells it `lines` (the registrations still live).
#[cfg(unix)]
fn start<'a>(lines: impl Iterator<Item = &'a String>) -> Option<Running> {
    use std::os::unix::process::CommandExt;
    let mut child = Command::new("/bin/sh")
        .args(["-c", SCRIPT, "byre-watchdog"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        // A group of its own: a signal to the host's group does not reach it.
        .process_group(0)
        .spawn()
        .ok()?;
    let input = child.stdin.take()?;
    let mut running = Running {
        child: Some(child),
        input,
    };
    for line in lines {
        running.input.write_all(line.as_bytes()).ok()?;
    }
    Some(running)
}

/// The start time of process `pid` (the 22nd field of its `/proc` stat line), which tells it
/// from a later process given the same pid.
#[cfg(target_os = "linux")]
fn start_time(pid: u32) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The name (second field) may hold spaces and parentheses; the fields after it do not.
    let after = &stat[stat.rfind(')')? + 1..];
    let field = after.split_whitespace().nth(19)?;
    field
        .bytes()
        .all(|b| b.is_ascii_digit())
        .then(|| field.to_owned())
}

#[cfg(all(unix, not(target_os = "linux")))]
fn start_time(_pid: u32) -> Option<String> {
    None
}

/// Writes `path` for the script: bytes outside a safe set as `\0ooo`, which `printf %b` reads
/// back (no space, newline or quote reaches the shell's word splitting).
#[cfg(unix)]
fn encode(path: &std::ffi::OsStr, out: &mut String) {
    use std::os::unix::ffi::OsStrExt;
    for &b in path.as_bytes() {
        if b.is_ascii_alphanumeric() || b"/._-+,:@%=".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("\\0{b:03o}"));
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    /// A process in a group of its own, as a CLI runs.
    fn grouped_sleep() -> Child {
        use std::os::unix::process::CommandExt;
        Command::new("sleep")
            .arg("60")
            .process_group(0)
            .spawn()
            .expect("sleep starts")
    }

    /// Whether `child` ends within `secs` seconds.
    fn ends_within(child: &mut Child, secs: u64) -> bool {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
        while std::time::Instant::now() < deadline {
            if child.try_wait().expect("try_wait").is_some() {
                return true;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        false
    }

    /// At the end of its input the script ends the groups still registered whose leader is the
    /// process registered (its start time), removes their folders (a name with a space and a
    /// newline included), and leaves alone a group forgotten and one whose leader's start time
    /// is another's (a pid the kernel gave to another process).
    #[cfg(target_os = "linux")]
    #[test]
    fn the_script_ends_the_registered_groups_and_no_other() {
        let dir = tempfile::tempdir().expect("a folder");
        let folder = dir.path().join("scratch a\nb");
        std::fs::create_dir(&folder).expect("the folder");
        let (mut ours, mut forgotten, mut reused) =
            (grouped_sleep(), grouped_sleep(), grouped_sleep());
        let mut watchdog = start(std::iter::empty()).expect("the watchdog starts");
        let mut line = |pid: u32, started: &str, removes: &[PathBuf]| {
            let mut line = format!("+ {pid} {started} -");
            for path in removes {
                line.push(' ');
                encode(path.as_os_str(), &mut line);
            }
            line.push('\n');
            watchdog
                .input
                .write_all(line.as_bytes())
                .expect("registered");
        };
        let start_of = |child: &Child| start_time(child.id()).expect("a start time");
        line(ours.id(), &start_of(&ours), std::slice::from_ref(&folder));
        line(forgotten.id(), &start_of(&forgotten), &[]);
        line(reused.id(), "1", &[]);
        let forget = format!("- {}\n", forgotten.id());
        watchdog
            .input
            .write_all(forget.as_bytes())
            .expect("forgotten");
        // The host's end: its input closes (the watchdog itself is let go, not killed).
        let mut child = watchdog.child.take().expect("the watchdog");
        drop(watchdog);
        assert!(ends_within(&mut ours, 10), "a registered group ends");
        assert!(!folder.exists(), "its folder is removed");
        assert!(ends_within(&mut child, 10), "the watchdog exits after");
        assert!(!ends_within(&mut forgotten, 0), "a forgotten group runs on");
        assert!(
            !ends_within(&mut reused, 0),
            "another process's group runs on"
        );
        for mut other in [forgotten, reused] {
            other.kill().expect("kill");
            other.wait().expect("reaped");
        }
    }

    #[test]
    fn a_path_is_written_without_anything_the_shell_splits_on() {
        let mut out = String::new();
        encode(std::ffi::OsStr::new("/tmp/a b\n'c\\"), &mut out);
        assert_eq!(out, r"/tmp/a\0040b\0012\0047c\0134");
    }
}
