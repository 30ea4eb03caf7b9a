//! Replication, speaking Redis's protocol both ways.
//!
//! - [`config`]: the directives (repl-backlog-size, repl-diskless-sync, min-replicas-*, ...).
//! - [`backlog`]: the shared replication buffer: the stream's recent bytes in blocks, held
//!   once for the backlog that partial resyncs continue from and for every replica.
//! - [`replica_out`]: each replica's place in that buffer, its output written from it, its
//!   output limit on its share, the trimming of what no replica needs.
//! - [`backlog_ttl`]: repl-backlog-ttl, the backlog of a master left without replicas freed.
//! - [`master`]: Goblin as a master: the replicas (REPLCONF, SYNC / PSYNC), the full sync
//!   (an RDB by fork, to disk or straight to the sockets), the stream, acknowledgements,
//!   WAIT and min-replicas.
//! - [`memory`]: the backlog's and the replicas' buffers, for INFO memory.
//! - [`fullsync`]: a full sync's fork (to the snapshot file or to the sockets), its end, and
//!   the file sent by chunks.
//! - [`rdb_pipe`]: the diskless sync's pipe: the child writes the payload into it, the
//!   loop relays it to the replicas.
//! - [`payload`]: what a replica reads before the stream: the master's handshake replies and
//!   the RDB payload in both of its forms (`$<len>` and `$EOF:<mark>`).
//! - [`persist`]: the ids and offset a snapshot keeps, so that a restart continues with
//!   PSYNC.
//! - [`del_sync_files`]: rdb-del-sync-files, the snapshot files of syncs removed once used
//!   by a server that persists nothing.
//! - [`socket_load`]: repl-diskless-load, the master's snapshot loaded as it arrives.
//! - [`replica`]: Goblin as a replica: the link to the master on the event loop (connect,
//!   handshake, transfer, load), the stream applied as the master client, ACKs, reconnects.
//! - this file: [`Replication`], the ids and offsets; the stream's entry point ([`feed`]);
//!   the role; INFO replication.
//!
//! # The stream and its offsets
//!
//! On a master, the commands' propagation stream ([`crate::propagate`]) is drained once per
//! event-loop iteration (with the AOF's share) into [`feed`]: into the shared replication
//! buffer, whose offset is master_repl_offset, from which every replica's connection writes
//! from its own position once its full sync is done. On a replica, the stream is the master's bytes, fed as they
//! are applied (so sub-replicas see the same ids and offsets, as in Redis's PSYNC2); the
//! replica's own propagation feeds only its AOF.
//!
//! ```text
//! master: commands -> propagate -> drain -> aof::append
//!                                        -> feed -> backlog (shared blocks) <- replicas' positions
//! replica: master link -> apply (commands, as the master client) -> feed (same bytes)
//! ```

pub mod backlog;
pub mod backlog_ttl;
pub mod config;
mod del_sync_files;
pub mod failover;
pub mod fullsync;
pub mod master;
pub mod memory;
pub mod payload;
pub mod persist;
pub mod rdb_pipe;
pub mod replica;
pub mod replica_out;
pub mod socket_load;

use crate::server::Server;
use backlog::Backlog;
use std::fmt::Write as _;

/// The event-loop source number of the link to the master.
pub const LINK_SOURCE: usize = 0;
/// The event-loop source number of the diskless sync's pipe ([`rdb_pipe`]).
pub const PIPE_SOURCE: usize = 1;

/// A new random replication id (40 hex digits).
pub fn random_id(server: &mut Server) -> String {
    (0..40)
        .map(|_| char::from_digit((server.keyspace.random() % 16) as u32, 16).expect("a hex digit"))
        .collect()
}

