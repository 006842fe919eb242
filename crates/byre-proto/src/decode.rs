//! Decoding one line into a message, and the typed errors for lines that are not messages.

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::message::{CliMessage, HostMessage};
use crate::wire::Unknown;

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
}

/// A top-level union that can be decoded with its tag known in advance.
pub(crate) trait TopLevel: DeserializeOwned + crate::wire::Direct {
    fn with_tag<'de, D: serde::Deserializer<'de>>(tag: &str, d: D) -> Result<Self, D::Error>;
    fn direct_with_tag(cursor: &mut crate::wire::Cursor<'_>, tag: &str) -> Option<Self>;
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
        }

        impl $name {
            /// Decodes one line (without its newline; surrounding whitespace is allowed).
            ///
            /// Never panics. A line that is not a JSON object with a string `type` is a
            /// [`DecodeError`]; any other line decodes, to `Unknown` when its type is unknown or
            /// its fields do not fit the model (the reason is in [`Unknown::mismatch`]).
            pub fn from_slice(line: &[u8]) -> Result<Self, DecodeError> {
                // Checking the whole line's UTF-8 at once (with SIMD where the CPU has it)
                // lets the parser skip the check of each string. A line that is not UTF-8 goes
                // to the byte parser, which finds where, and then to the fallback, which
                // reports it.
                let decoded = match simdutf8::basic::from_utf8(line) {
                    Ok(text) => match direct::<$name>(text) {
                        Some(message) => return Ok(message),
                        None => decode_top_level::<$name>(text),
                    },
                    Err(_) => serde_json::from_slice::<$name>(line),
                };
                match decoded {
                    Ok($name::Unknown(u)) if !matches!(u.get("type"), Some(Value::String(_))) => {
                        Err(DecodeError::new(DecodeErrorKind::NoType, line))
                    }
                    Ok(message) => Ok(message),
                    Err(typed) => {
                        // A lone surrogate escape (what `JSON.stringify` writes for a string
                        // cut inside a surrogate pair) is valid JSON that no Rust string can
                        // hold: it decodes as U+FFFD, as any UTF-8 output of the string shows
                        // it. The rewritten line has none left, so this recurses once at most.
                        if let Some(fixed) = crate::surrogates::well_formed(line) {
                            if let Ok(message) = Self::from_slice(&fixed) {
                                return Ok(message);
                            }
                        }
                        fallback(line, typed).map(|u| $name::Unknown(Box::new(u)))
                    }
                }
            }

            /// Decodes one line held in a [`Bytes`](bytes::Bytes), as [`Self::from_slice`]
            /// does, to an equal message. In a line of at least
            /// [`SHARE_LINE_MIN`](crate::SHARE_LINE_MIN) bytes, a [`Text`](crate::Text) field
            /// that is most of it shares the line's memory (without escapes) or is unescaped
            /// once into memory of its own (with them), instead of being copied through the
            /// parser; see [`Text`](crate::Text).
            pub fn from_bytes(line: &bytes::Bytes) -> Result<Self, DecodeError> {
                crate::text::sharing(line, Self::from_slice, |decoded| {
                    decoded
                        .as_ref()
                        .is_ok_and(|m| crate::wire::FindUnknown::unknown_paths(m).is_empty())
                })
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

/// The typed decode failed: decide between a bad line and a known type that did not fit.
fn fallback(line: &[u8], typed: serde_json::Error) -> Result<Unknown, DecodeError> {
    let value: Value = serde_json::from_slice(line)
        .map_err(|e| DecodeError::new(DecodeErrorKind::NotJson(e.to_string()), line))?;
    let Value::Object(fields) = value else {
        return Err(DecodeError::new(DecodeErrorKind::NotObject, line));
    };
    if !matches!(fields.get("type"), Some(Value::String(_))) {
        return Err(DecodeError::new(DecodeErrorKind::NoType, line));
    }
    Ok(Unknown {
        fields,
        mismatch: Some(typed.to_string()),
    })
}
