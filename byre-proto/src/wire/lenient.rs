//! The lenient decode: what a line of a known type becomes when a part of it does not fit the
//! model (a value nested deeper than serde_json's limit, a number out of `f64`'s range, a field
//! of another type, a required field missing). Every value is read as its JSON text first and
//! then decoded; what does not decode is kept as that text where it sits ([`Misfit`]), and the
//! rest stays typed, so a line whose `type` is known is always delivered as that type.
//!
//! It runs only after the strict decode of a line failed, on this thread, for that one line:
//! the strict path pays one thread-local read per object and nothing else.
//!
//! [`Misfit`]: super::Misfit

use std::cell::Cell;
use std::fmt;

use serde::de::{self, DeserializeOwned, DeserializeSeed, Deserializer, Visitor};

use crate::text::{raw_key, RawText, RAW_VALUE};

/// How many typed values a lenient decode nests before it keeps a list or an object as text:
/// each level is decoded from its own text by a parser of its own (whose nesting limit starts
/// again), so this bounds the stack, and the work (each level reads what is inside it once
/// more).
const MAX_LEVELS: u32 = 24;

thread_local! {
    /// 0 when no lenient decode runs on this thread; else 1 + the typed levels entered.
    static LEVEL: Cell<u32> = const { Cell::new(0) };
}

/// Whether a lenient decode runs on this thread.
#[inline]
pub(crate) fn active() -> bool {
    LEVEL.get() != 0
}

/// Puts the thread's level back however a decode ends.
struct Restore(u32);

impl Drop for Restore {
    fn drop(&mut self) {
        LEVEL.set(self.0);
    }
}

/// Runs `decode` as a lenient decode.
pub(crate) fn run<T>(decode: impl FnOnce() -> T) -> T {
    let _restore = Restore(LEVEL.replace(1));
    decode()
}

/// Decodes one value from its JSON text, leniently inside: `Err` with the reason when the value
/// does not fit `T` at all (or sits too deep to be typed), for the caller to keep as text.
pub(crate) fn field<T: DeserializeOwned>(text: &str) -> Result<T, String> {
    let level = LEVEL.get();
    if level > MAX_LEVELS && text.trim_start().starts_with(['{', '[']) {
        return Err(format!("nested more than {MAX_LEVELS} typed values deep"));
    }
    let _restore = Restore(LEVEL.replace(level + 1));
    serde_json::from_str(text).map_err(|e| e.to_string())
}

/// A required field `key` that the object lacks: an error in the strict decode; in a lenient
/// one, a misfit (without text) and an empty value of its type.
pub(crate) fn missing<T: Absent, E: de::Error>(
    extra: &mut super::Extra,
    key: &'static str,
) -> Result<T, E> {
    if !active() {
        return Err(E::missing_field(key));
    }
    if extra.misfit(key).is_none() {
        extra.push_misfit(key.to_owned(), None, "missing".to_owned());
    }
    Ok(T::absent())
}

/// Reads the next value of a map as its JSON text (serde_json hands it over without a nesting
/// limit: it skips a value with a stack of its own).
pub(crate) fn next_raw<'de, A: de::MapAccess<'de>>(map: &mut A) -> Result<RawText<'de>, A::Error> {
    map.next_value_seed(RawSeed)
}

/// Asks the deserializer for a value's JSON text, as serde_json's own raw value does.
struct RawSeed;

impl<'de> DeserializeSeed<'de> for RawSeed {
    type Value = RawText<'de>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_newtype_struct(RAW_VALUE, RawVisitor)
    }
}

struct RawVisitor;

impl<'de> Visitor<'de> for RawVisitor {
    type Value = RawText<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a value's JSON text")
    }

    fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        if !raw_key(&mut map)? {
            return Err(de::Error::custom("a lenient decode reads JSON text only"));
        }
        map.next_value::<RawText<'de>>()
    }
}

/// What a required field holds when the line lacks it or it does not fit: an empty value of
/// its type (the field is listed as a [`Misfit`](super::Misfit), and is not written back).
pub(crate) trait Absent {
    fn absent() -> Self;
}

macro_rules! absent_default {
    ($($t:ty),* $(,)?) => {
        $(impl Absent for $t {
            fn absent() -> Self {
                <$t>::default()
            }
        })*
    };
}
absent_default!(
    String,
    crate::Text,
    crate::Names,
    bool,
    u64,
    i64,
    serde_json::Value
);

impl Absent for serde_json::Number {
    fn absent() -> Self {
        serde_json::Number::from(0u8)
    }
}

impl<T> Absent for Vec<T> {
    fn absent() -> Self {
        Vec::new()
    }
}

impl<K, V> Absent for std::collections::BTreeMap<K, V> {
    fn absent() -> Self {
        std::collections::BTreeMap::new()
    }
}

impl<T: Absent> Absent for Box<T> {
    fn absent() -> Self {
        Box::new(T::absent())
    }
}
