//! Tidy checks run as tests: every Rust file starts with a `//!` line saying its job; a
//! source file (not a test) has at most 800 lines of at most 100 columns; no public item is
//! re-exported where it can already be reached (one path per type).

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("readable folder") {
            let path = entry.expect("entry").path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if path.is_dir() {
                if !matches!(name, "target" | ".git" | ".cli" | "node_modules") {
                    rust_files(&path, out);
                }
            } else if name.ends_with(".rs") {
                out.push(path);
            }
        }
    }

    #[test]
    fn every_rust_file_starts_with_a_module_doc() {
        let mut files = Vec::new();
        rust_files(&crate::project_root(), &mut files);
        assert!(files.len() > 10, "found only {} Rust files", files.len());
        let missing: Vec<_> = files
            .iter()
            .filter(|f| {
                let text = std::fs::read_to_string(f).expect("readable file");
                !text.starts_with("//!")
            })
            .collect();
        assert!(
            missing.is_empty(),
            "files without a leading //! line: {missing:?}"
        );
    }

    /// The Rust files that are not tests or test fixtures: those under `src/`, `examples/`
    /// and `benches/` of each crate, outside any `tests` folder.
    fn source_files() -> Vec<PathBuf> {
        let mut files = Vec::new();
        rust_files(&crate::project_root(), &mut files);
        let root = crate::project_root();
        files
            .into_iter()
            .filter(|f| {
                let rel = f.strip_prefix(&root).unwrap_or(f);
                let parts: Vec<_> = rel.iter().filter_map(|p| p.to_str()).collect();
                !parts.contains(&"tests")
                    && parts
                        .iter()
                        .any(|p| matches!(*p, "src" | "examples" | "benches"))
            })
            .collect()
    }

    #[test]
    fn source_files_stay_short() {
        let files = source_files();
        assert!(files.len() > 10, "found only {} source files", files.len());
        let long: Vec<_> = files
            .iter()
            .filter_map(|f| {
                let lines = std::fs::read_to_string(f)
                    .expect("readable file")
                    .lines()
                    .count();
                (lines > 800).then(|| format!("{} ({lines} lines)", f.display()))
            })
            .collect();
        assert!(long.is_empty(), "source files over 800 lines: {long:#?}");
    }

    #[test]
    fn source_lines_stay_within_100_columns() {
        let mut wide = Vec::new();
        for f in source_files() {
            let text = std::fs::read_to_string(&f).expect("readable file");
            for (n, line) in text.lines().enumerate() {
                let columns = line.chars().count();
                if columns > 100 {
                    wide.push(format!("{}:{} ({columns} columns)", f.display(), n + 1));
                }
            }
        }
        assert!(wide.is_empty(), "source lines over 100 columns: {wide:#?}");
    }

    /// `pub use` statements of a source file, each as its path with runs of spaces made one.
    fn pub_uses(text: &str) -> Vec<String> {
        let mut uses = Vec::new();
        let mut rest = text;
        while let Some(at) = rest.find("pub use ") {
            let line_start = rest[..at].rfind('\n').map_or(0, |n| n + 1);
            let tail = &rest[at + "pub use ".len()..];
            let end = tail.find(';').unwrap_or(tail.len());
            if rest[line_start..at].trim().is_empty() {
                uses.push(tail[..end].split_whitespace().collect::<Vec<_>>().join(" "));
            }
            rest = &tail[end..];
        }
        uses
    }

    /// The modules a file declares `pub mod name;`.
    fn pub_mods(text: &str) -> Vec<String> {
        text.lines()
            .filter_map(|l| l.trim().strip_prefix("pub mod ")?.strip_suffix(';'))
            .map(str::to_owned)
            .collect()
    }

    /// The `pub use` paths of `text` (a file of a crate whose root declares `root_mods`
    /// public) that reach an item a second way: through a public module, or item by item from
    /// a crate the file also re-exports whole.
    fn second_paths(root_mods: &[String], text: &str) -> Vec<String> {
        let own_mods = pub_mods(text);
        let uses = pub_uses(text);
        // Crates re-exported whole (`pub use serde_json;`, `pub use byre_proto as proto;`).
        let whole: Vec<&str> = uses
            .iter()
            .filter(|u| !u.contains("::"))
            .map(|u| u.split(" as ").next().unwrap_or(u))
            .collect();
        let mut twice = Vec::new();
        for u in &uses {
            let path = u.strip_prefix("self::").unwrap_or(u);
            let head = path.split("::").next().unwrap_or("");
            let via_public = match path.strip_prefix("crate::") {
                Some(inner) => root_mods
                    .iter()
                    .any(|m| inner.starts_with(&format!("{m}::"))),
                None => path.contains("::") && own_mods.iter().any(|m| m == head),
            };
            if via_public || (path.contains("::") && whole.contains(&head)) {
                twice.push(u.clone());
            }
        }
        twice
    }

    #[test]
    fn second_paths_are_found() {
        let root = "pub mod hooks;\nmod wire;\npub use crate::hooks::HookInput;\n\
                    pub use crate::wire::{Extra, Number};\npub use byre_proto as proto;\n\
                    pub use byre_proto::{CliMessage,\n    HookOutput};\npub use schemars;\n";
        let mods = pub_mods(root);
        assert_eq!(mods, ["hooks"]);
        assert_eq!(
            second_paths(&mods, root),
            [
                "crate::hooks::HookInput",
                "byre_proto::{CliMessage, HookOutput}"
            ]
        );
        let child =
            "pub mod lease;\nmod dir;\npub use self::lease::Lease;\npub use dir::DirStore;\n";
        assert_eq!(second_paths(&mods, child), ["self::lease::Lease"]);
    }

    #[test]
    fn each_public_item_has_one_path() {
        let mut twice = Vec::new();
        for file in source_files() {
            let parts: Vec<_> = file.iter().filter_map(|p| p.to_str()).collect();
            let Some(src) = parts.iter().position(|p| *p == "src") else {
                continue;
            };
            let crate_root: PathBuf = file.iter().take(src + 1).collect();
            let root_mods = ["lib.rs", "main.rs"]
                .iter()
                .map(|n| crate_root.join(n))
                .find(|p| p.exists())
                .map_or_else(Vec::new, |l| {
                    pub_mods(&std::fs::read_to_string(l).expect("readable file"))
                });
            let text = std::fs::read_to_string(&file).expect("readable file");
            for u in second_paths(&root_mods, &text) {
                twice.push(format!("{}: pub use {u}", file.display()));
            }
        }
        assert!(
            twice.is_empty(),
            "items re-exported where a public module or a crate re-exported whole already \
             reaches them (two paths to one item): {twice:#?}"
        );
    }
}
