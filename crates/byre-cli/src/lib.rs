//! The `byre` command-line tool (not built yet): `byre run` and `byre chat` against the
//! Claude Code CLI with live streaming, interrupts, resume and fork, and `byre replay` to
//! read transcripts.
