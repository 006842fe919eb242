//! The session store conformance suite: the contract of
//! [`SessionStore`](byre_transport::store::SessionStore), checked against any implementation.
//!
//! ```no_run
//! use std::sync::Arc;
//! use byre_transport::store::MemoryStore;
//!
//! # async fn example() {
//! let passed = byre_testkit::store_conformance(|| Arc::new(MemoryStore::new())).await;
//! assert_eq!(passed, byre_testkit::STORE_CHECKS.len());
//! # }
//! ```

use std::sync::Arc;

use byre_transport::store::{
    fork_session, list_stored, rename_session, stored_info, stored_log, tag_session, SessionKey,
    SessionStore, SessionSummary, StoreError,
};
use byre_transport::{SessionInfo, SessionLog};
use serde_json::{json, Value};

/// The checks [`store_conformance`] runs, in order.
pub const STORE_CHECKS: &[&str] = &[
    "append then load gives the entries back, equal and in order",
    "load of a key never written gives None (a subpath of a known session too)",
    "appends keep their call order",
    "an empty append after data changes nothing",
    "a subpath is stored apart from the main transcript",
    "projects are apart (the same session id in two projects)",
    "list_sessions gives the project's sessions, with mtimes in milliseconds",
    "list_sessions leaves subagent transcripts out",
    "delete of a key never written is not an error, and load after delete gives None",
    "delete of a main key takes its subkeys, and nothing of other sessions or projects",
    "delete of a subkey takes only that subkey",
    "list_subkeys gives the session's subpaths only",
    "list_subkeys leaves out the main transcript, and an unknown session has none",
    "entries come back as written: unicode, nesting, numbers, unknown fields",
    "keys that would leave the store's root are refused",
    "concurrent appends to different sessions all land",
    "a kept summary is what the session's entries read whole give, and as new as the session",
    "a kept summary goes with its session's delete, and a subagent's entries do not change it",
    "a title, a tag and a fork made through the store show in its listing and its reads",
];

const P: &str = "-conformance-project";
const S1: &str = "00000000-0000-4000-8000-000000000001";
const S2: &str = "00000000-0000-4000-8000-000000000002";

fn e(n: u32) -> Value {
    json!({"type": "x", "uuid": format!("u{n}"), "n": n})
}

/// Runs every check of [`STORE_CHECKS`] on a new store from `make` each, and panics at the
/// first that fails, naming it. Gives how many passed (all of them).
pub async fn store_conformance<F>(mut make: F) -> usize
where
    F: FnMut() -> Arc<dyn SessionStore>,
{
    for (n, name) in STORE_CHECKS.iter().enumerate() {
        let store = make();
        if let Err(why) = check(n, &*store).await {
            panic!("store conformance check {} ({name}) failed: {why}", n + 1);
        }
    }
    STORE_CHECKS.len()
}

type Outcome = Result<(), String>;

fn ensure(ok: bool, why: impl FnOnce() -> String) -> Outcome {
    if ok {
        Ok(())
    } else {
        Err(why())
    }
}

fn eq<T: PartialEq + std::fmt::Debug>(got: T, want: T) -> Outcome {
    ensure(got == want, || format!("got {got:?}, want {want:?}"))
}

async fn ids(store: &dyn SessionStore, project: &str) -> Result<Vec<String>, String> {
    let mut ids: Vec<String> = store
        .list_sessions(project)
        .await
        .map_err(err)?
        .into_iter()
        .map(|s| s.session_id)
        .collect();
    ids.sort();
    Ok(ids)
}

fn err(e: StoreError) -> String {
    format!("store error: {e}")
}

