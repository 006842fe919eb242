//! What keeps a stored session whole: one writer at a time (the lease, on every backend,
//! with racing takers), a batch stored again after a lost answer held once (in object
//! storage and in a directory), a corrupt line
//! left out of a load and reported, and a directory store that never leaves its root.

use std::sync::Arc;
use std::time::Duration;

use byre_testkit::S3Server;
use byre_transport::store::{
    acquire_lease, materialize, Batch, DirStore, MemoryStore, ObjectSessionStore, SessionKey,
    SessionStore, StoreError, DEFAULT_LEASE_TTL,
};
use serde_json::{json, Value};

const ID: &str = "6f1d2c3b-0000-4000-8000-0000000000e1";

fn entry(uuid: &str) -> Value {
    json!({"type": "user", "uuid": uuid, "sessionId": ID, "message": {"content": uuid}})
}

/// The lease's rules on one store: one holder; a second taker is refused with the holder's
/// name; released, it is taken at once; expired, it is taken over and its old holder learns
/// it lost it; of many racing takers exactly one wins.
async fn lease_rules(store: Arc<dyn SessionStore>) {
    let key = SessionKey::main("-repo", ID);
    let lease = acquire_lease(store.clone(), &key, DEFAULT_LEASE_TTL)
        .await
        .expect("the first taker holds it");
    let refused = acquire_lease(
        store.clone(),
        &key.sub("subagents/agent-1"),
        DEFAULT_LEASE_TTL,
    )
    .await
    .expect_err("a subagent's key names the same session");
    let StoreError::Held { holder, .. } = &refused else {
        panic!("{refused}")
    };
    assert_eq!(holder.holder, lease.holder().holder);
    let text = refused.to_string();
    assert!(
        text.contains(ID) && text.contains("is in use by byre pid"),
        "{text}"
    );
    assert!(text.contains("ends in"), "{text}");
    lease.release().await.expect("released");

    let mut short = acquire_lease(store.clone(), &key, Duration::from_millis(200))
        .await
        .expect("a released lease is taken at once");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let taker = acquire_lease(store.clone(), &key, DEFAULT_LEASE_TTL)
        .await
        .expect("an expired lease is taken over");
    let lost = short.renew().await.expect_err("its old holder lost it");
    assert!(matches!(lost, StoreError::LeaseLost { .. }), "{lost}");
    taker.release().await.unwrap();

    let racers: Vec<_> = (0..8)
        .map(|_| {
            let store = store.clone();
            let key = key.clone();
            tokio::spawn(async move { acquire_lease(store, &key, DEFAULT_LEASE_TTL).await })
        })
        .collect();
    let mut won = 0;
    for racer in racers {
        match racer.await.unwrap() {
            Ok(_) => won += 1,
            Err(StoreError::Held { .. }) => {}
            Err(e) => panic!("a racer failed otherwise: {e}"),
        }
    }
    assert_eq!(won, 1, "exactly one racing taker holds the session");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_lease_holds_on_the_memory_store() {
    lease_rules(Arc::new(MemoryStore::new())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_lease_holds_on_a_directory_store() {
    let root = tempfile::tempdir().unwrap();
    lease_rules(Arc::new(DirStore::new(root.path()))).await;
    let lease = root.path().join("-repo").join(format!("{ID}.lease"));
    assert!(lease.is_file(), "the lease sits beside the session");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&lease).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_lease_holds_on_an_s3_server() {
    let server = tokio::task::spawn_blocking(S3Server::start)
        .await
        .unwrap()
        .expect("the S3-compatible test server starts");
    server.create_bucket("leases").unwrap();
    let store = ObjectSessionStore::from_url_with("s3://leases/byre", server.env())
        .expect("the store opens");
    lease_rules(Arc::new(store)).await;
}

#[tokio::test]
async fn a_store_without_leases_says_so() {
    #[derive(Debug)]
    struct Plain(MemoryStore);
    impl SessionStore for Plain {
        fn append<'a>(
            &'a self,
            key: &'a SessionKey,
            entries: &'a [Value],
        ) -> byre_transport::BoxFuture<'a, Result<(), StoreError>> {
            self.0.append(key, entries)
        }
        fn load<'a>(
            &'a self,
            key: &'a SessionKey,
        ) -> byre_transport::BoxFuture<'a, Result<Option<Vec<Value>>, StoreError>> {
            self.0.load(key)
        }
        fn list_sessions<'a>(
            &'a self,
            project_key: &'a str,
        ) -> byre_transport::BoxFuture<
            'a,
            Result<Vec<byre_transport::store::StoredSession>, StoreError>,
        > {
            self.0.list_sessions(project_key)
        }
        fn list_subkeys<'a>(
            &'a self,
            key: &'a SessionKey,
        ) -> byre_transport::BoxFuture<'a, Result<Vec<String>, StoreError>> {
            self.0.list_subkeys(key)
        }
        fn delete<'a>(
            &'a self,
            key: &'a SessionKey,
        ) -> byre_transport::BoxFuture<'a, Result<(), StoreError>> {
            self.0.delete(key)
        }
    }
    let store = Arc::new(Plain(MemoryStore::new()));
    let key = SessionKey::main("-repo", ID);
    let err = acquire_lease(store.clone(), &key, DEFAULT_LEASE_TTL)
        .await
        .expect_err("no leases");
    assert!(matches!(err, StoreError::Unsupported(_)), "{err}");
    // A batch still goes in, through `append`.
    let batch = Batch::new(&[entry("u1")]);
    store.append_batch(&key, &batch).await.unwrap();
    assert_eq!(store.load(&key).await.unwrap().unwrap(), vec![entry("u1")]);
}

