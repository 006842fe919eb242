//! `cargo xtask demo`: what `byre run` shows, on a fresh machine with no API key.
//!
//! It provisions the pinned Claude Code CLI, starts byre-testkit's fake model on loopback with
//! the scripted conversation of `testdata/scenarios/demo.json`, and runs byre's `run` command
//! in-process against it, in a scratch `HOME` and folder. The session also gets what a program
//! built on byre adds: an in-process MCP server `byre` with a `lookup` tool, and a PreToolUse
//! hook. The model asks for the tool, then for Bash, then answers; everything is shown as a
//! user of `byre run` sees it. The demo fails when the run fails or the conversation went off
//! script.

use std::ffi::OsString;

use byre_proto::{HookEvent, HookOutput};
use byre_session::schemars::{self, JsonSchema};
use byre_session::{Hook, McpServer, Options, Tool, ToolOutput};
use byre_testkit::{claude_bin, ClaudeEnv, FakeModel, Script};
use serde_json::Value;

/// The prompt of the demo.
const PROMPT: &str = "What is a byre? Look it up, then tell me what is in this folder.";

pub(crate) fn run() -> Result<bool, String> {
    eprintln!(
        "byre demo: finding the pinned claude CLI \
         (the first time npm installs it into .cli/, a minute or two)"
    );
    let bin = claude_bin().map_err(|e| e.to_string())?;
    let version = byre_testkit::cli_version(&bin).map_err(|e| e.to_string())?;
    let script_path = crate::project_root().join("testdata/scenarios/demo.json");
    let script = Script::from_file(&script_path).map_err(|e| e.to_string())?;
    let runtime = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
    runtime.block_on(async {
        eprintln!("byre demo: starting the fake model and a scratch HOME");
        let model = FakeModel::start(script).await.map_err(|e| e.to_string())?;
        let env = ClaudeEnv::new(&model.base_url()).map_err(|e| e.to_string())?;
        for (file, text) in [
            ("README.md", "# A demo folder\n"),
            ("cows.txt", "Bessie\nDaisy\n"),
        ] {
            std::fs::write(env.cwd().join(file), text).map_err(|e| e.to_string())?;
        }
        eprintln!("byre demo: offline, no API key needed");
        eprintln!("  claude {version} ({})", bin.display());
        eprintln!(
            "  a fake model on {} plays testdata/scenarios/demo.json",
            model.base_url()
        );
        eprintln!(
            "  byre serves an MCP tool (byre.lookup) and a PreToolUse hook for Bash in-process"
        );
        eprintln!();
        eprintln!("$ byre run \"{PROMPT}\"");
        let setup_env = env.clone();
        let setup = byre_cli::Setup::new(move |options| demo_options(options, &setup_env));
        let args: Vec<OsString> = vec![
            "run".into(),
            "--claude".into(),
            bin.clone().into(),
            "--cwd".into(),
            env.cwd().into(),
            PROMPT.into(),
        ];
        let code = byre_cli::main_with(args, setup).await;
        let unmatched = model.unmatched().len();
        let requests = model.message_requests().len();
        model.shutdown().await;
        eprintln!();
        if code != std::process::ExitCode::SUCCESS {
            return Err("byre run failed".into());
        }
        if unmatched > 0 || requests < 3 {
            return Err(format!(
                "the conversation went off script: {requests} model requests, {unmatched} unmatched"
            ));
        }
        eprintln!(
            "With an API key, the real thing: \
             ANTHROPIC_API_KEY=... cargo run -p byre-cli -- run \"...\""
        );
        Ok(true)
    })
}

/// The demo's additions to the session: the offline environment, the MCP server and the hook.
fn demo_options(options: Options, env: &ClaudeEnv) -> Options {
    env.apply_options(options).serve_mcp(dictionary()).hook(
        Hook::new(HookEvent::PRE_TOOL_USE).matcher("Bash"),
        |input, _id| async move {
            // A policy hook: any command may run but one that deletes files.
            let command = input
                .tool_input()
                .and_then(|i| i.get("command"))
                .and_then(Value::as_str)
                .unwrap_or("");
            Ok(if command.contains("rm ") {
                HookOutput::deny_tool("the demo does not delete files")
            } else {
                HookOutput::none()
            })
        },
    )
}

/// The input of the `lookup` tool.
#[derive(serde::Deserialize, JsonSchema)]
struct Lookup {
    /// The word to look up.
    word: String,
}

/// The `byre` MCP server: a one-word dictionary, written with byre's light tool API. A word it
/// does not know is a tool error the model reads.
fn dictionary() -> McpServer {
    let lookup = Tool::new(
        "lookup",
        "Look up a word in the byre dictionary.",
        |input: Lookup| async move {
            match input.word.as_str() {
                "byre" => Ok(ToolOutput::text(
                    "byre: a cow shed (Scots and northern English)",
                )),
                word => Err(format!("no entry for {word}").into()),
            }
        },
    )
    .expect("a valid tool");
    McpServer::tools("byre", [lookup]).expect("a valid server")
}

#[cfg(test)]
mod tests {
    /// The first `cargo xtask demo` builds byre before anything of the demo runs: the alias
    /// must let cargo's progress through, so that the build is not minutes of silence.
    #[test]
    fn the_xtask_alias_shows_the_build() {
        let config = std::fs::read_to_string(crate::project_root().join(".cargo/config.toml"))
            .expect("the workspace's .cargo/config.toml");
        let alias = config
            .lines()
            .find(|line| line.trim_start().starts_with("xtask"))
            .expect("an xtask alias");
        let words: Vec<_> = alias.split(['"', ' ']).collect();
        assert!(words.contains(&"run"), "{alias}");
        assert!(
            !words.iter().any(|w| matches!(*w, "--quiet" | "-q")),
            "the alias hides cargo's progress: {alias}"
        );
    }
}
