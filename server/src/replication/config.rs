//! The replication directives, with Redis 7.2's names, defaults and ranges (their aliases
//! are in the configuration's parameter table).

use crate::config::{int_in, memory_in, one_of, yes_no, yes_no_name, ConfigError};

/// The parameters this module owns, by canonical name.
pub const NAMES: &[&str] = &[
    "repl-backlog-size",
    "repl-diskless-sync",
    "repl-diskless-sync-delay",
    "repl-diskless-sync-max-replicas",
    "repl-ping-replica-period",
    "repl-timeout",
    "min-replicas-to-write",
    "min-replicas-max-lag",
    "replica-read-only",
    "replica-serve-stale-data",
    "masterauth",
    "masteruser",
    "repl-backlog-ttl",
    "repl-diskless-load",
    "replica-ignore-maxmemory",
    "replica-priority",
    "replica-announce-ip",
    "replica-announce-port",
    "replica-announced",
    "bind-source-addr",
    "propagation-error-behavior",
    "replica-ignore-disk-write-errors",
    "repl-disable-tcp-nodelay",
];

/// How a replica loads its master's snapshot (repl-diskless-load).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DisklessLoad {
    /// Into a file first, then loaded from it (the loop answers -LOADING meanwhile).
    Disabled,
    /// Straight from the socket when the keyspace is empty, else as `Disabled`.
    OnEmptyDb,
    /// Straight from the socket into new databases while the old ones keep serving
    /// (async_loading), swapped in once loaded.
    Swapdb,
}

impl DisklessLoad {
    const NAMES: [&'static str; 3] = ["disabled", "on-empty-db", "swapdb"];

    /// The mode's name in CONFIG GET.
    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }
}

/// What a replica does when a command of its master's stream (or of the AOF it replays)
/// replies an error (propagation-error-behavior).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PropagationError {
    /// Logs it and goes on (the data may diverge).
    Ignore,
    /// Panics, on a read-only replica and while replaying the AOF.
    Panic,
    /// Panics on a read-only replica only.
    PanicOnReplicas,
}

impl PropagationError {
    const NAMES: [&'static str; 3] = ["ignore", "panic", "panic-on-replicas"];

    /// The behaviour's name in CONFIG GET.
    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }
}

/// The replication settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplConfig {
    /// repl-backlog-size: bytes of the stream kept for partial resynchronisations.
    pub backlog_size: u64,
    /// repl-diskless-sync: the RDB of a full sync goes to the replicas' sockets, not a file.
    pub diskless_sync: bool,
    /// repl-diskless-sync-delay: seconds to wait for more replicas before a diskless sync.
    pub diskless_sync_delay: u64,
    /// repl-diskless-sync-max-replicas: start the diskless sync at once when this many
    /// replicas wait (0: no such limit).
    pub diskless_sync_max_replicas: u64,
    /// repl-ping-replica-period: seconds between the PINGs a master sends its replicas.
    pub ping_period: u64,
    /// repl-timeout: seconds without traffic after which a link is dropped.
    pub timeout: u64,
    /// min-replicas-to-write: writes are refused with fewer good replicas (0: off).
    pub min_replicas_to_write: u64,
    /// min-replicas-max-lag: a replica is good when it acknowledged within this many seconds.
    pub min_replicas_max_lag: u64,
    /// replica-read-only
    pub read_only: bool,
    /// replica-serve-stale-data
    pub serve_stale_data: bool,
    /// replica-ignore-disk-write-errors: a replica that cannot write to its disk applies
    /// its master's writes (with a warning) instead of stopping.
    pub ignore_disk_write_errors: bool,
    /// repl-disable-tcp-nodelay: a replica's socket gets TCP_NODELAY off when it asks for
    /// a full sync, so the stream goes in fewer, larger packets (more delay, less
    /// bandwidth).
    pub disable_tcp_nodelay: bool,
    /// masterauth: the password given to the master (empty: none).
    pub masterauth: Vec<u8>,
    /// masteruser: the user AUTH names with masterauth (empty: the default user).
    pub masteruser: Vec<u8>,
    /// replicaof / slaveof at start: the master to replicate.
    pub replicaof: Option<(String, u16)>,
    /// repl-backlog-ttl: seconds a master without replicas keeps its backlog (0: forever).
    pub backlog_ttl: u64,
    /// repl-diskless-load
    pub diskless_load: DisklessLoad,
    /// propagation-error-behavior.
    pub propagation_error: PropagationError,
    /// replica-ignore-maxmemory: a replica does not evict (its master's DELs do).
    pub ignore_maxmemory: bool,
    /// replica-priority: Sentinel promotes the lowest non-zero priority first (0: never).
    pub priority: u64,
    /// replica-announce-ip: the address sent to the master with REPLCONF ip-address
    /// (empty: the master uses the connection's peer address).
    pub announce_ip: String,
    /// replica-announce-port: the port sent with REPLCONF listening-port (0: the port
    /// this server listens on).
    pub announce_port: u16,
    /// replica-announced: Sentinel lists this replica (INFO replica_announced).
    pub announced: bool,
    /// bind-source-addr: the local address a replica's connection to its master is made
    /// from (empty: the system's choice).
    pub bind_source_addr: String,
}

