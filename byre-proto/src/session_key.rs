//! Where a session's entries live in a session store: the key of a main transcript or of one
//! of its subagent transcripts, and the mapping from the path of a file the CLI writes.

use std::fmt;

/// The key of one transcript in a session store: a project (the CLI's name for a working
/// directory), a session id, and for a subagent's transcript its path inside the session
/// (`subagents/agent-<id>`, without `.jsonl`). The official SDKs' stores use the same three
/// parts (`project_key`, `session_id`, `subpath`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SessionKey {
    /// The project: the CLI's sanitised working directory (`-home-me-repo`).
    pub project_key: String,
    /// The session id (a UUID).
    pub session_id: String,
    /// A subagent transcript's path inside the session, parts joined with `/`; `None` for the
    /// main transcript.
    pub subpath: Option<String>,
}

/// Why a [`SessionKey`] is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid session key: {0}")]
pub struct InvalidKey(pub String);

impl SessionKey {
    /// The key of a session's main transcript.
    pub fn main(project_key: impl Into<String>, session_id: impl Into<String>) -> SessionKey {
        SessionKey {
            project_key: project_key.into(),
            session_id: session_id.into(),
            subpath: None,
        }
    }

    /// The key of a transcript inside this key's session (`subagents/agent-<id>`).
    pub fn sub(&self, subpath: impl Into<String>) -> SessionKey {
        SessionKey {
            project_key: self.project_key.clone(),
            session_id: self.session_id.clone(),
            subpath: Some(subpath.into()),
        }
    }

    /// The key of this key's main transcript.
    pub fn main_key(&self) -> SessionKey {
        SessionKey::main(self.project_key.clone(), self.session_id.clone())
    }

    /// Checks that each part is safe to use as a path: no part empty, none holding `\` or
    /// NUL, project and session without `/`, and no `.` or `..` segment in the subpath, so a
    /// store that maps keys to files or object names never leaves its root.
    pub fn validate(&self) -> Result<(), InvalidKey> {
        let plain = |what: &str, s: &str| {
            if s.is_empty() || s == "." || s == ".." || s.contains(['/', '\\', '\0']) {
                Err(InvalidKey(format!("{what} {s:?}")))
            } else {
                Ok(())
            }
        };
        plain("project key", &self.project_key)?;
        plain("session id", &self.session_id)?;
        if let Some(sub) = &self.subpath {
            if sub.is_empty() || sub.starts_with('/') {
                return Err(InvalidKey(format!("subpath {sub:?}")));
            }
            for part in sub.split('/') {
                plain("subpath segment", part)?;
            }
        }
        Ok(())
    }

    /// The key of a file the CLI writes under its `projects` directory, from the file's
    /// absolute path (what a `transcript_mirror` line names): `…/projects/<project>/<id>.jsonl`
    /// is a main transcript, `…/projects/<project>/<id>/<sub…>.jsonl` one of its subagents.
    /// `None` for any other path.
    pub fn from_file_path(path: &str) -> Option<SessionKey> {
        let parts: Vec<&str> = path.split('/').collect();
        let at = parts.iter().rposition(|p| *p == "projects")?;
        let rest = &parts[at + 1..];
        let key = match rest {
            [project, file] => SessionKey::main(*project, file.strip_suffix(".jsonl")?.to_owned()),
            [project, session, sub @ ..] if sub.len() >= 2 => {
                let joined = sub.join("/");
                SessionKey::main(*project, *session).sub(joined.strip_suffix(".jsonl")?)
            }
            _ => return None,
        };
        key.validate().ok()?;
        Some(key)
    }
}

impl fmt::Display for SessionKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.project_key, self.session_id)?;
        if let Some(sub) = &self.subpath {
            write!(f, "/{sub}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_from_the_paths_the_cli_writes() {
        let sid = "6f1d2c3b-0000-4000-8000-000000000001";
        let main = format!("/h/.claude/projects/-tmp-x/{sid}.jsonl");
        assert_eq!(
            SessionKey::from_file_path(&main),
            Some(SessionKey::main("-tmp-x", sid))
        );
        let sub = format!("/h/.claude/projects/-tmp-x/{sid}/subagents/agent-a1.jsonl");
        assert_eq!(
            SessionKey::from_file_path(&sub),
            Some(SessionKey::main("-tmp-x", sid).sub("subagents/agent-a1"))
        );
        let deep = format!("/p/projects/-x/{sid}/subagents/workflows/r/agent-b.jsonl");
        assert_eq!(
            SessionKey::from_file_path(&deep).and_then(|k| k.subpath),
            Some("subagents/workflows/r/agent-b".into())
        );
        assert_eq!(SessionKey::from_file_path("/h/.claude/other/x.jsonl"), None);
        assert_eq!(SessionKey::from_file_path("/h/projects/-x/notes.txt"), None);
        assert_eq!(
            SessionKey::from_file_path("/h/projects/-x/../a.jsonl"),
            None
        );
    }

    #[test]
    fn unsafe_keys_are_refused() {
        let ok = SessionKey::main("-tmp-x", "id");
        assert!(ok.validate().is_ok());
        assert!(ok.sub("subagents/agent-1").validate().is_ok());
        for bad in ["", "..", "a/../b", "/abs", "a//b", "a\\b", "a\0"] {
            assert!(ok.sub(bad).validate().is_err(), "{bad:?}");
        }
        assert!(SessionKey::main("a/b", "id").validate().is_err());
        assert!(SessionKey::main("p", "..").validate().is_err());
        assert_eq!(
            ok.sub("subagents/agent-1").to_string(),
            "-tmp-x/id/subagents/agent-1"
        );
    }
}
