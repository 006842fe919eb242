//! [`Text`]: the string type of the fields that can be most of a large line, which shares the
//! line's memory, or is unescaped once, instead of being copied through the parser.

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
    static LINE: RefCell<Option<Bytes>> = const { RefCell::new(None) };
}

/// The string type of the fields that can be most of a large line: a message's text
/// ([`TextBlock::text`](crate::TextBlock::text)), thinking, string content
/// ([`MessageContent::Text`](crate::MessageContent::Text), also a tool result's), and base64 or
/// text source data.
///
/// It reads as a `&str` (`Deref`, `AsRef<str>`, `Borrow<str>`, so a `HashMap<Text, _>` is
/// looked up with a `&str`), compares with `str` and `String` both ways, prints as a `str`,
/// and converts from `&str`, `String`, `Cow<str>` and `Box<str>` and into `String`
/// (`String::from(text)` or `text.to_string()`: a copy). `clone()` is a reference count, not a
/// copy. It cannot be edited in place: build a `String` and convert it.
///
/// **Memory.** A line decoded with [`CliMessage::from_bytes`](crate::CliMessage::from_bytes)
/// that is at least [`SHARE_LINE_MIN`] (1 MiB) long is the decoding thread's current line while
/// it is decoded. A `Text` in it that has no escapes, and is at least half of the line, is a
/// slice of the line: no copy, and the line lives as long as the text (at most twice the
/// text's size). A `Text` in it with escapes (a newline, a quote) is unescaped once, into a
/// buffer of its size (memory mapped for it when 64 KiB or more, given back to the system when
/// it is dropped), instead of through the parser's growing scratch buffer and a copy of it. Any
/// other string is an owned copy. So a 40 MiB answer costs its line once while it is handled
/// when it has no escapes, and its line and its text (twice) while it is decoded when it has.
/// Either way the message equals what [`CliMessage::from_slice`](crate::CliMessage::from_slice)
/// makes of the line: a line nested more than 64 deep, or one in which a part does not fit the
/// model (its reason names a position), is decoded as from a slice.
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Text(ByteString);

impl Text {
    /// An empty text.
    pub const fn new() -> Self {
        Text(ByteString::new())
    }

    /// A text from a `'static` string, without a copy.
    pub const fn from_static(text: &'static str) -> Self {
        Text(ByteString::from_static(text))
    }

    /// The text as a `&str`.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl AsRef<[u8]> for Text {
    fn as_ref(&self) -> &[u8] {
        self.0.as_bytes()
    }
}

impl AsRef<std::path::Path> for Text {
    fn as_ref(&self) -> &std::path::Path {
        std::path::Path::new(self.as_str())
    }
}

impl std::str::FromStr for Text {
    type Err = std::convert::Infallible;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Ok(Text::from(text))
    }
}

impl From<std::borrow::Cow<'_, str>> for Text {
    fn from(text: std::borrow::Cow<'_, str>) -> Self {
        match text {
            std::borrow::Cow::Borrowed(text) => Text::from(text),
            std::borrow::Cow::Owned(text) => Text::from(text),
        }
    }
}

impl From<Box<str>> for Text {
    fn from(text: Box<str>) -> Self {
        Text::from(String::from(text))
    }
}

impl From<&Text> for String {
    fn from(text: &Text) -> Self {
        text.as_str().to_owned()
    }
}

impl FromIterator<Text> for String {
    fn from_iter<I: IntoIterator<Item = Text>>(texts: I) -> Self {
        let mut out = String::new();
        out.extend(texts);
        out
    }
}

impl<'a> FromIterator<&'a Text> for String {
    fn from_iter<I: IntoIterator<Item = &'a Text>>(texts: I) -> Self {
        let mut out = String::new();
        out.extend(texts);
        out
    }
}

impl Extend<Text> for String {
    fn extend<I: IntoIterator<Item = Text>>(&mut self, texts: I) {
        texts.into_iter().for_each(|text| self.push_str(&text));
    }
}

