//! The values every wire type holds: unknown fields and misfits ([`Extra`], [`Misfit`]), exact
//! numbers, raw JSON text and whole unknown objects.

use serde::de::{self, Deserialize, Deserializer};
use serde_json::{Map, Value};

/// What a wire struct keeps beyond its typed fields: the fields it does not model, exactly as
/// received, and which of its optional fields came as an explicit `null`.
///
/// It dereferences to the map of unknown fields. A typed optional field received as `null`
/// decodes as `None` and is remembered here, so re-encoding writes the `null` back: see the
/// `is_null` and `set_null` methods of each wire struct.
///
/// A field that did not fit (see [`Misfit`]) is kept here too, as its JSON text:
/// [`Extra::misfits`]. It is not in the map, and re-encoding writes it back as it came.
///
/// Every decoded object holds one, and almost none has an unknown field or a misfit: those
/// live in a box of their own, so an `Extra` is two words, and one without them is made,
/// moved and dropped without touching memory elsewhere.
#[derive(Clone, Default)]
pub struct Extra {
    rare: Rare,
    nulls: u64,
}

/// The unknown fields and misfits of an object, when it has any.
#[derive(Debug, Clone, Default, PartialEq)]
struct RareBox {
    fields: Map<String, Value>,
    misfits: Vec<Misfit>,
}

/// The box of an object's unknown fields and misfits, dropped and cloned with an inline check
/// for none (a box's own drop is a call, and every decoded object has one of these).
#[derive(Default)]
struct Rare(std::mem::ManuallyDrop<Option<Box<RareBox>>>);

impl Clone for Rare {
    #[inline(always)]
    fn clone(&self) -> Self {
        match self.0.is_some() {
            true => self.clone_some(),
            false => Rare::default(),
        }
    }
}

impl Drop for Rare {
    #[inline(always)]
    fn drop(&mut self) {
        if self.0.is_some() {
            self.drop_some();
        }
    }
}

impl Rare {
    #[cold]
    #[inline(never)]
    fn drop_some(&mut self) {
        drop(self.0.take());
    }

    #[cold]
    #[inline(never)]
    fn clone_some(&self) -> Self {
        Rare(std::mem::ManuallyDrop::new((*self.0).clone()))
    }

    fn get(&self) -> Option<&RareBox> {
        self.0.as_deref()
    }

    fn get_mut(&mut self) -> &mut RareBox {
        self.0.get_or_insert_with(Default::default)
    }
}

/// The map an object without unknown fields reads as.
fn no_fields() -> &'static Map<String, Value> {
    static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
    EMPTY.get_or_init(Map::new)
}

/// A field of an object that did not fit byre's model, kept as the JSON text it came in: a
/// value nested deeper than a [`Value`] can hold (128 levels), a number out of `f64`'s range, a
/// typed field of another type (a string where a number was expected), or a required field the
/// object lacks. The object around it stays typed; a typed field that misfits is `None` (a
/// required one holds an empty value of its type), and re-encoding writes the text back in
/// its place. [`FindUnknown::misfit_paths`](crate::FindUnknown::misfit_paths) lists every
/// misfit of a message.
#[derive(Debug, Clone, PartialEq)]
pub struct Misfit {
    /// The field's key.
    pub key: String,
    /// Its JSON text as received; `None` for a required field that was missing.
    pub raw: Option<RawJson>,
    /// Why it did not fit.
    pub why: String,
}

impl Extra {
    /// No unknown fields and no nulls.
    pub fn new() -> Self {
        Self::default()
    }

    /// The unknown fields, as a map (misfits are left out: see [`Extra::misfits`]).
    pub fn into_map(mut self) -> Map<String, Value> {
        self.rare
            .0
            .take()
            .map(|rare| rare.fields)
            .unwrap_or_default()
    }

    /// The fields that did not fit the model, kept as their JSON text.
    pub fn misfits(&self) -> &[Misfit] {
        self.rare.get().map_or(&[], |rare| &rare.misfits)
    }

