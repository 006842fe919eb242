//! The worktrees of a git repository, which the CLI's session picker lists together.

use std::io::Read;
use std::path::{Path, PathBuf};

/// The worktrees of the git repository at `cwd` (`git worktree list --porcelain`), the main
/// one first; empty outside a repository, where `git` is missing, or when it takes longer than
/// [`GIT_TIMEOUT`].
pub fn worktrees(cwd: &Path) -> Vec<PathBuf> {
    let child = std::process::Command::new("git")
        .args(["worktree", "list", "--porcelain"])
        .current_dir(cwd)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn();
    let Ok(mut child) = child else {
        return Vec::new();
    };
    // Read on a thread of its own, so that a long listing cannot block git on a full pipe.
    let stdout = child.stdout.take();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(mut out) = stdout {
            let _ = out.read_to_string(&mut text);
        }
        text
    });
    let started = std::time::Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if started.elapsed() < GIT_TIMEOUT => {
                std::thread::sleep(std::time::Duration::from_millis(5))
            }
            _ => break None,
        }
    };
    if status.is_none_or(|s| !s.success()) {
        let _ = child.kill();
        let _ = child.wait();
        return Vec::new();
    }
    let text = reader.join().unwrap_or_default();
    parse_worktrees(&text)
}

/// How long [`worktrees`] waits for `git`.
pub const GIT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// The paths of `git worktree list --porcelain` output (one `worktree <path>` line each).
fn parse_worktrees(text: &str) -> Vec<PathBuf> {
    text.lines()
        .filter_map(|line| line.strip_prefix("worktree "))
        .filter(|path| !path.is_empty())
        .map(PathBuf::from)
        .collect()
}
