//! The values every wire type holds: unknown fields ([`Extra`]), exact numbers, raw JSON text
//! and whole unknown objects.

use serde::de::{self, Deserialize, Deserializer};
use serde_json::{Map, Value};

/// What a wire struct keeps beyond its typed fields: the fields it does not model, exactly as
/// received, and which of its optional fields came as an explicit `null`.
///
/// It dereferences to the map of unknown fields. A typed optional field received as `null`
/// decodes as `None` and is remembered here, so re-encoding writes the `null` back: see the
/// `is_null` and `set_null` methods of each wire struct.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Extra {
    fields: Map<String, Value>,
    nulls: u64,
}

impl Extra {
    /// No unknown fields and no nulls.
    pub fn new() -> Self {
        Self::default()
    }

    /// The unknown fields, as a map.
    pub fn into_map(self) -> Map<String, Value> {
        self.fields
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
    fn deref(&self) -> &Map<String, Value> {
        &self.fields
    }
}

impl std::ops::DerefMut for Extra {
    fn deref_mut(&mut self) -> &mut Map<String, Value> {
        &mut self.fields
    }
}

impl<'a> IntoIterator for &'a Extra {
    type Item = (&'a String, &'a Value);
    type IntoIter = serde_json::map::Iter<'a>;
    fn into_iter(self) -> Self::IntoIter {
        self.fields.iter()
    }
}

impl From<Map<String, Value>> for Extra {
    fn from(fields: Map<String, Value>) -> Self {
        Extra { fields, nulls: 0 }
    }
}

impl FromIterator<(String, Value)> for Extra {
    fn from_iter<I: IntoIterator<Item = (String, Value)>>(iter: I) -> Self {
        Extra {
            fields: iter.into_iter().collect(),
            nulls: 0,
        }
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

/// An object whose tag (or shape) byre does not know, kept whole.
///
/// It holds every key of the object except the tags of the enclosing unions that were already
/// matched: for an unknown `system` subtype, `fields` holds `subtype` and the rest, not `type`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Unknown {
    /// The object's keys and values, as received.
    pub fields: Map<String, Value>,
    /// Set on a top-level message of a known type whose fields did not fit byre's model (for
    /// example a string where a number was expected): why the typed decode failed.
    pub mismatch: Option<String>,
}

impl Unknown {
    /// The object `fields`, boxed as a union's `Unknown` variant holds it (no mismatch).
    pub fn boxed(fields: Map<String, Value>) -> Box<Self> {
        Box::new(Unknown {
            fields,
            mismatch: None,
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
