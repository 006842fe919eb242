//! Finding secrets in transcript text however JSON wrote them, and replacing them.
//!
//! A secret reaches a transcript line as it is, escaped once (a string in the line's JSON:
//! `"` as `\"`, `@` perhaps as `\u0040`, any character as a `\uXXXX` escape), or escaped again
//! (a JSON document inside a JSON string, as `--mcp-config` is inside the launch note's argv,
//! or a tool's input inside a message). [`Redactor`] matches a secret through up to
//! [`MAX_DEPTH`] levels of JSON string escaping, with any character of it written plainly or as
//! any of its escapes, and the account email in any case too. What it replaces is always a
//! whole run of escapes, so the line stays valid JSON.

use std::borrow::Cow;

use crate::transcript::REDACTED;

/// The most levels of JSON string escaping a secret is looked for through.
const MAX_DEPTH: u8 = 3;

/// The shortest secret redacted, in characters: a shorter value would redact ordinary text and
/// is no secret worth the name.
const MIN_SECRET_CHARS: usize = 4;

/// The secrets one transcript redacts.
#[derive(Default, Clone)]
pub(crate) struct Redactor {
    /// Each secret, and whether it matches in any case (the email).
    needles: Vec<(String, bool)>,
}

impl Redactor {
    /// Adds a secret; `any_case` matches it in upper, lower or mixed case. A value shorter
    /// than [`MIN_SECRET_CHARS`] is ignored. Returns whether it was added.
    pub(crate) fn add(&mut self, secret: &str, any_case: bool) -> bool {
        let secret = if any_case {
            secret.to_lowercase()
        } else {
            secret.to_owned()
        };
        if secret.chars().count() < MIN_SECRET_CHARS
            || self.needles.iter().any(|(s, _)| *s == secret)
        {
            return false;
        }
        self.needles.push((secret, any_case));
        true
    }

    /// Whether there is anything to redact.
    pub(crate) fn is_empty(&self) -> bool {
        self.needles.is_empty()
    }

    /// `line` with every secret replaced by [`REDACTED`].
    pub(crate) fn redact<'a>(&self, line: &'a [u8]) -> Cow<'a, [u8]> {
        let mut line: Cow<'a, [u8]> = line.into();
        for (needle, any_case) in &self.needles {
            if let Some(redacted) = replace(&line, needle, *any_case) {
                line = redacted.into();
            }
        }
        line
    }
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Redactor({} secrets)", self.needles.len())
    }
}

/// `line` with each match of `needle` replaced, or `None` when there is none.
fn replace(line: &[u8], needle: &str, any_case: bool) -> Option<Vec<u8>> {
    let first = needle.chars().next()?;
    let mut lead = [0; 4];
    let lead = first.encode_utf8(&mut lead).as_bytes()[0];
    let other_case = if any_case {
        lead.to_ascii_uppercase()
    } else {
        lead
    };
    let mut out: Option<Vec<u8>> = None;
    let (mut copied, mut at) = (0, 0);
    while let Some(found) = memchr::memchr3(lead, other_case, b'\\', &line[at..]) {
        let start = at + found;
        let end = (0..=MAX_DEPTH).find_map(|depth| matches(line, start, needle, any_case, depth));
        match end {
            Some(end) => {
                let out = out.get_or_insert_with(|| Vec::with_capacity(line.len()));
                out.extend_from_slice(&line[copied..start]);
                out.extend_from_slice(REDACTED.as_bytes());
                copied = end;
                at = end;
            }
            None => at = start + 1,
        }
    }
    let mut out = out?;
    out.extend_from_slice(&line[copied..]);
    Some(out)
}

/// Where a match of `needle` that starts at `at`, seen through `depth` levels of escaping,
/// ends.
fn matches(line: &[u8], at: usize, needle: &str, any_case: bool, depth: u8) -> Option<usize> {
    let mut at = at;
    for wanted in needle.chars() {
        let (c, next) = decode(line, at, depth)?;
        let same = c == wanted || (any_case && c.to_lowercase().eq(wanted.to_lowercase()));
        if !same {
            return None;
        }
        at = next;
    }
    Some(at)
}

