//! Configuration: the command line (clap), redis.conf-style files, and the runtime
//! parameters that CONFIG GET / CONFIG SET read and change.

use crate::glob::glob_match;
use crate::memory::config::MemoryConfig;
use crate::resp::parse::split_args;
use crate::service::directives;
use clap::Parser;

/// Command line of goblin-server.
#[derive(Parser, Debug, Default)]
#[command(
    name = "goblin-server",
    about = "Goblin: a Redis-compatible sorted-set server with a co-hosted object cache.",
    after_help = "Any redis.conf directive may follow as --name value... (--port 6379, --bind, \
                  --requirepass, --loglevel, --logfile, --enable-debug-command yes, --hz 10, \
                  Goblin's --busy-poll-us MICROS, ...), read after the configuration file's lines \
                  as Redis reads them."
)]
pub struct Args {
    /// A redis.conf-style file; its directives apply first and flags override them.
    pub config_file: Option<std::path::PathBuf>,
    /// The command line's `--directive value...` options as configuration lines, read after
    /// the file's (see [`crate::service::cmdline`]).
    #[arg(skip)]
    pub options: String,
    /// Goblin Store, the object cache: off unless one of its flags is given.
    #[command(flatten)]
    pub store: goblin_objcache::StoreArgs,
}

/// Log verbosity, as redis.conf names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogLevel {
    /// Everything.
    Debug,
    /// Chatty.
    Verbose,
    /// The default.
    Notice,
    /// Only problems.
    Warning,
    /// Silence.
    Nothing,
}

impl LogLevel {
    const NAMES: [&'static str; 5] = ["debug", "verbose", "notice", "warning", "nothing"];

    fn parse(s: &str) -> Option<LogLevel> {
        Some(match s.to_ascii_lowercase().as_str() {
            "debug" => LogLevel::Debug,
            "verbose" => LogLevel::Verbose,
            "notice" => LogLevel::Notice,
            "warning" => LogLevel::Warning,
            "nothing" => LogLevel::Nothing,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }
}

/// Limits of the normal client class (client-output-buffer-limit normal HARD SOFT SECONDS).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OutputLimit {
    /// Disconnect at once past this many pending reply bytes (0: none).
    pub hard: u64,
    /// Disconnect when past this many bytes for `soft_seconds` (0: none).
    pub soft: u64,
    /// See `soft`.
    pub soft_seconds: u64,
}

/// The runtime configuration.
#[derive(Debug, Clone)]
pub struct Config {
    /// port
    pub port: u16,
    /// bind
    pub bind: Vec<String>,
    /// requirepass (None: no password)
    pub requirepass: Option<Vec<u8>>,
    /// databases
    pub databases: usize,
    /// maxclients
    pub maxclients: usize,
    /// loglevel
    pub loglevel: LogLevel,
    /// logfile
    pub logfile: String,
    /// zset-max-listpack-entries / zset-max-listpack-value
    pub zset: goblin_zset::Config,
    /// set-max-intset-entries / set-max-listpack-entries / set-max-listpack-value
    pub set: goblin_zset::set::SetConfig,
    /// hash-max-listpack-entries / hash-max-listpack-value
    pub hash: goblin_zset::hash::HashConfig,
    /// list-max-listpack-size, list-compress-depth
    pub list: goblin_zset::list::ListConfig,
    /// stream-node-max-bytes, stream-node-max-entries
    pub stream: goblin_zset::stream::StreamConfig,
    /// hll-sparse-max-bytes: longest sparse HyperLogLog string before it turns dense.
    pub hll_sparse_max_bytes: usize,
    /// busy-poll-us: how long the event loop keeps polling without sleeping after traffic
    /// (start-up only, Goblin's own; 0 is off).
    pub busy_poll_us: u64,
    /// proto-max-bulk-len
    pub proto_max_bulk_len: i64,
    /// client-query-buffer-limit
    pub client_query_buffer_limit: u64,
    /// client-output-buffer-limit, normal class.
    pub output_limit: OutputLimit,
    /// client-output-buffer-limit, replica class.
    pub replica_output_limit: OutputLimit,
    /// client-output-buffer-limit, pubsub class (clients with a subscription).
    pub pubsub_output_limit: OutputLimit,
    /// hz: active expiry and timeouts run this many times a second.
    pub hz: u32,
    /// timeout: close idle clients after this many seconds (0: never).
    pub timeout: u64,
    /// slowlog-log-slower-than, microseconds (negative: off).
    pub slowlog_log_slower_than: i64,
    /// slowlog-max-len
    pub slowlog_max_len: usize,
    /// tracking-table-max-keys (0: no limit)
    pub tracking_table_max_keys: usize,
    /// busy-reply-threshold (alias lua-time-limit): milliseconds after which a running
    /// script makes the server busy (0: never).
    pub busy_reply_threshold: u64,
    /// enable-debug-command: no, yes or local (see [`protected_action_allowed`]).
    pub enable_debug_command: String,
    /// enable-protected-configs: whether CONFIG SET may change the [`PROTECTED`]
    /// parameters: no, yes or local.
    pub enable_protected_configs: String,
    /// enable-module-command: no, yes or local (MODULE LOAD, LOADEX, UNLOAD).
    pub enable_module_command: String,
    /// save: snapshot points as (seconds, changes); empty means no automatic snapshots.
    pub save: Vec<(u64, u64)>,
    /// dir: the directory of the snapshot, absolute.
    pub dir: std::path::PathBuf,
    /// dbfilename: the snapshot's file name in `dir`.
    pub dbfilename: String,
    /// rdb-skip-unsupported-types: load a snapshot holding keys of other types by skipping
    /// them (and logging how many) instead of refusing it.
    pub rdb_skip_unsupported_types: bool,
    /// sanitize-dump-payload: no, yes or clients (see [`crate::rdb::deep_sanitize`]).
    pub sanitize_dump_payload: String,
    /// daemonize: detach from the terminal at start.
    pub daemonize: bool,
    /// pidfile: the file the pid is written to at start ("" none, unless daemonized).
    pub pidfile: String,
    /// supervised: no, upstart, systemd or auto.
    pub supervised: String,
    /// protected-mode: without a password, only loopback clients are served.
    pub protected_mode: bool,
    /// rdbcompression: LZF-compress string values over 20 bytes in snapshots.
    pub rdbcompression: bool,
    /// rdbchecksum: snapshots end with their CRC64 and loads verify it (else the checksum
    /// written is 0 and loads do not check).
    pub rdbchecksum: bool,
    /// rdb-del-sync-files: without persistence, the snapshot files made or received for
    /// replication are removed once used.
    pub rdb_del_sync_files: bool,
    /// rdb-save-incremental-fsync: a snapshot file is synced every 4 MB written.
    pub rdb_save_incremental_fsync: bool,
    /// set-proc-title: the process title follows proc-title-template (else it stays as
    /// the server was started).
    pub set_proc_title: bool,
    /// activerehashing: the cron moves the key tables' pending resizes along (else only
    /// the commands' inserts and removals do).
    pub activerehashing: bool,
    /// active-expire-effort (1 to 10): how hard active expiry works (see
    /// [`crate::keyspace::ExpireEffort`]).
    pub active_expire_effort: u32,
    /// disable-thp: Transparent Huge Pages set to `always` are turned off for the process
    /// at start (else warned about).
    pub disable_thp: bool,
    /// locale-collate: the LC_COLLATE locale SORT ALPHA and Lua compare strings by (see
    /// [`crate::service::locale`]); empty for the environment's.
    pub locale_collate: String,
    /// ignore-warnings: the start-up system warnings not to give. Redis's one such check
    /// (ARM64-COW-BUG) is for arm64 kernels; on other machines, Redis's too, the value is
    /// kept and shown.
    pub ignore_warnings: String,
    /// crash-log-enabled: a fatal signal writes the crash report to the log (else the
    /// signal's default action, no report).
    pub crash_log_enabled: bool,
    /// The allocator's parameters, as Redis built with libc malloc has them.
    pub allocator: AllocatorParams,
    /// stop-writes-on-bgsave-error: refuse writes while the last BGSAVE failed.
    pub stop_writes_on_bgsave_error: bool,
    /// maxmemory, maxmemory-policy, maxmemory-samples, lfu-log-factor, lfu-decay-time.
    pub memory: crate::memory::config::MemoryConfig,
    /// appendonly, appendfsync and the other append-only file directives.
    pub aof: crate::aof::config::AofConfig,
    /// The replication directives (repl-*, min-replicas-*, replica-*, masterauth, replicaof).
    pub repl: crate::replication::config::ReplConfig,
    /// A `save` directive was applied at start: the next one adds points, as in redis.conf.
    save_seen_at_start: bool,
    /// aclfile: the ACL file ("": none).
    pub aclfile: String,
    /// acllog-max-len: ACL LOG's length.
    pub acllog_max_len: usize,
    /// acl-pubsub-default: allchannels (true) or resetchannels (false).
    pub acl_pubsub_default_all: bool,
    /// The `user` directives of the configuration file, checked, loaded at start.
    pub acl_users: Vec<crate::acl::file::UserDirective>,
    /// The `rename-command` directives of the configuration file.
    pub renamed_commands: crate::commands::renamed::Renames,
    /// notify-keyspace-events: the classes as [`crate::pubsub::notify`]'s bits.
    pub notify_keyspace_events: u32,
    /// latency-monitor-threshold, milliseconds (0: the latency monitor is off).
    pub latency_monitor_threshold: u64,
    /// latency-tracking and its percentiles.
    pub latency_tracking: crate::latency::tracking::TrackingConfig,
    /// oom-score-adj, oom-score-adj-values, proc-title-template.
    pub process: crate::service::process::ProcessConfig,
    /// cluster-enabled and the other cluster directives.
    pub cluster: crate::cluster::config::ClusterConfig,
    /// lazyfree-lazy-expire: a key expiry removes propagates as UNLINK (else DEL).
    pub lazyfree_lazy_expire: bool,
    /// lazyfree-lazy-eviction: a key eviction removes propagates as UNLINK (else DEL).
    pub lazyfree_lazy_eviction: bool,
    /// shutdown-timeout: seconds a shutdown waits for lagging replicas (0: no wait).
    pub shutdown_timeout: u64,
    /// shutdown-on-sigterm: the SHUTDOWN flags of a SIGTERM ([`crate::service::shutdown`]).
    pub shutdown_on_sigterm: u32,
    /// shutdown-on-sigint: the SHUTDOWN flags of a SIGINT.
    pub shutdown_on_sigint: u32,
    /// tcp-keepalive: seconds of silence before a client's socket is probed (0: off).
    pub tcp_keepalive: u64,
    /// tcp-backlog: the listen(2) backlog of the listening sockets.
    pub tcp_backlog: i32,
    /// socket-mark-id: SO_MARK of the listening sockets (0: none).
    pub socket_mark_id: u32,
    /// unixsocket: the path of the Unix socket to listen on too (empty: none).
    pub unixsocket: String,
    /// unixsocketperm: the mode of the Unix socket's file (0: as the umask leaves it).
    pub unixsocketperm: u32,
    /// syslog-enabled: log lines go to syslog too ([`crate::syslog`]).
    pub syslog_enabled: bool,
    /// syslog-ident: the program name of the syslog lines.
    pub syslog_ident: String,
    /// syslog-facility: user or local0..local7.
    pub syslog_facility: String,
    /// The configuration file the server started with, absolute (CONFIG REWRITE's target).
    pub config_file: Option<std::path::PathBuf>,
    /// always-show-logo: log the logo at start even when the log is no terminal.
    pub always_show_logo: bool,
    /// lazyfree-lazy-server-del: a key the server deletes for a command's sake (RESTORE
    /// of a past TTL, SPOP of every member) propagates as UNLINK (else DEL).
    pub lazyfree_lazy_server_del: bool,
    /// lazyfree-lazy-user-del: DEL frees a large value off the loop, as UNLINK does.
    pub lazyfree_lazy_user_del: bool,
    /// lazyfree-lazy-user-flush: FLUSHALL / FLUSHDB without SYNC or ASYNC free off the loop.
    pub lazyfree_lazy_user_flush: bool,
    /// replica-lazy-flush: a replica's full sync frees its old dataset off the loop.
    pub replica_lazy_flush: bool,
    /// use-exit-on-panic (hidden): a crash ends with exit status 1, not the signal.
    pub use_exit_on_panic: bool,
    /// key-load-delay (hidden): microseconds slept after each key loaded from a snapshot or
    /// AOF (negative -n: one microsecond with probability 1/n), to test loading.
    pub key_load_delay: i64,
    /// rdb-key-save-delay (hidden): the same after each key a snapshot writes.
    pub rdb_key_save_delay: i64,
    /// dynamic-hz: the cron's frequency doubles (up to 500) with the clients, see
    /// [`crate::server::Server::hz`].
    pub dynamic_hz: bool,
    /// loading-process-events-interval-bytes (hidden): the bytes of a master's snapshot the
    /// replica link reads between two rounds of serving the other clients.
    pub loading_events_interval: u64,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            port: 6379,
            bind: vec!["127.0.0.1".into()],
            requirepass: None,
            databases: 16,
            maxclients: 10000,
            loglevel: LogLevel::Notice,
            logfile: String::new(),
            zset: goblin_zset::Config::default(),
            set: goblin_zset::set::SetConfig::default(),
            hash: goblin_zset::hash::HashConfig::default(),
            list: goblin_zset::list::ListConfig::default(),
            stream: goblin_zset::stream::StreamConfig::default(),
            hll_sparse_max_bytes: goblin_zset::hll::DEFAULT_SPARSE_MAX_BYTES,
            busy_poll_us: 0,
            proto_max_bulk_len: 512 * 1024 * 1024,
            client_query_buffer_limit: 1024 * 1024 * 1024,
            output_limit: OutputLimit::default(),
            replica_output_limit: OutputLimit {
                hard: 256 << 20,
                soft: 64 << 20,
                soft_seconds: 60,
            },
            pubsub_output_limit: OutputLimit {
                hard: 32 << 20,
                soft: 8 << 20,
                soft_seconds: 60,
            },
            hz: 10,
            timeout: 0,
            slowlog_log_slower_than: 10000,
            slowlog_max_len: 128,
            tracking_table_max_keys: 1_000_000,
            busy_reply_threshold: 5000,
            enable_debug_command: "no".into(),
            enable_protected_configs: "no".into(),
            enable_module_command: "no".into(),
            save: vec![(3600, 1), (300, 100), (60, 10000)],
            dir: std::env::current_dir().unwrap_or_else(|_| ".".into()),
            dbfilename: "dump.rdb".into(),
            rdb_skip_unsupported_types: false,
            sanitize_dump_payload: "no".into(),
            daemonize: false,
            pidfile: String::new(),
            supervised: "no".into(),
            protected_mode: true,
            rdbcompression: true,
            rdbchecksum: true,
            rdb_save_incremental_fsync: true,
            rdb_del_sync_files: false,
            set_proc_title: true,
            activerehashing: true,
            active_expire_effort: 1,
            crash_log_enabled: true,
            disable_thp: true,
            locale_collate: String::new(),
            ignore_warnings: String::new(),
            allocator: AllocatorParams::default(),
            stop_writes_on_bgsave_error: true,
            memory: Default::default(),
            aof: Default::default(),
            repl: Default::default(),
            save_seen_at_start: false,
            aclfile: String::new(),
            acllog_max_len: 128,
            acl_pubsub_default_all: false,
            acl_users: Vec::new(),
            renamed_commands: Vec::new(),
            notify_keyspace_events: 0,
            latency_monitor_threshold: 0,
            latency_tracking: Default::default(),
            process: Default::default(),
            cluster: Default::default(),
            lazyfree_lazy_expire: false,
            lazyfree_lazy_eviction: false,
            shutdown_timeout: 10,
            shutdown_on_sigterm: 0,
            shutdown_on_sigint: 0,
            tcp_keepalive: 300,
            tcp_backlog: 511,
            socket_mark_id: 0,
            unixsocket: String::new(),
            unixsocketperm: 0,
            syslog_enabled: false,
            syslog_ident: "redis".into(),
            syslog_facility: "local0".into(),
            config_file: None,
            always_show_logo: false,
            lazyfree_lazy_server_del: false,
            lazyfree_lazy_user_del: false,
            lazyfree_lazy_user_flush: false,
            replica_lazy_flush: false,
            use_exit_on_panic: false,
            key_load_delay: 0,
            rdb_key_save_delay: 0,
            dynamic_hz: true,
            loading_events_interval: 2 << 20,
        }
    }
}

