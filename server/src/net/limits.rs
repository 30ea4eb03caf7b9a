//! The limits on a connection's buffers: the query buffer limit, the output buffer limits
//! (hard, and soft for a while) and the pause on reading while replies wait.

use super::conn::Conn;
use crate::clients::Client;
use crate::config::{Config, OutputLimit};
use crate::replication::replica_out;
use crate::server::Server;
use crate::warning;
use std::time::Instant;

/// Pending reply bytes past which a connection's requests wait until the client reads.
pub const PAUSE_OUTPUT: usize = 64 * 1024 * 1024;

/// Whether the unread requests passed `client-query-buffer-limit` (logged: the connection
/// is then closed).
pub fn input_over_limit(config: &Config, conn: &Conn, client: &Client) -> bool {
    if conn.pending_input() as u64 <= config.client_query_buffer_limit {
        return false;
    }
    warning!(
        "Closing client that reached max query buffer length: id={} addr={} (qbuf={})",
        client.id,
        client.addr,
        conn.pending_input()
    );
    true
}

/// The output buffer limits of `client`'s class: replica, pubsub (a client with a
/// subscription), or normal.
pub fn output_limit_of(config: &Config, client: &Client) -> OutputLimit {
    if client.repl_role == crate::clients::ReplRole::Replica {
        config.replica_output_limit
    } else if client.subscriptions.active() {
        config.pubsub_output_limit
    } else {
        config.output_limit
    }
}

/// Whether the pending replies passed the hard output limit, or the soft one for longer
/// than allowed (logged: the connection is then closed). A client with a subscription is
/// held to the pubsub class's limits, as in Redis; a replica's output is also its share
/// of the replication buffer, and its hard limit at least repl-backlog-size.
pub fn output_over_limit(server: &Server, conn: &mut Conn, client: &Client) -> bool {
    let mut limit = output_limit_of(&server.config, client);
    let mut pending = conn.pending_output() as u64;
    if client.repl_role == crate::clients::ReplRole::Replica {
        pending += replica_out::usage(server, client.id);
        limit.hard = replica_out::hard_limit(server);
    }
    let over = if reached(pending, limit.hard) {
        true
    } else if reached(pending, limit.soft) {
        let since = *conn.soft_limit_since.get_or_insert_with(Instant::now);
        since.elapsed().as_secs() >= limit.soft_seconds
    } else {
        conn.soft_limit_since = None;
        false
    };
    if over {
        crate::clients::warn_output_limit(client, false);
    }
    over
}

/// Whether `used` output bytes reach an output limit (0: none): at the limit, as Redis's
/// checkClientOutputBufferLimits.
pub fn reached(used: u64, limit: u64) -> bool {
    limit > 0 && used >= limit
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    #[test]
    fn a_hard_limit_is_reached_at_its_size() {
        let mut server = Server::new(Config::default());
        server.config.output_limit.hard = 100;
        let client = Client::internal(1);
        let mut conn = Conn::new(1);
        conn.wbuf.extend_from_slice(&[b'x'; 99]);
        assert!(!output_over_limit(&server, &mut conn, &client));
        conn.wbuf.push(b'x');
        assert!(output_over_limit(&server, &mut conn, &client), "100 of 100");
        assert!(!reached(u64::MAX, 0), "no limit");
    }
}
