//! The machinery every wire type is built from: lossless objects, tagged unions and open strings.
//!
//! Three macros generate all of byre-proto's types:
//!
//! - `wire_struct!` declares an object with known fields (required or optional) and an `extra`
//!   map that keeps every field it does not know. An optional field received as explicit `null`
//!   decodes as `None` and its `null` is kept in `extra`, so re-encoding writes it back.
//! - `wire_enum!` declares a union tagged by one key (`type`, `subtype`, `hook_event_name`, ...).
//!   The tag may come anywhere in the object: keys before it are buffered, keys after it are
//!   decoded straight into the variant. An unknown tag becomes the `Unknown` variant holding
//!   every key of the object.
//! - `open_enum!` declares a string the CLI keeps extending: named constants plus any other
//!   string, kept as it came.
//!
//! Decoding never goes through `serde_json::Value` for the known parts of a message, which is
//! what makes typed decoding faster than decoding to `Value`.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserialize, Deserializer, MapAccess, Visitor};
use serde::ser::SerializeMap;
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
pub struct RawJson(Box<serde_json::value::RawValue>);

impl RawJson {
    /// Encodes `value` as a raw JSON value.
    pub fn from_serialize<T: serde::Serialize + ?Sized>(
        value: &T,
    ) -> Result<Self, serde_json::Error> {
        serde_json::value::to_raw_value(value).map(RawJson)
    }

    /// The JSON text.
    pub fn get(&self) -> &str {
        self.0.get()
    }

    /// Decodes the text as `T`.
    pub fn parse<T: de::DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        serde_json::from_str(self.0.get())
    }

    /// Decodes the text as a [`Value`].
    pub fn to_value(&self) -> Value {
        serde_json::from_str(self.0.get()).expect("a raw JSON value is valid JSON")
    }

    /// Whether the value is `null`.
    pub fn is_null(&self) -> bool {
        self.0.get() == "null"
    }
}

impl From<Value> for RawJson {
    fn from(value: Value) -> Self {
        RawJson::from_serialize(&value).expect("a Value always serializes")
    }
}

/// Equal when the texts are, or else when they decode to the same value.
impl PartialEq for RawJson {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get() || self.to_value() == other.to_value()
    }
}

impl serde::Serialize for RawJson {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for RawJson {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Box::<serde_json::value::RawValue>::deserialize(deserializer).map(RawJson)
    }
}

impl FindUnknown for RawJson {
    fn find_unknown(&self, _: &mut String, _: &mut Vec<String>) {}
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
    /// The value of `key`, if present.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.fields.get(key)
    }

    /// The string value of `key`, if present and a string (for example the unknown tag).
    pub fn get_str(&self, key: &str) -> Option<&str> {
        self.fields.get(key).and_then(Value::as_str)
    }
}

/// A key read from the wire, borrowed from the input when it has no escapes.
pub(crate) struct Key<'de>(pub(crate) Cow<'de, str>);

impl Key<'_> {
    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }

    pub(crate) fn into_owned(self) -> String {
        self.0.into_owned()
    }
}

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v)))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

/// The value of a union's tag: borrowed when it is a plain string, else kept as a value.
pub(crate) enum Tag<'de> {
    Str(Cow<'de, str>),
    Other(Value),
}

impl Tag<'_> {
    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Tag::Str(s) => Some(s),
            Tag::Other(_) => None,
        }
    }

    pub(crate) fn into_value(self) -> Value {
        match self {
            Tag::Str(s) => Value::String(s.into_owned()),
            Tag::Other(v) => v,
        }
    }
}

impl<'de> Deserialize<'de> for Tag<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TagVisitor;
        impl<'de> Visitor<'de> for TagVisitor {
            type Value = Tag<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Tag<'de>, E> {
                Ok(Tag::Str(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Tag<'de>, E> {
                Ok(Tag::Str(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Tag<'de>, E> {
                Ok(Tag::Str(Cow::Owned(v)))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Tag<'de>, E> {
                Ok(Tag::Other(Value::Bool(v)))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Tag<'de>, E> {
                Ok(Tag::Other(Value::from(v)))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Tag<'de>, E> {
                Ok(Tag::Other(Value::from(v)))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Tag<'de>, E> {
                Ok(Tag::Other(Value::from(v)))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Tag<'de>, E> {
                Ok(Tag::Other(Value::Null))
            }
            fn visit_none<E: de::Error>(self) -> Result<Tag<'de>, E> {
                Ok(Tag::Other(Value::Null))
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Tag<'de>, D::Error> {
                Tag::deserialize(d)
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, seq: A) -> Result<Tag<'de>, A::Error> {
                Value::deserialize(de::value::SeqAccessDeserializer::new(seq)).map(Tag::Other)
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Tag<'de>, A::Error> {
                Value::deserialize(de::value::MapAccessDeserializer::new(map)).map(Tag::Other)
            }
        }
        deserializer.deserialize_any(TagVisitor)
    }
}