/// How a parameter may change.
#[derive(PartialEq, Eq)]
enum Mutability {
    Runtime,
    StartOnly,
}

/// Every parameter Goblin has, with its aliases (CONFIG GET answers under both names, as Redis).
const PARAMS: &[(&str, Option<&str>, Mutability)] = &[
    ("port", None, Mutability::Runtime),
    ("bind", None, Mutability::Runtime),
    ("requirepass", None, Mutability::Runtime),
    ("databases", None, Mutability::StartOnly),
    ("maxclients", None, Mutability::Runtime),
    ("loglevel", None, Mutability::Runtime),
    ("logfile", None, Mutability::StartOnly),
    (
        "zset-max-listpack-entries",
        Some("zset-max-ziplist-entries"),
        Mutability::Runtime,
    ),
    (
        "zset-max-listpack-value",
        Some("zset-max-ziplist-value"),
        Mutability::Runtime,
    ),
    ("set-max-intset-entries", None, Mutability::Runtime),
    ("set-max-listpack-entries", None, Mutability::Runtime),
    ("set-max-listpack-value", None, Mutability::Runtime),
    (
        "hash-max-listpack-entries",
        Some("hash-max-ziplist-entries"),
        Mutability::Runtime,
    ),
    (
        "hash-max-listpack-value",
        Some("hash-max-ziplist-value"),
        Mutability::Runtime,
    ),
    (
        "list-max-listpack-size",
        Some("list-max-ziplist-size"),
        Mutability::Runtime,
    ),
    ("list-compress-depth", None, Mutability::Runtime),
    ("stream-node-max-bytes", None, Mutability::Runtime),
    ("stream-node-max-entries", None, Mutability::Runtime),
    ("hll-sparse-max-bytes", None, Mutability::Runtime),
    ("proto-max-bulk-len", None, Mutability::Runtime),
    ("client-query-buffer-limit", None, Mutability::Runtime),
    ("client-output-buffer-limit", None, Mutability::Runtime),
    ("hz", None, Mutability::Runtime),
    ("timeout", None, Mutability::Runtime),
    ("slowlog-log-slower-than", None, Mutability::Runtime),
    ("slowlog-max-len", None, Mutability::Runtime),
    ("tracking-table-max-keys", None, Mutability::Runtime),
    (
        "busy-reply-threshold",
        Some("lua-time-limit"),
        Mutability::Runtime,
    ),
    ("enable-debug-command", None, Mutability::StartOnly),
    ("enable-protected-configs", None, Mutability::StartOnly),
    ("enable-module-command", None, Mutability::StartOnly),
    ("appendonly", None, Mutability::Runtime),
    ("appendfilename", None, Mutability::StartOnly),
    ("appenddirname", None, Mutability::StartOnly),
    ("appendfsync", None, Mutability::Runtime),
    ("no-appendfsync-on-rewrite", None, Mutability::Runtime),
    ("auto-aof-rewrite-percentage", None, Mutability::Runtime),
    ("auto-aof-rewrite-min-size", None, Mutability::Runtime),
    ("aof-use-rdb-preamble", None, Mutability::Runtime),
    ("aof-load-truncated", None, Mutability::Runtime),
    ("aof-timestamp-enabled", None, Mutability::Runtime),
    ("aof-rewrite-incremental-fsync", None, Mutability::Runtime),
    ("rdb-save-incremental-fsync", None, Mutability::Runtime),
    ("rdb-del-sync-files", None, Mutability::Runtime),
    ("aof-disable-auto-gc", None, Mutability::Runtime),
    ("save", None, Mutability::Runtime),
    ("dir", None, Mutability::Runtime),
    ("dbfilename", None, Mutability::Runtime),
    ("rdb-skip-unsupported-types", None, Mutability::Runtime),
    ("sanitize-dump-payload", None, Mutability::Runtime),
    ("busy-poll-us", None, Mutability::StartOnly),
    ("daemonize", None, Mutability::StartOnly),
    ("pidfile", None, Mutability::StartOnly),
    ("supervised", None, Mutability::StartOnly),
    ("protected-mode", None, Mutability::Runtime),
    ("rdbcompression", None, Mutability::Runtime),
    ("rdbchecksum", None, Mutability::StartOnly),
    ("set-proc-title", None, Mutability::StartOnly),
    ("activerehashing", None, Mutability::Runtime),
    ("active-expire-effort", None, Mutability::Runtime),
    ("crash-log-enabled", None, Mutability::Runtime),
    ("disable-thp", None, Mutability::StartOnly),
    ("ignore-warnings", None, Mutability::Runtime),
    ("locale-collate", None, Mutability::Runtime),
    ("activedefrag", None, Mutability::Runtime),
    ("active-defrag-cycle-min", None, Mutability::Runtime),
    ("active-defrag-cycle-max", None, Mutability::Runtime),
    ("active-defrag-threshold-lower", None, Mutability::Runtime),
    ("active-defrag-threshold-upper", None, Mutability::Runtime),
    ("active-defrag-max-scan-fields", None, Mutability::Runtime),
    ("active-defrag-ignore-bytes", None, Mutability::Runtime),
    ("jemalloc-bg-thread", None, Mutability::Runtime),
    ("stop-writes-on-bgsave-error", None, Mutability::Runtime),
    ("maxmemory", None, Mutability::Runtime),
    ("maxmemory-policy", None, Mutability::Runtime),
    ("maxmemory-samples", None, Mutability::Runtime),
    ("maxmemory-eviction-tenacity", None, Mutability::Runtime),
    ("maxmemory-clients", None, Mutability::Runtime),
    ("lfu-log-factor", None, Mutability::Runtime),
    ("lfu-decay-time", None, Mutability::Runtime),
    ("aclfile", None, Mutability::StartOnly),
    ("acllog-max-len", None, Mutability::Runtime),
    ("acl-pubsub-default", None, Mutability::Runtime),
    ("notify-keyspace-events", None, Mutability::Runtime),
    ("latency-monitor-threshold", None, Mutability::Runtime),
    ("latency-tracking", None, Mutability::Runtime),
    (
        "latency-tracking-info-percentiles",
        None,
        Mutability::Runtime,
    ),
    ("oom-score-adj", None, Mutability::Runtime),
    ("oom-score-adj-values", None, Mutability::Runtime),
    ("proc-title-template", None, Mutability::Runtime),
    ("server_cpulist", None, Mutability::StartOnly),
    ("bio_cpulist", None, Mutability::StartOnly),
    ("aof_rewrite_cpulist", None, Mutability::StartOnly),
    ("bgsave_cpulist", None, Mutability::StartOnly),
    ("lazyfree-lazy-expire", None, Mutability::Runtime),
    ("lazyfree-lazy-eviction", None, Mutability::Runtime),
    ("shutdown-timeout", None, Mutability::Runtime),
    ("shutdown-on-sigterm", None, Mutability::Runtime),
    ("shutdown-on-sigint", None, Mutability::Runtime),
    ("always-show-logo", None, Mutability::StartOnly),
    ("lazyfree-lazy-server-del", None, Mutability::Runtime),
    ("lazyfree-lazy-user-del", None, Mutability::Runtime),
    ("lazyfree-lazy-user-flush", None, Mutability::Runtime),
    (
        "replica-lazy-flush",
        Some("slave-lazy-flush"),
        Mutability::Runtime,
    ),
    ("use-exit-on-panic", None, Mutability::Runtime),
    ("key-load-delay", None, Mutability::Runtime),
    ("rdb-key-save-delay", None, Mutability::Runtime),
    ("dynamic-hz", None, Mutability::Runtime),
    (
        "loading-process-events-interval-bytes",
        None,
        Mutability::Runtime,
    ),
    ("repl-backlog-size", None, Mutability::Runtime),
    ("repl-diskless-sync", None, Mutability::Runtime),
    ("repl-diskless-sync-delay", None, Mutability::Runtime),
    ("repl-diskless-sync-max-replicas", None, Mutability::Runtime),
    (
        "repl-ping-replica-period",
        Some("repl-ping-slave-period"),
        Mutability::Runtime,
    ),
    ("repl-timeout", None, Mutability::Runtime),
    (
        "min-replicas-to-write",
        Some("min-slaves-to-write"),
        Mutability::Runtime,
    ),
    (
        "min-replicas-max-lag",
        Some("min-slaves-max-lag"),
        Mutability::Runtime,
    ),
    (
        "replica-read-only",
        Some("slave-read-only"),
        Mutability::Runtime,
    ),
    (
        "replica-ignore-disk-write-errors",
        None,
        Mutability::Runtime,
    ),
    ("repl-disable-tcp-nodelay", None, Mutability::Runtime),
    (
        "replica-serve-stale-data",
        Some("slave-serve-stale-data"),
        Mutability::Runtime,
    ),
    ("masterauth", None, Mutability::Runtime),
    ("masteruser", None, Mutability::Runtime),
    ("repl-backlog-ttl", None, Mutability::Runtime),
    ("repl-diskless-load", None, Mutability::Runtime),
    (
        "replica-ignore-maxmemory",
        Some("slave-ignore-maxmemory"),
        Mutability::Runtime,
    ),
    (
        "replica-priority",
        Some("slave-priority"),
        Mutability::Runtime,
    ),
    (
        "replica-announce-ip",
        Some("slave-announce-ip"),
        Mutability::Runtime,
    ),
    (
        "replica-announce-port",
        Some("slave-announce-port"),
        Mutability::Runtime,
    ),
    ("replica-announced", None, Mutability::Runtime),
    ("propagation-error-behavior", None, Mutability::Runtime),
    ("bind-source-addr", None, Mutability::Runtime),
    ("tcp-keepalive", None, Mutability::Runtime),
    ("tcp-backlog", None, Mutability::StartOnly),
    ("socket-mark-id", None, Mutability::StartOnly),
    ("unixsocket", None, Mutability::StartOnly),
    ("unixsocketperm", None, Mutability::StartOnly),
    ("syslog-enabled", None, Mutability::StartOnly),
    ("syslog-ident", None, Mutability::StartOnly),
    ("syslog-facility", None, Mutability::StartOnly),
];