impl Default for ReplConfig {
    fn default() -> Self {
        ReplConfig {
            backlog_size: 1 << 20,
            diskless_sync: true,
            diskless_sync_delay: 5,
            diskless_sync_max_replicas: 0,
            ping_period: 10,
            timeout: 60,
            min_replicas_to_write: 0,
            min_replicas_max_lag: 10,
            read_only: true,
            serve_stale_data: true,
            ignore_disk_write_errors: false,
            disable_tcp_nodelay: false,
            masterauth: Vec::new(),
            masteruser: Vec::new(),
            replicaof: None,
            backlog_ttl: 3600,
            diskless_load: DisklessLoad::Disabled,
            propagation_error: PropagationError::Ignore,
            ignore_maxmemory: true,
            priority: 100,
            announce_ip: String::new(),
            announce_port: 0,
            announced: true,
            bind_source_addr: String::new(),
        }
    }
}

impl ReplConfig {
    /// Applies parameter `name` (one of [`NAMES`]).
    pub fn apply(&mut self, name: &str, value: &[u8]) -> Result<(), ConfigError> {
        let text = String::from_utf8_lossy(value).into_owned();
        let int = |min: i64| int_in(&text, min, i32::MAX as i64).map(|v| v as u64);
        match name {
            "repl-backlog-size" => self.backlog_size = memory_in(&text, 1, i64::MAX as u64)?,
            "repl-diskless-sync" => self.diskless_sync = yes_no(&text)?,
            "repl-diskless-sync-delay" => self.diskless_sync_delay = int(0)?,
            "repl-diskless-sync-max-replicas" => self.diskless_sync_max_replicas = int(0)?,
            "repl-ping-replica-period" => self.ping_period = int(1)?,
            "repl-timeout" => self.timeout = int(1)?,
            "min-replicas-to-write" => self.min_replicas_to_write = int(0)?,
            "min-replicas-max-lag" => self.min_replicas_max_lag = int(0)?,
            "replica-read-only" => self.read_only = yes_no(&text)?,
            "replica-ignore-disk-write-errors" => self.ignore_disk_write_errors = yes_no(&text)?,
            "repl-disable-tcp-nodelay" => self.disable_tcp_nodelay = yes_no(&text)?,
            "replica-serve-stale-data" => self.serve_stale_data = yes_no(&text)?,
            "masterauth" => self.masterauth = value.to_vec(),
            "masteruser" => self.masteruser = value.to_vec(),
            "repl-backlog-ttl" => {
                self.backlog_ttl = int_in(&text, 0, i64::MAX)? as u64;
            }
            "repl-diskless-load" => {
                let name = one_of(&text, &DisklessLoad::NAMES)?;
                self.diskless_load = match name.as_str() {
                    "disabled" => DisklessLoad::Disabled,
                    "on-empty-db" => DisklessLoad::OnEmptyDb,
                    _ => DisklessLoad::Swapdb,
                };
            }
            "propagation-error-behavior" => {
                let name = one_of(&text, &PropagationError::NAMES)?;
                self.propagation_error = match name.as_str() {
                    "ignore" => PropagationError::Ignore,
                    "panic" => PropagationError::Panic,
                    _ => PropagationError::PanicOnReplicas,
                };
            }
            "replica-ignore-maxmemory" => self.ignore_maxmemory = yes_no(&text)?,
            "replica-priority" => self.priority = int(0)?,
            "replica-announce-ip" => self.announce_ip = text,
            "bind-source-addr" => self.bind_source_addr = text,
            "replica-announce-port" => self.announce_port = int_in(&text, 0, 65535)? as u16,
            "replica-announced" => self.announced = yes_no(&text)?,
            _ => return Err(ConfigError::Unknown),
        }
        Ok(())
    }

