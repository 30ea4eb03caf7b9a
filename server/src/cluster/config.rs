//! The cluster directives (redis.conf, flags, CONFIG GET/SET), with Redis 7.2's names,
//! defaults, ranges and mutability. [`crate::config`] lists them and calls [`apply`] and
//! [`value_of`].

use crate::config::ConfigError;

/// The cluster's configuration.
#[derive(Debug, Clone)]
pub struct ClusterConfig {
    /// cluster-enabled (start-up only).
    pub enabled: bool,
    /// cluster-config-file: nodes.conf, relative to `dir` (start-up only).
    pub config_file: String,
    /// cluster-port: the bus port; 0 means port + 10000 (start-up only).
    pub port: u16,
    /// cluster-node-timeout, milliseconds.
    pub node_timeout: u64,
    /// cluster-announce-ip ("" none).
    pub announce_ip: String,
    /// cluster-announce-port (0 none).
    pub announce_port: u16,
    /// cluster-announce-tls-port (0 none).
    pub announce_tls_port: u16,
    /// cluster-announce-bus-port (0 none).
    pub announce_bus_port: u16,
    /// cluster-announce-hostname ("" none).
    pub announce_hostname: String,
    /// cluster-announce-human-nodename ("" none): the name log lines give this node.
    pub announce_human_nodename: String,
    /// cluster-preferred-endpoint-type: ip, hostname or unknown-endpoint.
    pub preferred_endpoint: String,
    /// cluster-require-full-coverage.
    pub require_full_coverage: bool,
    /// cluster-allow-reads-when-down.
    pub allow_reads_when_down: bool,
    /// cluster-allow-pubsubshard-when-down.
    pub allow_pubsubshard_when_down: bool,
    /// cluster-allow-replica-migration.
    pub allow_replica_migration: bool,
    /// cluster-replica-no-failover (alias cluster-slave-no-failover).
    pub replica_no_failover: bool,
    /// cluster-replica-validity-factor (alias cluster-slave-validity-factor).
    pub replica_validity_factor: u64,
    /// cluster-migration-barrier.
    pub migration_barrier: u64,
    /// cluster-link-sendbuf-limit, bytes (0: none).
    pub link_sendbuf_limit: u64,
    /// cluster-ping-interval, milliseconds: a node whose last pong is older is pinged
    /// (0: half the node timeout). Hidden, for tests, as in Redis.
    pub ping_interval: u64,
}

impl Default for ClusterConfig {
    fn default() -> Self {
        ClusterConfig {
            enabled: false,
            config_file: "nodes.conf".into(),
            port: 0,
            node_timeout: 15000,
            announce_ip: String::new(),
            announce_port: 0,
            announce_tls_port: 0,
            announce_bus_port: 0,
            announce_hostname: String::new(),
            announce_human_nodename: String::new(),
            preferred_endpoint: "ip".into(),
            require_full_coverage: true,
            allow_reads_when_down: false,
            allow_pubsubshard_when_down: true,
            allow_replica_migration: true,
            replica_no_failover: false,
            replica_validity_factor: 10,
            migration_barrier: 1,
            link_sendbuf_limit: 0,
            ping_interval: 0,
        }
    }
}

/// The directives: name, alias, start-up only.
pub const PARAMS: &[(&str, Option<&str>, bool)] = &[
    ("cluster-enabled", None, true),
    ("cluster-config-file", None, true),
    ("cluster-port", None, true),
    ("cluster-node-timeout", None, false),
    ("cluster-announce-ip", None, false),
    ("cluster-announce-port", None, false),
    ("cluster-announce-tls-port", None, false),
    ("cluster-announce-bus-port", None, false),
    ("cluster-announce-hostname", None, false),
    ("cluster-announce-human-nodename", None, false),
    ("cluster-preferred-endpoint-type", None, false),
    ("cluster-require-full-coverage", None, false),
    ("cluster-allow-reads-when-down", None, false),
    ("cluster-allow-pubsubshard-when-down", None, false),
    ("cluster-allow-replica-migration", None, false),
    (
        "cluster-replica-no-failover",
        Some("cluster-slave-no-failover"),
        false,
    ),
    (
        "cluster-replica-validity-factor",
        Some("cluster-slave-validity-factor"),
        false,
    ),
    ("cluster-migration-barrier", None, false),
    ("cluster-link-sendbuf-limit", None, false),
    ("cluster-ping-interval", None, false),
];

const ENDPOINT_TYPES: [&str; 3] = ["ip", "hostname", "unknown-endpoint"];

/// Whether `text` may be announced as a hostname (Redis's isValidAuxString: letters,
/// digits, '-' and '.').
pub fn valid_hostname(text: &str) -> bool {
    text.bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.')
}

/// Whether `text` may be a nodes.conf auxiliary value (Redis's isValidAuxString: no
/// byte of `!#$%&()*+:;<>?@[]^{|}~`).
pub fn valid_aux(text: &str) -> bool {
    !text.bytes().any(|b| b"!#$%&()*+:;<>?@[]^{|}~".contains(&b))
}

