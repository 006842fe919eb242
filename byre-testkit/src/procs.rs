//! Whether a process is still running, what it descends from, which session it leads and what
//! its environment holds, for tests that check nothing is left behind; Linux `/proc`.

use std::time::{Duration, Instant};

/// Whether the process `pid` is alive (a zombie counts as gone); Linux `/proc`.
pub fn process_alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        let state = stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .split_whitespace()
            .next();
        !matches!(state, Some("Z") | Some("X"))
    })
}

/// Waits up to `within` for the process `pid` to be gone; whether it went.
pub async fn process_gone(pid: u32, within: Duration) -> bool {
    let deadline = Instant::now() + within;
    loop {
        if !process_alive(pid) {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Every living descendant of `pid` (children, their children, ...), with its command line
/// (arguments joined by spaces); Linux `/proc`.
pub fn descendants(pid: u32) -> Vec<(u32, String)> {
    let mut parents = std::collections::HashMap::<u32, Vec<u32>>::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    for entry in dir.flatten() {
        let Some(child) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{child}/stat")) else {
            continue;
        };
        // After the command name's closing parenthesis: state, then the parent's pid.
        let mut fields = stat.rsplit(')').next().unwrap_or("").split_whitespace();
        let (Some(_), Some(Ok(parent))) = (fields.next(), fields.next().map(str::parse::<u32>))
        else {
            continue;
        };
        parents.entry(parent).or_default().push(child);
    }
    let mut found = Vec::new();
    let mut next = vec![pid];
    while let Some(parent) = next.pop() {
        for &child in parents.get(&parent).into_iter().flatten() {
            if process_alive(child) {
                let cmdline = std::fs::read(format!("/proc/{child}/cmdline")).unwrap_or_default();
                let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
                found.push((child, text.trim_end().to_owned()));
            }
            next.push(child);
        }
    }
    found
}

/// The session of the process `pid` (the pid of the process that called `setsid`), if it runs;
/// Linux `/proc`.
pub fn session_id(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // After the command name: state, parent, process group, session.
    stat.rsplit(')')
        .next()?
        .split_whitespace()
        .nth(3)?
        .parse()
        .ok()
}

/// The value of the variable `name` in the environment of the process `pid` (as it started, or
/// as it changed it in place), if it can be read; Linux `/proc`.
pub fn environment_var(pid: u32, name: &str) -> Option<String> {
    let environ = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
    environ.split(|&b| b == 0).find_map(|entry| {
        let value = entry.strip_prefix(name.as_bytes())?.strip_prefix(b"=")?;
        Some(String::from_utf8_lossy(value).into_owned())
    })
}

/// Every living process whose environment holds `name=value` (those this user may read);
/// Linux `/proc`.
pub fn processes_with(name: &str, value: &str) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| environment_var(pid, name).is_some_and(|v| v == value) && process_alive(pid))
        .collect()
}
