//! Sessions in a store, the driver's side: the options, checking the store answers and
//! taking a resumed session's lease before the CLI starts, loading a stored session into a
//! scratch config directory, the task that keeps the lease, and the task that appends the
//! core's mirror batches to the store (in order, retried, with a backlog bounded in bytes).

use std::path::PathBuf;
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use byre_proto::SessionKey;
use byre_transport::store::{
    acquire_lease, materialize, Batch, Lease, Materialized, SessionStore, StoreError,
    DEFAULT_LEASE_TTL,
};
use tokio::sync::{mpsc, oneshot};

use super::error::{Error, UsageError};
use super::options::Options;
use crate::session::{MirrorBatch, MirrorConfig, MirrorFlush};

/// How long one append may take before it counts as failed.
const APPEND_TIMEOUT: Duration = Duration::from_secs(60);
/// How long loading a stored session may take, unless [`Options::store_load_timeout`] says.
const LOAD_TIMEOUT: Duration = Duration::from_secs(60);
/// How long the store may take to answer the check before a new session starts, unless
/// [`Options::store_load_timeout`] says.
const CHECK_TIMEOUT: Duration = Duration::from_secs(15);
/// How long giving the lease back at close may take.
const RELEASE_TIMEOUT: Duration = Duration::from_secs(10);
/// The waits before the second and third attempts of a failed append.
const RETRY_WAITS: [Duration; 2] = [Duration::from_millis(200), Duration::from_millis(800)];
/// Bytes of entries (as the JSONL they are held as) that may wait for a slow store before new
/// batches are dropped (and reported): the CLI's own files keep everything.
pub(super) const MIRROR_BACKLOG: usize = 64 << 20;

impl Options {
    /// Mirrors the session to `store` as it runs (the CLI's `--session-mirror`): each
    /// session file entry the CLI writes, its subagents' too, is appended under the key
    /// (project of the working directory, session id). With [`Options::resume`] or
    /// [`Options::continue_conversation`], the session is loaded from the store first, so it
    /// resumes on a machine that never ran it. A store failure is an
    /// [`Event::MirrorFailed`](crate::Event::MirrorFailed), never a stalled stream; the
    /// CLI's local files are written as always. [`Claude::close`](crate::Claude::close) waits
    /// for what is still on its way to the store.
    pub fn session_store(mut self, store: Arc<dyn SessionStore>) -> Self {
        self.store = Some(store);
        self
    }

    /// The project key the session is stored and looked up under, instead of the CLI's name
    /// for the working directory (`-home-me-repo`): for a session that moves between
    /// directories (hosts that check the repository out in different places), or sessions
    /// grouped by something else.
    pub fn store_project(mut self, key: impl Into<String>) -> Self {
        self.store_project = Some(key.into());
        self
    }

    /// How long the store may take at start before the start fails: loading a stored session
    /// for a resume or continue (60 s by default), or, for a new session, answering a check
    /// that it can be reached (a listing under the project; 15 s by default). A store that
    /// hangs, or a bucket that does not exist, fails the start instead of the session's
    /// writes.
    pub fn store_load_timeout(mut self, timeout: Duration) -> Self {
        self.store_load_timeout = Some(timeout);
        self
    }

    /// How long a resumed stored session's lease lasts unless renewed (30 s by default;
    /// renewed every third of it while the session runs). A resume or continue of a stored
    /// session takes its lease first, so that one writer at a time appends to it: a second
    /// resume while it runs fails with [`StoreError::Held`] (naming the holder and since
    /// when), instead of forking the stored session. A holder that was killed leaves its
    /// lease to expire after this long. A fork
    /// ([`Options::fork_session`](crate::Options::fork_session)) writes a new session and
    /// takes no lease.
    pub fn store_lease_ttl(mut self, ttl: Duration) -> Self {
        self.store_lease_ttl = Some(ttl.max(Duration::from_millis(300)));
        self
    }

    /// How long a resume may wait for a stored session's lease held by another writer
    /// before it fails with [`StoreError::Held`] (not at all by default).
    pub fn store_lease_wait(mut self, wait: Duration) -> Self {
        self.store_lease_wait = wait;
        self
    }