/// The values of the enable-*-command and enable-protected-configs parameters.
const PROTECTION: [&str; 3] = ["no", "yes", "local"];

/// Whether an action guarded by an enable-* parameter set to `value` is allowed to a
/// client, local when it connected from a loopback address: `yes` allows it to every
/// client, `local` to local ones, `no` (the default) to none, as Redis's
/// allowProtectedAction.
pub fn protected_action_allowed(value: &str, local: bool) -> bool {
    value == "yes" || (value == "local" && local)
}

/// The parameters CONFIG SET changes only as enable-protected-configs allows (Redis 7.2's
/// PROTECTED_CONFIG ones): where snapshots are written, so a client cannot make SAVE
/// write the keyspace over a file of its choosing. Files and flags set them freely.
pub const PROTECTED: [&str; 2] = ["dir", "dbfilename"];

/// Goblin's own parameters: CONFIG GET lists them only when asked by their exact name, so
/// that `CONFIG GET *` stays a subset of Redis's parameters.
const GOBLIN_ONLY: &[&str] = &["rdb-skip-unsupported-types", "busy-poll-us"];

/// Redis's hidden parameters (test-only): CONFIG GET lists them only when asked by their
/// exact name, as Redis does.
const HIDDEN: &[&str] = &[
    "use-exit-on-panic",
    "key-load-delay",
    "rdb-key-save-delay",
    "loading-process-events-interval-bytes",
    "cluster-ping-interval",
    "aof-disable-auto-gc",
];

