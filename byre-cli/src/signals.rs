//! SIGTERM and SIGHUP: `byre run` and `byre chat` stop their sessions' CLIs (and every tool
//! the CLIs started) before they exit, as `timeout`, systemd, `docker stop`, a closed terminal
//! and CI cancellation expect. Ctrl-C (SIGINT) is an interrupt instead (see `run`).

use std::future::Future;
use std::process::ExitCode;
use std::sync::Mutex;

use byre_session::Claude;

/// The sessions to stop: every one `byre` started, ended or not.
static SESSIONS: Mutex<Vec<Claude>> = Mutex::new(Vec::new());

/// Remembers a session so that a stopping signal stops its CLI.
pub(crate) fn register(claude: &Claude) {
    let mut sessions = SESSIONS.lock().unwrap_or_else(|e| e.into_inner());
    sessions.retain(|session| !session.has_ended());
    sessions.push(claude.clone());
}

/// Runs `command` to its end, unless SIGTERM or SIGHUP comes first: then every registered
/// session's CLI is terminated at once (SIGTERM to its process group, SIGKILL after the term
/// grace) and the exit status is 128 + the signal's number, as a shell reports it.
pub(crate) async fn until_stopped<E>(
    command: impl Future<Output = Result<ExitCode, E>>,
) -> Result<ExitCode, E> {
    tokio::select! {
        code = command => code,
        signal = stopping_signal() => {
            let (name, number) = signal;
            eprintln!("byre: {name}: stopping the CLI");
            let sessions: Vec<Claude> = std::mem::take(
                &mut *SESSIONS.lock().unwrap_or_else(|e| e.into_inner()),
            );
            futures::future::join_all(sessions.iter().map(Claude::terminate)).await;
            Ok(ExitCode::from(128 + number))
        }
    }
}

/// The first SIGTERM or SIGHUP (never, where they cannot be listened to).
#[cfg(unix)]
async fn stopping_signal() -> (&'static str, u8) {
    use tokio::signal::unix::{signal, SignalKind};
    let (Ok(mut term), Ok(mut hup)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::hangup()),
    ) else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = term.recv() => ("SIGTERM", 15),
        _ = hup.recv() => ("SIGHUP", 1),
    }
}

#[cfg(not(unix))]
async fn stopping_signal() -> (&'static str, u8) {
    std::future::pending().await
}