async fn check(n: usize, store: &dyn SessionStore) -> Outcome {
    let main = SessionKey::main(P, S1);
    let sub = main.sub("subagents/agent-1");
    let sub2 = main.sub("subagents/agent-2");
    let other = SessionKey::main(P, S2);
    let load = |key: SessionKey| async move { store.load(&key).await.map_err(err) };
    let append = |key: SessionKey, entries: Vec<Value>| async move {
        store.append(&key, &entries).await.map_err(err)
    };
    match n {
        0 => {
            append(main.clone(), vec![e(1), e(2)]).await?;
            eq(load(main).await?, Some(vec![e(1), e(2)]))
        }
        1 => {
            eq(load(main.clone()).await?, None)?;
            append(main.clone(), vec![e(1)]).await?;
            eq(load(sub).await?, None)
        }
        2 => {
            for i in 1..=5 {
                append(main.clone(), vec![e(i * 2), e(i * 2 + 1)]).await?;
            }
            eq(load(main).await?, Some((2..=11).map(e).collect()))
        }
        3 => {
            append(main.clone(), vec![e(1)]).await?;
            append(main.clone(), vec![]).await?;
            eq(load(main).await?, Some(vec![e(1)]))
        }
        4 => {
            append(main.clone(), vec![e(1)]).await?;
            append(sub.clone(), vec![e(2)]).await?;
            eq(load(main).await?, Some(vec![e(1)]))?;
            eq(load(sub).await?, Some(vec![e(2)]))
        }
        5 => {
            let a = SessionKey::main("-project-a", S1);
            let b = SessionKey::main("-project-b", S1);
            append(a.clone(), vec![e(1)]).await?;
            append(b.clone(), vec![e(2)]).await?;
            eq(load(a).await?, Some(vec![e(1)]))?;
            eq(load(b).await?, Some(vec![e(2)]))?;
            eq(ids(store, "-project-a").await?, vec![S1.to_owned()])?;
            eq(ids(store, "-project-b").await?, vec![S1.to_owned()])
        }
        6 => {
            append(main.clone(), vec![e(1)]).await?;
            append(other.clone(), vec![e(2)]).await?;
            append(SessionKey::main("-elsewhere", S2), vec![e(3)]).await?;
            eq(ids(store, P).await?, vec![S1.to_owned(), S2.to_owned()])?;
            for s in store.list_sessions(P).await.map_err(err)? {
                ensure(s.mtime_ms > 1_000_000_000_000, || {
                    format!("mtime {} is not in milliseconds", s.mtime_ms)
                })?;
            }
            eq(ids(store, "-never-written").await?, Vec::<String>::new())
        }
        7 => {
            append(main.clone(), vec![e(1)]).await?;
            append(SessionKey::main(P, S2).sub("subagents/agent-9"), vec![e(2)]).await?;
            eq(ids(store, P).await?, vec![S1.to_owned()])
        }
        8 => {
            store.delete(&main).await.map_err(err)?;
            store.delete(&sub).await.map_err(err)?;
            append(main.clone(), vec![e(1)]).await?;
            store.delete(&main).await.map_err(err)?;
            eq(load(main).await?, None)
        }
        9 => {
            let elsewhere = SessionKey::main("-elsewhere", S1);
            append(main.clone(), vec![e(1)]).await?;
            append(sub.clone(), vec![e(2)]).await?;
            append(other.clone(), vec![e(3)]).await?;
            append(elsewhere.clone(), vec![e(4)]).await?;
            store.delete(&main).await.map_err(err)?;
            eq(load(main.clone()).await?, None)?;
            eq(load(sub).await?, None)?;
            eq(store.list_subkeys(&main).await.map_err(err)?, vec![])?;
            eq(ids(store, P).await?, vec![S2.to_owned()])?;
            eq(load(other).await?, Some(vec![e(3)]))?;
            eq(load(elsewhere).await?, Some(vec![e(4)]))
        }
        10 => {
            append(main.clone(), vec![e(1)]).await?;
            append(sub.clone(), vec![e(2)]).await?;
            append(sub2.clone(), vec![e(3)]).await?;
            store.delete(&sub).await.map_err(err)?;
            eq(load(sub).await?, None)?;
            eq(load(main.clone()).await?, Some(vec![e(1)]))?;
            eq(
                store.list_subkeys(&main).await.map_err(err)?,
                vec!["subagents/agent-2".to_owned()],
            )
        }
        11 => {
            append(main.clone(), vec![e(1)]).await?;
            append(sub.clone(), vec![e(2)]).await?;
            let deep = main.sub("subagents/workflows/run-1/agent-3");
            append(deep, vec![e(3)]).await?;
            append(other.sub("subagents/agent-4"), vec![e(4)]).await?;
            let mut got = store.list_subkeys(&main).await.map_err(err)?;
            got.sort();
            eq(
                got,
                vec![
                    "subagents/agent-1".to_owned(),
                    "subagents/workflows/run-1/agent-3".to_owned(),
                ],
            )
        }
        12 => {
            append(main.clone(), vec![e(1)]).await?;
            eq(store.list_subkeys(&main).await.map_err(err)?, vec![])?;
            let unknown = SessionKey::main(P, "00000000-0000-4000-8000-00000000dead");
            eq(store.list_subkeys(&unknown).await.map_err(err)?, vec![])
        }
        13 => {
            let odd = vec![
                json!({"type": "user", "message": {"content": "naïve ☃ 🦀 \"q\" \\ \n\t"}}),
                json!({"type": "x", "big": 12345678901234567u64, "neg": -1, "f": 0.1}),
                json!({"type": "x", "deep": [[[{"a": [null, true, {}]}]]], "zz": {"k": []}}),
            ];
            append(main.clone(), odd.clone()).await?;
            eq(load(main).await?, Some(odd))
        }
        14 => {
            for bad in [
                main.sub("../escape"),
                main.sub("/abs"),
                SessionKey::main("a/b", S1),
            ] {
                ensure(store.append(&bad, &[e(1)]).await.is_err(), || {
                    format!("the key {bad} was accepted")
                })?;
            }
            Ok(())
        }
        15 => {
            let keys: Vec<SessionKey> = (0..16)
                .map(|i| SessionKey::main(P, format!("00000000-0000-4000-8000-{i:012}")))
                .collect();
            let one = [e(7)];
            let writes = keys.iter().map(|k| store.append(k, &one));
            for done in futures::future::join_all(writes).await {
                done.map_err(err)?;
            }
            for key in keys {
                eq(load(key).await?, Some(vec![e(7)]))?;
            }
            eq(ids(store, P).await?.len(), 16)
        }
        16 => {
            let [first, second, third] = session_batches();
            append(main.clone(), first.clone()).await?;
            append(sub.clone(), vec![e(9)]).await?;
            append(main.clone(), second.clone()).await?;
            append(main.clone(), third.clone()).await?;
            let Some(summaries) = summaries(store, P).await? else {
                return Ok(());
            };
            let all: Vec<Value> = [first, second, third].concat();
            let whole = whole_info(&all);
            let [summary] = summaries.as_slice() else {
                return Err(format!("{} summaries, want 1", summaries.len()));
            };
            eq(&summary.session_id, &S1.to_owned())?;
            eq(same_fields(summary.info()), same_fields(whole))?;
            let listed = store.list_sessions(P).await.map_err(err)?;
            ensure(summary.mtime_ms >= listed[0].mtime_ms, || {
                format!(
                    "the summary's time {} is older than the session's {}",
                    summary.mtime_ms, listed[0].mtime_ms
                )
            })
        }
        17 => {
            let [first, ..] = session_batches();
            append(main.clone(), first.clone()).await?;
            append(other.clone(), first.clone()).await?;
            let Some(before) = summaries(store, P).await? else {
                return Ok(());
            };
            append(sub, vec![json!({"type": "tag", "tag": "sub"})]).await?;
            let after = summaries(store, P).await?.unwrap_or_default();
            let tags = |list: &[SessionSummary]| {
                let mut tags: Vec<_> = list.iter().map(|s| s.data.tag.clone()).collect();
                tags.sort();
                tags
            };
            eq(tags(&after), tags(&before))?;
            store.delete(&main).await.map_err(err)?;
            let left = summaries(store, P).await?.unwrap_or_default();
            eq(
                left.iter()
                    .map(|s| s.session_id.clone())
                    .collect::<Vec<_>>(),
                vec![S2.to_owned()],
            )
        }
        18 => {
            let [first, ..] = session_batches();
            append(main.clone(), first).await?;
            rename_session(store, &main, "Renamed").await.map_err(err)?;
            tag_session(store, &main, Some("review"))
                .await
                .map_err(err)?;
            let fork = fork_session(store, &main, None, None).await.map_err(err)?;
            let listed = list_stored(store, P, 0, None).await.map_err(err)?;
            let get = |id: &str| listed.iter().find(|i| i.session_id == id).cloned();
            let source = get(S1).ok_or("the source is not listed")?;
            eq(source.title.as_deref(), Some("Renamed"))?;
            eq(source.tag.as_deref(), Some("review"))?;
            let forked = get(&fork).ok_or("the fork is not listed")?;
            eq(forked.title.as_deref(), Some("Renamed (fork)"))?;
            eq(forked.first_prompt, source.first_prompt)?;
            let info = stored_info(store, &main).await.map_err(err)?;
            eq(info.and_then(|i| i.title), Some("Renamed".to_owned()))?;
            let forked_key = SessionKey::main(P, fork.as_str());
            let log = stored_log(store, &forked_key).await.map_err(err)?;
            let log = log.ok_or("the fork's transcript is not stored")?;
            let chain: Vec<_> = log.entries.iter().filter(|e| e.kind.is_chain()).collect();
            ensure(
                !chain.is_empty() && chain.iter().all(|e| e.forked_from.is_some()),
                || format!("the fork's entries are not marked as copies: {chain:?}"),
            )?;
            tag_session(store, &main, None).await.map_err(err)?;
            let listed = list_stored(store, P, 0, None).await.map_err(err)?;
            let source = listed.iter().find(|i| i.session_id == S1);
            eq(source.and_then(|i| i.tag.clone()), None)?;
            let unknown = SessionKey::main(P, "00000000-0000-4000-8000-00000000dead");
            ensure(rename_session(store, &unknown, "x").await.is_err(), || {
                "a session the store does not hold was renamed".into()
            })
        }
        _ => Err(format!("no check {n}")),
    }
}

