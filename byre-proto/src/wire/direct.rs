//! Decoding a line straight into the wire types, without serde's visitors: a cursor over the
//! line's text and a [`Direct`] decoder per type. It gives up (`None`) at anything it does not
//! expect, and the serde path decodes the line instead, so it only ever makes what the serde
//! path would make, faster.
//!
//! What it takes on itself is the common case: keys, strings (borrowed from the line until they
//! are stored; escapes unescaped in one pass), non-negative integers, `null`, `true` and
//! `false`, lists, maps, and every known field of every wire type, each struct built once from a
//! local per field; a union whose tag comes first hands the rest of the object to its variant.
//! Free-form values ([`Value`], also the keys of an object whose tag it does not know) are built
//! as serde_json builds them; a raw payload ([`RawJson`](super::RawJson)) is checked by a skip
//! check of its own ([`super::skip`]) and kept as text; numbers other than non-negative
//! integers are decoded by serde_json from where the cursor stands. It gives up on a late
//! unknown tag, a tag that is not a string, a
//! missing required field, a repeated tag of an enclosing union, a lone surrogate, nesting
//! deeper than [`MAX_DEPTH`] (or that serde_json's limit could refuse), and any text that is
//! not JSON.

use std::borrow::Cow;

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::skip::{plain_end, value_end};

/// Nesting past this depth is left to the serde path (whose parser stops at 128, counted from
/// the line's start; a value handed to serde_json starts a count of its own).
const MAX_DEPTH: usize = 64;

/// How deep a value handed to serde_json may reach, counted from the line's start (its parser
/// fails past 128; kept a little below).
const SERDE_DEPTH: usize = 120;

