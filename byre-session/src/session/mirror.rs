//! Mirroring a session to a store: the rules for the CLI's `transcript_mirror` lines (which
//! transcript each names, how they gather into batches, when a batch goes out), with no IO.

use byre_proto::{CliMessage, SessionKey};
use serde_json::Value;

/// When mirrored entries go to the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum MirrorFlush {
    /// Gathered, and sent at the end of each turn (before its `result` is handed over), when
    /// more than [`MirrorConfig::max_entries`] entries or [`MirrorConfig::max_bytes`] wait,
    /// and when the CLI exits. The default: one store write per transcript per turn.
    #[default]
    Batched,
    /// Each `transcript_mirror` line as it comes: less to lose if the host dies mid-turn, one
    /// store write per line.
    Eager,
}

/// How a session mirrors its transcripts ([`SessionConfig::mirror`](super::SessionConfig)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MirrorConfig {
    /// When entries go out.
    pub flush: MirrorFlush,
    /// A batched flush happens early past this many waiting entries (500 by default).
    pub max_entries: usize,
    /// ... or past this many bytes of them (1 MiB by default, as their JSON).
    pub max_bytes: usize,
    /// The project key entries are stored under; `None` keeps the CLI's (its name for the
    /// working directory, from the file path).
    pub project_key: Option<String>,
}

impl Default for MirrorConfig {
    fn default() -> Self {
        MirrorConfig {
            flush: MirrorFlush::Batched,
            max_entries: 500,
            max_bytes: 1 << 20,
            project_key: None,
        }
    }
}

/// Entries for one transcript, to append to the store in one call.
#[derive(Debug, Clone, PartialEq)]
pub struct MirrorBatch {
    /// The transcript.
    pub key: SessionKey,
    /// Its new entries, in the order the CLI wrote them.
    pub entries: Vec<Value>,
    /// Their size as JSON, about.
    pub bytes: usize,
}

/// What one `transcript_mirror` line did.
#[derive(Debug, Default)]
pub(crate) struct Observed {
    /// Batches to send now.
    pub(crate) flush: Vec<MirrorBatch>,
    /// The line named no session file: why (its entries are not mirrored).
    pub(crate) unmapped: Option<String>,
}

/// The entries waiting to go out, gathered per transcript in the order first seen.
#[derive(Debug)]
pub(crate) struct Mirror {
    config: MirrorConfig,
    pending: Vec<MirrorBatch>,
    entries: usize,
    bytes: usize,
}

impl Mirror {
    pub(crate) fn new(config: MirrorConfig) -> Mirror {
        Mirror {
            config,
            pending: Vec::new(),
            entries: 0,
            bytes: 0,
        }
    }

    /// Takes a message: a `transcript_mirror` line is gathered (and `Some` says what came of
    /// it); a `result` flushes what waits; anything else is not the mirror's.
    pub(crate) fn observe(&mut self, message: &CliMessage) -> Option<Observed> {
        match message {
            CliMessage::TranscriptMirror(line) => {
                let path = line.file_path.as_deref().unwrap_or_default();
                let Some(mut key) = SessionKey::from_file_path(path) else {
                    let n = line.entries.as_ref().map_or(0, Vec::len);
                    return Some(Observed {
                        unmapped: Some(format!(
                            "a transcript_mirror line for {path:?}, which is no session file \
                             of the CLI's projects folder: its {n} entries are not mirrored"
                        )),
                        ..Observed::default()
                    });
                };
                if let Some(project) = &self.config.project_key {
                    key.project_key.clone_from(project);
                }
                let entries = line.entries.clone().unwrap_or_default();
                let bytes: usize = entries.iter().map(json_size).sum();
                self.entries += entries.len();
                self.bytes += bytes;
                match self.pending.iter_mut().find(|b| b.key == key) {
                    Some(batch) => {
                        batch.entries.extend(entries);
                        batch.bytes += bytes;
                    }
                    None => self.pending.push(MirrorBatch {
                        key,
                        entries,
                        bytes,
                    }),
                }
                let now = self.config.flush == MirrorFlush::Eager
                    || self.entries > self.config.max_entries
                    || self.bytes > self.config.max_bytes;
                Some(Observed {
                    flush: if now { self.flush() } else { Vec::new() },
                    unmapped: None,
                })
            }
            CliMessage::Result(_) => Some(Observed {
                flush: self.flush(),
                unmapped: None,
            }),
            _ => None,
        }
    }

