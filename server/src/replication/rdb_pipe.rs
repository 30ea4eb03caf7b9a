//! The diskless sync's pipe (Redis's rdb pipe): the forked child writes the snapshot and
//! its end mark into a pipe ([`write_child`]); the parent reads the pipe on the event loop
//! (source [`super::PIPE_SOURCE`]) and relays each chunk to every replica of the sync
//! through the replica's client output ([`relay`]).
//!
//! The next chunk is read only once every replica's output drained below [`HIGH_WATER`]:
//! a slow replica slows the whole sync, as in Redis, but the parent stays in charge of
//! the sockets, so it can drop a replica that stalls past repl-timeout ([`super::master`]'s
//! cron) or went away, and kills the child once no replica is left to send to.
//!
//! ```text
//! child: RDB + <mark> -> pipe -> parent: chunk -> replica 1 output
//!                                              -> replica 2 output   (all drained: next)
//! pipe end (the child wrote all, or died) -> "done reading from pipe"; the child reaped
//! ```

use super::master::State;
use crate::keyspace::Db;
use crate::rdb::write::{write_snapshot_spilling, AuxInfo, SaveStats};
use crate::server::Server;
use crate::{notice, warning};
use mio::unix::pipe::{Receiver, Sender};
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, IntoRawFd};

/// Output bytes waiting for a replica of the sync above which the pipe is not read.
const HIGH_WATER: usize = 1 << 20;
/// Bytes read from the pipe at a time (Redis's PROTO_IOBUF_LEN).
const CHUNK: usize = 16 << 10;
/// Bytes relayed in one event-loop iteration at most, so that other clients are served.
const ROUND: usize = 4 << 20;

/// The parent's end of the pipe.
#[derive(Debug)]
pub struct Relay {
    rx: Receiver,
    /// The loop should come back at once: bytes wait in the pipe though no event will
    /// tell (a round's budget spent), or the outputs just filled are about to be written.
    more: bool,
}

impl Relay {
    /// Whether the loop should come back at once to relay more.
    pub fn more(&self) -> bool {
        self.more
    }

    /// Takes the parent's end out of `registry` (before it closes, so that a descriptor
    /// number reused later is not still in the poll set).
    pub fn deregister(&mut self, registry: &mio::Registry) {
        let _ = registry.deregister(&mut self.rx);
    }
}

/// Opens the pipe: the parent's end registered on `registry`, and the child's end.
pub fn open(registry: &mio::Registry) -> io::Result<(Relay, Sender)> {
    let (tx, mut rx) = mio::unix::pipe::new()?;
    registry.register(
        &mut rx,
        goblin_evloop::source(super::PIPE_SOURCE),
        mio::Interest::READABLE,
    )?;
    Ok((Relay { rx, more: true }, tx))
}

/// The child's job: writes the snapshot of `dbs` then `mark` into `tx`, blocking while
/// the parent does not read. `parent_end` is the child's copy of the parent's end, closed
/// first (so that the child's writes fail once the parent is gone).
pub fn write_child(
    tx: Sender,
    parent_end: i32,
    mark: &[u8],
    dbs: &[Db],
    aux: &AuxInfo,
) -> io::Result<SaveStats> {
    // SAFETY: closing the child's own copy of a descriptor it does not otherwise use.
    unsafe { libc::close(parent_end) };
    tx.set_nonblocking(false)?;
    // SAFETY: the descriptor is taken out of `tx`, so the File is its only owner.
    let out = unsafe { std::fs::File::from_raw_fd(tx.into_raw_fd()) };
    let (mut out, stats) = write_snapshot_spilling(out, dbs, aux, CHUNK)?;
    out.write_all(mark)?;
    Ok(stats)
}

/// The descriptor of the parent's end (for the child to close).
pub fn parent_fd(relay: &Relay) -> i32 {
    relay.rx.as_raw_fd()
}

