//! repl-backlog-ttl: a master that has had no replica for that many seconds frees its
//! backlog, as Redis's replicationCron does. Its history ends there: a new id, no previous
//! one (a replica that comes back later could not be told the offsets are no longer kept).

use crate::notice;
use crate::server::Server;
use std::time::Instant;

/// Cron work: notes since when the master has no replica, and frees the backlog once that
/// lasted longer than repl-backlog-ttl.
pub fn cron(server: &mut Server) {
    let ttl = server.config.repl.backlog_ttl;
    let r = &mut server.replication;
    if !r.master.replicas.is_empty() || r.is_replica() {
        r.no_replicas_since = None;
        return;
    }
    let since = *r.no_replicas_since.get_or_insert_with(Instant::now);
    if ttl == 0 || r.backlog.is_none() || since.elapsed().as_secs() <= ttl {
        return;
    }
    let backlog = r.backlog.take().expect("checked");
    r.offset_without_backlog = backlog.offset();
    server.replication.replid = super::random_id(server);
    server.replication.replid2 = "0".repeat(40);
    server.replication.second_offset = -1;
    notice!("Replication backlog freed after {ttl} seconds without connected replicas.");
    super::update_propagation(server);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use std::time::Duration;

    #[test]
    fn freed_after_the_ttl_without_replicas() {
        let mut server = Server::new(Config::default());
        super::super::create_backlog(&mut server);
        super::super::feed(&mut server, b"0123456789");
        let id = server.replication.replid.clone();
        server.config.repl.backlog_ttl = 1;
        cron(&mut server);
        assert!(server.replication.backlog.is_some(), "not yet");
        server.replication.no_replicas_since = Some(Instant::now() - Duration::from_secs(2));
        cron(&mut server);
        let r = &server.replication;
        assert!(r.backlog.is_none());
        assert_ne!(r.replid, id);
        assert_eq!((r.offset(), r.second_offset), (10, -1));
        // 0: kept forever.
        super::super::create_backlog(&mut server);
        server.config.repl.backlog_ttl = 0;
        server.replication.no_replicas_since = Some(Instant::now() - Duration::from_secs(9));
        cron(&mut server);
        assert!(server.replication.backlog.is_some());
    }
}
