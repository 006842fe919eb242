//! The CLI's own session history on disk: where it keeps sessions
//! (`<config>/projects/<project>/<session>.jsonl`), listing them newest first with what a
//! picker shows, and reading one as its conversation (the main chain of its entries).

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use byre_proto::{EntryKind, SessionEntry};

use crate::worktrees::worktrees;

mod archive;
pub(crate) mod edit;
mod info;

pub use info::{session_info, SessionInfo, SummaryData};

/// The longest project folder name before the CLI shortens it with a hash.
const MAX_PROJECT_NAME: usize = 200;

/// The CLI's configuration folder: `CLAUDE_CONFIG_DIR`, else `~/.claude`.
pub fn config_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(|home| PathBuf::from(home).join(".claude"))
}

/// The folder name the CLI gives the project at `path`: every character but an ASCII letter or
/// digit becomes `-` (counted in UTF-16 units, as the CLI does); a name over 200 characters is
/// cut there and ends with `-` and a hash of the whole path.
pub fn project_dir_name(path: &Path) -> String {
    let text = path.to_string_lossy();
    let units: Vec<u16> = text.encode_utf16().collect();
    let name: String = units
        .iter()
        .map(|&u| match u8::try_from(u) {
            Ok(b) if b.is_ascii_alphanumeric() => char::from(b),
            _ => '-',
        })
        .collect();
    if name.len() <= MAX_PROJECT_NAME {
        return name;
    }
    let mut hash: i32 = 0;
    for &unit in &units {
        hash = hash.wrapping_mul(31).wrapping_add(i32::from(unit));
    }
    format!(
        "{}-{}",
        &name[..MAX_PROJECT_NAME],
        base36(hash.unsigned_abs())
    )
}

fn base36(mut n: u32) -> String {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = Vec::new();
    loop {
        out.push(DIGITS[(n % 36) as usize]);
        n /= 36;
        if n == 0 {
            break;
        }
    }
    out.reverse();
    String::from_utf8(out).unwrap_or_default()
}

/// The CLI's sessions under one configuration folder.
#[derive(Debug, Clone)]
pub struct SessionHistory {
    config_dir: PathBuf,
    programmatic: bool,
}

impl SessionHistory {
    /// The history under `config_dir` (the CLI's `~/.claude`).
    pub fn new(config_dir: impl Into<PathBuf>) -> Self {
        SessionHistory {
            config_dir: config_dir.into(),
            programmatic: true,
        }
    }

    /// The same history, whose listings leave out the sessions a program started
    /// ([`SessionInfo::programmatic`]: the SDKs', byre's, a daemon's, those another session
    /// started), as a picker of the user's own sessions shows them. Listings include them by
    /// default.
    pub fn without_programmatic(mut self) -> Self {
        self.programmatic = false;
        self
    }

    /// The history the CLI would use here ([`config_dir`]).
    pub fn from_env() -> Option<Self> {
        config_dir().map(SessionHistory::new)
    }

    /// `<config>/projects`.
    pub fn projects_dir(&self) -> PathBuf {
        self.config_dir.join("projects")
    }

    /// The folder of the project at `cwd` (the path as given, then as the file system spells
    /// it); `None` when it has no sessions. A long path matches any folder with its name's
    /// first 200 characters, as CLIs that hashed differently named them.
    pub fn project_dir(&self, cwd: &Path) -> Option<PathBuf> {
        let mut candidates = vec![cwd.to_path_buf()];
        if let Ok(real) = cwd.canonicalize() {
            candidates.push(real);
        }
        for path in candidates {
            let name = project_dir_name(&path);
            let exact = self.projects_dir().join(&name);
            if exact.is_dir() {
                return Some(exact);
            }
            if name.len() > MAX_PROJECT_NAME {
                let prefix = format!("{}-", &name[..MAX_PROJECT_NAME]);
                let found = std::fs::read_dir(self.projects_dir())
                    .into_iter()
                    .flatten()
                    .flatten()
                    .find(|e| e.file_name().to_string_lossy().starts_with(&prefix));
                if let Some(entry) = found {
                    return Some(entry.path());
                }
            }
        }
        None
    }

    /// The sessions of the project at `cwd` and of the other worktrees of its git repository
    /// (as the CLI's picker groups them), newest first, skipping `offset` and giving at most
    /// `limit`. Outside a git repository, or where `git` is not installed, this is
    /// [`SessionHistory::list_project`].
    pub fn list(&self, cwd: &Path, offset: usize, limit: Option<usize>) -> Vec<SessionInfo> {
        let mut dirs: Vec<PathBuf> = self.project_dir(cwd).into_iter().collect();
        for tree in worktrees(cwd) {
            if let Some(dir) = self.project_dir(&tree) {
                if !dirs.contains(&dir) {
                    dirs.push(dir);
                }
            }
        }
        self.list_dirs(&dirs, offset, limit)
    }

