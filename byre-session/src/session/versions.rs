//! Which CLI versions byre supports: the oldest it starts with, and the newest it was tested
//! against. The core refuses an older CLI at start ([`StartFailure::UnsupportedCli`]); a newer
//! one than tested starts, and the driver warns.
//!
//! The version is read from the `initialize` answer (`claude_code_version`), so checking it
//! costs no process start. A CLI whose answer names no version is let through: every version
//! byre supports names itself there.

use byre_proto::{CliVersion, CliVersionNumber, InitializeResponse};

#[cfg(doc)]
use super::StartFailure;

/// The oldest CLI byre supports: its real-CLI suites run on it (the matrix).
pub const OLDEST_SUPPORTED_CLI: CliVersionNumber = CliVersionNumber(2, 1, 328);

/// The newest CLI byre was tested against (its pinned CLI).
pub const NEWEST_TESTED_CLI: CliVersionNumber = CliVersionNumber(2, 1, 337);

/// What byre makes of a CLI's version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CliSupport {
    /// Between the oldest supported and the newest tested version.
    Tested(CliVersion),
    /// Newer than the newest tested: it starts, with a warning.
    Untested(CliVersion),
    /// Older than the oldest supported (or than the configured minimum).
    TooOld(CliVersion),
    /// The answer names no version, or one byre cannot read.
    Unknown,
}

impl CliSupport {
    /// The support of the CLI that sent `answer`, with `oldest` as the minimum (`None`: any).
    pub fn of(answer: &InitializeResponse, oldest: Option<CliVersionNumber>) -> CliSupport {
        let Some(version) = answer
            .claude_code_version
            .as_deref()
            .and_then(CliVersion::parse)
        else {
            return CliSupport::Unknown;
        };
        match oldest {
            Some(oldest) if !version.at_least(oldest) => CliSupport::TooOld(version),
            _ if version.newer_than(NEWEST_TESTED_CLI) => CliSupport::Untested(version),
            _ => CliSupport::Tested(version),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(version: Option<&str>) -> InitializeResponse {
        let json = match version {
            Some(v) => serde_json::json!({ "claude_code_version": v }),
            None => serde_json::json!({}),
        };
        serde_json::from_value(json).expect("an initialize answer")
    }

    #[test]
    fn versions_are_sorted_into_the_supported_range() {
        let min = Some(OLDEST_SUPPORTED_CLI);
        let of = |v| CliSupport::of(&answer(v), min);
        assert!(matches!(of(Some("2.1.328")), CliSupport::Tested(_)));
        assert!(matches!(of(Some("2.1.332")), CliSupport::Tested(_)));
        assert!(matches!(of(Some("2.1.337")), CliSupport::Tested(_)));
        assert!(matches!(of(Some("2.1.338")), CliSupport::Untested(_)));
        assert!(matches!(of(Some("2.1.327")), CliSupport::TooOld(_)));
        assert!(matches!(of(Some("1.9.999")), CliSupport::TooOld(_)));
        assert_eq!(of(None), CliSupport::Unknown);
        assert_eq!(of(Some("dev build")), CliSupport::Unknown);
        // With no minimum, an old CLI is let through (and counted as tested).
        assert!(matches!(
            CliSupport::of(&answer(Some("2.0.0")), None),
            CliSupport::Tested(_)
        ));
        assert!(NEWEST_TESTED_CLI >= OLDEST_SUPPORTED_CLI);
    }
}
