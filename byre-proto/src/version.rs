//! A Claude Code CLI version, as `claude --version` prints it and as the `initialize` answer
//! and `system/init` name it (`claude_code_version`), ordered by its numbers.

use std::fmt;

/// A CLI version: `2.1.332`, or `2.1.332 (Claude Code)` as `--version` prints it. Versions
/// compare by major, minor and patch number.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CliVersion {
    /// Major, minor, patch.
    pub parts: (u32, u32, u32),
    /// The whole text, trimmed.
    pub text: String,
}

impl CliVersion {
    /// Parses `2.1.332 (Claude Code)` or `2.1.332`; `None` for anything else.
    pub fn parse(text: &str) -> Option<CliVersion> {
        let text = text.trim();
        let number = text.split_whitespace().next()?;
        let mut parts = number.split('.').map(|p| p.parse::<u32>().ok());
        let major = parts.next()??;
        let minor = parts.next()??;
        let patch = parts.next()??;
        if parts.next().is_some() {
            return None;
        }
        Some(CliVersion {
            parts: (major, minor, patch),
            text: text.to_owned(),
        })
    }

    /// Whether this version is `number` or newer.
    pub fn at_least(&self, number: CliVersionNumber) -> bool {
        self.parts >= (number.0, number.1, number.2)
    }

    /// Whether this version is newer than `number`.
    pub fn newer_than(&self, number: CliVersionNumber) -> bool {
        self.parts > (number.0, number.1, number.2)
    }
}

impl fmt::Display for CliVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (major, minor, patch) = self.parts;
        write!(f, "{major}.{minor}.{patch}")
    }
}

/// A version's numbers alone, for constants (`CliVersionNumber(2, 1, 328)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CliVersionNumber(pub u32, pub u32, pub u32);

impl fmt::Display for CliVersionNumber {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.0, self.1, self.2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_parse_and_compare_by_number() {
        let v = CliVersion::parse("2.1.332 (Claude Code)\n").unwrap();
        assert_eq!(v.parts, (2, 1, 332));
        assert_eq!(v.to_string(), "2.1.332");
        assert!(v.at_least(CliVersionNumber(2, 1, 328)));
        assert!(v.at_least(CliVersionNumber(2, 1, 332)));
        assert!(!v.at_least(CliVersionNumber(2, 2, 0)));
        assert!(v.newer_than(CliVersionNumber(2, 1, 99)));
        assert!(!v.newer_than(CliVersionNumber(2, 1, 332)));
        assert!(CliVersion::parse("2.1").is_none());
        assert!(CliVersion::parse("2.1.3.4").is_none());
        assert!(CliVersion::parse("x.1.3").is_none());
        assert_eq!(CliVersionNumber(2, 1, 328).to_string(), "2.1.328");
    }
}