/// The character at `at` seen through `depth` levels of JSON string escaping, and where the
/// next one starts; `None` when there is none (the end, or a malformed escape).
fn decode(line: &[u8], at: usize, depth: u8) -> Option<(char, usize)> {
    if depth == 0 {
        return utf8_char(line, at);
    }
    let below = depth - 1;
    let (c, next) = decode(line, at, below)?;
    if c != '\\' {
        return Some((c, next));
    }
    let (kind, next) = decode(line, next, below)?;
    let plain = match kind {
        '"' | '\\' | '/' => kind,
        'b' => '\u{8}',
        'f' => '\u{c}',
        'n' => '\n',
        'r' => '\r',
        't' => '\t',
        'u' => {
            let (code, next) = hex4(line, next, below)?;
            if !(0xd800..0xdc00).contains(&code) {
                return char::from_u32(code).map(|c| (c, next));
            }
            // A high surrogate: the low half follows as an escape of its own.
            let (slash, next) = decode(line, next, below)?;
            let (u, next) = decode(line, next, below)?;
            if slash != '\\' || u != 'u' {
                return None;
            }
            let (low, next) = hex4(line, next, below)?;
            if !(0xdc00..0xe000).contains(&low) {
                return None;
            }
            let code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
            return char::from_u32(code).map(|c| (c, next));
        }
        _ => return None,
    };
    Some((plain, next))
}

/// Four hex digits seen through `depth` levels of escaping.
fn hex4(line: &[u8], at: usize, depth: u8) -> Option<(u32, usize)> {
    let mut at = at;
    let mut code = 0;
    for _ in 0..4 {
        let (c, next) = decode(line, at, depth)?;
        code = code * 16 + c.to_digit(16)?;
        at = next;
    }
    Some((code, at))
}

/// The UTF-8 character at `at`.
fn utf8_char(line: &[u8], at: usize) -> Option<(char, usize)> {
    let lead = *line.get(at)?;
    let len = match lead {
        0..=0x7f => return Some((char::from(lead), at + 1)),
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf7 => 4,
        _ => return None,
    };
    let bytes = line.get(at..at + len)?;
    let c = std::str::from_utf8(bytes).ok()?.chars().next()?;
    Some((c, at + len))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn redacted(secret: &str, any_case: bool, line: &str) -> String {
        let mut r = Redactor::default();
        assert!(r.add(secret, any_case));
        String::from_utf8(r.redact(line.as_bytes()).into_owned()).unwrap()
    }

    #[test]
    fn the_email_is_found_in_any_case_and_any_escape() {
        let email = "Dev@Example.com";
        for line in [
            r#"{"a":"mail dev@example.com"}"#,
            r#"{"a":"mail DEV@EXAMPLE.COM"}"#,
            r#"{"a":"mail dev\u0040example.com"}"#,
            r#"{"a":"mail \u0064\u0065\u0076\u0040\u0065xample.com"}"#,
            r#"{"a":"mail dev\u0040EXAMPLE\u002eCOM"}"#,
            r#"{"a":"{\"b\":\"mail dev\\u0040example.com\"}"}"#,
        ] {
            let shown = redacted(email, true, line);
            assert!(shown.contains("mail [redacted]"), "{line}: {shown}");
            serde_json::from_str::<serde_json::Value>(&shown).expect("still JSON");
        }
    }

    #[test]
    fn secrets_with_quotes_and_backslashes_are_found_escaped_once_twice_or_thrice() {
        let secret = r#"pa"ss\word"#;
        let once = serde_json::to_string(secret).unwrap();
        let twice = serde_json::to_string(&once).unwrap();
        let thrice = serde_json::to_string(&twice).unwrap();
        for line in [secret.to_owned(), once, twice, thrice] {
            let shown = redacted(secret, false, &format!("x {line} y"));
            assert!(!shown.contains("ss"), "{line}: {shown}");
            assert!(shown.contains("[redacted]"), "{line}: {shown}");
        }
        // Case matters for a secret that is not the email.
        assert_eq!(redacted("Token123", false, "token123"), "token123");
    }

    #[test]
    fn characters_beyond_the_basic_plane_are_matched_through_surrogate_escapes() {
        let shown = redacted("key🔑key", false, r#""key\ud83d\udd11key""#);
        assert_eq!(shown, r#""[redacted]""#);
    }

    #[test]
    fn short_values_and_near_misses_are_left_alone() {
        let mut r = Redactor::default();
        assert!(!r.add("abc", false));
        assert!(r.is_empty());
        assert_eq!(
            redacted("secret", false, r#"secre\n secrets"#),
            r#"secre\n [redacted]s"#
        );
    }
}