#[tokio::test]
async fn a_batch_stored_again_after_a_lost_answer_is_held_once_in_object_storage() {
    let object = Arc::new(object_store::memory::InMemory::new());
    let store = ObjectSessionStore::new(object.clone(), "sessions");
    let key = SessionKey::main("-repo", ID);
    let first = Batch::new(&[entry("u1"), entry("u2")]);
    let second = Batch::new(&[entry("u3")]);
    assert!(first.id() < second.id(), "batch ids order as made");
    // The first write landed, its answer was lost, and it was tried again.
    store.append_batch(&key, &first).await.unwrap();
    store.append_batch(&key, &first).await.unwrap();
    store.append_batch(&key, &second).await.unwrap();
    let held = store.load(&key).await.unwrap().unwrap();
    assert_eq!(held, vec![entry("u1"), entry("u2"), entry("u3")]);
    assert_eq!(first.len(), 2);
    assert_eq!(first.bytes(), first.jsonl().len());
}

#[tokio::test]
async fn a_batch_stored_again_after_a_lost_answer_is_held_once_in_a_directory() {
    let root = tempfile::tempdir().unwrap();
    let store = DirStore::new(root.path());
    let key = SessionKey::main("-repo", ID);
    let first = Batch::new(&[entry("u1"), entry("u2")]);
    store.append_batch(&key, &first).await.unwrap();
    store.append_batch(&key, &first).await.unwrap();
    store
        .append_batch(&key, &Batch::new(&[entry("u3")]))
        .await
        .unwrap();
    let held = store.load(&key).await.unwrap().unwrap();
    assert_eq!(held, vec![entry("u1"), entry("u2"), entry("u3")]);
}

#[tokio::test]
async fn a_corrupt_line_in_a_stored_session_is_left_out_and_reported() {
    let root = tempfile::tempdir().unwrap();
    let store = DirStore::new(root.path());
    let key = SessionKey::main("-repo", ID);
    store.append(&key, &[entry("u1")]).await.unwrap();
    let path = store.path(&key).unwrap();
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str("{\"type\":\"user\",\"uuid\":\"broken\n");
    std::fs::write(&path, text).unwrap();
    store.append(&key, &[entry("u2")]).await.unwrap();

    let loaded = store.load_checked(&key).await.unwrap().unwrap();
    assert_eq!(loaded.entries, vec![entry("u1"), entry("u2")]);
    assert_eq!(loaded.skipped.len(), 1);
    assert_eq!(loaded.skipped[0].line, 2);
    let said = loaded.skipped[0].to_string();
    assert!(said.contains(ID) && said.contains("line 2"), "{said}");
    assert_eq!(
        store.load(&key).await.unwrap().unwrap(),
        loaded.entries,
        "a plain load leaves it out too"
    );
    let got = materialize(&store, "-repo", Some(ID), "-repo", None)
        .await
        .unwrap()
        .expect("the session loads");
    assert_eq!(got.skipped().len(), 1);
    let written = got.projects_dir().join("-repo").join(format!("{ID}.jsonl"));
    assert_eq!(std::fs::read_to_string(written).unwrap().lines().count(), 2);
}

#[cfg(unix)]
#[tokio::test]
async fn a_directory_store_never_follows_a_link_out_of_its_root() {
    let root = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let store = DirStore::new(root.path().join("store"));
    std::fs::create_dir_all(root.path().join("store")).unwrap();
    // A project folder that is a link to elsewhere.
    std::os::unix::fs::symlink(outside.path(), root.path().join("store").join("-linked")).unwrap();
    let key = SessionKey::main("-linked", ID);
    let refused = store.append(&key, &[entry("u1")]).await.unwrap_err();
    assert!(refused.to_string().contains("symbolic link"), "{refused}");
    assert!(store.load(&key).await.is_err());
    assert!(store.list_sessions("-linked").await.is_err());
    assert!(store.delete(&key).await.is_err());
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);

    // A session file that is a link to a file elsewhere.
    let secret = outside.path().join("secret.jsonl");
    std::fs::write(&secret, "{\"type\":\"user\"}\n").unwrap();
    let key = SessionKey::main("-repo", ID);
    std::fs::create_dir_all(root.path().join("store").join("-repo")).unwrap();
    std::os::unix::fs::symlink(&secret, store.path(&key).unwrap()).unwrap();
    assert!(store.load(&key).await.is_err(), "not read through the link");
    assert!(store.append(&key, &[entry("u1")]).await.is_err());
    assert_eq!(
        std::fs::read_to_string(&secret).unwrap(),
        "{\"type\":\"user\"}\n",
        "not written through the link"
    );
    // The session's lease neither.
    std::os::unix::fs::symlink(
        &secret,
        root.path().join("store/-repo").join(format!("{ID}.lease")),
    )
    .unwrap();
    let store: Arc<dyn SessionStore> = Arc::new(store);
    assert!(acquire_lease(store, &key, DEFAULT_LEASE_TTL).await.is_err());
}
