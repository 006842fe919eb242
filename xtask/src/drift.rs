//! `cargo xtask drift [VERSION|latest]`: runs byre's scenarios against another CLI version
//! offline and reports how it differs from the pinned one: message kinds, fields, hook events
//! and their inputs, control requests, the `initialize` answer, `--help` flags, and each
//! scenario's behaviour. Exits non-zero when behaviour changed.
//!
//! The other CLI is installed into its own folder (`byre_testkit::claude_bin_version`); its
//! transcripts are written to `target/drift/cli-<version>/` for a closer look, and compared
//! with the pinned CLI's recordings in `testdata/transcripts/cli-<pinned>/`.

mod profile;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;

use byre_testkit::{
    claude_bin_version, cli_version, latest_cli_version, read_transcript, ClaudeEnv,
    TranscriptLine, PINNED_CLI_VERSION,
};
use profile::{Behaviour, Profile};

/// How many scenarios run at once.
const PARALLEL: usize = 3;

pub(crate) fn run(version: Option<&str>) -> Result<bool, String> {
    let version = match version {
        None | Some("latest") => latest_cli_version().map_err(|e| e.to_string())?,
        Some(v) => v.to_owned(),
    };
    let bin = claude_bin_version(&version).map_err(|e| e.to_string())?;
    let reported = cli_version(&bin).map_err(|e| e.to_string())?;
    let pinned_bin = claude_bin_version(PINNED_CLI_VERSION).map_err(|e| e.to_string())?;
    let root = crate::project_root();
    let pinned_dir = root
        .join("testdata/transcripts")
        .join(format!("cli-{PINNED_CLI_VERSION}"));
    let out_dir = root.join("target/drift").join(format!("cli-{version}"));
    std::fs::create_dir_all(&out_dir).map_err(|e| format!("{}: {e}", out_dir.display()))?;
    eprintln!(
        "xtask drift: running {} scenarios against CLI {reported} ({})",
        byre_e2e::scenarios::all().len(),
        bin.display()
    );
    let runs = run_scenarios(&bin, &root)?;
    let mut theirs = Profile::default();
    let mut ours = Profile::default();
    let mut failed = BTreeMap::new();
    for (name, outcome) in &runs {
        let lines = match outcome {
            Ok(lines) => lines,
            Err(why) => {
                failed.insert(name.clone(), why.clone());
                continue;
            }
        };
        write_transcript(&out_dir.join(format!("{name}.jsonl")), lines)?;
        theirs.add(name, lines);
        let recorded = pinned_dir.join(format!("{name}.jsonl"));
        let recorded = read_transcript(&recorded).map_err(|e| e.to_string())?;
        ours.add(name, &recorded);
    }
    let flags = (help_flags(&pinned_bin)?, help_flags(&bin)?);
    let report = Report {
        version: &reported,
        scenarios: runs.len(),
        failed: &failed,
        ours: &ours,
        theirs: &theirs,
        flags: &flags,
    };
    let (text, changed) = report.render();
    print!("{text}");
    eprintln!("xtask drift: transcripts in {}", out_dir.display());
    Ok(!changed)
}

/// Every scenario against `bin`, [`PARALLEL`] at a time: each one's transcript lines, or why
/// it failed, by name.
type Runs = Vec<(String, Result<Vec<TranscriptLine>, String>)>;

fn run_scenarios(bin: &Path, root: &Path) -> Result<Runs, String> {
    let ctx = byre_e2e::Ctx {
        bin: bin.to_path_buf(),
        root: root.to_path_buf(),
    };
    let runtime = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
    runtime.block_on(async move {
        let permits = Arc::new(tokio::sync::Semaphore::new(PARALLEL));
        let mut tasks = tokio::task::JoinSet::new();
        for (index, scenario) in byre_e2e::scenarios::all().into_iter().enumerate() {
            let ctx = ctx.clone();
            let permits = permits.clone();
            tasks.spawn(async move {
                let _permit = permits.acquire_owned().await;
                let outcome = byre_e2e::run(&scenario, ctx).await;
                let lines = outcome
                    .map(|recordings| recordings.into_iter().flat_map(|r| r.lines).collect())
                    .map_err(|failure| failure.to_string());
                (index, scenario.name.to_owned(), lines)
            });
        }
        let mut runs = Vec::new();
        while let Some(done) = tasks.join_next().await {
            runs.push(done.map_err(|e| format!("a scenario task failed: {e}"))?);
        }
        runs.sort_by_key(|(index, _, _)| *index);
        Ok(runs
            .into_iter()
            .map(|(_, name, lines)| (name, lines))
            .collect())
    })
}

