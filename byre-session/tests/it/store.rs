//! Sessions in a store, against the real CLI: what `--session-mirror` writes reaches the
//! store, eagerly or per turn; a failing store is an event and the turn goes on; a session
//! run on one host (its own `HOME` and directory) resumes and continues on another from the
//! store alone, in memory and on the S3-compatible test server.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use byre_proto::{CliMessage, SessionKey};
use byre_session::transport::project_dir_name;
use byre_session::transport::store::{LeaseHolder, ObjectSessionStore, StoreError, StoredSession};
use byre_session::transport::store::{MemoryStore, SessionStore};
use byre_session::{Claude, Event, MirrorFlush};
use byre_testkit::{ClaudeEnv, FakeModel, Match, Reply, Rule, S3Server, Script};
use byre_transport::BoxFuture;
use serde_json::Value;

use crate::support::*;

/// A model that answers each question by its number, so a request shows which earlier
/// exchanges it carries.
fn numbered() -> Script {
    Script::new()
        .rule(Rule::when(Match::user_text_contains("third")).reply(Reply::text("Answer three.")))
        .rule(Rule::when(Match::user_text_contains("second")).reply(Reply::text("Answer two.")))
        .rule(Rule::any().reply(Reply::text("Answer one: pelican.")))
}

/// The entries of the CLI's own session file, as JSON.
fn local_entries(env: &ClaudeEnv, id: &str) -> Vec<Value> {
    let file = env
        .home()
        .join(".claude/projects")
        .join(project_dir_name(env.cwd()))
        .join(format!("{id}.jsonl"));
    std::fs::read_to_string(&file)
        .unwrap_or_else(|e| panic!("{}: {e}", file.display()))
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// The entries' uuids (those that have one), in order.
fn uuids(entries: &[Value]) -> Vec<&str> {
    entries.iter().filter_map(|e| e["uuid"].as_str()).collect()
}

/// The text of every message of the last request the model got, in order.
fn last_request_texts(model: &FakeModel) -> Vec<String> {
    let requests = model.message_requests();
    let last = requests.last().expect("a request");
    let mut texts = Vec::new();
    for message in last.body["messages"].as_array().unwrap() {
        match &message["content"] {
            Value::String(text) => texts.push(text.clone()),
            Value::Array(blocks) => texts.extend(
                blocks
                    .iter()
                    .filter_map(|b| b["text"].as_str())
                    .map(str::to_owned),
            ),
            _ => {}
        }
    }
    texts
}

/// Whether any text contains `needle`.
fn mentions(texts: &[String], needle: &str) -> bool {
    texts.iter().any(|t| t.contains(needle))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_entry_the_cli_writes_is_mirrored_to_the_store() {
    let model = FakeModel::start(numbered()).await.unwrap();
    let (options, env) = options(&model);
    let store = Arc::new(MemoryStore::new());
    let (claude, mut events) = Claude::start(options.session_store(store.clone()))
        .await
        .unwrap();
    turn(&claude, &mut events, "the first question").await;
    turn(&claude, &mut events, "the second question").await;
    let id = claude.session_id().unwrap();
    claude.close().await.unwrap();

    let key = SessionKey::main(project_dir_name(env.cwd()), &id);
    let stored = store.entries(&key).expect("the session is in the store");
    let local = local_entries(&env, &id);
    assert_eq!(
        uuids(&stored),
        uuids(&local),
        "the store holds the file's entries"
    );
    let kinds: Vec<&str> = stored.iter().filter_map(|e| e["type"].as_str()).collect();
    assert!(
        kinds.contains(&"user") && kinds.contains(&"assistant"),
        "{kinds:?}"
    );
    let sessions = store.list_sessions(&key.project_key).await.unwrap();
    assert_eq!(sessions.len(), 1);
    assert_eq!(sessions[0].session_id, id);
    // The summary the store kept as the CLI wrote is what the session read whole gives, and
    // what the session's file on disk gives.
    let summaries = store
        .list_session_summaries(&key.project_key)
        .await
        .unwrap();
    let from_summary = summaries[0].info().expect("a main chain");
    let whole = byre_session::transport::store::stored_info(&*store, &key)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        from_summary.first_prompt.as_deref(),
        Some("the first question")
    );
    assert_eq!(from_summary.entrypoint.as_deref(), Some("sdk-byre"));
    for (a, b) in [
        (&from_summary.title, &whole.title),
        (&from_summary.first_prompt, &whole.first_prompt),
        (&from_summary.last_prompt, &whole.last_prompt),
        (&from_summary.cwd, &whole.cwd),
        (&from_summary.git_branch, &whole.git_branch),
        (&from_summary.created, &whole.created),
        (&from_summary.last_typed_at, &whole.last_typed_at),
    ] {
        assert_eq!(a, b, "{from_summary:?} against {whole:?}");
    }
    assert_eq!(from_summary.size, whole.size);
    let on_disk = byre_session::transport::session_info(
        &env.home()
            .join(".claude/projects")
            .join(&key.project_key)
            .join(format!("{id}.jsonl")),
    )
    .unwrap()
    .unwrap();
    assert_eq!(from_summary.first_prompt, on_disk.first_prompt);
    assert_eq!(from_summary.last_prompt, on_disk.last_prompt);
}

/// Runs one turn that asks to use a tool, and gives how many transcripts the store held
/// while the permission prompt was open (waiting up to a few seconds for one).
async fn held_during_turn(flush: MirrorFlush) -> usize {
    let model = FakeModel::start(touch_script()).await.unwrap();
    let (options, env) = options(&model);
    let store = Arc::new(MemoryStore::new());
    let seen = Arc::new(AtomicUsize::new(usize::MAX));
    let (in_store, in_handler) = (store.clone(), seen.clone());
    let options = options
        .session_store(store.clone())
        .store_flush(flush)
        .can_use_tool(move |request| {
            let (store, seen) = (in_store.clone(), in_handler.clone());
            async move {
                let deadline = Instant::now() + Duration::from_secs(3);
                while store.is_empty() && Instant::now() < deadline {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                seen.store(store.len(), Ordering::SeqCst);
                Ok(request.allow())
            }
        });
    let (claude, mut events) = Claude::start(options).await.unwrap();
    let result = turn(&claude, &mut events, "make the file").await;
    assert_eq!(result.result.as_deref(), Some("Done."));
    claude.close().await.unwrap();
    assert_eq!(store.len(), 1, "the turn is stored by the end");
    drop(env);
    let seen = seen.load(Ordering::SeqCst);
    assert_ne!(seen, usize::MAX, "the permission prompt was asked");
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_eager_mirror_stores_entries_before_the_turn_ends_a_batched_one_at_its_end() {
    let eager = held_during_turn(MirrorFlush::Eager).await;
    assert!(eager > 0, "eager: the prompt is stored while the turn runs");
    let batched = held_during_turn(MirrorFlush::Batched).await;
    assert_eq!(
        batched, 0,
        "batched: nothing is stored before the turn's end"
    );
}

/// A store whose appends always fail; with `hang`, whose reads never answer.
#[derive(Debug, Default)]
struct Broken {
    appends: AtomicUsize,
    hang: bool,
}

impl Broken {
    /// `answer`, or never when the store hangs.
    fn reply<'a, T: Send + 'a>(&'a self, answer: T) -> BoxFuture<'a, Result<T, StoreError>> {
        Box::pin(async move {
            if self.hang {
                std::future::pending::<()>().await;
            }
            Ok(answer)
        })
    }
}

impl SessionStore for Broken {
    fn append<'a>(
        &'a self,
        _key: &'a SessionKey,
        _entries: &'a [Value],
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        self.appends.fetch_add(1, Ordering::SeqCst);
        Box::pin(async { Err(StoreError::Backend("the disk is on fire".into())) })
    }

    fn load<'a>(
        &'a self,
        _key: &'a SessionKey,
    ) -> BoxFuture<'a, Result<Option<Vec<Value>>, StoreError>> {
        self.reply(None)
    }

    fn list_sessions<'a>(
        &'a self,
        _project_key: &'a str,
    ) -> BoxFuture<'a, Result<Vec<StoredSession>, StoreError>> {
        self.reply(Vec::new())
    }

    fn list_subkeys<'a>(
        &'a self,
        _key: &'a SessionKey,
    ) -> BoxFuture<'a, Result<Vec<String>, StoreError>> {
        self.reply(Vec::new())
    }

    fn delete<'a>(&'a self, _key: &'a SessionKey) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async { Ok(()) })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_that_never_answers_fails_the_start_after_its_load_timeout() {
    let model = FakeModel::start(numbered()).await.unwrap();
    let (options, _env) = options(&model);
    let store = Arc::new(Broken {
        hang: true,
        ..Broken::default()
    });
    let options = options
        .session_store(store)
        .store_load_timeout(Duration::from_millis(300));
    for (options, says) in [
        (
            options
                .clone()
                .resume("6f1d2c3b-0000-4000-8000-0000000000aa"),
            "took more than 300ms",
        ),
        (
            options.clone().continue_conversation(),
            "took more than 300ms",
        ),
        // A new session: the store is checked before the CLI starts.
        (options, "did not answer within 300ms"),
    ] {
        let started = tokio::time::timeout(EVENT_STEP, Claude::start(options)).await;
        let Ok(Err(error)) = started else {
            panic!("the start fails, and in time");
        };
        assert!(error.to_string().contains(says), "{error}");
    }
    assert!(
        model.message_requests().is_empty(),
        "the CLI never asked the model"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_store_is_an_event_and_the_session_goes_on() {
    let model = FakeModel::start(numbered()).await.unwrap();
    let (options, env) = options(&model);
    let store = Arc::new(Broken::default());
    let (claude, mut events) = Claude::start(options.session_store(store.clone()))
        .await
        .unwrap();
    let first = turn(&claude, &mut events, "the first question").await;
    assert_eq!(first.result.as_deref(), Some("Answer one: pelican."));
    // The failure arrives once the retries are spent; the session answers meanwhile.
    claude.send("the second question").unwrap();
    let mut failure = None;
    let mut second = None;
    let deadline = Instant::now() + EVENT_STEP;
    while (failure.is_none() || second.is_none()) && Instant::now() < deadline {
        match next_event(&mut events).await {
            Event::MirrorFailed {
                key,
                entries,
                error,
            } => failure = Some((key, entries, error)),
            Event::Message(CliMessage::Result(r)) => second = r.result.clone(),
            _ => {}
        }
    }
    let id = claude.session_id().unwrap();
    // The close says what the store lacks.
    match claude.close().await {
        Err(byre_session::Error::NotWritten(lost)) => {
            assert!(lost.store_entries() > 0, "{lost}");
            assert!(lost.exit.is_some());
        }
        other => panic!("close gives NotWritten, not {other:?}"),
    }
    let (key, entries, error) = failure.expect("a MirrorFailed event");
    assert_eq!(key.map(|k| k.session_id), Some(id.clone()));
    assert!(entries > 0);
    assert!(error.contains("the disk is on fire"), "{error}");
    assert!(error.contains("3 attempts"), "{error}");
    assert_eq!(second.as_deref(), Some("Answer two."));
    assert!(store.appends.load(Ordering::SeqCst) >= 3, "retried");
    let local = local_entries(&env, &id);
    assert!(
        uuids(&local).len() >= 4,
        "the CLI's own file keeps everything"
    );
}

/// Host A: a session in its own `HOME` and directory, mirrored to `store` under `project`;
/// gives its id.
async fn run_on_host_a(model: &FakeModel, store: Arc<dyn SessionStore>, project: &str) -> String {
    let (options, _host_a) = options(model);
    let options = options.session_store(store).store_project(project);
    let (claude, mut events) = Claude::start(options).await.unwrap();
    turn(&claude, &mut events, "the first question").await;
    let id = claude.session_id().unwrap();
    claude.close().await.unwrap();
    id
}

/// Host B resumes (`Some(id)`) or continues (`None`) from the store with a fresh `HOME` and
/// directory, asks the second question, and gives the texts of the model's request.
async fn resume_on_host_b(
    model: &FakeModel,
    store: Arc<dyn SessionStore>,
    project: &str,
    id: Option<&str>,
) -> (Vec<String>, String) {
    let (options, host_b) = options(model);
    assert!(
        !host_b.home().join(".claude/projects").exists(),
        "host B has no sessions of its own"
    );
    let options = options.session_store(store).store_project(project);
    let options = match id {
        Some(id) => options.resume(id),
        None => options.continue_conversation(),
    };
    let (claude, mut events) = Claude::start(options).await.unwrap();
    let result = turn(&claude, &mut events, "the second question").await;
    assert_eq!(result.result.as_deref(), Some("Answer two."));
    let resumed = claude.session_id().unwrap();
    claude.close().await.unwrap();
    (last_request_texts(model), resumed)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_resumes_and_continues_on_another_host_from_the_store() {
    let model = FakeModel::start(numbered()).await.unwrap();
    let store: Arc<dyn SessionStore> = Arc::new(MemoryStore::new());
    let id = run_on_host_a(&model, store.clone(), "repo").await;

    let (texts, resumed) = resume_on_host_b(&model, store.clone(), "repo", Some(&id)).await;
    assert!(mentions(&texts, "the first question"), "{texts:#?}");
    assert!(mentions(&texts, "Answer one: pelican."), "{texts:#?}");
    assert!(mentions(&texts, "the second question"), "{texts:#?}");
    assert_eq!(resumed, id, "a resume goes on in the same session");
    let stored = store
        .load(&SessionKey::main("repo", &id))
        .await
        .unwrap()
        .unwrap();
    let stored_text = serde_json::to_string(&stored).unwrap();
    assert!(
        stored_text.contains("Answer two."),
        "host B's turn is mirrored too"
    );

    let (texts, _) = resume_on_host_b(&model, store, "repo", None).await;
    assert!(mentions(&texts, "Answer one: pelican."), "{texts:#?}");
    assert!(
        mentions(&texts, "Answer two."),
        "the continue has both hosts' turns"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resume_holds_the_stored_sessions_lease_and_stops_storing_once_it_is_lost() {
    let model = FakeModel::start(numbered()).await.unwrap();
    let store: Arc<dyn SessionStore> = Arc::new(MemoryStore::new());
    let id = run_on_host_a(&model, store.clone(), "repo").await;
    let key = SessionKey::main("repo", id.as_str());
    let holder = |found: Option<byre_session::transport::store::StoredLease>| -> LeaseHolder {
        serde_json::from_slice(&found.expect("a lease record").bytes).unwrap()
    };
    assert!(
        store.read_lease(&key).await.unwrap().is_none(),
        "a new session takes no lease"
    );

    let (base, _host_b) = options(&model);
    let resumed = base
        .session_store(store.clone())
        .store_project("repo")
        .store_lease_ttl(Duration::from_millis(600))
        .resume(id.as_str());
    let (claude, mut events) = Claude::start(resumed.clone()).await.unwrap();
    let held = holder(store.read_lease(&key).await.unwrap());
    assert!(!held.released);
    assert!(held.holder.contains(&std::process::id().to_string()));
    // A second resume in this process is refused while the first runs.
    let refused = Claude::start(resumed).await.unwrap_err();
    assert!(refused.to_string().contains("is in use by"), "{refused}");
    // The lease is renewed while the session runs: still held well past its ttl.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    turn(&claude, &mut events, "the second question").await;
    let renewed = holder(store.read_lease(&key).await.unwrap());
    assert_eq!(renewed.token, held.token);
    assert!(renewed.expires_ms > held.expires_ms, "renewed");

    // Another writer takes the record over (as after an expiry): the session learns it at
    // its next renewal and stores nothing more.
    let found = store.read_lease(&key).await.unwrap().unwrap();
    let mut thief = renewed.clone();
    thief.holder = "another host".into();
    thief.token = "stolen".into();
    let bytes = serde_json::to_vec(&thief).unwrap();
    store
        .write_lease(&key, &bytes, Some(&found.version))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    claude.send("the third question").unwrap();
    let mut failure = None;
    let mut answered = false;
    let deadline = Instant::now() + EVENT_STEP;
    while !(answered && failure.is_some()) && Instant::now() < deadline {
        match next_event(&mut events).await {
            Event::MirrorFailed { error, .. } => failure = Some(error),
            Event::Message(CliMessage::Result(_)) => answered = true,
            _ => {}
        }
    }
    let failure = failure.expect("the turn's entries are refused");
    assert!(failure.contains("lease"), "{failure}");
    assert!(failure.contains("another host"), "{failure}");
    let stored = serde_json::to_string(&store.load(&key).await.unwrap().unwrap()).unwrap();
    assert!(
        !stored.contains("Answer three."),
        "nothing stored once lost"
    );
    drop(claude.close().await);
    assert_eq!(
        holder(store.read_lease(&key).await.unwrap()).token,
        "stolen",
        "the loser does not release what it lost"
    );

    // A resume that ends normally gives the lease back at close.
    let (base, _host_c) = options(&model);
    let thief_gone = store.read_lease(&key).await.unwrap().unwrap();
    thief.released = true;
    let bytes = serde_json::to_vec(&thief).unwrap();
    store
        .write_lease(&key, &bytes, Some(&thief_gone.version))
        .await
        .unwrap();
    let resumed = base
        .session_store(store.clone())
        .store_project("repo")
        .resume(id.as_str());
    let (claude, mut events) = Claude::start(resumed).await.unwrap();
    turn(&claude, &mut events, "the second question").await;
    claude.close().await.unwrap();
    assert!(holder(store.read_lease(&key).await.unwrap()).released);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_without_the_session_resumes_nothing_and_says_why() {
    let model = FakeModel::start(numbered()).await.unwrap();
    let (options, _env) = options(&model);
    let store: Arc<dyn SessionStore> = Arc::new(MemoryStore::new());
    let missing = "6f1d2c3b-0000-4000-8000-0000000000ff";
    let started = Claude::start(options.session_store(store).resume(missing)).await;
    let Err(error) = started else {
        panic!("the CLI refuses a session it does not have");
    };
    let text = error.to_string();
    assert!(text.contains(missing), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_two_host_scenario_runs_on_an_s3_compatible_server() {
    let server = tokio::task::spawn_blocking(S3Server::start)
        .await
        .unwrap()
        .expect("the S3-compatible test server starts");
    server.create_bucket("sessions").unwrap();
    let s3 = || -> Arc<dyn SessionStore> {
        Arc::new(ObjectSessionStore::from_url_with("s3://sessions/team-a", server.env()).unwrap())
    };
    let model = FakeModel::start(numbered()).await.unwrap();
    // Each host opens the bucket itself: nothing is shared but the server.
    let id = run_on_host_a(&model, s3(), "repo").await;
    let listed = s3().list_sessions("repo").await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].session_id, id);

    let (texts, _) = resume_on_host_b(&model, s3(), "repo", Some(&id)).await;
    assert!(mentions(&texts, "the first question"), "{texts:#?}");
    assert!(mentions(&texts, "Answer one: pelican."), "{texts:#?}");
    let stored = s3()
        .load(&SessionKey::main("repo", &id))
        .await
        .unwrap()
        .unwrap();
    assert!(serde_json::to_string(&stored)
        .unwrap()
        .contains("Answer two."));
}
