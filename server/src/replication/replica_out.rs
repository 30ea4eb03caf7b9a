//! The replicas' stream output from the shared replication buffer ([`super::backlog`]):
//! each replica keeps only its position in it; the stream is written to its socket
//! straight from the buffer's blocks once its own replies (the handshake's, the snapshot)
//! are written. Its output memory, for the output limits, is the buffer's from the block
//! it refers to on (Redis's getClientOutputBufferMemoryUsage of a replica), so a slow
//! replica is dropped on the shared usage, and the head blocks no replica refers to any
//! more are trimmed.

use super::backlog::Backlog;
use super::master::{Replica, State};
use crate::clients::{Buffers, Client, ReplRole};
use crate::server::Server;
use crate::warning;

/// Whether the stream goes out to `r` now: online, not waiting for the first ACK of a
/// diskless sync, not dropped.
fn streaming(r: &Replica) -> bool {
    r.state == State::Online && !r.wait_ack && !r.dropped()
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
    let (Some(backlog), Some(pos)) = (r.backlog.as_ref(), r.master.get(id).and_then(|r| r.pos()))
    else {
        return 0;
    };
    backlog.usage_from(pos) as u64
}

/// The replicas holding part of the buffer (their output limits to check), by CLIENT ID.
pub fn holding(server: &Server) -> Vec<u64> {
    let Some(backlog) = server.replication.backlog.as_ref() else {
        return Vec::new();
    };
    server
        .replication
        .master
        .replicas
        .iter()
        .filter(|r| r.pos().is_some_and(|pos| backlog.usage_from(pos) > 0))
        .map(|r| r.id)
        .collect()
}

/// A client's buffer sizes with, for a replica, its share of the buffer in its output
/// (CLIENT LIST omem and tot-mem, as Redis's getClientOutputBufferMemoryUsage counts a
/// replica's referenced blocks).
pub fn with_share(server: &Server, client: &Client, mut buffers: Buffers) -> Buffers {
    if client.repl_role == ReplRole::Replica {
        buffers.pending_output += usage(server, client.id) as usize;
    }
    buffers
}

