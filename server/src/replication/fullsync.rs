//! The full sync of a master's replicas: the fork when replicas wait (a BGSAVE to the
//! snapshot file, or the diskless child writing to their sockets), its end, and the file
//! sent by chunks as each replica's output drains. The states are drawn in [`super::master`].

use super::master::{push, Bulk, RdbFilter, Replica, State};
use super::rdb_pipe;
use crate::rdb::fork::Exit;
use crate::server::Server;
use crate::{notice, warning};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::time::{Duration, Instant};

/// Pending output under which the next chunk of a snapshot file is queued.
const BULK_LOW_WATER: usize = 1 << 20;
/// Bytes of a snapshot file queued at a time.
const BULK_CHUNK: usize = 256 << 10;

/// Starts the fork of a full sync when replicas wait and no child runs. The sync serves
/// the first waiting replica and those that asked for the same snapshot filter.
pub fn maybe_start_sync(server: &mut Server, registry: &mio::Registry) {
    let m = &server.replication.master;
    let first = m
        .replicas
        .iter()
        .find(|r| r.state == State::WaitBgsaveStart);
    let filter = first.map(|r| r.conf.filter).unwrap_or_default();
    let waiting: Vec<&Replica> = m
        .replicas
        .iter()
        .filter(|r| r.state == State::WaitBgsaveStart && r.conf.filter == filter)
        .collect();
    if waiting.is_empty()
        || server.rdb.child.is_some()
        || server.aof.rewriting()
        || m.child.is_some()
        || m.pipe.is_some()
        || server.is_loading()
    {
        return;
    }
    let diskless = (server.config.repl.diskless_sync || filter.any())
        && waiting.iter().all(|r| r.conf.capa_eof);
    if diskless {
        let since = m.waiting_since.map_or(Duration::ZERO, |t| t.elapsed());
        let max = server.config.repl.diskless_sync_max_replicas;
        let enough = max > 0 && waiting.len() as u64 >= max;
        if since < Duration::from_secs(server.config.repl.diskless_sync_delay) && !enough {
            return;
        }
    }
    start_sync(server, registry, diskless, filter);
}

fn start_sync(server: &mut Server, registry: &mio::Registry, diskless: bool, filter: RdbFilter) {
    // Everything the fork's snapshot holds is in the stream before the offset it reports,
    // and what follows starts with a SELECT.
    server.drain_propagation();
    server.propagation.reselect();
    let offset = server.replication.offset();
    let replid = server.replication.replid.clone();
    notice!(
        "Starting BGSAVE for SYNC with target: {}",
        if diskless { "replicas sockets" } else { "disk" }
    );
    let ids: Vec<u64> = server
        .replication
        .master
        .replicas
        .iter()
        .filter(|r| r.state == State::WaitBgsaveStart && r.conf.filter == filter)
        .map(|r| r.id)
        .collect();
    let fullresync = format!("+FULLRESYNC {replid} {offset}\r\n");
    let mark = super::random_id(server);
    let started = if diskless {
        start_sockets_child(server, registry, &mark, filter)
    } else {
        match server.snapshots().bgsave() {
            Ok(()) => {
                server.replication.master.disk_job = server.rdb.child.as_ref().map(|c| c.pid);
                server.replication.master.disk_offset = offset;
                super::del_sync_files::sync_snapshot_started(server);
                true
            }
            Err(_) => false,
        }
    };
    let hard = server.config.replica_output_limit.hard;
    let Server {
        replication,
        clients,
        ..
    } = server;
    let m = &mut replication.master;
    m.waiting_since = None;
    for r in m.replicas.iter_mut().filter(|r| ids.contains(&r.id)) {
        if !started {
            push(
                clients,
                r.id,
                0,
                b"-ERR BGSAVE failed, replication can't continue\r\n",
            );
            r.close(clients);
            continue;
        }
        r.state = State::WaitBgsaveEnd;
        r.diskless = diskless;
        r.acked = false;
        r.keep_stream_from((!r.conf.rdb_only).then_some(offset + 1));
        r.watch_output(0);
        if !r.pre_psync {
            push(clients, r.id, hard, fullresync.as_bytes());
        }
        if diskless {
            push(clients, r.id, hard, format!("$EOF:{mark}\r\n").as_bytes());
        }
    }
    if !started {
        warning!("BGSAVE for replication failed");
        m.replicas.retain(|r| !ids.contains(&r.id));
    }
}

