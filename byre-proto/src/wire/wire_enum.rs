//! The `wire_enum!` macro: a union tagged by one key, with an `Unknown` variant.

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
        ///
        /// Open: a newer CLI may add variants (`#[non_exhaustive]`); until byre models one, it
        /// arrives as `Unknown`.
        #[derive(Debug, Clone, PartialEq)]
        #[allow(clippy::large_enum_variant)]
        #[non_exhaustive]
        pub enum $name {
            $( $(#[$vmeta])* $var($ty), )*
            /// A tag this version of byre does not know, or no tag at all: kept whole.
            Unknown(Box<$crate::wire::Unknown>),
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
                Pending(Vec<(String, $crate::wire::Held)>),
                $( $var(<$ty as $crate::wire::WireObject>::Partial), )*
                Unknown($crate::wire::Extra),
            }

            impl Default for Partial {
                fn default() -> Self {
                    Partial::Pending(Vec::new())
                }
            }

            fn start<E: serde::de::Error>(
                tag: $crate::wire::Tag<'_>,
                buffered: Vec<(String, $crate::wire::Held)>,
            ) -> Result<Partial, E> {
                let known = match tag.as_str() {
                    $( Some($vtag) => {
                        let mut inner = <<$ty as $crate::wire::WireObject>::Partial>::default();
                        for (k, v) in buffered {
                            $crate::wire::feed::<$ty, E>(&mut inner, k, v)?;
                        }
                        return Ok(Partial::$var(inner));
                    } )*
                    _ => buffered,
                };
                let mut fields = $crate::wire::Extra::default();
                fields.insert($tag.to_owned(), tag.into_value());
                for (k, v) in known {
                    match v {
                        $crate::wire::Held::Value(v) => {
                            fields.insert(k, v);
                        }
                        $crate::wire::Held::Raw(raw) => fields.insert_raw(k, &raw),
                    }
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
                    if $crate::wire::lenient::active() {
                        return $crate::wire::accept_lenient::<Self, A>(p, key, map);
                    }
                    match p {
                        Partial::Pending(buffered) => {
                            if key.as_str() == $tag {
                                let tag: $crate::wire::Tag<'de> = map.next_value()?;
                                let buffered = std::mem::take(buffered);
                                *p = start(tag, buffered)?;
                            } else {
                                let value: serde_json::Value = map.next_value()?;
                                buffered.push((key.into_owned(), $crate::wire::Held::Value(value)));
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
                                buffered.push((key, $crate::wire::Held::Value(value)));
                            }
                        }
                        // A repeated tag is ignored, as in `accept`.
                        _ if key == $tag => {}
                        $( Partial::$var(inner) => {
                            <$ty as $crate::wire::WireObject>::accept_value::<E>(
                                inner, key, value,
                            )?;
                        } )*
                        Partial::Unknown(fields) => {
                            fields.insert(key, value);
                        }
                    }
                    Ok(())
                }

                fn accept_raw<E: serde::de::Error>(
                    p: &mut Partial,
                    key: String,
                    raw: &str,
                ) -> Result<(), E> {
                    match p {
                        Partial::Pending(buffered) => {
                            // A tag a `Value` cannot hold stays with the rest: no variant.
                            let tag = match key == $tag {
                                true => $crate::wire::lenient::field::<serde_json::Value>(raw).ok(),
                                false => None,
                            };
                            match tag {
                                Some(serde_json::Value::String(tag)) => {
                                    let tag = $crate::wire::Tag::Str(tag.into());
                                    *p = start(tag, std::mem::take(buffered))?;
                                }
                                Some(other) => {
                                    let tag = $crate::wire::Tag::Other(other);
                                    *p = start(tag, std::mem::take(buffered))?;
                                }
                                None => buffered.push((key, $crate::wire::Held::Raw(raw.into()))),
                            }
                        }
                        // A repeated tag is ignored, as in `accept`.
                        _ if key == $tag => {}
                        $( Partial::$var(inner) => {
                            <$ty as $crate::wire::WireObject>::accept_raw::<E>(inner, key, raw)?;
                        } )*
                        Partial::Unknown(fields) => fields.insert_raw(key, raw),
                    }
                    Ok(())
                }

                fn finish<E: serde::de::Error>(p: Partial) -> Result<Self, E> {
                    Ok(match p {
                        Partial::Pending(buffered) => {
                            let mut fields = $crate::wire::Extra::default();
                            for (k, v) in buffered {
                                match v {
                                    $crate::wire::Held::Value(v) => {
                                        fields.insert(k, v);
                                    }
                                    $crate::wire::Held::Raw(raw) => fields.insert_raw(k, &raw),
                                }
                            }
                            $name::Unknown($crate::wire::Unknown::boxed(fields))
                        }
                        $( Partial::$var(inner) => $name::$var(
                            <$ty as $crate::wire::WireObject>::finish::<E>(inner)?,
                        ), )*
                        Partial::Unknown(fields) => {
                            $name::Unknown($crate::wire::Unknown::boxed(fields))
                        }
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
                            u.fields.serialize_misfits(map)
                        }
                    }
                }
            }

            impl $crate::wire::lenient::Absent for $name {
                fn absent() -> Self {
                    $name::Unknown(Box::default())
                }
            }
        impl $crate::wire::DirectObject for $name {
            #[inline]
            fn direct_accept<'a>(
                p: &mut Partial,
                key: std::borrow::Cow<'a, str>,
                c: &mut $crate::wire::Cursor<'a>,
            ) -> Option<()> {
                match p {
                    Partial::Pending(buffered) => {
                        if key == $tag {
                            let tag = $crate::wire::Tag::Str(c.string()?);
                            let buffered = std::mem::take(buffered);
                            *p = start::<serde_json::Error>(tag, buffered).ok()?;
                            if let Partial::Unknown(_) = p {
                                return None;
                            }
                        } else {
                            let value = <serde_json::Value as $crate::wire::Direct>::direct(c)?;
                            buffered.push((key.into_owned(), $crate::wire::Held::Value(value)));
                        }
                    }
                    _ if key == $tag => {
                        c.skip()?;
                    }
                    $( Partial::$var(inner) => {
                        <$ty as $crate::wire::DirectObject>::direct_accept(inner, key, c)?;
                    } )*
                    Partial::Unknown(_) => return None,
                }
                Some(())
            }

            /// When the tag is the next key, the variant decodes the rest of the object
            /// itself (nothing is buffered, and the partial value is not moved twice).
            #[inline]
            fn direct_fields(
                c: &mut $crate::wire::Cursor<'_>,
                first: bool,
                outer: Option<&$crate::wire::Outer<'_>>,
            ) -> Option<Self> {
                let mark = c.mark();
                if c.next_key(first)?.is_some_and(|key| key == $tag) {
                    let tag = c.string()?;
                    let outer = Some(&$crate::wire::Outer { tag: $tag, up: outer });
                    return match tag.as_ref() {
                        $( $vtag => <$ty as $crate::wire::DirectObject>::direct_fields(
                            c, false, outer,
                        ).map($name::$var), )*
                        // A tag this version does not know: every key kept as a value, as
                        // the serde path keeps them (a repeated tag ignored).
                        _ => {
                            let mut fields = $crate::wire::Extra::default();
                            let tag = serde_json::Value::String(tag.into_owned());
                            fields.insert($tag.to_owned(), tag);
                            c.keys(false, |c, key| {
                                if key == $tag {
                                    return c.skip().map(drop);
                                }
                                if $crate::wire::Outer::holds(outer, &key) {
                                    return None;
                                }
                                let value =
                                    <serde_json::Value as $crate::wire::Direct>::direct(c)?;
                                fields.insert(key.into_owned(), value);
                                Some(())
                            })?;
                            Some($name::Unknown($crate::wire::Unknown::boxed(fields)))
                        }
                    };
                }
                c.back(mark);
                let mut partial = Partial::default();
                c.keys(first, |c, key| match $crate::wire::Outer::holds(outer, &key) {
                    true => None,
                    false => <Self as $crate::wire::DirectObject>::direct_accept(
                        &mut partial, key, c,
                    ),
                })?;
                <Self as $crate::wire::DirectObject>::direct_finish(partial)
            }

            fn direct_finish(p: Partial) -> Option<Self> {
                match p {
                    $( Partial::$var(inner) => {
                        <$ty as $crate::wire::DirectObject>::direct_finish(inner).map($name::$var)
                    } )*
                    Partial::Pending(_) | Partial::Unknown(_) => None,
                }
            }
        }

        impl $name {
            /// Decodes an object whose tag was found by a scan, as
            /// [`deserialize_with_tag`](Self::deserialize_with_tag) does, or gives up.
            #[allow(dead_code)]
            pub(crate) fn direct_with_tag(
                c: &mut $crate::wire::Cursor<'_>,
                tag: &str,
            ) -> Option<Self> {
                c.open()?;
                let tag_value = $crate::wire::Tag::Str(std::borrow::Cow::Borrowed(tag));
                let mut partial = start::<serde_json::Error>(tag_value, Vec::new()).ok()?;
                if let Partial::Unknown(_) = partial {
                    return None;
                }
                let mut seen = false;
                c.keys(true, |c, key| {
                    if key != $tag {
                        return <Self as $crate::wire::DirectObject>::direct_accept(
                            &mut partial, key, c,
                        );
                    }
                    if seen {
                        return c.skip().map(drop);
                    }
                    seen = true;
                    (c.string()? == tag).then_some(())
                })?;
                seen.then_some(())?;
                <Self as $crate::wire::DirectObject>::direct_finish(partial)
            }
        }

        impl $crate::wire::Direct for $name {
            #[inline]
            fn direct(c: &mut $crate::wire::Cursor<'_>) -> Option<Self> {
                <Self as $crate::wire::DirectObject>::direct_object(c)
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
                                <$name as $crate::wire::WireObject>::accept(
                                    &mut partial,
                                    key,
                                    &mut map,
                                )?;
                            } else if seen {
                                map.next_value::<serde::de::IgnoredAny>()?;
                            } else {
                                let value = map.next_value::<$crate::wire::Tag<'de>>()?;
                                if value.as_str() != Some(self.0) {
                                    return Err(serde::de::Error::custom(
                                        "the tag is not the one expected",
                                    ));
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

            fn find_misfits(&self, path: &mut String, out: &mut Vec<String>) {
                match self {
                    $( $name::$var(v) => $crate::wire::FindUnknown::find_misfits(v, path, out), )*
                    $name::Unknown(u) => $crate::wire::report_misfits(&u.fields, path, out),
                }
            }
        }
    };
}
pub(crate) use wire_enum;
