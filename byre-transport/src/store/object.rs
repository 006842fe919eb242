//! The object-storage session store, over the `object_store` crate (S3 and S3-compatible
//! services, GCS, Azure, a local filesystem). Objects cannot be appended to, so each append
//! is an object of its own and a load reads a transcript's objects in name order.

use std::sync::Arc;

use futures::TryStreamExt;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutMode, PutPayload, UpdateVersion};
use serde_json::Value;

use super::{
    from_jsonl, Batch, LeaseVersion, Loaded, SessionKey, SessionStore, SessionSummary, StoreError,
    StoredLease, StoredSession,
};
use crate::spawn::BoxFuture;

/// A [`SessionStore`] on object storage. Under its prefix, a session's main transcript is
/// `<project>/<session>/main/<part>.jsonl` and a subagent's
/// `<project>/<session>/sub/<subpath>/<part>.jsonl`. A part is named by its batch's
/// [`id`](Batch::id) (the time in milliseconds, a counter and a random tag), so parts read
/// back in the order written (across hosts, in the order of their clocks), two writers never
/// overwrite each other, and a batch stored again after a lost answer is one part still. The
/// session's lease is `<project>/<session>/lease.json`, written with the service's
/// conditional writes (`If-None-Match` / `If-Match` on S3), and its summary
/// `<project>/<session>/summary.json`.
#[derive(Debug, Clone)]
pub struct ObjectSessionStore {
    store: Arc<dyn ObjectStore>,
    prefix: Path,
}

impl ObjectSessionStore {
    /// The service.
    pub(super) fn store(&self) -> &Arc<dyn ObjectStore> {
        &self.store
    }

    /// The prefix every key is under.
    pub(super) fn prefix(&self) -> &Path {
        &self.prefix
    }
}

/// Retries of one request to a cloud store: three, within 10 s.
fn retry_config() -> object_store::RetryConfig {
    object_store::RetryConfig {
        backoff: object_store::BackoffConfig::default(),
        max_retries: 3,
        retry_timeout: std::time::Duration::from_secs(10),
    }
}