/// The ids of the replicas the running diskless sync sends to.
fn targets(server: &Server) -> Vec<u64> {
    server
        .replication
        .master
        .replicas
        .iter()
        .filter(|r| r.state == State::WaitBgsaveEnd && r.diskless && !r.dropped())
        .map(|r| r.id)
        .collect()
}

/// Relays what the pipe holds to the sync's replicas, until the pipe is empty, a
/// replica's output is full, or the round's budget is spent. At the pipe's end the relay
/// closes (the child is reaped by [`super::master::tick`]); with no replica left the child
/// is killed.
pub fn relay(server: &mut Server, registry: &mio::Registry) {
    let mut buf = [0u8; CHUNK];
    let mut moved = 0;
    loop {
        if server.replication.master.pipe.is_none() {
            return;
        }
        if server.replication.master.child.is_none() {
            // Killed (FLUSHALL): what it left in the pipe is of no use.
            return close(server, registry);
        }
        let ids = targets(server);
        if ids.is_empty() {
            notice!("Diskless rdb transfer, last replica dropped, killing fork child.");
            close(server, registry);
            super::fullsync::kill_sockets_child(server);
            return;
        }
        let Some(pipe) = server.replication.master.pipe.as_mut() else {
            return;
        };
        let full = ids.iter().any(|&id| {
            server
                .clients
                .pending_output(id)
                .is_some_and(|n| n > HIGH_WATER)
        });
        // Between two calls the loop writes what was queued: an output still full at the
        // start of a call waits in its socket, whose draining wakes the loop (and this);
        // one filled by this call is written right after it, so the loop comes back.
        pipe.more = (full && moved > 0) || moved >= ROUND;
        if full || pipe.more {
            return;
        }
        match pipe.rx.read(&mut buf) {
            Ok(0) => {
                notice!(
                    "Diskless rdb transfer, done reading from pipe, {} replicas still up.",
                    ids.len()
                );
                close(server, registry);
                return;
            }
            Ok(n) => {
                moved += n;
                send(server, &ids, &buf[..n]);
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                pipe.more = false;
                return;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => {
                warning!("Diskless rdb transfer, read error sending DB to replicas: {e}");
                close(server, registry);
                super::fullsync::kill_sockets_child(server);
                return;
            }
        }
    }
}

/// Queues `chunk` for every replica in `ids`, noting the output each then has (the
/// repl-timeout of a stalled one counts from its last progress).
fn send(server: &mut Server, ids: &[u64], chunk: &[u8]) {
    let Server {
        replication,
        clients,
        stats,
        ..
    } = server;
    for r in replication
        .master
        .replicas
        .iter_mut()
        .filter(|r| ids.contains(&r.id))
    {
        r.watch_output(clients.pending_output(r.id).unwrap_or(0));
        super::master::push(clients, r.id, 0, chunk);
        stats.net_repl_output_bytes += chunk.len() as u64;
        r.relay_pending = clients.pending_output(r.id).unwrap_or(0);
    }
}

/// Closes the parent's end of the pipe.
pub fn close(server: &mut Server, registry: &mio::Registry) {
    if let Some(mut pipe) = server.replication.master.pipe.take() {
        pipe.deregister(registry);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_child_writes_the_snapshot_then_the_mark() {
        let (tx, rx) = mio::unix::pipe::new().unwrap();
        let aux = AuxInfo {
            compress: false,
            ..AuxInfo::default()
        };
        // The parent end the child closes is a copy here (the test keeps `rx`).
        // SAFETY: dup of a descriptor this test owns.
        let copy = unsafe { libc::dup(rx.as_raw_fd()) };
        let dbs = vec![Db::default()];
        write_child(tx, copy, b"MARK", &dbs, &aux).unwrap();
        rx.set_nonblocking(false).unwrap();
        let mut got = Vec::new();
        // SAFETY: the descriptor is taken out of `rx`, so the File is its only owner.
        let mut rx = unsafe { std::fs::File::from_raw_fd(rx.into_raw_fd()) };
        rx.read_to_end(&mut got).unwrap();
        assert!(got.starts_with(b"REDIS0010"));
        assert!(got.ends_with(b"MARK"));
    }
}
