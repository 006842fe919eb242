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
    /// How the CLI was started (`cli`; `sdk-ts`, `sdk-py`, `sdk-cli`, `sdk-byre` when a
    /// program drove it).
    pub entrypoint: Option<String>,
    /// Whether a program started it rather than a person: its entrypoint is one of the SDKs'
    /// (`sdk-…`, byre's `sdk-byre` too), or its first entry marks it a session another
    /// session's tool started (`nestedSession`) or a daemon's (`sessionKind`).
    pub programmatic: bool,
    /// When the user last typed a prompt in it (ISO 8601).
    pub last_typed_at: Option<String>,
    /// Whether it is archived ([`SessionHistory::archive`](crate::SessionHistory::archive)):
    /// `None` when it never was (and for a session in a store), `Some(false)` when it was
    /// unarchived, or a prompt was typed in it after it was archived.
    pub archived: Option<bool>,
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
    let info = summarize(
        session_id,
        Some(path.to_path_buf()),
        &entries_in(&head, false),
        &entries_in(&tail, tail_start > 0),
        meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
        size,
    );
    Ok(info.map(|mut info| {
        info.archived = super::archive::archived(path, info.last_typed_at.as_deref());
        info
    }))
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
    let mut data = SummaryData::default();
    for entry in head.iter().chain(tail) {
        data.fold(entry);
    }
    data.size = size;
    data.info(session_id, path, modified)
}

/// What a picker shows of a session, folded from its entries one at a time, so a store can
/// keep it beside the session and update it with each append instead of reading the whole
/// session to list it ([`SessionStore::list_session_summaries`](crate::store::SessionStore)).
/// Folding every entry of a session gives what [`SessionInfo::from_entries`] gives.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", default)]
#[non_exhaustive]
pub struct SummaryData {
    /// Whether an entry of the main chain was seen (a subagent's side chain alone is not a
    /// session to list).
    pub main_seen: bool,
    /// The first main-chain entry's time (ISO 8601).
    pub created: Option<String>,
    /// The first main-chain entry's working directory.
    pub cwd: Option<String>,
    /// How the CLI that wrote the first main-chain entry was started (`cli`, `sdk-ts`, ...).
    pub entrypoint: Option<String>,
    /// Whether a program started it ([`SessionInfo::programmatic`]).
    pub programmatic: bool,
    /// The first prompt the user typed (at most 200 characters).
    pub first_prompt: Option<String>,
    /// When the user last typed a prompt (ISO 8601).
    pub last_typed_at: Option<String>,
    /// The last title the user gave.
    pub custom_title: Option<String>,
    /// The last title the CLI made.
    pub ai_title: Option<String>,
    /// The tag (the last `tag` entry's, `None` once cleared).
    pub tag: Option<String>,
    /// The last `last-prompt` entry's prompt.
    pub last_prompt: Option<String>,
    /// The last `summary` entry's text.
    pub summary: Option<String>,
    /// The last main-chain entry's git branch.
    pub git_branch: Option<String>,
    /// The session's size in bytes, as its JSONL.
    pub size: u64,
}

impl SummaryData {
    /// Takes one more entry into account, in the order of the session.
    pub fn fold(&mut self, entry: &SessionEntry) {
        let main = entry.kind.is_chain() && entry.is_sidechain != Some(true);
        if main {
            if !self.main_seen {
                self.main_seen = true;
                self.entrypoint = entry.entrypoint.clone();
                self.programmatic = is_programmatic(entry);
            }
            self.created = self.created.take().or_else(|| entry.timestamp.clone());
            self.cwd = self.cwd.take().or_else(|| entry.cwd.clone());
            if let Some(branch) = &entry.git_branch {
                self.git_branch = Some(branch.clone());
            }
        }
        if is_typed_prompt(entry) {
            if self.first_prompt.is_none() {
                self.first_prompt = entry.text().map(|t| shorten(&t));
            }
            if entry.timestamp.is_some() {
                self.last_typed_at = entry.timestamp.clone();
            }
        }
        match entry.kind.as_str() {
            "custom-title" => last(&mut self.custom_title, &entry.custom_title),
            "ai-title" => last(&mut self.ai_title, &entry.ai_title),
            "tag" => self.tag = entry.tag.clone().filter(|t| !t.is_empty()),
            "last-prompt" => last(&mut self.last_prompt, &entry.last_prompt),
            "summary" => last(&mut self.summary, &entry.summary),
            _ => {}
        }
    }

    /// What a picker shows of the session folded so far; `None` when none of its entries
    /// belongs to its main chain.
    pub fn info(
        &self,
        session_id: impl Into<String>,
        path: Option<PathBuf>,
        modified: SystemTime,
    ) -> Option<SessionInfo> {
        if !self.main_seen {
            return None;
        }
        Some(SessionInfo {
            session_id: session_id.into(),
            path,
            title: self.custom_title.clone().or_else(|| self.ai_title.clone()),
            first_prompt: self.first_prompt.clone(),
            last_prompt: self.last_prompt.clone().or_else(|| self.summary.clone()),
            tag: self.tag.clone(),
            cwd: self.cwd.clone(),
            git_branch: self.git_branch.clone(),
            created: self.created.clone(),
            entrypoint: self.entrypoint.clone(),
            programmatic: self.programmatic,
            last_typed_at: self.last_typed_at.clone(),
            archived: None,
            modified,
            size: self.size,
        })
    }
}

/// Whether the first main-chain entry of a session says a program started it.
fn is_programmatic(entry: &SessionEntry) -> bool {
    let sdk = entry
        .entrypoint
        .as_deref()
        .is_some_and(|e| e.starts_with("sdk-"));
    let nested = entry.extra.get("nestedSession") == Some(&serde_json::Value::Bool(true));
    let daemon = matches!(
        entry.extra.get("sessionKind").and_then(|k| k.as_str()),
        Some("daemon" | "daemon-worker")
    );
    sdk || nested || daemon
}

/// `slot` becomes `value` when there is one.
fn last(slot: &mut Option<String>, value: &Option<String>) {
    if value.is_some() {
        slot.clone_from(value);
    }
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
