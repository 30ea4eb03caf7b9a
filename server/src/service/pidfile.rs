//! `pidfile`: written at start, best effort as Redis does (a failure is a warning), and
//! removed at a clean shutdown (SHUTDOWN, SIGTERM).

use std::path::PathBuf;

/// A written pid file; dropping it removes the file.
pub struct PidFile {
    path: PathBuf,
}

impl PidFile {
    /// Writes the process's pid and a newline to `path`.
    pub fn create(path: &str) -> PidFile {
        if let Err(e) = std::fs::write(path, format!("{}\n", std::process::id())) {
            crate::warning!("Failed to write PID file: {e}");
        }
        PidFile { path: path.into() }
    }
}

impl Drop for PidFile {
    fn drop(&mut self) {
        crate::notice!("Removing the pid file.");
        let _ = std::fs::remove_file(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_the_pid_until_dropped() {
        let path = std::env::temp_dir().join(format!("goblin-pidfile-{}", std::process::id()));
        let file = PidFile::create(path.to_str().unwrap());
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text, format!("{}\n", std::process::id()));
        drop(file);
        assert!(!path.exists());
    }
}
