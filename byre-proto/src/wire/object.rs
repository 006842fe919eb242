//! Decoding an object key by key: wire keys and tags, the [`WireObject`] trait every wire type
//! implements, and the serde glue around it.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserialize, Deserializer, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde_json::Value;

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

    /// Takes one key from its JSON text, in a lenient decode ([`super::lenient`]): a value
    /// that does not fit is kept as a misfit.
    fn accept_raw<E: de::Error>(
        partial: &mut Self::Partial,
        key: String,
        raw: &str,
    ) -> Result<(), E>;

    /// Ends the decode: checks required fields and builds the value (in a lenient decode, a
    /// missing required field is a misfit instead).
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

    fn accept_raw<E: de::Error>(
        partial: &mut Self::Partial,
        key: String,
        raw: &str,
    ) -> Result<(), E> {
        T::accept_raw(partial, key, raw)
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

/// Takes one key of a lenient decode: its value is read as JSON text and handed to
/// [`WireObject::accept_raw`].
pub(crate) fn accept_lenient<'de, T: WireObject, A: MapAccess<'de>>(
    partial: &mut T::Partial,
    key: Key<'de>,
    map: &mut A,
) -> Result<(), A::Error> {
    let raw = super::lenient::next_raw(map)?;
    T::accept_raw(partial, key.into_owned(), raw.as_str())
}

/// A value read before a union's tag, kept until the tag says which variant takes it: decoded
/// (the strict decode), or as its JSON text (the lenient one).
pub(crate) enum Held {
    Value(Value),
    Raw(String),
}

/// Hands a value held before a union's tag to the variant `T` that the tag named.
pub(crate) fn feed<T: WireObject, E: de::Error>(
    partial: &mut T::Partial,
    key: String,
    held: Held,
) -> Result<(), E> {
    match held {
        Held::Value(value) => T::accept_value(partial, key, value),
        Held::Raw(raw) => T::accept_raw(partial, key, &raw),
    }
}

/// Decodes an already-read value as `T`, mapping the error into the caller's error type.
pub(crate) fn from_value<T: de::DeserializeOwned, E: de::Error>(value: Value) -> Result<T, E> {
    T::deserialize(value).map_err(E::custom)
}