/// Applies canonical directive `name` (one of [`PARAMS`]).
pub fn apply(c: &mut ClusterConfig, name: &str, text: &str) -> Result<(), ConfigError> {
    use crate::config::{int_in, memory_in, one_of, yes_no};
    let port = |text: &str| int_in(text, 0, 65535).map(|v| v as u16);
    match name {
        "cluster-enabled" => c.enabled = yes_no(text)?,
        "cluster-config-file" => c.config_file = text.into(),
        "cluster-port" => c.port = port(text)?,
        "cluster-node-timeout" => c.node_timeout = int_in(text, 0, i64::MAX)? as u64,
        "cluster-announce-ip" => c.announce_ip = text.into(),
        "cluster-announce-port" => c.announce_port = port(text)?,
        "cluster-announce-tls-port" => c.announce_tls_port = port(text)?,
        "cluster-announce-bus-port" => c.announce_bus_port = port(text)?,
        "cluster-announce-hostname" => {
            if text.len() > 255 {
                return Err(ConfigError::BadValue(
                    "Hostnames must be less than 256 characters".into(),
                ));
            }
            if !valid_hostname(text) {
                return Err(ConfigError::BadValue(
                    "Hostnames may only contain alphanumeric characters, hyphens or dots".into(),
                ));
            }
            c.announce_hostname = text.into()
        }
        "cluster-announce-human-nodename" => {
            if !valid_aux(text) {
                return Err(ConfigError::BadValue(
                    "Announced human node name contained invalid character".into(),
                ));
            }
            c.announce_human_nodename = text.into()
        }
        "cluster-preferred-endpoint-type" => c.preferred_endpoint = one_of(text, &ENDPOINT_TYPES)?,
        "cluster-require-full-coverage" => c.require_full_coverage = yes_no(text)?,
        "cluster-allow-reads-when-down" => c.allow_reads_when_down = yes_no(text)?,
        "cluster-allow-pubsubshard-when-down" => c.allow_pubsubshard_when_down = yes_no(text)?,
        "cluster-allow-replica-migration" => c.allow_replica_migration = yes_no(text)?,
        "cluster-replica-no-failover" => c.replica_no_failover = yes_no(text)?,
        "cluster-replica-validity-factor" => {
            c.replica_validity_factor = int_in(text, 0, i32::MAX as i64)? as u64
        }
        "cluster-migration-barrier" => {
            c.migration_barrier = int_in(text, 0, i32::MAX as i64)? as u64
        }
        "cluster-link-sendbuf-limit" => c.link_sendbuf_limit = memory_in(text, 0, i64::MAX as u64)?,
        "cluster-ping-interval" => c.ping_interval = int_in(text, 0, i64::MAX)? as u64,
        _ => return Err(ConfigError::Unknown),
    }
    Ok(())
}

/// The value of canonical directive `name` as CONFIG GET prints it.
pub fn value_of(c: &ClusterConfig, name: &str) -> Option<String> {
    let yn = |v: bool| if v { "yes" } else { "no" }.to_string();
    Some(match name {
        "cluster-enabled" => yn(c.enabled),
        "cluster-config-file" => c.config_file.clone(),
        "cluster-port" => c.port.to_string(),
        "cluster-node-timeout" => c.node_timeout.to_string(),
        "cluster-announce-ip" => c.announce_ip.clone(),
        "cluster-announce-port" => c.announce_port.to_string(),
        "cluster-announce-tls-port" => c.announce_tls_port.to_string(),
        "cluster-announce-bus-port" => c.announce_bus_port.to_string(),
        "cluster-announce-hostname" => c.announce_hostname.clone(),
        "cluster-announce-human-nodename" => c.announce_human_nodename.clone(),
        "cluster-preferred-endpoint-type" => c.preferred_endpoint.clone(),
        "cluster-require-full-coverage" => yn(c.require_full_coverage),
        "cluster-allow-reads-when-down" => yn(c.allow_reads_when_down),
        "cluster-allow-pubsubshard-when-down" => yn(c.allow_pubsubshard_when_down),
        "cluster-allow-replica-migration" => yn(c.allow_replica_migration),
        "cluster-replica-no-failover" => yn(c.replica_no_failover),
        "cluster-replica-validity-factor" => c.replica_validity_factor.to_string(),
        "cluster-migration-barrier" => c.migration_barrier.to_string(),
        "cluster-link-sendbuf-limit" => c.link_sendbuf_limit.to_string(),
        "cluster-ping-interval" => c.ping_interval.to_string(),
        _ => return None,
    })
}

impl ClusterConfig {
    /// How old a node's last pong may get before it is pinged (cluster-ping-interval, or
    /// half the node timeout), milliseconds.
    pub fn ping_interval(&self) -> u64 {
        if self.ping_interval != 0 {
            self.ping_interval
        } else {
            self.node_timeout / 2
        }
    }

    /// The bus port for client port `port`: cluster-port, or port + 10000.
    pub fn bus_port(&self, port: u16) -> u16 {
        if self.port != 0 {
            self.port
        } else {
            port.wrapping_add(10000)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directives_round_trip() {
        let mut c = ClusterConfig::default();
        apply(&mut c, "cluster-enabled", "yes").unwrap();
        apply(&mut c, "cluster-node-timeout", "5000").unwrap();
        apply(&mut c, "cluster-announce-hostname", "a.b-c").unwrap();
        assert!(apply(&mut c, "cluster-announce-hostname", "a b").is_err());
        apply(&mut c, "cluster-announce-human-nodename", "node_1.a-b").unwrap();
        assert!(apply(&mut c, "cluster-announce-human-nodename", "a:b").is_err());
        assert_eq!(
            value_of(&c, "cluster-announce-human-nodename").unwrap(),
            "node_1.a-b"
        );
        assert!(apply(&mut c, "cluster-port", "70000").is_err());
        assert!(apply(&mut c, "cluster-preferred-endpoint-type", "x").is_err());
        assert_eq!(value_of(&c, "cluster-enabled").unwrap(), "yes");
        assert_eq!(value_of(&c, "cluster-node-timeout").unwrap(), "5000");
        assert_eq!(c.bus_port(7000), 17000);
        apply(&mut c, "cluster-port", "9999").unwrap();
        assert_eq!(c.bus_port(7000), 9999);
    }
}
