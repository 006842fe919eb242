//! The command line of every task, declared in one place.

use std::path::PathBuf;

pub(crate) const USAGE: &str = "\
usage: cargo xtask <task>

tasks:
  demo                                   run `byre run` offline against a scripted fake model
  test                                   fmt, clippy, doc links, every test, strict replay
  replay [--strict] [--explain] [--cli=VERSION] PATH...
                                         decode and re-encode transcripts (files or folders;
                                         with --cli, only sessions of that CLI version)
  cli                                    install the pinned CLI if missing; print its path
  fake-model --script FILE [--port N]    serve a fake Messages API on loopback until Ctrl-C
  record [SCENARIO...]                   run scenarios against the real CLI, record them
  drift [VERSION|latest]                 run the scenarios on another CLI; report what changed";

/// A parsed command line.
pub(crate) enum Task {
    Demo,
    Test,
    Replay(Replay),
    Cli,
    FakeModel(FakeModel),
    Record(Vec<String>),
    /// `drift`: the CLI version (`latest` when absent).
    Drift(Option<String>),
    Help,
}

/// Flags of `fake-model`.
pub(crate) struct FakeModel {
    /// The script file (JSON).
    pub(crate) script: PathBuf,
    /// A fixed loopback port; an ephemeral one when absent.
    pub(crate) port: Option<u16>,
}

/// Flags of `replay`.
pub(crate) struct Replay {
    /// Fail on any message that holds an `Unknown` or a field byre does not model.
    pub(crate) strict: bool,
    /// Print the JSON path of each `Unknown`, each unmodelled field and each mismatch.
    pub(crate) explain: bool,
    /// Transcript files, or folders searched for `*.jsonl`.
    pub(crate) paths: Vec<PathBuf>,
    /// Only the transcripts of sessions with this CLI version (its `initialize` answer's
    /// `claude_code_version`): others (stand-ins) are skipped.
    pub(crate) cli: Option<String>,
}

impl Task {
    pub(crate) fn parse(args: &[String]) -> Result<Task, String> {
        let Some((task, rest)) = args.split_first() else {
            return Ok(Task::Help);
        };
        match task.as_str() {
            "demo" => {
                no_args(rest)?;
                Ok(Task::Demo)
            }
            "test" => {
                no_args(rest)?;
                Ok(Task::Test)
            }
            "replay" => {
                let mut flags = Replay {
                    strict: false,
                    explain: false,
                    paths: Vec::new(),
                    cli: None,
                };
                for arg in rest {
                    match arg.as_str() {
                        "--strict" => flags.strict = true,
                        flag if flag.starts_with("--cli=") => {
                            flags.cli = Some(flag["--cli=".len()..].to_owned())
                        }
                        "--explain" => flags.explain = true,
                        flag if flag.starts_with("--") => {
                            return Err(format!("replay: unknown flag {flag}"))
                        }
                        path => flags.paths.push(PathBuf::from(path)),
                    }
                }
                if flags.paths.is_empty() {
                    return Err("replay: give at least one PATH".into());
                }
                Ok(Task::Replay(flags))
            }
            "cli" => {
                no_args(rest)?;
                Ok(Task::Cli)
            }
            "fake-model" => {
                let mut script = None;
                let mut port = None;
                let mut rest = rest.iter();
                while let Some(arg) = rest.next() {
                    match arg.as_str() {
                        "--script" => script = rest.next().map(PathBuf::from),
                        "--port" => {
                            let value = rest.next().ok_or("fake-model: --port needs a number")?;
                            port = Some(value.parse().map_err(|_| {
                                format!("fake-model: --port takes a port number, not {value:?}")
                            })?);
                        }
                        other => return Err(format!("fake-model: unexpected argument {other:?}")),
                    }
                }
                let script = script.ok_or("fake-model: give --script FILE")?;
                Ok(Task::FakeModel(FakeModel { script, port }))
            }
            "record" => {
                if let Some(flag) = rest.iter().find(|a| a.starts_with('-')) {
                    return Err(format!("record: unknown flag {flag}"));
                }
                Ok(Task::Record(rest.to_vec()))
            }
            "drift" => match rest {
                [] => Ok(Task::Drift(None)),
                [version] if !version.starts_with('-') => Ok(Task::Drift(Some(version.clone()))),
                _ => Err("drift: give at most one VERSION (or `latest`)".into()),
            },
            "help" | "--help" | "-h" => Ok(Task::Help),
            other => Err(format!("unknown task {other:?}")),
        }
    }
}

fn no_args(rest: &[String]) -> Result<(), String> {
    match rest.first() {
        Some(arg) => Err(format!("unexpected argument {arg:?}")),
        None => Ok(()),
    }
}
