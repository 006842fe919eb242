//! The object-storage session store, over the `object_store` crate (S3 and S3-compatible
//! services, GCS, Azure, a local filesystem). Objects cannot be appended to, so each append
//! is an object of its own and a load reads a transcript's objects in name order.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use futures::TryStreamExt;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use serde_json::Value;

use super::{from_jsonl, now_ms, to_jsonl, SessionKey, SessionStore, StoreError, StoredSession};
use crate::spawn::BoxFuture;

/// A [`SessionStore`] on object storage. Under its prefix, a session's main transcript is
/// `<project>/<session>/main/<part>.jsonl` and a subagent's
/// `<project>/<session>/sub/<subpath>/<part>.jsonl`. A part is named by its write time in
/// milliseconds, a counter and a random tag, so parts read back in the order written (across
/// hosts, in the order of their clocks) and two writers never overwrite each other.
#[derive(Debug, Clone)]
pub struct ObjectSessionStore {
    store: Arc<dyn ObjectStore>,
    prefix: Path,
}

/// Parts written by this process, for the order of parts written in the same millisecond.
static PARTS: AtomicU64 = AtomicU64::new(0);

fn backend(e: object_store::Error) -> StoreError {
    StoreError::Backend(e.to_string())
}

impl ObjectSessionStore {
    /// A store on `store` under `prefix` (empty for the root).
    pub fn new(store: Arc<dyn ObjectStore>, prefix: impl Into<Path>) -> ObjectSessionStore {
        ObjectSessionStore {
            store,
            prefix: prefix.into(),
        }
    }

    /// The store a URL names (`s3://bucket/prefix`, `gs://…`, `az://…`, `file:///…`),
    /// configured from the environment as `object_store` reads it (`AWS_ACCESS_KEY_ID`,
    /// `AWS_SECRET_ACCESS_KEY`, `AWS_REGION`, `AWS_ENDPOINT`, `AWS_ALLOW_HTTP`, and the GCS and
    /// Azure equivalents).
    pub fn from_url(url: &str) -> Result<ObjectSessionStore, StoreError> {
        ObjectSessionStore::from_url_with(url, std::env::vars())
    }

    /// The store a URL names, configured from `options` instead of the environment (the same
    /// names, in any case: `AWS_ENDPOINT` or `aws_endpoint`, …).
    pub fn from_url_with<K, V>(
        url: &str,
        options: impl IntoIterator<Item = (K, V)>,
    ) -> Result<ObjectSessionStore, StoreError>
    where
        K: AsRef<str>,
        V: Into<String>,
    {
        let refuse = |why: String| StoreError::Url {
            url: url.to_owned(),
            why,
        };
        let parsed = url::Url::parse(url).map_err(|e| refuse(e.to_string()))?;
        let options = options
            .into_iter()
            .map(|(k, v)| (k.as_ref().to_ascii_lowercase(), v.into()));
        let (store, prefix) =
            object_store::parse_url_opts(&parsed, options).map_err(|e| refuse(e.to_string()))?;
        Ok(ObjectSessionStore::new(Arc::from(store), prefix))
    }

    /// The folder of `key`'s session.
    fn session_dir(&self, key: &SessionKey) -> Result<Path, StoreError> {
        key.validate()?;
        Ok(self
            .prefix
            .clone()
            .join(key.project_key.as_str())
            .join(key.session_id.as_str()))
    }

    /// The folder that holds the parts of the transcript at `key`.
    fn parts_dir(&self, key: &SessionKey) -> Result<Path, StoreError> {
        let dir = self.session_dir(key)?;
        Ok(match &key.subpath {
            None => dir.join("main"),
            Some(sub) => sub.split('/').fold(dir.join("sub"), |p, s| p.join(s)),
        })
    }

    /// The parts of the transcript at `key` (not those of deeper subpaths), in name order.
    async fn parts(&self, key: &SessionKey) -> Result<Vec<Path>, StoreError> {
        let dir = self.parts_dir(key)?;
        let listed = self
            .store
            .list_with_delimiter(Some(&dir))
            .await
            .map_err(backend)?;
        let mut parts: Vec<Path> = listed
            .objects
            .into_iter()
            .map(|o| o.location)
            .filter(|p| p.filename().is_some_and(|f| f.ends_with(".jsonl")))
            .collect();
        parts.sort();
        Ok(parts)
    }
}

