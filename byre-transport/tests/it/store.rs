//! The session stores: the conformance suite on every backend (memory, a directory, object
//! storage on a local filesystem and on an S3-compatible server), materialising a stored
//! session for the CLI, and importing one from disk.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use byre_testkit::{store_conformance, S3Server, STORE_CHECKS};
use byre_transport::store::{
    import_session, list_stored, materialize, open_store, DirStore, MemoryStore,
    ObjectSessionStore, SessionKey, SessionStore, AGENT_METADATA, SCRATCH_PREFIX,
};
use byre_transport::SessionLog;
use serde_json::{json, Value};

static FRESH: AtomicUsize = AtomicUsize::new(0);

#[tokio::test]
async fn memory_store_conforms() {
    let passed = store_conformance(|| Arc::new(MemoryStore::new())).await;
    assert_eq!(passed, STORE_CHECKS.len());
}

#[tokio::test]
async fn dir_store_conforms() {
    let root = tempfile::tempdir().unwrap();
    let path = root.path().to_owned();
    let passed = store_conformance(move || {
        let n = FRESH.fetch_add(1, Ordering::Relaxed);
        Arc::new(DirStore::new(path.join(n.to_string())))
    })
    .await;
    assert_eq!(passed, STORE_CHECKS.len());
}

#[tokio::test]
async fn object_store_on_a_local_filesystem_conforms() {
    let root = tempfile::tempdir().unwrap();
    let path = root.path().to_owned();
    let passed = store_conformance(move || {
        let n = FRESH.fetch_add(1, Ordering::Relaxed);
        let dir = path.join(n.to_string());
        std::fs::create_dir_all(&dir).unwrap();
        let fs = object_store::local::LocalFileSystem::new_with_prefix(&dir).unwrap();
        Arc::new(ObjectSessionStore::new(Arc::new(fs), "sessions"))
    })
    .await;
    assert_eq!(passed, STORE_CHECKS.len());
}

/// An S3 store on the test server, in a bucket of its own, under `prefix`.
fn s3_store(server: &S3Server, bucket: &str, prefix: &str) -> ObjectSessionStore {
    server.create_bucket(bucket).unwrap();
    let mut builder = object_store::aws::AmazonS3Builder::new().with_bucket_name(bucket);
    for (k, v) in server.env() {
        builder = builder.with_config(k.to_ascii_lowercase().parse().unwrap(), v);
    }
    ObjectSessionStore::new(Arc::new(builder.build().unwrap()), prefix)
}

#[tokio::test]
async fn object_store_on_an_s3_server_conforms() {
    let server = tokio::task::spawn_blocking(S3Server::start)
        .await
        .unwrap()
        .expect("the S3-compatible test server starts");
    let passed = store_conformance(|| {
        let n = FRESH.fetch_add(1, Ordering::Relaxed);
        Arc::new(s3_store(
            &server,
            &format!("conformance-{n}"),
            "byre/sessions",
        ))
    })
    .await;
    assert_eq!(passed, STORE_CHECKS.len());
}

#[test]
fn store_urls() {
    assert!(open_store("memory:").is_ok());
    assert!(open_store("file:///tmp/byre-sessions").is_ok());
    assert!(open_store("s3://bucket/prefix").is_ok());
    let err = open_store("ftp://host/x").unwrap_err().to_string();
    assert!(err.contains("ftp://host/x"), "{err}");
}

fn entry(kind: &str, uuid: &str) -> Value {
    json!({"type": kind, "uuid": uuid, "sessionId": "s", "message": {"content": uuid}})
}

