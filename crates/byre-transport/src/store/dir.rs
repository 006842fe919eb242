//! The directory session store: transcripts as JSONL files in the CLI's own layout
//! (`<root>/<project>/<session>.jsonl`, subagents under `<root>/<project>/<session>/`).

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{from_jsonl, to_jsonl, SessionKey, SessionStore, StoreError, StoredSession};
use crate::spawn::BoxFuture;

/// A [`SessionStore`] in a directory (a shared volume, a synced folder). Its layout is the
/// one the CLI keeps under `projects/`, so a `DirStore` at `~/.claude/projects` reads the
/// CLI's own sessions. Each append is one `O_APPEND` write of whole lines, made with mode
/// 0600 as the CLI makes its files.
#[derive(Debug, Clone)]
pub struct DirStore {
    root: PathBuf,
}

impl DirStore {
    /// A store rooted at `root` (created on the first append).
    pub fn new(root: impl Into<PathBuf>) -> DirStore {
        DirStore { root: root.into() }
    }

    /// Its root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The file of the transcript at `key`.
    pub fn path(&self, key: &SessionKey) -> Result<PathBuf, StoreError> {
        key.validate()?;
        let project = self.root.join(&key.project_key);
        Ok(match &key.subpath {
            None => project.join(format!("{}.jsonl", key.session_id)),
            Some(sub) => project.join(&key.session_id).join(format!("{sub}.jsonl")),
        })
    }

    fn append_now(&self, key: &SessionKey, entries: &[Value]) -> Result<(), StoreError> {
        let path = self.path(key)?;
        let context = || format!("appending to {}", path.display());
        if let Some(parent) = path.parent() {
            crate::private::create_dir(parent).map_err(|e| StoreError::io(context(), e))?;
        }
        let mut file =
            crate::private::open_file(&path, true).map_err(|e| StoreError::io(context(), e))?;
        // One write of whole lines: a reader never sees half of this append but its end.
        file.write_all(&to_jsonl(entries))
            .map_err(|e| StoreError::io(context(), e))
    }

    fn load_now(&self, key: &SessionKey) -> Result<Option<Vec<Value>>, StoreError> {
        let path = self.path(key)?;
        match fs::read(&path) {
            Ok(bytes) => from_jsonl(key, &bytes).map(Some),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(StoreError::io(format!("reading {}", path.display()), e)),
        }
    }

    fn list_now(&self, project_key: &str) -> Result<Vec<StoredSession>, StoreError> {
        SessionKey::main(project_key, "x").validate()?;
        let dir = self.root.join(project_key);
        let read = match fs::read_dir(&dir) {
            Ok(read) => read,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(StoreError::io(format!("listing {}", dir.display()), e)),
        };
        let mut sessions = Vec::new();
        for entry in read.flatten() {
            let name = entry.file_name();
            let Some(id) = name.to_str().and_then(|n| n.strip_suffix(".jsonl")) else {
                continue;
            };
            let Ok(meta) = entry.metadata() else { continue };
            if !meta.is_file() {
                continue;
            }
            let mtime_ms = meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map(|d| d.as_millis() as i64)
                .unwrap_or_default();
            sessions.push(StoredSession {
                session_id: id.to_owned(),
                mtime_ms,
            });
        }
        Ok(sessions)
    }

    fn subkeys_now(&self, key: &SessionKey) -> Result<Vec<String>, StoreError> {
        let dir = self.path(&key.main_key())?.with_extension("");
        let mut found = Vec::new();
        walk_files(&dir, "", &mut found);
        found.sort();
        Ok(found)
    }

    fn delete_now(&self, key: &SessionKey) -> Result<(), StoreError> {
        let path = self.path(key)?;
        let gone = |r: io::Result<()>| match r {
            Err(e) if e.kind() != io::ErrorKind::NotFound => {
                Err(StoreError::io(format!("deleting {}", path.display()), e))
            }
            _ => Ok(()),
        };
        gone(fs::remove_file(&path))?;
        if key.subpath.is_none() {
            gone(fs::remove_dir_all(path.with_extension("")))?;
        }
        Ok(())
    }
}

/// Every `*.jsonl` below `dir`, as paths relative to where the walk started (`prefix`),
/// without the extension.
pub(super) fn walk_files(dir: &Path, prefix: &str, found: &mut Vec<String>) {
    let Ok(read) = fs::read_dir(dir) else { return };
    for entry in read.flatten() {
        let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
            continue;
        };
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let rel = if prefix.is_empty() {
            name.clone()
        } else {
            format!("{prefix}/{name}")
        };
        if kind.is_dir() {
            walk_files(&entry.path(), &rel, found);
        } else if let Some(stem) = rel.strip_suffix(".jsonl") {
            found.push(stem.to_owned());
        }
    }
}

/// Runs blocking file work off the async threads.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, StoreError> + Send + 'static,
) -> Result<T, StoreError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| StoreError::Backend(format!("the store's file task failed: {e}")))?
}

impl SessionStore for DirStore {
    fn append<'a>(
        &'a self,
        key: &'a SessionKey,
        entries: &'a [Value],
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        let (store, key, entries) = (self.clone(), key.clone(), entries.to_vec());
        Box::pin(blocking(move || store.append_now(&key, &entries)))
    }

    fn load<'a>(
        &'a self,
        key: &'a SessionKey,
    ) -> BoxFuture<'a, Result<Option<Vec<Value>>, StoreError>> {
        let (store, key) = (self.clone(), key.clone());
        Box::pin(blocking(move || store.load_now(&key)))
    }

    fn list_sessions<'a>(
        &'a self,
        project_key: &'a str,
    ) -> BoxFuture<'a, Result<Vec<StoredSession>, StoreError>> {
        let (store, project_key) = (self.clone(), project_key.to_owned());
        Box::pin(blocking(move || store.list_now(&project_key)))
    }

    fn list_subkeys<'a>(
        &'a self,
        key: &'a SessionKey,
    ) -> BoxFuture<'a, Result<Vec<String>, StoreError>> {
        let (store, key) = (self.clone(), key.clone());
        Box::pin(blocking(move || store.subkeys_now(&key)))
    }

    fn delete<'a>(&'a self, key: &'a SessionKey) -> BoxFuture<'a, Result<(), StoreError>> {
        let (store, key) = (self.clone(), key.clone());
        Box::pin(blocking(move || store.delete_now(&key)))
    }
}
