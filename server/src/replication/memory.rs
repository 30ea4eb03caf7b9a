//! What replication holds in memory, for INFO memory's mem_replication_backlog,
//! mem_total_replication_buffers and mem_clients_slaves.

use super::backlog::{BLOCK_OVERHEAD, MIN_BLOCK};
use crate::server::Server;

/// The replication's memory figures, in bytes.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Figures {
    /// The backlog's share of the shared replication buffer (mem_replication_backlog).
    pub backlog: u64,
    /// The replicas' share: what the buffer holds past repl-backlog-size while replicas
    /// are attached (mem_clients_slaves).
    pub replicas: u64,
}

impl Figures {
    /// mem_total_replication_buffers: the whole shared buffer, counted once.
    pub fn total(&self) -> u64 {
        self.backlog + self.replicas
    }
}

/// The figures now, split as Redis splits them: the buffer is the backlog's up to
/// repl-backlog-size, the rest the replicas' when there are any.
pub fn figures(server: &Server) -> Figures {
    let r = &server.replication;
    let total = r.backlog.as_ref().map_or(0, |b| b.memory() as u64);
    let size = server.config.repl.backlog_size;
    if !r.master.replicas.is_empty() && total > size {
        Figures {
            backlog: size,
            replicas: total - size,
        }
    } else {
        Figures {
            backlog: total,
            replicas: 0,
        }
    }
}

/// The replicas' share of the buffer that eviction leaves out of the memory figure (part
/// of mem_not_counted_for_evict): what passes repl-backlog-size and an estimate of its
/// blocks' overhead, as Redis's freeMemoryGetNotCountedMemory (evicting for it would feed
/// it the DELs it propagates). Counted with or without replicas: a buffer a slow replica
/// grew is trimmed over time, not at once.
pub fn not_counted_for_evict(server: &Server) -> u64 {
    let total = server
        .replication
        .backlog
        .as_ref()
        .map_or(0, |b| b.memory() as u64);
    let size = server.config.repl.backlog_size;
    let blocks = size / MIN_BLOCK as u64 + 1;
    total.saturating_sub(size + blocks * BLOCK_OVERHEAD as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    #[test]
    fn the_buffer_is_the_backlogs_up_to_its_size() {
        let mut server = Server::new(Config::default());
        server.config.repl.backlog_size = 16 * 1024;
        assert_eq!(figures(&server), Figures::default());
        super::super::create_backlog(&mut server);
        assert_eq!(figures(&server), Figures::default(), "no block yet");
        super::super::feed(&mut server, &[b'x'; 40_000]);
        let held = server.replication.backlog.as_ref().unwrap().memory() as u64;
        // Without replicas the head is trimmed to the backlog's size: the two last blocks.
        assert_eq!(held, 2 * (16 * 1024 + BLOCK_OVERHEAD as u64));
        let f = figures(&server);
        assert_eq!(
            (f.backlog, f.replicas, f.total()),
            (held, 0, held),
            "no replica"
        );
        let estimate = 16 * 1024 + 2 * BLOCK_OVERHEAD as u64;
        assert_eq!(not_counted_for_evict(&server), held - estimate);
    }
}