    /// When mirrored entries go to the store: [`MirrorFlush::Batched`] (the default: at each
    /// turn's end) or [`MirrorFlush::Eager`].
    pub fn store_flush(mut self, flush: MirrorFlush) -> Self {
        self.store_flush = flush;
        self
    }
}

/// What a session with a store keeps while it runs.
pub(super) struct StoreRun {
    pub(super) worker: MirrorWorker,
    /// The scratch config directory a stored session was loaded into, kept until the
    /// driver ends (its drop removes it).
    pub(super) scratch: Option<Materialized>,
    pub(super) config: MirrorConfig,
    /// The resumed session's lease, kept by a task of its own.
    pub(super) lease: Option<LeaseKeeper>,
}

/// The config directory the CLI will use: `CLAUDE_CONFIG_DIR` or `HOME` as the options set
/// them for the CLI, else as this process has them.
fn cli_config_dir(options: &Options) -> Option<PathBuf> {
    let env = |name: &str| {
        options
            .launch
            .env
            .iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| PathBuf::from(v))
            .filter(|v| !v.as_os_str().is_empty())
    };
    if let Some(dir) = env("CLAUDE_CONFIG_DIR") {
        return Some(dir);
    }
    if let Some(home) = env("HOME") {
        return Some(home.join(".claude"));
    }
    byre_transport::config_dir()
}

/// Sets the launch up for a store: the mirror flag; for a new session a check that the store
/// answers; for a resume or continue the session's lease, and the stored session loaded
/// into a scratch config directory the CLI is pointed at.
pub(super) async fn prepare(options: &mut Options) -> Result<Option<StoreRun>, Error> {
    let Some(store) = options.store.clone() else {
        return Ok(None);
    };
    if options.launch.no_session_persistence {
        return Err(UsageError::StoreWithoutPersistence.into());
    }
    options.launch.session_mirror = true;
    let launch = &options.launch;
    let wants = match &launch.resume {
        Some(id) if byre_transport::is_session_id(id) => Some(Some(id.clone())),
        Some(_) => None,
        None if launch.continue_conversation => Some(None),
        None => None,
    };
    // A fork writes a new session: the stored one is only read.
    let leased = !launch.fork_session;
    let cwd = match &launch.cwd {
        Some(cwd) => cwd.clone(),
        None => std::env::current_dir().map_err(|e| Error::InvalidInput(e.to_string()))?,
    };
    let cwd = std::fs::canonicalize(&cwd).unwrap_or(cwd);
    let local = byre_transport::project_dir_name(&cwd);
    let project = options
        .store_project
        .clone()
        .unwrap_or_else(|| local.clone());
    let from = cli_config_dir(options);
    let mut materialized = None;
    let mut lease = None;
    match wants {
        None => check(&*store, &project, options).await?,
        Some(id) => {
            let timeout = options.store_load_timeout.unwrap_or(LOAD_TIMEOUT);
            let load = |id: Option<String>| {
                let (store, project, local, from) = (&store, &project, &local, &from);
                async move {
                    let load =
                        materialize(&**store, project, id.as_deref(), local, from.as_deref());
                    match tokio::time::timeout(timeout, load).await {
                        Ok(found) => found.map_err(|e| Error::Store(Arc::new(e))),
                        Err(_) => Err(Error::Store(Arc::new(StoreError::Backend(format!(
                            "loading the session took more than {timeout:?}"
                        ))))),
                    }
                }
            };
            materialized = match (id, leased) {
                // The lease first, so what is loaded is what its last writer left.
                (Some(id), true) => {
                    let key = SessionKey::main(project.as_str(), id.as_str());
                    lease = take_lease(&store, &key, options).await?;
                    load(Some(id)).await?
                }
                (Some(id), false) => load(Some(id)).await?,
                (None, false) => load(None).await?,
                // The latest session is found by loading it; with its lease taken, it is
                // loaded again, as its last writer left it.
                (None, true) => match load(None).await? {
                    Some(found) => {
                        let key = found.key().clone();
                        lease = take_lease(&store, &key, options).await?;
                        drop(found);
                        load(Some(key.session_id)).await?
                    }
                    None => None,
                },
            };
        }
    }
    if let Some(found) = &materialized {
        let launch = &mut options.launch;
        launch.env.push((
            "CLAUDE_CONFIG_DIR".into(),
            found.config_dir().as_os_str().to_owned(),
        ));
        launch.continue_conversation = false;
        launch.resume = Some(found.session_id().to_owned());
        for line in found.skipped().iter().take(5) {
            tracing::warn!(%line, "a stored line does not decode: the session loads without it");
        }
    } else if let Some(kept) = lease.take() {
        // Nothing to resume: the session was not there to hold.
        if let Some(why) = kept.release().await {
            tracing::warn!(%why, "the stored session's lease");
        }
    }
    let config = MirrorConfig {
        flush: options.store_flush,
        project_key: options.store_project.clone(),
        ..MirrorConfig::default()
    };
    let held = lease.as_ref().map(LeaseKeeper::state);
    Ok(Some(StoreRun {
        worker: MirrorWorker::spawn(store, MIRROR_BACKLOG, held),
        scratch: materialized,
        config,
        lease,
    }))
}