/// An object decoded key by key, so that a tagged union can hand the keys after its tag
/// straight to the variant without buffering them.
pub(crate) trait WireObject: Sized {
    /// The state of a decode in progress.
    type Partial: Default;

    /// Takes one key whose value is still to be read from `map`.
    fn accept<'de, A: MapAccess<'de>>(
        partial: &mut Self::Partial,
        key: Key<'de>,
        map: &mut A,
    ) -> Result<(), A::Error>;

    /// Takes one key whose value was already read (keys buffered before a union's tag).
    fn accept_value<E: de::Error>(
        partial: &mut Self::Partial,
        key: String,
        value: Value,
    ) -> Result<(), E>;

    /// Ends the decode: checks required fields and builds the value.
    fn finish<E: de::Error>(partial: Self::Partial) -> Result<Self, E>;

    /// Writes this object's keys into an open map.
    fn serialize_fields<M: SerializeMap>(&self, map: &mut M) -> Result<(), M::Error>;
}

/// A boxed object decodes into a boxed partial, so a union of large variants stays small.
impl<T: WireObject> WireObject for Box<T> {
    type Partial = Box<T::Partial>;

    fn accept<'de, A: MapAccess<'de>>(
        partial: &mut Self::Partial,
        key: Key<'de>,
        map: &mut A,
    ) -> Result<(), A::Error> {
        T::accept(partial, key, map)
    }

    fn accept_value<E: de::Error>(
        partial: &mut Self::Partial,
        key: String,
        value: Value,
    ) -> Result<(), E> {
        T::accept_value(partial, key, value)
    }

    fn finish<E: de::Error>(partial: Self::Partial) -> Result<Self, E> {
        T::finish(*partial).map(Box::new)
    }

    fn serialize_fields<M: SerializeMap>(&self, map: &mut M) -> Result<(), M::Error> {
        (**self).serialize_fields(map)
    }
}

/// Deserializes any [`WireObject`] from a map.
pub(crate) fn deserialize_object<'de, T: WireObject, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<T, D::Error> {
    struct ObjectVisitor<T>(PhantomData<T>);
    impl<'de, T: WireObject> Visitor<'de> for ObjectVisitor<T> {
        type Value = T;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a JSON object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<T, A::Error> {
            let mut partial = T::Partial::default();
            while let Some(key) = map.next_key::<Key<'de>>()? {
                T::accept(&mut partial, key, &mut map)?;
            }
            T::finish(partial)
        }
    }
    deserializer.deserialize_map(ObjectVisitor(PhantomData))
}

/// Decodes an already-read value as `T`, mapping the error into the caller's error type.
pub(crate) fn from_value<T: de::DeserializeOwned, E: de::Error>(value: Value) -> Result<T, E> {
    T::deserialize(value).map_err(E::custom)
}

/// Walks a decoded tree and reports where it holds an [`Unknown`], and where it holds fields
/// that are not modelled (kept in an [`Extra`]).
pub trait FindUnknown {
    /// Appends to `out` the JSON path of every [`Unknown`] below `path`.
    fn find_unknown(&self, path: &mut String, out: &mut Vec<String>);

    /// Appends to `out` the JSON path of every field below `path` that a known type does not
    /// model (a field a newer CLI added). Leaves have none.
    fn find_extra(&self, path: &mut String, out: &mut Vec<String>) {
        let _ = (path, out);
    }

    /// The JSON paths (like `/message/usage/new_counter`) of every field in this value that
    /// byre does not model, kept as received in an [`Extra`]. Fields inside an [`Unknown`] are
    /// not listed (see [`FindUnknown::unknown_paths`]).
    fn extra_paths(&self) -> Vec<String> {
        let mut out = Vec::new();
        self.find_extra(&mut String::new(), &mut out);
        out
    }

