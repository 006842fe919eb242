//! A batch of entries on its way to a store: encoded once as JSONL (what it holds in memory
//! is its size as text), and named once, so an append tried again is recognised.

use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use serde_json::Value;

use super::{from_jsonl, now_ms, to_jsonl, SessionKey, StoreError};

/// Batches made by this process, for the order of batches made in the same millisecond.
static BATCHES: AtomicU64 = AtomicU64::new(0);

/// Entries to append in one call, as JSONL, with an id of their own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Batch {
    id: String,
    jsonl: Bytes,
    entries: usize,
}

impl Batch {
    /// The entries as one batch. Its id orders after the ids of the batches this process made
    /// before it (and, across hosts, in the order of their clocks): the time in milliseconds,
    /// a counter and a random tag.
    pub fn new(entries: &[Value]) -> Batch {
        let seq = BATCHES.fetch_add(1, Ordering::Relaxed);
        let tag = &crate::sessions::new_uuid()[..8];
        Batch {
            id: format!("{:013}-{seq:010}-{tag}", now_ms()),
            jsonl: Bytes::from(to_jsonl(entries)),
            entries: entries.len(),
        }
    }

    /// Its id (names safe in a path: digits, `-` and hex).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Its entries as JSONL: one compact line each, each ending in a newline.
    pub fn jsonl(&self) -> &Bytes {
        &self.jsonl
    }

    /// How many entries it holds.
    pub fn len(&self) -> usize {
        self.entries
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.entries == 0
    }

    /// Its size in bytes (what it holds in memory, about).
    pub fn bytes(&self) -> usize {
        self.jsonl.len()
    }

    /// Its entries, decoded again.
    pub fn entries(&self) -> Result<Vec<Value>, StoreError> {
        let key = SessionKey::main("batch", self.id.as_str());
        let (entries, skipped) = from_jsonl(&key, &self.jsonl);
        match skipped.into_iter().next() {
            None => Ok(entries),
            Some(bad) => Err(StoreError::Corrupt {
                key: format!("batch {}", self.id),
                message: bad.to_string(),
            }),
        }
    }
}