fn write_transcript(path: &Path, lines: &[TranscriptLine]) -> Result<(), String> {
    let mut text = String::new();
    for line in lines {
        text.push_str(&line.to_json());
        text.push('\n');
    }
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}

/// The long flags `claude --help` lists (`--model`, ...), run offline in a scratch `HOME`.
fn help_flags(bin: &Path) -> Result<BTreeSet<String>, String> {
    let env = ClaudeEnv::new("http://127.0.0.1:9").map_err(|e| e.to_string())?;
    let mut command = std::process::Command::new(bin);
    command.arg("--help").current_dir(env.cwd());
    for name in env.removed() {
        command.env_remove(name);
    }
    command.envs(env.vars().iter().map(|(k, v)| (k.as_str(), v.as_str())));
    let output = command
        .output()
        .map_err(|e| format!("{} --help: {e}", bin.display()))?;
    if !output.status.success() {
        return Err(format!("{} --help: {}", bin.display(), output.status));
    }
    let text = String::from_utf8_lossy(&output.stdout);
    Ok(long_flags(&text))
}

/// The `--flag` words of a help text.
fn long_flags(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .filter(|word| word.len() > 2 && word.starts_with("--") && !word.starts_with("---"))
        .map(str::to_owned)
        .collect()
}

/// The parts of one report.
struct Report<'a> {
    version: &'a str,
    scenarios: usize,
    failed: &'a BTreeMap<String, String>,
    ours: &'a Profile,
    theirs: &'a Profile,
    flags: &'a (BTreeSet<String>, BTreeSet<String>),
}