/// A replica asking for a full sync while a BGSAVE for replicas runs to the snapshot file
/// joins it when the first replica waiting for it keeps the stream and asked for no more
/// than this one (Redis's syncCommand, a disk BGSAVE in progress): the same snapshot and
/// offset, the stream from the same position. Returns the reply (+FULLRESYNC then, nothing
/// when it waits for the next sync).
pub(super) fn join_disk_sync(server: &Server, replica: &mut Replica) -> Vec<u8> {
    let m = &server.replication.master;
    if m.disk_job.is_none() {
        return Vec::new();
    }
    let other = m.replicas.iter().find(|o| {
        o.state == State::WaitBgsaveEnd
            && !o.diskless
            && !o.dropped()
            && (!o.conf.rdb_only || replica.conf.rdb_only)
    });
    let Some(other) = other else {
        return Vec::new();
    };
    let (mine, theirs) = (&replica.conf, &other.conf);
    let capable = (mine.capa_eof || !theirs.capa_eof) && (mine.capa_psync2 || !theirs.capa_psync2);
    if !capable || mine.filter != theirs.filter {
        notice!("Can't attach the replica to the current BGSAVE. Waiting for next BGSAVE for SYNC");
        return Vec::new();
    }
    let offset = m.disk_offset;
    replica.state = State::WaitBgsaveEnd;
    replica.keep_stream_from((!mine.rdb_only).then_some(offset + 1));
    notice!("Waiting for end of BGSAVE for SYNC");
    if replica.pre_psync {
        return Vec::new();
    }
    format!("+FULLRESYNC {} {offset}\r\n", server.replication.replid).into_bytes()
}

/// Forks the diskless sync's child, which writes the snapshot (with the parts `filter`
/// leaves out) and `mark` into the pipe that [`rdb_pipe::relay`] reads. Whether it started.
fn start_sockets_child(
    server: &mut Server,
    registry: &mio::Registry,
    mark: &str,
    filter: RdbFilter,
) -> bool {
    let (relay, tx) = match rdb_pipe::open(registry) {
        Ok(pipe) => pipe,
        Err(e) => {
            warning!("Can't setup the RDB pipe for the replicas: {e}");
            return false;
        }
    };
    let parent_end = rdb_pipe::parent_fd(&relay);
    // The replication state is in it (persist::save_info), as Redis's rdbSaveInfo.
    let mut aux = server.snapshots().aux_info();
    if filter.exclude_functions {
        aux.functions.clear();
    }
    let dbs = if filter.exclude_data {
        &[]
    } else {
        server.keyspace.databases()
    };
    let keys_total = if filter.exclude_data {
        0
    } else {
        server.keyspace.key_count()
    };
    match crate::rdb::fork::spawn(crate::rdb::fork::Purpose::ToReplicas, keys_total, || {
        rdb_pipe::write_child(tx, parent_end, mark.as_bytes(), dbs, &aux)
    }) {
        Ok((child, took)) => {
            server.rdb.latest_fork_usec = took.as_micros() as u64;
            server.rdb.total_forks += 1;
            notice!("Background RDB transfer started by pid {}", child.pid);
            server.replication.master.child = Some(child);
            server.replication.master.pipe = Some(relay);
            true
        }
        Err(e) => {
            warning!("Can't save in background: fork: {e}");
            let mut relay = relay;
            relay.deregister(registry);
            false
        }
    }
}

/// Kills the diskless sync's child (no replica left to send to, FLUSHALL); its replicas
/// are dropped.
pub fn kill_sockets_child(server: &mut Server) {
    let m = &mut server.replication.master;
    let Some(child) = m.child.take() else {
        return;
    };
    if m.child_exit.take().is_none() {
        child.kill();
    }
    notice!("Background transfer terminated by signal 9");
    finish_sockets(server, false);
}

/// Reaps the diskless sync's child, and ends the sync: at once when the child failed (its
/// pipe is closed, the replicas dropped), once its payload was relayed to the end of the
/// pipe when it succeeded.
pub fn reap_sockets_child(server: &mut Server, registry: &mio::Registry) {
    let m = &mut server.replication.master;
    if m.child_exit.is_none() {
        m.child_exit = m.child.as_mut().and_then(crate::rdb::Child::try_reap);
    }
    let ok = match &m.child_exit {
        None => return,
        Some(Exit::Code(0, _)) if m.pipe.is_some() => return,
        Some(Exit::Code(0, _)) => {
            notice!("Background RDB transfer terminated with success");
            true
        }
        Some(Exit::Signal(sig)) => {
            warning!("Background transfer terminated by signal {sig}");
            false
        }
        Some(_) => {
            warning!("Background transfer error");
            false
        }
    };
    m.child = None;
    m.child_exit = None;
    rdb_pipe::close(server, registry);
    finish_sockets(server, ok);
}

