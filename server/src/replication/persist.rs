//! The replication state that survives a restart, kept as Redis keeps it: in the snapshot's
//! AUX fields (`repl-stream-db`, `repl-id`, `repl-offset`, Redis's rdbSaveInfo).
//!
//! - Saving ([`save_info`], rdbPopulateSaveInfo): a master writes them once it has a
//!   backlog (it is in a replication chain), a replica when it has a master (connected or
//!   cached); a server in no chain writes none.
//! - Loading at start-up ([`restore`], loadDataFromDisk): a replica takes the id and offset
//!   as its own and caches a master made of them, so its first sync is a PSYNC that
//!   continues where the snapshot was; a master keeps the id as its secondary one, valid up
//!   to the offset, so its replicas continue with PSYNC too.

use super::backlog::Backlog;
use crate::notice;
use crate::rdb::write::ReplAux;
use crate::server::Server;

/// The replication state a snapshot taken now carries (None: this server is in no
/// replication chain, or is a replica between two masters' histories).
pub fn save_info(server: &Server) -> Option<ReplAux> {
    let r = &server.replication;
    let stream_db = if r.is_replica() {
        r.link.as_ref()?.stream_db()?
    } else {
        r.backlog.as_ref()?;
        // A master whose stream has no database yet starts the next one with a SELECT:
        // 0 serves (Redis's slaveseldb -1).
        server.propagation.selected().unwrap_or(0)
    };
    Some(ReplAux {
        stream_db,
        replid: r.replid.clone(),
        offset: r.offset(),
    })
}

/// Takes the replication state of the snapshot loaded at start-up (none: nothing to do).
/// A master's stream then starts with the deletions of the keys the load dropped as
/// expired (`expired`), as Redis's RDBFLAGS_FEED_REPL load, so that its replicas, which
/// still hold them, continue with PSYNC and drop them too.
pub fn restore(server: &mut Server, saved: Option<ReplAux>, expired: Vec<(usize, Vec<u8>)>) {
    let Some(saved) = saved else { return };
    if saved.stream_db >= server.config.databases {
        return;
    }
    let r = &mut server.replication;
    if let Some(link) = r.link.as_mut() {
        notice!("Before turning into a replica, using my own master parameters to synthesize a cached master: I may be able to synchronize with the new master with just a partial transfer.");
        link.cache_master(saved.replid.clone(), saved.offset, saved.stream_db);
        r.replid = saved.replid;
        r.offset_without_backlog = saved.offset;
        return;
    }
    // A master: its new history continues the saved one, which stays valid up to its end.
    r.replid2 = saved.replid;
    r.second_offset = saved.offset as i64 + 1;
    r.backlog = Some(Backlog::new(
        server.config.repl.backlog_size as usize,
        saved.offset,
    ));
    super::update_propagation(server);
    let lazy = server
        .keyspace
        .removal_is_lazy(crate::keyspace::Cause::Expired);
    for (db, key) in expired {
        server.propagation.deletion(db, key, lazy);
        server.propagation.end_unit(false);
    }
    server.drain_propagation();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    #[test]
    fn a_master_in_no_chain_saves_nothing() {
        let server = Server::new(Config::default());
        assert_eq!(save_info(&server), None);
    }

    #[test]
    fn a_restarted_master_keeps_its_history_as_the_secondary_one() {
        let mut server = Server::new(Config::default());
        super::super::create_backlog(&mut server);
        super::super::feed(&mut server, b"0123456789");
        let saved = save_info(&server).expect("a master with a backlog");
        assert_eq!((saved.offset, saved.stream_db), (10, 0));
        let mut restarted = Server::new(Config::default());
        restore(&mut restarted, Some(saved.clone()), Vec::new());
        let r = &restarted.replication;
        assert_eq!(r.replid2, saved.replid);
        assert_ne!(r.replid, saved.replid);
        assert_eq!((r.second_offset, r.offset()), (11, 10));
        // Its replicas, at the saved offset, continue with PSYNC.
        let backlog = r.backlog.as_ref().unwrap();
        assert!(backlog.covers(11) && !backlog.covers(10));
    }

    #[test]
    fn a_restarted_replica_caches_a_master_from_the_snapshot() {
        let mut config = Config::default();
        config.repl.replicaof = Some(("127.0.0.1".into(), 1));
        let mut server = Server::new(config);
        assert_eq!(save_info(&server), None, "no history yet");
        let saved = ReplAux {
            stream_db: 3,
            replid: "a".repeat(40),
            offset: 42,
        };
        restore(&mut server, Some(saved.clone()), Vec::new());
        assert_eq!(server.replication.replid, saved.replid);
        assert_eq!(server.replication.offset(), 42);
        assert_eq!(save_info(&server), Some(saved));
        // A database the server does not have is not taken.
        let mut other = Server::new(Config::default());
        let before = other.replication.replid.clone();
        restore(
            &mut other,
            Some(ReplAux {
                stream_db: 99,
                replid: "b".repeat(40),
                offset: 1,
            }),
            Vec::new(),
        );
        assert_eq!(other.replication.replid, before);
    }
}
