//! Session stores: where sessions live beyond the disk of the machine that ran them. The
//! [`SessionStore`] trait (append, load, list, list subkeys, delete, keyed as the official
//! SDKs key them), its backends (in memory, a directory, object storage), opening one from a
//! URL, listing a project's sessions as a picker shows them, and putting a stored session back
//! on disk for the CLI to resume.

use std::fmt;
use std::io;
use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

pub use byre_proto::{InvalidKey, SessionKey};
use serde_json::Value;

use crate::{SessionInfo, SessionLog};

use crate::spawn::BoxFuture;

mod dir;
mod materialize;
mod memory;
#[cfg(feature = "object-store")]
mod object;

pub use dir::DirStore;
pub use materialize::{import_session, materialize, Materialized, AGENT_METADATA, SCRATCH_PREFIX};
pub use memory::MemoryStore;
#[cfg(feature = "object-store")]
pub use object::ObjectSessionStore;

/// A session the store holds, as [`SessionStore::list_sessions`] gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredSession {
    /// The session id.
    pub session_id: String,
    /// When its main transcript was last written, in milliseconds since the Unix epoch, on the
    /// store's clock.
    pub mtime_ms: i64,
}

/// Why a store call failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The key cannot be stored (it would leave the store's root).
    #[error(transparent)]
    InvalidKey(#[from] InvalidKey),
    /// Reading or writing files failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The error.
        source: io::Error,
    },
    /// What the store holds does not decode.
    #[error("the stored entries of {key} do not decode: {message}")]
    Corrupt {
        /// The key.
        key: String,
        /// Why.
        message: String,
    },
    /// The storage service failed.
    #[error("the store failed: {0}")]
    Backend(String),
    /// The store URL names no backend byre has.
    #[error("the store URL {url:?}: {why}")]
    Url {
        /// The URL.
        url: String,
        /// Why it is refused.
        why: String,
    },
}

impl StoreError {
    pub(crate) fn io(context: impl Into<String>, source: io::Error) -> StoreError {
        StoreError::Io {
            context: context.into(),
            source,
        }
    }
}

/// Where session entries are kept: each transcript (a session's main one, or one of its
/// subagents') is a list of JSON entries under a [`SessionKey`], appended to in order.
///
/// Entries are opaque objects with a `type` (the lines of the CLI's session files); a store
/// gives back what it was given, in the order appended. `byre_testkit::store_conformance`
/// checks an implementation against the contract every call below states.
pub trait SessionStore: Send + Sync + fmt::Debug {
    /// Appends `entries` to the transcript at `key`, after those appended before. An empty
    /// `entries` changes nothing that [`load`](SessionStore::load) gives.
    fn append<'a>(
        &'a self,
        key: &'a SessionKey,
        entries: &'a [Value],
    ) -> BoxFuture<'a, Result<(), StoreError>>;

    /// Every entry appended at `key`, in order; `None` when nothing was ever appended there.
    fn load<'a>(
        &'a self,
        key: &'a SessionKey,
    ) -> BoxFuture<'a, Result<Option<Vec<Value>>, StoreError>>;

    /// The sessions of a project that have a main transcript (subagent transcripts are not
    /// sessions), in no particular order; empty for an unknown project.
    fn list_sessions<'a>(
        &'a self,
        project_key: &'a str,
    ) -> BoxFuture<'a, Result<Vec<StoredSession>, StoreError>>;

    /// The subpaths held under the session of `key` (its subpath ignored), the main
    /// transcript not among them; empty for an unknown session.
    fn list_subkeys<'a>(
        &'a self,
        key: &'a SessionKey,
    ) -> BoxFuture<'a, Result<Vec<String>, StoreError>>;

    /// Deletes the transcript at `key`; a main key takes its subkeys with it, a subkey only
    /// itself. Deleting what is not there is not an error.
    fn delete<'a>(&'a self, key: &'a SessionKey) -> BoxFuture<'a, Result<(), StoreError>>;
}