/// Before a new session: the store answers a listing under the project, within the start's
/// store timeout (a missing bucket, refused credentials or a store that does not answer fail
/// the start, not the session's writes).
async fn check(store: &dyn SessionStore, project: &str, options: &Options) -> Result<(), Error> {
    let timeout = options.store_load_timeout.unwrap_or(CHECK_TIMEOUT);
    let probe = SessionKey::main(project, byre_transport::new_uuid().as_str());
    match tokio::time::timeout(timeout, store.list_subkeys(&probe)).await {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(e)) => Err(Error::Store(Arc::new(e))),
        Err(_) => Err(Error::Store(Arc::new(StoreError::Backend(format!(
            "the store did not answer within {timeout:?}"
        ))))),
    }
}

/// Takes the lease of the session at `key`, waiting for it as the options allow; `None` when
/// the store keeps no leases (a warning: one writer at a time is then up to the user).
async fn take_lease(
    store: &Arc<dyn SessionStore>,
    key: &SessionKey,
    options: &Options,
) -> Result<Option<LeaseKeeper>, Error> {
    let ttl = options.store_lease_ttl.unwrap_or(DEFAULT_LEASE_TTL);
    let timeout = options.store_load_timeout.unwrap_or(LOAD_TIMEOUT);
    let give_up = tokio::time::Instant::now() + options.store_lease_wait;
    loop {
        let taken = tokio::time::timeout(timeout, acquire_lease(store.clone(), key, ttl)).await;
        match taken {
            Ok(Ok(lease)) => return Ok(Some(LeaseKeeper::start(lease))),
            Ok(Err(StoreError::Unsupported(what))) => {
                tracing::warn!(
                    what,
                    "the session store keeps no leases: two writers could fork \
                    the session"
                );
                return Ok(None);
            }
            Ok(Err(StoreError::Held { .. })) if tokio::time::Instant::now() < give_up => {
                let left = give_up - tokio::time::Instant::now();
                tokio::time::sleep(left.min(Duration::from_millis(500))).await;
            }
            Ok(Err(e)) => return Err(Error::Store(Arc::new(e))),
            Err(_) => {
                return Err(Error::Store(Arc::new(StoreError::Backend(format!(
                    "taking the session's lease took more than {timeout:?}"
                )))))
            }
        }
    }
}

/// Whether the session may still write to the store: shared by the lease's task and the
/// mirror's.
#[derive(Debug)]
pub(super) struct LeaseState {
    /// Why not, once the lease is lost for good.
    lost: Mutex<Option<String>>,
    /// Until when the last renewal holds it, in milliseconds since the Unix epoch.
    valid_until_ms: AtomicI64,
}

