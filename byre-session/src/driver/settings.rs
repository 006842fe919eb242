//! Typed values for options the CLI takes as settings or rules: [`Skills`] (which skills the
//! session may use) and [`Sandbox`] (the `sandbox` settings for Bash).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Which skills the session may use ([`Options::skills`](crate::Options::skills)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Skills {
    /// Every skill the CLI finds: the `Skill` tool is allowed.
    All,
    /// Only these (by name, or `plugin:skill`): sent in `initialize` as the session's skill
    /// filter, and each allowed as a `Skill(name)` rule.
    Only(Vec<String>),
}

impl<S: Into<String>> FromIterator<S> for Skills {
    fn from_iter<I: IntoIterator<Item = S>>(names: I) -> Self {
        Skills::Only(names.into_iter().map(Into::into).collect())
    }
}

impl<S: Into<String>, const N: usize> From<[S; N]> for Skills {
    fn from(names: [S; N]) -> Self {
        names.into_iter().collect()
    }
}

impl<S: Into<String>> From<Vec<S>> for Skills {
    fn from(names: Vec<S>) -> Self {
        names.into_iter().collect()
    }
}

impl Skills {
    /// The `--allowedTools` rules the skills need; an error names a skill that cannot be
    /// written as a rule that matches it.
    pub(crate) fn rules(&self) -> Result<Vec<String>, String> {
        match self {
            Skills::All => Ok(vec!["Skill".to_owned()]),
            Skills::Only(names) => names
                .iter()
                .map(|name| check_skill_name(name).map(|()| format!("Skill({name})")))
                .collect(),
        }
    }
}

/// Rejects a skill name that the CLI's rule syntax cannot carry or that can never match.
fn check_skill_name(name: &str) -> Result<(), String> {
    let why = if name.trim().is_empty() {
        "it is empty"
    } else if name != name.trim() {
        "it starts or ends with whitespace, which the Skill tool trims"
    } else if name
        .chars()
        .any(|c| matches!(c, '(' | ')' | ',') || c.is_control() || c == '\u{feff}')
    {
        "parentheses, commas and control characters cannot be written in a rule"
    } else if name == "*" || name.ends_with(":*") || name.ends_with(" *") {
        "wildcards are not rules: use Skills::All, or list each skill"
    } else if name.starts_with('/') {
        "give the skill's name, not its slash command"
    } else if name.contains("\\\\") || name.ends_with('\\') {
        "backslashes would be read as escapes"
    } else {
        return Ok(());
    };
    Err(format!("skill name {name:?}: {why}"))
}

/// The `sandbox` settings: how the CLI isolates the Bash commands it runs (Linux and macOS).
/// Fields left `None` keep the CLI's defaults; [`Sandbox::extra`] carries settings byre does
/// not name.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Sandbox {
    /// Runs Bash commands in the sandbox.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// Runs sandboxed Bash commands without asking.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auto_allow_bash_if_sandboxed: Option<bool>,
    /// Commands run outside the sandbox (`git`, `docker`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub excluded_commands: Option<Vec<String>>,
    /// Lets a command ask to run outside the sandbox (`dangerouslyDisableSandbox`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allow_unsandboxed_commands: Option<bool>,
    /// The sandbox's network isolation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub network: Option<SandboxNetwork>,
    /// Violations left unreported: command pattern (`*` for all) to substrings of the text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ignore_violations: Option<Map<String, Value>>,
    /// A weaker sandbox for unprivileged containers (Linux; less isolation).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enable_weaker_nested_sandbox: Option<bool>,
    /// Other sandbox settings, as the CLI spells them.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Sandbox {
    /// A sandbox that is on, with the CLI's defaults for the rest.
    pub fn enabled() -> Self {
        Sandbox {
            enabled: Some(true),
            ..Sandbox::default()
        }
    }
}

/// The sandbox's network isolation (the `network` key of [`Sandbox`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SandboxNetwork {
    /// Domains sandboxed commands may reach.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allowed_domains: Option<Vec<String>>,
    /// Domains always blocked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub denied_domains: Option<Vec<String>>,
    /// In managed settings: only the managed allowed domains count.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allow_managed_domains_only: Option<bool>,
    /// Unix sockets sandboxed commands may use (an ssh agent).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allow_unix_sockets: Option<Vec<String>>,
    /// Every Unix socket (less isolation).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allow_all_unix_sockets: Option<bool>,
    /// Binding to localhost ports (macOS).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allow_local_binding: Option<bool>,
    /// XPC / Mach services (macOS).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allow_mach_lookup: Option<Vec<String>>,
    /// The port of a proxy of your own for HTTP.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub http_proxy_port: Option<u16>,
    /// The port of a proxy of your own for SOCKS5.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub socks_proxy_port: Option<u16>,
    /// Other network settings, as the CLI spells them.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skills_become_rules_and_bad_names_are_refused() {
        assert_eq!(Skills::All.rules().unwrap(), ["Skill"]);
        let only = Skills::from(["pdf", "docs:review"]);
        assert_eq!(only.rules().unwrap(), ["Skill(pdf)", "Skill(docs:review)"]);
        for bad in ["", " pdf", "a,b", "x(y)", "*", "docs:*", "/pdf", "a\\"] {
            assert!(Skills::from([bad]).rules().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_sandbox_serialises_as_the_cli_spells_it() {
        let mut sandbox = Sandbox::enabled();
        sandbox.excluded_commands = Some(vec!["git".into()]);
        sandbox.network = Some(SandboxNetwork {
            allow_local_binding: Some(true),
            ..SandboxNetwork::default()
        });
        sandbox.extra.insert("futureKey".into(), Value::Bool(true));
        assert_eq!(
            serde_json::to_value(&sandbox).unwrap(),
            serde_json::json!({
                "enabled": true,
                "excludedCommands": ["git"],
                "network": {"allowLocalBinding": true},
                "futureKey": true,
            })
        );
    }
}
