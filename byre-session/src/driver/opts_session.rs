//! Options for the session and what it keeps: continuing, resuming and forking, its id,
//! persistence, transcripts, and the settings (and files) the CLI reads.

use super::options::Options;
use serde_json::{Map, Value};
use std::path::PathBuf;

impl Options {
    /// Continues the latest session of the working directory (`--continue`).
    pub fn continue_conversation(mut self) -> Self {
        self.launch.continue_conversation = true;
        self
    }

    /// The new session's id (`--session-id`, a UUID; see
    /// [`new_session_id`](crate::new_session_id)).
    pub fn session_id(mut self, id: impl Into<String>) -> Self {
        self.launch.session_id = Some(id.into());
        self
    }

    /// With [`Options::resume`]: resumes the session as it was at message `uuid`
    /// (`--resume-session-at`).
    pub fn resume_at(mut self, uuid: impl Into<String>) -> Self {
        self.launch.resume_session_at = Some(uuid.into());
        self
    }

    /// With [`Options::resume`]: continues in a new session instead (`--fork-session`).
    pub fn fork_session(mut self) -> Self {
        self.launch.fork_session = true;
        self
    }

    /// With [`Options::resume_at`]: declares the uuid of the prompt whose turn the truncated
    /// resume discards (`--resume-drops-turn=<uuid>`). The CLI checks that everything past the
    /// resume point belongs to that turn, and otherwise refuses the resume: the start fails with
    /// a result whose error begins `Resume rejected by --resume-drops-turn:`. That refusal is
    /// final for the same arguments; resume without the pair instead of retrying.
    pub fn resume_drops_turn(mut self, prompt_uuid: impl Into<String>) -> Self {
        self.launch.resume_drops_turn = Some(prompt_uuid.into());
        self
    }

    /// Writes nothing of the session to disk (`--no-session-persistence`): no transcript in
    /// `~/.claude/projects`, so it cannot be resumed.
    pub fn no_session_persistence(mut self) -> Self {
        self.launch.no_session_persistence = true;
        self
    }

    /// Writes a transcript of every line exchanged to `path` (its format:
    /// [`TranscriptWriter`](crate::transport::TranscriptWriter)). The session holds the file
    /// while it runs: a second session started with the same path fails to start (for
    /// options used by many sessions, see [`transcripts_in`](Options::transcripts_in)).
    pub fn transcript(mut self, path: impl Into<PathBuf>) -> Self {
        self.transcript = Some(path.into());
        self.transcript_dir = None;
        self
    }

    /// Writes each session started with these options a transcript of its own in `dir`
    /// (which must exist), named `<unix ms>-<pid>-<n>.jsonl` so that names sort by start
    /// time: for options cloned into many sessions. [`Claude::transcript_path`] gives a
    /// session's file. Replaces [`transcript`](Options::transcript).
    ///
    /// [`Claude::transcript_path`]: crate::Claude::transcript_path
    pub fn transcripts_in(mut self, dir: impl Into<PathBuf>) -> Self {
        self.transcript_dir = Some(dir.into());
        self.transcript = None;
        self
    }

    /// Starts a transcript with two notes: the command line that started the CLI (a wrapper's
    /// included) and its working directory. Off by default. With
    /// [`Delivery::Argv`](byre_transport::Delivery::Argv) the command line holds `--settings`
    /// and `--mcp-config`; the secrets the session knows of in them (the MCP servers' `env`
    /// and `headers`, the settings' `env`) are redacted in the note as everywhere else.
    pub fn transcript_launch(mut self, record: bool) -> Self {
        self.transcript_launch = record;
        self
    }

    /// Has the CLI write back each user message it takes from stdin
    /// (`--replay-user-messages`), as a `user` line in its output.
    pub fn replay_user_messages(mut self) -> Self {
        self.launch.replay_user_messages = true;
        self
    }

    /// Keeps `stream_event` lines in the transcript (left out by default: they are most of its
    /// size).
    pub fn transcript_stream_events(mut self, keep: bool) -> Self {
        self.transcript_stream_events = keep;
        self
    }