    /// The JSON paths (like `/message/content/1`) of every [`Unknown`] in this value, with the
    /// unknown tag where there is one. Empty means the value is fully typed.
    fn unknown_paths(&self) -> Vec<String> {
        let mut out = Vec::new();
        self.find_unknown(&mut String::new(), &mut out);
        out
    }

    /// Whether this value holds no [`Unknown`] anywhere.
    fn is_fully_typed(&self) -> bool {
        self.unknown_paths().is_empty()
    }
}

impl Unknown {
    pub(crate) fn report(&self, tag: &str, path: &str, out: &mut Vec<String>) {
        let shown = if path.is_empty() { "/" } else { path };
        match (&self.mismatch, self.fields.get(tag)) {
            (Some(why), _) => out.push(format!("{shown} (does not fit the model: {why})")),
            (None, Some(Value::String(t))) => out.push(format!("{shown} ({tag} {t:?})")),
            (None, Some(other)) => out.push(format!("{shown} ({tag} {other})")),
            (None, None) => out.push(format!("{shown} (no {tag})")),
        }
    }
}

macro_rules! leaf_find_unknown {
    ($($t:ty),* $(,)?) => {
        $(impl FindUnknown for $t {
            fn find_unknown(&self, _: &mut String, _: &mut Vec<String>) {}
        })*
    };
}
leaf_find_unknown!(String, bool, u8, u16, u32, u64, i32, i64, f64, Value, Number);

impl<T: FindUnknown> FindUnknown for Option<T> {
    fn find_unknown(&self, path: &mut String, out: &mut Vec<String>) {
        if let Some(v) = self {
            v.find_unknown(path, out);
        }
    }

    fn find_extra(&self, path: &mut String, out: &mut Vec<String>) {
        if let Some(v) = self {
            v.find_extra(path, out);
        }
    }
}

impl<T: FindUnknown> FindUnknown for Box<T> {
    fn find_unknown(&self, path: &mut String, out: &mut Vec<String>) {
        (**self).find_unknown(path, out);
    }

    fn find_extra(&self, path: &mut String, out: &mut Vec<String>) {
        (**self).find_extra(path, out);
    }
}

impl<T: FindUnknown> FindUnknown for Vec<T> {
    fn find_unknown(&self, path: &mut String, out: &mut Vec<String>) {
        for (i, v) in self.iter().enumerate() {
            with_key(path, &i.to_string(), |path| v.find_unknown(path, out));
        }
    }

    fn find_extra(&self, path: &mut String, out: &mut Vec<String>) {
        for (i, v) in self.iter().enumerate() {
            with_key(path, &i.to_string(), |path| v.find_extra(path, out));
        }
    }
}

impl<K: fmt::Display, T: FindUnknown> FindUnknown for BTreeMap<K, T> {
    fn find_unknown(&self, path: &mut String, out: &mut Vec<String>) {
        for (k, v) in self {
            with_key(path, &k.to_string(), |path| v.find_unknown(path, out));
        }
    }

    fn find_extra(&self, path: &mut String, out: &mut Vec<String>) {
        for (k, v) in self {
            with_key(path, &k.to_string(), |path| v.find_extra(path, out));
        }
    }
}

/// Pushes `/key` onto `path` for the duration of `f`.
pub(crate) fn with_key(path: &mut String, key: &str, f: impl FnOnce(&mut String)) {
    let len = path.len();
    path.push('/');
    path.push_str(key);
    f(path);
    path.truncate(len);
}

