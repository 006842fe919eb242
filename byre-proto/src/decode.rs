//! Decoding one line into a message, and the typed errors for lines that are not messages.

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::message::{CliMessage, HostMessage};

/// Which way a line travels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Host → CLI, written on the CLI's stdin (`"send"` in transcripts).
    Send,
    /// CLI → host, read from the CLI's stdout (`"recv"` in transcripts).
    Recv,
}

impl Direction {
    /// The transcript name: `send` or `recv`.
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Send => "send",
            Direction::Recv => "recv",
        }
    }
}

/// Why a line is not a message at all. Every other line decodes, to a typed variant or to
/// `Unknown`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeErrorKind {
    /// The line is not valid JSON (or not UTF-8).
    #[error("not JSON: {0}")]
    NotJson(String),
    /// The line is JSON but not an object.
    #[error("not a JSON object")]
    NotObject,
    /// The object has no string `type`.
    #[error("no string \"type\" key")]
    NoType,
}

/// A line that is not a message, with its length and first bytes kept for the report.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad line ({len} bytes, starts {head:?}): {kind}")]
pub struct DecodeError {
    /// What is wrong.
    pub kind: DecodeErrorKind,
    /// The line's length in bytes.
    pub len: usize,
    /// Its first bytes (at most [`DecodeError::HEAD_LEN`]), lossily as UTF-8.
    pub head: String,
}

impl DecodeError {
    /// How many bytes of the line [`DecodeError::head`] keeps.
    pub const HEAD_LEN: usize = 80;

    fn new(kind: DecodeErrorKind, line: &[u8]) -> Self {
        let cut = line.len().min(Self::HEAD_LEN);
        DecodeError {
            kind,
            len: line.len(),
            head: String::from_utf8_lossy(&line[..cut]).into_owned(),
        }
    }
}

/// A decoded line of either direction.
#[derive(Debug, Clone, PartialEq)]
pub enum AnyMessage {
    /// Written by the host.
    Send(HostMessage),
    /// Written by the CLI.
    Recv(CliMessage),
}

impl AnyMessage {
    /// Decodes `line` as `direction` says.
    pub fn from_slice(direction: Direction, line: &[u8]) -> Result<Self, DecodeError> {
        Ok(match direction {
            Direction::Send => AnyMessage::Send(HostMessage::from_slice(line)?),
            Direction::Recv => AnyMessage::Recv(CliMessage::from_slice(line)?),
        })
    }

    /// Encodes the message as a JSON value (see [`CliMessage::to_value`]).
    pub fn to_value(&self) -> Result<Value, serde_json::Error> {
        match self {
            AnyMessage::Send(m) => m.to_value(),
            AnyMessage::Recv(m) => m.to_value(),
        }
    }
}

impl crate::wire::FindUnknown for AnyMessage {
    fn find_unknown(&self, path: &mut String, out: &mut Vec<String>) {
        match self {
            AnyMessage::Send(m) => m.find_unknown(path, out),
            AnyMessage::Recv(m) => m.find_unknown(path, out),
        }
    }

    fn find_extra(&self, path: &mut String, out: &mut Vec<String>) {
        match self {
            AnyMessage::Send(m) => m.find_extra(path, out),
            AnyMessage::Recv(m) => m.find_extra(path, out),
        }
    }
    fn find_misfits(&self, path: &mut String, out: &mut Vec<String>) {
        match self {
            AnyMessage::Send(m) => m.find_misfits(path, out),
            AnyMessage::Recv(m) => m.find_misfits(path, out),
        }
    }
}

/// A decoded line, with what in it did not fit the model.
#[derive(Debug, Clone, PartialEq)]
pub struct Decoded<T> {
    /// The message, of the type its `type` names (or `Unknown` for a type byre does not know).
    pub message: T,
    /// The fields that did not fit the model and were kept as text where they sit, each as its
    /// JSON path and the reason ([`FindUnknown::misfit_paths`](crate::FindUnknown::misfit_paths)).
    /// Empty for every line the strict decode takes.
    pub misfits: Vec<String>,
}

