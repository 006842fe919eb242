//! Where each version of the Claude Code CLI ships, asked of npm: the CLI's own package, or
//! (for versions released there first) the native binary inside the TypeScript Agent SDK's
//! package for this platform, whose bundled CLI version the SDK's package names in its
//! `claudeCodeVersion` field.

use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::cli::{run_with_timeout, tail, ProvisionError};

/// The npm package that ships the CLI.
pub const CLI_PACKAGE: &str = "@anthropic-ai/claude-code";

/// The TypeScript Agent SDK's package, which names the CLI version it bundles.
pub const SDK_PACKAGE: &str = "@anthropic-ai/claude-agent-sdk";

/// How long one `npm view` may take.
const VIEW_TIMEOUT: Duration = Duration::from_secs(60);

/// The package a CLI version is installed from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CliSource {
    /// [`CLI_PACKAGE`] at the CLI's own version.
    Cli,
    /// The SDK's native package for this platform (`@anthropic-ai/claude-agent-sdk-linux-x64`)
    /// at the SDK version that bundles the CLI.
    Sdk {
        /// The SDK version (`0.3.337`).
        version: String,
    },
}

impl CliSource {
    /// The package and version to install (`name@version`) for CLI `cli_version`.
    pub fn spec(&self, cli_version: &str) -> String {
        match self {
            CliSource::Cli => format!("{CLI_PACKAGE}@{cli_version}"),
            CliSource::Sdk { version } => format!("{}@{version}", platform_package()),
        }
    }
}

/// The SDK's native package for the platform these tests run on.
pub fn platform_package() -> String {
    let os = match std::env::consts::OS {
        "macos" => "darwin",
        "windows" => "win32",
        other => other,
    };
    let arch = match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        other => other,
    };
    let libc = if cfg!(target_env = "musl") {
        "-musl"
    } else {
        ""
    };
    format!("{SDK_PACKAGE}-{os}-{arch}{libc}")
}

/// Where the binary of a CLI installed into `dir` is: npm's link for [`CLI_PACKAGE`], or the
/// binary inside the SDK's native package.
pub fn installed_bin(dir: &Path) -> PathBuf {
    let modules = dir.join("node_modules");
    let linked = modules.join(".bin").join("claude");
    if linked.exists() {
        return linked;
    }
    let native = modules.join(platform_package()).join(if cfg!(windows) {
        "claude.exe"
    } else {
        "claude"
    });
    if native.exists() {
        native
    } else {
        linked
    }
}

/// The package CLI `version` is installed from: its own when npm has it there, else the SDK
/// release that bundles it.
pub fn source_of(version: &str) -> Result<CliSource, ProvisionError> {
    let own = view(&[&format!("{CLI_PACKAGE}@{version}"), "version"], version)?;
    if own.trim() == version {
        return Ok(CliSource::Cli);
    }
    bundled_versions(version)?
        .into_iter()
        .find(|(_, cli)| cli == version)
        .map(|(sdk, _)| CliSource::Sdk { version: sdk })
        .ok_or_else(|| ProvisionError::NoPackage {
            version: version.to_owned(),
        })
}

/// The newest CLI version on npm: the newer of [`CLI_PACKAGE`]'s `latest` and the one the
/// SDK's `latest` bundles.
pub fn latest_cli_version() -> Result<String, ProvisionError> {
    let own = view(&[&format!("{CLI_PACKAGE}@latest"), "version"], "latest")?;
    let bundled = view(
        &[&format!("{SDK_PACKAGE}@latest"), "claudeCodeVersion"],
        "latest",
    )?;
    let mut found: Vec<String> = [own, bundled]
        .iter()
        .map(|v| v.trim().trim_matches('\'').to_owned())
        .filter(|v| is_version(v))
        .collect();
    found.sort_by_key(|v| version_key(v));
    found.pop().ok_or_else(|| ProvisionError::Version {
        path: PathBuf::from("npm"),
        detail: format!("npm named no CLI version for {CLI_PACKAGE} or {SDK_PACKAGE}"),
    })
}

/// Every SDK release with the CLI version it bundles: `(sdk, cli)`.
fn bundled_versions(version: &str) -> Result<Vec<(String, String)>, ProvisionError> {
    // Every release (`@*` would name only `latest`).
    let text = view(
        &[&format!("{SDK_PACKAGE}@>=0.0.0"), "claudeCodeVersion"],
        version,
    )?;
    Ok(parse_bundled(&text))
}

