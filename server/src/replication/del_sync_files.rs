//! rdb-del-sync-files: a server that persists nothing (no save points, no AOF) removes
//! the snapshot files it made or received only for replication, so that a restart does
//! not load a stale dataset from them and no copy of the data stays on its disk (Redis's
//! removeRDBUsedToSyncReplicas and the replica's cleanup after its load).
//!
//! A master remembers that a disk-based sync wrote the file; once no replica waits for a
//! snapshot or is being sent one, the cron removes it. A replica removes the file it
//! received as soon as it is loaded (or failed to load).

use crate::server::Server;
use crate::{notice, warning};
use std::path::Path;

/// Whether the server persists nothing: no save points and the AOF off.
fn persistence_disabled(server: &Server) -> bool {
    server.config.save.is_empty() && server.aof.state == crate::aof::State::Off
}

/// A disk-based sync's BGSAVE started: its file is to go once used, while the directive
/// is on (turned on later, it does not claim files made before).
pub fn sync_snapshot_started(server: &mut Server) {
    if server.config.rdb_del_sync_files {
        server.replication.master.snapshot_for_sync = true;
    }
}

/// From the cron: removes the file a sync made once no replica still needs it.
pub fn cron(server: &mut Server) {
    if !server.config.rdb_del_sync_files {
        server.replication.master.snapshot_for_sync = false;
        return;
    }
    if !server.replication.master.snapshot_for_sync || !persistence_disabled(server) {
        return;
    }
    use super::master::State;
    let needed = server.replication.master.replicas.iter().any(|r| {
        matches!(
            r.state,
            State::WaitBgsaveStart | State::WaitBgsaveEnd | State::SendBulk
        )
    });
    let path = server.config.dir.join(&server.config.dbfilename);
    if !needed && path.symlink_metadata().is_ok() {
        server.replication.master.snapshot_for_sync = false;
        notice!("Removing the RDB file used to feed replicas in a persistence-less instance");
        remove(&path);
    }
}

/// A replica loaded (or failed to load) the snapshot its master sent to `path`.
pub fn received_snapshot_loaded(server: &Server, path: &Path) {
    if server.config.rdb_del_sync_files && persistence_disabled(server) {
        notice!(
            "Removing the RDB file obtained from the master. This replica has persistence disabled"
        );
        remove(path);
    }
}

fn remove(path: &Path) {
    if let Err(e) = std::fs::remove_file(path) {
        warning!("Can't remove {}: {e}", path.display());
    }
}
