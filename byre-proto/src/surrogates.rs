//! Lone surrogate escapes in JSON text: `\ud83d` without the low half that should follow it
//! (or a low half alone). JSON allows them (`JSON.stringify` writes one for a string cut
//! inside a surrogate pair), but a Rust string cannot hold one, so a line that has one is
//! decoded with each lone escape read as `\ufffd`, the replacement character: what any UTF-8
//! output of that string shows (a lone surrogate encodes as U+FFFD in UTF-8 by the WHATWG
//! encoder). Well-formed pairs are kept.

/// The line with every lone surrogate escape replaced by `\ufffd`; `None` when it has none.
pub(crate) fn well_formed(line: &[u8]) -> Option<Vec<u8>> {
    let mut out: Option<Vec<u8>> = None;
    let mut copied = 0;
    let mut i = 0;
    while i < line.len() {
        if line[i] != b'\\' {
            i += 1;
            continue;
        }
        // Backslashes appear only inside strings: each starts an escape of two bytes, or six
        // for `\uXXXX`.
        let Some(unit) = hex_escape(line, i) else {
            i += 2;
            continue;
        };
        let lone = match unit {
            0xD800..=0xDBFF => match hex_escape(line, i + 6) {
                Some(0xDC00..=0xDFFF) => {
                    // A pair: both halves stay.
                    i += 12;
                    continue;
                }
                _ => true,
            },
            0xDC00..=0xDFFF => true,
            _ => false,
        };
        if lone {
            let buffer = out.get_or_insert_with(|| Vec::with_capacity(line.len()));
            buffer.extend_from_slice(&line[copied..i]);
            buffer.extend_from_slice(br"\ufffd");
            copied = i + 6;
        }
        i += 6;
    }
    let mut buffer = out?;
    buffer.extend_from_slice(&line[copied..]);
    Some(buffer)
}

/// The code unit of the `\uXXXX` escape at `at`, if one is there (four hex digits, nothing
/// else).
pub(crate) fn hex_escape(line: &[u8], at: usize) -> Option<u16> {
    let escape = line.get(at..at + 6)?;
    if escape[0] != b'\\' || escape[1] != b'u' {
        return None;
    }
    escape[2..].iter().try_fold(0u16, |unit, &digit| {
        let value = (digit as char).to_digit(16)?;
        Some(unit << 4 | value as u16)
    })
}

/// The character the JSON escape at `at` (a backslash) in `text` stands for, and the escape's
/// length in bytes; a surrogate pair is one escape of twelve bytes. A lone surrogate half gives
/// `lone` (`None` refuses it); an escape JSON does not have gives `None`.
pub(crate) fn escape_at(text: &[u8], at: usize, lone: Option<char>) -> Option<(char, usize)> {
    let simple = match *text.get(at + 1)? {
        b'"' => '"',
        b'\\' => '\\',
        b'/' => '/',
        b'b' => '\u{8}',
        b'f' => '\u{c}',
        b'n' => '\n',
        b'r' => '\r',
        b't' => '\t',
        b'u' => {
            let unit = hex_escape(text, at)?;
            return match unit {
                0xD800..=0xDBFF => match hex_escape(text, at + 6) {
                    Some(low @ 0xDC00..=0xDFFF) => {
                        let high = u32::from(unit - 0xD800) << 10;
                        let code = 0x10000 + high + u32::from(low - 0xDC00);
                        Some((char::from_u32(code)?, 12))
                    }
                    _ => lone.map(|c| (c, 6)),
                },
                0xDC00..=0xDFFF => lone.map(|c| (c, 6)),
                _ => Some((char::from_u32(u32::from(unit))?, 6)),
            };
        }
        _ => return None,
    };
    Some((simple, 2))
}

#[cfg(test)]
mod tests {
    use super::well_formed;

    #[test]
    fn lone_halves_become_replacement_characters_and_pairs_stay() {
        assert_eq!(well_formed(br#"{"a":"\ud83d\ude00"}"#), None);
        assert_eq!(well_formed(br#"{"a":"plain \\ud83d"}"#), None);
        assert_eq!(
            well_formed(br#"{"a":"cut \ud83d"}"#).as_deref(),
            Some(&br#"{"a":"cut \ufffd"}"#[..])
        );
        assert_eq!(
            well_formed(br#"{"a":"\ude00 and \ud83d\ude00 and \uD83D x"}"#).as_deref(),
            Some(&br#"{"a":"\ufffd and \ud83d\ude00 and \ufffd x"}"#[..])
        );
        assert_eq!(
            well_formed(br#"{"a":"\ud83d\ud83d\ude00"}"#).as_deref(),
            Some(&br#"{"a":"\ufffd\ud83d\ude00"}"#[..])
        );
    }
}
