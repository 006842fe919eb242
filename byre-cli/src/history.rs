//! `byre sessions` and `byre show`: the CLI's own session history (its files under
//! `~/.claude/projects`, or a store's), listed newest first and shown as a conversation.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::SystemTime;

use byre_proto::{CliMessage, EntryKind};
use byre_transport::store::{list_stored, open_store, SessionKey};
use byre_transport::{project_dir_name, SessionHistory, SessionInfo, SessionLog};

use crate::errors::CliError;
use crate::render::one_line;
use crate::replay::View;
use crate::visible::Visible;

/// The history the CLI uses here, or an error saying where it looked.
fn history() -> Result<SessionHistory, CliError> {
    SessionHistory::from_env()
        .ok_or_else(|| CliError::History("neither CLAUDE_CONFIG_DIR nor HOME is set".into()))
}

/// Lists sessions: of `cwd` (default: the current directory), or of every project; only
/// those a person started with `hide_programmatic`.
pub(crate) fn sessions(
    cwd: Option<PathBuf>,
    all: bool,
    limit: Option<usize>,
    hide_programmatic: bool,
) -> Result<ExitCode, CliError> {
    let mut history = history()?;
    if hide_programmatic {
        history = history.without_programmatic();
    }
    let listed = if all {
        history.list_all(0, limit)
    } else {
        let dir = match cwd {
            Some(dir) => dir,
            None => std::env::current_dir().map_err(CliError::CurrentDir)?,
        };
        history.list(&dir, 0, limit)
    };
    print_sessions(&listed)?;
    Ok(ExitCode::SUCCESS)
}

/// Lists the sessions a store holds for a project: `store_project`, else the CLI's name for
/// `cwd` (default: the current directory), as `run --store` keys them.
pub(crate) async fn stored_sessions(
    url: &str,
    store_project: Option<String>,
    cwd: Option<PathBuf>,
    limit: Option<usize>,
) -> Result<ExitCode, CliError> {
    let store = open_store(url).map_err(|e| CliError::Store(e.to_string()))?;
    let project = project_key(store_project, cwd)?;
    let listed = list_stored(&*store, &project, 0, limit)
        .await
        .map_err(|e| CliError::Store(e.to_string()))?;
    print_sessions(&listed)?;
    Ok(ExitCode::SUCCESS)
}

/// The key a project's sessions are stored under: `store_project`, else the CLI's name for
/// `cwd` (default: the current directory), as `run --store` keys them.
fn project_key(store_project: Option<String>, cwd: Option<PathBuf>) -> Result<String, CliError> {
    if let Some(key) = store_project {
        return Ok(key);
    }
    let dir = match cwd {
        Some(dir) => dir,
        None => std::env::current_dir().map_err(CliError::CurrentDir)?,
    };
    Ok(project_dir_name(
        &std::fs::canonicalize(&dir).unwrap_or(dir),
    ))
}

/// One line a session, newest first: id, age, size, label (`[archived]` first when it is).
fn print_sessions(listed: &[SessionInfo]) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    for info in listed {
        let mut label = info.label().map(one_line).unwrap_or_default();
        if info.archived == Some(true) {
            label = format!("[archived] {label}");
        }
        let line = format!(
            "{}  {}  {:>8}  {label}",
            info.session_id,
            ago(info.modified),
            size(info.size)
        );
        writeln!(out, "{}", Visible(line)).map_err(CliError::Stdout)?;
    }
    out.flush().map_err(CliError::Stdout)
}

/// Prints session `id` as a conversation.
pub(crate) fn show(id: &str) -> Result<ExitCode, CliError> {
    let history = history()?;
    let path = history.find(id).ok_or_else(|| {
        CliError::History(format!(
            "no session {id} in {}",
            history.projects_dir().display()
        ))
    })?;
    let log = SessionLog::read(&path)
        .map_err(|e| CliError::History(format!("{}: {e}", path.display())))?;
    print_log(id, &log)?;
    Ok(ExitCode::SUCCESS)
}

/// Prints session `id` of a store as a conversation.
pub(crate) async fn show_stored(
    id: &str,
    url: &str,
    store_project: Option<String>,
) -> Result<ExitCode, CliError> {
    let store = open_store(url).map_err(|e| CliError::Store(e.to_string()))?;
    let project = project_key(store_project, None)?;
    let key = SessionKey::main(project.as_str(), id);
    key.validate()
        .map_err(|e| CliError::History(format!("{id}: {e}")))?;
    let values = store
        .load(&key)
        .await
        .map_err(|e| CliError::Store(e.to_string()))?
        .ok_or_else(|| {
            CliError::History(format!("no session {id} in the store under {project}"))
        })?;
    print_log(id, &SessionLog::from_values(values))?;
    Ok(ExitCode::SUCCESS)
}

/// Prints a session's conversation, as `replay` prints a transcript.
fn print_log(id: &str, log: &SessionLog) -> Result<(), CliError> {
    let mut view = View::default();
    let mut out = std::io::stdout().lock();
    if let Some(first) = log.entries.iter().find(|e| e.kind.is_chain()) {
        let line = format!(
            "session {id} · {} · {}",
            first.cwd.as_deref().unwrap_or("?"),
            first.timestamp.as_deref().unwrap_or("?")
        );
        writeln!(out, "{}", Visible(line)).map_err(CliError::Stdout)?;
    }
    for entry in log.conversation() {
        let lines = if entry.kind == EntryKind::USER && !entry.is_tool_result() {
            let text = entry.text().unwrap_or_default();
            let who = if entry.is_compact_summary == Some(true) {
                "summary"
            } else {
                "you"
            };
            vec![String::new(), format!("{who}: {}", text.trim_end())]
        } else {
            // As the CLI streamed it: the entry's message in a message of its kind.
            let line = serde_json::json!({
                "type": entry.kind.as_str(),
                "message": entry.message,
                "session_id": entry.session_id,
                "parent_tool_use_id": null,
            });
            match CliMessage::from_slice(line.to_string().as_bytes()) {
                Ok(message) => view.received(&message),
                Err(_) => Vec::new(),
            }
        };
        for line in lines {
            writeln!(out, "{}", Visible(line)).map_err(CliError::Stdout)?;
        }
    }
    out.flush().map_err(CliError::Stdout)?;
    if !log.bad_lines.is_empty() {
        eprintln!(
            "byre: {} lines of the session are not entries",
            log.bad_lines.len()
        );
    }
    Ok(())
}

/// How long ago `when` was, shortly (`5m ago`, `3h ago`, `12d ago`).
fn ago(when: SystemTime) -> String {
    let secs = SystemTime::now()
        .duration_since(when)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    match secs {
        0..=59 => format!("{secs}s ago"),
        60..=3599 => format!("{}m ago", secs / 60),
        3600..=86_399 => format!("{}h ago", secs / 3600),
        _ => format!("{}d ago", secs / 86_400),
    }
}

/// A file size, shortly.
fn size(bytes: u64) -> String {
    match bytes {
        0..=1023 => format!("{bytes} B"),
        1024..=1_048_575 => format!("{:.1} KiB", bytes as f64 / 1024.0),
        _ => format!("{:.1} MiB", bytes as f64 / 1_048_576.0),
    }
}
