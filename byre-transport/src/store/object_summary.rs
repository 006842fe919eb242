//! The object store's session summaries: `<project>/<session>/summary.json` holds a session's
//! summary and how many parts of the main transcript it covers, rewritten whole after each
//! append to the main transcript.

use futures::TryStreamExt;
use object_store::path::Path;
use object_store::{ObjectStoreExt, PutPayload};
use std::collections::HashMap;

use super::object::{backend, parts_below, ObjectSessionStore};
use super::{fold_session_summary, from_jsonl, Batch, SessionKey, SessionSummary, StoreError};

/// What a summary object holds.
#[derive(serde::Serialize, serde::Deserialize)]
struct Record {
    /// How many parts the main transcript had when the summary was folded: a transcript
    /// with another count was written to without it.
    parts: usize,
    summary: SessionSummary,
}

impl ObjectSessionStore {
    /// The summary object of `key`'s session.
    fn summary_path(&self, key: &SessionKey) -> Result<Path, StoreError> {
        Ok(self.session_dir(key)?.join("summary.json"))
    }

    /// The record at `path`; `None` when there is none or it does not decode.
    async fn record(&self, path: &Path) -> Result<Option<Record>, StoreError> {
        match self.store().get(path).await {
            Ok(got) => {
                let bytes = got.bytes().await.map_err(backend)?;
                Ok(serde_json::from_slice(&bytes).ok())
            }
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(backend(e)),
        }
    }

    /// Folds `batch`, just stored as a part of the main transcript of `key`, into the
    /// session's summary. A summary that covers one part fewer than there are now takes the
    /// batch; one that covers them all already (the batch was stored again) stays; any other
    /// is made again from the whole transcript.
    pub(super) async fn fold_summary(
        &self,
        key: &SessionKey,
        batch: &Batch,
    ) -> Result<(), StoreError> {
        let path = self.summary_path(key)?;
        let prev = self.record(&path).await?;
        let parts = self.parts(key).await?.len();
        let summary = match prev {
            Some(record) if record.parts == parts => return Ok(()),
            Some(record) if record.parts + 1 == parts => {
                let entries = from_jsonl(key, batch.jsonl()).0;
                fold_session_summary(Some(record.summary), key, &entries)
            }
            _ => {
                let all = self.load_checked_parts(key).await?;
                fold_session_summary(None, key, &all)
            }
        };
        let record = serde_json::to_vec(&Record { parts, summary })
            .map_err(|e| StoreError::Backend(format!("encoding a summary: {e}")))?;
        self.store()
            .put(&path, PutPayload::from(record))
            .await
            .map_err(backend)?;
        Ok(())
    }

    /// Every entry of the transcript at `key`, in order.
    async fn load_checked_parts(
        &self,
        key: &SessionKey,
    ) -> Result<Vec<serde_json::Value>, StoreError> {
        use super::SessionStore;
        Ok(self.load(key).await?.unwrap_or_default())
    }

    /// The summaries of a project's sessions that cover every part of their main transcript,
    /// each with the time of its newest part: one listing of the project, and one read per
    /// summary.
    pub(super) async fn summaries(
        &self,
        project_key: &str,
    ) -> Result<Vec<SessionSummary>, StoreError> {
        SessionKey::main(project_key, "x").validate()?;
        let project = self.prefix().clone().join(project_key);
        let depth = project.parts().count();
        // By session: its main parts, their newest time, and its summary object.
        let mut sessions: HashMap<String, (usize, i64, Option<Path>)> = HashMap::new();
        let mut listed = self.store().list(Some(&project));
        while let Some(meta) = listed.try_next().await.map_err(backend)? {
            let parts = parts_below(&meta.location, depth);
            match parts.as_slice() {
                [session, main, _part] if main == "main" => {
                    let slot = sessions.entry(session.clone()).or_default();
                    slot.0 += 1;
                    slot.1 = slot.1.max(meta.last_modified.timestamp_millis());
                }
                [session, name] if name == "summary.json" => {
                    sessions.entry(session.clone()).or_default().2 = Some(meta.location);
                }
                _ => {}
            }
        }
        let mut found = Vec::new();
        for (parts, mtime_ms, path) in sessions.into_values() {
            let Some(path) = path else { continue };
            let Some(record) = self.record(&path).await? else {
                continue;
            };
            if parts == 0 || record.parts != parts {
                continue;
            }
            let mut summary = record.summary;
            summary.mtime_ms = mtime_ms;
            found.push(summary);
        }
        Ok(found)
    }
}
