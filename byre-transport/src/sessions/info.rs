//! What a picker shows of a session ([`SessionInfo`]): from a session file's first and last
//! 64 KiB, or from a session's entries read whole (one in a store).

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use byre_proto::{EntryKind, SessionEntry};

/// How much of each end of a file listing reads (a session's metadata sits at its ends).
const LIST_WINDOW: u64 = 64 * 1024;

/// One session, as a picker lists it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SessionInfo {
    /// Its id (the file's name).
    pub session_id: String,
    /// Its file; `None` for a session in a store.
    pub path: Option<PathBuf>,
    /// The title the user gave it, else the one the CLI made.
    pub title: Option<String>,
    /// The first thing the user typed (at most 200 characters).
    pub first_prompt: Option<String>,
    /// The last prompt, else the CLI's summary.
    pub last_prompt: Option<String>,
    /// Its tag, if it has one.
    pub tag: Option<String>,
    /// The working directory it ran in.
    pub cwd: Option<String>,
    /// Its git branch.
    pub git_branch: Option<String>,
    /// When its first entry was written (ISO 8601).
    pub created: Option<String>,
    /// When it last changed (the file's time, or the store's).
    pub modified: SystemTime,
    /// Its size in bytes (as JSONL, for a session in a store).
    pub size: u64,
}

impl SessionInfo {
    /// What to show for it: the title, else the last prompt, else the first one.
    pub fn label(&self) -> Option<&str> {
        self.title
            .as_deref()
            .or(self.last_prompt.as_deref())
            .or(self.first_prompt.as_deref())
    }

    /// What a picker shows of a session whose entries are all at hand; `None` when none
    /// belongs to its main chain (a subagent's side chain).
    pub fn from_entries(
        session_id: impl Into<String>,
        entries: &[SessionEntry],
        modified: SystemTime,
        size: u64,
    ) -> Option<SessionInfo> {
        summarize(session_id.into(), None, entries, &[], modified, size)
    }
}

/// What a picker shows of the session file at `path`, read from its first and last 64 KiB;
/// `None` for an empty file, or one that is only a subagent's side chain.
pub fn session_info(path: &Path) -> io::Result<Option<SessionInfo>> {
    let meta = std::fs::metadata(path)?;
    let size = meta.len();
    if size == 0 {
        return Ok(None);
    }
    let session_id = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut file = File::open(path)?;
    let head = read_window(&mut file, 0, LIST_WINDOW.min(size))?;
    let tail_start = size.saturating_sub(LIST_WINDOW);
    let tail = if tail_start == 0 {
        Vec::new()
    } else {
        read_window(&mut file, tail_start, size - tail_start)?
    };
    Ok(summarize(
        session_id,
        Some(path.to_path_buf()),
        &entries_in(&head, false),
        &entries_in(&tail, tail_start > 0),
        meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
        size,
    ))
}

/// What a picker shows, from the entries at the start of a session (`head`) and at its end
/// (`tail`, empty when `head` is all of it).
fn summarize(
    session_id: String,
    path: Option<PathBuf>,
    head: &[SessionEntry],
    tail: &[SessionEntry],
    modified: SystemTime,
    size: u64,
) -> Option<SessionInfo> {
    let mut info = SessionInfo {
        session_id,
        path,
        title: None,
        first_prompt: None,
        last_prompt: None,
        tag: None,
        cwd: None,
        git_branch: None,
        created: None,
        modified,
        size,
    };
    let mut main_seen = false;
    for entry in head {
        if entry.kind.is_chain() && entry.is_sidechain != Some(true) {
            main_seen = true;
            info.created = info.created.take().or_else(|| entry.timestamp.clone());
            info.cwd = info.cwd.take().or_else(|| entry.cwd.clone());
        }
        if info.first_prompt.is_none() && is_typed_prompt(entry) {
            info.first_prompt = entry.text().map(|t| shorten(&t));
        }
    }
    let mut custom = None;
    let mut ai = None;
    let mut summary = None;
    for entry in head.iter().chain(tail) {
        match entry.kind.as_str() {
            "custom-title" => custom = entry.custom_title.clone().or(custom),
            "ai-title" => ai = entry.ai_title.clone().or(ai),
            "tag" => info.tag = entry.tag.clone().filter(|t| !t.is_empty()),
            "last-prompt" => {
                info.last_prompt = entry.last_prompt.clone().or(info.last_prompt.take())
            }
            "summary" => summary = entry.summary.clone().or(summary),
            _ => {}
        }
        if entry.kind.is_chain() && entry.is_sidechain != Some(true) {
            main_seen = true;
            if let Some(branch) = &entry.git_branch {
                info.git_branch = Some(branch.clone());
            }
        }
    }
    if !main_seen {
        return None;
    }
    info.title = custom.or(ai);
    info.last_prompt = info.last_prompt.take().or(summary);
    Some(info)
}

/// Whether an entry is something the user typed (not a tool result, a note or a summary).
fn is_typed_prompt(entry: &SessionEntry) -> bool {
    entry.kind == EntryKind::USER
        && entry.is_sidechain != Some(true)
        && entry.is_meta != Some(true)
        && entry.is_compact_summary != Some(true)
        && !entry.is_tool_result()
        && entry
            .text()
            .is_some_and(|t| !t.starts_with("<local-command") && !t.starts_with("<command-"))
}

fn shorten(text: &str) -> String {
    let text = text.trim();
    match text.char_indices().nth(200) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

fn read_window(file: &mut File, start: u64, len: u64) -> io::Result<Vec<u8>> {
    file.seek(SeekFrom::Start(start))?;
    let mut buffer = Vec::with_capacity(len as usize);
    file.take(len).read_to_end(&mut buffer)?;
    Ok(buffer)
}

/// The entries of the whole lines in `bytes` (the first, partial line skipped when `cut`).
fn entries_in(bytes: &[u8], cut: bool) -> Vec<SessionEntry> {
    let mut lines = bytes.split(|&b| b == b'\n');
    if cut {
        lines.next();
    }
    lines
        .filter_map(|line| std::str::from_utf8(line).ok())
        .filter(|line| !line.trim().is_empty())
        .filter_map(|line| SessionEntry::from_line(line).ok())
        .collect()
}
