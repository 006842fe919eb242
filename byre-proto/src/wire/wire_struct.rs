//! The `wire_struct!` macro: an object with typed fields and an `extra` map for the rest.

/// Declares an object type with required (`req`) and optional (`opt`) fields and an `extra`
/// map for the rest. Syntax: `"wire_key" rust_name: req Type,` or `... opt Type,`, or
/// `... any Value,` for a field holding any JSON value, where `null` decodes as `Some(Null)`.
macro_rules! wire_struct {
    // A type some of whose fields hold secrets (the settings' `env`, MCP servers' `env` and
    // `headers`): its `Debug` shows those fields as `[redacted]`.
    (
        #[debug_redacts($($secret:literal),* $(,)?)]
        $(#[$meta:meta])*
        pub struct $name:ident {
            $(
                $(#[$fmeta:meta])*
                $key:literal $field:ident : $kind:ident $ty:ty
            ),* $(,)?
        }
    ) => {
        $crate::wire::wire_struct! {
            @define []
            $(#[$meta])*
            pub struct $name {
                $( $(#[$fmeta])* $key $field : $kind $ty, )*
            }
        }

        impl std::fmt::Debug for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                const SECRETS: &[&str] = &[$($secret),*];
                let mut out = f.debug_struct(stringify!($name));
                $(
                    let value: &dyn std::fmt::Debug = if SECRETS.contains(&$key) {
                        &"[redacted]"
                    } else {
                        &self.$field
                    };
                    out.field(stringify!($field), value);
                )*
                out.field("extra", &self.extra).finish()
            }
        }
    };
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $(
                $(#[$fmeta:meta])*
                $key:literal $field:ident : $kind:ident $ty:ty
            ),* $(,)?
        }
    ) => {
        $crate::wire::wire_struct! {
            @define [Debug]
            $(#[$meta])*
            pub struct $name {
                $( $(#[$fmeta])* $key $field : $kind $ty, )*
            }
        }
    };
    (
        @define [$($debug:ident)?]
        $(#[$meta:meta])*
        pub struct $name:ident {
            $(
                $(#[$fmeta:meta])*
                $key:literal $field:ident : $kind:ident $ty:ty
            ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive($($debug,)? Clone, PartialEq)]
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
                    if $crate::wire::lenient::active() {
                        return $crate::wire::accept_lenient::<Self, A>(p, key, map);
                    }
                    match key.as_str() {
                        $( $key => {
                            $crate::wire::wire_struct!(
                                @accept $kind $ty, p, $field, Field::$field, map
                            );
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
                            $crate::wire::wire_struct!(
                                @accept_value $kind $ty, p, $field, Field::$field, value
                            );
                        } )*
                        _ => {
                            p.extra.insert(key, value);
                        }
                    }
                    Ok(())
                }

                fn accept_raw<E: serde::de::Error>(
                    p: &mut Partial,
                    key: String,
                    raw: &str,
                ) -> Result<(), E> {
                    match key.as_str() {
                        $( $key => {
                            $crate::wire::wire_struct!(
                                @accept_raw $kind $ty, p, $field, Field::$field, key, raw
                            );
                        } )*
                        _ => p.extra.insert_raw(key, raw),
                    }
                    Ok(())
                }

                #[allow(unused_mut)]
                fn finish<E: serde::de::Error>(mut p: Partial) -> Result<Self, E> {
                    $(
                        let $field = $crate::wire::wire_struct!(
                            @finish $kind p.$field, $key, p.extra
                        );
                    )*
                    Ok($name {
                        $( $field, )*
                        extra: p.extra,
                    })
                }

                #[allow(unused_variables)]
                fn serialize_fields<M: serde::ser::SerializeMap>(
                    &self,
                    map: &mut M,
                ) -> Result<(), M::Error> {
                    // A field kept as text because it did not fit is written from there.
                    let misfits = !self.extra.misfits().is_empty();
                    $(
                        if !misfits || self.extra.misfit($key).is_none() {
                            $crate::wire::wire_struct!(
                                @ser $kind map,
                                $key,
                                &self.$field,
                                self.extra.null_bit(Field::$field as u32)
                            );
                        }
                    )*
                    for (k, v) in &self.extra {
                        let shadowed = match k.as_str() {
                            $(
                                $key => $crate::wire::wire_struct!(
                                    @is_set $kind &self.$field,
                                    self.extra.null_bit(Field::$field as u32)
                                ),
                            )*
                            _ => false,
                        };
                        if !shadowed {
                            map.serialize_entry(k, v)?;
                        }
                    }
                    self.extra.serialize_misfits(map)
                }
            }

            impl $crate::wire::lenient::Absent for $name {
                fn absent() -> Self {
                    $name {
                        $( $field: $crate::wire::wire_struct!(@absent $kind), )*
                        extra: $crate::wire::Extra::default(),
                    }
                }
            }
        };

        impl $crate::wire::DirectObject for $name {
            #[allow(unused_variables)]
            #[inline]
            fn direct_accept<'a>(
                p: &mut <Self as $crate::wire::WireObject>::Partial,
                key: std::borrow::Cow<'a, str>,
                c: &mut $crate::wire::Cursor<'a>,
            ) -> Option<()> {
                #[allow(non_camel_case_types, dead_code, clippy::enum_variant_names)]
                enum Field { $( $field, )* }
                match key.as_ref() {
                    $( $key => {
                        let slot = &mut p.$field;
                        let extra = &mut p.extra;
                        $crate::wire::wire_struct!(
                            @direct_ref $kind $ty, slot, extra, Field::$field, c
                        );
                    } )*
                    _ => {
                        let v = <serde_json::Value as $crate::wire::Direct>::direct(c)?;
                        p.extra.insert(key.into_owned(), v);
                    }
                }
                Some(())
            }

            /// Decodes into a local per field and builds the value once at the end (no
            /// partial value to move).
            // (A struct without fields has no `Field` to match: the match after it is
            // unreachable there.)
            #[allow(unused_variables, unused_mut, unreachable_code)]
            #[inline]
            fn direct_fields(
                c: &mut $crate::wire::Cursor<'_>,
                first: bool,
                outer: Option<&$crate::wire::Outer<'_>>,
            ) -> Option<Self> {
                #[allow(non_camel_case_types, dead_code, clippy::enum_variant_names)]
                #[derive(Clone, Copy)]
                enum Field { $( $field, )* }
                const NAMES: &[&str] = &[$( $key ),*];
                const EXPECTED: &[&str] = &[$( concat!("\"", $key, "\":") ),*];
                const FIELDS: &[Field] = &[$( Field::$field ),*];
                $( let mut $field: Option<$ty> = None; )*
                let mut extra = $crate::wire::Extra::default();
                c.fields(first, EXPECTED, |c, key| {
                    let name = match &key {
                        Ok(i) => NAMES[*i],
                        Err(key) => key.as_ref(),
                    };
                    if $crate::wire::Outer::holds(outer, name) {
                        return None;
                    }
                    let (field, at) = match key {
                        Ok(i) => (FIELDS[i], i),
                        Err(key) => match key.as_ref() {
                            $( $key => (Field::$field, Field::$field as usize), )*
                            _ => {
                                let v = <serde_json::Value as $crate::wire::Direct>::direct(c)?;
                                extra.insert(key.into_owned(), v);
                                return Some(None);
                            }
                        },
                    };
                    match field {
                        $( Field::$field => {
                            $crate::wire::wire_struct!(
                                @direct $kind $ty, $field, extra, Field::$field, c
                            );
                        } )*
                    }
                    Some(Some(at))
                })?;
                Some($name {
                    $( $field: $crate::wire::wire_struct!(@direct_finish $kind $field), )*
                    extra,
                })
            }
        }

        impl $crate::wire::Direct for $name {
            #[inline]
            fn direct(c: &mut $crate::wire::Cursor<'_>) -> Option<Self> {
                <Self as $crate::wire::DirectObject>::direct_object(c)
            }
        }

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

            fn find_misfits(&self, path: &mut String, out: &mut Vec<String>) {
                $crate::wire::report_misfits(&self.extra, path, out);
                $(
                    $crate::wire::with_key(path, $key, |path| {
                        $crate::wire::FindUnknown::find_misfits(&self.$field, path, out)
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

    (@direct req $ty:ty, $slot:ident, $extra:ident, $bit:expr, $c:ident) => {
        $slot = Some(<$ty as $crate::wire::Direct>::direct($c)?);
    };
    (@direct opt $ty:ty, $slot:ident, $extra:ident, $bit:expr, $c:ident) => {
        $slot = <Option<$ty> as $crate::wire::Direct>::direct($c)?;
        $extra.set_null_bit($bit as u32, $slot.is_none());
    };
    (@direct any $ty:ty, $slot:ident, $extra:ident, $bit:expr, $c:ident) => {
        $slot = Some(<$ty as $crate::wire::Direct>::direct($c)?);
    };
    (@direct_ref req $ty:ty, $slot:ident, $extra:ident, $bit:expr, $c:ident) => {
        *$slot = Some(<$ty as $crate::wire::Direct>::direct($c)?);
    };
    (@direct_ref opt $ty:ty, $slot:ident, $extra:ident, $bit:expr, $c:ident) => {
        *$slot = <Option<$ty> as $crate::wire::Direct>::direct($c)?;
        $extra.set_null_bit($bit as u32, $slot.is_none());
    };
    (@direct_ref any $ty:ty, $slot:ident, $extra:ident, $bit:expr, $c:ident) => {
        *$slot = Some(<$ty as $crate::wire::Direct>::direct($c)?);
    };
    (@direct_finish req $slot:ident) => { $slot? };
    (@direct_finish opt $slot:ident) => { $slot };
    (@direct_finish any $slot:ident) => { $slot };

    (@finish req $slot:expr, $key:literal, $extra:expr) => {
        match $slot {
            Some(value) => value,
            None => $crate::wire::lenient::missing::<_, E>(&mut $extra, $key)?,
        }
    };
    (@finish opt $slot:expr, $key:literal, $extra:expr) => { $slot };
    (@finish any $slot:expr, $key:literal, $extra:expr) => { $slot };

    (@accept_raw opt $ty:ty, $p:ident, $field:ident, $bit:expr, $key:ident, $raw:ident) => {
        match $crate::wire::lenient::field::<Option<$ty>>($raw) {
            Ok(value) => {
                $p.extra.fitted(&$key);
                $p.extra.set_null_bit($bit as u32, value.is_none());
                $p.$field = value;
            }
            Err(why) => {
                $p.$field = None;
                $p.extra.set_null_bit($bit as u32, false);
                $p.extra.push_misfit($key, Some($raw), why);
            }
        }
    };
    (@accept_raw $kind:ident $ty:ty, $p:ident, $field:ident, $bit:expr, $key:ident, $raw:ident) => {
        match $crate::wire::lenient::field::<$ty>($raw) {
            Ok(value) => {
                $p.extra.fitted(&$key);
                $p.$field = Some(value);
            }
            Err(why) => {
                $p.$field = None;
                $p.extra.push_misfit($key, Some($raw), why);
            }
        }
    };

    (@absent req) => { $crate::wire::lenient::Absent::absent() };
    (@absent opt) => { None };
    (@absent any) => { None };

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