impl<'a> Extend<&'a Text> for String {
    fn extend<I: IntoIterator<Item = &'a Text>>(&mut self, texts: I) {
        texts.into_iter().for_each(|text| self.push_str(text));
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

impl PartialEq<&String> for Text {
    fn eq(&self, other: &&String) -> bool {
        self.as_str() == other.as_str()
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
        if sharing_now() {
            // In a long line, the string is asked for as it is written (serde_json's raw
            // value), so that an escaped one is unescaped once, into a buffer of its size,
            // instead of through the parser's growing scratch buffer and a copy of that. A
            // deserializer that does not know the name sees a newtype and gives the string.
            deserializer.deserialize_newtype_struct(RAW_VALUE, TextVisitor)
        } else {
            deserializer.deserialize_str(TextVisitor)
        }
    }
}

/// The name under which serde_json hands a value over as its JSON text.
pub(crate) const RAW_VALUE: &str = "$serde_json::private::RawValue";

/// A [`Text`] from a string, from a newtype around one, or from a string's JSON text (a map of
/// one entry, as serde_json hands over a raw value).
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
    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<Text, D::Error> {
        d.deserialize_str(TextVisitor)
    }
    fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Text, A::Error> {
        if !raw_key(&mut map)? {
            return Err(de::Error::invalid_type(de::Unexpected::Map, &self));
        }
        let raw = map.next_value::<RawText>()?;
        json_string(raw.as_str()).ok_or_else(|| de::Error::invalid_type(de::Unexpected::Map, &self))
    }
}

/// Whether a map is serde_json's handing over of a raw value (its one key is [`RAW_VALUE`]),
/// and not an object of the JSON.
pub(crate) fn raw_key<'de, A: de::MapAccess<'de>>(map: &mut A) -> Result<bool, A::Error> {
    Ok(map.next_key::<String>()?.as_deref() == Some(RAW_VALUE))
}

/// A value's JSON text, as serde_json hands it over: borrowed from the line, or owned.
pub(crate) enum RawText<'de> {
    Borrowed(&'de str),
    Owned(String),
}

impl RawText<'_> {
    /// The JSON text.
    pub(crate) fn as_str(&self) -> &str {
        match self {
            RawText::Borrowed(json) => json,
            RawText::Owned(json) => json,
        }
    }
}

impl<'de> Deserialize<'de> for RawText<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct RawVisitor;
        impl<'de> Visitor<'de> for RawVisitor {
            type Value = RawText<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a value's JSON text")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(RawText::Borrowed(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(RawText::Owned(v.to_owned()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(RawText::Owned(v))
            }
        }
        deserializer.deserialize_str(RawVisitor)
    }
}

/// The string whose JSON text is `json` (quotes included); `None` when it is not a string.
/// Without escapes it is the text between the quotes (shared when it may be); with them, it
/// is unescaped once into a buffer of its size (for a long one, anonymous memory mapped for
/// it, given back to the system when the text is dropped, whichever thread drops it). A lone
/// surrogate escape becomes U+FFFD, as a line that holds one decodes (see `surrogates`).
pub(crate) fn json_string(json: &str) -> Option<Text> {
    let inner = json.trim().strip_prefix('"')?.strip_suffix('"')?;
    if memchr::memchr(b'\\', inner.as_bytes()).is_none() {
        return Some(Text::borrowed(inner));
    }
    if inner.len() >= MAPPED_MIN {
        // Where no mapping can be made (the process's mappings used up), on the heap.
        if let Ok(mut map) = memmap2::MmapOptions::new().len(inner.len()).map_anon() {
            let len = unescape(inner.as_bytes(), &mut map)?;
            let bytes = Bytes::from_owner(map).slice(..len);
            return ByteString::try_from(bytes).ok().map(Text);
        }
    }
    let mut out = vec![0; inner.len()];
    let len = unescape(inner.as_bytes(), &mut out)?;
    out.truncate(len);
    String::from_utf8(out).ok().map(Text::from)
}

