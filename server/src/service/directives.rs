//! The directives Redis 7.2 knows. A configuration line Goblin does not have is ignored, and
//! named in one start-up warning, when Redis has it (so Debian's redis.conf starts Goblin);
//! a directive neither has is fatal, as Redis refuses a directive it does not know, with
//! Redis's error block.

/// Every directive of Redis 7.2's configuration: the CONFIG parameters with their aliases
/// (TLS ones included, as Debian builds Redis with TLS), and the file-only ones (`include`,
/// `rename-command`, `user`, `loadmodule`, `sentinel`, and the deprecated ones Redis still
/// accepts and ignores). Sorted, for the binary search.
const REDIS_DIRECTIVES: &[&str] = &[
    "acl-pubsub-default",
    "aclfile",
    "acllog-max-len",
    "active-defrag-cycle-max",
    "active-defrag-cycle-min",
    "active-defrag-ignore-bytes",
    "active-defrag-max-scan-fields",
    "active-defrag-threshold-lower",
    "active-defrag-threshold-upper",
    "active-expire-effort",
    "activedefrag",
    "activerehashing",
    "always-show-logo",
    "aof-disable-auto-gc",
    "aof-load-truncated",
    "aof-rewrite-incremental-fsync",
    "aof-timestamp-enabled",
    "aof-use-rdb-preamble",
    "aof_rewrite_cpulist",
    "appenddirname",
    "appendfilename",
    "appendfsync",
    "appendonly",
    "auto-aof-rewrite-min-size",
    "auto-aof-rewrite-percentage",
    "bgsave_cpulist",
    "bind",
    "bind-source-addr",
    "bio_cpulist",
    "busy-reply-threshold",
    "client-output-buffer-limit",
    "client-query-buffer-limit",
    "cluster-allow-pubsubshard-when-down",
    "cluster-allow-reads-when-down",
    "cluster-allow-replica-migration",
    "cluster-announce-bus-port",
    "cluster-announce-hostname",
    "cluster-announce-human-nodename",
    "cluster-announce-ip",
    "cluster-announce-port",
    "cluster-announce-tls-port",
    "cluster-config-file",
    "cluster-enabled",
    "cluster-link-sendbuf-limit",
    "cluster-migration-barrier",
    "cluster-node-timeout",
    "cluster-port",
    "cluster-preferred-endpoint-type",
    "cluster-replica-no-failover",
    "cluster-replica-validity-factor",
    "cluster-require-full-coverage",
    "cluster-slave-no-failover",
    "cluster-slave-validity-factor",
    "crash-log-enabled",
    "crash-memcheck-enabled",
    "daemonize",
    "databases",
    "dbfilename",
    "dir",
    "disable-thp",
    "dynamic-hz",
    "enable-debug-command",
    "enable-module-command",
    "enable-protected-configs",
    "hash-max-listpack-entries",
    "hash-max-listpack-value",
    "hash-max-ziplist-entries",
    "hash-max-ziplist-value",
    "hll-sparse-max-bytes",
    "hz",
    "ignore-warnings",
    "include",
    "io-threads",
    "io-threads-do-reads",
    "jemalloc-bg-thread",
    "latency-monitor-threshold",
    "latency-tracking",
    "latency-tracking-info-percentiles",
    "lazyfree-lazy-eviction",
    "lazyfree-lazy-expire",
    "lazyfree-lazy-server-del",
    "lazyfree-lazy-user-del",
    "lazyfree-lazy-user-flush",
    "lfu-decay-time",
    "lfu-log-factor",
    "list-compress-depth",
    "list-max-listpack-size",
    "list-max-ziplist-entries",
    "list-max-ziplist-size",
    "list-max-ziplist-value",
    "loading-process-events-interval-bytes",
    "loadmodule",
    "locale-collate",
    "logfile",
    "loglevel",
    "lua-replicate-commands",
    "lua-time-limit",
    "masterauth",
    "masteruser",
    "maxclients",
    "maxmemory",
    "maxmemory-clients",
    "maxmemory-eviction-tenacity",
    "maxmemory-policy",
    "maxmemory-samples",
    "min-replicas-max-lag",
    "min-replicas-to-write",
    "min-slaves-max-lag",
    "min-slaves-to-write",
    "no-appendfsync-on-rewrite",
    "notify-keyspace-events",
    "oom-score-adj",
    "oom-score-adj-values",
    "pidfile",
    "port",
    "proc-title-template",
    "propagation-error-behavior",
    "protected-mode",
    "proto-max-bulk-len",
    "rdb-del-sync-files",
    "rdb-save-incremental-fsync",
    "rdbchecksum",
    "rdbcompression",
    "rename-command",
    "repl-backlog-size",
    "repl-backlog-ttl",
    "repl-disable-tcp-nodelay",
    "repl-diskless-load",
    "repl-diskless-sync",
    "repl-diskless-sync-delay",
    "repl-diskless-sync-max-replicas",
    "repl-ping-replica-period",
    "repl-ping-slave-period",
    "repl-timeout",
    "replica-announce-ip",
    "replica-announce-port",
    "replica-announced",
    "replica-ignore-disk-write-errors",
    "replica-ignore-maxmemory",
    "replica-lazy-flush",
    "replica-priority",
    "replica-read-only",
    "replica-serve-stale-data",
    "replicaof",
    "requirepass",
    "sanitize-dump-payload",
    "save",
    "sentinel",
    "server_cpulist",
    "set-max-intset-entries",
    "set-max-listpack-entries",
    "set-max-listpack-value",
    "set-proc-title",
    "slave-announce-ip",
    "slave-announce-port",
    "slave-ignore-maxmemory",
    "slave-lazy-flush",
    "slave-priority",
    "slave-read-only",
    "slave-serve-stale-data",
    "slaveof",
    "slowlog-log-slower-than",
    "slowlog-max-len",
    "socket-mark-id",
    "stop-writes-on-bgsave-error",
    "stream-node-max-bytes",
    "stream-node-max-entries",
    "supervised",
    "syslog-enabled",
    "syslog-facility",
    "syslog-ident",
    "tcp-backlog",
    "tcp-keepalive",
    "timeout",
    "tls-auth-clients",
    "tls-ca-cert-dir",
    "tls-ca-cert-file",
    "tls-cert-file",
    "tls-ciphers",
    "tls-ciphersuites",
    "tls-client-cert-file",
    "tls-client-key-file",
    "tls-client-key-file-pass",
    "tls-cluster",
    "tls-dh-params-file",
    "tls-key-file",
    "tls-key-file-pass",
    "tls-port",
    "tls-prefer-server-ciphers",
    "tls-protocols",
    "tls-replication",
    "tls-session-cache-size",
    "tls-session-cache-timeout",
    "tls-session-caching",
    "tracking-table-max-keys",
    "unixsocket",
    "unixsocketperm",
    "user",
    "zset-max-listpack-entries",
    "zset-max-listpack-value",
    "zset-max-ziplist-entries",
    "zset-max-ziplist-value",
];