/// Whether replica `id` is to be serviced for its stream: bytes wait for it, or its
/// position is one the buffer no longer holds (its connection is then closed).
pub fn pending(server: &Server, id: u64) -> bool {
    let Some(backlog) = server.replication.backlog.as_ref() else {
        return false;
    };
    server
        .replication
        .master
        .get(id)
        .filter(|r| streaming(r))
        .and_then(|r| r.pos())
        .is_some_and(|pos| !backlog.covers(pos) || backlog.has_pending(pos))
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
    let Some(r) = replication.master.get_mut(id).filter(|r| streaming(r)) else {
        return true;
    };
    let Some(mut pos) = r.pos() else { return true };
    if !backlog.covers(pos) {
        // Its next byte is gone from the buffer: it cannot continue the stream, and
        // writing it nothing would leave it silently behind. It resyncs.
        warning!(
            "Disconnecting replica {}: its offset {pos} is no longer in the replication buffer",
            r.name()
        );
        r.stop_stream();
        return false;
    }
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
    r.keep_stream_from(Some(pos));
    let left_head = backlog.leaves_head(start, pos);
    if pos > start {
        stats.writes_processed += 1;
        stats.net_output_bytes += pos - start;
    }
    if left_head {
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
        let Some(pos) = r.pos() else {
            continue;
        };
        if pos == old_end + 1 && streaming(r) {
            clients.wake(r.id);
        }
        if new_block && crate::net::limits::reached(backlog.usage_from(pos) as u64, hard) {
            if let Some(c) = clients.get(r.id) {
                crate::clients::warn_output_limit(c, true);
            }
            r.close_now(clients);
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
        .filter_map(Replica::pos)
        .min()
}

/// Drops the head blocks no replica refers to, past repl-backlog-size (the replicas'
/// positions are looked at only when the head block is past it).
pub fn trim(server: &mut Server) {
    if !server
        .replication
        .backlog
        .as_ref()
        .is_some_and(Backlog::trimmable)
    {
        return;
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::replication::backlog::MIN_BLOCK;
    use crate::replication::master::Handshake;

    fn online(id: u64, pos: u64) -> Replica {
        let mut r = Replica::new(id, "127.0.0.1".into(), Handshake::default(), false);
        r.state = State::Online;
        r.keep_stream_from(Some(pos));
        r
    }

    fn server_with(replicas: Vec<Replica>) -> Server {
        let mut server = Server::new(Config::default());
        crate::replication::create_backlog(&mut server);
        server.replication.master.replicas = replicas;
        server
    }

    #[test]
    fn a_replica_over_the_limit_holds_nothing() {
        let mut server = server_with(vec![online(1, 1), online(2, 1)]);
        server.config.repl.backlog_size = MIN_BLOCK as u64;
        server.config.replica_output_limit.hard = MIN_BLOCK as u64;
        server.replication.backlog = Some(Backlog::new(MIN_BLOCK, 0));
        server.replication.master.replicas[1].stop_stream();
        crate::replication::feed(&mut server, &vec![b'x'; MIN_BLOCK]);
        let r = &server.replication.master.replicas;
        assert!(r[0].dropped() && r[0].pos().is_none(), "over the limit");
        assert_eq!(oldest(&server), None, "none holds the buffer");
        assert!(!pending(&server, 1) && !pending(&server, 2));
    }

    #[test]
    fn a_position_out_of_the_buffer_is_serviced_to_close() {
        let mut server = server_with(vec![online(1, 1)]);
        crate::replication::feed(&mut server, b"0123456789");
        assert!(pending(&server, 1));
        // A new history replaces the buffer: position 1 is not in it.
        server.replication.backlog = Some(Backlog::new(1024, 100));
        assert!(pending(&server, 1), "serviced, to be closed");
    }

    /// Replica `id` writes what waits for it to a socket that takes it all.
    fn write_all(server: &mut Server, id: u64) {
        let (socket, _peer) = mio::net::UnixStream::pair().expect("a socket pair");
        let mut stream = goblin_evloop::Stream::Unix(socket);
        assert!(write(server, id, &mut stream));
    }

    #[test]
    fn the_head_is_trimmed_when_a_write_leaves_it() {
        let mut server = server_with(vec![online(1, 1), online(2, 1)]);
        server.config.repl.backlog_size = 1;
        server.replication.backlog = Some(Backlog::new(1, 0));
        crate::replication::feed(&mut server, &vec![b'x'; MIN_BLOCK]);
        crate::replication::feed(&mut server, b"0123456789");
        let histlen = |s: &Server| s.replication.backlog.as_ref().unwrap().histlen();
        write_all(&mut server, 2);
        assert_eq!(histlen(&server), MIN_BLOCK + 10, "replica 1 holds the head");
        // Replica 1 stops (its connection not yet gone): a write in the tail leaves the
        // head where it is; the next block or a write leaving the head trims it.
        server.replication.master.replicas[0].stop_stream();
        crate::replication::feed(&mut server, b"abc");
        write_all(&mut server, 2);
        assert_eq!(histlen(&server), MIN_BLOCK + 13, "no trim without a move");
        server.replication.master.replicas[1].keep_stream_from(Some(1));
        write_all(&mut server, 2);
        assert_eq!(histlen(&server), 13, "the head left");
    }

    #[test]
    fn a_replicas_output_is_its_share_of_the_buffer() {
        let mut server = server_with(vec![online(1, 1), online(2, 1)]);
        for _ in 0..3 {
            crate::replication::feed(&mut server, &vec![b'x'; MIN_BLOCK]);
        }
        write_all(&mut server, 2);
        let backlog = server.replication.backlog.as_ref().unwrap();
        let (all, tail) = (backlog.memory(), backlog.usage_from(backlog.offset() + 1));
        assert!(tail < all);
        assert_eq!(holding(&server), vec![1, 2]);
        let mut replica = Client::internal(1);
        replica.repl_role = ReplRole::Replica;
        let buffers = Buffers {
            pending_output: 7,
            ..Buffers::default()
        };
        let omem = |s: &Server, c: &Client| with_share(s, c, buffers).pending_output;
        assert_eq!(omem(&server, &replica), 7 + all, "it holds every block");
        replica.id = 2;
        assert_eq!(omem(&server, &replica), 7 + tail, "it has everything");
        replica.repl_role = ReplRole::Normal;
        assert_eq!(omem(&server, &replica), 7, "not a replica");
        server.replication.master.replicas[0].stop_stream();
        assert_eq!(holding(&server), vec![2]);
    }

    #[test]
    fn disconnected_replicas_stop_their_streams() {
        let mut server = server_with(vec![online(1, 1), online(2, 1)]);
        crate::replication::master::disconnect_replicas(&mut server);
        assert!(server
            .replication
            .master
            .replicas
            .iter()
            .all(Replica::dropped));
        assert_eq!(oldest(&server), None);
    }
}