/// A position in a line's text.
pub(crate) struct Cursor<'a> {
    text: &'a str,
    pos: usize,
    depth: usize,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        Cursor {
            text,
            pos: 0,
            depth: 0,
        }
    }

    /// The next byte after whitespace, without taking it.
    #[inline]
    pub(crate) fn peek(&mut self) -> Option<u8> {
        let bytes = self.text.as_bytes();
        while let Some(&b) = bytes.get(self.pos) {
            if !matches!(b, b' ' | b'\n' | b'\t' | b'\r') {
                return Some(b);
            }
            self.pos += 1;
        }
        None
    }

    /// Takes `byte` (after whitespace).
    #[inline]
    fn eat(&mut self, byte: u8) -> Option<()> {
        (self.peek()? == byte).then(|| self.pos += 1)
    }

    /// Takes the literal `word` (after whitespace).
    #[inline]
    fn word(&mut self, word: &str) -> Option<()> {
        self.peek()?;
        let found = self.text.as_bytes()[self.pos..].starts_with(word.as_bytes());
        found.then(|| self.pos += word.len())
    }

    /// Whether only whitespace is left.
    pub(crate) fn at_end(&mut self) -> bool {
        self.peek().is_none()
    }

    /// Takes a `null` if one comes next.
    #[inline]
    pub(crate) fn null(&mut self) -> bool {
        self.peek() == Some(b'n') && self.word("null").is_some()
    }

    /// A string: borrowed from the line when it has no escapes, else unescaped here.
    #[inline]
    pub(crate) fn string(&mut self) -> Option<Cow<'a, str>> {
        self.eat(b'"')?;
        let start = self.pos;
        let bytes = self.text.as_bytes();
        let end = plain_end(bytes, start);
        match bytes.get(end)? {
            b'"' => {
                self.pos = end + 1;
                self.text.get(start..end).map(Cow::Borrowed)
            }
            b'\\' => {
                let (text, close) = unescape(self.text, start, end)?;
                self.pos = close + 1;
                Some(Cow::Owned(text))
            }
            _ => None,
        }
    }

    /// A non-negative integer without fraction or exponent; anything else gives up.
    #[inline]
    pub(crate) fn unsigned(&mut self) -> Option<u64> {
        self.peek()?;
        let bytes = self.text.as_bytes();
        let start = self.pos;
        let mut n: u64 = 0;
        let mut at = start;
        while let Some(&b) = bytes.get(at).filter(|b| b.is_ascii_digit()) {
            n = n.checked_mul(10)?.checked_add(u64::from(b - b'0'))?;
            at += 1;
        }
        let digits = at - start;
        let leading_zero = digits > 1 && bytes[start] == b'0';
        let more = matches!(bytes.get(at), Some(b'.' | b'e' | b'E'));
        if digits == 0 || leading_zero || more {
            return None;
        }
        self.pos = at;
        Some(n)
    }

    /// The next value, decoded by serde_json from here (which checks it as it goes).
    pub(crate) fn serde<T: DeserializeOwned>(&mut self) -> Option<T> {
        self.peek()?;
        let rest = &self.text[self.pos..];
        let mut values = serde_json::Deserializer::from_str(rest).into_iter::<T>();
        let value = values.next()?.ok()?;
        let len = values.byte_offset();
        // serde_json counts nesting from the value's start, the serde path from the line's:
        // give up where the two limits could differ.
        let room = SERDE_DEPTH - self.depth;
        let text = &rest.as_bytes()[..len];
        let deep = || memchr::memchr2_iter(b'{', b'[', text).nth(room).is_some();
        if len > room && deep() && !crate::text::nested_within(text, room) {
            return None;
        }
        self.pos += len;
        Some(value)
    }

    /// Skips the next value, checked as serde_json checks a value it skips or keeps as text
    /// ([`RawJson`](super::RawJson), `IgnoredAny`; without a nesting limit on the serde path,
    /// so none is counted here beyond the check's own), and gives its text.
    pub(crate) fn skip(&mut self) -> Option<&'a str> {
        self.peek()?;
        let start = self.pos;
        let end = value_end(self.text.as_bytes(), start)?;
        self.pos = end;
        self.text.get(start..end)
    }

    /// Opens an object.
    #[inline]
    pub(crate) fn open(&mut self) -> Option<()> {
        self.eat(b'{')?;
        self.enter()
    }

    /// The next key of an open object (`first` when none was read yet), the cursor then at its
    /// value; `None` inside when the object ends here (its `}` is left for [`Cursor::keys`]).
    #[inline]
    pub(crate) fn next_key(&mut self, mut first: bool) -> Option<Option<Cow<'a, str>>> {
        if !self.more(&mut first)? {
            return Some(None);
        }
        let key = self.string()?;
        self.eat(b':')?;
        Some(Some(key))
    }

    /// Between the entries of an open object (`first` when none was read yet; cleared here):
    /// whether another one follows (after its comma), or the object ends here (its `}` left
    /// for the caller to close).
    #[inline]
    fn more(&mut self, first: &mut bool) -> Option<bool> {
        match self.peek()? {
            b'}' => return Some(false),
            b',' if !*first => self.pos += 1,
            _ if *first => {}
            _ => return None,
        }
        *first = false;
        Some(true)
    }

    /// The rest of an open object (`first` when no key was read yet): `each` is called with
    /// every key, the cursor at its value; then the object is closed.
    #[inline]
    pub(crate) fn keys(
        &mut self,
        mut first: bool,
        mut each: impl FnMut(&mut Self, Cow<'a, str>) -> Option<()>,
    ) -> Option<()> {
        while let Some(key) = self.next_key(first)? {
            each(self, key)?;
            first = false;
        }
        self.pos += 1;
        self.depth -= 1;
        Some(())
    }

    /// The rest of an open object (`first` when no key was read yet) whose known keys are
    /// `known`, each as its JSON text and colon (`"key":`), in the order they usually come:
    /// `each` is called with every key, the cursor at its value: `Ok(i)` for the known key `i`
    /// when it came where it was expected (no scan, no comparison of names), `Err(key)` for any
    /// other; it gives back the known key it took, so that the one after it is expected next.
    /// Then the object is closed.
    #[inline]
    pub(crate) fn fields(
        &mut self,
        mut first: bool,
        known: &[&str],
        mut each: impl FnMut(&mut Self, Result<usize, Cow<'a, str>>) -> Option<Option<usize>>,
    ) -> Option<()> {
        let mut next = 0;
        while self.more(&mut first)? {
            self.peek()?;
            let rest = &self.text.as_bytes()[self.pos..];
            let key = match known.get(next) {
                Some(expected) if rest.starts_with(expected.as_bytes()) => {
                    self.pos += expected.len();
                    Ok(next)
                }
                _ => {
                    let key = self.string()?;
                    self.eat(b':')?;
                    Err(key)
                }
            };
            if let Some(took) = each(self, key)? {
                next = took + 1;
            }
        }
        self.pos += 1;
        self.depth -= 1;
        Some(())
    }

    /// Where the cursor is, to come back to.
    pub(crate) fn mark(&self) -> (usize, usize) {
        (self.pos, self.depth)
    }

    /// Comes back to a [`Cursor::mark`].
    pub(crate) fn back(&mut self, (pos, depth): (usize, usize)) {
        self.pos = pos;
        self.depth = depth;
    }

    /// A list: `each` is called with the cursor at every element.
    #[inline]
    pub(crate) fn array(&mut self, mut each: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
        self.eat(b'[')?;
        self.enter()?;
        if self.peek()? == b']' {
            self.pos += 1;
        } else {
            loop {
                each(self)?;
                match self.peek()? {
                    b',' => self.pos += 1,
                    b']' => {
                        self.pos += 1;
                        break;
                    }
                    _ => return None,
                }
            }
        }
        self.depth -= 1;
        Some(())
    }

    fn enter(&mut self) -> Option<()> {
        self.depth += 1;
        (self.depth <= MAX_DEPTH).then_some(())
    }
}

/// Unescapes the string whose text starts at `start` and whose first escape is at `escape`:
/// the text and the position of the closing quote. Gives up on a bad escape, a control byte and
/// a lone surrogate (which the serde path turns into U+FFFD).
fn unescape(text: &str, start: usize, escape: usize) -> Option<(String, usize)> {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(escape - start + 16);
    out.push_str(text.get(start..escape)?);
    let mut at = escape;
    loop {
        // `at` is at a backslash.
        let (unescaped, len) = crate::surrogates::escape_at(bytes, at, None)?;
        out.push(unescaped);
        at += len;
        let end = plain_end(bytes, at);
        out.push_str(text.get(at..end)?);
        at = end;
        match *bytes.get(at)? {
            b'"' => return Some((out, at)),
            b'\\' => {}
            _ => return None,
        }
    }
}

/// A type decoded straight from a [`Cursor`]; `None` leaves the line to the serde path.
pub(crate) trait Direct: Sized {
    fn direct(cursor: &mut Cursor<'_>) -> Option<Self>;
}

/// The tags of the unions a value sits in (their keys, repeated inside it, are left to the
/// serde path, which ignores them).
pub(crate) struct Outer<'t> {
    pub(crate) tag: &'static str,
    pub(crate) up: Option<&'t Outer<'t>>,
}

impl Outer<'_> {
    pub(crate) fn holds(outer: Option<&Outer<'_>>, key: &str) -> bool {
        let mut at = outer;
        while let Some(o) = at {
            if o.tag == key {
                return true;
            }
            at = o.up;
        }
        false
    }
}

