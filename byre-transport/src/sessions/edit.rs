//! The entries that change a session without its CLI, on disk or in a store: a title, a tag,
//! and a fork's copy of a conversation.

use std::collections::HashMap;
use std::io;

use byre_proto::{EntryKind, SessionEntry};
use serde_json::{json, Value};

use super::{new_uuid, SessionLog};

/// A `custom-title` entry giving session `id` the title `title` (trimmed; empty refused).
pub(crate) fn title_entry(id: &str, title: &str) -> io::Result<Value> {
    let title = title.trim();
    if title.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "an empty title",
        ));
    }
    Ok(json!({"type": "custom-title", "customTitle": title, "sessionId": id}))
}

/// A `tag` entry tagging session `id` (`None` clears its tag). The tag is trimmed and loses
/// the characters that would show other than they read (controls, zero-width and direction
/// marks, private-use characters); a tag left empty by that is refused.
pub(crate) fn tag_entry(id: &str, tag: Option<&str>) -> io::Result<Value> {
    let tag = match tag {
        None => String::new(),
        Some(tag) => {
            let clean: String = tag.chars().filter(|&c| !hidden(c)).collect();
            let clean = clean.trim().to_owned();
            if clean.is_empty() {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "an empty tag (None clears the tag)",
                ));
            }
            clean
        }
    };
    Ok(json!({"type": "tag", "tag": tag, "sessionId": id}))
}

/// Whether `c` shows other than it reads: a control, a zero-width or direction mark, a
/// byte-order mark or a private-use character.
fn hidden(c: char) -> bool {
    c.is_control()
        || matches!(c,
            '\u{200B}'..='\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{2069}'
            | '\u{FEFF}'
            | '\u{E000}'..='\u{F8FF}')
}

/// A fork of the session `id` whose entries are `log`: its conversation only (up to and
/// including message `up_to` when given), every entry with a new id and the new session's id,
/// each marked `forkedFrom` the entry it copies, then a `custom-title` entry: `title`, or the
/// source's title (else its first prompt, else "Forked session") followed by " (fork)".
/// Returns the new session's id and its entries.
pub(crate) fn fork_entries(
    id: &str,
    log: &SessionLog,
    up_to: Option<&str>,
    title: Option<&str>,
) -> io::Result<(String, Vec<Value>)> {
    let mut kept: Vec<&SessionEntry> = Vec::new();
    for entry in &log.entries {
        if !entry.kind.is_chain()
            || entry.kind == EntryKind::PROGRESS
            || entry.is_sidechain == Some(true)
            || entry.uuid.is_none()
        {
            continue;
        }
        kept.push(entry);
        if up_to.is_some() && entry.uuid.as_deref() == up_to {
            break;
        }
    }
    if let Some(at) = up_to {
        if kept.last().and_then(|e| e.uuid.as_deref()) != Some(at) {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("no message {at} in session {id}"),
            ));
        }
    }
    let new_id = new_uuid();
    let ids: HashMap<&str, String> = kept
        .iter()
        .filter_map(|e| e.uuid.as_deref())
        .map(|u| (u, new_uuid()))
        .collect();
    let mut out = Vec::with_capacity(kept.len() + 1);
    for entry in kept {
        let old = entry.uuid.clone().unwrap_or_default();
        let mut copy = entry.clone();
        copy.uuid = ids.get(old.as_str()).cloned();
        // A parent that was not copied (a progress entry) is skipped to its own parent.
        copy.parent_uuid = entry
            .parent_uuid
            .as_deref()
            .and_then(|p| ancestor_copied(p, log, &ids).and_then(|a| ids.get(a).cloned()));
        copy.logical_parent_uuid = entry
            .logical_parent_uuid
            .as_deref()
            .and_then(|p| ids.get(p).cloned());
        copy.session_id = Some(new_id.clone());
        copy.is_sidechain = Some(false);
        copy.forked_from = Some(json!({"sessionId": id, "messageUuid": old}));
        out.push(serde_json::to_value(&copy).map_err(io::Error::other)?);
    }
    let title = match title.map(str::trim).filter(|t| !t.is_empty()) {
        Some(title) => title.to_owned(),
        None => {
            let info = crate::SessionInfo::from_entries(
                id,
                &log.entries,
                std::time::SystemTime::UNIX_EPOCH,
                0,
            );
            let source = info
                .and_then(|i| i.title.or(i.first_prompt))
                .unwrap_or_else(|| "Forked session".to_owned());
            format!("{source} (fork)")
        }
    };
    out.push(title_entry(&new_id, &title)?);
    Ok((new_id, out))
}

/// The nearest of `uuid` and its ancestors that was copied.
fn ancestor_copied<'a>(
    uuid: &'a str,
    log: &'a SessionLog,
    ids: &HashMap<&str, String>,
) -> Option<&'a str> {
    let mut at = uuid;
    for _ in 0..log.entries.len() + 1 {
        if ids.contains_key(at) {
            return Some(at);
        }
        let entry = log.entries.iter().find(|e| e.uuid.as_deref() == Some(at))?;
        at = entry.parent_uuid.as_deref()?;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tag_loses_what_would_show_other_than_it_reads() {
        let entry = tag_entry("s", Some(" re\u{202E}view\u{200B}\u{7} ")).unwrap();
        assert_eq!(entry["tag"], "review");
        assert!(tag_entry("s", Some("\u{200B} ")).is_err());
        assert_eq!(tag_entry("s", None).unwrap()["tag"], "");
        assert!(title_entry("s", "  ").is_err());
        assert_eq!(title_entry("s", " T ").unwrap()["customTitle"], "T");
    }
}