impl LeaseState {
    /// `Err(why)` when a write now could fork the session: the lease is lost, or expired
    /// with no renewal through.
    fn check(&self) -> Result<(), String> {
        if let Some(why) = &*self.lost.lock().expect("lease state") {
            return Err(why.clone());
        }
        let until = self.valid_until_ms.load(Ordering::Relaxed);
        if now_ms() >= until {
            return Err("the session's lease expired: the store did not take a renewal".into());
        }
        Ok(())
    }
}

/// The lease of a resumed stored session and the task that renews it.
pub(super) struct LeaseKeeper {
    state: Arc<LeaseState>,
    stop: Option<oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<Option<Lease>>,
}

impl LeaseKeeper {
    fn start(mut lease: Lease) -> LeaseKeeper {
        let state = Arc::new(LeaseState {
            lost: Mutex::new(None),
            valid_until_ms: AtomicI64::new(lease.holder().expires_ms),
        });
        let (stop, mut stopped) = oneshot::channel();
        let shared = state.clone();
        let every = lease.ttl() / 3;
        let task = tokio::spawn(async move {
            loop {
                tokio::select! {
                    _ = &mut stopped => return Some(lease),
                    () = tokio::time::sleep(every) => {}
                }
                match tokio::time::timeout(every, lease.renew()).await {
                    Ok(Ok(())) => shared
                        .valid_until_ms
                        .store(lease.holder().expires_ms, Ordering::Relaxed),
                    Ok(Err(e @ StoreError::LeaseLost { .. })) => {
                        tracing::warn!(%e, "the stored session's lease was lost: nothing more \
                            is stored");
                        *shared.lost.lock().expect("lease state") = Some(e.to_string());
                        return None;
                    }
                    // Tried again at the next beat; writes wait while it is expired.
                    Ok(Err(e)) => tracing::warn!(%e, "renewing the stored session's lease failed"),
                    Err(_) => tracing::warn!("renewing the stored session's lease timed out"),
                }
            }
        });
        LeaseKeeper {
            state,
            stop: Some(stop),
            task,
        }
    }

    fn state(&self) -> Arc<LeaseState> {
        self.state.clone()
    }

    /// Stops renewing and gives the lease back (within a bound: an expired lease frees the
    /// session anyway). Says why when it could not.
    pub(super) async fn release(mut self) -> Option<String> {
        if let Some(stop) = self.stop.take() {
            // The task may have ended already (the lease lost): nothing to stop then.
            stop.send(()).ok();
        }
        let lease = match (&mut self.task).await {
            Ok(Some(lease)) => lease,
            Ok(None) => return self.state.lost.lock().expect("lease state").clone(),
            Err(e) => return Some(format!("the lease's task failed: {e}")),
        };
        match tokio::time::timeout(RELEASE_TIMEOUT, lease.release()).await {
            Ok(Ok(())) => None,
            Ok(Err(e)) => Some(format!("giving the session's lease back failed: {e}")),
            Err(_) => Some(format!(
                "giving the session's lease back took more than {RELEASE_TIMEOUT:?}: it expires \
                 by itself"
            )),
        }
    }
}

impl Drop for LeaseKeeper {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or_default()
}

/// A batch that did not reach the store: its key, how many entries, why.
pub(super) type MirrorFailure = (SessionKey, usize, String);

/// A batch on its way to the store: its transcript and its entries as JSONL.
struct Queued {
    key: SessionKey,
    batch: Batch,
}

/// The task that appends mirror batches to the store, one at a time, in the order sent.
pub(super) struct MirrorWorker {
    batches: Option<mpsc::UnboundedSender<Queued>>,
    failures: mpsc::UnboundedReceiver<MirrorFailure>,
    /// Bytes of JSONL queued and not yet stored.
    backlog: Arc<AtomicUsize>,
    limit: usize,
    /// What waits, for the handle ([`Claude::store_backlog`](crate::Claude::store_backlog)).
    progress: Arc<super::unwritten::Backlog>,
    /// The task, until it has been waited for.
    task: Option<tokio::task::JoinHandle<()>>,
}