/// A wire object decoded key by key (so that a union can pass it the keys after its tag).
pub(crate) trait DirectObject: super::WireObject {
    /// Takes one key, the cursor at its value.
    fn direct_accept<'a>(
        partial: &mut Self::Partial,
        key: Cow<'a, str>,
        cursor: &mut Cursor<'a>,
    ) -> Option<()>;

    /// Builds the value; `None` where the serde path would fail.
    fn direct_finish(partial: Self::Partial) -> Option<Self> {
        Self::finish::<serde_json::Error>(partial).ok()
    }

    /// Decodes the rest of an open object (`first` when no key was read yet) and closes it.
    #[inline]
    fn direct_fields(
        cursor: &mut Cursor<'_>,
        first: bool,
        outer: Option<&Outer<'_>>,
    ) -> Option<Self> {
        let mut partial = Self::Partial::default();
        cursor.keys(first, |cursor, key| match Outer::holds(outer, &key) {
            true => None,
            false => Self::direct_accept(&mut partial, key, cursor),
        })?;
        Self::direct_finish(partial)
    }

    /// Decodes a whole object.
    #[inline]
    fn direct_object(cursor: &mut Cursor<'_>) -> Option<Self> {
        cursor.open()?;
        Self::direct_fields(cursor, true, None)
    }
}

impl<T: DirectObject> DirectObject for Box<T> {
    fn direct_accept<'a>(
        partial: &mut Self::Partial,
        key: Cow<'a, str>,
        cursor: &mut Cursor<'a>,
    ) -> Option<()> {
        T::direct_accept(partial, key, cursor)
    }

    fn direct_finish(partial: Self::Partial) -> Option<Self> {
        T::direct_finish(*partial).map(Box::new)
    }

    #[inline]
    fn direct_fields(
        cursor: &mut Cursor<'_>,
        first: bool,
        outer: Option<&Outer<'_>>,
    ) -> Option<Self> {
        T::direct_fields(cursor, first, outer).map(Box::new)
    }
}

/// Decodes one whole line as `T` (its first key must be `type`), or gives up.
pub(crate) fn direct_line<T: Direct>(line: &str) -> Option<T> {
    let mut cursor = Cursor::new(line);
    let value = T::direct(&mut cursor)?;
    cursor.at_end().then_some(value)
}

impl Direct for String {
    #[inline]
    fn direct(cursor: &mut Cursor<'_>) -> Option<Self> {
        cursor.string().map(Cow::into_owned)
    }
}

impl Direct for crate::Text {
    #[inline]
    fn direct(cursor: &mut Cursor<'_>) -> Option<Self> {
        cursor.string().map(crate::Text::from)
    }
}