/// A top-level union that can be decoded with its tag known in advance.
pub(crate) trait TopLevel:
    DeserializeOwned + crate::wire::Direct + crate::wire::FindUnknown
{
    fn with_tag<'de, D: serde::Deserializer<'de>>(tag: &str, d: D) -> Result<Self, D::Error>;
    fn direct_with_tag(cursor: &mut crate::wire::Cursor<'_>, tag: &str) -> Option<Self>;
    /// Whether this is an `Unknown` without a string `type`: not a message.
    fn untyped(&self) -> bool;
}

macro_rules! top_level {
    ($name:ident) => {
        impl std::str::FromStr for $name {
            type Err = DecodeError;

            /// Decodes one line given as text.
            fn from_str(line: &str) -> Result<Self, DecodeError> {
                Self::from_slice(line.as_bytes())
            }
        }

        impl TopLevel for $name {
            fn with_tag<'de, D: serde::Deserializer<'de>>(
                tag: &str,
                d: D,
            ) -> Result<Self, D::Error> {
                $name::deserialize_with_tag(tag, d)
            }

            fn direct_with_tag(cursor: &mut crate::wire::Cursor<'_>, tag: &str) -> Option<Self> {
                $name::direct_with_tag(cursor, tag)
            }

            fn untyped(&self) -> bool {
                let typed = |u: &crate::Unknown| matches!(u.get("type"), Some(Value::String(_)));
                matches!(self, $name::Unknown(u) if !typed(u))
            }
        }

        impl $name {
            /// Decodes one line (without its newline; surrounding whitespace is allowed).
            ///
            /// Never panics. A line that is not a JSON object with a string `type` is a
            /// [`DecodeError`]; any other line decodes: a line whose `type` is known always to
            /// that type, whatever is inside it (what does not fit the model is kept as text
            /// where it sits: see [`Self::decode`]), and any other to `Unknown`.
            pub fn from_slice(line: &[u8]) -> Result<Self, DecodeError> {
                decode_line::<$name>(line, &mut false)
            }

            /// Decodes one line as [`Self::from_slice`] does, and lists what in it did not fit
            /// the model (a value nested deeper than 128 levels, a number out of `f64`'s range,
            /// a field of another type, a required field missing): each such field is kept as
            /// its JSON text in the [`Extra`](crate::Extra) of the object around it (a
            /// [`Misfit`](crate::Misfit)), and the rest of the message stays typed.
            pub fn decode(line: &[u8]) -> Result<Decoded<Self>, DecodeError> {
                with_lenient(line, decode_line::<$name>).map(with_misfits)
            }

            /// Decodes one line held in a [`Bytes`](bytes::Bytes), as [`Self::from_slice`]
            /// does, to an equal message. In a line of at least
            /// [`SHARE_LINE_MIN`](crate::SHARE_LINE_MIN) bytes, a [`Text`](crate::Text) field
            /// that is most of it shares the line's memory (without escapes) or is unescaped
            /// once into memory of its own (with them), instead of being copied through the
            /// parser; see [`Text`](crate::Text).
            pub fn from_bytes(line: &bytes::Bytes) -> Result<Self, DecodeError> {
                Self::decode_bytes(line).map(|decoded| decoded.message)
            }

            /// Decodes one line held in a [`Bytes`](bytes::Bytes) as [`Self::from_bytes`] does,
            /// and lists what in it did not fit the model, as [`Self::decode`] does.
            #[inline]
            pub fn decode_bytes(line: &bytes::Bytes) -> Result<Decoded<Self>, DecodeError> {
                // A line the lenient decode made is decoded again as from a slice, as is one
                // with an unknown part, so that both ways give the same message.
                let lenient = std::cell::Cell::new(false);
                let decode = |line: &[u8]| {
                    let mut made = false;
                    let decoded = decode_line::<$name>(line, &mut made);
                    lenient.set(made);
                    decoded
                };
                let message = crate::text::sharing(line, decode, |decoded| {
                    decoded.as_ref().is_ok_and(|m| {
                        !lenient.get() && crate::wire::FindUnknown::unknown_paths(m).is_empty()
                    })
                })?;
                Ok(with_misfits((message, lenient.get())))
            }

            /// Decodes an already-parsed JSON value.
            pub fn from_value(value: &Value) -> Result<Self, DecodeError> {
                let bytes = serde_json::to_vec(value).expect("a Value always serializes");
                Self::from_slice(&bytes)
            }

            /// Encodes the message as one line of JSON, without the newline.
            pub fn to_vec(&self) -> Vec<u8> {
                serde_json::to_vec(self).expect("wire types always serialize")
            }

            /// Encodes the message as a JSON value. Fails only where a payload kept as raw
            /// JSON text ([`RawJson`](crate::RawJson)) is JSON that a `Value` cannot hold (see
            /// [`RawJson::to_value`](crate::RawJson::to_value)); [`Self::to_vec`] always
            /// succeeds.
            pub fn to_value(&self) -> Result<Value, serde_json::Error> {
                serde_json::to_value(self)
            }

            /// The `type` of the line as received (also for unknown types).
            pub fn kind(&self) -> &str {
                self.tag().unwrap_or("")
            }
        }
    };
}
top_level!(CliMessage);
top_level!(HostMessage);

/// Decodes one line: by the direct decoder, else strictly through serde, else (a lone surrogate)
/// from the line with it replaced, else leniently ([`crate::wire::lenient`]), and then sets
/// `lenient` (only then can the message hold misfits). The flag is a parameter, not part of the
/// result, so that the common path hands the message up as it is.
fn decode_line<T: TopLevel>(line: &[u8], lenient: &mut bool) -> Result<T, DecodeError> {
    // Checking the whole line's UTF-8 at once (with SIMD where the CPU has it) lets the parser
    // skip the check of each string. A line that is not UTF-8 goes to the byte parser, which
    // finds where, and then to `not_a_message`, which reports it.
    let text = simdutf8::basic::from_utf8(line).ok();
    let strict = match text {
        Some(text) => match direct::<T>(text) {
            Some(message) => return Ok(message),
            None => decode_top_level::<T>(text),
        },
        None => serde_json::from_slice::<T>(line),
    };
    let typed = match strict {
        Ok(message) if message.untyped() => {
            return Err(DecodeError::new(DecodeErrorKind::NoType, line))
        }
        Ok(message) => return Ok(message),
        Err(typed) => typed,
    };
    // A lone surrogate escape (what `JSON.stringify` writes for a string cut inside a surrogate
    // pair) is valid JSON that no Rust string can hold: it decodes as U+FFFD, as any UTF-8
    // output of the string shows it. The rewritten line has none left, so this recurses once
    // at most.
    if let Some(fixed) = crate::surrogates::well_formed(line) {
        if let Ok(decoded) = decode_line::<T>(&fixed, lenient) {
            return Ok(decoded);
        }
    }
    if let Some(text) = text {
        if let Ok(message) = crate::wire::lenient::run(|| decode_top_level::<T>(text)) {
            if message.untyped() {
                return Err(DecodeError::new(DecodeErrorKind::NoType, line));
            }
            *lenient = true;
            return Ok(message);
        }
    }
    Err(not_a_message(line, typed))
}

/// Decodes one line with `decode`, and says whether the lenient decode made it.
fn with_lenient<T>(
    line: &[u8],
    decode: impl FnOnce(&[u8], &mut bool) -> Result<T, DecodeError>,
) -> Result<(T, bool), DecodeError> {
    let mut lenient = false;
    decode(line, &mut lenient).map(|message| (message, lenient))
}

/// A decoded line with its misfits listed (a walk of the message, only after a lenient decode).
#[inline]
fn with_misfits<T: TopLevel>((message, lenient): (T, bool)) -> Decoded<T> {
    let misfits = match lenient {
        true => message.misfit_paths(),
        false => Vec::new(),
    };
    Decoded { message, misfits }
}

/// Decodes a line without serde when it takes the common shape (see [`crate::wire::Cursor`]):
/// its `type` first, and not while a long line is being shared (whose texts the serde path
/// makes).
pub(crate) fn direct<T: TopLevel>(line: &str) -> Option<T> {
    if crate::text::sharing_now() {
        return None;
    }
    if type_comes_first(line.as_bytes()) {
        return crate::wire::direct_line(line);
    }
    let mut cursor = crate::wire::Cursor::new(line);
    let value = T::direct_with_tag(&mut cursor, first_type_value(line)?)?;
    cursor.at_end().then_some(value)
}

/// Decodes a top-level message. When `type` is not the first key (as in `result` lines), its
/// value is found first so that no key needs to be buffered: by a quick search for the key's
/// text, checked while decoding (the first top-level `type` must hold that value), and when
/// that does not hold, by a scan of the line's top-level keys.
pub(crate) fn decode_top_level<T: TopLevel>(line: &str) -> serde_json::Result<T> {
    if type_comes_first(line.as_bytes()) {
        return serde_json::from_str(line);
    }
    if let Some(guess) = first_type_value(line) {
        if let Ok(value) = decode_with_tag::<T>(line, guess) {
            return Ok(value);
        }
    }
    #[derive(serde::Deserialize)]
    struct TypeOnly<'a> {
        #[serde(borrow, rename = "type")]
        kind: Option<std::borrow::Cow<'a, str>>,
    }
    match serde_json::from_str::<TypeOnly<'_>>(line) {
        Ok(TypeOnly { kind: Some(kind) }) => decode_with_tag(line, &kind),
        _ => serde_json::from_str(line),
    }
}

