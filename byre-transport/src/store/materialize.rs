//! Between a store and the CLI's disk: a stored session written into a scratch config
//! directory for the CLI to `--resume`, and a session on disk copied into a store.

use std::collections::HashMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{SessionKey, SessionStore, SkippedLine, StoreError};

/// The entry type a store holds a subagent's `.meta.json` sidecar as (never in a CLI file).
pub const AGENT_METADATA: &str = "agent_metadata";

/// What a scratch config directory is named: this, and a uuid.
pub const SCRATCH_PREFIX: &str = "byre-resume-";

/// A stored session on disk in a scratch config directory, removed when this is dropped.
/// The CLI resumes it with `CLAUDE_CONFIG_DIR` set to [`config_dir`](Materialized::config_dir).
///
/// The directory holds a copy of the caller's sign-in, so it must not outlive its process:
/// on Unix it is locked while this lives (`flock`, which the kernel lets go when the process
/// ends, SIGKILL included), and every [`materialize`] first removes the scratch directories
/// in the temporary folder that no live process holds. With a local CLI, byre's watchdog
/// removes it too when byre dies ([`ProcessOptions::watchdog_removes`]).
///
/// [`ProcessOptions::watchdog_removes`]: crate::ProcessOptions::watchdog_removes
#[derive(Debug)]
pub struct Materialized {
    scratch: crate::private::Scratch,
    key: SessionKey,
    skipped: Vec<SkippedLine>,
}

impl Materialized {
    /// The scratch config directory.
    pub fn config_dir(&self) -> &Path {
        self.scratch.dir()
    }

    /// Its `projects` directory (where the CLI writes, and so what its mirror lines name).
    pub fn projects_dir(&self) -> PathBuf {
        self.scratch.dir().join("projects")
    }

    /// The session put there.
    pub fn session_id(&self) -> &str {
        &self.key.session_id
    }

    /// Its key in the store.
    pub fn key(&self) -> &SessionKey {
        &self.key
    }

    /// The stored lines left out because they do not decode (the session loads without
    /// them, as the CLI loads its own files).
    pub fn skipped(&self) -> &[SkippedLine] {
        &self.skipped
    }
}

