//! The directory session store: transcripts as JSONL files in the CLI's own layout
//! (`<root>/<project>/<session>.jsonl`, subagents under `<root>/<project>/<session>/`), each
//! session's lease in `<root>/<project>/<session>.lease`.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{
    from_jsonl, Batch, LeaseVersion, Loaded, SessionKey, SessionStore, SessionSummary, StoreError,
    StoredLease, StoredSession,
};
use crate::spawn::BoxFuture;

/// A [`SessionStore`] in a directory (a shared volume, a synced folder). Its layout is the
/// one the CLI keeps under `projects/`, so a `DirStore` at `~/.claude/projects` reads the
/// CLI's own sessions. Each append is one `O_APPEND` write of whole lines, made with mode
/// 0600 as the CLI makes its files (folders 0700); a batch tried again after its write landed
/// (the file already ends with it) is not written twice. A path below the root that is a symbolic
/// link is refused: the store never reads or writes outside its root. The lease is written
/// under an exclusive `flock` of `<session>.lease.lock`, so it holds between processes on
/// one host and on shared file systems that carry such locks.
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

    /// Refuses a path below the root that is, or passes through, a symbolic link.
    pub(super) fn inside(&self, path: &Path) -> Result<(), StoreError> {
        let Ok(below) = path.strip_prefix(&self.root) else {
            return Ok(());
        };
        let mut at = self.root.clone();
        for part in below.components() {
            at.push(part);
            match fs::symlink_metadata(&at) {
                Ok(meta) if meta.file_type().is_symlink() => {
                    return Err(StoreError::io(
                        format!(
                            "{} is a symbolic link: refused (it may lead out of the store's root)",
                            at.display()
                        ),
                        io::Error::from(io::ErrorKind::InvalidInput),
                    ))
                }
                Ok(_) => {}
                // Nothing below a missing part can be a link.
                Err(_) => break,
            }
        }
        Ok(())
    }

    /// Creates the folders above `path` (0700), after checking the path stays inside.
    fn make_parent(&self, path: &Path) -> io::Result<()> {
        let Some(parent) = path.parent() else {
            return Ok(());
        };
        let mut builder = fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(parent)
    }

    fn append_now(&self, key: &SessionKey, jsonl: &[u8]) -> Result<(), StoreError> {
        let path = self.path(key)?;
        self.inside(&path)?;
        let context = || format!("appending to {}", path.display());
        self.make_parent(&path)
            .map_err(|e| StoreError::io(context(), e))?;
        // Created between the check and now: still refused.
        self.inside(&path)?;
        let mut file = private_file(&path, true).map_err(|e| StoreError::io(context(), e))?;
        if ends_with(&file, jsonl).map_err(|e| StoreError::io(context(), e))? {
            // The same batch tried again after its write landed (a lost answer, a timeout):
            // its entries (each with its own uuid and time) are there already.
            return Ok(());
        }
        let before = file
            .metadata()
            .map_err(|e| StoreError::io(context(), e))?
            .len();
        // One write of whole lines: a reader never sees half of this append but its end.
        file.write_all(jsonl)
            .map_err(|e| StoreError::io(context(), e))?;
        if key.subpath.is_none() && !jsonl.is_empty() {
            self.fold_summary_now(key, before, jsonl)?;
        }
        Ok(())
    }

    pub(super) fn load_now(&self, key: &SessionKey) -> Result<Option<Loaded>, StoreError> {
        let path = self.path(key)?;
        self.inside(&path)?;
        match read_no_follow(&path) {
            Ok(bytes) => {
                let (entries, skipped) = from_jsonl(key, &bytes);
                Ok(Some(Loaded { entries, skipped }))
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(StoreError::io(format!("reading {}", path.display()), e)),
        }
    }

    /// The lease file of `key`'s session.
    fn lease_path(&self, key: &SessionKey) -> Result<PathBuf, StoreError> {
        Ok(self.path(&key.main_key())?.with_extension("lease"))
    }

    fn read_lease_now(&self, key: &SessionKey) -> Result<Option<StoredLease>, StoreError> {
        let path = self.lease_path(key)?;
        self.inside(&path)?;
        match read_no_follow(&path) {
            Ok(bytes) => {
                let version = content_version(&bytes);
                Ok(Some(StoredLease { bytes, version }))
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(StoreError::io(format!("reading {}", path.display()), e)),
        }
    }

    fn write_lease_now(
        &self,
        key: &SessionKey,
        record: &[u8],
        replacing: Option<&LeaseVersion>,
    ) -> Result<LeaseVersion, StoreError> {
        let path = self.lease_path(key)?;
        self.inside(&path)?;
        let context = || format!("writing the lease {}", path.display());
        self.make_parent(&path)
            .map_err(|e| StoreError::io(context(), e))?;
        let lock_path = path.with_extension("lease.lock");
        self.inside(&lock_path)?;
        let lock = private_file(&lock_path, false).map_err(|e| StoreError::io(context(), e))?;
        // Held until this returns: read, compare and write are one step for every writer
        // that takes the lock.
        let _lock = nix::fcntl::Flock::lock(lock, nix::fcntl::FlockArg::LockExclusive)
            .map_err(|(_, errno)| StoreError::io(context(), io::Error::from(errno)))?;
        let current = match read_no_follow(&path) {
            Ok(bytes) => Some(content_version(&bytes)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(StoreError::io(context(), e)),
        };
        if current.as_ref() != replacing {
            return Err(StoreError::Conflict {
                what: format!("the lease {}", path.display()),
            });
        }
        let temp = path.with_extension(format!("lease.{}", &crate::sessions::new_uuid()[..8]));
        let written = private_file(&temp, false)
            .and_then(|mut file| file.write_all(record).and_then(|()| file.sync_all()))
            .and_then(|()| fs::rename(&temp, &path));
        if let Err(e) = written {
            let context = match fs::remove_file(&temp) {
                Ok(()) => context(),
                Err(left) => format!("{} ({} stays: {left})", context(), temp.display()),
            };
            return Err(StoreError::io(context, e));
        }
        Ok(content_version(record))
    }

    fn list_now(&self, project_key: &str) -> Result<Vec<StoredSession>, StoreError> {
        SessionKey::main(project_key, "x").validate()?;
        let dir = self.root.join(project_key);
        self.inside(&dir)?;
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
            sessions.push(StoredSession {
                session_id: id.to_owned(),
                mtime_ms: mtime_ms(&meta),
            });
        }
        Ok(sessions)
    }

    fn subkeys_now(&self, key: &SessionKey) -> Result<Vec<String>, StoreError> {
        let dir = self.path(&key.main_key())?.with_extension("");
        self.inside(&dir)?;
        let mut found = Vec::new();
        walk_files(&dir, "", &mut found);
        found.sort();
        Ok(found)
    }

    fn delete_now(&self, key: &SessionKey) -> Result<(), StoreError> {
        let path = self.path(key)?;
        self.inside(&path)?;
        self.inside(&path.with_extension(""))?;
        let gone = |r: io::Result<()>| match r {
            Err(e) if e.kind() != io::ErrorKind::NotFound => {
                Err(StoreError::io(format!("deleting {}", path.display()), e))
            }
            _ => Ok(()),
        };
        gone(fs::remove_file(&path))?;
        if key.subpath.is_none() {
            gone(fs::remove_dir_all(path.with_extension("")))?;
            self.delete_summary_now(key)?;
        }
        Ok(())
    }
}

/// A file opened for writing with mode 0600, never through a symbolic link (`append`: at
/// its end; else from its start, truncated).
pub(super) fn private_file(path: &Path, append: bool) -> io::Result<fs::File> {
    let mut open = fs::OpenOptions::new();
    open.create(true);
    if append {
        open.read(true).append(true);
    } else {
        open.write(true).truncate(true);
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        open.mode(0o600)
            .custom_flags(nix::fcntl::OFlag::O_NOFOLLOW.bits());
    }
    open.open(path)
}

/// A file's modification time in milliseconds since the Unix epoch.
pub(super) fn mtime_ms(meta: &fs::Metadata) -> i64 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_millis() as i64)
        .unwrap_or_default()
}

