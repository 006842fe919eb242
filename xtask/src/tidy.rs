//! Tidy checks run as tests: every Rust file starts with a `//!` line saying its job; a
//! source file (not a test) has at most 800 lines of at most 100 columns.

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
}