/// The replication state of the server.
#[derive(Default)]
pub struct Replication {
    /// master_replid: the history this server's stream belongs to.
    pub replid: String,
    /// master_replid2: the previous history, valid up to `second_offset`.
    pub replid2: String,
    /// second_repl_offset (-1: none).
    pub second_offset: i64,
    /// The backlog, once a replica attached (or this server replicates).
    pub backlog: Option<Backlog>,
    /// Offset of the stream's last byte when there is no backlog.
    offset_without_backlog: u64,
    /// The replicas and the full syncs (Goblin as a master).
    pub master: master::MasterSide,
    /// The master this server replicates (REPLICAOF host port).
    pub master_addr: Option<(String, u16)>,
    /// The link to the master (Goblin as a replica); out of here while it is driven.
    pub link: Option<replica::Link>,
    /// The master asked for an ACK (REPLCONF GETACK), or one is due.
    pub ack_requested: bool,
    /// sync_full, sync_partial_ok, sync_partial_err (INFO stats).
    pub sync_full: u64,
    /// See `sync_full`.
    pub sync_partial_ok: u64,
    /// See `sync_full`.
    pub sync_partial_err: u64,
    /// Since when this master has no replica (repl-backlog-ttl counts from it).
    pub no_replicas_since: Option<std::time::Instant>,
    /// FAILOVER's state.
    pub failover: failover::Failover,
    /// When a replica last warned that it applies its master's writes without a disk
    /// (Unix ms; replica-ignore-disk-write-errors).
    pub disk_error_logged_ms: u64,
}

impl Replication {
    /// master_repl_offset.
    pub fn offset(&self) -> u64 {
        self.backlog
            .as_ref()
            .map_or(self.offset_without_backlog, Backlog::offset)
    }

    /// Whether this server replicates a master (REPLICAOF host port).
    pub fn is_replica(&self) -> bool {
        self.master_addr.is_some()
    }

    /// Whether a fork of replication's own (a diskless sync) runs.
    pub fn has_child(&self) -> bool {
        self.master.child.is_some()
    }

    /// Whether commands may be refused for replication's sake (a replica's read-only mode
    /// and stale data, min-replicas-to-write): the dispatcher's cheap test.
    pub fn may_refuse(&self, min_replicas_to_write: u64) -> bool {
        self.master_addr.is_some() || min_replicas_to_write > 0
    }
}

/// A new random id and no previous one (Redis's changeReplicationId then
/// clearReplicationId2): a new history starts.
pub fn new_history(server: &mut Server) {
    server.replication.replid = random_id(server);
    server.replication.replid2 = "0".repeat(40);
    server.replication.second_offset = -1;
}

/// Sets the ids of a server that starts (a new random id, no previous one).
pub fn init(server: &mut Server) {
    new_history(server);
    if let Some((host, port)) = server.config.repl.replicaof.clone() {
        replica::set_master(server, host, port);
        // No history to continue until the snapshot's load gives one ([`persist`]).
        if let Some(link) = server.replication.link.as_mut() {
            link.forget_history();
        }
    }
}

/// Creates the backlog (the first replica attached): a new id, no previous one, as Redis
/// does when there is no history to continue.
pub fn create_backlog(server: &mut Server) {
    if server.replication.backlog.is_some() {
        return;
    }
    let offset = server.replication.offset();
    new_history(server);
    server.replication.backlog = Some(Backlog::new(
        server.config.repl.backlog_size as usize,
        offset,
    ));
    crate::notice!(
        "Replication backlog created, my new replication IDs are '{}' and '{}'",
        server.replication.replid,
        server.replication.replid2
    );
    update_propagation(server);
}

/// The previous id becomes the secondary one, valid up to the current offset, and a new
/// id starts (a replica promoted to master, Redis's shiftReplicationId).
pub fn shift_id(server: &mut Server) {
    server.replication.replid2 = std::mem::take(&mut server.replication.replid);
    server.replication.second_offset = server.replication.offset() as i64 + 1;
    server.replication.replid = random_id(server);
    crate::notice!(
        "Setting secondary replication ID to {}, valid up to offset: {}. New replication ID is {}",
        server.replication.replid2,
        server.replication.second_offset,
        server.replication.replid
    );
}