    /// The misfit with key `key`, if that field did not fit.
    pub fn misfit(&self, key: &str) -> Option<&Misfit> {
        self.misfits().iter().find(|m| m.key == key)
    }

    /// Keeps `key` as a misfit (replacing an earlier one of the same key, as a repeated key's
    /// last value wins), and drops it from the map of unknown fields.
    pub(crate) fn push_misfit(&mut self, key: String, raw: Option<&str>, why: String) {
        let rare = self.rare.get_mut();
        rare.fields.remove(&key);
        rare.misfits.retain(|m| m.key != key);
        rare.misfits.push(Misfit {
            key,
            raw: raw.map(RawJson::from_checked),
            why,
        });
    }

    /// A field `key` decoded after all: a misfit of the same key from earlier in the object is
    /// dropped (the last value of a repeated key wins).
    #[inline]
    pub(crate) fn fitted(&mut self, key: &str) {
        if let Some(rare) = &mut *self.rare.0 {
            rare.misfits.retain(|m| m.key != key);
        }
    }

    /// Takes an unknown field from its JSON text: into the map, or as a misfit where a
    /// [`Value`] cannot hold it (too deep, a number out of range).
    pub(crate) fn insert_raw(&mut self, key: String, raw: &str) {
        match crate::wire::lenient::field::<Value>(raw) {
            Ok(value) => {
                self.fitted(&key);
                self.rare.get_mut().fields.insert(key, value);
            }
            Err(why) => self.push_misfit(key, Some(raw), why),
        }
    }

    /// Writes the misfits kept as text into an open map.
    pub(crate) fn serialize_misfits<M: serde::ser::SerializeMap>(
        &self,
        map: &mut M,
    ) -> Result<(), M::Error> {
        for misfit in self.misfits() {
            if let Some(raw) = &misfit.raw {
                map.serialize_entry(&misfit.key, raw)?;
            }
        }
        Ok(())
    }

    pub(crate) fn null_bit(&self, bit: u32) -> bool {
        self.nulls & (1 << bit) != 0
    }

    pub(crate) fn set_null_bit(&mut self, bit: u32, null: bool) {
        if null {
            self.nulls |= 1 << bit;
        } else {
            self.nulls &= !(1 << bit);
        }
    }
}

impl std::ops::Deref for Extra {
    type Target = Map<String, Value>;
    #[inline]
    fn deref(&self) -> &Map<String, Value> {
        match self.rare.get() {
            Some(rare) => &rare.fields,
            None => no_fields(),
        }
    }
}

/// Borrowing the map mutably makes room for it (a box), even if nothing is put in.
impl std::ops::DerefMut for Extra {
    fn deref_mut(&mut self) -> &mut Map<String, Value> {
        &mut self.rare.get_mut().fields
    }
}

impl<'a> IntoIterator for &'a Extra {
    type Item = (&'a String, &'a Value);
    type IntoIter = serde_json::map::Iter<'a>;
    fn into_iter(self) -> Self::IntoIter {
        std::ops::Deref::deref(self).iter()
    }
}

/// Equal when the unknown fields, the misfits and the nulls are (an empty box is none).
impl PartialEq for Extra {
    fn eq(&self, other: &Self) -> bool {
        self.nulls == other.nulls && **self == **other && self.misfits() == other.misfits()
    }
}

impl std::fmt::Debug for Extra {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut debug = f.debug_struct("Extra");
        debug.field("fields", &**self).field("nulls", &self.nulls);
        if !self.misfits().is_empty() {
            debug.field("misfits", &self.misfits());
        }
        debug.finish()
    }
}

impl From<Map<String, Value>> for Extra {
    fn from(fields: Map<String, Value>) -> Self {
        let rare = match fields.is_empty() {
            true => None,
            false => Some(Box::new(RareBox {
                fields,
                misfits: Vec::new(),
            })),
        };
        Extra {
            rare: Rare(std::mem::ManuallyDrop::new(rare)),
            nulls: 0,
        }
    }
}