/// The parameters whose value is several words in a file (Redis's MULTI_ARG_CONFIG ones);
/// every other parameter takes exactly one.
const MULTI_WORD: &[&str] = &[
    "bind",
    "save",
    "client-output-buffer-limit",
    "shutdown-on-sigterm",
    "shutdown-on-sigint",
    "latency-tracking-info-percentiles",
    "oom-score-adj-values",
];

/// Why a directive was refused.
#[derive(Debug, PartialEq, Eq)]
pub enum ConfigError {
    /// Not a parameter Goblin has.
    Unknown,
    /// Exists but cannot change at run time.
    Immutable,
    /// The value is not acceptable; the text says why.
    BadValue(String),
}

impl Config {
    /// How the listening sockets are set up (tcp-backlog, socket-mark-id).
    pub fn sockets(&self) -> crate::net::listen::Sockets {
        crate::net::listen::Sockets {
            backlog: self.tcp_backlog,
            mark: self.socket_mark_id,
        }
    }

    /// Which of the server's own removals are lazy (lazyfree-lazy-expire, -eviction and
    /// -server-del).
    pub fn lazy_removals(&self) -> crate::keyspace::LazyRemovals {
        crate::keyspace::LazyRemovals {
            expired: self.lazyfree_lazy_expire,
            evicted: self.lazyfree_lazy_eviction,
            server_del: self.lazyfree_lazy_server_del,
        }
    }

    /// Builds the configuration from the command line and the optional file. Returns the
    /// configuration and the file's directives that Goblin does not have (to be logged).
    pub fn from_args(args: &Args) -> anyhow::Result<(Config, Vec<String>)> {
        let mut config = Config::default();
        let mut ignored = Vec::new();
        // As Redis: the file's text, then the options as more lines, numbered on from it.
        let mut text = String::new();
        if let Some(path) = &args.config_file {
            config.config_file = Some(std::path::absolute(path)?);
            text = std::fs::read_to_string(path)
                .map_err(|e| anyhow::anyhow!("can't open config file '{}': {e}", path.display()))?;
        }
        if !args.options.is_empty() {
            text.push('\n');
            text.push_str(&args.options);
        }
        for (lineno, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let fatal = |why: &str| {
                anyhow::Error::new(directives::fatal_config_error(Some(lineno + 1), line, why))
            };
            let words = split_args(line.as_bytes())
                .ok_or_else(|| fatal("Unbalanced quotes in configuration line"))?;
            let Some((name, values)) = words.split_first() else {
                continue;
            };
            let name = String::from_utf8_lossy(name).to_ascii_lowercase();
            if name == "user" && !values.is_empty() {
                let user = crate::acl::file::directive(values, &config.acl_users)
                    .map_err(|why| fatal(&why))?;
                config.acl_users.push(user);
                continue;
            }
            if name == "rename-command" {
                let [old, new] = values else {
                    return Err(fatal(directives::BAD_DIRECTIVE));
                };
                crate::commands::renamed::add(&mut config.renamed_commands, old, new)
                    .map_err(&fatal)?;
                continue;
            }
            if values.len() != 1
                && Config::canonical(&name).is_some_and(|n| !MULTI_WORD.contains(&n))
            {
                return Err(fatal("wrong number of arguments"));
            }
            let value = values
                .iter()
                .map(|v| String::from_utf8_lossy(v).into_owned())
                .collect::<Vec<_>>()
                .join(" ");
            config.apply_at_start(name, value.as_bytes(), &mut ignored, fatal)?;
        }
        Ok((config, ignored))
    }

    /// Applies one start-up directive: a directive Redis has and Goblin does not joins
    /// `ignored`; one neither has, or a bad value, is the error `fatal` makes of the reason.
    fn apply_at_start(
        &mut self,
        name: String,
        value: &[u8],
        ignored: &mut Vec<String>,
        fatal: impl Fn(&str) -> anyhow::Error,
    ) -> anyhow::Result<()> {
        match self.apply(&name, value, true) {
            Ok(()) => Ok(()),
            Err(ConfigError::Unknown) if directives::is_redis_directive(&name) => {
                if let Some(why) = directives::tls_refusal(&name, value) {
                    return Err(fatal(&why));
                }
                ignored.push(name);
                Ok(())
            }
            Err(ConfigError::Unknown) => Err(fatal(directives::BAD_DIRECTIVE)),
            Err(ConfigError::BadValue(why)) => Err(fatal(&why)),
            Err(ConfigError::Immutable) => unreachable!("start-up applies immutable parameters"),
        }
    }

