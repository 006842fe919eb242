//! The remote side's watchdog for a CLI started through `docker exec` or `ssh`: a POSIX shell
//! script, run in the container or on the remote host in place of the CLI, that feeds the
//! CLI its own stdin and ends the CLI when that input ends (byre closed it, or the host that
//! ran byre died and took the client's connection with it): the CLI gets a grace to exit by
//! itself, then SIGTERM, then SIGKILL, with every process in its group. Killing the local
//! `docker` or `ssh` client alone would leave the CLI running remotely.

use std::ffi::OsString;
use std::time::Duration;

/// The script. `$1` is the grace in fifths of a second, the rest the CLI's command line. The
/// CLI runs in a session of its own where `setsid` exists (its group is then ended whole),
/// reading a FIFO that `cat` fills from the script's stdin; the script exits with the CLI's
/// status.
const SCRIPT: &str = r#"g=$1; shift
f=$(mktemp -u "${TMPDIR:-/tmp}/byre-XXXXXX") && mkfifo -m 600 "$f" || exit 70
trap 'rm -f "$f" "$f.pid" "$f.done"' EXIT
exec 3<&0
cat <&3 >"$f" &
r=$!
if command -v setsid >/dev/null 2>&1; then s=setsid; else s=; fi
(
  $s sh -c 'echo $$ >"$0"; exec "$@"' "$f.pid" "$@" <"$f"
  e=$?
  : >"$f.done"
  kill "$r" 2>/dev/null
  exit $e
) &
c=$!
wait "$r" 2>/dev/null
n=0
while [ ! -e "$f.done" ] && [ "$n" -lt "$g" ]; do sleep 0.2; n=$((n+1)); done
if [ ! -e "$f.done" ]; then
  p=$(cat "$f.pid" 2>/dev/null)
  kill -TERM -"$p" 2>/dev/null || kill -TERM "$p" 2>/dev/null
  n=0
  while [ ! -e "$f.done" ] && [ "$n" -lt 10 ]; do sleep 0.2; n=$((n+1)); done
  [ -e "$f.done" ] || kill -KILL -"$p" 2>/dev/null || kill -KILL "$p" 2>/dev/null
fi
wait "$c"
"#;

/// The command line that runs `cli` (its program and arguments) under the watchdog with
/// `grace`: `sh -c SCRIPT byre-watchdog FIFTHS CLI...`.
pub(super) fn watched(grace: Duration, cli: Vec<OsString>) -> Vec<OsString> {
    let fifths = (grace.as_millis() / 200).max(1);
    let mut argv: Vec<OsString> = vec![
        "sh".into(),
        "-c".into(),
        SCRIPT.into(),
        "byre-watchdog".into(),
        fifths.to_string().into(),
    ];
    argv.extend(cli);
    argv
}
