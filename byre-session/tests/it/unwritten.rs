//! What a session could not write for the user: a transcript on a full device and a store
//! that fails are events while the session runs and a typed error from `close`, which counts
//! what was lost; the store's backlog is readable while a close waits for it.

use std::sync::Arc;
use std::time::{Duration, Instant};

use byre_proto::{InitializeRequest, SessionKey};
use byre_session::transport::store::{MemoryStore, SessionStore};
use byre_session::transport::store::{StoreError, StoredSession};
use byre_session::{Claude, Error, Event, Session, SessionConfig, StreamExt, STORE_LOSS_KEYS};
use byre_testkit::{FakeModel, Reply, Rule, Script};
use byre_transport::BoxFuture;
use serde_json::Value;

use crate::support::*;

fn answers() -> Script {
    Script::new().rule(Rule::any().reply(Reply::text("Answer one: pelican.")))
}

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transcript_on_a_full_device_is_an_event_and_close_says_how_many_lines_were_lost() {
    let model = FakeModel::start(answers()).await.unwrap();
    let (options, _env) = options(&model);
    let (claude, mut events) = Claude::start(options.transcript("/dev/full"))
        .await
        .unwrap();
    claude.send("the first question").unwrap();
    let (mut seen, result) = until_result(&mut events).await;
    assert_eq!(result.result.as_deref(), Some("Answer one: pelican."));
    // The first write to reach the device fails (the buffer fills, or the result flushes).
    let deadline = Instant::now() + EVENT_STEP;
    let failed = loop {
        let found = seen.iter().find_map(|event| match event {
            Event::TranscriptFailed { path, error } => Some((path.clone(), error.clone())),
            _ => None,
        });
        if let Some(found) = found {
            break found;
        }
        assert!(
            Instant::now() < deadline,
            "a TranscriptFailed event in time"
        );
        seen = vec![next_event(&mut events).await];
    };
    assert_eq!(failed.0, std::path::Path::new("/dev/full"));
    assert!(failed.1.contains("No space left"), "{}", failed.1);
    // The session goes on.
    let again = turn(&claude, &mut events, "the second question").await;
    assert_eq!(again.is_error, Some(false));
    let error = claude.close().await.expect_err("close reports the loss");
    let Error::NotWritten(lost) = &error else {
        panic!("NotWritten, not {error:?}");
    };
    let transcript = lost.transcript.as_ref().expect("the transcript's loss");
    assert_eq!(transcript.path, std::path::Path::new("/dev/full"));
    assert!(transcript.lines >= 6, "{} lines", transcript.lines);
    assert!(lost.store.is_empty());
    assert!(lost.failure.is_none());
    let exit = lost.exit.as_ref().expect("the CLI's end");
    assert!(exit.status.success(), "{:?}", exit.status);
    assert_eq!(error.fault(), byre_session::Fault::NotWritten);
    let text = error.to_string();
    assert!(
        text.contains(&format!(
            "{} lines not written to the transcript /dev/full",
            transcript.lines
        )),
        "{text}"
    );
    // No second event: the writer stopped at the first failure.
    let mut more = 0;
    while let Ok(Some(event)) = tokio::time::timeout(Duration::from_secs(5), events.next()).await {
        more += usize::from(matches!(event, Event::TranscriptFailed { .. }));
    }
    assert_eq!(more, 0);
}

/// A store whose appends fail after a delay: a close waits for them.
#[derive(Debug, Default)]
struct SlowAndBroken {
    inner: MemoryStore,
    delay: Duration,
}