    /// Every parameter's canonical name, Goblin's and the cluster's.
    pub(crate) fn parameter_names() -> impl Iterator<Item = &'static str> {
        PARAMS
            .iter()
            .map(|p| p.0)
            .chain(crate::cluster::config::PARAMS.iter().map(|p| p.0))
    }

    /// The canonical name of a parameter or alias.
    pub(crate) fn canonical(name: &str) -> Option<&'static str> {
        PARAMS
            .iter()
            .find(|(n, alias, _)| *n == name || *alias == Some(name))
            .map(|(n, _, _)| *n)
            .or_else(|| {
                crate::cluster::config::PARAMS
                    .iter()
                    .find(|(n, alias, _)| *n == name || *alias == Some(name))
                    .map(|(n, _, _)| *n)
            })
    }

    /// The canonical name of parameter `name` if CONFIG SET may change it: Unknown or
    /// Immutable (a start-only parameter) otherwise.
    pub fn settable(name: &str) -> Result<&'static str, ConfigError> {
        let canonical = Self::canonical(name).ok_or(ConfigError::Unknown)?;
        let start_only = match crate::cluster::config::PARAMS
            .iter()
            .find(|p| p.0 == canonical)
        {
            Some((_, _, start_only)) => *start_only,
            None => PARAMS
                .iter()
                .any(|p| p.0 == canonical && p.2 == Mutability::StartOnly),
        };
        match start_only {
            true => Err(ConfigError::Immutable),
            false => Ok(canonical),
        }
    }

    /// Applies one parameter; `at_start` allows the start-only ones.
    pub fn apply(&mut self, name: &str, value: &[u8], at_start: bool) -> Result<(), ConfigError> {
        if at_start && (name == "replicaof" || name == "slaveof") {
            // A directive of the file and the command line, not a CONFIG parameter.
            return self.repl.set_replicaof(&String::from_utf8_lossy(value));
        }
        let canonical = match Self::settable(name) {
            Err(ConfigError::Immutable) if at_start => Self::canonical(name).expect("known"),
            checked => checked?,
        };
        if crate::cluster::config::PARAMS
            .iter()
            .any(|p| p.0 == canonical)
        {
            let text = String::from_utf8_lossy(value);
            return crate::cluster::config::apply(&mut self.cluster, canonical, &text);
        }
        let text = String::from_utf8_lossy(value).into_owned();
        match canonical {
            "port" => self.port = int_in(&text, 0, 65535)? as u16,
            "bind" => self.bind = text.split_whitespace().map(str::to_owned).collect(),
            "requirepass" => self.requirepass = (!value.is_empty()).then(|| value.to_vec()),
            "databases" => self.databases = int_in(&text, 1, i32::MAX as i64)? as usize,
            "maxclients" => self.maxclients = int_in(&text, 1, u32::MAX as i64)? as usize,
            "loglevel" => {
                self.loglevel =
                    LogLevel::parse(&one_of(&text, &LogLevel::NAMES)?).expect("a level's name")
            }
            "logfile" => self.logfile = text,
            // An integer parameter in Redis (the -value one is a memory parameter).
            "zset-max-listpack-entries" => {
                self.zset.max_listpack_entries = int_in(&text, 0, i64::MAX)? as usize
            }
            "zset-max-listpack-value" => {
                self.zset.max_listpack_value = memory_in(&text, 0, i64::MAX as u64)? as usize
            }
            // Size parameters in Redis 7.2 (the -value one a memory parameter).
            "set-max-intset-entries" => {
                self.set.max_intset_entries = int_in(&text, 0, i64::MAX)? as usize
            }
            "set-max-listpack-entries" => {
                self.set.max_listpack_entries = int_in(&text, 0, i64::MAX)? as usize
            }
            "set-max-listpack-value" => {
                self.set.max_listpack_value = memory_in(&text, 0, i64::MAX as u64)? as usize
            }
            // Size parameters in Redis 7.2 (the -value one a memory parameter).
            "hash-max-listpack-entries" => {
                self.hash.max_listpack_entries = int_in(&text, 0, i64::MAX)? as usize
            }
            "hash-max-listpack-value" => {
                self.hash.max_listpack_value = memory_in(&text, 0, i64::MAX as u64)? as usize
            }
            "list-max-listpack-size" => {
                self.list.max_listpack_size = int_in(&text, i32::MIN as i64, i32::MAX as i64)?
            }
            // As Redis, a quicklist keeps the depth it was made with: a new one takes this.
            "list-compress-depth" => self.list.compress_depth = int_in(&text, 0, i32::MAX as i64)?,
            "stream-node-max-bytes" => {
                self.stream.node_max_bytes = memory_in(&text, 0, i64::MAX as u64)? as usize
            }
            "stream-node-max-entries" => {
                self.stream.node_max_entries = int_in(&text, 0, i64::MAX)? as usize
            }
            // A memory parameter in Redis 7.2.
            "hll-sparse-max-bytes" => {
                self.hll_sparse_max_bytes = memory_in(&text, 0, i64::MAX as u64)? as usize
            }
            "proto-max-bulk-len" => {
                self.proto_max_bulk_len = memory_in(&text, 1024 * 1024, i64::MAX as u64)? as i64
            }
            "client-query-buffer-limit" => {
                self.client_query_buffer_limit = memory_in(&text, 1024 * 1024, i64::MAX as u64)?
            }
            "client-output-buffer-limit" => self.set_output_limits(&text)?,
            "hz" => self.hz = int_in(&text, 0, i32::MAX as i64)?.clamp(1, 500) as u32,
            "timeout" => self.timeout = int_in(&text, 0, i32::MAX as i64)? as u64,
            "slowlog-log-slower-than" => {
                self.slowlog_log_slower_than = int_in(&text, i64::MIN, i64::MAX)?
            }
            "slowlog-max-len" => self.slowlog_max_len = int_in(&text, 0, i64::MAX)? as usize,
            "tracking-table-max-keys" => {
                self.tracking_table_max_keys = int_in(&text, 0, i64::MAX)? as usize
            }
            "busy-reply-threshold" => {
                self.busy_reply_threshold = int_in(&text, 0, i64::MAX)? as u64
            }
            "enable-debug-command" => self.enable_debug_command = one_of(&text, &PROTECTION)?,
            "enable-protected-configs" => {
                self.enable_protected_configs = one_of(&text, &PROTECTION)?
            }
            "enable-module-command" => self.enable_module_command = one_of(&text, &PROTECTION)?,
            "appendonly" => self.aof.enabled = yes_no(&text)?,
            "appendfilename" => self.aof.filename = base_name(&text, "appendfilename", "filename")?,
            "appenddirname" => self.aof.dirname = base_name(&text, "appenddirname", "dirname")?,
            "appendfsync" => {
                let name = one_of(&text, &crate::aof::config::Fsync::NAMES)?;
                self.aof.fsync = crate::aof::config::Fsync::named(&name).expect("a mode's name");
            }
            "no-appendfsync-on-rewrite" => self.aof.no_fsync_on_rewrite = yes_no(&text)?,
            "auto-aof-rewrite-percentage" => {
                self.aof.auto_rewrite_percentage = int_in(&text, 0, i32::MAX as i64)? as u64
            }
            "auto-aof-rewrite-min-size" => {
                self.aof.auto_rewrite_min_size = memory_in(&text, 0, i64::MAX as u64)?
            }
            "aof-use-rdb-preamble" => self.aof.use_rdb_preamble = yes_no(&text)?,
            "aof-load-truncated" => self.aof.load_truncated = yes_no(&text)?,
            "aof-timestamp-enabled" => self.aof.timestamp_enabled = yes_no(&text)?,
            "aof-rewrite-incremental-fsync" => self.aof.rewrite_incremental_fsync = yes_no(&text)?,
            "rdb-save-incremental-fsync" => self.rdb_save_incremental_fsync = yes_no(&text)?,
            "rdb-del-sync-files" => self.rdb_del_sync_files = yes_no(&text)?,
            "aof-disable-auto-gc" => self.aof.disable_auto_gc = yes_no(&text)?,
            "save" => {
                let points = parse_save_points(&text)?;
                if at_start && self.save_seen_at_start && !points.is_empty() {
                    self.save.extend(points);
                } else {
                    self.save = points;
                }
                self.save_seen_at_start |= at_start;
            }
            "dir" => {
                let path = std::fs::canonicalize(&text)
                    .ok()
                    .filter(|p| p.is_dir())
                    .ok_or_else(|| ConfigError::BadValue("No such file or directory".into()))?;
                self.dir = path;
            }
            "dbfilename" => {
                if text.is_empty() || text.contains('/') {
                    return Err(ConfigError::BadValue(
                        "dbfilename can't be a path, just a filename".into(),
                    ));
                }
                self.dbfilename = text;
            }
            "rdb-skip-unsupported-types" => self.rdb_skip_unsupported_types = yes_no(&text)?,
            "sanitize-dump-payload" => {
                self.sanitize_dump_payload = one_of(&text, &["no", "yes", "clients"])?
            }
            "busy-poll-us" => self.busy_poll_us = int_in(&text, 0, i64::MAX)? as u64,
            "daemonize" => self.daemonize = yes_no(&text)?,
            "pidfile" => self.pidfile = text,
            "supervised" => self.supervised = one_of(&text, &["upstart", "systemd", "auto", "no"])?,
            "protected-mode" => self.protected_mode = yes_no(&text)?,
            "rdbcompression" => self.rdbcompression = yes_no(&text)?,
            "rdbchecksum" => self.rdbchecksum = yes_no(&text)?,
            "set-proc-title" => self.set_proc_title = yes_no(&text)?,
            "activerehashing" => self.activerehashing = yes_no(&text)?,
            "active-expire-effort" => self.active_expire_effort = int_in(&text, 1, 10)? as u32,
            "crash-log-enabled" => self.crash_log_enabled = yes_no(&text)?,
            "disable-thp" => self.disable_thp = yes_no(&text)?,
            "ignore-warnings" => self.ignore_warnings = text,
            "locale-collate" => self.locale_collate = text,
            "activedefrag" => {
                if yes_no(&text)? {
                    return Err(ConfigError::BadValue(DEFRAG_UNAVAILABLE.into()));
                }
            }
            "active-defrag-cycle-min" => self.allocator.defrag_cycle_min = int_in(&text, 1, 99)?,
            "active-defrag-cycle-max" => self.allocator.defrag_cycle_max = int_in(&text, 1, 99)?,
            "active-defrag-threshold-lower" => {
                self.allocator.defrag_threshold_lower = int_in(&text, 0, 1000)?
            }
            "active-defrag-threshold-upper" => {
                self.allocator.defrag_threshold_upper = int_in(&text, 0, 1000)?
            }
            "active-defrag-max-scan-fields" => {
                self.allocator.defrag_max_scan_fields = int_in(&text, 1, i64::MAX)?
            }
            "active-defrag-ignore-bytes" => {
                self.allocator.defrag_ignore_bytes = memory_in(&text, 1, i64::MAX as u64)?
            }
            "jemalloc-bg-thread" => self.allocator.jemalloc_bg_thread = yes_no(&text)?,
            "stop-writes-on-bgsave-error" => self.stop_writes_on_bgsave_error = yes_no(&text)?,
            "maxmemory" => self.memory.maxmemory = memory_in(&text, 0, u64::MAX)?,
            "maxmemory-policy" => {
                let names = MemoryConfig::policy_names();
                let name = one_of(&text, &names)?;
                self.memory.policy = MemoryConfig::policy_named(&name).expect("a policy's name");
            }
            "maxmemory-samples" => self.memory.samples = int_in(&text, 1, i32::MAX as i64)? as u32,
            "maxmemory-eviction-tenacity" => {
                self.memory.eviction_tenacity = int_in(&text, 0, 100)? as u32
            }
            "maxmemory-clients" => {
                self.memory.clients = crate::clients::memory::ClientsLimit::parse(&text)
                    .map_err(ConfigError::BadValue)?
            }
            "lfu-log-factor" => {
                self.memory.lfu_log_factor = int_in(&text, 0, i32::MAX as i64)? as u32
            }
            "lfu-decay-time" => {
                self.memory.lfu_decay_time = int_in(&text, 0, i32::MAX as i64)? as u32
            }
            "aclfile" => self.aclfile = text,
            "acllog-max-len" => self.acllog_max_len = int_in(&text, 0, i64::MAX)? as usize,
            "acl-pubsub-default" => {
                self.acl_pubsub_default_all =
                    one_of(&text, &["allchannels", "resetchannels"])? == "allchannels"
            }
            "notify-keyspace-events" => {
                self.notify_keyspace_events = crate::pubsub::notify::parse_flags(value)
                    .ok_or_else(|| ConfigError::BadValue(crate::pubsub::notify::BAD_CLASS.into()))?
            }
            "latency-monitor-threshold" => {
                self.latency_monitor_threshold = int_in(&text, 0, i64::MAX)? as u64
            }
            "lazyfree-lazy-expire" => self.lazyfree_lazy_expire = yes_no(&text)?,
            "lazyfree-lazy-eviction" => self.lazyfree_lazy_eviction = yes_no(&text)?,
            "shutdown-timeout" => self.shutdown_timeout = int_in(&text, 0, i32::MAX as i64)? as u64,
            "shutdown-on-sigterm" => {
                self.shutdown_on_sigterm =
                    crate::service::shutdown::parse_flags(&text).map_err(ConfigError::BadValue)?
            }
            "shutdown-on-sigint" => {
                self.shutdown_on_sigint =
                    crate::service::shutdown::parse_flags(&text).map_err(ConfigError::BadValue)?
            }
            "tcp-keepalive" => self.tcp_keepalive = int_in(&text, 0, i32::MAX as i64)? as u64,
            "tcp-backlog" => self.tcp_backlog = int_in(&text, 0, i32::MAX as i64)? as i32,
            "socket-mark-id" => self.socket_mark_id = int_in(&text, 0, u32::MAX as i64)? as u32,
            "unixsocket" => self.unixsocket = text,
            "unixsocketperm" => self.unixsocketperm = octal_in(&text, 0o777)?,
            "always-show-logo" => self.always_show_logo = yes_no(&text)?,
            "lazyfree-lazy-server-del" => self.lazyfree_lazy_server_del = yes_no(&text)?,
            "lazyfree-lazy-user-del" => self.lazyfree_lazy_user_del = yes_no(&text)?,
            "lazyfree-lazy-user-flush" => self.lazyfree_lazy_user_flush = yes_no(&text)?,
            "replica-lazy-flush" => self.replica_lazy_flush = yes_no(&text)?,
            "use-exit-on-panic" => self.use_exit_on_panic = yes_no(&text)?,
            "key-load-delay" => {
                self.key_load_delay = int_in(&text, i32::MIN as i64, i32::MAX as i64)?
            }
            "rdb-key-save-delay" => {
                self.rdb_key_save_delay = int_in(&text, i32::MIN as i64, i32::MAX as i64)?
            }
            "dynamic-hz" => self.dynamic_hz = yes_no(&text)?,
            "loading-process-events-interval-bytes" => {
                self.loading_events_interval = int_in(&text, 1024, i32::MAX as i64)? as u64
            }
            "syslog-enabled" => self.syslog_enabled = yes_no(&text)?,
            "syslog-ident" => self.syslog_ident = text,
            "syslog-facility" => self.syslog_facility = one_of(&text, &crate::syslog::FACILITIES)?,
            repl if crate::replication::config::NAMES.contains(&repl) => {
                self.repl.apply(repl, value)?
            }
            name if crate::latency::tracking::NAMES.contains(&name) => {
                self.latency_tracking.apply(name, &text)?
            }
            name if crate::service::process::NAMES.contains(&name) => {
                self.process.apply(name, &text)?
            }
            _ => unreachable!("every canonical name is handled"),
        }
        Ok(())
    }

    /// Sets the classes named in `text` ("class hard soft seconds" groups); the classes not
    /// named keep their limits. Nothing changes unless every group is valid.
    fn set_output_limits(&mut self, text: &str) -> Result<(), ConfigError> {
        let words: Vec<&str> = text.split_whitespace().collect();
        if words.is_empty() || !words.len().is_multiple_of(4) {
            return Err(ConfigError::BadValue(
                "Wrong number of arguments in buffer limit configuration.".into(),
            ));
        }
        let mut parsed = Vec::new();
        for class in words.chunks(4) {
            let class_index = match class[0].to_ascii_lowercase().as_str() {
                "normal" => 0,
                "slave" | "replica" => 1,
                "pubsub" => 2,
                _ => {
                    return Err(ConfigError::BadValue(
                        "Invalid client class specified in buffer limit configuration.".into(),
                    ))
                }
            };
            let bad = || {
                ConfigError::BadValue(
                    "Error in hard, soft or soft_seconds setting in buffer limit configuration."
                        .into(),
                )
            };
            let limit = OutputLimit {
                hard: memtoull(class[1]).ok_or_else(bad)?,
                soft: memtoull(class[2]).ok_or_else(bad)?,
                soft_seconds: class[3]
                    .parse::<i64>()
                    .ok()
                    .and_then(|v| u64::try_from(v).ok())
                    .ok_or_else(bad)?,
            };
            parsed.push((class_index, limit));
        }
        for (class_index, limit) in parsed {
            match class_index {
                0 => self.output_limit = limit,
                1 => self.replica_output_limit = limit,
                _ => self.pubsub_output_limit = limit,
            }
        }
        Ok(())
    }

    /// The value of a canonical parameter as CONFIG GET prints it.
    pub(crate) fn value_of(&self, name: &str) -> String {
        if let Some(v) = crate::cluster::config::value_of(&self.cluster, name) {
            return v;
        }
        match name {
            "port" => self.port.to_string(),
            "bind" => self.bind.join(" "),
            "requirepass" => self
                .requirepass
                .as_ref()
                .map(|p| String::from_utf8_lossy(p).into_owned())
                .unwrap_or_default(),
            "databases" => self.databases.to_string(),
            "maxclients" => self.maxclients.to_string(),
            "loglevel" => self.loglevel.name().into(),
            "logfile" => self.logfile.clone(),
            "zset-max-listpack-entries" => self.zset.max_listpack_entries.to_string(),
            "zset-max-listpack-value" => self.zset.max_listpack_value.to_string(),
            "set-max-intset-entries" => self.set.max_intset_entries.to_string(),
            "set-max-listpack-entries" => self.set.max_listpack_entries.to_string(),
            "set-max-listpack-value" => self.set.max_listpack_value.to_string(),
            "hash-max-listpack-entries" => self.hash.max_listpack_entries.to_string(),
            "hash-max-listpack-value" => self.hash.max_listpack_value.to_string(),
            "list-max-listpack-size" => self.list.max_listpack_size.to_string(),
            "list-compress-depth" => self.list.compress_depth.to_string(),
            "stream-node-max-bytes" => self.stream.node_max_bytes.to_string(),
            "stream-node-max-entries" => self.stream.node_max_entries.to_string(),
            "hll-sparse-max-bytes" => self.hll_sparse_max_bytes.to_string(),
            "proto-max-bulk-len" => self.proto_max_bulk_len.to_string(),
            "client-query-buffer-limit" => self.client_query_buffer_limit.to_string(),
            "client-output-buffer-limit" => [
                ("normal", self.output_limit),
                ("slave", self.replica_output_limit),
                ("pubsub", self.pubsub_output_limit),
            ]
            .iter()
            .map(|(class, l)| format!("{class} {} {} {}", l.hard, l.soft, l.soft_seconds))
            .collect::<Vec<_>>()
            .join(" "),
            "hz" => self.hz.to_string(),
            "timeout" => self.timeout.to_string(),
            "slowlog-log-slower-than" => self.slowlog_log_slower_than.to_string(),
            "slowlog-max-len" => self.slowlog_max_len.to_string(),
            "tracking-table-max-keys" => self.tracking_table_max_keys.to_string(),
            "busy-reply-threshold" => self.busy_reply_threshold.to_string(),
            "enable-debug-command" => self.enable_debug_command.clone(),
            "enable-protected-configs" => self.enable_protected_configs.clone(),
            "enable-module-command" => self.enable_module_command.clone(),
            "appendonly" => yes_no_name(self.aof.enabled),
            "appendfilename" => self.aof.filename.clone(),
            "appenddirname" => self.aof.dirname.clone(),
            "appendfsync" => self.aof.fsync.name().into(),
            "no-appendfsync-on-rewrite" => yes_no_name(self.aof.no_fsync_on_rewrite),
            "auto-aof-rewrite-percentage" => self.aof.auto_rewrite_percentage.to_string(),
            "auto-aof-rewrite-min-size" => self.aof.auto_rewrite_min_size.to_string(),
            "aof-use-rdb-preamble" => yes_no_name(self.aof.use_rdb_preamble),
            "aof-load-truncated" => yes_no_name(self.aof.load_truncated),
            "aof-timestamp-enabled" => yes_no_name(self.aof.timestamp_enabled),
            "aof-rewrite-incremental-fsync" => yes_no_name(self.aof.rewrite_incremental_fsync),
            "rdb-save-incremental-fsync" => yes_no_name(self.rdb_save_incremental_fsync),
            "rdb-del-sync-files" => yes_no_name(self.rdb_del_sync_files),
            "aof-disable-auto-gc" => yes_no_name(self.aof.disable_auto_gc),
            "save" => self
                .save
                .iter()
                .map(|(secs, changes)| format!("{secs} {changes}"))
                .collect::<Vec<_>>()
                .join(" "),
            "dir" => self.dir.display().to_string(),
            "dbfilename" => self.dbfilename.clone(),
            "rdb-skip-unsupported-types" => yes_no_name(self.rdb_skip_unsupported_types),
            "sanitize-dump-payload" => self.sanitize_dump_payload.clone(),
            "busy-poll-us" => self.busy_poll_us.to_string(),
            "daemonize" => yes_no_name(self.daemonize),
            "pidfile" => self.pidfile.clone(),
            "supervised" => self.supervised.clone(),
            "protected-mode" => yes_no_name(self.protected_mode),
            "rdbcompression" => yes_no_name(self.rdbcompression),
            "rdbchecksum" => yes_no_name(self.rdbchecksum),
            "set-proc-title" => yes_no_name(self.set_proc_title),
            "activerehashing" => yes_no_name(self.activerehashing),
            "active-expire-effort" => self.active_expire_effort.to_string(),
            "crash-log-enabled" => yes_no_name(self.crash_log_enabled),
            "disable-thp" => yes_no_name(self.disable_thp),
            "ignore-warnings" => self.ignore_warnings.clone(),
            "locale-collate" => self.locale_collate.clone(),
            "activedefrag" => yes_no_name(false),
            "active-defrag-cycle-min" => self.allocator.defrag_cycle_min.to_string(),
            "active-defrag-cycle-max" => self.allocator.defrag_cycle_max.to_string(),
            "active-defrag-threshold-lower" => self.allocator.defrag_threshold_lower.to_string(),
            "active-defrag-threshold-upper" => self.allocator.defrag_threshold_upper.to_string(),
            "active-defrag-max-scan-fields" => self.allocator.defrag_max_scan_fields.to_string(),
            "active-defrag-ignore-bytes" => self.allocator.defrag_ignore_bytes.to_string(),
            "jemalloc-bg-thread" => yes_no_name(self.allocator.jemalloc_bg_thread),
            "stop-writes-on-bgsave-error" => yes_no_name(self.stop_writes_on_bgsave_error),
            "maxmemory" => self.memory.maxmemory.to_string(),
            "maxmemory-policy" => self.memory.policy.name().into(),
            "maxmemory-samples" => self.memory.samples.to_string(),
            "maxmemory-eviction-tenacity" => self.memory.eviction_tenacity.to_string(),
            "maxmemory-clients" => self.memory.clients.show(),
            "lfu-log-factor" => self.memory.lfu_log_factor.to_string(),
            "lfu-decay-time" => self.memory.lfu_decay_time.to_string(),
            "aclfile" => self.aclfile.clone(),
            "acllog-max-len" => self.acllog_max_len.to_string(),
            "acl-pubsub-default" => if self.acl_pubsub_default_all {
                "allchannels"
            } else {
                "resetchannels"
            }
            .into(),
            "notify-keyspace-events" => {
                crate::pubsub::notify::flags_to_string(self.notify_keyspace_events)
            }
            "latency-monitor-threshold" => self.latency_monitor_threshold.to_string(),
            "lazyfree-lazy-expire" => yes_no_name(self.lazyfree_lazy_expire),
            "lazyfree-lazy-eviction" => yes_no_name(self.lazyfree_lazy_eviction),
            "shutdown-timeout" => self.shutdown_timeout.to_string(),
            "shutdown-on-sigterm" => crate::service::shutdown::flags_name(self.shutdown_on_sigterm),
            "shutdown-on-sigint" => crate::service::shutdown::flags_name(self.shutdown_on_sigint),
            "tcp-keepalive" => self.tcp_keepalive.to_string(),
            "tcp-backlog" => self.tcp_backlog.to_string(),
            "socket-mark-id" => self.socket_mark_id.to_string(),
            "unixsocket" => self.unixsocket.clone(),
            "unixsocketperm" => format!("{:o}", self.unixsocketperm),
            "always-show-logo" => yes_no_name(self.always_show_logo),
            "lazyfree-lazy-server-del" => yes_no_name(self.lazyfree_lazy_server_del),
            "lazyfree-lazy-user-del" => yes_no_name(self.lazyfree_lazy_user_del),
            "lazyfree-lazy-user-flush" => yes_no_name(self.lazyfree_lazy_user_flush),
            "replica-lazy-flush" => yes_no_name(self.replica_lazy_flush),
            "use-exit-on-panic" => yes_no_name(self.use_exit_on_panic),
            "key-load-delay" => self.key_load_delay.to_string(),
            "rdb-key-save-delay" => self.rdb_key_save_delay.to_string(),
            "dynamic-hz" => yes_no_name(self.dynamic_hz),
            "loading-process-events-interval-bytes" => self.loading_events_interval.to_string(),
            "syslog-enabled" => yes_no_name(self.syslog_enabled),
            "syslog-ident" => self.syslog_ident.clone(),
            "syslog-facility" => self.syslog_facility.clone(),
            repl if crate::replication::config::NAMES.contains(&repl) => self.repl.value_of(repl),
            name if crate::latency::tracking::NAMES.contains(&name) => {
                self.latency_tracking.value_of(name)
            }
            name if crate::service::process::NAMES.contains(&name) => self.process.value_of(name),
            _ => unreachable!("every canonical name has a value"),
        }
    }

    /// CONFIG GET: every (name, value) whose name or alias matches one of the patterns,
    /// each parameter name once. A pattern without glob characters is looked up by name
    /// (ASCII case ignored) and answered under the name as given, as Redis does.
    pub fn get_matching(&self, patterns: &[&[u8]]) -> Vec<(Vec<u8>, String)> {
        let mut out: Vec<(Vec<u8>, String)> = Vec::new();
        let seen = |out: &[(Vec<u8>, String)], n: &[u8]| {
            out.iter().any(|(o, _)| o.eq_ignore_ascii_case(n))
        };
        for pattern in patterns {
            if !pattern.iter().any(|c| b"[*?".contains(c)) {
                let name = std::str::from_utf8(pattern)
                    .ok()
                    .and_then(|p| Self::canonical(&p.to_ascii_lowercase()));
                if let Some(name) = name {
                    if !seen(&out, pattern) {
                        out.push((pattern.to_vec(), self.value_of(name)));
                    }
                }
                continue;
            }
            let cluster = crate::cluster::config::PARAMS
                .iter()
                .map(|(n, a, _)| (*n, *a, Mutability::Runtime));
            let all: Vec<(&str, Option<&str>, Mutability)> = PARAMS
                .iter()
                .map(|(n, a, _)| (*n, *a, Mutability::Runtime))
                .chain(cluster)
                .collect();
            for (name, alias, _) in &all {
                for n in std::iter::once(*name).chain(*alias) {
                    if !GOBLIN_ONLY.contains(&n)
                        && !HIDDEN.contains(&n)
                        && glob_match(pattern, n.as_bytes(), true)
                        && !seen(&out, n.as_bytes())
                    {
                        out.push((n.as_bytes().to_vec(), self.value_of(name)));
                    }
                }
            }
        }
        out
    }
}

