//! How strictly a test holds the CLI's output to byre's model: fully on the pinned CLI, by
//! report on any other version.
//!
//! On [`PINNED_CLI_VERSION`] every message the CLI writes must decode fully typed with no
//! field byre does not model; [`check_modelled`] fails the test otherwise. On another version
//! (a matrix CLI, or one given with `BYRE_CLAUDE_BIN`) a newer or older CLI may add or drop
//! fields without byre's behaviour changing, so what is not modelled is reported instead:
//! printed on stderr and, when `BYRE_DRIFT_LOG` names a file, appended to it as one JSON line
//! per finding (`{"cli","context","kind","path"}`), which `cargo xtask test` sums up after
//! the matrix run. Nothing is hidden; only the verdict differs.

use std::fmt::Display;
use std::io::Write;
use std::sync::OnceLock;

use byre_proto::FindUnknown;

use crate::cli::{claude_bin, cli_version, ProvisionError, PINNED_CLI_VERSION};

/// How a test treats output byre does not model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Strictness {
    /// The pinned CLI: anything not modelled fails the test.
    Full,
    /// Another CLI version: what is not modelled is reported, and the test goes on.
    Report {
        /// The version of the CLI under test.
        version: String,
    },
}

/// The version of the CLI the tests run ([`claude_bin`]'s): the pinned one unless
/// `BYRE_CLAUDE_BIN` names another binary, whose `--version` is then read once per process.
pub fn cli_under_test() -> Result<String, ProvisionError> {
    static VERSION: OnceLock<Result<String, String>> = OnceLock::new();
    let found = VERSION.get_or_init(|| {
        if std::env::var_os("BYRE_CLAUDE_BIN").is_none_or(|p| p.is_empty()) {
            return Ok(PINNED_CLI_VERSION.to_owned());
        }
        let bin = claude_bin().map_err(|e| e.to_string())?;
        cli_version(&bin).map_err(|e| e.to_string())
    });
    found.clone().map_err(|detail| ProvisionError::Version {
        path: std::env::var_os("BYRE_CLAUDE_BIN")
            .map(Into::into)
            .unwrap_or_default(),
        detail,
    })
}

/// The strictness for the CLI under test. A CLI whose version cannot be read is held fully.
pub fn strictness() -> Strictness {
    match cli_under_test() {
        Ok(version) if version != PINNED_CLI_VERSION => Strictness::Report { version },
        _ => Strictness::Full,
    }
}

/// Checks that `value` (a decoded message, hook input, answer) holds nothing byre does not
/// model: no unknown kind, no unmodelled field, no field that did not fit (a misfit). On the
/// pinned CLI a finding fails the test (a panic naming `context` and the paths); on another
/// version it is reported (see the module documentation). Returns the findings, as
/// `unknown <path>` / `extra <path>` / `misfit <path> (why)`.
pub fn check_modelled<T: FindUnknown + std::fmt::Debug + ?Sized>(
    context: impl Display,
    value: &T,
) -> Vec<String> {
    let unknown = value.unknown_paths();
    let extra = value.extra_paths();
    let misfit = value.misfit_paths();
    if unknown.is_empty() && extra.is_empty() && misfit.is_empty() {
        return Vec::new();
    }
    let findings: Vec<String> = unknown
        .iter()
        .map(|p| format!("unknown {p}"))
        .chain(extra.iter().map(|p| format!("extra {p}")))
        .chain(misfit.iter().map(|p| format!("misfit {p}")))
        .collect();
    match strictness() {
        Strictness::Full => panic!(
            "{context}: not fully modelled on the pinned CLI {PINNED_CLI_VERSION} \
             (unknown {unknown:?}, extra {extra:?}, misfit {misfit:?}): {value:?}"
        ),
        Strictness::Report { version } => {
            eprintln!(
                "byre drift (CLI {version}): {context}: {}",
                findings.join(", ")
            );
            report(&version, &context.to_string(), &unknown, &extra, &misfit);
        }
    }
    findings
}

/// Appends the findings to `BYRE_DRIFT_LOG`, when set. Each line is written whole in one call,
/// so tests running in parallel do not interleave.
fn report(version: &str, context: &str, unknown: &[String], extra: &[String], misfit: &[String]) {
    let Some(path) = std::env::var_os("BYRE_DRIFT_LOG").filter(|p| !p.is_empty()) else {
        return;
    };
    let mut text = String::new();
    let kinds = unknown
        .iter()
        .map(|p| ("unknown", p))
        .chain(extra.iter().map(|p| ("extra", p)))
        .chain(misfit.iter().map(|p| ("misfit", p)));
    for (kind, path) in kinds {
        let line =
            serde_json::json!({"cli": version, "context": context, "kind": kind, "path": path});
        text.push_str(&line.to_string());
        text.push('\n');
    }
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut file| file.write_all(text.as_bytes()));
    if let Err(e) = written {
        eprintln!(
            "byre drift: could not append to BYRE_DRIFT_LOG {}: {e}",
            std::path::Path::new(&path).display()
        );
    }
}