/// Writes a stored session into a new scratch config directory for the CLI to resume: the
/// main transcript at `projects/<project>/<id>.jsonl`, each subagent transcript beside it
/// with its `.meta.json`, and the caller's sign-in and settings copied from `from_config`
/// (its `.credentials.json` without the OAuth refresh token, `.claude.json`, and
/// `settings.json` without plugins or a `CLAUDE_CONFIG_DIR`). An entry equal to an earlier
/// one with the same `uuid` (a batch a retried append stored twice) is written once.
///
/// The session is looked up under `project_key` in the store and written under
/// `local_project` (the CLI's name for the directory it will run in: the two differ when the
/// session moves to another directory). `session_id: None` takes the project's latest
/// session (the newest with entries that is not a subagent's side chain). `Ok(None)` when the
/// store has no such session.
pub async fn materialize(
    store: &dyn SessionStore,
    project_key: &str,
    session_id: Option<&str>,
    local_project: &str,
    from_config: Option<&Path>,
) -> Result<Option<Materialized>, StoreError> {
    SessionKey::main(local_project, "x").validate()?;
    let (key, entries, skipped) = match session_id {
        Some(id) => {
            let key = SessionKey::main(project_key, id);
            match store.load_checked(&key).await? {
                Some(loaded) if !loaded.entries.is_empty() => (key, loaded.entries, loaded.skipped),
                _ => return Ok(None),
            }
        }
        None => match latest(store, project_key).await? {
            Some((key, loaded)) => (key, loaded.entries, loaded.skipped),
            None => return Ok(None),
        },
    };
    let base = std::env::temp_dir();
    // Those of a byre that was killed before it could remove its own.
    crate::private::remove_stale(&base, SCRATCH_PREFIX);
    let scratch = crate::private::Scratch::create(&base, SCRATCH_PREFIX).map_err(|e| {
        StoreError::io(
            format!("creating a scratch config in {}", base.display()),
            e,
        )
    })?;
    let dir = scratch.dir().to_owned();
    let io = |what: &str, e: io::Error| StoreError::io(format!("{what} in {}", dir.display()), e);
    // Removed again on any failure below.
    let mut materialized = Materialized {
        scratch,
        key: key.clone(),
        skipped,
    };
    let project = materialized.projects_dir().join(local_project);
    create_private_dir(&project).map_err(|e| io("creating the project", e))?;
    let entries = without_repeats(entries);
    write_private(&project.join(format!("{}.jsonl", key.session_id)), &entries)
        .map_err(|e| io("writing the transcript", e))?;
    for subpath in store.list_subkeys(&key).await? {
        let sub = key.sub(subpath.as_str());
        if sub.validate().is_err() {
            continue;
        }
        let Some(loaded) = store.load_checked(&sub).await? else {
            continue;
        };
        materialized.skipped.extend(loaded.skipped);
        let entries = loaded.entries;
        let (meta, lines): (Vec<Value>, Vec<Value>) = entries
            .into_iter()
            .partition(|e| e.get("type").and_then(Value::as_str) == Some(AGENT_METADATA));
        let file = project
            .join(&key.session_id)
            .join(format!("{subpath}.jsonl"));
        if let Some(parent) = file.parent() {
            create_private_dir(parent).map_err(|e| io("creating a subagent folder", e))?;
        }
        write_private(&file, &without_repeats(lines)).map_err(|e| io("writing a subagent", e))?;
        if let Some(Value::Object(mut meta)) = meta.into_iter().last() {
            meta.remove("type");
            let text = serde_json::to_vec(&meta).unwrap_or_default();
            crate::private::write_file(&file.with_extension("meta.json"), &text)
                .map_err(|e| io("writing a subagent's metadata", e))?;
        }
    }
    if let Some(from) = from_config {
        copy_sign_in(from, &dir).map_err(|e| io("copying the sign-in", e))?;
    }
    Ok(Some(materialized))
}

/// The project's newest session with entries that does not start as a side chain.
async fn latest(
    store: &dyn SessionStore,
    project_key: &str,
) -> Result<Option<(SessionKey, super::Loaded)>, StoreError> {
    let mut sessions = store.list_sessions(project_key).await?;
    sessions.sort_by_key(|s| std::cmp::Reverse(s.mtime_ms));
    for session in sessions {
        let key = SessionKey::main(project_key, session.session_id);
        let Some(loaded) = store.load_checked(&key).await? else {
            continue;
        };
        let side = loaded
            .entries
            .first()
            .and_then(|e| e.get("isSidechain"))
            .and_then(Value::as_bool)
            .unwrap_or(false);
        if !loaded.entries.is_empty() && !side {
            return Ok(Some((key, loaded)));
        }
    }
    Ok(None)
}

/// The entries without the repeats a retried append leaves (an append that failed after the
/// store had written it, tried again): an entry equal to an earlier one with the same `uuid`
/// is dropped. Entries without a uuid, and different entries that share one, are all kept.
fn without_repeats(entries: Vec<Value>) -> Vec<Value> {
    let mut kept: Vec<Value> = Vec::with_capacity(entries.len());
    let mut by_uuid: HashMap<String, Vec<usize>> = HashMap::new();
    for entry in entries {
        if let Some(uuid) = entry.get("uuid").and_then(Value::as_str) {
            let earlier = by_uuid.entry(uuid.to_owned()).or_default();
            if earlier.iter().any(|&at| kept[at] == entry) {
                continue;
            }
            earlier.push(kept.len());
        }
        kept.push(entry);
    }
    kept
}

use crate::private::create_dir as create_private_dir;

fn write_private(path: &Path, entries: &[Value]) -> io::Result<()> {
    crate::private::write_file(path, &super::to_jsonl(entries))
}