/// Declares an object type with required (`req`) and optional (`opt`) fields and an `extra`
/// map for the rest. Syntax: `"wire_key" rust_name: req Type,` or `... opt Type,`, or
/// `... any Value,` for a field holding any JSON value, where `null` decodes as `Some(Null)`.
macro_rules! wire_struct {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $(
                $(#[$fmeta:meta])*
                $key:literal $field:ident : $kind:ident $ty:ty
            ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq)]
        pub struct $name {
            $(
                $(#[$fmeta])*
                pub $field: $crate::wire::wire_struct!(@ty $kind $ty),
            )*
            /// Fields this version of byre does not know, kept as they came.
            pub extra: $crate::wire::Extra,
        }

        const _: () = {
            #[allow(non_camel_case_types, dead_code, clippy::enum_variant_names)]
            #[derive(Clone, Copy)]
            enum Field { $( $field, )* }
            const FIELD_COUNT: usize = {
                let all: &[Field] = &[$( Field::$field, )*];
                all.len()
            };
            assert!(FIELD_COUNT <= 64, "a wire struct tracks nulls of at most 64 fields");

            impl $name {
                /// Whether the optional field with wire name `key` was received (or is to be
                /// sent) as an explicit `null`.
                #[allow(unused_variables)]
                pub fn is_null(&self, key: &str) -> bool {
                    match key {
                        $( $key => self.extra.null_bit(Field::$field as u32), )*
                        _ => matches!(self.extra.get(key), Some(serde_json::Value::Null)),
                    }
                }

                /// Sends the optional field with wire name `key` as an explicit `null` while
                /// it is `None` (or stops doing so). Returns `false` if `key` is not a field
                /// of this type.
                #[allow(unused_variables)]
                pub fn set_null(&mut self, key: &str, null: bool) -> bool {
                    match key {
                        $( $key => {
                            self.extra.set_null_bit(Field::$field as u32, null);
                            true
                        } )*
                        _ => false,
                    }
                }
            }

            #[derive(Default)]
            #[allow(non_snake_case)]
            pub(crate) struct Partial {
                $( $field: Option<$ty>, )*
                extra: $crate::wire::Extra,
            }

            impl $crate::wire::WireObject for $name {
                type Partial = Partial;

                #[allow(unused_variables)]
                fn accept<'de, A: serde::de::MapAccess<'de>>(
                    p: &mut Partial,
                    key: $crate::wire::Key<'de>,
                    map: &mut A,
                ) -> Result<(), A::Error> {
                    match key.as_str() {
                        $( $key => {
                            $crate::wire::wire_struct!(@accept $kind $ty, p, $field, Field::$field, map);
                        } )*
                        _ => {
                            let v: serde_json::Value = map.next_value()?;
                            p.extra.insert(key.into_owned(), v);
                        }
                    }
                    Ok(())
                }

                fn accept_value<E: serde::de::Error>(
                    p: &mut Partial,
                    key: String,
                    value: serde_json::Value,
                ) -> Result<(), E> {
                    match key.as_str() {
                        $( $key => {
                            $crate::wire::wire_struct!(@accept_value $kind $ty, p, $field, Field::$field, value);
                        } )*
                        _ => {
                            p.extra.insert(key, value);
                        }
                    }
                    Ok(())
                }

                fn finish<E: serde::de::Error>(p: Partial) -> Result<Self, E> {
                    Ok($name {
                        $( $field: $crate::wire::wire_struct!(@finish $kind p.$field, $key), )*
                        extra: p.extra,
                    })
                }

                fn serialize_fields<M: serde::ser::SerializeMap>(
                    &self,
                    map: &mut M,
                ) -> Result<(), M::Error> {
                    $( $crate::wire::wire_struct!(@ser $kind map, $key, &self.$field, self.extra.null_bit(Field::$field as u32)); )*
                    for (k, v) in &self.extra {
                        let shadowed = match k.as_str() {
                            $( $key => $crate::wire::wire_struct!(@is_set $kind &self.$field, self.extra.null_bit(Field::$field as u32)), )*
                            _ => false,
                        };
                        if !shadowed {
                            map.serialize_entry(k, v)?;
                        }
                    }
                    Ok(())
                }
            }
        };

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                use serde::ser::SerializeMap as _;
                let mut map = serializer.serialize_map(None)?;
                $crate::wire::WireObject::serialize_fields(self, &mut map)?;
                map.end()
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                $crate::wire::deserialize_object(deserializer)
            }
        }

        impl $crate::wire::FindUnknown for $name {
            #[allow(unused_variables)]
            fn find_unknown(&self, path: &mut String, out: &mut Vec<String>) {
                $(
                    $crate::wire::with_key(path, $key, |path| {
                        $crate::wire::FindUnknown::find_unknown(&self.$field, path, out)
                    });
                )*
            }

            fn find_extra(&self, path: &mut String, out: &mut Vec<String>) {
                for key in self.extra.keys() {
                    $crate::wire::with_key(path, key, |path| out.push(path.clone()));
                }
                $(
                    $crate::wire::with_key(path, $key, |path| {
                        $crate::wire::FindUnknown::find_extra(&self.$field, path, out)
                    });
                )*
            }
        }
    };

    (@ty req $ty:ty) => { $ty };
    (@ty opt $ty:ty) => { Option<$ty> };
    (@ty any $ty:ty) => { Option<$ty> };

    (@accept req $ty:ty, $p:ident, $field:ident, $bit:expr, $map:ident) => {
        $p.$field = Some($map.next_value::<$ty>()?);
    };
    (@accept opt $ty:ty, $p:ident, $field:ident, $bit:expr, $map:ident) => {
        $p.$field = $map.next_value::<Option<$ty>>()?;
        $p.extra.set_null_bit($bit as u32, $p.$field.is_none());
    };

    (@accept any $ty:ty, $p:ident, $field:ident, $bit:expr, $map:ident) => {
        $p.$field = Some($map.next_value::<$ty>()?);
    };

    (@accept_value any $ty:ty, $p:ident, $field:ident, $bit:expr, $value:ident) => {
        $p.$field = Some($crate::wire::from_value::<$ty, E>($value)?);
    };
    (@accept_value req $ty:ty, $p:ident, $field:ident, $bit:expr, $value:ident) => {
        $p.$field = Some($crate::wire::from_value::<$ty, E>($value)?);
    };
    (@accept_value opt $ty:ty, $p:ident, $field:ident, $bit:expr, $value:ident) => {
        $p.$field = $crate::wire::from_value::<Option<$ty>, E>($value)?;
        $p.extra.set_null_bit($bit as u32, $p.$field.is_none());
    };

    (@finish req $slot:expr, $key:literal) => {
        $slot.ok_or_else(|| E::missing_field($key))?
    };
    (@finish opt $slot:expr, $key:literal) => { $slot };
    (@finish any $slot:expr, $key:literal) => { $slot };

    (@ser req $map:ident, $key:literal, $v:expr, $null:expr) => {
        $map.serialize_entry($key, $v)?;
    };
    (@ser opt $map:ident, $key:literal, $v:expr, $null:expr) => {
        match $v {
            Some(v) => $map.serialize_entry($key, v)?,
            None if $null => $map.serialize_entry($key, &serde_json::Value::Null)?,
            None => {}
        }
    };

    (@ser any $map:ident, $key:literal, $v:expr, $null:expr) => {
        if let Some(v) = $v {
            $map.serialize_entry($key, v)?;
        }
    };

    (@is_set any $v:expr, $null:expr) => { $v.is_some() };
    (@is_set req $v:expr, $null:expr) => { true };
    (@is_set opt $v:expr, $null:expr) => { $v.is_some() || $null };
}
pub(crate) use wire_struct;

