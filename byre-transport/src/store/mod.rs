//! Session stores: where sessions live beyond the disk of the machine that ran them. The
//! [`SessionStore`] trait (append, load, list, list subkeys, delete, keyed as the official
//! SDKs key them), its backends (in memory, a directory, object storage), opening one from a
//! URL, listing a project's sessions as a picker shows them, and putting a stored session back
//! on disk for the CLI to resume.

use std::fmt;
use std::io;
use std::sync::Arc;

pub use byre_proto::{InvalidKey, SessionKey};
use serde_json::Value;

use crate::spawn::BoxFuture;

mod batch;
mod dir;
mod dir_summary;
mod edit;
mod lease;
mod materialize;
mod memory;
#[cfg(feature = "object-store")]
mod object;
#[cfg(feature = "object-store")]
mod object_summary;
mod summary;

pub use crate::sessions::SummaryData;
pub use batch::Batch;
pub use dir::DirStore;
pub use edit::{fork_session, rename_session, tag_session};
pub use lease::{acquire_lease, Lease, LeaseHolder, LeaseVersion, StoredLease, DEFAULT_LEASE_TTL};
pub use materialize::{import_session, materialize, Materialized, AGENT_METADATA, SCRATCH_PREFIX};
pub use memory::MemoryStore;
#[cfg(feature = "object-store")]
pub use object::ObjectSessionStore;
pub use summary::{fold_session_summary, list_stored, stored_info, stored_log, SessionSummary};

/// The prefixes of the variables object storage is configured from, as `object_store` reads
/// them (in any case): `AWS_*` (S3: keys, session token, region, endpoint, profile, web
/// identity), `GOOGLE_*` (GCS: the service account and its key, application credentials) and
/// `AZURE_*` (Azure: account, key, SAS token, client secret).
pub const CREDENTIAL_PREFIXES: &[&str] = &["AWS_", "GOOGLE_", "AZURE_"];

/// The variables of this process's environment whose names start with one of
/// [`CREDENTIAL_PREFIXES`], in any case.
pub fn credential_vars() -> Vec<std::ffi::OsString> {
    std::env::vars_os()
        .map(|(name, _)| name)
        .filter(|name| {
            let upper = name.to_string_lossy().to_ascii_uppercase();
            CREDENTIAL_PREFIXES.iter().any(|p| upper.starts_with(p))
        })
        .collect()
}

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
    /// A conditional write found the record changed since it was read (another writer wrote
    /// it first).
    #[error("{what} changed since it was read: another writer wrote it")]
    Conflict {
        /// What was written.
        what: String,
    },
    /// The store cannot do this (a custom store without leases, an object store without
    /// conditional writes).
    #[error("the store cannot {0}")]
    Unsupported(&'static str),
    /// Another process holds the stored session's lease: it runs the session now, and a
    /// second writer would fork it. The lease ends when its holder closes the session, or when
    /// the holder stops renewing it (killed, cut off) and it expires.
    #[error(
        "the stored session {} is in use by {} (for {}); its lease {}",
        key.session_id,
        holder.holder,
        ago(holder.since_ms),
        ends(holder.expires_ms)
    )]
    Held {
        /// The session.
        key: Box<SessionKey>,
        /// Who holds it, since when, until when.
        holder: Box<LeaseHolder>,
    },
    /// This process's lease on a stored session ended while the session ran: taken over by
    /// another after it expired (renewals did not reach the store), or removed. Nothing more
    /// is written for the session, so the other writer's session is not forked.
    #[error("the lease on the stored session {} was lost: {why}", key.session_id)]
    LeaseLost {
        /// The session.
        key: Box<SessionKey>,
        /// What happened.
        why: String,
    },
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

    /// The variables of this process's environment the store may have taken its configuration
    /// and credentials from ([`credential_vars`] for object storage): a session with this
    /// store starts the CLI without them, unless told to pass them on. None by default.
    fn credential_vars(&self) -> Vec<std::ffi::OsString> {
        Vec::new()
    }

    /// Every entry appended at `key`, in order; `None` when nothing was ever appended there.
    /// A stored line that does not decode is left out
    /// ([`load_checked`](SessionStore::load_checked) says which).
    fn load<'a>(
        &'a self,
        key: &'a SessionKey,
    ) -> BoxFuture<'a, Result<Option<Vec<Value>>, StoreError>>;

    /// As [`load`](SessionStore::load), with the lines left out because they do not decode.
    /// By default: `load`'s entries, none left out.
    fn load_checked<'a>(
        &'a self,
        key: &'a SessionKey,
    ) -> BoxFuture<'a, Result<Option<Loaded>, StoreError>> {
        Box::pin(async move {
            Ok(self.load(key).await?.map(|entries| Loaded {
                entries,
                skipped: Vec::new(),
            }))
        })
    }

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

    /// Appends a [`Batch`] (entries already as JSONL) to the transcript at `key`, as
    /// [`append`](SessionStore::append) does. A batch may be offered again after a failure
    /// whose write in fact landed (a timeout, a lost answer): a store that can should hold it
    /// once (by its [`id`](Batch::id)). By default its entries are decoded and appended.
    fn append_batch<'a>(
        &'a self,
        key: &'a SessionKey,
        batch: &'a Batch,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let entries = batch.entries()?;
            self.append(key, &entries).await
        })
    }

    /// The summaries of a project's sessions ([`fold_session_summary`] of every entry
    /// appended to each main transcript, with the time of the append that folded it last), in
    /// no particular order; empty for an unknown project. A store that keeps them updates a
    /// session's summary in each [`append`](SessionStore::append) to its main transcript and
    /// drops it with the session. By default: [`StoreError::Unsupported`], and
    /// [`list_stored`] reads each session whole.
    fn list_session_summaries<'a>(
        &'a self,
        _project_key: &'a str,
    ) -> BoxFuture<'a, Result<Vec<SessionSummary>, StoreError>> {
        Box::pin(async { Err(StoreError::Unsupported("keep session summaries")) })
    }

    /// The lease record of the session of `key` (its subpath ignored) and its version;
    /// `None` when there is none. By default: [`StoreError::Unsupported`].
    fn read_lease<'a>(
        &'a self,
        _key: &'a SessionKey,
    ) -> BoxFuture<'a, Result<Option<StoredLease>, StoreError>> {
        Box::pin(async { Err(StoreError::Unsupported("keep leases")) })
    }

    /// Writes the lease record of the session of `key` if the record there is still the one
    /// read at version `replacing` (`None`: only if there is none), atomically; gives the new
    /// version, or [`StoreError::Conflict`] when the record changed. By default:
    /// [`StoreError::Unsupported`].
    fn write_lease<'a>(
        &'a self,
        _key: &'a SessionKey,
        _record: &'a [u8],
        _replacing: Option<&'a LeaseVersion>,
    ) -> BoxFuture<'a, Result<LeaseVersion, StoreError>> {
        Box::pin(async { Err(StoreError::Unsupported("keep leases")) })
    }
}