pub(super) fn backend(e: object_store::Error) -> StoreError {
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
        let options: Vec<(String, String)> = options
            .into_iter()
            .map(|(k, v)| (k.as_ref().to_ascii_lowercase(), v.into()))
            .collect();
        let (scheme, path) =
            object_store::ObjectStoreScheme::parse(&parsed).map_err(|e| refuse(e.to_string()))?;
        let prefix = Path::parse(path).map_err(|e| refuse(e.to_string()))?;
        // The cloud stores retry a few times, briefly: a store that is down or refuses the
        // connection is reported in about a second, not after minutes of backoff (the mirror
        // tries a failed batch again itself).
        macro_rules! build {
            ($builder:ty) => {{
                let builder = options.iter().fold(
                    <$builder>::new().with_url(url).with_retry(retry_config()),
                    |builder, (key, value)| match key.parse() {
                        Ok(key) => builder.with_config(key, value),
                        Err(_) => builder,
                    },
                );
                Arc::new(builder.build().map_err(|e| refuse(e.to_string()))?)
                    as Arc<dyn ObjectStore>
            }};
        }
        use object_store::ObjectStoreScheme as Scheme;
        let store = match scheme {
            Scheme::AmazonS3 => build!(object_store::aws::AmazonS3Builder),
            Scheme::GoogleCloudStorage => build!(object_store::gcp::GoogleCloudStorageBuilder),
            Scheme::MicrosoftAzure => build!(object_store::azure::MicrosoftAzureBuilder),
            _ => {
                let (store, _) = object_store::parse_url_opts(&parsed, options)
                    .map_err(|e| refuse(e.to_string()))?;
                Arc::from(store)
            }
        };
        Ok(ObjectSessionStore::new(store, prefix))
    }

    /// The folder of `key`'s session.
    pub(super) fn session_dir(&self, key: &SessionKey) -> Result<Path, StoreError> {
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

    /// The object that holds the lease of `key`'s session.
    fn lease_path(&self, key: &SessionKey) -> Result<Path, StoreError> {
        Ok(self.session_dir(key)?.join("lease.json"))
    }

    /// The parts of the transcript at `key` (not those of deeper subpaths), in name order.
    pub(super) async fn parts(&self, key: &SessionKey) -> Result<Vec<Path>, StoreError> {
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
        Box::pin(async move { self.append_batch(key, &Batch::new(entries)).await })
    }

    fn append_batch<'a>(
        &'a self,
        key: &'a SessionKey,
        batch: &'a Batch,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            if batch.is_empty() {
                return Ok(());
            }
            let part = self.parts_dir(key)?.join(format!("{}.jsonl", batch.id()));
            // Named by the batch: written again, it is the same object.
            let payload = PutPayload::from(batch.jsonl().clone());
            self.store.put(&part, payload).await.map_err(backend)?;
            if key.subpath.is_none() {
                self.fold_summary(key, batch).await?;
            }
            Ok(())
        })
    }

    fn load<'a>(
        &'a self,
        key: &'a SessionKey,
    ) -> BoxFuture<'a, Result<Option<Vec<Value>>, StoreError>> {
        Box::pin(async move {
            let loaded = self.load_checked(key).await?;
            Ok(loaded.map(|loaded| loaded.entries))
        })
    }

    fn load_checked<'a>(
        &'a self,
        key: &'a SessionKey,
    ) -> BoxFuture<'a, Result<Option<Loaded>, StoreError>> {
        Box::pin(async move {
            let parts = self.parts(key).await?;
            if parts.is_empty() {
                return Ok(None);
            }
            let mut loaded = Loaded::default();
            for part in parts {
                let bytes = match self.store.get(&part).await {
                    Ok(got) => got.bytes().await.map_err(backend)?,
                    // Deleted between the listing and now.
                    Err(object_store::Error::NotFound { .. }) => continue,
                    Err(e) => return Err(backend(e)),
                };
                let (entries, skipped) = from_jsonl(key, &bytes);
                loaded.entries.extend(entries);
                loaded.skipped.extend(skipped.into_iter().map(|mut line| {
                    line.key = part.to_string();
                    line
                }));
            }
            Ok(Some(loaded))
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

    fn list_session_summaries<'a>(
        &'a self,
        project_key: &'a str,
    ) -> BoxFuture<'a, Result<Vec<SessionSummary>, StoreError>> {
        Box::pin(self.summaries(project_key))
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
                let parts = parts_below(&meta.location, depth);
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

    fn read_lease<'a>(
        &'a self,
        key: &'a SessionKey,
    ) -> BoxFuture<'a, Result<Option<StoredLease>, StoreError>> {
        Box::pin(async move {
            let path = self.lease_path(key)?;
            let got = match self.store.get(&path).await {
                Ok(got) => got,
                Err(object_store::Error::NotFound { .. }) => return Ok(None),
                Err(e) => return Err(backend(e)),
            };
            let version = UpdateVersion {
                e_tag: got.meta.e_tag.clone(),
                version: got.meta.version.clone(),
            };
            let bytes = got.bytes().await.map_err(backend)?;
            Ok(Some(StoredLease {
                bytes: bytes.to_vec(),
                version: to_version(version),
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
            let path = self.lease_path(key)?;
            let mode = match replacing {
                None => PutMode::Create,
                Some(version) => PutMode::Update(from_version(version)),
            };
            let payload = PutPayload::from(record.to_vec());
            match self.store.put_opts(&path, payload, mode.into()).await {
                Ok(put) => Ok(to_version(put.into())),
                Err(
                    object_store::Error::AlreadyExists { .. }
                    | object_store::Error::Precondition { .. },
                ) => Err(StoreError::Conflict {
                    what: format!("the lease {path}"),
                }),
                Err(object_store::Error::NotImplemented { .. }) => {
                    Err(StoreError::Unsupported("write conditionally (for a lease)"))
                }
                Err(e) => Err(backend(e)),
            }
        })
    }
}

/// A version of an object as a lease version: its e-tag and version, a line each.
fn to_version(version: UpdateVersion) -> LeaseVersion {
    LeaseVersion(format!(
        "{}\n{}",
        version.e_tag.unwrap_or_default(),
        version.version.unwrap_or_default()
    ))
}

/// The object version a lease version names.
fn from_version(version: &LeaseVersion) -> UpdateVersion {
    let (e_tag, version) = version.0.split_once('\n').unwrap_or((&version.0, ""));
    let some = |s: &str| (!s.is_empty()).then(|| s.to_owned());
    UpdateVersion {
        e_tag: some(e_tag),
        version: some(version),
    }
}

/// The parts of `location` below its first `depth` ones.
pub(super) fn parts_below(location: &Path, depth: usize) -> Vec<String> {
    location
        .parts()
        .skip(depth)
        .map(|p| p.as_ref().to_owned())
        .collect()
}
