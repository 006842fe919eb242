//! Changing a stored session without its CLI, as [`SessionHistory`](crate::SessionHistory)
//! changes one on disk: a title, a tag, a fork. (Deleting is [`SessionStore::delete`].)
//! Each change is entries appended to the session, as the CLI writes them in its own files,
//! with an id and a time of their own.

use std::io;

use serde_json::Value;

use super::{SessionKey, SessionStore, StoreError};
use crate::sessions::edit;
use crate::{new_uuid, SessionLog};

/// Gives the stored session of `key` a title (a `custom-title` entry; trimmed, an empty
/// title refused), as the CLI's `/rename` does.
pub async fn rename_session(
    store: &dyn SessionStore,
    key: &SessionKey,
    title: &str,
) -> Result<(), StoreError> {
    let entry = edit::title_entry(&key.session_id, title).map_err(|e| refused(key, e))?;
    append_stamped(store, key, entry).await
}

/// Tags the stored session of `key` (`None` clears its tag): a `tag` entry. The tag is
/// trimmed and loses control, zero-width, direction-mark and private-use characters; a tag
/// left empty is refused.
pub async fn tag_session(
    store: &dyn SessionStore,
    key: &SessionKey,
    tag: Option<&str>,
) -> Result<(), StoreError> {
    let entry = edit::tag_entry(&key.session_id, tag).map_err(|e| refused(key, e))?;
    append_stamped(store, key, entry).await
}

/// Copies the stored session of `key` into a new session of the same project: its
/// conversation only (up to and including message `up_to` when given; subagent transcripts
/// are not copied), every entry with a new id and the new session's id, each marked
/// `forkedFrom` the entry it copies, then a title: `title`, or the source's with " (fork)".
/// Returns the new session's id; resume it from the store as any other.
pub async fn fork_session(
    store: &dyn SessionStore,
    key: &SessionKey,
    up_to: Option<&str>,
    title: Option<&str>,
) -> Result<String, StoreError> {
    let key = key.main_key();
    let Some(values) = store.load(&key).await? else {
        return Err(refused(&key, missing()));
    };
    let log = SessionLog::from_values(values);
    let (new_id, mut entries) =
        edit::fork_entries(&key.session_id, &log, up_to, title).map_err(|e| refused(&key, e))?;
    if let Some(last) = entries.last_mut() {
        stamp(last);
    }
    let target = SessionKey::main(key.project_key.as_str(), new_id.as_str());
    store.append(&target, &entries).await?;
    Ok(new_id)
}

/// Appends `entry`, with an id and the time, to the stored session of `key`, which must
/// exist (a title alone is not a session).
async fn append_stamped(
    store: &dyn SessionStore,
    key: &SessionKey,
    mut entry: Value,
) -> Result<(), StoreError> {
    let key = key.main_key();
    let sessions = store.list_sessions(&key.project_key).await?;
    if !sessions.iter().any(|s| s.session_id == key.session_id) {
        return Err(refused(&key, missing()));
    }
    stamp(&mut entry);
    store.append(&key, &[entry]).await
}

/// Gives `entry` an id and the time, as the CLI's metadata entries in a store carry.
fn stamp(entry: &mut Value) {
    if let Value::Object(map) = entry {
        map.insert("uuid".into(), Value::String(new_uuid()));
        let now = humantime::format_rfc3339_millis(std::time::SystemTime::now());
        map.insert("timestamp".into(), Value::String(now.to_string()));
    }
}

/// A change to the session of `key` that cannot be made.
fn refused(key: &SessionKey, error: io::Error) -> StoreError {
    StoreError::io(format!("changing the stored session {key}"), error)
}

/// The session is not in the store.
fn missing() -> io::Error {
    io::Error::new(io::ErrorKind::NotFound, "no such session in the store")
}