/// Parses `save` points: "seconds changes" pairs; "" means none.
fn parse_save_points(text: &str) -> Result<Vec<(u64, u64)>, ConfigError> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let bad = || ConfigError::BadValue("Invalid save parameters".into());
    if !words.len().is_multiple_of(2) {
        return Err(bad());
    }
    words
        .chunks(2)
        .map(|pair| {
            Ok((
                pair[0].parse().map_err(|_| bad())?,
                pair[1].parse().map_err(|_| bad())?,
            ))
        })
        .collect()
}

/// Why `activedefrag yes` is refused: Redis's words when it is built without a
/// defragmenting allocator, as Goblin is (INFO mem_allocator:libc).
const DEFRAG_UNAVAILABLE: &str = "Active defragmentation cannot be enabled: it requires a Redis server compiled with a modified Jemalloc like the one shipped by default with the Redis source distribution";

/// The active-defrag-* parameters and jemalloc-bg-thread, which Redis built with libc
/// malloc keeps and shows while they steer nothing there (activedefrag cannot be turned on
/// without its Jemalloc). Goblin reports libc as its allocator and does the same; the
/// values are Redis's defaults and ranges.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllocatorParams {
    /// active-defrag-cycle-min: CPU percent at the lower threshold.
    pub defrag_cycle_min: i64,
    /// active-defrag-cycle-max: CPU percent at the upper threshold.
    pub defrag_cycle_max: i64,
    /// active-defrag-threshold-lower: fragmentation percent to start at.
    pub defrag_threshold_lower: i64,
    /// active-defrag-threshold-upper: fragmentation percent of the most effort.
    pub defrag_threshold_upper: i64,
    /// active-defrag-max-scan-fields: fields above which a key is defragmented apart.
    pub defrag_max_scan_fields: i64,
    /// active-defrag-ignore-bytes: fragmentation bytes under which nothing is done.
    pub defrag_ignore_bytes: u64,
    /// jemalloc-bg-thread: Jemalloc's background purging thread.
    pub jemalloc_bg_thread: bool,
}