impl MirrorWorker {
    /// `lease`: the resumed session's lease, checked before each append (none is made once
    /// it is lost or expired: another writer may have the session).
    pub(super) fn spawn(
        store: Arc<dyn SessionStore>,
        limit: usize,
        lease: Option<Arc<LeaseState>>,
    ) -> MirrorWorker {
        let (batches, mut rx) = mpsc::unbounded_channel::<Queued>();
        let (failed, failures) = mpsc::unbounded_channel();
        let backlog = Arc::new(AtomicUsize::new(0));
        let waiting = backlog.clone();
        let progress = Arc::new(super::unwritten::Backlog::default());
        let left = progress.clone();
        let task = tokio::spawn(async move {
            while let Some(queued) = rx.recv().await {
                let held = lease.as_ref().map_or(Ok(()), |lease| lease.check());
                let stored = match held {
                    Ok(()) => append(&*store, &queued).await,
                    Err(why) => Err(why),
                };
                if let Err(why) = stored {
                    let entries = queued.batch.len();
                    tracing::warn!(key = %queued.key, entries, %why,
                        "mirroring to the session store failed");
                    // The receiver goes only with the worker, which waits for this task.
                    drop(failed.send((queued.key.clone(), entries, why)));
                }
                let (bytes, entries) = (queued.batch.bytes(), queued.batch.len());
                waiting.fetch_sub(bytes, Ordering::Relaxed);
                left.bytes.fetch_sub(bytes, Ordering::Relaxed);
                left.entries.fetch_sub(entries, Ordering::Relaxed);
            }
        });
        MirrorWorker {
            batches: Some(batches),
            failures,
            backlog,
            limit,
            progress,
            task: Some(task),
        }
    }

    /// What waits for the store, as the handle reads it.
    pub(super) fn progress(&self) -> Arc<super::unwritten::Backlog> {
        self.progress.clone()
    }

    /// Queues a batch (held as JSONL from now on); refused (and so reported) when the
    /// backlog is over its limit.
    pub(super) fn send(&self, batch: MirrorBatch) -> Result<(), MirrorFailure> {
        let waiting = self.backlog.load(Ordering::Relaxed);
        if waiting + batch.bytes > self.limit && waiting > 0 {
            let why = format!(
                "the store is too slow: {waiting} bytes already wait for it (limit {})",
                self.limit
            );
            return Err((batch.key, batch.entries.len(), why));
        }
        let Some(batches) = &self.batches else {
            return Err((
                batch.key,
                batch.entries.len(),
                "the mirror has stopped".into(),
            ));
        };
        let queued = Queued {
            batch: Batch::new(&batch.entries),
            key: batch.key,
        };
        let (bytes, n) = (queued.batch.bytes(), queued.batch.len());
        self.backlog.fetch_add(bytes, Ordering::Relaxed);
        self.progress.bytes.fetch_add(bytes, Ordering::Relaxed);
        self.progress.entries.fetch_add(n, Ordering::Relaxed);
        batches.send(queued).map_err(|failed| {
            self.backlog.fetch_sub(bytes, Ordering::Relaxed);
            self.progress.bytes.fetch_sub(bytes, Ordering::Relaxed);
            self.progress.entries.fetch_sub(n, Ordering::Relaxed);
            (failed.0.key, n, "the mirror task has stopped".to_owned())
        })
    }

    /// The next failure (pending while there is none).
    pub(super) async fn failure(&mut self) -> Option<MirrorFailure> {
        self.failures.recv().await
    }

    /// Lets the queued batches reach the store (for at most `within`), and gives the
    /// failures not yet collected.
    pub(super) async fn finish(&mut self, within: Duration) -> Vec<MirrorFailure> {
        self.batches = None;
        if let Some(mut task) = self.task.take() {
            if tokio::time::timeout(within, &mut task).await.is_err() {
                task.abort();
                tracing::warn!("entries still waiting for the session store were dropped");
            }
        }
        let mut failures = Vec::new();
        while let Ok(failure) = self.failures.try_recv() {
            failures.push(failure);
        }
        failures
    }
}

