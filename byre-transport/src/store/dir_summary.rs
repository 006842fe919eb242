//! The directory store's session summaries: `<root>/<project>/<session>.summary` holds a
//! session's summary and the length of the transcript it covers, rewritten whole (through a
//! temporary file and a rename) after each append to the main transcript.

use std::fs;
use std::io::{self, Write};
use std::path::PathBuf;

use super::dir::{private_file, read_no_follow, DirStore};
use super::{fold_session_summary, from_jsonl, SessionKey, SessionSummary, StoreError};

/// What a summary file holds.
#[derive(serde::Serialize, serde::Deserialize)]
struct Record {
    /// The transcript's length in bytes when the summary was folded: a transcript of another
    /// length was written to without it (another writer, a failed summary write).
    bytes: u64,
    summary: SessionSummary,
}

impl DirStore {
    /// The summary file of `key`'s session.
    fn summary_path(&self, key: &SessionKey) -> Result<PathBuf, StoreError> {
        Ok(self.path(&key.main_key())?.with_extension("summary"))
    }

    /// Folds `jsonl`, just appended to the main transcript of `key` (which was `before`
    /// bytes long), into the session's summary; a summary that does not cover those `before`
    /// bytes (missing, unreadable, or folded at another length) is made again from the
    /// whole transcript.
    pub(super) fn fold_summary_now(
        &self,
        key: &SessionKey,
        before: u64,
        jsonl: &[u8],
    ) -> Result<(), StoreError> {
        let transcript = self.path(key)?;
        let path = self.summary_path(key)?;
        self.inside(&path)?;
        let context = || format!("writing {}", path.display());
        let prev = read_no_follow(&path)
            .ok()
            .and_then(|bytes| serde_json::from_slice::<Record>(&bytes).ok())
            .filter(|record| record.bytes == before);
        let summary = match prev {
            Some(record) => {
                fold_session_summary(Some(record.summary), key, &from_jsonl(key, jsonl).0)
            }
            None => {
                let all = self.load_now(key)?.map(|l| l.entries).unwrap_or_default();
                fold_session_summary(None, key, &all)
            }
        };
        let bytes = fs::metadata(&transcript)
            .map_err(|e| StoreError::io(context(), e))?
            .len();
        let record = serde_json::to_vec(&Record { bytes, summary })
            .map_err(|e| StoreError::io(context(), io::Error::other(e)))?;
        let temporary = path.with_extension("summary.tmp");
        self.inside(&temporary)?;
        let mut file = private_file(&temporary, false).map_err(|e| StoreError::io(context(), e))?;
        file.write_all(&record)
            .and_then(|()| fs::rename(&temporary, &path))
            .map_err(|e| StoreError::io(context(), e))
    }

    /// The summaries of a project's sessions that cover their whole transcript, each with
    /// the transcript's time.
    pub(super) fn summaries_now(
        &self,
        project_key: &str,
    ) -> Result<Vec<SessionSummary>, StoreError> {
        SessionKey::main(project_key, "x").validate()?;
        let dir = self.root().join(project_key);
        self.inside(&dir)?;
        let read = match fs::read_dir(&dir) {
            Ok(read) => read,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(StoreError::io(format!("listing {}", dir.display()), e)),
        };
        let mut found = Vec::new();
        for entry in read.flatten() {
            let path = entry.path();
            if path.extension().is_none_or(|e| e != "summary") {
                continue;
            }
            let Some(record) = read_no_follow(&path)
                .ok()
                .and_then(|bytes| serde_json::from_slice::<Record>(&bytes).ok())
            else {
                continue;
            };
            let Ok(meta) = fs::symlink_metadata(path.with_extension("jsonl")) else {
                continue;
            };
            if !meta.is_file() || meta.len() != record.bytes {
                continue;
            }
            let mut summary = record.summary;
            summary.mtime_ms = super::dir::mtime_ms(&meta);
            found.push(summary);
        }
        Ok(found)
    }

    /// Removes the summary of `key`'s session.
    pub(super) fn delete_summary_now(&self, key: &SessionKey) -> Result<(), StoreError> {
        let path = self.summary_path(key)?;
        match fs::remove_file(&path) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => {
                Err(StoreError::io(format!("deleting {}", path.display()), e))
            }
            _ => Ok(()),
        }
    }
}
