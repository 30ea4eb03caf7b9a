//! The replicas' stream output from the shared replication buffer ([`super::backlog`]):
//! each replica keeps only its position in it; the stream is written to its socket
//! straight from the buffer's blocks once its own replies (the handshake's, the snapshot)
//! are written. Its output memory, for the output limits, is the buffer's from the block
//! it refers to on (Redis's getClientOutputBufferMemoryUsage of a replica), so a slow
//! replica is dropped on the shared usage, and the head blocks no replica refers to any
//! more are trimmed.

use super::master::{Replica, State};
use crate::server::Server;
use crate::warning;

/// Whether the stream goes out to `r` now: online, not waiting for the first ACK of a
/// diskless sync, not dropped.
fn streaming(r: &Replica) -> bool {
    r.state == State::Online && !r.wait_ack && !r.dropped
}

/// The hard output limit of the replica class: repl-backlog-size when the configured one
/// is lower (Redis ignores such a limit, a partial resync would be dropped at once).
pub fn hard_limit(server: &Server) -> u64 {
    let hard = server.config.replica_output_limit.hard;
    if hard > 0 {
        hard.max(server.config.repl.backlog_size)
    } else {
        0
    }
}

/// Replica `id`'s share of the buffer in bytes (0 for other clients).
pub fn usage(server: &Server, id: u64) -> u64 {
    let r = &server.replication;
    let (Some(backlog), Some(pos)) = (r.backlog.as_ref(), replica(server, id).and_then(|r| r.pos))
    else {
        return 0;
    };
    backlog.usage_from(pos) as u64
}

/// Whether stream bytes wait to be written to replica `id`.
pub fn pending(server: &Server, id: u64) -> bool {
    let Some(backlog) = server.replication.backlog.as_ref() else {
        return false;
    };
    replica(server, id)
        .filter(|r| streaming(r))
        .and_then(|r| r.pos)
        .is_some_and(|pos| backlog.has_pending(pos))
}

fn replica(server: &Server, id: u64) -> Option<&Replica> {
    server
        .replication
        .master
        .replicas
        .iter()
        .find(|r| r.id == id)
}

/// Writes what the socket takes of the stream waiting for replica `id` (after its own
/// replies); false when the connection broke.
pub fn write(server: &mut Server, id: u64, stream: &mut goblin_evloop::Stream) -> bool {
    let Server {
        replication, stats, ..
    } = server;
    let Some(backlog) = replication.backlog.as_ref() else {
        return true;
    };
    let Some(r) = replication
        .master
        .replicas
        .iter_mut()
        .find(|r| r.id == id)
        .filter(|r| streaming(r))
    else {
        return true;
    };
    let Some(mut pos) = r.pos else { return true };
    let start = pos;
    let mut open = true;
    loop {
        let chunk = backlog.pending_from(pos);
        if chunk.is_empty() {
            break;
        }
        match goblin_evloop::write_some(stream, chunk) {
            Ok(Some(n)) => pos += n as u64,
            Ok(None) => break,
            Err(_) => {
                open = false;
                break;
            }
        }
    }
    r.pos = Some(pos);
    if pos > start {
        stats.writes_processed += 1;
        stats.net_output_bytes += pos - start;
        trim(server);
    }
    open
}

/// The stream grew (its end was at `old_end`); `new_block`: the buffer made a block for it.
/// The replicas that had everything are woken to write it; at a new block, as in Redis, the
/// replicas whose share passes the hard limit are dropped and the head trimmed.
pub fn fed(server: &mut Server, old_end: u64, new_block: bool) {
    let hard = hard_limit(server);
    let Server {
        replication,
        clients,
        ..
    } = server;
    let Some(backlog) = replication.backlog.as_ref() else {
        return;
    };
    for r in replication.master.replicas.iter_mut() {
        let Some(pos) = r.pos.filter(|_| !r.dropped) else {
            continue;
        };
        if pos == old_end + 1 && streaming(r) {
            clients.wake(r.id);
        }
        if new_block && hard > 0 && backlog.usage_from(pos) as u64 >= hard {
            if let Some(c) = clients.get(r.id) {
                warning!(
                    "Client id={} addr={} scheduled to be closed ASAP for overcoming of output buffer limits.",
                    c.id,
                    c.addr
                );
            }
            r.dropped = true;
            r.pos = None;
            clients.close_now(r.id);
        }
    }
    if new_block {
        trim(server);
    }
}

/// The oldest position of the replicas still reading the buffer.
fn oldest(server: &Server) -> Option<u64> {
    server
        .replication
        .master
        .replicas
        .iter()
        .filter(|r| !r.dropped)
        .filter_map(|r| r.pos)
        .min()
}

/// Drops the head blocks no replica refers to, past repl-backlog-size.
pub fn trim(server: &mut Server) {
    let oldest = oldest(server);
    if let Some(b) = server.replication.backlog.as_mut() {
        b.trim(oldest);
    }
}

/// Gives the buffer the size repl-backlog-size says (CONFIG SET): a smaller one keeps
/// only the newest history no replica holds more of.
pub fn resize(server: &mut Server) {
    let oldest = oldest(server);
    let size = server.config.repl.backlog_size as usize;
    if let Some(b) = server.replication.backlog.as_mut() {
        b.resize(size, oldest);
    }
}
