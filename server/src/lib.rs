//! Goblin: a Redis-compatible sorted-set server (Goblin Core) with a co-hosted object cache
//! (Goblin Store) in the same process.
//!
//! - [`net`]: the mio event loop and connections.
//! - [`resp`]: request parsing and reply encoding.
//! - [`commands`]: the command table, dispatch and the generic commands.
//! - [`zset_commands`]: the sorted-set commands on the `goblin-zset` engine.
//! - [`server`], [`db`]: server state, databases, expiry, WATCH and blocking bookkeeping.
//! - [`config`], [`log`]: command line, redis.conf and CONFIG; Redis-style logging.
//! - [`rdb`]: RDB snapshots (SAVE, BGSAVE, save points, loading at start-up).
//! - [`service`]: daemonize, pidfile, supervised, protected-mode, `--version`.

pub mod client;
pub mod commands;
pub mod config;
pub mod db;
pub mod glob;
pub mod log;
pub mod net;
pub mod numbers;
pub mod rdb;
pub mod resp;
pub mod server;
pub mod service;
pub mod stats;
pub mod zset_commands;
