//! Goblin: a Redis-compatible sorted-set server (Goblin Core) with a co-hosted object cache
//! (Goblin Store) in the same process.
//!
//! - [`net`]: the mio event loop and connections.
//! - [`resp`]: request parsing and reply encoding.
//! - [`commands`]: the command table, dispatch and the generic commands.
//! - [`zset_commands`]: the sorted-set commands on the `goblin-zset` engine.
//! - [`keyspace`]: the databases, expiry, WATCH, waited-on keys, lazy free, change counter.
//! - [`server`]: server state: configuration, keyspace, connections, statistics.
//! - [`clock`]: Unix time in milliseconds.
//! - [`config`], [`log`]: command line, redis.conf and CONFIG; Redis-style logging.
//! - [`rdb`]: RDB snapshots (SAVE, BGSAVE, save points, loading at start-up).

/// The Redis version Goblin follows; clients gate features on it.
pub const REDIS_VERSION: &str = "7.2.4";

pub mod client;
pub mod clock;
pub mod commands;
pub mod config;
pub mod errors;
pub mod glob;
pub mod keyspace;
pub mod log;
pub mod net;
pub mod numbers;
pub mod rdb;
pub mod resp;
pub mod server;
pub mod stats;
pub mod zset_commands;