/// Declares a union tagged by one key, with an `Unknown` variant for tags it does not know.
/// Syntax: `pub enum Name tag "type" { "wire_tag" => Variant(Type), ... }`.
macro_rules! wire_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident tag $tag:literal {
            $(
                $(#[$vmeta:meta])*
                $vtag:literal => $var:ident($ty:ty)
            ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq)]
        #[allow(clippy::large_enum_variant)]
        pub enum $name {
            $( $(#[$vmeta])* $var($ty), )*
            /// A tag this version of byre does not know, or no tag at all: kept whole.
            Unknown($crate::wire::Unknown),
        }

        impl $name {
            /// The name of the key that tags this union.
            pub const TAG: &'static str = $tag;

            /// The tag of this value: the variant's wire name, or the unknown tag as received.
            pub fn tag(&self) -> Option<&str> {
                match self {
                    $( $name::$var(_) => Some($vtag), )*
                    $name::Unknown(u) => u.get_str($tag),
                }
            }
        }

        const _: () = {
            #[allow(clippy::large_enum_variant)]
            pub(crate) enum Partial {
                Pending(Vec<(String, serde_json::Value)>),
                $( $var(<$ty as $crate::wire::WireObject>::Partial), )*
                Unknown(serde_json::Map<String, serde_json::Value>),
            }

            impl Default for Partial {
                fn default() -> Self {
                    Partial::Pending(Vec::new())
                }
            }

            fn start<E: serde::de::Error>(
                tag: $crate::wire::Tag<'_>,
                buffered: Vec<(String, serde_json::Value)>,
            ) -> Result<Partial, E> {
                let known = match tag.as_str() {
                    $( Some($vtag) => {
                        let mut inner = <<$ty as $crate::wire::WireObject>::Partial>::default();
                        for (k, v) in buffered {
                            <$ty as $crate::wire::WireObject>::accept_value::<E>(&mut inner, k, v)?;
                        }
                        return Ok(Partial::$var(inner));
                    } )*
                    _ => buffered,
                };
                let mut fields = serde_json::Map::new();
                fields.insert($tag.to_owned(), tag.into_value());
                for (k, v) in known {
                    fields.insert(k, v);
                }
                Ok(Partial::Unknown(fields))
            }

            impl $crate::wire::WireObject for $name {
                type Partial = Partial;

                fn accept<'de, A: serde::de::MapAccess<'de>>(
                    p: &mut Partial,
                    key: $crate::wire::Key<'de>,
                    map: &mut A,
                ) -> Result<(), A::Error> {
                    match p {
                        Partial::Pending(buffered) => {
                            if key.as_str() == $tag {
                                let tag: $crate::wire::Tag<'de> = map.next_value()?;
                                let buffered = std::mem::take(buffered);
                                *p = start(tag, buffered)?;
                            } else {
                                let value: serde_json::Value = map.next_value()?;
                                buffered.push((key.into_owned(), value));
                            }
                        }
                        // A repeated tag would be written twice on encode: keep the first.
                        _ if key.as_str() == $tag => {
                            map.next_value::<serde::de::IgnoredAny>()?;
                        }
                        $( Partial::$var(inner) => {
                            <$ty as $crate::wire::WireObject>::accept(inner, key, map)?;
                        } )*
                        Partial::Unknown(fields) => {
                            let value: serde_json::Value = map.next_value()?;
                            fields.insert(key.into_owned(), value);
                        }
                    }
                    Ok(())
                }

                fn accept_value<E: serde::de::Error>(
                    p: &mut Partial,
                    key: String,
                    value: serde_json::Value,
                ) -> Result<(), E> {
                    match p {
                        Partial::Pending(buffered) => {
                            if key == $tag {
                                let buffered = std::mem::take(buffered);
                                let tag = match value {
                                    serde_json::Value::String(s) => {
                                        $crate::wire::Tag::Str(std::borrow::Cow::Owned(s))
                                    }
                                    other => $crate::wire::Tag::Other(other),
                                };
                                *p = start(tag, buffered)?;
                            } else {
                                buffered.push((key, value));
                            }
                        }
                        $( Partial::$var(inner) => {
                            <$ty as $crate::wire::WireObject>::accept_value::<E>(inner, key, value)?;
                        } )*
                        Partial::Unknown(fields) => {
                            fields.insert(key, value);
                        }
                    }
                    Ok(())
                }

                fn finish<E: serde::de::Error>(p: Partial) -> Result<Self, E> {
                    Ok(match p {
                        Partial::Pending(buffered) => $name::Unknown($crate::wire::Unknown {
                            fields: buffered.into_iter().collect(),
                            mismatch: None,
                        }),
                        $( Partial::$var(inner) => $name::$var(
                            <$ty as $crate::wire::WireObject>::finish::<E>(inner)?,
                        ), )*
                        Partial::Unknown(fields) => $name::Unknown($crate::wire::Unknown {
                            fields,
                            mismatch: None,
                        }),
                    })
                }

                fn serialize_fields<M: serde::ser::SerializeMap>(
                    &self,
                    map: &mut M,
                ) -> Result<(), M::Error> {
                    match self {
                        $( $name::$var(v) => {
                            map.serialize_entry($tag, $vtag)?;
                            <$ty as $crate::wire::WireObject>::serialize_fields(v, map)
                        } )*
                        $name::Unknown(u) => {
                            for (k, v) in &u.fields {
                                map.serialize_entry(k, v)?;
                            }
                            Ok(())
                        }
                    }
                }
            }
        impl $name {
            /// Decodes an object whose tag is already known (found by a scan), so the keys
            /// before the tag need not be buffered. The first tag key must hold `tag` (an
            /// error otherwise, and when there is none); later ones are ignored, as in
            /// [`Deserialize`](serde::Deserialize).
            #[allow(dead_code)]
            pub(crate) fn deserialize_with_tag<'de, D: serde::Deserializer<'de>>(
                tag: &str,
                deserializer: D,
            ) -> Result<Self, D::Error> {
                struct TaggedVisitor<'t>(&'t str);
                impl<'de> serde::de::Visitor<'de> for TaggedVisitor<'_> {
                    type Value = $name;
                    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        f.write_str("a JSON object")
                    }
                    fn visit_map<A: serde::de::MapAccess<'de>>(
                        self,
                        mut map: A,
                    ) -> Result<$name, A::Error> {
                        let tag = $crate::wire::Tag::Str(std::borrow::Cow::Borrowed(self.0));
                        let mut partial = start::<A::Error>(tag, Vec::new())?;
                        let mut seen = false;
                        while let Some(key) = map.next_key::<$crate::wire::Key<'de>>()? {
                            if key.as_str() != $tag {
                                <$name as $crate::wire::WireObject>::accept(&mut partial, key, &mut map)?;
                            } else if seen {
                                map.next_value::<serde::de::IgnoredAny>()?;
                            } else {
                                let value = map.next_value::<$crate::wire::Tag<'de>>()?;
                                if value.as_str() != Some(self.0) {
                                    return Err(serde::de::Error::custom("the tag is not the one expected"));
                                }
                                seen = true;
                            }
                        }
                        if !seen {
                            return Err(serde::de::Error::custom("no tag"));
                        }
                        <$name as $crate::wire::WireObject>::finish(partial)
                    }
                }
                deserializer.deserialize_map(TaggedVisitor(tag))
            }
        }

        };

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                use serde::ser::SerializeMap as _;
                let mut map = serializer.serialize_map(None)?;
                $crate::wire::WireObject::serialize_fields(self, &mut map)?;
                map.end()
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                $crate::wire::deserialize_object(deserializer)
            }
        }

        impl $crate::wire::FindUnknown for $name {
            fn find_unknown(&self, path: &mut String, out: &mut Vec<String>) {
                match self {
                    $( $name::$var(v) => $crate::wire::FindUnknown::find_unknown(v, path, out), )*
                    $name::Unknown(u) => u.report($tag, path, out),
                }
            }

            fn find_extra(&self, path: &mut String, out: &mut Vec<String>) {
                match self {
                    $( $name::$var(v) => $crate::wire::FindUnknown::find_extra(v, path, out), )*
                    $name::Unknown(_) => {}
                }
            }
        }
    };
}
pub(crate) use wire_enum;

