//! One writer per stored session: a lease record kept in the store beside the session, taken
//! with a conditional write, renewed while the session runs, released at its end, and taken
//! over by another writer only once it has expired.

use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{now_ms, SessionKey, SessionStore, StoreError};

/// How long a lease lasts unless renewed (its holder renews it at a third of this).
pub const DEFAULT_LEASE_TTL: Duration = Duration::from_secs(30);

/// How many times a taker reads and writes again when another writer changed the record
/// between its read and its write.
const ATTEMPTS: usize = 4;

/// A version of a session's lease record, as its store gives it (an object's e-tag, a hash
/// of a file's bytes): opaque, compared for equality only.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LeaseVersion(pub String);

/// A lease record as its store holds it: its bytes, and their version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredLease {
    /// The record.
    pub bytes: Vec<u8>,
    /// Its version (given back to replace it).
    pub version: LeaseVersion,
}

/// What a lease record says: who holds the session, since when, until when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeaseHolder {
    /// The holder, for people: `byre pid 1234 on build-7`.
    pub holder: String,
    /// A token unique to the holder's lease (two records never share one).
    pub token: String,
    /// When the holder took it, in milliseconds since the Unix epoch (its clock).
    pub since_ms: i64,
    /// When it ends unless renewed, in milliseconds since the Unix epoch (the holder's clock).
    pub expires_ms: i64,
    /// The holder closed the session: the next writer takes it at once.
    #[serde(default)]
    pub released: bool,
}

impl LeaseHolder {
    /// Whether another writer may take it now: released, or expired on this host's clock.
    pub fn is_free(&self) -> bool {
        self.released || self.expires_ms <= now_ms()
    }
}

/// A lease this process holds on a stored session.
#[derive(Debug)]
pub struct Lease {
    store: Arc<dyn SessionStore>,
    key: SessionKey,
    version: LeaseVersion,
    record: LeaseHolder,
    ttl: Duration,
}

/// Takes the lease of the session of `key` for `ttl`: written when there is none, or when
/// the one there is released or expired; [`StoreError::Held`] when another writer holds it.
/// A record that does not decode counts as expired.
pub async fn acquire_lease(
    store: Arc<dyn SessionStore>,
    key: &SessionKey,
    ttl: Duration,
) -> Result<Lease, StoreError> {
    let key = key.main_key();
    let now = now_ms();
    let record = LeaseHolder {
        holder: format!("byre pid {} on {}", std::process::id(), host_name()),
        token: crate::sessions::new_uuid(),
        since_ms: now,
        expires_ms: now + ttl_ms(ttl),
        released: false,
    };
    let bytes = encode(&record);
    let mut attempt = 0;
    loop {
        attempt += 1;
        let replacing = match store.read_lease(&key).await? {
            None => None,
            Some(StoredLease { bytes, version }) => {
                match serde_json::from_slice::<LeaseHolder>(&bytes) {
                    Ok(holder) if !holder.is_free() => {
                        return Err(StoreError::Held {
                            key: Box::new(key),
                            holder: Box::new(holder),
                        });
                    }
                    _ => Some(version),
                }
            }
        };
        match store.write_lease(&key, &bytes, replacing.as_ref()).await {
            Ok(version) => {
                return Ok(Lease {
                    store,
                    key,
                    version,
                    record,
                    ttl,
                });
            }
            // Another writer wrote between the read and the write: read again, and most
            // likely find it held.
            Err(StoreError::Conflict { .. }) if attempt < ATTEMPTS => continue,
            Err(e) => return Err(e),
        }
    }
}

impl Lease {
    /// What the record says now.
    pub fn holder(&self) -> &LeaseHolder {
        &self.record
    }

    /// The session it is for.
    pub fn key(&self) -> &SessionKey {
        &self.key
    }

    /// How long it lasts from each renewal.
    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    /// Extends it by its ttl from now. [`StoreError::LeaseLost`] when the record is no longer
    /// this lease's (another writer took it after it expired, or it was removed): nothing more
    /// may be written for the session.
    pub async fn renew(&mut self) -> Result<(), StoreError> {
        let mut next = self.record.clone();
        next.expires_ms = now_ms() + ttl_ms(self.ttl);
        self.write(next).await
    }

    /// Gives it up: the record says released, so the next writer takes it at once.
    pub async fn release(mut self) -> Result<(), StoreError> {
        let mut next = self.record.clone();
        next.released = true;
        next.expires_ms = now_ms();
        self.write(next).await
    }