impl Default for AllocatorParams {
    fn default() -> Self {
        AllocatorParams {
            defrag_cycle_min: 1,
            defrag_cycle_max: 25,
            defrag_threshold_lower: 10,
            defrag_threshold_upper: 100,
            defrag_max_scan_fields: 1000,
            defrag_ignore_bytes: 100 << 20,
            jemalloc_bg_thread: true,
        }
    }
}

pub(crate) fn yes_no(text: &str) -> Result<bool, ConfigError> {
    match text.to_ascii_lowercase().as_str() {
        "yes" => Ok(true),
        "no" => Ok(false),
        _ => Err(ConfigError::BadValue(
            "argument must be 'yes' or 'no'".into(),
        )),
    }
}

/// A file or directory name without a path (Redis's pathIsBaseName check).
fn base_name(text: &str, directive: &str, what: &str) -> Result<String, ConfigError> {
    if text.is_empty() || text.contains('/') || text.contains('\\') {
        return Err(ConfigError::BadValue(format!(
            "{directive} can't be a path, just a {what}"
        )));
    }
    Ok(text.into())
}

pub(crate) fn yes_no_name(value: bool) -> String {
    if value { "yes" } else { "no" }.into()
}

/// One of an enum parameter's names (ASCII case ignored), lowercased.
pub(crate) fn one_of(text: &str, names: &[&str]) -> Result<String, ConfigError> {
    let lower = text.to_ascii_lowercase();
    if names.contains(&lower.as_str()) {
        Ok(lower)
    } else {
        Err(ConfigError::BadValue(format!(
            "argument(s) must be one of the following: {}",
            names.join(", ")
        )))
    }
}