/// Decodes `line` as the variant `tag` names. Fails unless the object's first `type` key holds
/// exactly that string.
fn decode_with_tag<T: TopLevel>(line: &str, tag: &str) -> serde_json::Result<T> {
    let mut de = serde_json::Deserializer::from_str(line);
    let value = T::with_tag(tag, &mut de)?;
    de.end()?;
    Ok(value)
}

/// Whether the object's first key is `type` (whitespace allowed around the tokens).
fn type_comes_first(line: &[u8]) -> bool {
    let rest = line.trim_ascii_start();
    let Some(rest) = rest.strip_prefix(b"{") else {
        return false;
    };
    let Some(rest) = rest.trim_ascii_start().strip_prefix(br#""type""#) else {
        return false;
    };
    rest.trim_ascii_start().starts_with(b":")
}

/// The string after the first `"type":` in the line, wherever it is (it may belong to a nested
/// object: the decode checks it), when it is a plain string without escapes.
fn first_type_value(line: &str) -> Option<&str> {
    let at = memchr::memmem::find(line.as_bytes(), br#""type":"#)?;
    let rest = line[at + r#""type":"#.len()..].trim_ascii_start();
    let rest = rest.strip_prefix('"')?;
    let end = rest.find(['"', '\\'])?;
    (rest.as_bytes()[end] == b'"').then(|| &rest[..end])
}

/// Why a line that no decode took is not a message: not JSON, not an object, or no string
/// `type`. (The checks read the line without a nesting limit: a deep line is still JSON.)
fn not_a_message(line: &[u8], typed: serde_json::Error) -> DecodeError {
    #[derive(serde::Deserialize)]
    struct TypeOnly {
        #[serde(rename = "type")]
        kind: Option<Value>,
    }
    if let Err(e) = serde_json::from_slice::<serde::de::IgnoredAny>(line) {
        return DecodeError::new(DecodeErrorKind::NotJson(e.to_string()), line);
    }
    if !line.trim_ascii_start().starts_with(b"{") {
        return DecodeError::new(DecodeErrorKind::NotObject, line);
    }
    match serde_json::from_slice::<TypeOnly>(line) {
        Ok(TypeOnly {
            kind: Some(Value::String(_)),
        }) => DecodeError::new(DecodeErrorKind::NotJson(typed.to_string()), line),
        _ => DecodeError::new(DecodeErrorKind::NoType, line),
    }
}