/// One append, tried up to three times (a timeout is not retried). A batch tried again keeps
/// its id, so a store that names its writes by it holds it once.
async fn append(store: &dyn SessionStore, queued: &Queued) -> Result<(), String> {
    let mut attempt = 0;
    loop {
        let why = match tokio::time::timeout(
            APPEND_TIMEOUT,
            store.append_batch(&queued.key, &queued.batch),
        )
        .await
        {
            Ok(Ok(())) => return Ok(()),
            Ok(Err(e)) => e.to_string(),
            Err(_) => return Err(format!("no answer within {}s", APPEND_TIMEOUT.as_secs())),
        };
        match RETRY_WAITS.get(attempt) {
            Some(wait) => tokio::time::sleep(*wait).await,
            None => return Err(format!("{why} (after {} attempts)", attempt + 1)),
        }
        attempt += 1;
    }
}

/// How long a close waits for entries still on their way to the store.
const FINISH_WITHIN: Duration = Duration::from_secs(120);

impl StoreRun {
    /// The CLI has exited: lets what is queued reach the store (for at most
    /// [`FINISH_WITHIN`]) and gives the stored session's lease back. The failures not yet
    /// reported, and why the lease could not be given back, if it could not.
    pub(super) async fn finish(&mut self) -> (Vec<MirrorFailure>, Option<String>) {
        // The CLI is gone: its scratch config (a copy of the sign-in) goes before the wait for
        // the store, which a kill may cut short.
        self.scratch = None;
        let failures = self.worker.finish(FINISH_WITHIN).await;
        let lease = match self.lease.take() {
            Some(lease) => lease.release().await,
            None => None,
        };
        (failures, lease)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use byre_transport::store::{MemoryStore, StoredSession};
    use byre_transport::BoxFuture;
    use serde_json::{json, Value};

    /// A store whose appends never answer; the rest as in memory.
    #[derive(Debug, Default)]
    struct Stuck(MemoryStore);

    impl SessionStore for Stuck {
        fn append<'a>(
            &'a self,
            _key: &'a SessionKey,
            _entries: &'a [Value],
        ) -> BoxFuture<'a, Result<(), StoreError>> {
            Box::pin(std::future::pending())
        }
        fn load<'a>(
            &'a self,
            key: &'a SessionKey,
        ) -> BoxFuture<'a, Result<Option<Vec<Value>>, StoreError>> {
            self.0.load(key)
        }
        fn list_sessions<'a>(
            &'a self,
            project_key: &'a str,
        ) -> BoxFuture<'a, Result<Vec<StoredSession>, StoreError>> {
            self.0.list_sessions(project_key)
        }
        fn list_subkeys<'a>(
            &'a self,
            key: &'a SessionKey,
        ) -> BoxFuture<'a, Result<Vec<String>, StoreError>> {
            self.0.list_subkeys(key)
        }
        fn delete<'a>(&'a self, key: &'a SessionKey) -> BoxFuture<'a, Result<(), StoreError>> {
            self.0.delete(key)
        }
    }

    fn batch(n: usize) -> MirrorBatch {
        let entries: Vec<Value> = (0..10)
            .map(|i| json!({"type": "user", "uuid": format!("{n}-{i}"), "text": "x".repeat(80)}))
            .collect();
        MirrorBatch {
            key: SessionKey::main("-p", "6f1d2c3b-0000-4000-8000-0000000000b1"),
            bytes: entries.iter().map(|e| e.to_string().len()).sum(),
            entries,
        }
    }

    #[tokio::test]
    async fn the_backlog_counts_the_bytes_held_and_refuses_past_its_limit() {
        let limit = 10_000;
        let worker = MirrorWorker::spawn(Arc::new(Stuck::default()), limit, None);
        let mut accepted = 0;
        let refused = loop {
            match worker.send(batch(accepted)) {
                Ok(()) => accepted += 1,
                Err(refused) => break refused,
            }
        };
        let held = worker.backlog.load(Ordering::Relaxed);
        let one = Batch::new(&batch(0).entries).bytes();
        // What is held is the JSONL itself: its bytes, as counted.
        assert_eq!(held, accepted * one);
        assert!(held <= limit && held + one > limit, "{held} of {limit}");
        assert_eq!(refused.1, 10);
        assert!(refused.2.contains("too slow"), "{}", refused.2);
    }
}