    /// Everything waiting, one batch per transcript (none empty).
    pub(crate) fn flush(&mut self) -> Vec<MirrorBatch> {
        self.entries = 0;
        self.bytes = 0;
        let mut out = std::mem::take(&mut self.pending);
        out.retain(|b| !b.entries.is_empty());
        out
    }
}

impl<T> super::Session<T> {
    /// Takes a message for the mirror; `true` when it was a mirror line, which then is no
    /// event.
    pub(super) fn observe_mirror(&mut self, message: &CliMessage) -> bool {
        let Some(seen) = self.mirror.as_mut().and_then(|m| m.observe(message)) else {
            return false;
        };
        if !seen.flush.is_empty() {
            self.actions.push_back(super::Action::Mirror(seen.flush));
        }
        if let Some(error) = seen.unmapped {
            let entries = match message {
                CliMessage::TranscriptMirror(line) => line.entries.as_ref().map_or(0, Vec::len),
                _ => 0,
            };
            self.store_lost.add(None, entries, &error);
            self.events.push_back(super::Event::MirrorFailed {
                key: None,
                entries,
                error,
            });
        }
        matches!(message, CliMessage::TranscriptMirror(_))
    }

    /// Sends what waits to be mirrored now ([`super::Action::Mirror`]), as at a turn's end:
    /// before a close, or when the host wants the store up to date. Done by the core itself
    /// when the CLI exits.
    pub fn flush_mirror(&mut self) {
        if let Some(mirror) = &mut self.mirror {
            let batches = mirror.flush();
            if !batches.is_empty() {
                self.actions.push_back(super::Action::Mirror(batches));
            }
        }
    }

    /// The stored session was loaded without lines that do not decode: reported as
    /// [`super::Event::StoredLinesSkipped`].
    pub fn stored_lines_skipped(&mut self, lines: Vec<String>) {
        if !lines.is_empty() {
            self.events
                .push_back(super::Event::StoredLinesSkipped { lines });
        }
    }

    /// A mirror batch did not reach the store: reported as [`super::Event::MirrorFailed`],
    /// and counted in [`Session::store_losses`](super::Session::store_losses).
    pub fn mirror_failed(&mut self, key: SessionKey, entries: usize, error: impl Into<String>) {
        let error = error.into();
        self.store_lost.add(Some(&key), entries, &error);
        self.events.push_back(super::Event::MirrorFailed {
            key: Some(key),
            entries,
            error,
        });
    }

    /// What did not reach the store so far, per transcript: every
    /// [`super::Event::MirrorFailed`] counted, in bounded memory (the first
    /// [`STORE_LOSS_KEYS`] transcripts each on their own, the rest together).
    pub fn store_losses(&self) -> &[StoreLoss] {
        &self.store_lost.0
    }
}

/// Mirrored entries of one transcript that did not reach the store.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct StoreLoss {
    /// The transcript; `None` for entries of a mirror line that named no session file, and
    /// for those of transcripts past the first [`STORE_LOSS_KEYS`].
    pub key: Option<SessionKey>,
    /// How many entries.
    pub entries: u64,
    /// In how many failed batches.
    pub batches: u64,
    /// Why the first of them failed.
    pub error: String,
}

/// How many transcripts [`Session::store_losses`](super::Session::store_losses) counts each on
/// its own.
pub const STORE_LOSS_KEYS: usize = 32;

/// The count of store losses, per transcript.
#[derive(Debug, Default)]
pub(super) struct StoreLosses(Vec<StoreLoss>);