/// Whether `file` ends with `bytes` (a batch appended already).
fn ends_with(file: &fs::File, bytes: &[u8]) -> io::Result<bool> {
    let len = file.metadata()?.len();
    let want = bytes.len() as u64;
    if bytes.is_empty() || len < want {
        return Ok(false);
    }
    let mut tail = vec![0; bytes.len()];
    #[cfg(unix)]
    std::os::unix::fs::FileExt::read_exact_at(file, &mut tail, len - want)?;
    #[cfg(not(unix))]
    {
        use std::io::{Read, Seek, SeekFrom};
        let mut file = file;
        file.seek(SeekFrom::Start(len - want))?;
        file.read_exact(&mut tail)?;
    }
    Ok(tail == bytes)
}

/// A file's bytes, never read through a symbolic link.
pub(super) fn read_no_follow(path: &Path) -> io::Result<Vec<u8>> {
    let mut open = fs::OpenOptions::new();
    open.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(
        &mut open,
        nix::fcntl::OFlag::O_NOFOLLOW.bits(),
    );
    let mut bytes = Vec::new();
    io::Read::read_to_end(&mut open.open(path)?, &mut bytes)?;
    Ok(bytes)
}

/// A version for a lease file: its length and an FNV-1a hash of its bytes (a record holds a
/// token of its own, so two records never share one).
fn content_version(bytes: &[u8]) -> LeaseVersion {
    let hash = bytes.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    LeaseVersion(format!("{}-{hash:016x}", bytes.len()))
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
        Box::pin(async move { self.append_batch(key, &Batch::new(entries)).await })
    }

    fn append_batch<'a>(
        &'a self,
        key: &'a SessionKey,
        batch: &'a Batch,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        let (store, key, jsonl) = (self.clone(), key.clone(), batch.jsonl().clone());
        Box::pin(blocking(move || store.append_now(&key, &jsonl)))
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
        let (store, key) = (self.clone(), key.clone());
        Box::pin(blocking(move || store.load_now(&key)))
    }

    fn read_lease<'a>(
        &'a self,
        key: &'a SessionKey,
    ) -> BoxFuture<'a, Result<Option<StoredLease>, StoreError>> {
        let (store, key) = (self.clone(), key.clone());
        Box::pin(blocking(move || store.read_lease_now(&key)))
    }

    fn write_lease<'a>(
        &'a self,
        key: &'a SessionKey,
        record: &'a [u8],
        replacing: Option<&'a LeaseVersion>,
    ) -> BoxFuture<'a, Result<LeaseVersion, StoreError>> {
        let (store, key, record) = (self.clone(), key.clone(), record.to_vec());
        let replacing = replacing.cloned();
        Box::pin(blocking(move || {
            store.write_lease_now(&key, &record, replacing.as_ref())
        }))
    }

    fn list_sessions<'a>(
        &'a self,
        project_key: &'a str,
    ) -> BoxFuture<'a, Result<Vec<StoredSession>, StoreError>> {
        let (store, project_key) = (self.clone(), project_key.to_owned());
        Box::pin(blocking(move || store.list_now(&project_key)))
    }

    fn list_session_summaries<'a>(
        &'a self,
        project_key: &'a str,
    ) -> BoxFuture<'a, Result<Vec<SessionSummary>, StoreError>> {
        let (store, project_key) = (self.clone(), project_key.to_owned());
        Box::pin(blocking(move || store.summaries_now(&project_key)))
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