/// Copies what the CLI needs to sign in and behave as configured, and nothing that would
/// point it back at the original config directory.
fn copy_sign_in(from: &Path, to: &Path) -> io::Result<()> {
    let read_json = |name: &str| -> Option<serde_json::Map<String, Value>> {
        let bytes = fs::read(from.join(name)).ok()?;
        match serde_json::from_slice(&bytes).ok()? {
            Value::Object(map) => Some(map),
            _ => None,
        }
    };
    let write_json = |name: &str, map: serde_json::Map<String, Value>| -> io::Result<()> {
        let bytes = serde_json::to_vec(&map).map_err(io::Error::other)?;
        crate::private::write_file(&to.join(name), &bytes)
    };
    if let Some(mut credentials) = read_json(".credentials.json") {
        // Two CLIs refreshing one token would sign each other out.
        if let Some(Value::Object(oauth)) = credentials.get_mut("claudeAiOauth") {
            oauth.remove("refreshToken");
        }
        write_json(".credentials.json", credentials)?;
    }
    // With CLAUDE_CONFIG_DIR set the CLI keeps .claude.json inside it; without, beside it.
    let outer = from.parent().map(|p| p.join(".claude.json"));
    let state = read_json(".claude.json").or_else(|| {
        let bytes = fs::read(outer?).ok()?;
        serde_json::from_slice::<serde_json::Map<String, Value>>(&bytes).ok()
    });
    if let Some(state) = state {
        write_json(".claude.json", state)?;
    }
    if let Some(mut settings) = read_json("settings.json") {
        settings.remove("enabledPlugins");
        settings.remove("extraKnownMarketplaces");
        if let Some(Value::Object(env)) = settings.get_mut("env") {
            env.remove("CLAUDE_CONFIG_DIR");
        }
        write_json("settings.json", settings)?;
    }
    Ok(())
}

/// Copies a session the CLI wrote on disk into a store, in batches of up to 500 entries:
/// the main transcript at `file` under `(project_key, its id)`, and its subagents'
/// transcripts under their subpaths, each followed by its `.meta.json` as one
/// `agent_metadata` entry. Gives the session's key.
pub async fn import_session(
    store: &dyn SessionStore,
    project_key: &str,
    file: &Path,
) -> Result<SessionKey, StoreError> {
    let id = file
        .file_stem()
        .and_then(|s| s.to_str())
        .ok_or_else(|| StoreError::io("importing", io::ErrorKind::InvalidInput.into()))?;
    let key = SessionKey::main(project_key, id);
    key.validate()?;
    append_file(store, &key, file, None).await?;
    let dir = file.with_extension("");
    let mut subagents = Vec::new();
    super::dir::walk_files(&dir.join("subagents"), "subagents", &mut subagents);
    subagents.sort();
    for subpath in subagents {
        let path = dir.join(format!("{subpath}.jsonl"));
        let meta = fs::read(path.with_extension("meta.json"))
            .ok()
            .and_then(|b| serde_json::from_slice::<serde_json::Map<String, Value>>(&b).ok())
            .map(|mut meta| {
                meta.insert("type".into(), AGENT_METADATA.into());
                Value::Object(meta)
            });
        append_file(store, &key.sub(subpath.as_str()), &path, meta).await?;
    }
    Ok(key)
}

async fn append_file(
    store: &dyn SessionStore,
    key: &SessionKey,
    path: &Path,
    then: Option<Value>,
) -> Result<(), StoreError> {
    let bytes =
        fs::read(path).map_err(|e| StoreError::io(format!("reading {}", path.display()), e))?;
    // A line the CLI could not read either is left out, as the CLI leaves it out.
    let (mut entries, _unreadable) = super::from_jsonl(key, &bytes);
    entries.extend(then);
    for batch in entries.chunks(500) {
        store.append(key, batch).await?;
    }
    Ok(())
}
