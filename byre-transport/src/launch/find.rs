//! Finding the CLI (a named path, `BYRE_CLAUDE_BIN`, `PATH`, the usual install places) and
//! asking it its version.

use std::path::{Path, PathBuf};

use byre_proto::CliVersion;

use super::{LaunchError, CLAUDE_BIN_VAR};

/// Where [`find_claude`] looked, in order.
pub fn search_locations(explicit: Option<&Path>) -> Vec<PathBuf> {
    let mut places = Vec::new();
    if let Some(path) = explicit {
        places.push(path.to_path_buf());
        return places;
    }
    if let Some(path) = std::env::var_os(CLAUDE_BIN_VAR).filter(|p| !p.is_empty()) {
        places.push(PathBuf::from(path));
        return places;
    }
    if let Some(path) = std::env::var_os("PATH") {
        places.extend(std::env::split_paths(&path).map(|dir| dir.join("claude")));
    }
    if let Some(home) = std::env::var_os("HOME").map(PathBuf::from) {
        for rel in [
            ".npm-global/bin/claude",
            ".local/bin/claude",
            "node_modules/.bin/claude",
            ".yarn/bin/claude",
            ".claude/local/claude",
        ] {
            places.push(home.join(rel));
        }
    }
    places.push(PathBuf::from("/usr/local/bin/claude"));
    places
}

/// Finds the CLI: `explicit`, else `BYRE_CLAUDE_BIN`, else `claude` on `PATH`, else the usual
/// install locations.
pub fn find_claude(explicit: Option<&Path>) -> Result<PathBuf, LaunchError> {
    let places = search_locations(explicit);
    let pinned =
        explicit.is_some() || std::env::var_os(CLAUDE_BIN_VAR).is_some_and(|p| !p.is_empty());
    for place in &places {
        if place.is_file() {
            return if is_executable(place) {
                Ok(place.clone())
            } else {
                Err(LaunchError::NotExecutable {
                    path: place.clone(),
                })
            };
        }
        if pinned {
            break;
        }
    }
    Err(LaunchError::NotFound { looked: places })
}

#[cfg(unix)]
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(path: &Path) -> bool {
    path.is_file()
}

/// Runs `claude --version` and parses it.
pub fn cli_version(program: &Path) -> Result<CliVersion, LaunchError> {
    let output = std::process::Command::new(program)
        .arg("--version")
        .env_remove("CLAUDECODE")
        .output()
        .map_err(|source| LaunchError::Spawn {
            path: program.to_path_buf(),
            source,
        })?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        return Err(LaunchError::Version {
            path: program.to_path_buf(),
            reason: format!(
                "{}: {}",
                output.status,
                String::from_utf8_lossy(&output.stderr).trim()
            ),
        });
    }
    CliVersion::parse(&stdout).ok_or_else(|| LaunchError::Version {
        path: program.to_path_buf(),
        reason: format!("unexpected output {:?}", stdout.trim()),
    })
}