#[tokio::test]
async fn a_stored_session_is_materialised_for_the_cli_and_removed_after() {
    let store = MemoryStore::new();
    let id = "6f1d2c3b-0000-4000-8000-00000000000a";
    let key = SessionKey::main("-host-a-work", id);
    store
        .append(&key, &[entry("user", "u1"), entry("assistant", "a1")])
        .await
        .unwrap();
    let sub = key.sub("subagents/agent-a1");
    let meta = json!({"type": AGENT_METADATA, "agentType": "general-purpose", "toolUseId": "t"});
    store
        .append(&sub, &[entry("user", "s1"), meta])
        .await
        .unwrap();
    // The caller's sign-in and settings, with what must not travel.
    let config = tempfile::tempdir().unwrap();
    let creds = json!({"claudeAiOauth": {"accessToken": "a", "refreshToken": "r"}});
    std::fs::write(config.path().join(".credentials.json"), creds.to_string()).unwrap();
    let settings = json!({"model": "m", "enabledPlugins": {"x": true},
                          "env": {"CLAUDE_CONFIG_DIR": "/elsewhere", "KEEP": "1"}});
    std::fs::write(config.path().join("settings.json"), settings.to_string()).unwrap();

    let got = materialize(
        &store,
        "-host-a-work",
        Some(id),
        "-host-b-w",
        Some(config.path()),
    )
    .await
    .unwrap()
    .expect("the session is in the store");
    let dir = got.config_dir().to_owned();
    let main = got
        .projects_dir()
        .join("-host-b-w")
        .join(format!("{id}.jsonl"));
    let text = std::fs::read_to_string(&main).unwrap();
    assert_eq!(text.lines().count(), 2);
    assert!(text.contains("\"u1\"") && text.contains("\"a1\""));
    let agent = main.with_extension("").join("subagents/agent-a1.jsonl");
    assert_eq!(std::fs::read_to_string(&agent).unwrap().lines().count(), 1);
    let sidecar: Value =
        serde_json::from_slice(&std::fs::read(agent.with_extension("meta.json")).unwrap()).unwrap();
    assert_eq!(
        sidecar,
        json!({"agentType": "general-purpose", "toolUseId": "t"})
    );
    let creds: Value =
        serde_json::from_slice(&std::fs::read(dir.join(".credentials.json")).unwrap()).unwrap();
    assert_eq!(creds, json!({"claudeAiOauth": {"accessToken": "a"}}));
    let settings: Value =
        serde_json::from_slice(&std::fs::read(dir.join("settings.json")).unwrap()).unwrap();
    assert_eq!(settings, json!({"model": "m", "env": {"KEEP": "1"}}));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode =
            |path: &std::path::Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
        for file in [
            main.clone(),
            agent.clone(),
            agent.with_extension("meta.json"),
            dir.join(".credentials.json"),
            dir.join("settings.json"),
        ] {
            assert_eq!(mode(&file), 0o600, "{}", file.display());
        }
        for folder in [
            dir.clone(),
            got.projects_dir(),
            main.parent().unwrap().to_owned(),
            agent.parent().unwrap().to_owned(),
        ] {
            assert_eq!(mode(&folder), 0o700, "{}", folder.display());
        }
        let name = dir.file_name().unwrap().to_str().unwrap();
        assert!(name.starts_with(SCRATCH_PREFIX), "{name}");
    }
    drop(got);
    assert!(!dir.exists(), "the scratch config is removed");

    // The latest session of the project, skipping one that is a side chain.
    let newer = SessionKey::main("-host-a-work", "6f1d2c3b-0000-4000-8000-00000000000b");
    let side = json!({"type": "user", "uuid": "x", "isSidechain": true});
    store.append(&newer, &[side]).await.unwrap();
    let latest = materialize(&store, "-host-a-work", None, "-w", None)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(latest.session_id(), id);
    assert!(materialize(&store, "-nothing", None, "-w", None)
        .await
        .unwrap()
        .is_none());
}

