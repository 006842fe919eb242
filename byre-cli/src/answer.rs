//! The answer's text on its way to a stdout that is not a terminal: held per message until the
//! message is known to stand, so that an attempt that broke off (the CLI retries it) never
//! reaches the file or pipe; it goes to stderr as a note instead.

/// The text held back.
#[derive(Debug, Default)]
pub(crate) struct Held {
    /// The streamed text of the top-level message in flight.
    streaming: String,
    /// The text of the last top-level message that broke off, until new text replaces it.
    broken: Option<String>,
}

impl Held {
    /// A piece of the message in flight.
    pub(crate) fn push(&mut self, text: &str) {
        self.streaming.push_str(text);
    }

    /// A text block of the message in flight ended: the next one starts on a line of its own.
    pub(crate) fn end_block(&mut self) {
        if !self.streaming.is_empty() && !self.streaming.ends_with('\n') {
            self.streaming.push('\n');
        }
    }

    /// The message in flight ended: its text, to write now, unless it broke off (then it is
    /// held until something replaces it or the turn ends).
    pub(crate) fn finish(&mut self, broke_off: bool) -> Option<String> {
        let text = std::mem::take(&mut self.streaming);
        if text.is_empty() {
            return None;
        }
        if broke_off {
            self.broken = Some(text);
            return None;
        }
        Some(text)
    }

    /// New answer text is coming: the broken attempt it replaces, if any.
    pub(crate) fn replaced(&mut self) -> Option<String> {
        self.broken.take()
    }

    /// The turn ended: what is still held, to write (a broken attempt nothing replaced, as
    /// after an interrupt, and the text of a message that never finished).
    pub(crate) fn end_turn(&mut self) -> String {
        let mut text = self.broken.take().unwrap_or_default();
        text.push_str(&std::mem::take(&mut self.streaming));
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_broken_attempt_is_replaced_and_a_finished_one_written() {
        let mut held = Held::default();
        held.push("A first att");
        held.end_block();
        assert_eq!(held.finish(true), None, "a broken attempt waits");
        assert_eq!(held.replaced().as_deref(), Some("A first att\n"));
        held.push("The answer.");
        assert_eq!(held.finish(false).as_deref(), Some("The answer."));
        assert_eq!(held.end_turn(), "");
    }

    #[test]
    fn what_nothing_replaced_is_written_when_the_turn_ends() {
        let mut held = Held::default();
        held.push("Cut by an interrupt");
        assert_eq!(held.finish(true), None);
        held.push(" and more");
        assert_eq!(held.end_turn(), "Cut by an interrupt and more");
        assert_eq!(held.finish(false), None);
    }
}
