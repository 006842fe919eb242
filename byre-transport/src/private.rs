//! Files and folders byre creates, readable by their owner only (0600 and 0700 on Unix), and
//! scratch folders that do not outlive their process: one is locked while its process lives
//! (`flock` on the folder, which the kernel lets go when the process ends, however it ends),
//! and a later start removes every scratch folder nobody holds.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// Creates `dir` and the folders above it that are missing, each readable by its owner only.
pub(crate) fn create_dir(dir: &Path) -> io::Result<()> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// Opens `path` for writing, created readable by its owner only when it is new.
pub(crate) fn open_file(path: &Path, append: bool) -> io::Result<fs::File> {
    let mut open = fs::OpenOptions::new();
    open.create(true);
    match append {
        true => open.append(true),
        false => open.write(true).truncate(true),
    };
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut open, 0o600);
    open.open(path)
}

/// Writes `bytes` to a new file at `path` (or over the one there), readable by its owner only.
pub(crate) fn write_file(path: &Path, bytes: &[u8]) -> io::Result<()> {
    io::Write::write_all(&mut open_file(path, false)?, bytes)
}

/// A scratch folder of this process: removed when dropped, and by a later start once this
/// process is gone (see [`remove_stale`]).
#[derive(Debug)]
pub(crate) struct Scratch {
    dir: PathBuf,
    /// Held while the folder is in use; the kernel lets go of it when the process ends.
    #[cfg(unix)]
    _lock: nix::fcntl::Flock<fs::File>,
}

impl Scratch {
    /// Creates a new scratch folder in `base`, named `<prefix><uuid>`, private and locked.
    /// It is made under another name and renamed once locked, so a folder with its name is
    /// never one that nobody holds yet.
    pub(crate) fn create(base: &Path, prefix: &str) -> io::Result<Scratch> {
        let name = format!("{prefix}{}", crate::sessions::new_uuid());
        let making = base.join(format!("{MAKING}{name}"));
        create_dir(&making)?;
        #[cfg(unix)]
        let lock = match lock(&making) {
            Ok(Some(lock)) => lock,
            Ok(None) => {
                let _ = fs::remove_dir(&making);
                return Err(io::Error::other("a new scratch folder is locked already"));
            }
            Err(e) => {
                let _ = fs::remove_dir(&making);
                return Err(e);
            }
        };
        let dir = base.join(name);
        if let Err(e) = fs::rename(&making, &dir) {
            let _ = fs::remove_dir(&making);
            return Err(e);
        }
        Ok(Scratch {
            dir,
            #[cfg(unix)]
            _lock: lock,
        })
    }

    /// The folder.
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        // Removed before the lock goes: a start that looks meanwhile finds it held. What
        // cannot be removed now is removed by the next start, when nobody holds it.
        let _ = fs::remove_dir_all(&self.dir);
    }
}

/// Removes the scratch folders in `base` named `<prefix>...` that no live process holds:
/// those of a byre that was killed (SIGKILL, a crash) before it could remove its own. Gives how
/// many it removed. A folder it cannot look at is left alone.
pub(crate) fn remove_stale(base: &Path, prefix: &str) -> usize {
    let Ok(entries) = fs::read_dir(base) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if !name.starts_with(prefix) || !entry.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        #[cfg(unix)]
        {
            let dir = entry.path();
            // Held while it is removed, so that no start removes it twice.
            if let Ok(Some(_held)) = lock(&dir) {
                if fs::remove_dir_all(&dir).is_ok() {
                    removed += 1;
                }
            }
        }
    }
    removed
}

/// Locks the folder `dir` (an exclusive `flock`, without waiting); `None` when another open
/// of it holds the lock.
#[cfg(unix)]
fn lock(dir: &Path) -> io::Result<Option<nix::fcntl::Flock<fs::File>>> {
    use nix::fcntl::{Flock, FlockArg};
    let file = fs::File::open(dir)?;
    match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
        Ok(lock) => Ok(Some(lock)),
        Err((_, nix::errno::Errno::EWOULDBLOCK)) => Ok(None),
        Err((_, errno)) => Err(io::Error::from(errno)),
    }
}

/// What a scratch folder is called while it is made (before it is locked).
const MAKING: &str = ".making-";

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn a_start_removes_the_scratch_folders_no_live_process_holds() {
        use std::os::unix::fs::PermissionsExt;
        let base = tempfile::tempdir().unwrap();
        let live = Scratch::create(base.path(), "byre-test-").unwrap();
        let mode = fs::metadata(live.dir()).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700, "{mode:o}");
        // A dead process's folder: its lock went with it.
        let dead = base.path().join("byre-test-dead");
        create_dir(&dead.join("projects")).unwrap();
        write_file(&dead.join(".credentials.json"), b"{}").unwrap();
        // Another program's folder, and a file with the prefix.
        let other = base.path().join("someone-else");
        create_dir(&other).unwrap();
        let file = base.path().join("byre-test-file");
        write_file(&file, b"x").unwrap();

        assert_eq!(remove_stale(base.path(), "byre-test-"), 1);
        assert!(!dead.exists(), "the dead process's folder is removed");
        assert!(live.dir().is_dir(), "a live process's folder is kept");
        assert!(other.is_dir() && file.is_file(), "nothing else is touched");
        let dir = live.dir().to_owned();
        drop(live);
        assert!(!dir.exists(), "dropped, it is removed");
        assert_eq!(remove_stale(base.path(), "byre-test-"), 0);
    }

    #[cfg(unix)]
    #[test]
    fn files_and_folders_are_private_to_their_owner() {
        use std::os::unix::fs::PermissionsExt;
        let base = tempfile::tempdir().unwrap();
        let deep = base.path().join("a/b/c");
        create_dir(&deep).unwrap();
        for dir in ["a", "a/b", "a/b/c"] {
            let mode = fs::metadata(base.path().join(dir))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o700, "{dir}: {mode:o}");
        }
        write_file(&deep.join("f"), b"x").unwrap();
        let mode = fs::metadata(deep.join("f")).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "{mode:o}");
    }
}