impl StoreLosses {
    fn add(&mut self, key: Option<&SessionKey>, entries: usize, error: &str) {
        let keyed = self.0.iter().filter(|l| l.key.is_some()).count();
        let key = key
            .filter(|k| keyed < STORE_LOSS_KEYS || self.has(k))
            .cloned();
        match self.0.iter_mut().find(|l| l.key == key) {
            Some(loss) => {
                loss.entries += entries as u64;
                loss.batches += 1;
            }
            None => self.0.push(StoreLoss {
                key,
                entries: entries as u64,
                batches: 1,
                error: error.to_owned(),
            }),
        }
    }

    fn has(&self, key: &SessionKey) -> bool {
        self.0.iter().any(|l| l.key.as_ref() == Some(key))
    }
}

/// The size of a JSON value as compact JSON, about (strings counted without escapes).
pub(crate) fn json_size(value: &Value) -> usize {
    match value {
        Value::Null => 4,
        Value::Bool(_) => 5,
        Value::Number(_) => 8,
        Value::String(s) => s.len() + 2,
        Value::Array(items) => 2 + items.iter().map(|v| json_size(v) + 1).sum::<usize>(),
        Value::Object(map) => {
            2 + map
                .iter()
                .map(|(k, v)| k.len() + 4 + json_size(v))
                .sum::<usize>()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const SID: &str = "6f1d2c3b-0000-4000-8000-000000000001";

    fn mirror_line(file: &str, n: usize) -> CliMessage {
        let entries: Vec<Value> = (0..n).map(|i| json!({"type": "user", "n": i})).collect();
        let line = json!({"type": "transcript_mirror", "filePath": file, "entries": entries});
        serde_json::from_value(line).unwrap()
    }

    fn result() -> CliMessage {
        let line = json!({"type": "result", "subtype": "success", "is_error": false});
        serde_json::from_value(line).unwrap()
    }

    #[test]
    fn batched_gathers_per_transcript_until_the_result() {
        let mut mirror = Mirror::new(MirrorConfig::default());
        let main = format!("/h/.claude/projects/-w/{SID}.jsonl");
        let sub = format!("/h/.claude/projects/-w/{SID}/subagents/agent-a.jsonl");
        for file in [&main, &sub, &main] {
            let seen = mirror.observe(&mirror_line(file, 2)).unwrap();
            assert!(seen.flush.is_empty() && seen.unmapped.is_none());
        }
        let out = mirror.observe(&result()).unwrap().flush;
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].key, SessionKey::main("-w", SID));
        assert_eq!(out[0].entries.len(), 4);
        assert_eq!(out[1].key.subpath.as_deref(), Some("subagents/agent-a"));
        assert!(mirror.observe(&result()).unwrap().flush.is_empty());
    }

    #[test]
    fn eager_and_thresholds_flush_at_once() {
        let main = format!("/c/projects/-w/{SID}.jsonl");
        let mut eager = Mirror::new(MirrorConfig {
            flush: MirrorFlush::Eager,
            ..MirrorConfig::default()
        });
        assert_eq!(
            eager.observe(&mirror_line(&main, 1)).unwrap().flush.len(),
            1
        );
        let mut batched = Mirror::new(MirrorConfig {
            max_entries: 3,
            ..MirrorConfig::default()
        });
        assert!(batched
            .observe(&mirror_line(&main, 3))
            .unwrap()
            .flush
            .is_empty());
        assert_eq!(
            batched.observe(&mirror_line(&main, 1)).unwrap().flush[0]
                .entries
                .len(),
            4
        );
    }

    #[test]
    fn a_line_for_another_file_is_reported() {
        let mut mirror = Mirror::new(MirrorConfig::default());
        let seen = mirror.observe(&mirror_line("/etc/passwd", 2)).unwrap();
        assert!(seen.unmapped.unwrap().contains("2 entries"));
        assert!(mirror.flush().is_empty());
        let keep_alive: CliMessage = serde_json::from_value(json!({"type": "keep_alive"})).unwrap();
        assert!(mirror.observe(&keep_alive).is_none());
    }

    #[test]
    fn sizes_are_close_to_the_json() {
        let v = json!({"type": "user", "message": {"content": [1, "two", null, true]}});
        let real = serde_json::to_string(&v).unwrap().len();
        let guess = json_size(&v);
        assert!(guess >= real / 2 && guess <= real * 2, "{guess} vs {real}");
    }
}