    /// Settings (a JSON object, as in `settings.json`), sent in `initialize` (or as
    /// `--settings`, see [`Options::delivery`]).
    pub fn settings(mut self, settings: Map<String, Value>) -> Self {
        self.launch.settings.extend(settings);
        self
    }

    /// Settings read from a JSON file (as `settings.json`) when the session starts; keys
    /// given with [`Options::settings`] win over the file's.
    pub fn settings_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.settings_file = Some(path.into());
        self
    }

    /// Which settings files the CLI loads (`--setting-sources`: `user`, `project`, `local`;
    /// an empty list loads none).
    pub fn setting_sources<I, S>(mut self, sources: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.launch.setting_sources = Some(sources.into_iter().map(Into::into).collect());
        self
    }

    /// Managed (policy) settings for the session, sent in `initialize` with
    /// `--managed-settings-in-initialize`: they rank above every other settings source.
    pub fn managed_settings(mut self, settings: Map<String, Value>) -> Self {
        self.initialize.managed_settings = Some(Value::Object(settings));
        self.launch
            .extra_args
            .retain(|(flag, _)| flag != "managed-settings-in-initialize");
        self.launch
            .extra_args
            .push(("managed-settings-in-initialize".into(), None));
        self
    }

    /// Where the project's `.claude` folder is looked for (`--project-config-root`).
    pub fn project_config_root(mut self, dir: impl Into<PathBuf>) -> Self {
        self.launch.project_config_root = Some(dir.into());
        self
    }

    /// Reads the files named with [`Options::settings_file`] and
    /// [`Options::system_prompt_file`] into the options, gives the session an empty system
    /// prompt when none was given (nor passed with [`Options::extra_arg`]) and the CLI's own
    /// is not kept, and turns
    /// [`Options::skills`] into rules.
    pub(super) fn read_files(&mut self) -> Result<(), String> {
        if let Some(path) = self.settings_file.take() {
            let text = std::fs::read_to_string(&path)
                .map_err(|e| format!("settings file {}: {e}", path.display()))?;
            let mut settings: Map<String, Value> = serde_json::from_str(&text)
                .map_err(|e| format!("settings file {}: {e}", path.display()))?;
            settings.extend(std::mem::take(&mut self.launch.settings));
            self.launch.settings = settings;
        }
        if let Some(path) = self.system_prompt_file.take() {
            let text = std::fs::read_to_string(&path)
                .map_err(|e| format!("system prompt file {}: {e}", path.display()))?;
            self.launch.system_prompt = Some(text);
        }
        // A prompt flag passed as an extra argument is the program's choice too.
        let prompt_flag = self.launch.extra_args.iter().any(|(flag, _)| {
            let flag = flag.trim_start_matches('-');
            flag.starts_with("system-prompt") || flag == "append-system-prompt"
        });
        if self.launch.system_prompt.is_none() && !self.cli_system_prompt && !prompt_flag {
            self.launch.system_prompt = Some(String::new());
        }
        if let Some(skills) = self.skills.take() {
            for rule in skills.rules()? {
                if !self.launch.allowed_tools.contains(&rule) {
                    self.launch.allowed_tools.push(rule);
                }
            }
            if let crate::Skills::Only(names) = skills {
                self.initialize.skills = Some(names);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::Options;

    /// The system prompt the CLI is given once the options are read at start.
    fn settled(options: Options) -> Option<String> {
        let mut options = options;
        options.read_files().expect("nothing to read");
        options.launch.system_prompt
    }

    #[test]
    fn the_system_prompt_is_empty_unless_given_or_the_clis_own_is_kept() {
        assert_eq!(settled(Options::new()).as_deref(), Some(""));
        assert_eq!(
            settled(Options::new().system_prompt("Be brief.")).as_deref(),
            Some("Be brief.")
        );
        assert_eq!(settled(Options::new().cli_system_prompt()), None);
        assert_eq!(
            settled(Options::new().append_system_prompt("And kind.")),
            None
        );
        assert_eq!(settled(Options::new().exclude_dynamic_sections()), None);
        let flag = Options::new().extra_arg("--system-prompt-file", Some("prompt.md".into()));
        assert_eq!(settled(flag), None);
    }
}