/// Whether Redis 7.2 accepts `name` (lowercase) as a configuration directive.
pub fn is_redis_directive(name: &str) -> bool {
    REDIS_DIRECTIVES.binary_search(&name).is_ok()
}

/// The TLS directives that turn TLS on, each with the value that leaves it off. Goblin has
/// no TLS, so any other value stops start-up, as in a Redis built without TLS, rather than
/// serve or replicate in clear what the configuration meant to encrypt.
const TLS_SWITCHES: &[(&str, &str)] = &[
    ("tls-cluster", "no"),
    ("tls-port", "0"),
    ("tls-replication", "no"),
];

/// The reason start-up stops on directive `name` (lowercase) with `value` when it asks for
/// TLS; None for every other directive and value.
pub fn tls_refusal(name: &str, value: &[u8]) -> Option<String> {
    let (_, off) = TLS_SWITCHES.iter().find(|(switch, _)| *switch == name)?;
    let text = String::from_utf8_lossy(value);
    let is_off = match name {
        "tls-port" => text.trim().parse::<i64>() == Ok(0),
        _ => text.eq_ignore_ascii_case(off),
    };
    (!is_off).then(|| {
        format!(
            "Goblin has no TLS ({name} {off} is the only value it takes): serve it in clear \
             on a trusted network, or put a TLS proxy such as stunnel in front of it"
        )
    })
}

