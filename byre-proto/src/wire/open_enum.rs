//! The `open_enum!` macro: a string the CLI keeps extending, named constants plus any other.

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

        impl From<$name> for serde_json::Value {
            fn from(v: $name) -> Self {
                serde_json::Value::String(v.as_str().to_owned())
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
                let key =
                    <$crate::wire::Key<'de> as serde::Deserialize>::deserialize(deserializer)?;
                Ok($name::from(key.as_str()))
            }
        }

        impl $crate::wire::Direct for $name {
            #[inline]
            fn direct(c: &mut $crate::wire::Cursor<'_>) -> Option<Self> {
                c.string().map(|s| $name::from(s.as_ref()))
            }
        }

        impl $crate::wire::FindUnknown for $name {
            fn find_unknown(&self, _: &mut String, _: &mut Vec<String>) {}
        }

        impl $crate::wire::lenient::Absent for $name {
            fn absent() -> Self {
                $name(std::borrow::Cow::Borrowed(""))
            }
        }
    };
}
pub(crate) use open_enum;
