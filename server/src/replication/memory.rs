//! What replication holds in memory, for INFO memory's mem_replication_backlog,
//! mem_total_replication_buffers and mem_clients_slaves.

use crate::server::Server;

/// The replication's memory figures, in bytes.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Figures {
    /// The backlog's ring (mem_replication_backlog).
    pub backlog: u64,
    /// The replicas' buffers: output waiting for their sockets and the stream held for
    /// them during their sync (mem_clients_slaves).
    pub replicas: u64,
}

impl Figures {
    /// mem_total_replication_buffers: the backlog and the replicas' buffers.
    pub fn total(&self) -> u64 {
        self.backlog + self.replicas
    }
}

/// The figures now.
pub fn figures(server: &Server) -> Figures {
    let r = &server.replication;
    let replicas = r
        .master
        .replicas
        .iter()
        .map(|rep| {
            let pending = server.clients.pending_output(rep.id).unwrap_or(0);
            (pending + rep.held.len()) as u64
        })
        .sum();
    Figures {
        backlog: r.backlog.as_ref().map_or(0, |b| b.size() as u64),
        replicas,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    #[test]
    fn the_backlog_counts_once_created() {
        let mut server = Server::new(Config::default());
        assert_eq!(figures(&server), Figures::default());
        super::super::create_backlog(&mut server);
        let f = figures(&server);
        assert_eq!((f.backlog, f.replicas, f.total()), (1 << 20, 0, 1 << 20));
    }
}