/// A small session in three appends, as the CLI writes one: a prompt, an answer, a title
/// the CLI made, a tag, the last prompt, a second exchange on another branch.
fn session_batches() -> [Vec<Value>; 3] {
    let chain = |kind: &str, uuid: &str, parent: Option<&str>, content: &str, branch: &str| {
        json!({
            "type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": S1,
            "timestamp": format!("2026-01-0{}T10:00:00.000Z", uuid.len() % 9 + 1),
            "cwd": "/work/project", "gitBranch": branch, "entrypoint": "sdk-byre",
            "message": {"role": kind, "content": content},
        })
    };
    [
        vec![
            chain("user", "u1", None, "the first question", "main"),
            chain("assistant", "a1", Some("u1"), "an answer", "main"),
        ],
        vec![
            json!({"type": "ai-title", "aiTitle": "Questions", "sessionId": S1}),
            json!({"type": "tag", "tag": "triage", "sessionId": S1}),
        ],
        vec![
            chain("user", "u2", Some("a1"), "the second question", "feature"),
            chain("assistant", "a2", Some("u2"), "another answer", "feature"),
            json!({"type": "last-prompt", "lastPrompt": "the second question", "sessionId": S1}),
        ],
    ]
}

/// The summaries the store keeps; `None` when it keeps none.
async fn summaries(
    store: &dyn SessionStore,
    project: &str,
) -> Result<Option<Vec<SessionSummary>>, String> {
    match store.list_session_summaries(project).await {
        Ok(list) => Ok(Some(list)),
        Err(StoreError::Unsupported(_)) => Ok(None),
        Err(e) => Err(err(e)),
    }
}

/// What a picker shows of `entries` read whole.
fn whole_info(entries: &[Value]) -> Option<SessionInfo> {
    let size = entries
        .iter()
        .map(|v| serde_json::to_vec(v).map_or(0, |line| line.len() as u64 + 1))
        .sum();
    let log = SessionLog::from_values(entries.to_vec());
    SessionInfo::from_entries(S1, &log.entries, std::time::UNIX_EPOCH, size)
}

/// A listing's fields but its time (a summary has the store's, a whole read none).
fn same_fields(info: Option<SessionInfo>) -> Option<SessionInfo> {
    info.map(|mut info| {
        info.modified = std::time::UNIX_EPOCH;
        info
    })
}
