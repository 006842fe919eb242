//! Tidy checks run as tests: every Rust file starts with a `//!` line saying its job.

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
}
