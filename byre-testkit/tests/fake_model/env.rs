//! CLI provisioning and the offline environment, without any API: the pinned CLI is installed
//! (or found) and reports its version, and [`ClaudeEnv`] gives a child process the offline
//! variables, removes inherited credentials and proxies, and runs it in its scratch directory.
//! If the CLI cannot be provisioned these tests fail with the reason.

use std::net::TcpListener;
use std::path::PathBuf;

use byre_testkit::{
    claude_bin, claude_bin_version, cli_under_test, cli_version, install_dir, ClaudeEnv,
    OFFLINE_API_KEY, PINNED_CLI_VERSION,
};

/// The provisioned CLI, or a failure that says why.
fn bin() -> PathBuf {
    claude_bin().unwrap_or_else(|e| panic!("could not provision the Claude Code CLI: {e}"))
}

/// A loopback port that is bound but never accepts: the CLI can reach nothing through it.
struct DeadEnd {
    _listener: TcpListener,
    url: String,
}

fn dead_end() -> DeadEnd {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    let url = format!("http://{}", listener.local_addr().unwrap());
    DeadEnd {
        _listener: listener,
        url,
    }
}

#[test]
fn provisioning_gives_the_pinned_cli() {
    let bin = bin();
    assert!(bin.is_file(), "{} is not a file", bin.display());
    let version = cli_version(&bin).unwrap_or_else(|e| panic!("{e}"));
    // The pinned CLI, unless BYRE_CLAUDE_BIN chose another on purpose.
    assert_eq!(version, cli_under_test().unwrap());
    // A second call is answered from the same place.
    assert_eq!(claude_bin().unwrap(), bin);
    // The pinned version is always to be had, in a folder of its own.
    let pinned = claude_bin_version(PINNED_CLI_VERSION).unwrap_or_else(|e| panic!("{e}"));
    let folder = install_dir().unwrap().join(PINNED_CLI_VERSION);
    assert_eq!(pinned, byre_testkit::installed_bin(&folder));
    assert_eq!(cli_version(&pinned).unwrap(), PINNED_CLI_VERSION);
    assert!(claude_bin_version("1.0; rm").is_err());
}

#[tokio::test]
async fn env_sets_the_offline_variables_and_removes_inherited_ones() {
    let dead = dead_end();
    let env = ClaudeEnv::new(&dead.url).unwrap();
    assert!(env.home().is_dir());
    assert!(env.cwd().is_dir());
    assert_ne!(env.home(), env.cwd());
    assert_eq!(env.var("ANTHROPIC_BASE_URL"), Some(dead.url.as_str()));
    assert_eq!(env.var("ANTHROPIC_API_KEY"), Some(OFFLINE_API_KEY));
    assert_eq!(env.var("HOME"), env.home().to_str());
    for name in [
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
        "DISABLE_TELEMETRY",
        "DISABLE_AUTOUPDATER",
        "DISABLE_ERROR_REPORTING",
    ] {
        assert_eq!(env.var(name), Some("1"), "{name}");
    }
    let uid = std::process::Command::new("id").arg("-u").output().unwrap();
    let root = String::from_utf8_lossy(&uid.stdout).trim() == "0";
    assert_eq!(byre_testkit::running_as_root(), root);
    assert_eq!(env.var("IS_SANDBOX"), root.then_some("1"));

    // What a child really gets: inherited values are removed, ours are set, PATH is kept.
    let mut cmd = tokio::process::Command::new("env");
    cmd.env("CLAUDECODE", "1")
        .env("ANTHROPIC_AUTH_TOKEN", "real-token")
        .env("CLAUDE_CODE_OAUTH_TOKEN", "real-oauth")
        .env("ANTHROPIC_API_KEY", "real-key")
        .env("HTTPS_PROXY", "http://proxy.invalid:1")
        .env("https_proxy", "http://proxy.invalid:1");
    env.apply(&mut cmd);
    let out = cmd.output().await.expect("run env");
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let vars: Vec<(&str, &str)> = text.lines().filter_map(|l| l.split_once('=')).collect();
    let get = |name: &str| vars.iter().find(|(k, _)| *k == name).map(|(_, v)| *v);
    for gone in [
        "CLAUDECODE",
        "ANTHROPIC_AUTH_TOKEN",
        "CLAUDE_CODE_OAUTH_TOKEN",
        "HTTPS_PROXY",
        "https_proxy",
    ] {
        assert_eq!(get(gone), None, "{gone} reached the child");
    }
    assert_eq!(get("ANTHROPIC_API_KEY"), Some(OFFLINE_API_KEY));
    assert_eq!(get("ANTHROPIC_BASE_URL"), Some(dead.url.as_str()));
    assert_eq!(get("HOME"), env.home().to_str());
    assert!(get("PATH").is_some(), "PATH was not kept");

    // The child runs in the scratch directory.
    let mut pwd = tokio::process::Command::new("pwd");
    env.apply(&mut pwd);
    let out = pwd.output().await.unwrap();
    assert_eq!(
        String::from_utf8(out.stdout).unwrap().trim(),
        env.cwd().to_str().unwrap()
    );

    // Another working directory keeps the home; the directories go with the last user.
    let other = env.with_fresh_cwd().unwrap();
    assert_eq!(other.home(), env.home());
    assert_ne!(other.cwd(), env.cwd());
    let (home, cwd, other_cwd) = (
        env.home().to_path_buf(),
        env.cwd().to_path_buf(),
        other.cwd().to_path_buf(),
    );
    drop(env);
    assert!(home.is_dir(), "the home went away while still shared");
    assert!(!cwd.exists());
    drop(other);
    assert!(!home.exists());
    assert!(!other_cwd.exists());
}
