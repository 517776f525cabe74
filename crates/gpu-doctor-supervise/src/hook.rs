//! The Python hook: a `sitecustomize.py` written into the run's folder and put first on
//! `PYTHONPATH`, so every Python process of the job loads it (see the file itself for what it
//! does, and `docs/run.md`).

use std::path::{Path, PathBuf};

/// The hook's source, embedded so the binary is self-contained.
pub const SITECUSTOMIZE: &str = include_str!("../hook/sitecustomize.py");

/// Allocator history entries the hook keeps by default: enough for the last steps of a
/// training loop, bounded so recording stays cheap (each entry holds a Python stack).
pub const DEFAULT_HISTORY_ENTRIES: u32 = 20_000;

/// Writes the hook into `<run_dir>/hook/` and returns that folder.
pub fn install(run_dir: &Path) -> std::io::Result<PathBuf> {
    let dir = run_dir.join("hook");
    std::fs::create_dir_all(&dir)?;
    std::fs::write(dir.join("sitecustomize.py"), SITECUSTOMIZE)?;
    Ok(dir)
}

/// The environment that turns the hook on for one attempt: the hook folder first on
/// `PYTHONPATH` (before the user's own entries), and where to write.
pub fn env(
    hook_dir: &Path,
    incident_dir: &Path,
    user_pythonpath: Option<&str>,
    history_entries: u32,
) -> Vec<(String, String)> {
    let hook = hook_dir.display().to_string();
    let pythonpath = match user_pythonpath.filter(|p| !p.is_empty()) {
        Some(existing) => format!("{hook}:{existing}"),
        None => hook,
    };
    vec![
        ("PYTHONPATH".into(), pythonpath),
        (
            "GPU_DOCTOR_INCIDENT_DIR".into(),
            incident_dir.display().to_string(),
        ),
        (
            "GPU_DOCTOR_MEMORY_HISTORY".into(),
            history_entries.to_string(),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pythonpath_puts_the_hook_first() {
        let e = env(
            Path::new("/r/hook"),
            Path::new("/r/attempt-1"),
            Some("/mine"),
            5,
        );
        assert_eq!(e[0], ("PYTHONPATH".into(), "/r/hook:/mine".into()));
        assert_eq!(e[1].1, "/r/attempt-1");
        assert_eq!(e[2].1, "5");
        let e = env(Path::new("/r/hook"), Path::new("/i"), Some(""), 0);
        assert_eq!(e[0].1, "/r/hook");
    }
}
