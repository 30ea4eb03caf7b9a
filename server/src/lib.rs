//! Goblin Core: a Redis 7.2-compatible server whose values are sorted sets, strings, sets,
//! hashes and lists, with the object cache (Goblin Store) co-hosted in the same process.
//!
//! # Modules
//!
//! - [`net`]: the RESP handler on the shared event loop (goblin-evloop), the connections'
//!   buffers and limits.
//! - [`clients`]: the client registry (each client's state: database, MULTI queue, WATCHes,
//!   blocking) through which commands see the other clients.
//! - [`resp`]: request parsing and reply encoding (RESP2 and RESP3).
//! - [`commands`]: the command table, dispatch, and the generic command handlers.
//! - [`zset_commands`]: the sorted-set commands (Z*, BZ*, GOBLIN.*).
//! - [`string_commands`]: the string commands (SET, GET, INCR, APPEND, ...).
//! - [`set_commands`]: the set commands (S*).
//! - [`hash_commands`]: the hash commands (H*).
//! - [`geo_commands`]: the geo commands (GEO*), on sorted sets.
//! - [`hll_commands`]: the HyperLogLog commands (PF*), on strings.
//! - [`sort_commands`]: SORT and SORT_RO.
//! - [`list_commands`]: the list commands (L*, R*, BL*, BR*).
//! - [`stream_commands`]: the stream commands (X*).
//! - [`scripting`]: Lua scripting (EVAL, EVALSHA, SCRIPT) on an embedded Lua 5.1.
//! - [`acl`]: users, command / key / channel rules and the permission check (ACL, AUTH).
//! - [`errors`]: the error replies Redis words one way.
//! - [`keyspace`]: the databases, expiry, WATCH, waited-on keys, lazy free, change counter,
//!   and the value types.
//! - [`cluster`]: Redis Cluster: hash slots, nodes.conf, the cluster bus, the cluster
//!   state that routing and CLUSTER use.
//! - [`pubsub`]: the channel / pattern / shard channel registry, each client's
//!   subscriptions, and the frames pushed to subscribers.
//! - [`tracking`]: client-side caching's tables (CLIENT TRACKING): who read which key, the
//!   BCAST prefixes, and the invalidation frames.
//! - [`propagate`]: the stream of commands that replays every change (SELECT, MULTI/EXEC,
//!   the deterministic rewrites), which the AOF consumes.
//! - [`aof`]: the append-only file (Redis 7's directory of base and incremental files):
//!   writing, fsync policies, BGREWRITEAOF, loading.
//! - [`rdb`]: RDB snapshots: save (foreground and by fork), save points, load; DUMP payloads.
//! - [`migrate`]: MIGRATE's cached blocking connections to other servers.
//! - [`replication`]: replication with Redis's protocol: Goblin as a master (SYNC / PSYNC,
//!   the backlog, full syncs by fork, WAIT) and as a replica (the link to the master on the
//!   event loop, the stream applied as the master client).
//! - [`server`]: the server state that wires them: config, keyspace, connections, stats.
//! - [`config`]: command line, redis.conf and CONFIG parameters.
//! - [`stats`]: counters behind INFO stats, commandstats and errorstats.
//! - [`log`]: Redis-style log lines.
//! - [`latency`]: the latency monitor (latency-monitor-threshold, LATENCY).
//! - [`lolwut`]: LOLWUT's computer art (versions 5 and 6).
//! - [`memory`]: maxmemory: the allocator's figure, eviction before commands, OOM.
//! - [`service`]: daemonize, pidfile, supervised, protected-mode, `--version`.
//! - [`clock`], [`numbers`], [`glob`], [`rng`]: Unix time, Redis's number texts, glob
//!   patterns, the pseudo-random generator.
//!
//! # The path of a request
//!
//! ```text
//! socket -> net (read into the connection's buffer; its client leased from `clients`)
//!        -> resp::parse (one request's arguments)
//!        -> commands (table lookup, arity / auth / MULTI checks, dispatch to a handler)
//!        -> keyspace (lookup for read or write, expiry, signals to WATCH and waiters)
//!        -> engine (goblin-zset: sorted sets, and sets, hashes, lists and geohashes in
//!           goblin_zset::{set, hash, list, geo})
//!        <- resp::reply into the connection's write buffer <- net (one write per batch;
//!           the client restored to `clients`, the clients its commands woke serviced)
//!
//! rdb -> keyspace (save reads the databases; load builds them and replaces them)
//! commands -> propagate -> aof (each write's replay into the append-only file)
//!                        -> replication (the same stream to the backlog and the replicas)
//! master link -> replication::replica -> commands (the master's stream, as its client)
//! ```
//!
//! Dependencies run one way: net -> commands -> keyspace -> engine, and rdb -> keyspace;
//! commands reach other clients through `clients`, never a connection; neither `keyspace`
//! nor `rdb` names `commands` or `net`.

#![warn(missing_docs)]

/// The Redis version Goblin follows; clients gate features on it.
pub const REDIS_VERSION: &str = "7.2.4";

pub mod acl;
pub mod aof;
pub mod clients;
pub mod clock;
pub mod cluster;
pub mod commands;
pub mod config;
pub mod config_rewrite;
pub mod errors;
pub mod geo_commands;
pub mod glob;
pub mod hash_commands;
pub mod hll_commands;
pub mod hotkeys;
pub mod keyspace;
pub mod latency;
pub mod list_commands;
pub mod log;
pub mod lolwut;
pub mod memory;
pub mod migrate;
pub mod net;
pub mod numbers;
pub mod propagate;
pub mod pubsub;
pub mod rdb;
pub mod replication;
pub mod resp;
pub mod rng;
pub mod scripting;
pub mod server;
pub mod service;
pub mod set_commands;
pub mod sort_commands;
pub mod stats;
pub mod stream_commands;
pub mod string_commands;
pub mod syslog;
pub mod tracking;
pub mod zset_commands;