/// The sessions of a project in `store`, newest first, as a picker lists them: each main
/// transcript is loaded and read whole ([`SessionInfo::from_entries`]: title, first and last
/// prompt, tag, ...; no `path`), from the `offset`-th listed on, at most `limit` of them.
/// Sessions that are only a subagent's side chain are left out, as on disk.
pub async fn list_stored(
    store: &dyn SessionStore,
    project_key: &str,
    offset: usize,
    limit: Option<usize>,
) -> Result<Vec<SessionInfo>, StoreError> {
    let mut sessions = store.list_sessions(project_key).await?;
    sessions.sort_by_key(|s| std::cmp::Reverse(s.mtime_ms));
    let mut listed = Vec::new();
    let mut skipped = 0;
    for stored in sessions {
        if limit.is_some_and(|limit| listed.len() >= limit) {
            break;
        }
        let key = SessionKey::main(project_key, stored.session_id.as_str());
        let Some(values) = store.load(&key).await? else {
            continue;
        };
        let size = values
            .iter()
            .map(|v| serde_json::to_vec(v).map_or(0, |line| line.len() as u64 + 1))
            .sum();
        let entries = SessionLog::from_values(values).entries;
        let modified = UNIX_EPOCH + Duration::from_millis(stored.mtime_ms.max(0) as u64);
        let Some(info) = SessionInfo::from_entries(stored.session_id, &entries, modified, size)
        else {
            continue;
        };
        if skipped < offset {
            skipped += 1;
        } else {
            listed.push(info);
        }
    }
    Ok(listed)
}

/// Opens the store a URL names:
/// - `memory:` a new [`MemoryStore`];
/// - `file:///dir` a [`DirStore`] there (the CLI's own layout: `<dir>/<project>/<id>.jsonl`);
/// - with the `object-store` feature, `s3://bucket/prefix`, `gs://…`, `az://…` (and the other
///   URLs `object_store` parses) an [`ObjectSessionStore`], configured from the usual
///   environment variables (`AWS_ACCESS_KEY_ID`, `AWS_ENDPOINT`, `AWS_ALLOW_HTTP`, …).
pub fn open_store(url: &str) -> Result<Arc<dyn SessionStore>, StoreError> {
    let refuse = |why: &str| StoreError::Url {
        url: url.to_owned(),
        why: why.to_owned(),
    };
    if url == "memory:" || url == "memory://" {
        return Ok(Arc::new(MemoryStore::new()));
    }
    if let Some(path) = url.strip_prefix("file://") {
        if !path.starts_with('/') {
            return Err(refuse("a file URL needs an absolute path (file:///dir)"));
        }
        let path = percent_decode(path).ok_or_else(|| refuse("bad percent-encoding"))?;
        return Ok(Arc::new(DirStore::new(path)));
    }
    #[cfg(feature = "object-store")]
    {
        ObjectSessionStore::from_url(url).map(|s| Arc::new(s) as Arc<dyn SessionStore>)
    }
    #[cfg(not(feature = "object-store"))]
    {
        Err(refuse(
            "only memory: and file:/// (object storage needs the object-store feature)",
        ))
    }
}

/// Decodes `%XX` escapes (a file URL's path); `None` when they are not valid UTF-8.
fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// Milliseconds since the Unix epoch, now.
pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or_default()
}

/// Entries as JSONL: one compact line each, every line ending in a newline.
pub(crate) fn to_jsonl(entries: &[Value]) -> Vec<u8> {
    let mut out = Vec::new();
    for entry in entries {
        // A Value always serialises.
        let _ = serde_json::to_writer(&mut out, entry);
        out.push(b'\n');
    }
    out
}

/// Entries from JSONL. A last line without its newline is a write that never finished and is
/// left out; any other line that does not decode is an error.
pub(crate) fn from_jsonl(key: &SessionKey, bytes: &[u8]) -> Result<Vec<Value>, StoreError> {
    let mut entries = Vec::new();
    let complete = match bytes.iter().rposition(|&b| b == b'\n') {
        Some(at) => &bytes[..=at],
        None => &[][..],
    };
    for (n, line) in complete.split(|&b| b == b'\n').enumerate() {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let entry = serde_json::from_slice(line).map_err(|e| StoreError::Corrupt {
            key: key.to_string(),
            message: format!("line {}: {e}", n + 1),
        })?;
        entries.push(entry);
    }
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        assert!(open_store("memory:").is_ok());
        assert!(open_store("file:///tmp/x%20y").is_ok());
        assert!(open_store("file://relative").is_err());
        assert_eq!(percent_decode("/a%20b/%41").as_deref(), Some("/a b/A"));
        assert_eq!(percent_decode("/a%2"), Some("/a%2".into()));
    }

    #[test]
    fn a_torn_last_line_is_left_out() {
        let key = SessionKey::main("p", "s");
        let got = from_jsonl(&key, b"{\"type\":\"a\"}\n{\"type\":\"b\"}\n{\"ty").unwrap();
        assert_eq!(got.len(), 2);
        assert!(from_jsonl(&key, b"{\"type\":\"a\"}\nnot json\n").is_err());
        assert_eq!(to_jsonl(&got), b"{\"type\":\"a\"}\n{\"type\":\"b\"}\n");
    }
}