    /// The value CONFIG GET shows for `name` (one of [`NAMES`]).
    pub fn value_of(&self, name: &str) -> String {
        match name {
            "repl-backlog-size" => self.backlog_size.to_string(),
            "repl-diskless-sync" => yes_no_name(self.diskless_sync),
            "repl-diskless-sync-delay" => self.diskless_sync_delay.to_string(),
            "repl-diskless-sync-max-replicas" => self.diskless_sync_max_replicas.to_string(),
            "repl-ping-replica-period" => self.ping_period.to_string(),
            "repl-timeout" => self.timeout.to_string(),
            "min-replicas-to-write" => self.min_replicas_to_write.to_string(),
            "min-replicas-max-lag" => self.min_replicas_max_lag.to_string(),
            "replica-read-only" => yes_no_name(self.read_only),
            "replica-ignore-disk-write-errors" => yes_no_name(self.ignore_disk_write_errors),
            "repl-disable-tcp-nodelay" => yes_no_name(self.disable_tcp_nodelay),
            "replica-serve-stale-data" => yes_no_name(self.serve_stale_data),
            "masterauth" => String::from_utf8_lossy(&self.masterauth).into_owned(),
            "masteruser" => String::from_utf8_lossy(&self.masteruser).into_owned(),
            "repl-backlog-ttl" => self.backlog_ttl.to_string(),
            "repl-diskless-load" => self.diskless_load.name().into(),
            "propagation-error-behavior" => self.propagation_error.name().into(),
            "replica-ignore-maxmemory" => yes_no_name(self.ignore_maxmemory),
            "replica-priority" => self.priority.to_string(),
            "replica-announce-ip" => self.announce_ip.clone(),
            "bind-source-addr" => self.bind_source_addr.clone(),
            "replica-announce-port" => self.announce_port.to_string(),
            "replica-announced" => yes_no_name(self.announced),
            _ => String::new(),
        }
    }

    /// The `replicaof host port` directive (file and command line only, as in Redis).
    pub fn set_replicaof(&mut self, text: &str) -> Result<(), ConfigError> {
        let words: Vec<&str> = text.split_whitespace().collect();
        let [host, port] = words[..] else {
            return Err(ConfigError::BadValue("wrong number of arguments".into()));
        };
        if host.eq_ignore_ascii_case("no") && port.eq_ignore_ascii_case("one") {
            self.replicaof = None;
            return Ok(());
        }
        let port = int_in(port, 0, 65535)
            .map_err(|_| ConfigError::BadValue("Invalid master port".into()))?;
        self.replicaof = Some((host.to_string(), port as u16));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_applies_and_reads_back() {
        let mut c = ReplConfig::default();
        for (name, value) in [
            ("repl-backlog-size", "2mb"),
            ("repl-diskless-sync", "no"),
            ("repl-diskless-sync-delay", "0"),
            ("repl-diskless-sync-max-replicas", "3"),
            ("repl-ping-replica-period", "2"),
            ("repl-timeout", "5"),
            ("min-replicas-to-write", "1"),
            ("min-replicas-max-lag", "4"),
            ("replica-read-only", "no"),
            ("replica-serve-stale-data", "no"),
            ("masterauth", "secret"),
            ("masteruser", "repl"),
            ("repl-backlog-ttl", "0"),
            ("repl-diskless-load", "swapdb"),
            ("replica-ignore-maxmemory", "no"),
            ("replica-priority", "0"),
            ("replica-announce-ip", "10.0.0.1"),
            ("replica-announce-port", "7000"),
            ("replica-announced", "no"),
            ("bind-source-addr", "127.0.0.2"),
            ("propagation-error-behavior", "panic"),
            ("replica-ignore-disk-write-errors", "yes"),
            ("repl-disable-tcp-nodelay", "yes"),
        ] {
            c.apply(name, value.as_bytes()).unwrap();
            let expect = if name == "repl-backlog-size" {
                "2097152"
            } else {
                value
            };
            assert_eq!(c.value_of(name), expect, "{name}");
        }
        assert_eq!(NAMES.len(), 23);
        assert!(c.apply("repl-diskless-load", b"sometimes").is_err());
        c.apply("repl-diskless-load", b"ON-EMPTY-DB").unwrap();
        assert_eq!(c.value_of("repl-diskless-load"), "on-empty-db");
        assert!(c.apply("propagation-error-behavior", b"crash").is_err());
        c.apply("propagation-error-behavior", b"Panic-On-Replicas")
            .unwrap();
        assert_eq!(
            c.value_of("propagation-error-behavior"),
            "panic-on-replicas"
        );
        assert!(c.apply("repl-timeout", b"0").is_err());
        assert!(c.apply("repl-backlog-size", b"0").is_err());
        c.set_replicaof("127.0.0.1 6380").unwrap();
        assert_eq!(c.replicaof, Some(("127.0.0.1".into(), 6380)));
        assert!(c.set_replicaof("127.0.0.1").is_err());
        assert!(c.set_replicaof("h 70000").is_err());
        c.set_replicaof("no one").unwrap();
        assert_eq!(c.replicaof, None);
    }
}
