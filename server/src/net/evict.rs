//! Client eviction on the loop (`maxmemory-clients`): checked before each command, with
//! the running client's memory as it is then, and after each round of events (Redis's
//! processCommand and beforeSleep calls of evictClients).

use crate::clients::{memory, Buffers, Client, Running};
use crate::server::Server;

/// The limit in bytes, if any.
#[inline]
fn limit(server: &Server) -> Option<usize> {
    let config = &server.config.memory;
    config.clients.bytes(config.maxmemory).map(|b| b as usize)
}

/// Before a command of `client` runs (its buffers in `client.io`): evicts clients until
/// the limit holds. True when `client` itself is evicted: the command does not run and the
/// connection closes without another reply. With no limit (the usual case) this is a
/// look at the configuration, inlined in the request loop.
#[inline]
pub fn before_command(server: &mut Server, client: &mut Client) -> bool {
    match limit(server) {
        Some(limit) => evict_before(server, client, limit),
        None => false,
    }
}

/// [`before_command`] under `limit`.
#[inline(never)]
fn evict_before(server: &mut Server, client: &mut Client, limit: usize) -> bool {
    let running = Running {
        id: client.id,
        memory: memory::usage(client, client.io),
        evictable: memory::evictable(client),
    };
    let (evicted, itself) = server.clients.evict(limit, Some(running), log);
    server.memory.evicted_clients += evicted as u64;
    if itself {
        log(client, client.io);
        client.evicted = true;
    }
    itself
}

/// After a round of events: evicts clients until the limit holds (their connections are
/// woken, to be closed).
pub fn between_events(server: &mut Server) {
    if let Some(limit) = limit(server) {
        let (evicted, _) = server.clients.evict(limit, None, log);
        server.memory.evicted_clients += evicted as u64;
    }
}

/// Redis's log line for an evicted client.
fn log(client: &Client, buffers: Buffers) {
    crate::notice!(
        "Evicting client: {}",
        crate::commands::client_cmd::describe(client, buffers, None)
    );
}