/// Whether the commands' propagation is collected: for the AOF, or for the replicas of a
/// master (a replica's stream is its master's).
pub fn update_propagation(server: &mut Server) {
    let on = server.aof.state != crate::aof::State::Off
        || (server.replication.backlog.is_some() && !server.replication.is_replica());
    if on != server.propagation.enabled() {
        server.propagation.set_enabled(on);
        server.keyspace.log_removals(on);
    }
}

/// What the commands propagated, on a master: into the backlog and to the replicas. A
/// replica's stream comes from its master ([`replica`]), so its own is not fed.
pub fn feed_own(server: &mut Server, stream: &[u8]) {
    if !server.replication.is_replica() {
        feed(server, stream);
    }
}

/// Appends `bytes` to the replication stream: the backlog and every replica.
pub fn feed(server: &mut Server, bytes: &[u8]) {
    if bytes.is_empty() {
        return;
    }
    let Some(backlog) = server.replication.backlog.as_mut() else {
        server.replication.offset_without_backlog += bytes.len() as u64;
        return;
    };
    let old_end = backlog.offset();
    let new_block = backlog.feed(bytes);
    replica_out::fed(server, old_end, new_block);
}

/// Work of every event-loop iteration: the full syncs, the bulk transfers, the link to the
/// master, the clients in WAIT.
pub fn tick(server: &mut Server, registry: &mio::Registry) {
    if server.replication.master.active() {
        master::tick(server, registry);
    }
    if server.replication.link.is_some() {
        replica::tick(server, registry);
    }
    if server.replication.failover.active() {
        failover::tick(server);
    }
}

/// Whether the loop should come back at once (a snapshot being sent, or read from the
/// master).
pub fn busy(server: &Server) -> bool {
    server.replication.master.busy()
        || server
            .replication
            .link
            .as_ref()
            .is_some_and(replica::Link::wants_drive)
}

/// Periodic work (each cron): PINGs and newlines to the replicas, their timeouts, ACKs to
/// the master, reconnecting.
pub fn cron(server: &mut Server, registry: &mio::Registry) {
    if server.shutdown {
        // SHUTDOWN saved: the snapshot's offset stays the stream's last (no PING after it),
        // so that the replicas continue from it with PSYNC after the restart.
        return;
    }
    master::cron(server);
    del_sync_files::cron(server);
    if server.replication.link.is_some() {
        replica::cron(server, registry);
    }
    backlog_ttl::cron(server);
}

/// Gives the backlog the size repl-backlog-size says: CONFIG SET, the only way the size
/// changes once a backlog exists, applies it at once (Redis's resizeReplicationBacklog: a
/// smaller one keeps only the newest history that no replica holds more of).
pub fn resize_backlog(server: &mut Server) {
    replica_out::resize(server);
}

/// A client's connection closed: a replica leaves the list.
pub fn client_gone(server: &mut Server, id: u64) {
    master::client_gone(server, id);
}

/// The role in ROLE's and INFO's words.
pub fn role_name(server: &Server) -> &'static str {
    if server.replication.is_replica() {
        "slave"
    } else {
        "master"
    }
}

/// The body of INFO replication.
pub fn info_section(server: &Server) -> String {
    let r = &server.replication;
    let mut w = String::from("# Replication\r\n");
    let _ = write!(w, "role:{}\r\n", role_name(server));
    if let Some(link) = &r.link {
        link.info_fields(server, &mut w);
    }
    master::info_fields(server, &mut w);
    let (active, size, first, histlen) = match &r.backlog {
        Some(b) => (1, b.size(), b.first_offset(), b.histlen()),
        None => (0, server.config.repl.backlog_size as usize, 0, 0),
    };
    let _ = write!(
        w,
        "master_failover_state:{}\r\nmaster_replid:{}\r\nmaster_replid2:{}\r\nmaster_repl_offset:{}\r\nsecond_repl_offset:{}\r\nrepl_backlog_active:{active}\r\nrepl_backlog_size:{size}\r\nrepl_backlog_first_byte_offset:{first}\r\nrepl_backlog_histlen:{histlen}\r\n",
        r.failover.state_name(),
        r.replid,
        r.replid2,
        r.offset(),
        r.second_offset,
    );
    w
}