/// Reads `npm view <package>@<range> <field>` over many releases: one
/// `<package>@<version> '<value>'` a line.
fn parse_bundled(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|line| {
            let (name, value) = line.trim().split_once(' ')?;
            let (_, sdk) = name.rsplit_once('@')?;
            let cli = value.trim().trim_matches('\'');
            (is_version(sdk) && is_version(cli)).then(|| (sdk.to_owned(), cli.to_owned()))
        })
        .collect()
}

/// Whether `text` is a plain version number (`2.1.337`).
fn is_version(text: &str) -> bool {
    !text.is_empty() && text.split('.').all(|p| p.parse::<u64>().is_ok())
}

/// A version's numbers, to order versions by.
fn version_key(text: &str) -> Vec<u64> {
    text.split('.').filter_map(|p| p.parse().ok()).collect()
}

/// Installs CLI `version` into `dir` from the package that ships it.
pub(crate) fn install(dir: &Path, version: &str) -> Result<(), ProvisionError> {
    let spec = source_of(version)?.spec(version);
    let dir_arg = dir.to_string_lossy().into_owned();
    let args = [
        "install",
        "--prefix",
        dir_arg.as_str(),
        "--no-audit",
        "--no-fund",
        "--no-save",
        spec.as_str(),
    ];
    let command = format!("npm {}", args.join(" "));
    eprintln!("byre-testkit: installing the Claude Code CLI {version}: {command}");
    let output = Command::new("npm")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|source| npm_error(&command, version, source))?;
    if !output.status.success() {
        return Err(ProvisionError::NpmFailed {
            command,
            status: output.status.to_string(),
            stderr_tail: tail(&output.stderr, 30),
        });
    }
    Ok(())
}

/// Runs `npm view ARGS`; its stdout (empty when npm has no such release).
fn view(args: &[&str], version: &str) -> Result<String, ProvisionError> {
    let command = format!("npm view {}", args.join(" "));
    let (status, stdout, stderr) =
        run_with_timeout(Command::new("npm").arg("view").args(args), VIEW_TIMEOUT)
            .map_err(|source| npm_error(&command, version, source))?;
    let stderr_text = String::from_utf8_lossy(&stderr);
    if !status.success() && !stderr_text.contains("E404") {
        return Err(ProvisionError::NpmFailed {
            command,
            status: status.to_string(),
            stderr_tail: tail(&stderr, 30),
        });
    }
    Ok(String::from_utf8_lossy(&stdout).into_owned())
}

fn npm_error(command: &str, version: &str, source: io::Error) -> ProvisionError {
    match source.kind() {
        io::ErrorKind::NotFound => ProvisionError::NpmMissing {
            version: version.to_owned(),
            source,
        },
        _ => ProvisionError::Io {
            what: format!("could not run `{command}`"),
            source,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundled_versions_are_read_line_by_line() {
        let text = "@anthropic-ai/claude-agent-sdk@0.3.336 '2.1.336'\n\
                    @anthropic-ai/claude-agent-sdk@0.3.337 '2.1.337'\n\
                    something else\n";
        assert_eq!(
            parse_bundled(text),
            [
                ("0.3.336".to_owned(), "2.1.336".to_owned()),
                ("0.3.337".to_owned(), "2.1.337".to_owned())
            ]
        );
    }

    #[test]
    fn versions_order_by_their_numbers() {
        let mut versions = ["2.1.337", "2.1.99", "2.1.332"].map(str::to_owned);
        versions.sort_by_key(|v| version_key(v));
        assert_eq!(versions, ["2.1.99", "2.1.332", "2.1.337"]);
        assert!(is_version("2.1.337") && !is_version("2.1.x") && !is_version(""));
    }

    #[test]
    fn the_sdk_package_is_named_for_this_platform() {
        let name = platform_package();
        assert!(
            name.starts_with("@anthropic-ai/claude-agent-sdk-"),
            "{name}"
        );
        let spec = CliSource::Sdk {
            version: "0.3.337".into(),
        }
        .spec("2.1.337");
        assert_eq!(spec, format!("{name}@0.3.337"));
        assert_eq!(
            CliSource::Cli.spec("2.1.332"),
            "@anthropic-ai/claude-code@2.1.332"
        );
    }
}
