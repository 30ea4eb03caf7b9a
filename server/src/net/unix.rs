//! The Unix-domain listener (`unixsocket`, `unixsocketperm`), as Redis's connUnixListen:
//! bound at start beside the TCP listeners, its file removed at a clean shutdown.

use goblin_evloop::listener::bind_unix;
use mio::net::UnixListener;
use std::path::PathBuf;

/// The socket file of a bound listener; dropping it removes the file, as Redis's
/// closeListeningSockets does at shutdown.
pub struct SocketFile {
    path: PathBuf,
}

impl Drop for SocketFile {
    fn drop(&mut self) {
        crate::notice!("Removing the unix socket file.");
        if let Err(e) = std::fs::remove_file(&self.path) {
            crate::warning!(
                "Error removing the unix socket file: {}",
                crate::errors::os_error_text(&e)
            );
        }
    }
}

/// Binds the listener at `path` (none when empty) with file mode `perm` and listen(2)
/// backlog `backlog`; the error is the line Redis logs before exiting.
pub fn bind(
    path: &str,
    perm: u32,
    backlog: i32,
) -> anyhow::Result<Option<(UnixListener, SocketFile)>> {
    if path.is_empty() {
        return Ok(None);
    }
    let listener = bind_unix(path.as_ref(), perm, backlog).map_err(|e| {
        anyhow::anyhow!(
            "Failed opening Unix socket: bind: {}",
            crate::errors::os_error_text(&e)
        )
    })?;
    let file = SocketFile { path: path.into() };
    Ok(Some((UnixListener::from_std(listener), file)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_lives_as_long_as_its_guard() {
        let dir = std::env::temp_dir().join(format!("goblin-unix-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("g.sock");
        let (listener, file) = bind(path.to_str().unwrap(), 0o770, 16).unwrap().unwrap();
        assert!(path.exists());
        drop(listener);
        drop(file);
        assert!(!path.exists());
        assert!(bind("", 0, 16).unwrap().is_none());
        let missing = dir.join("no/such/dir.sock");
        let err = bind(missing.to_str().unwrap(), 0, 16).err().unwrap();
        assert_eq!(
            err.to_string(),
            "Failed opening Unix socket: bind: No such file or directory"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