    /// The sessions of the project at `cwd` alone (no other worktree), newest first.
    pub fn list_project(
        &self,
        cwd: &Path,
        offset: usize,
        limit: Option<usize>,
    ) -> Vec<SessionInfo> {
        let dirs: Vec<PathBuf> = self.project_dir(cwd).into_iter().collect();
        self.list_dirs(&dirs, offset, limit)
    }

    /// The sessions of every project, newest first.
    pub fn list_all(&self, offset: usize, limit: Option<usize>) -> Vec<SessionInfo> {
        let dirs: Vec<PathBuf> = std::fs::read_dir(self.projects_dir())
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .collect();
        self.list_dirs(&dirs, offset, limit)
    }

    /// The file of session `id` in any project.
    pub fn find(&self, id: &str) -> Option<PathBuf> {
        if !is_session_id(id) {
            return None;
        }
        std::fs::read_dir(self.projects_dir())
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path().join(format!("{id}.jsonl")))
            .find(|p| p.is_file())
    }
}

impl SessionHistory {
    /// The sessions in `dirs`, newest first, skipping `offset` and giving at most `limit`. The
    /// files are sorted by modification time first, so only the page's files (and any that turn
    /// out empty before it) are read.
    fn list_dirs(&self, dirs: &[PathBuf], offset: usize, limit: Option<usize>) -> Vec<SessionInfo> {
        let mut seen = HashSet::new();
        let mut files = Vec::new();
        for dir in dirs {
            for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
                let path = entry.path();
                let Some(id) = path
                    .file_name()
                    .and_then(|n| n.to_str())
                    .and_then(|n| n.strip_suffix(".jsonl"))
                else {
                    continue;
                };
                if !is_session_id(id) || !seen.insert(id.to_owned()) {
                    continue;
                }
                let modified = entry
                    .metadata()
                    .and_then(|m| m.modified())
                    .unwrap_or(SystemTime::UNIX_EPOCH);
                files.push((modified, path));
            }
        }
        files.sort_by_key(|(modified, _)| std::cmp::Reverse(*modified));
        files
            .iter()
            .filter_map(|(_, path)| session_info(path).ok().flatten())
            .filter(|info| self.programmatic || !info.programmatic)
            .skip(offset)
            .take(limit.unwrap_or(usize::MAX))
            .collect()
    }

    /// The file of session `id`, or a `NotFound` error naming it.
    fn file(&self, id: &str) -> io::Result<PathBuf> {
        self.find(id).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotFound,
                format!("no session {id} in {}", self.projects_dir().display()),
            )
        })
    }

    /// Gives session `id` a title, as the CLI's `/rename` does (a `custom-title` entry).
    pub fn rename(&self, id: &str, title: &str) -> io::Result<()> {
        append(&self.file(id)?, &[edit::title_entry(id, title)?])
    }

    /// Tags session `id` (`None` clears its tag): a `tag` entry. The tag is trimmed and loses
    /// control, zero-width, direction-mark and private-use characters; a tag left empty is
    /// refused.
    pub fn tag(&self, id: &str, tag: Option<&str>) -> io::Result<()> {
        append(&self.file(id)?, &[edit::tag_entry(id, tag)?])
    }

    /// Archives session `id`: a mark beside its file (`<session>/archived.json`, as the
    /// TypeScript SDK writes it; the file itself is not touched). Listings still give it,
    /// with [`SessionInfo::archived`] `Some(true)`, until it is unarchived or the user types a
    /// prompt in it.
    pub fn archive(&self, id: &str) -> io::Result<()> {
        archive::write_mark(&self.file(id)?, true)
    }

    /// Unarchives session `id` ([`SessionInfo::archived`] `Some(false)`).
    pub fn unarchive(&self, id: &str) -> io::Result<()> {
        archive::write_mark(&self.file(id)?, false)
    }

    /// Deletes session `id`: its file and its folder (subagents, tool results).
    pub fn delete(&self, id: &str) -> io::Result<()> {
        let path = self.file(id)?;
        std::fs::remove_file(&path)?;
        let folder = path.with_extension("");
        match std::fs::remove_dir_all(&folder) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }

    /// Copies session `id` into a new session beside it, its conversation only (up to and
    /// including message `up_to` when given), every entry with a new id and the new session's
    /// id, each marked `forkedFrom` the entry it copies, titled as the source with " (fork)"
    /// (its first prompt where it has no title). Returns the new session's id; resume it as
    /// any other.
    pub fn fork(&self, id: &str, up_to: Option<&str>) -> io::Result<String> {
        let path = self.file(id)?;
        let log = SessionLog::read(&path)?;
        let (new_id, entries) = edit::fork_entries(id, &log, up_to, None)?;
        append(&path.with_file_name(format!("{new_id}.jsonl")), &entries)?;
        Ok(new_id)
    }
}