impl Report<'_> {
    /// The report's text, and whether behaviour changed.
    fn render(&self) -> (String, bool) {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "byre drift report: CLI {} against the pinned CLI {PINNED_CLI_VERSION}",
            self.version
        );
        let _ = writeln!(
            out,
            "scenarios: {} run, {} passed their own checks\n",
            self.scenarios,
            self.scenarios - self.failed.len()
        );
        let theirs = self.theirs;
        let ours = self.ours;
        section(
            &mut out,
            "message kinds",
            &diff_keys(&theirs.kinds, &ours.kinds, |n| format!("{n} lines")),
        );
        section(
            &mut out,
            "fields (kind path: example)",
            &diff_keys(&theirs.fields, &ours.fields, Clone::clone),
        );
        let events = |p: &Profile| -> BTreeMap<String, String> {
            p.hook_events
                .keys()
                .map(|e| (e.clone(), String::new()))
                .collect()
        };
        section(
            &mut out,
            "hook events",
            &diff_keys(&events(theirs), &events(ours), Clone::clone),
        );
        let inputs = |p: &Profile| -> BTreeMap<String, String> {
            p.hook_events
                .iter()
                .flat_map(|(e, fields)| fields.iter().map(move |f| (format!("{e} {f}"), "".into())))
                .collect()
        };
        section(
            &mut out,
            "hook input fields (event field)",
            &diff_keys(&inputs(theirs), &inputs(ours), Clone::clone),
        );
        section(
            &mut out,
            "control requests from the CLI",
            &diff_sets(&theirs.control_requests, &ours.control_requests),
        );
        section(
            &mut out,
            "initialize answer fields",
            &diff_keys(
                &theirs.initialize_fields,
                &ours.initialize_fields,
                Clone::clone,
            ),
        );
        section(
            &mut out,
            "capabilities",
            &diff_sets(&theirs.capabilities, &ours.capabilities),
        );
        section(
            &mut out,
            "--help flags",
            &diff_sets(&self.flags.1, &self.flags.0),
        );
        let changes = self.behaviour_changes();
        let _ = writeln!(out, "behaviour");
        let same = self.scenarios - changes.len();
        let _ = writeln!(out, "  = {same} scenarios behave as recorded");
        for change in &changes {
            let _ = writeln!(out, "  ! {change}");
        }
        let changed = !changes.is_empty();
        let _ = writeln!(
            out,
            "\nverdict: {}",
            if changed {
                format!("behaviour changed in {} scenarios (exit 1)", changes.len())
            } else {
                "behaviour unchanged (exit 0)".to_owned()
            }
        );
        (out, changed)
    }

    /// One line per scenario that failed or did other than its pinned recording.
    fn behaviour_changes(&self) -> Vec<String> {
        let mut changes = Vec::new();
        for (name, why) in self.failed {
            changes.push(format!("{name}: failed: {}", why.replace('\n', " ")));
        }
        let none = Behaviour::default();
        for (name, theirs) in &self.theirs.behaviour {
            let ours = self.ours.behaviour.get(name).unwrap_or(&none);
            if theirs == ours {
                continue;
            }
            let mut what = Vec::new();
            if theirs.turns() != ours.turns() {
                what.push(format!("turns {} -> {}", ours.turns(), theirs.turns()));
            }
            if theirs.tools != ours.tools {
                what.push(format!("tools {:?} -> {:?}", ours.tools, theirs.tools));
            }
            if theirs.results != ours.results {
                what.push(format!(
                    "results {:?} -> {:?}",
                    ours.results, theirs.results
                ));
            }
            changes.push(format!("{name}: {}", what.join("; ")));
        }
        changes
    }
}

/// `+ new` and `- vanished` lines between two keyed sets, with `show` for the value.
fn diff_keys<V>(
    theirs: &BTreeMap<String, V>,
    ours: &BTreeMap<String, V>,
    show: impl Fn(&V) -> String,
) -> Vec<String> {
    let line = |sign: char, key: &String, value: &V| {
        let shown = show(value);
        if shown.is_empty() {
            format!("{sign} {key}")
        } else {
            format!("{sign} {key}: {shown}")
        }
    };
    let new = theirs
        .iter()
        .filter(|(k, _)| !ours.contains_key(*k))
        .map(|(k, v)| line('+', k, v));
    let gone = ours
        .iter()
        .filter(|(k, _)| !theirs.contains_key(*k))
        .map(|(k, v)| line('-', k, v));
    new.chain(gone).collect()
}

fn diff_sets(theirs: &BTreeSet<String>, ours: &BTreeSet<String>) -> Vec<String> {
    let new = theirs.difference(ours).map(|k| format!("+ {k}"));
    let gone = ours.difference(theirs).map(|k| format!("- {k}"));
    new.chain(gone).collect()
}

fn section(out: &mut String, title: &str, lines: &[String]) {
    if lines.is_empty() {
        let _ = writeln!(out, "{title}: no change\n");
        return;
    }
    let _ = writeln!(out, "{title}:");
    for line in lines {
        let _ = writeln!(out, "  {line}");
    }
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn help_flags_are_the_long_options() {
        let text = "Usage: claude [options]\n  -p, --print  Print\n  --model <model>  Model\n\
                    --no-session-persistence\n  ---- not one\n";
        let flags: Vec<String> = long_flags(text).into_iter().collect();
        assert_eq!(flags, ["--model", "--no-session-persistence", "--print"]);
    }

    #[test]
    fn differences_are_signed() {
        let a: BTreeSet<String> = ["x".into(), "y".into()].into();
        let b: BTreeSet<String> = ["y".into(), "z".into()].into();
        assert_eq!(diff_sets(&a, &b), ["+ x", "- z"]);
    }
}