#[tokio::test]
async fn entries_a_retried_append_stored_twice_reach_the_cli_once() {
    let store = MemoryStore::new();
    let id = "6f1d2c3b-0000-4000-8000-00000000000c";
    let key = SessionKey::main("-p", id);
    let batch = [entry("user", "u1"), entry("assistant", "a1")];
    let title = json!({"type": "custom-title", "customTitle": "t"});
    // The first append failed after the store had written it; the retry wrote it again.
    store.append(&key, &batch).await.unwrap();
    store.append(&key, &batch).await.unwrap();
    // Not repeats: an entry without a uuid, and a different entry under a uuid already seen.
    let mut edited = entry("assistant", "a1");
    edited["message"]["content"] = json!("edited");
    store
        .append(&key, &[title.clone(), title, edited, entry("user", "u2")])
        .await
        .unwrap();
    let sub = key.sub("subagents/agent-x");
    store.append(&sub, &[entry("user", "s1")]).await.unwrap();
    store.append(&sub, &[entry("user", "s1")]).await.unwrap();

    let got = materialize(&store, "-p", Some(id), "-p", None)
        .await
        .unwrap()
        .expect("the session is in the store");
    let main = got.projects_dir().join("-p").join(format!("{id}.jsonl"));
    let lines: Vec<Value> = std::fs::read_to_string(&main)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let uuids: Vec<_> = lines.iter().map(|l| l["uuid"].as_str()).collect();
    assert_eq!(
        uuids,
        [Some("u1"), Some("a1"), None, None, Some("a1"), Some("u2")]
    );
    assert_eq!(lines[4]["message"]["content"], "edited");
    let agent = main.with_extension("").join("subagents/agent-x.jsonl");
    assert_eq!(std::fs::read_to_string(agent).unwrap().lines().count(), 1);
}