/// How long ago a time in milliseconds since the Unix epoch was, for a message.
fn ago(ms: i64) -> String {
    let secs = (now_ms() - ms).max(0) / 1000;
    format!("{secs} s")
}

/// When a lease that expires at `ms` ends, for a message.
fn ends(ms: i64) -> String {
    match (ms - now_ms()) / 1000 {
        left if left > 0 => format!("ends in {left} s unless renewed"),
        _ => "has just expired".to_owned(),
    }
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

/// Entries from JSONL, and the lines that do not decode (left out, as the CLI leaves out a
/// line of its own files it cannot read). A last line without its newline is a write that
/// never finished and is left out without a word.
pub(crate) fn from_jsonl(key: &SessionKey, bytes: &[u8]) -> (Vec<Value>, Vec<SkippedLine>) {
    let mut entries = Vec::new();
    let mut skipped = Vec::new();
    let complete = match bytes.iter().rposition(|&b| b == b'\n') {
        Some(at) => &bytes[..=at],
        None => &[][..],
    };
    for (n, line) in complete.split(|&b| b == b'\n').enumerate() {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice(line) {
            Ok(entry) => entries.push(entry),
            Err(e) => skipped.push(SkippedLine {
                key: key.to_string(),
                line: n + 1,
                why: e.to_string(),
            }),
        }
    }
    (entries, skipped)
}

/// A stored line that does not decode, left out of a load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedLine {
    /// The transcript (its key as text; for an object store, its part).
    pub key: String,
    /// The line's number, from 1.
    pub line: usize,
    /// Why it does not decode.
    pub why: String,
}

impl fmt::Display for SkippedLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} line {}: {}", self.key, self.line, self.why)
    }
}

/// A transcript as a store holds it: its entries, and the lines left out because they do not
/// decode.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Loaded {
    /// The entries, in order.
    pub entries: Vec<Value>,
    /// The lines left out.
    pub skipped: Vec<SkippedLine>,
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
        let (got, skipped) = from_jsonl(&key, b"{\"type\":\"a\"}\n{\"type\":\"b\"}\n{\"ty");
        assert_eq!((got.len(), skipped.len()), (2, 0));
        let (got, skipped) = from_jsonl(&key, b"{\"type\":\"a\"}\nnot json\n{\"type\":\"c\"}\n");
        assert_eq!(got.len(), 2);
        assert_eq!(skipped.len(), 1);
        assert_eq!(skipped[0].line, 2);
        assert_eq!(to_jsonl(&got), b"{\"type\":\"a\"}\n{\"type\":\"c\"}\n");
    }
}