/// A subagent's transcript beside a session (`<session>/subagents/.../agent-<id>.jsonl`).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SubagentInfo {
    /// The subagent's id (`agentId` on its entries).
    pub agent_id: String,
    /// Its transcript; [`SessionLog::read`] reads it, [`SessionLog::messages`] in order.
    pub path: PathBuf,
    /// Its type (`general-purpose`, a name from `Options::agents`), from the sidecar.
    pub agent_type: Option<String>,
    /// What it was asked to do, from the sidecar.
    pub description: Option<String>,
    /// The id of the `Agent` tool call that started it, from the sidecar.
    pub tool_use_id: Option<String>,
    /// The subagent that started it, when one did.
    pub parent_agent_id: Option<String>,
}

impl SessionHistory {
    /// The subagents of session `id` (nested ones included), in file name order.
    pub fn subagents(&self, id: &str) -> io::Result<Vec<SubagentInfo>> {
        let folder = self.file(id)?.with_extension("").join("subagents");
        let mut found = Vec::new();
        let mut dirs = vec![folder];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    dirs.push(path);
                    continue;
                }
                let name = entry.file_name().to_string_lossy().into_owned();
                let Some(agent_id) = name
                    .strip_prefix("agent-")
                    .and_then(|n| n.strip_suffix(".jsonl"))
                else {
                    continue;
                };
                let sidecar: serde_json::Value = std::fs::read(path.with_extension("meta.json"))
                    .ok()
                    .and_then(|bytes| serde_json::from_slice(&bytes).ok())
                    .unwrap_or_default();
                let text = |key: &str| sidecar.get(key).and_then(|v| v.as_str()).map(str::to_owned);
                found.push(SubagentInfo {
                    agent_id: agent_id.to_owned(),
                    agent_type: text("agentType"),
                    description: text("description"),
                    tool_use_id: text("toolUseId"),
                    parent_agent_id: text("parentAgentId"),
                    path,
                });
            }
        }
        found.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(found)
    }
}

/// Appends `entries` to the session file at `path` (created, readable by its owner only).
fn append(path: &Path, entries: &[serde_json::Value]) -> io::Result<()> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.create(true).append(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path)?;
    let mut text = String::new();
    for entry in entries {
        text.push_str(&entry.to_string());
        text.push('\n');
    }
    file.write_all(text.as_bytes())
}