pub(crate) fn int_in(text: &str, min: i64, max: i64) -> Result<i64, ConfigError> {
    let v = crate::numbers::parse_i64(text.as_bytes()).ok_or_else(|| {
        ConfigError::BadValue("argument couldn't be parsed into an integer".into())
    })?;
    if v < min || v > max {
        return Err(ConfigError::BadValue(format!(
            "argument must be between {min} and {max} inclusive"
        )));
    }
    Ok(v)
}

pub(crate) fn memory_in(text: &str, min: u64, max: u64) -> Result<u64, ConfigError> {
    let v = memtoull(text)
        .ok_or_else(|| ConfigError::BadValue("argument must be a memory value".into()))?;
    if v < min || v > max {
        return Err(ConfigError::BadValue(format!(
            "argument must be between {min} and {max} inclusive"
        )));
    }
    Ok(v)
}

/// An octal parameter (unixsocketperm) as Redis's strtoll(.., 8) takes it: leading blanks,
/// a sign, octal digits (none at all for the empty text, which is 0), in 0..=max.
pub(crate) fn octal_in(text: &str, max: u32) -> Result<u32, ConfigError> {
    let bad = || ConfigError::BadValue("argument couldn't be parsed as an octal number".into());
    let range =
        || ConfigError::BadValue(format!("argument must be between 0 and {max:o} inclusive"));
    if text.is_empty() {
        return Ok(0);
    }
    let body = text.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    let (negative, digits) = match body.as_bytes().first() {
        Some(b'-') => (true, &body[1..]),
        Some(b'+') => (false, &body[1..]),
        _ => (false, body),
    };
    if digits.is_empty() || !digits.bytes().all(|b| (b'0'..=b'7').contains(&b)) {
        return Err(bad());
    }
    let v = i64::from_str_radix(digits, 8).map_err(|_| bad())?;
    match u32::try_from(v) {
        Ok(v) if !negative && v <= max => Ok(v),
        _ if negative && v == 0 => Ok(0),
        _ => Err(range()),
    }
}

/// Parses a redis.conf memory value: digits with an optional k, kb, m, mb, g or gb suffix
/// (k = 1000, kb = 1024), case-insensitive.
pub fn memtoull(text: &str) -> Option<u64> {
    let lower = text.to_ascii_lowercase();
    let split = lower
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(lower.len());
    let (digits, unit) = lower.split_at(split);
    let mul: u64 = match unit {
        "" | "b" => 1,
        "k" => 1000,
        "kb" => 1024,
        "m" => 1000 * 1000,
        "mb" => 1024 * 1024,
        "g" => 1000 * 1000 * 1000,
        "gb" => 1024 * 1024 * 1024,
        _ => return None,
    };
    digits.parse::<u64>().ok()?.checked_mul(mul)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_units() {
        assert_eq!(memtoull("1gb"), Some(1 << 30));
        assert_eq!(memtoull("100mb"), Some(100 << 20));
        assert_eq!(memtoull("1024"), Some(1024));
        assert_eq!(memtoull("2G"), Some(2_000_000_000));
        assert_eq!(memtoull("-1"), None);
        assert_eq!(memtoull("1.5gb"), None);
        assert_eq!(memtoull("100k"), Some(100_000));
        assert_eq!(memtoull("512MB"), Some(512 << 20));
        assert_eq!(memtoull("12x"), None);
    }

    #[test]
    fn save_points_dir_and_dbfilename() {
        let mut c = Config::default();
        assert_eq!(c.get_matching(&[b"save"])[0].1, "3600 1 300 100 60 10000");
        // At start the first directive replaces the default and later ones add, as redis.conf.
        c.apply("save", b"900 1", true).unwrap();
        c.apply("save", b"300 10", true).unwrap();
        assert_eq!(c.save, vec![(900, 1), (300, 10)]);
        c.apply("save", b"", false).unwrap();
        assert!(c.save.is_empty());
        c.apply("save", b"10 2 20 3", false).unwrap();
        assert_eq!(c.save, vec![(10, 2), (20, 3)]);
        assert!(c.apply("save", b"10", false).is_err());
        assert!(c.apply("save", b"a b", false).is_err());
        assert!(c.apply("dbfilename", b"a/b.rdb", false).is_err());
        c.apply("dbfilename", b"x.rdb", false).unwrap();
        assert!(c.apply("dir", b"/nonexistent/goblin", false).is_err());
        c.apply("dir", b"/tmp", false).unwrap();
        assert_eq!(
            c.get_matching(&[b"dir"])[0].1,
            std::fs::canonicalize("/tmp").unwrap().display().to_string()
        );
        c.apply("rdb-skip-unsupported-types", b"yes", false)
            .unwrap();
        assert!(c.rdb_skip_unsupported_types);
    }

    #[test]
    fn service_directives() {
        let mut c = Config::default();
        let get = |c: &Config, name: &[u8]| c.get_matching(&[name])[0].1.clone();
        assert_eq!(get(&c, b"protected-mode"), "yes");
        c.apply("protected-mode", b"NO", false).unwrap();
        assert!(!c.protected_mode);
        assert!(matches!(
            c.apply("protected-mode", b"maybe", false),
            Err(ConfigError::BadValue(_))
        ));
        for (name, value) in [
            ("daemonize", "yes"),
            ("pidfile", "/x.pid"),
            ("supervised", "auto"),
        ] {
            assert_eq!(
                c.apply(name, value.as_bytes(), false),
                Err(ConfigError::Immutable)
            );
            c.apply(name, value.as_bytes(), true).unwrap();
            assert_eq!(get(&c, name.as_bytes()), value);
        }
        assert_eq!(
            c.apply("supervised", b"launchd", true),
            Err(ConfigError::BadValue(
                "argument(s) must be one of the following: upstart, systemd, auto, no".into()
            ))
        );
        c.apply("set-max-intset-entries", b"7", false).unwrap();
        c.apply("set-max-listpack-entries", b"9", false).unwrap();
        c.apply("set-max-listpack-value", b"1kb", false).unwrap();
        assert_eq!(
            (
                c.set.max_intset_entries,
                c.set.max_listpack_entries,
                c.set.max_listpack_value
            ),
            (7, 9, 1024)
        );
        assert_eq!(get(&c, b"set-max-listpack-value"), "1024");
        c.apply("hash-max-ziplist-entries", b"5", false).unwrap();
        c.apply("hash-max-listpack-value", b"2kb", false).unwrap();
        assert_eq!(
            (c.hash.max_listpack_entries, c.hash.max_listpack_value),
            (5, 2048)
        );
        assert_eq!(get(&c, b"hash-max-ziplist-value"), "2048");
        c.apply("busy-poll-us", b"50", true).unwrap();
        assert_eq!(c.busy_poll_us, 50);
        // Goblin's own busy-poll-us stays out of a pattern; Redis's busy-reply-threshold
        // answers it.
        let busy: Vec<Vec<u8>> = c
            .get_matching(&[b"busy*"])
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        assert_eq!(busy, vec![b"busy-reply-threshold".to_vec()]);
    }

    #[test]
    fn aliases_and_errors() {
        let mut c = Config::default();
        c.apply("zset-max-ziplist-entries", b"7", false).unwrap();
        assert_eq!(c.zset.max_listpack_entries, 7);
        let got = c.get_matching(&[b"zset-max-*-entries"]);
        assert_eq!(
            got,
            vec![
                (b"zset-max-listpack-entries".to_vec(), "7".to_string()),
                (b"zset-max-ziplist-entries".to_vec(), "7".to_string())
            ]
        );
        assert_eq!(
            c.apply("databases", b"3", false),
            Err(ConfigError::Immutable)
        );
        assert_eq!(c.apply("nope", b"3", false), Err(ConfigError::Unknown));
        assert!(matches!(
            c.apply("maxclients", b"x", false),
            Err(ConfigError::BadValue(_))
        ));
        c.apply("client-output-buffer-limit", b"normal 10mb 5mb 60", false)
            .unwrap();
        assert_eq!(
            c.output_limit,
            OutputLimit {
                hard: 10 << 20,
                soft: 5 << 20,
                soft_seconds: 60
            }
        );
    }
}