impl SessionStore for ObjectSessionStore {
    fn credential_vars(&self) -> Vec<std::ffi::OsString> {
        super::credential_vars()
    }

    fn append<'a>(
        &'a self,
        key: &'a SessionKey,
        entries: &'a [Value],
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let dir = self.parts_dir(key)?;
            let seq = PARTS.fetch_add(1, Ordering::Relaxed);
            let tag = &crate::sessions::new_uuid()[..8];
            let name = format!("{:013}-{seq:010}-{tag}.jsonl", now_ms());
            let payload = PutPayload::from(to_jsonl(entries));
            self.store
                .put(&dir.join(name), payload)
                .await
                .map_err(backend)?;
            Ok(())
        })
    }

    fn load<'a>(
        &'a self,
        key: &'a SessionKey,
    ) -> BoxFuture<'a, Result<Option<Vec<Value>>, StoreError>> {
        Box::pin(async move {
            let parts = self.parts(key).await?;
            if parts.is_empty() {
                return Ok(None);
            }
            let mut entries = Vec::new();
            for part in parts {
                let bytes = match self.store.get(&part).await {
                    Ok(got) => got.bytes().await.map_err(backend)?,
                    // Deleted between the listing and now.
                    Err(object_store::Error::NotFound { .. }) => continue,
                    Err(e) => return Err(backend(e)),
                };
                entries.extend(from_jsonl(key, &bytes)?);
            }
            Ok(Some(entries))
        })
    }

    fn list_sessions<'a>(
        &'a self,
        project_key: &'a str,
    ) -> BoxFuture<'a, Result<Vec<StoredSession>, StoreError>> {
        Box::pin(async move {
            SessionKey::main(project_key, "x").validate()?;
            let project = self.prefix.clone().join(project_key);
            let depth = project.parts().count();
            let mut sessions: Vec<StoredSession> = Vec::new();
            let mut listed = self.store.list(Some(&project));
            while let Some(meta) = listed.try_next().await.map_err(backend)? {
                let parts: Vec<_> = meta.location.parts().skip(depth).collect();
                let [session, main, _part] = parts.as_slice() else {
                    continue;
                };
                if main.as_ref() != "main" {
                    continue;
                }
                let mtime_ms = meta.last_modified.timestamp_millis();
                match sessions
                    .iter_mut()
                    .find(|s| s.session_id == session.as_ref())
                {
                    Some(s) => s.mtime_ms = s.mtime_ms.max(mtime_ms),
                    None => sessions.push(StoredSession {
                        session_id: session.as_ref().to_owned(),
                        mtime_ms,
                    }),
                }
            }
            Ok(sessions)
        })
    }

    fn list_subkeys<'a>(
        &'a self,
        key: &'a SessionKey,
    ) -> BoxFuture<'a, Result<Vec<String>, StoreError>> {
        Box::pin(async move {
            let sub = self.session_dir(key)?.join("sub");
            let depth = sub.parts().count();
            let mut found: Vec<String> = Vec::new();
            let mut listed = self.store.list(Some(&sub));
            while let Some(meta) = listed.try_next().await.map_err(backend)? {
                let parts: Vec<String> = meta
                    .location
                    .parts()
                    .skip(depth)
                    .map(|p| p.as_ref().to_owned())
                    .collect();
                if parts.len() < 2 {
                    continue;
                }
                let subpath = parts[..parts.len() - 1].join("/");
                if !found.contains(&subpath) {
                    found.push(subpath);
                }
            }
            found.sort();
            Ok(found)
        })
    }

    fn delete<'a>(&'a self, key: &'a SessionKey) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let doomed: Vec<Path> = match &key.subpath {
                Some(_) => self.parts(key).await?,
                None => {
                    let dir = self.session_dir(key)?;
                    self.store
                        .list(Some(&dir))
                        .map_ok(|m| m.location)
                        .try_collect()
                        .await
                        .map_err(backend)?
                }
            };
            for path in doomed {
                match self.store.delete(&path).await {
                    Ok(()) | Err(object_store::Error::NotFound { .. }) => {}
                    Err(e) => return Err(backend(e)),
                }
            }
            Ok(())
        })
    }
}