impl FromIterator<(String, Value)> for Extra {
    fn from_iter<I: IntoIterator<Item = (String, Value)>>(iter: I) -> Self {
        Extra::from(iter.into_iter().collect::<Map<String, Value>>())
    }
}

/// A JSON number kept exactly as received (integer or float), for values such as costs and
/// durations where the CLI is free to send either.
pub type Number = serde_json::Number;

/// A JSON value kept as the text it came in, decoded only when asked: for payloads whose type
/// depends on context, such as the answer to a control request (its type follows from the
/// request it answers). Re-encoding writes the text back as it was.
#[derive(Debug, Clone)]
pub struct RawJson(Box<str>);

impl RawJson {
    /// Encodes `value` as a raw JSON value.
    pub fn from_serialize<T: serde::Serialize + ?Sized>(
        value: &T,
    ) -> Result<Self, serde_json::Error> {
        serde_json::value::to_raw_value(value).map(|raw| RawJson(raw.into()))
    }

    /// Keeps `text`, which was checked to be one JSON value as serde_json would take it.
    pub(crate) fn from_checked(text: &str) -> Self {
        RawJson(text.into())
    }

    /// The JSON text.
    pub fn get(&self) -> &str {
        &self.0
    }

    /// Decodes the text as `T`.
    pub fn parse<T: de::DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        serde_json::from_str(&self.0)
    }

    /// Decodes the text as a [`Value`]. Fails where the text is JSON that a `Value` cannot
    /// hold: a lone surrogate escape, nesting deeper than serde_json's limit of 128, or a
    /// number out of `f64`'s range.
    pub fn to_value(&self) -> Result<Value, serde_json::Error> {
        serde_json::from_str(&self.0)
    }

    /// Whether the value is `null`.
    pub fn is_null(&self) -> bool {
        &*self.0 == "null"
    }
}

impl From<Value> for RawJson {
    fn from(value: Value) -> Self {
        RawJson::from_serialize(&value).expect("a Value always serializes")
    }
}

/// Equal when the texts are, or else when both decode to the same value.
impl PartialEq for RawJson {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
            || matches!((self.to_value(), other.to_value()), (Ok(a), Ok(b)) if a == b)
    }
}

impl serde::Serialize for RawJson {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // As serde_json's own raw value does: its serializers write the text as it is (and
        // its `Value` serializer parses it); others see a struct of one field.
        use serde::ser::SerializeStruct;
        let mut raw = serializer.serialize_struct(crate::text::RAW_VALUE, 1)?;
        raw.serialize_field(crate::text::RAW_VALUE, &*self.0)?;
        raw.end()
    }
}

impl<'de> Deserialize<'de> for RawJson {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Box::<serde_json::value::RawValue>::deserialize(deserializer).map(|raw| RawJson(raw.into()))
    }
}

/// An object whose tag byre does not know (or that has no tag), kept whole.
///
/// It holds every key of the object except the tags of the enclosing unions that were already
/// matched: for an unknown `system` subtype, `fields` holds `subtype` and the rest, not `type`.
/// A value a [`Value`] cannot hold (nested too deep, a number out of range) is kept as its JSON
/// text among `fields`' [misfits](Extra::misfits).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Unknown {
    /// The object's keys and values, as received.
    pub fields: Extra,
}

impl Unknown {
    /// The object `fields`, boxed as a union's `Unknown` variant holds it.
    pub fn boxed(fields: impl Into<Extra>) -> Box<Self> {
        Box::new(Unknown {
            fields: fields.into(),
        })
    }

    /// The value of `key`, if present.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.fields.get(key)
    }

    /// The string value of `key`, if present and a string (for example the unknown tag).
    pub fn get_str(&self, key: &str) -> Option<&str> {
        self.fields.get(key).and_then(Value::as_str)
    }
}
