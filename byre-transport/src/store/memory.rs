//! The in-memory session store: for tests, and for a process that hands sessions between its
//! own `Claude`s.

use std::collections::BTreeMap;
use std::sync::Mutex;

use serde_json::Value;

use super::{
    fold_session_summary, now_ms, LeaseVersion, SessionKey, SessionStore, SessionSummary,
    StoreError, StoredLease, StoredSession,
};
use crate::spawn::BoxFuture;

/// A [`SessionStore`] in memory. Each append stamps its transcript with a write time that
/// only goes up (at least a millisecond after the store's previous write), so listings order
/// as written even within one millisecond.
#[derive(Debug, Default)]
pub struct MemoryStore {
    inner: Mutex<Inner>,
}

/// A transcript's place: project, session, subpath.
type Slot = (String, String, Option<String>);

#[derive(Debug, Default)]
struct Inner {
    /// By (project, session, subpath): the entries and when they were last written.
    transcripts: BTreeMap<Slot, (Vec<Value>, i64)>,
    last_mtime: i64,
    /// By (project, session): the summary of the main transcript.
    summaries: BTreeMap<(String, String), SessionSummary>,
    /// By (project, session): the lease record and its version.
    leases: BTreeMap<(String, String), (Vec<u8>, u64)>,
    versions: u64,
}

fn slot(key: &SessionKey) -> Slot {
    (
        key.project_key.clone(),
        key.session_id.clone(),
        key.subpath.clone(),
    )
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> MemoryStore {
        MemoryStore::default()
    }

    /// How many main transcripts it holds.
    pub fn len(&self) -> usize {
        let inner = self.inner.lock().expect("memory store");
        inner.transcripts.keys().filter(|k| k.2.is_none()).count()
    }

    /// Whether it holds no transcript.
    pub fn is_empty(&self) -> bool {
        self.inner
            .lock()
            .expect("memory store")
            .transcripts
            .is_empty()
    }

    /// The entries at `key` (as [`SessionStore::load`] without the await).
    pub fn entries(&self, key: &SessionKey) -> Option<Vec<Value>> {
        let inner = self.inner.lock().expect("memory store");
        inner.transcripts.get(&slot(key)).map(|(e, _)| e.clone())
    }
}

impl SessionStore for MemoryStore {
    fn append<'a>(
        &'a self,
        key: &'a SessionKey,
        entries: &'a [Value],
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            key.validate()?;
            let mut inner = self.inner.lock().expect("memory store");
            let mtime = now_ms().max(inner.last_mtime + 1);
            inner.last_mtime = mtime;
            let (stored, at) = inner.transcripts.entry(slot(key)).or_default();
            stored.extend_from_slice(entries);
            *at = mtime;
            if key.subpath.is_none() {
                let place = (key.project_key.clone(), key.session_id.clone());
                let prev = inner.summaries.remove(&place);
                let mut summary = fold_session_summary(prev, key, entries);
                summary.mtime_ms = mtime;
                inner.summaries.insert(place, summary);
            }
            Ok(())
        })
    }

    fn load<'a>(
        &'a self,
        key: &'a SessionKey,
    ) -> BoxFuture<'a, Result<Option<Vec<Value>>, StoreError>> {
        Box::pin(async move {
            key.validate()?;
            Ok(self.entries(key))
        })
    }

    fn list_sessions<'a>(
        &'a self,
        project_key: &'a str,
    ) -> BoxFuture<'a, Result<Vec<StoredSession>, StoreError>> {
        Box::pin(async move {
            let inner = self.inner.lock().expect("memory store");
            Ok(inner
                .transcripts
                .iter()
                .filter(|((p, _, sub), _)| p == project_key && sub.is_none())
                .map(|((_, s, _), (_, mtime))| StoredSession {
                    session_id: s.clone(),
                    mtime_ms: *mtime,
                })
                .collect())
        })
    }

    fn list_subkeys<'a>(
        &'a self,
        key: &'a SessionKey,
    ) -> BoxFuture<'a, Result<Vec<String>, StoreError>> {
        Box::pin(async move {
            let inner = self.inner.lock().expect("memory store");
            Ok(inner
                .transcripts
                .keys()
                .filter(|(p, s, _)| *p == key.project_key && *s == key.session_id)
                .filter_map(|(_, _, sub)| sub.clone())
                .collect())
        })
    }

    fn delete<'a>(&'a self, key: &'a SessionKey) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            key.validate()?;
            let mut inner = self.inner.lock().expect("memory store");
            match &key.subpath {
                Some(_) => {
                    inner.transcripts.remove(&slot(key));
                }
                None => {
                    inner
                        .transcripts
                        .retain(|(p, s, _), _| *p != key.project_key || *s != key.session_id);
                    let place = (key.project_key.clone(), key.session_id.clone());
                    inner.summaries.remove(&place);
                }
            }
            Ok(())
        })
    }

    fn list_session_summaries<'a>(
        &'a self,
        project_key: &'a str,
    ) -> BoxFuture<'a, Result<Vec<SessionSummary>, StoreError>> {
        Box::pin(async move {
            let inner = self.inner.lock().expect("memory store");
            Ok(inner
                .summaries
                .iter()
                .filter(|((p, _), _)| p == project_key)
                .map(|(_, summary)| summary.clone())
                .collect())
        })
    }

    fn read_lease<'a>(
        &'a self,
        key: &'a SessionKey,
    ) -> BoxFuture<'a, Result<Option<StoredLease>, StoreError>> {
        Box::pin(async move {
            key.validate()?;
            let inner = self.inner.lock().expect("memory store");
            let place = (key.project_key.clone(), key.session_id.clone());
            Ok(inner.leases.get(&place).map(|(record, v)| StoredLease {
                bytes: record.clone(),
                version: LeaseVersion(v.to_string()),
            }))
        })
    }

    fn write_lease<'a>(
        &'a self,
        key: &'a SessionKey,
        record: &'a [u8],
        replacing: Option<&'a LeaseVersion>,
    ) -> BoxFuture<'a, Result<LeaseVersion, StoreError>> {
        Box::pin(async move {
            key.validate()?;
            let mut inner = self.inner.lock().expect("memory store");
            let place = (key.project_key.clone(), key.session_id.clone());
            let current = inner.leases.get(&place).map(|(_, v)| v.to_string());
            if current.as_deref() != replacing.map(|v| v.0.as_str()) {
                return Err(StoreError::Conflict {
                    what: format!("the lease of {}", key.session_id),
                });
            }
            inner.versions += 1;
            let version = inner.versions;
            inner.leases.insert(place, (record.to_vec(), version));
            Ok(LeaseVersion(version.to_string()))
        })
    }
}