/// Whether `id` has the form of a session id (a UUID).
pub fn is_session_id(id: &str) -> bool {
    let parts: Vec<&str> = id.split('-').collect();
    let lengths = [8, 4, 4, 4, 12];
    parts.len() == 5
        && parts
            .iter()
            .zip(lengths)
            .all(|(p, n)| p.len() == n && p.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// A session read whole: every entry in file order, and the lines that did not decode.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct SessionLog {
    /// Every entry, in file order.
    pub entries: Vec<SessionEntry>,
    /// The 1-based numbers of lines that are not entries (not JSON, no `type`).
    pub bad_lines: Vec<usize>,
}

impl SessionLog {
    /// Reads the session file at `path`, line by line.
    pub fn read(path: &Path) -> io::Result<SessionLog> {
        let mut log = SessionLog::default();
        let reader = BufReader::new(File::open(path)?);
        for (n, line) in reader.split(b'\n').enumerate() {
            let line = line?;
            let Ok(text) = std::str::from_utf8(&line) else {
                log.bad_lines.push(n + 1);
                continue;
            };
            if text.trim().is_empty() {
                continue;
            }
            match SessionEntry::from_line(text) {
                Ok(entry) => log.entries.push(entry),
                Err(_) => log.bad_lines.push(n + 1),
            }
        }
        Ok(log)
    }

    /// A session's entries as a store gives them back ([`SessionStore::load`]); the 1-based
    /// positions of values that are not entries go to `bad_lines`.
    ///
    /// [`SessionStore::load`]: crate::store::SessionStore::load
    pub fn from_values(values: Vec<serde_json::Value>) -> SessionLog {
        let mut log = SessionLog::default();
        for (n, value) in values.into_iter().enumerate() {
            match serde_json::from_value(value) {
                Ok(entry) => log.entries.push(entry),
                Err(_) => log.bad_lines.push(n + 1),
            }
        }
        log
    }

    /// Every user and assistant message in file order, side chains included: a subagent's
    /// transcript, whose entries are all its side chain.
    pub fn messages(&self) -> Vec<&SessionEntry> {
        self.entries
            .iter()
            .filter(|e| e.kind == EntryKind::USER || e.kind == EntryKind::ASSISTANT)
            .filter(|e| e.is_meta != Some(true))
            .collect()
    }

    /// The conversation as the CLI resumes it: from the latest main-chain message back to the
    /// root along `parentUuid`, in order, with the parallel tool calls and results a single
    /// parent walk skips put back after the response they belong to. Side chains, notes and
    /// attachments are left out; a compaction summary is kept, and the history before a
    /// compaction boundary is not followed.
    pub fn conversation(&self) -> Vec<&SessionEntry> {
        let by_uuid: HashMap<&str, &SessionEntry> = self
            .entries
            .iter()
            .filter(|e| e.kind.is_chain())
            .filter_map(|e| e.uuid.as_deref().map(|u| (u, e)))
            .collect();
        let is_message = |e: &SessionEntry| {
            (e.kind == EntryKind::USER || e.kind == EntryKind::ASSISTANT)
                && e.is_sidechain != Some(true)
        };
        let Some(leaf) = self
            .entries
            .iter()
            .rev()
            .find(|e| is_message(e) && e.is_meta != Some(true))
        else {
            return Vec::new();
        };
        let mut chain = Vec::new();
        let mut seen = HashSet::new();
        let mut at = Some(leaf);
        while let Some(entry) = at {
            let Some(uuid) = entry.uuid.as_deref() else {
                break;
            };
            if !seen.insert(uuid) {
                break;
            }
            chain.push(entry);
            at = entry
                .parent_uuid
                .as_deref()
                .and_then(|p| by_uuid.get(p).copied());
        }
        chain.reverse();
        // Parallel tool calls: the other blocks of a response, and the results that answer
        // them, hang off the chain; put each back after the entry it follows.
        let mut placed: HashSet<&str> = chain.iter().filter_map(|e| e.uuid.as_deref()).collect();
        loop {
            let mut added = false;
            for entry in self.entries.iter().filter(|e| is_message(e)) {
                let Some(uuid) = entry.uuid.as_deref() else {
                    continue;
                };
                if placed.contains(uuid) {
                    continue;
                }
                let parent = entry.parent_uuid.as_deref();
                let follows = match parent {
                    Some(p) if placed.contains(p) => {
                        chain.iter().rposition(|e| e.uuid.as_deref() == Some(p))
                    }
                    _ => None,
                };
                let follows = follows.or_else(|| {
                    let id = response_id(entry)?;
                    chain.iter().rposition(|e| response_id(e) == Some(id))
                });
                if let Some(at) = follows {
                    // After the entries already put back beside it, in file order.
                    let mut at = at + 1;
                    while at < chain.len()
                        && chain[at].parent_uuid.as_deref() == parent
                        && parent.is_some()
                    {
                        at += 1;
                    }
                    chain.insert(at, entry);
                    placed.insert(uuid);
                    added = true;
                }
            }
            if !added {
                break;
            }
        }
        let messages: Vec<&SessionEntry> = chain
            .into_iter()
            .filter(|e| is_message(e) && e.is_meta != Some(true))
            .collect();
        blocks_before_results(messages)
    }
}

/// Orders each response as the API had it: all its blocks, then the tool results answering
/// them (CLIs write a result beside its call or after every call; the order within each
/// group is kept).
fn blocks_before_results(messages: Vec<&SessionEntry>) -> Vec<&SessionEntry> {
    let mut out = Vec::with_capacity(messages.len());
    let mut i = 0;
    while i < messages.len() {
        let Some(id) = response_id(messages[i]) else {
            out.push(messages[i]);
            i += 1;
            continue;
        };
        let mut end = i;
        while end < messages.len()
            && (response_id(messages[end]) == Some(id) || messages[end].is_tool_result())
        {
            end += 1;
        }
        let window = &messages[i..end];
        out.extend(window.iter().filter(|e| response_id(e) == Some(id)));
        out.extend(window.iter().filter(|e| response_id(e) != Some(id)));
        i = end;
    }
    out
}

/// The API message id of an assistant entry (shared by the entries of one response).
fn response_id(entry: &SessionEntry) -> Option<&str> {
    if entry.kind != EntryKind::ASSISTANT {
        return None;
    }
    entry.message.as_ref()?.get("id")?.as_str()
}

/// A random version-4 UUID (a new session or entry id).
pub fn new_uuid() -> String {
    use std::hash::{BuildHasher, Hasher};
    // Two independently seeded hashers give 128 random bits without another dependency.
    let mut bytes = [0u8; 16];
    for half in bytes.chunks_mut(8) {
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or_default(),
        );
        half.copy_from_slice(&hasher.finish().to_le_bytes());
    }
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}