/// A list of names, built in this thread's reused buffers (no allocation for an empty list).
impl Direct for crate::Names {
    fn direct(cursor: &mut Cursor<'_>) -> Option<Self> {
        thread_local! {
            static BUILDER: std::cell::RefCell<crate::names::NamesBuilder> =
                std::cell::RefCell::default();
        }
        BUILDER.with_borrow_mut(|names| {
            let read = cursor.array(|cursor| {
                names.push(&cursor.string()?);
                Some(())
            });
            let list = names.take();
            read.map(|()| list)
        })
    }
}

impl Direct for bool {
    #[inline]
    fn direct(cursor: &mut Cursor<'_>) -> Option<Self> {
        match cursor.peek()? {
            b't' => cursor.word("true").map(|()| true),
            b'f' => cursor.word("false").map(|()| false),
            _ => None,
        }
    }
}

impl Direct for u64 {
    #[inline]
    fn direct(cursor: &mut Cursor<'_>) -> Option<Self> {
        cursor.unsigned()
    }
}

impl<T: Direct> Direct for Option<T> {
    #[inline]
    fn direct(cursor: &mut Cursor<'_>) -> Option<Self> {
        match cursor.null() {
            true => Some(None),
            false => T::direct(cursor).map(Some),
        }
    }
}

impl<T: Direct> Direct for Vec<T> {
    #[inline]
    fn direct(cursor: &mut Cursor<'_>) -> Option<Self> {
        let mut items = Vec::new();
        cursor.array(|cursor| {
            items.push(T::direct(cursor)?);
            Some(())
        })?;
        Some(items)
    }
}

impl<T: Direct> Direct for Box<T> {
    #[inline]
    fn direct(cursor: &mut Cursor<'_>) -> Option<Self> {
        T::direct(cursor).map(Box::new)
    }
}

/// A free-form value, built as serde_json builds one (a repeated key keeps its last value);
/// numbers other than non-negative integers are read by serde_json.
impl Direct for Value {
    fn direct(cursor: &mut Cursor<'_>) -> Option<Self> {
        Some(match cursor.peek()? {
            b'"' => Value::String(cursor.string()?.into_owned()),
            b'{' => Value::Object(serde_json::Map::direct(cursor)?),
            b'[' => Value::Array(Vec::direct(cursor)?),
            b't' | b'f' => Value::Bool(bool::direct(cursor)?),
            b'n' => cursor.word("null").map(|()| Value::Null)?,
            _ => Value::Number(serde_json::Number::direct(cursor)?),
        })
    }
}

impl Direct for serde_json::Map<String, Value> {
    fn direct(cursor: &mut Cursor<'_>) -> Option<Self> {
        let mut map = serde_json::Map::new();
        cursor.open()?;
        cursor.keys(true, |cursor, key| {
            let value = Value::direct(cursor)?;
            map.insert(key.into_owned(), value);
            Some(())
        })?;
        Some(map)
    }
}

impl Direct for super::RawJson {
    fn direct(cursor: &mut Cursor<'_>) -> Option<Self> {
        cursor.skip().map(super::RawJson::from_checked)
    }
}

/// Numbers: a non-negative integer is read in place (as serde_json reads it: an integer that
/// fits, or that integer as a float), any other number is left to serde_json.
macro_rules! direct_number {
    ($($ty:ty => $from:expr),* $(,)?) => {
        $(
            impl Direct for $ty {
                #[inline]
                fn direct(cursor: &mut Cursor<'_>) -> Option<Self> {
                    let mark = cursor.mark();
                    match cursor.unsigned().map($from) {
                        Some(Some(n)) => Some(n),
                        Some(None) => {
                            cursor.back(mark);
                            cursor.serde()
                        }
                        None => cursor.serde(),
                    }
                }
            }
        )*
    };
}

direct_number!(
    serde_json::Number => |n: u64| Some(serde_json::Number::from(n)),
    u8 => |n: u64| u8::try_from(n).ok(),
    u16 => |n: u64| u16::try_from(n).ok(),
    u32 => |n: u64| u32::try_from(n).ok(),
    i32 => |n: u64| i32::try_from(n).ok(),
    i64 => |n: u64| i64::try_from(n).ok(),
    f64 => |n: u64| Some(n as f64),
);

impl<K: Direct + Ord, V: Direct> Direct for std::collections::BTreeMap<K, V> {
    fn direct(cursor: &mut Cursor<'_>) -> Option<Self> {
        let mut map = std::collections::BTreeMap::new();
        cursor.open()?;
        let mut first = true;
        while cursor.more(&mut first)? {
            // A key is a JSON string, read as the key type reads one.
            let key = K::direct(cursor)?;
            cursor.eat(b':')?;
            map.insert(key, V::direct(cursor)?);
        }
        cursor.pos += 1;
        cursor.depth -= 1;
        Some(map)
    }
}

#[cfg(test)]
#[path = "recorded.rs"]
mod recorded;

#[cfg(test)]
#[path = "direct_tests.rs"]
mod tests;