/// Declares a string value the CLI keeps extending: named constants plus any other string.
macro_rules! open_enum {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $(
                $(#[$cmeta:meta])*
                $konst:ident = $value:literal
            ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(std::borrow::Cow<'static, str>);

        impl $name {
            $( $(#[$cmeta])* pub const $konst: $name = $name(std::borrow::Cow::Borrowed($value)); )*

            /// Every value byre names, in declaration order.
            pub const KNOWN: &'static [&'static str] = &[$($value),*];

            /// Wraps any string; a known one is stored without allocating.
            pub fn new(value: impl Into<String>) -> Self {
                let value = value.into();
                match value.as_str() {
                    $( $value => $name::$konst, )*
                    _ => $name(std::borrow::Cow::Owned(value)),
                }
            }

            /// The string as sent on the wire.
            pub fn as_str(&self) -> &str {
                &self.0
            }

            /// Whether this is one of the values byre names.
            pub fn is_known(&self) -> bool {
                Self::KNOWN.contains(&self.as_str())
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl From<&str> for $name {
            fn from(v: &str) -> Self {
                match v {
                    $( $value => $name::$konst, )*
                    _ => $name(std::borrow::Cow::Owned(v.to_owned())),
                }
            }
        }

        impl From<String> for $name {
            fn from(v: String) -> Self {
                $name::new(v)
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.as_str() == other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.as_str() == *other
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(&self.0)
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let key = <$crate::wire::Key<'de> as serde::Deserialize>::deserialize(deserializer)?;
                Ok($name::from(key.as_str()))
            }
        }

        impl $crate::wire::FindUnknown for $name {
            fn find_unknown(&self, _: &mut String, _: &mut Vec<String>) {}
        }
    };
}
pub(crate) use open_enum;
