//! Custom spawn: run the CLI through another command. Here `nice -n 10` (a CI bot that should
//! not slow its host); the same `Options::spawn` takes `Wrapper::docker_exec("box")` or
//! `Wrapper::ssh("ci@builder")`, or a `Spawn` implementation of your own.
//!
//! It runs offline: byre-testkit's fake Messages API plays the model, and the agent runs
//! `nice` to show the niceness it got. `cargo run -p byre-session --example wrapper`. With a real
//! account, start from `Options::new()` instead of `env.options()?` and drop the fake model.

use byre_session::transport::Wrapper;
use byre_session::Claude;
use byre_testkit::{ClaudeEnv, FakeModel, Match, Reply, Rule, Script};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The model runs `nice` (which prints the niceness it runs at) and says what it saw.
    let script = Script::new()
        .rule(
            Rule::when(Match::tool_result_contains("10"))
                .reply(Reply::text("I run at niceness 10.")),
        )
        .rule(
            Rule::when(Match::has_tool_result(true))
                .reply(Reply::text("I run at another niceness.")),
        )
        .rule(Rule::any().reply(Reply::tool_use(
            "Bash",
            serde_json::json!({"command": "nice"}),
        )));
    let model = FakeModel::start(script).await?;
    let env = ClaudeEnv::new(&model.base_url())?;
    // The wrapper, then the CLI and its arguments: `nice -n 10 claude --output-format ...`.
    // Docker: `Wrapper::docker_exec("box").cli("/usr/local/bin/claude")` passes each variable
    // as `-e NAME` and the directory as `-w`; ssh: `Wrapper::ssh("ci@builder")` quotes every
    // argument for the remote shell and sends variables by name (`SendEnv`).
    // Unasked, the CLI would deny the command (its default mode asks, and no one is there to
    // answer): allow just that one.
    let options = env
        .options()?
        .allowed_tools(["Bash(nice)"])
        .spawn(Wrapper::new("nice").args(["-n", "10"]));
    let (claude, mut events) = Claude::start(options).await?;
    claude.send("What niceness do you run at?")?;
    let output = events.turn().finish().await?;
    println!("{}", output.text);
    claude.close().await?;
    Ok(())
}