/// An unescaped string this long or longer gets memory mapped for it.
const MAPPED_MIN: usize = 64 * 1024;

/// Unescapes the inside of a JSON string into `out` (at least as long: unescaping never
/// lengthens), returning the length written; `None` for an escape JSON does not have.
fn unescape(bytes: &[u8], out: &mut [u8]) -> Option<usize> {
    let (mut at, mut written) = (0, 0);
    loop {
        let next = memchr::memchr(b'\\', &bytes[at..]).map_or(bytes.len(), |i| at + i);
        out[written..written + next - at].copy_from_slice(&bytes[at..next]);
        written += next - at;
        if next == bytes.len() {
            return Some(written);
        }
        at = next;
        let (decoded, len) =
            crate::surrogates::escape_at(bytes, at, Some(char::REPLACEMENT_CHARACTER))?;
        at += len;
        let encoded = decoded.encode_utf8(&mut [0; 4]).len();
        decoded.encode_utf8(&mut out[written..written + encoded]);
        written += encoded;
    }
}

/// Whether a line that strings may share is being decoded on this thread.
pub(crate) fn sharing_now() -> bool {
    LINE.with(|line| line.borrow().is_some())
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
            // The slice is a `&str` already; `ByteString` checks it again (only when shared).
            let shared = inside && text.len() * 2 >= line.len();
            shared.then(|| ByteString::try_from(line.slice_ref(text.as_bytes())).ok())?
        });
        match shared {
            Some(shared) => Text(shared),
            None => Text::from(text),
        }
    }
}

/// Runs `decode` with `line` as this thread's current line (when it is long enough and nested
/// at most [`SHARED_DEPTH`] deep), so that [`Text`] fields decoded from it may share
/// it. A result that is not `settled` (an error, or a part that did not fit the model, whose
/// reason names a position) is decoded again without sharing, so that it is the same as from
/// a slice.
pub(crate) fn sharing<T>(
    line: &Bytes,
    decode: impl Fn(&[u8]) -> T,
    settled: impl FnOnce(&T) -> bool,
) -> T {
    /// Takes the line back off the thread however decoding ends.
    struct Reset;
    impl Drop for Reset {
        fn drop(&mut self) {
            LINE.with(|line| line.borrow_mut().take());
        }
    }
    if line.len() < SHARE_LINE_MIN || !nested_within(line, SHARED_DEPTH) {
        return decode(line);
    }
    LINE.with(|current| *current.borrow_mut() = Some(line.clone()));
    let reset = Reset;
    let shared = decode(line);
    drop(reset);
    match settled(&shared) {
        true => shared,
        false => decode(line),
    }
}

/// A line nested deeper than this is decoded without sharing: content decoded from its JSON
/// text starts a parser of its own, whose depth limit would start afresh.
const SHARED_DEPTH: usize = 64;

/// Whether `line`'s arrays and objects nest at most `max` deep (strings skipped).
pub(crate) fn nested_within(line: &[u8], max: usize) -> bool {
    let (mut depth, mut at) = (0usize, 0usize);
    while at < line.len() {
        match line[at] {
            b'"' => {
                at += 1;
                loop {
                    match memchr::memchr2(b'"', b'\\', &line[at..]) {
                        // An escape: skip it (a backslash at the very end is not JSON).
                        Some(i) if line[at + i] == b'\\' => at = (at + i + 2).min(line.len()),
                        Some(i) => {
                            at += i + 1;
                            break;
                        }
                        // Not JSON: the parser says so.
                        None => return true,
                    }
                }
                continue;
            }
            b'[' | b'{' => {
                depth += 1;
                if depth > max {
                    return false;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        at += 1;
    }
    true
}