impl SessionStore for SlowAndBroken {
    fn append<'a>(
        &'a self,
        _key: &'a SessionKey,
        _entries: &'a [Value],
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            tokio::time::sleep(self.delay).await;
            Err(StoreError::Backend("the bucket is gone".into()))
        })
    }

    fn load<'a>(
        &'a self,
        key: &'a SessionKey,
    ) -> BoxFuture<'a, Result<Option<Vec<Value>>, StoreError>> {
        self.inner.load(key)
    }

    fn list_sessions<'a>(
        &'a self,
        project_key: &'a str,
    ) -> BoxFuture<'a, Result<Vec<StoredSession>, StoreError>> {
        self.inner.list_sessions(project_key)
    }

    fn list_subkeys<'a>(
        &'a self,
        key: &'a SessionKey,
    ) -> BoxFuture<'a, Result<Vec<String>, StoreError>> {
        self.inner.list_subkeys(key)
    }

    fn delete<'a>(&'a self, key: &'a SessionKey) -> BoxFuture<'a, Result<(), StoreError>> {
        self.inner.delete(key)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_store_makes_close_say_how_many_entries_were_not_stored() {
    let model = FakeModel::start(answers()).await.unwrap();
    let (options, _env) = options(&model);
    let store = Arc::new(SlowAndBroken {
        delay: Duration::from_millis(700),
        ..SlowAndBroken::default()
    });
    let (claude, mut events) = Claude::start(options.session_store(store)).await.unwrap();
    assert_eq!(
        claude.store_backlog().map(|b| b.entries),
        Some(0),
        "nothing waits yet"
    );
    turn(&claude, &mut events, "the first question").await;
    let id = claude.session_id().unwrap();
    // The turn's entries wait for the slow store while the close does.
    let closing = tokio::spawn({
        let claude = claude.clone();
        async move { claude.close().await }
    });
    let mut seen_waiting = 0;
    while !closing.is_finished() {
        let backlog = claude.store_backlog().unwrap();
        seen_waiting = seen_waiting.max(backlog.entries);
        assert!(backlog.entries == 0 || backlog.bytes > 0, "{backlog:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        seen_waiting > 0,
        "the backlog was seen while the close waited"
    );
    assert_eq!(claude.store_backlog().unwrap().entries, 0);
    let error = closing.await.unwrap().expect_err("close reports the loss");
    let Error::NotWritten(lost) = &error else {
        panic!("NotWritten, not {error:?}");
    };
    assert!(lost.transcript.is_none());
    assert!(lost.exit.is_some());
    let main = lost
        .store
        .iter()
        .find(|l| l.key.as_ref().is_some_and(|k| k.session_id == id))
        .expect("the session's loss");
    assert!(main.entries > 0 && main.batches > 0, "{main:?}");
    assert!(main.error.contains("the bucket is gone"), "{}", main.error);
    let text = error.to_string();
    assert!(
        text.contains(&format!(
            "{} session entries not stored",
            lost.store_entries()
        )),
        "{text}"
    );
}

#[test]
fn store_losses_are_counted_per_transcript_in_bounded_memory() {
    let mut session = Session::new(
        SessionConfig::new(InitializeRequest::default()),
        Instant::now(),
    );
    assert!(session.store_losses().is_empty());
    let key = |n: usize| SessionKey::main("-p", format!("00000000-0000-4000-8000-{n:012}"));
    session.mirror_failed(key(0), 3, "first");
    session.mirror_failed(key(0), 4, "second");
    let first = &session.store_losses()[0];
    assert_eq!((first.entries, first.batches), (7, 2));
    assert_eq!(first.error, "first", "the first reason is kept");
    // Past the limit of keys, the rest are counted together.
    for n in 1..STORE_LOSS_KEYS + 10 {
        session.mirror_failed(key(n), 1, "more");
    }
    session.mirror_failed(key(0), 1, "again");
    let losses = session.store_losses();
    assert_eq!(losses.len(), STORE_LOSS_KEYS + 1);
    let rest = losses.iter().find(|l| l.key.is_none()).unwrap();
    assert_eq!((rest.entries, rest.batches), (10, 10));
    assert_eq!(
        losses[0].entries, 8,
        "a key counted already stays on its own"
    );
    let events: Vec<_> = std::iter::from_fn(|| session.poll_event())
        .filter(|e| matches!(e, Event::MirrorFailed { .. }))
        .collect();
    assert_eq!(
        events.len(),
        STORE_LOSS_KEYS + 12,
        "every failure is an event"
    );
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_sessions_never_write_one_transcript_file() {
    let model = FakeModel::start(answers()).await.unwrap();
    let (options, _env) = options(&model);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("one.jsonl");
    // One path for two sessions: the second is refused, the first's file left whole.
    let (first, mut events) = Claude::start(options.clone().transcript(&path))
        .await
        .unwrap();
    let second = Claude::start(options.clone().transcript(&path)).await;
    let Err(error) = second else {
        panic!("a second session took the same transcript");
    };
    assert!(matches!(error, Error::Transcript { .. }), "{error:?}");
    assert!(error.to_string().contains("another session"), "{error}");
    first.send("the first question").unwrap();
    let (_, result) = until_result(&mut events).await;
    assert_eq!(result.is_error, Some(false));
    first.close().await.unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(!text.contains('\0'), "the file was written over");
    assert!(text.contains("Answer one: pelican."));

    // Options cloned into many sessions: a file each, in the folder given.
    let many = options.transcripts_in(dir.path());
    let (a, _a_events) = Claude::start(many.clone()).await.unwrap();
    let (b, _b_events) = Claude::start(many).await.unwrap();
    let (path_a, path_b) = (a.transcript_path().unwrap(), b.transcript_path().unwrap());
    assert_ne!(path_a, path_b);
    assert_eq!(path_a.parent(), Some(dir.path()));
    a.close().await.unwrap();
    b.close().await.unwrap();
    for path in [path_a, path_b] {
        let text = std::fs::read_to_string(path).unwrap();
        assert!(text.contains("\"subtype\":\"initialize\""), "{text}");
    }
}
