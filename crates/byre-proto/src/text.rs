//! [`Text`]: the string type of the fields that can be most of a large line (a message's text,
//! a thinking block, a tool result, base64 media), which shares the line's memory instead of
//! copying it when it is.
//!
//! A line decoded with [`CliMessage::from_bytes`](crate::CliMessage::from_bytes) that is at
//! least [`SHARE_LINE_MIN`] long is made the decoding thread's current line for the time its
//! decoding takes; a [`Text`] field whose string (without escapes) lies in it and is at least
//! half of it takes a slice of the line (a reference count, no copy). Any other string is
//! copied, so a small text never keeps a large line alive, and a shared one keeps at most twice
//! its size. A 40 MiB answer thus costs 40 MiB, not 80, while it is decoded and handled.

use std::borrow::Borrow;
use std::cell::RefCell;
use std::fmt;
use std::ops::Deref;

use bytes::Bytes;
use bytestring::ByteString;
use serde::de::{self, Deserialize, Deserializer, Visitor};
use serde::{Serialize, Serializer};

/// A line shorter than this is never shared: its strings are copied, as small ones are.
pub const SHARE_LINE_MIN: usize = 1 << 20;

thread_local! {
    /// The line being decoded on this thread, when its strings may share it.
    static LINE: RefCell<Option<ByteString>> = const { RefCell::new(None) };
}

/// A string field's value: reads as a `&str` (`Deref`), compares with `str` and `String`,
/// converts from and into `String`.
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Text(ByteString);

impl Text {
    /// An empty text.
    pub const fn new() -> Self {
        Text(ByteString::new())
    }

    /// The text as a `&str`.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Deref for Text {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for Text {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for Text {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.as_str(), f)
    }
}

impl From<String> for Text {
    fn from(text: String) -> Self {
        Text(ByteString::from(text))
    }
}

impl From<&str> for Text {
    fn from(text: &str) -> Self {
        Text(ByteString::from(text))
    }
}

impl From<&String> for Text {
    fn from(text: &String) -> Self {
        Text(ByteString::from(text.as_str()))
    }
}

impl From<Text> for String {
    fn from(text: Text) -> Self {
        text.as_str().to_owned()
    }
}

impl PartialEq<str> for Text {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Text {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<String> for Text {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<Text> for str {
    fn eq(&self, other: &Text) -> bool {
        self == other.as_str()
    }
}

impl PartialEq<Text> for &str {
    fn eq(&self, other: &Text) -> bool {
        *self == other.as_str()
    }
}

impl PartialEq<Text> for String {
    fn eq(&self, other: &Text) -> bool {
        self == other.as_str()
    }
}

impl Serialize for Text {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self)
    }
}

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TextVisitor;
        impl<'de> Visitor<'de> for TextVisitor {
            type Value = Text;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Text, E> {
                Ok(Text::borrowed(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Text, E> {
                Ok(Text::from(v))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Text, E> {
                Ok(Text::from(v))
            }
        }
        deserializer.deserialize_str(TextVisitor)
    }
}

impl Text {
    /// A string that lies in the line being decoded: a slice of it when it is at least half
    /// of a line that may be shared, else a copy.
    pub(crate) fn borrowed(text: &str) -> Text {
        let shared = LINE.with(|line| {
            let line = line.borrow();
            let line = line.as_ref()?;
            let (start, at) = (line.as_ptr() as usize, text.as_ptr() as usize);
            let inside = at >= start && at + text.len() <= start + line.len();
            (inside && text.len() * 2 >= line.len()).then(|| line.slice_ref(text))
        });
        match shared {
            Some(shared) => Text(shared),
            None => Text::from(text),
        }
    }
}

/// Runs `decode` with `line` as this thread's current line (when it is long enough and UTF-8),
/// so that [`Text`] fields decoded from it may share it.
pub(crate) fn sharing<T>(line: &Bytes, decode: impl FnOnce(&[u8]) -> T) -> T {
    /// Takes the line back off the thread however decoding ends.
    struct Reset;
    impl Drop for Reset {
        fn drop(&mut self) {
            LINE.with(|line| line.borrow_mut().take());
        }
    }
    if line.len() < SHARE_LINE_MIN {
        return decode(line);
    }
    let Ok(text) = ByteString::try_from(line.clone()) else {
        return decode(line);
    };
    LINE.with(|current| *current.borrow_mut() = Some(text));
    let _reset = Reset;
    decode(line)
}