#[tokio::test]
async fn a_projects_stored_sessions_are_listed_newest_first_with_their_titles() {
    let store = MemoryStore::new();
    let key = |id: &str| SessionKey::main("-p", format!("6f1d2c3b-0000-4000-8000-00000000010{id}"));
    let title = json!({"type": "custom-title", "customTitle": "the old one"});
    let side = json!({"type": "user", "uuid": "x", "isSidechain": true});
    // Appended in this order, a few milliseconds apart: the store's times order them.
    for (id, entries) in [
        ("1", vec![entry("user", "first question"), title]),
        ("2", vec![side]),
        (
            "3",
            vec![entry("user", "second question"), entry("assistant", "a")],
        ),
    ] {
        store.append(&key(id), &entries).await.unwrap();
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    store
        .append(&key("4"), &[entry("user", "newest question")])
        .await
        .unwrap();
    store
        .append(
            &SessionKey::main("-other", "x"),
            &[entry("user", "elsewhere")],
        )
        .await
        .unwrap();

    let listed = list_stored(&store, "-p", 0, None).await.unwrap();
    let shown: Vec<_> = listed
        .iter()
        .map(|i| (&i.session_id[34..], i.label(), i.path.is_none()))
        .collect();
    // The side chain is not a session of its own; the title outranks the prompts.
    assert_eq!(
        shown,
        [
            ("04", Some("newest question"), true),
            ("03", Some("second question"), true),
            ("01", Some("the old one"), true),
        ]
    );
    assert_eq!(listed[2].first_prompt.as_deref(), Some("first question"));
    assert!(listed[1].size > 0);
    let page = list_stored(&store, "-p", 1, Some(1)).await.unwrap();
    assert_eq!(page.len(), 1);
    assert_eq!(page[0].session_id, listed[1].session_id);
    assert!(list_stored(&store, "-none", 0, None)
        .await
        .unwrap()
        .is_empty());

    // Read whole, as a session log: what is not an entry is counted, not fatal.
    let mut values = store.load(&key("3")).await.unwrap().unwrap();
    values.push(json!(42));
    let log = SessionLog::from_values(values);
    assert_eq!(log.entries.len(), 2);
    assert_eq!(log.bad_lines, [3]);
    assert_eq!(log.messages().len(), 2);
}

#[tokio::test]
async fn a_session_on_disk_is_imported_with_its_subagents() {
    let dir = tempfile::tempdir().unwrap();
    let id = "6f1d2c3b-0000-4000-8000-00000000000c";
    let file = dir.path().join(format!("{id}.jsonl"));
    let lines: Vec<String> = (0..1203)
        .map(|n| entry("user", &format!("u{n}")).to_string())
        .collect();
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    let agents = dir.path().join(id).join("subagents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(
        agents.join("agent-a9.jsonl"),
        entry("user", "s").to_string() + "\n",
    )
    .unwrap();
    std::fs::write(
        agents.join("agent-a9.meta.json"),
        r#"{"agentType":"Explore"}"#,
    )
    .unwrap();
    let store = MemoryStore::new();
    let key = import_session(&store, "-p", &file).await.unwrap();
    assert_eq!(key, SessionKey::main("-p", id));
    assert_eq!(store.entries(&key).unwrap().len(), 1203);
    let sub = store.entries(&key.sub("subagents/agent-a9")).unwrap();
    assert_eq!(
        sub[1],
        json!({"type": AGENT_METADATA, "agentType": "Explore"})
    );
}

#[cfg(unix)]
#[tokio::test]
async fn a_directory_store_makes_its_folders_and_files_private() {
    use std::os::unix::fs::PermissionsExt;
    let root = tempfile::tempdir().unwrap();
    let store = DirStore::new(root.path().join("store"));
    let key = SessionKey::main("-p", "6f1d2c3b-0000-4000-8000-00000000000c");
    store
        .append(&key.sub("subagents/agent-a"), &[entry("user", "s1")])
        .await
        .unwrap();
    let mode =
        |path: std::path::PathBuf| std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    for folder in [
        "store",
        "store/-p",
        "store/-p/6f1d2c3b-0000-4000-8000-00000000000c",
    ] {
        assert_eq!(mode(root.path().join(folder)), 0o700, "{folder}");
    }
    let file = "store/-p/6f1d2c3b-0000-4000-8000-00000000000c/subagents/agent-a.jsonl";
    assert_eq!(mode(root.path().join(file)), 0o600);
}

#[tokio::test]
async fn a_summary_that_misses_entries_is_not_used_and_is_made_again_at_the_next_append() {
    let dir = tempfile::tempdir().unwrap();
    let local = tempfile::tempdir().unwrap();
    let fs = object_store::local::LocalFileSystem::new_with_prefix(local.path()).unwrap();
    let fs: Arc<dyn object_store::ObjectStore> = Arc::new(fs);
    let stores: [(&str, Arc<dyn SessionStore>); 2] = [
        ("dir", Arc::new(DirStore::new(dir.path()))),
        ("object", Arc::new(ObjectSessionStore::new(fs.clone(), "s"))),
    ];
    let id = "6f1d2c3b-0000-4000-8000-0000000000aa";
    let key = SessionKey::main("-p", id);
    let title = |t: &str| json!({"type": "custom-title", "customTitle": t});
    for (name, store) in stores {
        store
            .append(&key, &[entry("user", "q"), title("one")])
            .await
            .unwrap();
        // Another writer adds a title without the store's summary: the CLI writing its own
        // file in a directory store, a part put by hand in object storage.
        let line = format!("{}\n", title("two"));
        match name {
            "dir" => {
                use std::io::Write;
                let path = dir.path().join(format!("-p/{id}.jsonl"));
                let mut file = std::fs::OpenOptions::new().append(true).open(path).unwrap();
                file.write_all(line.as_bytes()).unwrap();
            }
            _ => {
                let part = object_store::path::Path::from(format!("s/-p/{id}/main/zz.jsonl"));
                let payload = object_store::PutPayload::from(line.into_bytes());
                object_store::ObjectStoreExt::put(&*fs, &part, payload)
                    .await
                    .unwrap();
            }
        }
        let summaries = store.list_session_summaries("-p").await.unwrap();
        assert!(
            summaries.is_empty(),
            "{name}: a summary missing an entry was given"
        );
        let listed = list_stored(&*store, "-p", 0, None).await.unwrap();
        assert_eq!(listed[0].title.as_deref(), Some("two"), "{name}");

        store
            .append(&key, &[entry("assistant", "a")])
            .await
            .unwrap();
        let summaries = store.list_session_summaries("-p").await.unwrap();
        assert_eq!(summaries.len(), 1, "{name}");
        assert_eq!(
            summaries[0].data.custom_title.as_deref(),
            Some("two"),
            "{name}"
        );
        let listed = list_stored(&*store, "-p", 0, None).await.unwrap();
        assert_eq!(listed[0].title.as_deref(), Some("two"), "{name}");
        assert_eq!(listed[0].first_prompt.as_deref(), Some("q"), "{name}");
    }
}
