//! A session's archived mark: `<project>/<session>/archived.json` beside its file
//! (`{"archived": true, "at": "<ISO 8601>", "by": "sdk"}`), as the TypeScript SDK writes it;
//! the session file itself is not touched. A prompt the user types after the mark unarchives
//! the session.

use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// The most of a mark read: a mark is a few dozen bytes.
const MARK_LIMIT: u64 = 4096;

/// The mark of the session whose file is `session_file`.
fn mark_path(session_file: &Path) -> PathBuf {
    session_file.with_extension("").join("archived.json")
}

/// Marks the session whose file is `session_file` archived, or not: the mark is written to
/// a temporary file (mode 0600, in a folder made 0700) and renamed into place.
pub(crate) fn write_mark(session_file: &Path, archived: bool) -> io::Result<()> {
    let path = mark_path(session_file);
    let folder = session_file.with_extension("");
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(&folder)?;
    let at = humantime::format_rfc3339_millis(SystemTime::now()).to_string();
    let mark = serde_json::json!({"archived": archived, "at": at, "by": "sdk"});
    let temporary = path.with_extension("json.tmp");
    let mut open = std::fs::OpenOptions::new();
    open.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut open, 0o600);
    open.open(&temporary)?
        .write_all(mark.to_string().as_bytes())?;
    std::fs::rename(&temporary, &path)
}

/// Whether the session whose file is `session_file` is archived: `None` without a mark (or
/// with one that does not read), `Some(false)` when it was unarchived or the user typed a
/// prompt after it was archived (`last_typed_at`).
pub(crate) fn archived(session_file: &Path, last_typed_at: Option<&str>) -> Option<bool> {
    let mut bytes = Vec::new();
    std::fs::File::open(mark_path(session_file))
        .ok()?
        .take(MARK_LIMIT)
        .read_to_end(&mut bytes)
        .ok()?;
    let mark: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    let on = mark.get("archived")?.as_bool()?;
    let at = humantime::parse_rfc3339_weak(mark.get("at")?.as_str()?).ok()?;
    if !on {
        return Some(false);
    }
    let typed_later = last_typed_at
        .and_then(|t| humantime::parse_rfc3339_weak(t).ok())
        .is_some_and(|typed| typed > at);
    Some(!typed_later)
}