    async fn write(&mut self, next: LeaseHolder) -> Result<(), StoreError> {
        let bytes = encode(&next);
        match self
            .store
            .write_lease(&self.key, &bytes, Some(&self.version))
            .await
        {
            Ok(version) => {
                self.version = version;
                self.record = next;
                Ok(())
            }
            Err(StoreError::Conflict { .. }) => {
                let why = match self.store.read_lease(&self.key).await {
                    Ok(Some(found)) => match serde_json::from_slice::<LeaseHolder>(&found.bytes) {
                        Ok(other) if other.token != self.record.token => format!(
                            "{} took it after it expired (the store did not take a renewal in \
                             time)",
                            other.holder
                        ),
                        _ => "its record changed".to_owned(),
                    },
                    Ok(None) => "its record was removed".to_owned(),
                    Err(e) => format!("its record changed, and reading it failed: {e}"),
                };
                Err(StoreError::LeaseLost {
                    key: Box::new(self.key.clone()),
                    why,
                })
            }
            Err(e) => Err(e),
        }
    }
}

fn encode(record: &LeaseHolder) -> Vec<u8> {
    let mut bytes = serde_json::to_vec(record).expect("a lease record serialises");
    bytes.push(b'\n');
    bytes
}

fn ttl_ms(ttl: Duration) -> i64 {
    i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX / 2)
}

/// This host's name, for a holder people can find (`localhost` when it cannot be read).
fn host_name() -> String {
    ["/proc/sys/kernel/hostname", "/etc/hostname"]
        .iter()
        .find_map(|path| std::fs::read_to_string(path).ok())
        .map(|name| name.trim().to_owned())
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "localhost".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::MemoryStore;

    fn store() -> Arc<dyn SessionStore> {
        Arc::new(MemoryStore::new())
    }

    #[tokio::test]
    async fn one_holder_at_a_time_and_release_frees_it() {
        let store = store();
        let key = SessionKey::main("-p", "11111111-1111-4111-8111-111111111111");
        let lease = acquire_lease(store.clone(), &key, DEFAULT_LEASE_TTL)
            .await
            .unwrap();
        let held = acquire_lease(store.clone(), &key, DEFAULT_LEASE_TTL)
            .await
            .unwrap_err();
        let StoreError::Held { holder, .. } = &held else {
            panic!("{held}")
        };
        assert_eq!(holder.token, lease.holder().token);
        assert!(held.to_string().contains("is in use by byre pid"), "{held}");
        lease.release().await.unwrap();
        acquire_lease(store, &key, DEFAULT_LEASE_TTL).await.unwrap();
    }

    #[tokio::test]
    async fn an_expired_lease_is_taken_over_and_its_holder_learns_it_is_lost() {
        let store = store();
        let key = SessionKey::main("-p", "22222222-2222-4222-8222-222222222222");
        let mut first = acquire_lease(store.clone(), &key, Duration::from_millis(1))
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(5)).await;
        let second = acquire_lease(store.clone(), &key, DEFAULT_LEASE_TTL)
            .await
            .unwrap();
        let lost = first.renew().await.unwrap_err();
        assert!(matches!(lost, StoreError::LeaseLost { .. }), "{lost}");
        assert!(
            lost.to_string().contains("took it after it expired"),
            "{lost}"
        );
        // The loser cannot release what it no longer holds; the winner still holds it.
        assert!(first.release().await.is_err());
        assert!(acquire_lease(store, &key, DEFAULT_LEASE_TTL).await.is_err());
        drop(second);
    }

    #[tokio::test]
    async fn renewal_moves_the_expiry_and_keeps_the_start() {
        let store = store();
        let key = SessionKey::main("-p", "33333333-3333-4333-8333-333333333333");
        let mut lease = acquire_lease(store, &key, Duration::from_secs(10))
            .await
            .unwrap();
        let (since, expires) = (lease.holder().since_ms, lease.holder().expires_ms);
        tokio::time::sleep(Duration::from_millis(3)).await;
        lease.renew().await.unwrap();
        assert_eq!(lease.holder().since_ms, since);
        assert!(lease.holder().expires_ms > expires);
    }

    #[tokio::test]
    async fn a_record_that_does_not_decode_is_taken_over() {
        let store = store();
        let key = SessionKey::main("-p", "44444444-4444-4444-8444-444444444444");
        store.write_lease(&key, b"not json", None).await.unwrap();
        acquire_lease(store, &key, DEFAULT_LEASE_TTL).await.unwrap();
    }
}