/// Redis's reason for a directive it does not know.
pub const BAD_DIRECTIVE: &str = "Bad directive or wrong number of arguments";

/// The fatal error Redis prints for a bad configuration line (config.c's `loaderr`): the
/// banner, the line number when the line comes from the file, the line, and the reason.
pub fn fatal_config_error(lineno: Option<usize>, line: &str, why: &str) -> FatalConfigError {
    let at = lineno
        .map(|n| format!("Reading the configuration file, at line {n}\n"))
        .unwrap_or_default();
    FatalConfigError(format!(
        "*** FATAL CONFIG FILE ERROR (Redis {}) ***\n{at}>>> '{line}'\n{why}",
        crate::REDIS_VERSION
    ))
}

/// A configuration the server refuses to start with, in Redis's words: printed on
/// standard error as Redis prints it (after an empty line, without the program's name).
#[derive(Debug)]
pub struct FatalConfigError(String);

impl std::fmt::Display for FatalConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for FatalConfigError {}

/// The one start-up warning for the configuration directives Goblin does not have: each
/// name once, in the order first seen; None when there are none.
pub fn ignored_summary(names: &[String]) -> Option<String> {
    let mut unique: Vec<&str> = Vec::new();
    for name in names {
        if !unique.contains(&name.as_str()) {
            unique.push(name);
        }
    }
    (!unique.is_empty()).then(|| {
        format!(
            "Configuration directives not supported by Goblin were ignored ({}): {}",
            unique.len(),
            unique.join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directives_are_sorted_and_unique() {
        assert!(REDIS_DIRECTIVES.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn knows_parameters_aliases_and_file_only_directives() {
        for name in [
            "tcp-backlog",
            "slave-read-only",
            "include",
            "rename-command",
            "tls-port",
        ] {
            assert!(is_redis_directive(name), "{name}");
        }
        assert!(!is_redis_directive("maxmemory-polcy"));
        assert!(!is_redis_directive("rdb-skip-unsupported-types"));
    }

    #[test]
    fn fatal_error_has_redis_shape() {
        assert_eq!(
            fatal_config_error(Some(2), "foo bar", BAD_DIRECTIVE).to_string(),
            format!(
                "*** FATAL CONFIG FILE ERROR (Redis {}) ***\nReading the configuration file, \
                 at line 2\n>>> 'foo bar'\nBad directive or wrong number of arguments",
                crate::REDIS_VERSION
            )
        );
    }

    #[test]
    fn only_the_tls_switches_left_off_are_taken() {
        for (name, value) in [
            ("tls-port", "0"),
            ("tls-port", " 0"),
            ("tls-replication", "NO"),
            ("tls-cluster", "no"),
            ("tls-cert-file", "/etc/redis/cert.pem"),
        ] {
            assert_eq!(tls_refusal(name, value.as_bytes()), None, "{name} {value}");
        }
        for (name, value) in [
            ("tls-port", "6380"),
            ("tls-port", "x"),
            ("tls-replication", "yes"),
            ("tls-cluster", "maybe"),
        ] {
            let why = tls_refusal(name, value.as_bytes()).expect(name);
            assert!(why.starts_with("Goblin has no TLS"), "{why}");
        }
    }

    #[test]
    fn one_summary_line_each_name_once() {
        let names: Vec<String> = ["unixsocket", "maxmemory", "unixsocket", "tcp-backlog"]
            .map(String::from)
            .into();
        assert_eq!(
            ignored_summary(&names).unwrap(),
            "Configuration directives not supported by Goblin were ignored (3): unixsocket, \
             maxmemory, tcp-backlog"
        );
        assert_eq!(ignored_summary(&[]), None);
    }
}
