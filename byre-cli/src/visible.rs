//! Text from the CLI made safe for a terminal: control characters are shown, never obeyed.
//!
//! Everything byre's human output prints that came from the CLI (answers, tool names and
//! inputs, tool results, hook names, session files, error messages that quote the CLI) goes
//! through [`Visible`] on its way out, so that a file the agent merely read cannot clear the
//! screen, set the window title or write to the clipboard. `--output json` does not: its lines
//! are JSON, where every control character is escaped already, and stay byte-exact.
//!
//! One rendering, for every command:
//!
//! - a C0 control (U+0000-U+001F) other than line feed and tab becomes its Unicode control
//!   picture, one column wide: ESC is `␛`, BEL `␇`, backspace `␈`, carriage return `␍`;
//! - DEL (U+007F) becomes `␡`;
//! - a C1 control (U+0080-U+009F) and a bidirectional embedding, override or isolate
//!   (U+202A-U+202E, U+2066-U+2069) becomes its code in Rust's escape form, `\u{9b}`,
//!   `\u{202e}`.
//!
//! Line feed and tab are kept: the layout of an answer needs them. So `\x1b]52;c;...\x07` is
//! shown as `␛]52;c;...␇`.

use std::fmt::{self, Write as _};
use std::io;

/// Shows `T` with its control characters made visible (see the module docs).
pub(crate) struct Visible<T>(pub(crate) T);

impl<T: fmt::Display> fmt::Display for Visible<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(Filter(f), "{}", self.0)
    }
}

/// Writes `text` to `out` with its control characters made visible, without a copy of it (an
/// answer may be tens of megabytes).
pub(crate) fn write(out: &mut impl io::Write, text: &str) -> io::Result<()> {
    pieces(text, |piece| out.write_all(piece.as_bytes()))
}

/// Writes what it is given with control characters made visible.
struct Filter<'a, 'b>(&'a mut fmt::Formatter<'b>);

impl fmt::Write for Filter<'_, '_> {
    fn write_str(&mut self, text: &str) -> fmt::Result {
        pieces(text, |piece| self.0.write_str(piece))
    }
}

/// Hands `text` to `emit` in pieces: runs of it as they are, and each control character's
/// visible form.
fn pieces<E>(text: &str, mut emit: impl FnMut(&str) -> Result<(), E>) -> Result<(), E> {
    let mut rest = text;
    while let Some((at, c)) = rest.char_indices().find(|&(_, c)| hidden(c)) {
        if at > 0 {
            emit(&rest[..at])?;
        }
        let mut buf = [0; 4];
        match u32::from(c) {
            code @ 0..=0x1f => emit(picture(code).encode_utf8(&mut buf))?,
            0x7f => emit('\u{2421}'.encode_utf8(&mut buf))?,
            code => emit(&format!("\\u{{{code:x}}}"))?,
        }
        rest = &rest[at + c.len_utf8()..];
    }
    emit(rest)
}

/// Whether `c` is a character a terminal would obey rather than show.
fn hidden(c: char) -> bool {
    matches!(c,
        '\0'..='\x08' | '\x0b'..='\x1f' | '\x7f'..='\u{9f}'
        | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// The control picture of the C0 control `code` (U+2400 and on).
fn picture(code: u32) -> char {
    char::from_u32(0x2400 + code).unwrap_or('\u{fffd}')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn visible(text: &str) -> String {
        let shown = Visible(text).to_string();
        let mut written = Vec::new();
        write(&mut written, text).unwrap();
        assert_eq!(String::from_utf8(written).unwrap(), shown);
        shown
    }

    #[test]
    fn controls_are_shown_and_layout_kept() {
        assert_eq!(visible("a\x1b[2Jb"), "a␛[2Jb");
        assert_eq!(visible("\x1b]52;c;aGk=\x07"), "␛]52;c;aGk=␇");
        assert_eq!(visible("ab\x08\x08cd\r\x7f"), "ab␈␈cd␍␡");
        assert_eq!(visible("\u{9b}31m \u{85}"), "\\u{9b}31m \\u{85}");
        assert_eq!(visible("x\u{202e}y\u{2066}z"), "x\\u{202e}y\\u{2066}z");
        assert_eq!(visible("one\n\ttwo ✓ ümlaut"), "one\n\ttwo ✓ ümlaut");
        assert_eq!(visible("\0\x1f"), "␀␟");
    }

    #[test]
    fn a_display_is_filtered_as_it_is_formatted() {
        let shown = format!("{}", Visible(format_args!("{}-{}", "\x1b", 7)));
        assert_eq!(shown, "␛-7");
    }
}
