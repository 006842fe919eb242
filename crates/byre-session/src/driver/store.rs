//! Sessions in a store, the driver's side: the options, loading a stored session into a
//! scratch config directory before the CLI starts, and the task that appends the core's
//! mirror batches to the store (in order, retried, with a bounded backlog).

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use byre_proto::SessionKey;
use byre_transport::store::{materialize, Materialized, SessionStore, StoreError};
use tokio::sync::mpsc;

use super::error::{Error, UsageError};
use super::options::Options;
use crate::session::{MirrorBatch, MirrorConfig, MirrorFlush};

/// How long one append may take before it counts as failed.
const APPEND_TIMEOUT: Duration = Duration::from_secs(60);
/// How long loading a stored session may take, unless [`Options::store_load_timeout`] says.
const LOAD_TIMEOUT: Duration = Duration::from_secs(60);
/// The waits before the second and third attempts of a failed append.
const RETRY_WAITS: [Duration; 2] = [Duration::from_millis(200), Duration::from_millis(800)];
/// Bytes of entries that may wait for a slow store before new batches are dropped (and
/// reported): the CLI's own files keep everything.
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

    /// How long loading a stored session for a resume or continue may take before the start
    /// fails (60 s by default): a store that hangs does not hang the start.
    pub fn store_load_timeout(mut self, timeout: Duration) -> Self {
        self.store_load_timeout = Some(timeout);
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
    pub(super) _scratch: Option<Materialized>,
    pub(super) config: MirrorConfig,
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

/// Sets the launch up for a store: the mirror flag, and for a resume or continue the stored
/// session loaded into a scratch config directory the CLI is pointed at.
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
    let mut materialized = None;
    if let Some(id) = wants {
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
        let timeout = options.store_load_timeout.unwrap_or(LOAD_TIMEOUT);
        let load = materialize(&*store, &project, id.as_deref(), &local, from.as_deref());
        let found = match tokio::time::timeout(timeout, load).await {
            Ok(found) => found.map_err(|e| Error::Store(Arc::new(e)))?,
            Err(_) => {
                let why = format!("loading the session took more than {timeout:?}");
                return Err(Error::Store(Arc::new(StoreError::Backend(why))));
            }
        };
        if let Some(found) = found {
            let launch = &mut options.launch;
            launch.env.push((
                "CLAUDE_CONFIG_DIR".into(),
                found.config_dir().as_os_str().to_owned(),
            ));
            launch.continue_conversation = false;
            launch.resume = Some(found.session_id().to_owned());
            materialized = Some(found);
        }
    }
    let config = MirrorConfig {
        flush: options.store_flush,
        project_key: options.store_project.clone(),
        ..MirrorConfig::default()
    };
    Ok(Some(StoreRun {
        worker: MirrorWorker::spawn(store, MIRROR_BACKLOG),
        _scratch: materialized,
        config,
    }))
}

/// A batch that did not reach the store: its key, how many entries, why.
pub(super) type MirrorFailure = (SessionKey, usize, String);

/// The task that appends mirror batches to the store, one at a time, in the order sent.
pub(super) struct MirrorWorker {
    batches: Option<mpsc::UnboundedSender<MirrorBatch>>,
    failures: mpsc::UnboundedReceiver<MirrorFailure>,
    backlog: Arc<AtomicUsize>,
    limit: usize,
    /// What waits, for the handle ([`Claude::store_backlog`](crate::Claude::store_backlog)).
    progress: Arc<super::unwritten::Backlog>,
    /// The task, until it has been waited for.
    task: Option<tokio::task::JoinHandle<()>>,
}

impl MirrorWorker {
    pub(super) fn spawn(store: Arc<dyn SessionStore>, limit: usize) -> MirrorWorker {
        let (batches, mut rx) = mpsc::unbounded_channel::<MirrorBatch>();
        let (failed, failures) = mpsc::unbounded_channel();
        let backlog = Arc::new(AtomicUsize::new(0));
        let waiting = backlog.clone();
        let progress = Arc::new(super::unwritten::Backlog::default());
        let left = progress.clone();
        let task = tokio::spawn(async move {
            while let Some(batch) = rx.recv().await {
                if let Err(why) = append(&*store, &batch).await {
                    tracing::warn!(key = %batch.key, entries = batch.entries.len(), %why,
                        "mirroring to the session store failed");
                    let _ = failed.send((batch.key.clone(), batch.entries.len(), why));
                }
                waiting.fetch_sub(batch.bytes, Ordering::Relaxed);
                left.bytes.fetch_sub(batch.bytes, Ordering::Relaxed);
                left.entries
                    .fetch_sub(batch.entries.len(), Ordering::Relaxed);
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

    /// Queues a batch; refused (and so reported) when the backlog is over its limit.
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
        self.backlog.fetch_add(batch.bytes, Ordering::Relaxed);
        let (key, n, bytes) = (batch.key.clone(), batch.entries.len(), batch.bytes);
        self.progress.bytes.fetch_add(bytes, Ordering::Relaxed);
        self.progress.entries.fetch_add(n, Ordering::Relaxed);
        batches.send(batch).map_err(|_| {
            self.progress.bytes.fetch_sub(bytes, Ordering::Relaxed);
            self.progress.entries.fetch_sub(n, Ordering::Relaxed);
            (key, n, "the mirror task has stopped".to_owned())
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

/// One append, tried up to three times (a timeout is not retried).
async fn append(store: &dyn SessionStore, batch: &MirrorBatch) -> Result<(), String> {
    let mut attempt = 0;
    loop {
        let why =
            match tokio::time::timeout(APPEND_TIMEOUT, store.append(&batch.key, &batch.entries))
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

impl super::run::Driver {
    /// Hands the core's batches to the mirror task; one it refuses is reported at once.
    pub(super) fn mirror(&mut self, batches: Vec<MirrorBatch>) {
        for batch in batches {
            let sent = match &self.store {
                Some(run) => run.worker.send(batch),
                None => Err((batch.key, batch.entries.len(), "no session store".into())),
            };
            if let Err((key, entries, why)) = sent {
                self.session.mirror_failed(key, entries, why);
            }
        }
    }

    /// The CLI has exited: lets what is queued reach the store, and reports what did not.
    pub(super) async fn finish_mirror(&mut self) {
        let Some(run) = &mut self.store else { return };
        // The CLI is gone: its scratch config (a copy of the sign-in) goes before the wait for
        // the store, which a kill may cut short.
        run._scratch = None;
        for (key, entries, why) in run.worker.finish(FINISH_WITHIN).await {
            self.session.mirror_failed(key, entries, why);
        }
    }
}
