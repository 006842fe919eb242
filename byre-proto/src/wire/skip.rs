//! Finding where a JSON value ends while checking it, as serde_json checks a value it skips or
//! keeps as text: the raw payloads ([`RawJson`](super::RawJson)) of the direct decoder.

use crate::surrogates::hex_escape;

/// How deep a skipped value may nest before the check gives up (and the serde path reads it).
const MAX_NESTING: u32 = 128;

/// The end of the JSON value that starts at `at` (after whitespace), or `None` where the text
/// there is not one JSON value, or nests deeper than [`MAX_NESTING`]. It accepts what serde_json
/// accepts for a value it skips: strings with any `\u` escape of four hex digits (a lone
/// surrogate included), numbers of any size, no control byte in a string, no trailing comma.
/// The text is known to be UTF-8.
pub(crate) fn value_end(bytes: &[u8], mut at: usize) -> Option<usize> {
    // One bit per open container, the innermost lowest: 1 for an object, 0 for an array.
    let mut objects: u128 = 0;
    let mut depth: u32 = 0;
    loop {
        // A value starts here.
        at = space_end(bytes, at);
        match *bytes.get(at)? {
            b'"' => at = string_end(bytes, at + 1)?,
            open @ (b'{' | b'[') => {
                at = space_end(bytes, at + 1);
                let close = if open == b'{' { b'}' } else { b']' };
                if *bytes.get(at)? == close {
                    at += 1;
                } else {
                    depth += 1;
                    if depth > MAX_NESTING {
                        return None;
                    }
                    objects = (objects << 1) | u128::from(open == b'{');
                    if open == b'{' {
                        at = key_end(bytes, at)?;
                    }
                    continue;
                }
            }
            b't' => at = word_end(bytes, at, b"true")?,
            b'f' => at = word_end(bytes, at, b"false")?,
            b'n' => at = word_end(bytes, at, b"null")?,
            b'-' => at = number_end(bytes, at + 1)?,
            b'0'..=b'9' => at = number_end(bytes, at)?,
            _ => return None,
        }
        // A value ended: close what ends here, then go on to the next one.
        loop {
            if depth == 0 {
                return Some(at);
            }
            at = space_end(bytes, at);
            let object = objects & 1 == 1;
            match (*bytes.get(at)?, object) {
                (b',', true) => {
                    at = key_end(bytes, space_end(bytes, at + 1))?;
                    break;
                }
                (b',', false) => {
                    at += 1;
                    break;
                }
                (b'}', true) | (b']', false) => {
                    at += 1;
                    objects >>= 1;
                    depth -= 1;
                }
                _ => return None,
            }
        }
    }
}

/// After an object's key and its colon: `at` is where the key's quote must be.
#[inline]
fn key_end(bytes: &[u8], at: usize) -> Option<usize> {
    if *bytes.get(at)? != b'"' {
        return None;
    }
    let at = space_end(bytes, string_end(bytes, at + 1)?);
    (*bytes.get(at)? == b':').then_some(at + 1)
}

#[inline]
fn space_end(bytes: &[u8], mut at: usize) -> usize {
    while let Some(b' ' | b'\n' | b'\t' | b'\r') = bytes.get(at) {
        at += 1;
    }
    at
}

#[inline]
fn word_end(bytes: &[u8], at: usize, word: &[u8]) -> Option<usize> {
    bytes[at..].starts_with(word).then_some(at + word.len())
}

/// The end of a string whose text starts at `at` (after its opening quote).
#[inline]
fn string_end(bytes: &[u8], mut at: usize) -> Option<usize> {
    loop {
        at = plain_end(bytes, at);
        match *bytes.get(at)? {
            b'"' => return Some(at + 1),
            b'\\' => match *bytes.get(at + 1)? {
                b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => at += 2,
                // Any four hex digits: serde_json skips a lone surrogate half too.
                b'u' => at += hex_escape(bytes, at).map(|_| 6)?,
                _ => return None,
            },
            _ => return None,
        }
    }
}

/// The end of a number whose digits start at `at` (after any minus sign), as JSON writes one.
#[inline]
fn number_end(bytes: &[u8], mut at: usize) -> Option<usize> {
    let digits = |bytes: &[u8], from: usize| {
        let mut at = from;
        while bytes.get(at).is_some_and(u8::is_ascii_digit) {
            at += 1;
        }
        at
    };
    match *bytes.get(at)? {
        b'0' => at += 1,
        b'1'..=b'9' => at = digits(bytes, at + 1),
        _ => return None,
    }
    if bytes.get(at) == Some(&b'.') {
        let end = digits(bytes, at + 1);
        if end == at + 1 {
            return None;
        }
        at = end;
    }
    if let Some(b'e' | b'E') = bytes.get(at) {
        at += 1;
        if let Some(b'+' | b'-') = bytes.get(at) {
            at += 1;
        }
        let end = digits(bytes, at);
        if end == at {
            return None;
        }
        at = end;
    }
    // serde_json refuses a second leading zero ("01"); the caller sees the digit as the next
    // token and gives up there.
    Some(at)
}

/// Where the plain part of a string that starts at `from` ends: at its closing quote, a
/// backslash, a control byte (not allowed in JSON strings) or the end. Sixteen bytes at a time,
/// in one vector register where the CPU has them.
#[inline]
pub(super) fn plain_end(bytes: &[u8], from: usize) -> usize {
    use wide::u8x16;
    let mut at = from;
    while let Some(block) = bytes.get(at..at + 16) {
        let block = u8x16::new(block.try_into().expect("sixteen bytes"));
        let quote = block.simd_eq(u8x16::splat(b'"'));
        let backslash = block.simd_eq(u8x16::splat(b'\\'));
        let control = block.min(u8x16::splat(0x1f)).simd_eq(block);
        let found = (quote | backslash | control).to_bitmask();
        if found != 0 {
            return at + found.trailing_zeros() as usize;
        }
        at += 16;
    }
    while let Some(&b) = bytes.get(at) {
        if matches!(b, b'"' | b'\\' | 0..=0x1f) {
            break;
        }
        at += 1;
    }
    at
}
