//! Counters behind INFO stats, commandstats and errorstats.

use std::collections::BTreeMap;

/// Per-command counters (INFO commandstats).
#[derive(Debug, Default, Clone, Copy)]
pub struct CommandStats {
    /// Calls that ran.
    pub calls: u64,
    /// Total microseconds spent.
    pub usec: u64,
    /// Calls refused before running (arity, NOAUTH, ...).
    pub rejected_calls: u64,
    /// Calls that ran and replied with an error.
    pub failed_calls: u64,
}

/// Server-wide counters.
#[derive(Debug, Default)]
pub struct Stats {
    /// total_connections_received
    pub connections_received: u64,
    /// rejected_connections
    pub rejected_connections: u64,
    /// total_commands_processed
    pub commands_processed: u64,
    /// total_net_input_bytes
    pub net_input_bytes: u64,
    /// total_net_output_bytes
    pub net_output_bytes: u64,
    /// expired_keys
    pub expired_keys: u64,
    /// keyspace_hits
    pub keyspace_hits: u64,
    /// keyspace_misses
    pub keyspace_misses: u64,
    /// total_error_replies
    pub error_replies: u64,
    /// Per error code (the first word of the error): errorstats.
    pub errors: BTreeMap<String, u64>,
    /// Per command name ("client|list" for subcommands).
    pub commands: BTreeMap<&'static str, CommandStats>,
    /// Samples of (millis, commands_processed) for instantaneous_ops_per_sec.
    pub ops_samples: std::collections::VecDeque<(u64, u64)>,
}

impl Stats {
    /// Records an error reply with its code.
    pub fn count_error(&mut self, message: &str) {
        self.error_replies += 1;
        let code = message.split(' ').next().unwrap_or("ERR");
        *self.errors.entry(code.to_owned()).or_default() += 1;
    }

    /// Adds a sample of the command counter (called from the cron).
    pub fn sample_ops(&mut self, now_ms: u64) {
        self.ops_samples
            .push_back((now_ms, self.commands_processed));
        while self.ops_samples.len() > 16 {
            self.ops_samples.pop_front();
        }
    }

    /// instantaneous_ops_per_sec over the samples kept.
    pub fn ops_per_sec(&self) -> u64 {
        match (self.ops_samples.front(), self.ops_samples.back()) {
            (Some(a), Some(b)) if b.0 > a.0 => (b.1 - a.1) * 1000 / (b.0 - a.0),
            _ => 0,
        }
    }

    /// CONFIG RESETSTAT.
    pub fn reset(&mut self) {
        *self = Stats::default();
    }
}
