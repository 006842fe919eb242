//! Session summaries a store keeps beside each session, folded as entries are appended, so
//! listing a project's sessions reads one small record per session instead of every
//! transcript whole; and the listing itself ([`list_stored`]), which reads a session whole
//! only where its summary is missing or older than the session; and reading one stored
//! session ([`stored_info`], [`stored_log`]).

use std::collections::HashMap;
use std::time::{Duration, UNIX_EPOCH};

use byre_proto::SessionEntry;
use serde::Deserialize;
use serde_json::Value;

use super::{SessionKey, SessionStore, StoreError};
use crate::sessions::SummaryData;
use crate::{SessionInfo, SessionLog};

/// A session's summary, as a store keeps it ([`SessionStore::list_session_summaries`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionSummary {
    /// The session id.
    pub session_id: String,
    /// When the summary was last folded, in milliseconds since the Unix epoch, on the clock
    /// of the store's [`list_sessions`](SessionStore::list_sessions): a summary older than
    /// the session's listed time misses entries, and the listing reads the session instead.
    pub mtime_ms: i64,
    /// What a picker shows, folded from every entry appended so far.
    pub data: SummaryData,
}

impl SessionSummary {
    /// What a picker shows of the session; `None` when no entry of its main chain was seen.
    pub fn info(&self) -> Option<SessionInfo> {
        let modified = UNIX_EPOCH + Duration::from_millis(self.mtime_ms.max(0) as u64);
        self.data.info(self.session_id.clone(), None, modified)
    }
}

/// The summary of the session of `key` after `entries` were appended to it: `prev` (the
/// summary before, `None` for a new session) with each entry folded in, in order. Entries of
/// a subagent's transcript (a `key` with a subpath) change nothing: a summary is the main
/// transcript's. The time is `prev`'s; the store sets it when it keeps the summary. Entries
/// that do not decode as session entries only count in the size.
pub fn fold_session_summary(
    prev: Option<SessionSummary>,
    key: &SessionKey,
    entries: &[Value],
) -> SessionSummary {
    let mut summary = prev.unwrap_or_else(|| SessionSummary {
        session_id: key.session_id.clone(),
        ..SessionSummary::default()
    });
    if key.subpath.is_some() {
        return summary;
    }
    for value in entries {
        summary.data.size += jsonl_size(std::slice::from_ref(value));
        if let Ok(entry) = SessionEntry::deserialize(value) {
            summary.data.fold(&entry);
        }
    }
    summary
}

/// The sessions of a project in `store`, newest first, as a picker lists them (title, first
/// and last prompt, tag, ...; no `path`), from the `offset`-th listed on, at most `limit` of
/// them. Where the store keeps summaries ([`SessionStore::list_session_summaries`]), each
/// session whose summary is as new as the session is listed from it; the others (a store
/// without summaries, a session written before they were kept, a summary whose write failed)
/// are loaded and read whole, only as far as the page needs. Sessions that are only a
/// subagent's side chain are left out, as on disk.
pub async fn list_stored(
    store: &dyn SessionStore,
    project_key: &str,
    offset: usize,
    limit: Option<usize>,
) -> Result<Vec<SessionInfo>, StoreError> {
    let mut sessions = store.list_sessions(project_key).await?;
    let mut summaries: HashMap<String, SessionSummary> =
        match store.list_session_summaries(project_key).await {
            Ok(summaries) => summaries
                .into_iter()
                .map(|s| (s.session_id.clone(), s))
                .collect(),
            Err(StoreError::Unsupported(_)) => HashMap::new(),
            Err(e) => return Err(e),
        };
    sessions.sort_by_key(|s| std::cmp::Reverse(s.mtime_ms));
    let mut listed = Vec::new();
    let mut skipped = 0;
    for stored in sessions {
        if limit.is_some_and(|limit| listed.len() >= limit) {
            break;
        }
        let modified = UNIX_EPOCH + Duration::from_millis(stored.mtime_ms.max(0) as u64);
        let fresh = summaries
            .remove(&stored.session_id)
            .filter(|s| s.mtime_ms >= stored.mtime_ms);
        let info = match fresh {
            Some(summary) => summary.data.info(stored.session_id, None, modified),
            None => {
                let key = SessionKey::main(project_key, stored.session_id.as_str());
                let Some(values) = store.load(&key).await? else {
                    continue;
                };
                let size = jsonl_size(&values);
                let entries = SessionLog::from_values(values).entries;
                SessionInfo::from_entries(stored.session_id, &entries, modified, size)
            }
        };
        let Some(info) = info else { continue };
        if skipped < offset {
            skipped += 1;
        } else {
            listed.push(info);
        }
    }
    Ok(listed)
}

/// The stored transcript of `key` (a session's main one, or a subagent's with its subpath)
/// read as a session file is read ([`SessionLog::from_values`]); `None` when the store has
/// nothing there. A session's subagents are [`SessionStore::list_subkeys`].
pub async fn stored_log(
    store: &dyn SessionStore,
    key: &SessionKey,
) -> Result<Option<SessionLog>, StoreError> {
    Ok(store.load(key).await?.map(SessionLog::from_values))
}

/// What a picker shows of the stored session of `key`, read whole; `None` when the store
/// does not hold it, or holds only a subagent's side chain.
pub async fn stored_info(
    store: &dyn SessionStore,
    key: &SessionKey,
) -> Result<Option<SessionInfo>, StoreError> {
    let key = key.main_key();
    let listed = store.list_sessions(&key.project_key).await?;
    let Some(stored) = listed.iter().find(|s| s.session_id == key.session_id) else {
        return Ok(None);
    };
    let Some(values) = store.load(&key).await? else {
        return Ok(None);
    };
    let size = jsonl_size(&values);
    let modified = UNIX_EPOCH + Duration::from_millis(stored.mtime_ms.max(0) as u64);
    let entries = SessionLog::from_values(values).entries;
    Ok(SessionInfo::from_entries(
        key.session_id.as_str(),
        &entries,
        modified,
        size,
    ))
}

/// The size of `entries` as JSONL: one compact line each, with its newline.
fn jsonl_size(entries: &[Value]) -> u64 {
    entries
        .iter()
        .map(|v| serde_json::to_vec(v).map_or(0, |line| line.len() as u64 + 1))
        .sum()
}