/// The diskless child ended, and the pipe was read to its end: its replicas are online
/// (the stream waits for their first ACK), or dropped when it failed (`ok` false).
pub fn finish_sockets(server: &mut Server, ok: bool) {
    let Server {
        replication,
        clients,
        ..
    } = server;
    for r in replication
        .master
        .replicas
        .iter_mut()
        .filter(|r| r.state == State::WaitBgsaveEnd && r.diskless)
    {
        if !ok {
            warning!("SYNC failed. BGSAVE child returned an error");
            r.close_now(clients);
            continue;
        }
        if r.conf.rdb_only {
            notice!(
                "Close the connection with replica {} as RDB transfer is complete",
                r.name()
            );
            r.close(clients);
            continue;
        }
        r.state = State::Online;
        r.wait_ack = !r.acked;
        r.ack_time = Instant::now();
        // The stream kept for it goes out at once when it acknowledged already.
        clients.wake(r.id);
        notice!("Synchronization with replica {} succeeded", r.name());
    }
    if !ok {
        replication
            .master
            .replicas
            .retain(|r| !(r.state == State::WaitBgsaveEnd && r.diskless));
    }
}

/// The BGSAVE of a disk-based sync ended: its replicas get the file, or are dropped.
pub fn finish_disk(server: &mut Server) {
    let path = server.config.dir.join(&server.config.dbfilename);
    let ok = server.rdb.last_bgsave_ok;
    let Server {
        replication,
        clients,
        ..
    } = server;
    for r in replication
        .master
        .replicas
        .iter_mut()
        .filter(|r| r.state == State::WaitBgsaveEnd && !r.diskless)
    {
        let opened = if ok {
            File::open(&path).and_then(|f| Ok((f.metadata()?.len(), f)))
        } else {
            Err(std::io::Error::other("BGSAVE failed"))
        };
        match opened {
            Ok((size, file)) => {
                push(clients, r.id, 0, format!("${size}\r\n").as_bytes());
                r.bulk = Some(Bulk {
                    file,
                    size,
                    sent: 0,
                });
                r.state = State::SendBulk;
            }
            Err(e) => {
                warning!("SYNC failed. Can't open/stat DB after BGSAVE: {e}");
                r.close(clients);
            }
        }
    }
    replication
        .master
        .replicas
        .retain(|r| r.state != State::WaitBgsaveEnd || r.diskless);
}

/// Queues the next chunks of the snapshot files for replicas whose output drained.
pub fn pump_files(server: &mut Server) {
    let Server {
        replication,
        clients,
        ..
    } = server;
    let mut buf = Vec::new();
    for r in replication
        .master
        .replicas
        .iter_mut()
        .filter(|r| r.state == State::SendBulk)
    {
        let Some(bulk) = r.bulk.as_mut() else {
            continue;
        };
        while bulk.sent < bulk.size {
            let Some(pending) = clients.pending_output(r.id) else {
                break;
            };
            if pending >= BULK_LOW_WATER {
                break;
            }
            let n = BULK_CHUNK.min((bulk.size - bulk.sent) as usize);
            buf.resize(n, 0);
            if let Err(e) = bulk.file.read_exact_at(&mut buf, bulk.sent) {
                warning!("Read error sending DB to replica: {e}");
                r.bulk = None;
                r.close(clients);
                break;
            }
            push(clients, r.id, 0, &buf);
            bulk.sent += n as u64;
        }
        let Some(bulk) = r.bulk.as_ref() else {
            continue;
        };
        if bulk.sent == bulk.size {
            r.bulk = None;
            if r.conf.rdb_only {
                notice!(
                    "Close the connection with replica {} as RDB transfer is complete",
                    r.name()
                );
                r.close(clients);
                continue;
            }
            r.state = State::Online;
            r.ack_time = Instant::now();
            notice!("Synchronization with replica {} succeeded", r.name());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::replication::master::Handshake;

    fn waiting(id: u64) -> Replica {
        let mut r = Replica::new(id, "127.0.0.1".into(), Handshake::default(), false);
        r.state = State::WaitBgsaveEnd;
        r.keep_stream_from(Some(1));
        r
    }

    #[test]
    fn a_sync_joins_no_stopped_replica() {
        let mut server = Server::new(Config::default());
        super::super::create_backlog(&mut server);
        server.replication.master.disk_job = Some(1);
        server.replication.master.replicas.push(waiting(2));
        let mut mine = Replica::new(3, "127.0.0.1".into(), Handshake::default(), false);
        assert!(!join_disk_sync(&server, &mut mine).is_empty(), "a live one");
        assert_eq!(mine.pos(), Some(1));
        server.replication.master.replicas[0].stop_stream();
        let mut mine = Replica::new(3, "127.0.0.1".into(), Handshake::default(), false);
        assert!(
            join_disk_sync(&server, &mut mine).is_empty(),
            "a stopped one"
        );
        assert_eq!((mine.pos(), mine.state), (None, State::WaitBgsaveStart));
    }
}
