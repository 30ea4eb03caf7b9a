//! Counters behind INFO stats, commandstats and errorstats.

pub mod eventloop;

use eventloop::EventLoopStats;
use std::collections::BTreeMap;

/// A latency histogram in nanoseconds with two significant figures, as Redis keeps one per
/// command (an HdrHistogram from 1 ns to 1 s): a value is counted in a bucket of values that
/// agree in their top eight bits, and a percentile is answered with the highest value of the
/// bucket it falls in (hdr_value_at_percentile).
///
/// The buckets are arrays in value order, one per power of two (256 one-nanosecond buckets
/// below 256 ns, then 128 per power of two up to 2^30 ns), each allocated when a value first
/// falls in it: counting a call is an index computation and one increment, and a command
/// whose calls take similar times holds a few kilobytes.
#[derive(Debug, Default, Clone)]
pub struct LatencyHistogram {
    /// Counts per magnitude: `[0]` for values below 256, `[m - 7]` for `2^m..2^(m+1)`.
    buckets: Vec<Vec<u64>>,
    total: u64,
}

impl LatencyHistogram {
    const MAX_NANOS: u64 = 1_000_000_000;
    /// Magnitudes: below 2^8, then 8..=29.
    const MAGNITUDES: usize = 23;

    /// Width of the bucket that starts at (or holds) `v`, a power of two.
    fn unit(v: u64) -> u64 {
        let magnitude = 63 - (v | 0xff).leading_zeros();
        1 << (magnitude - 7)
    }

    /// The (magnitude, bucket) holding `v` (at most `MAX_NANOS`).
    fn index(v: u64) -> (usize, usize) {
        let magnitude = 63 - (v | 0xff).leading_zeros();
        if magnitude == 7 {
            (0, v as usize)
        } else {
            (
                magnitude as usize - 7,
                (v >> (magnitude - 7)) as usize - 128,
            )
        }
    }

    /// The lowest value of bucket `i` of magnitude slot `m`.
    fn low(m: usize, i: usize) -> u64 {
        if m == 0 {
            i as u64
        } else {
            ((i + 128) as u64) << m
        }
    }

    /// Counts one duration (inlined in the command path: an index computation and two
    /// increments once the bucket's array exists).
    #[inline]
    pub fn record(&mut self, nanos: u64) {
        let (m, i) = Self::index(nanos.clamp(1, Self::MAX_NANOS));
        match self.buckets.get_mut(m).and_then(|slot| slot.get_mut(i)) {
            Some(count) => *count += 1,
            None => self.record_first(m, i),
        }
        self.total += 1;
    }

    /// [`LatencyHistogram::record`] of the first value of its magnitude: allocates the
    /// magnitude's array (and the list of them) and counts it.
    #[cold]
    #[inline(never)]
    fn record_first(&mut self, m: usize, i: usize) {
        if self.buckets.is_empty() {
            self.buckets = vec![Vec::new(); Self::MAGNITUDES];
        }
        let slot = &mut self.buckets[m];
        if slot.is_empty() {
            *slot = vec![0; if m == 0 { 256 } else { 128 }];
        }
        slot[i] += 1;
    }

    /// Whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// The calls counted.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// LATENCY HISTOGRAM's cumulative distribution: for each power of two from 1024 ns, the
    /// highest value of the bucket starting there, in microseconds, and the calls up to it,
    /// where that count grew (Redis's fillCommandCDF over hdr_iter_log_init(1024, 2)).
    pub fn cumulative_by_powers(&self) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        let (mut seen, mut previous) = (0u64, 0u64);
        let mut counted = (0usize, 0usize);
        let mut level = 1024u64;
        while seen < self.total && level <= Self::MAX_NANOS {
            // Count every bucket up to and including the one starting at `level`.
            let (lm, li) = Self::index(level);
            for (m, slot) in self.buckets.iter().enumerate().skip(counted.0) {
                if m > lm {
                    break;
                }
                let end = if m == lm { li + 1 } else { slot.len() };
                let start = if m == counted.0 { counted.1 } else { 0 };
                seen += slot
                    .get(start..end.min(slot.len()))
                    .map_or(0, |c| c.iter().sum());
                counted = if m == lm { (m, end) } else { (m + 1, 0) };
            }
            if seen > previous {
                out.push(((level + Self::unit(level) - 1) / 1000, seen));
                previous = seen;
            }
            level *= 2;
        }
        if seen < self.total {
            // Past the last level (2^29 ns): HDR's iterator ends on its last bucket, whose
            // highest value is 2^30 - 1 ns.
            out.push((((1u64 << 30) - 1) / 1000, self.total));
        }
        out
    }

    /// The value at `percentile` (0 to 100), in nanoseconds.
    pub fn percentile(&self, percentile: f64) -> u64 {
        let wanted = ((percentile.min(100.0) / 100.0) * self.total as f64 + 0.5) as u64;
        let mut seen = 0;
        for (m, slot) in self.buckets.iter().enumerate() {
            for (i, &count) in slot.iter().enumerate() {
                seen += count;
                if count > 0 && seen >= wanted.max(1) {
                    let low = Self::low(m, i);
                    return low + Self::unit(low) - 1;
                }
            }
        }
        0
    }
}

/// Per-command counters (INFO commandstats and latencystats).
#[derive(Debug, Default, Clone)]
pub struct CommandStats {
    /// The command's name ("client|list" for subcommands).
    pub name: &'static str,
    /// Calls that ran.
    pub calls: u64,
    /// Total microseconds spent.
    pub usec: u64,
    /// Calls refused before running (arity, NOAUTH, ...).
    pub rejected_calls: u64,
    /// Calls that ran and replied with an error.
    pub failed_calls: u64,
    /// Durations of the calls that ran.
    pub latency: LatencyHistogram,
}

/// The counters at one moment, for the instantaneous_* fields.
#[derive(Debug, Default, Clone, Copy)]
pub struct Sample {
    /// Unix milliseconds.
    pub ms: u64,
    /// total_commands_processed.
    pub commands: u64,
    /// Network input bytes.
    pub input: u64,
    /// Network output bytes.
    pub output: u64,
    /// Replication input bytes.
    pub repl_input: u64,
    /// Replication output bytes.
    pub repl_output: u64,
    /// Event loop rounds.
    pub cycles: u64,
    /// Their total time, nanoseconds.
    pub cycles_ns: u64,
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
    /// total_net_repl_input_bytes: read from the master (its snapshot and stream).
    pub net_repl_input_bytes: u64,
    /// total_net_repl_output_bytes: written to replicas (snapshots and stream).
    pub net_repl_output_bytes: u64,
    /// total_error_replies
    pub error_replies: u64,
    /// unexpected_error_replies: errors replied to a master, a replica or the AOF's replay.
    pub unexpected_error_replies: u64,
    /// total_reads_processed: read calls on client sockets.
    pub reads_processed: u64,
    /// total_writes_processed: write calls on client sockets.
    pub writes_processed: u64,
    /// reply_buffer_shrinks: reply buffers the cron made smaller.
    pub reply_buffer_shrinks: u64,
    /// reply_buffer_expands: reply buffers the cron made larger.
    pub reply_buffer_expands: u64,
    /// Per error code (the first word of the error): errorstats.
    pub errors: BTreeMap<String, u64>,
    /// Per command, by the command's stats slot (see [`Stats::command`]).
    commands: Vec<CommandStats>,
    /// Samples for the instantaneous_* fields.
    pub ops_samples: std::collections::VecDeque<Sample>,
    /// The event loop's rounds (eventloop_* and the debug section).
    pub eventloop: EventLoopStats,
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
        self.ops_samples.push_back(Sample {
            ms: now_ms,
            commands: self.commands_processed,
            input: self.net_input_bytes,
            output: self.net_output_bytes,
            repl_input: self.net_repl_input_bytes,
            repl_output: self.net_repl_output_bytes,
            cycles: self.eventloop.cycles,
            cycles_ns: self.eventloop.duration_ns,
        });
        while self.ops_samples.len() > 16 {
            self.ops_samples.pop_front();
        }
    }

    /// instantaneous_ops_per_sec over the samples kept.
    pub fn ops_per_sec(&self) -> u64 {
        match (self.ops_samples.front(), self.ops_samples.back()) {
            (Some(a), Some(b)) if b.ms > a.ms => (b.commands - a.commands) * 1000 / (b.ms - a.ms),
            _ => 0,
        }
    }

    /// instantaneous_eventloop_cycles_per_sec over the samples kept.
    pub fn cycles_per_sec(&self) -> u64 {
        match (self.ops_samples.front(), self.ops_samples.back()) {
            (Some(a), Some(b)) if b.ms > a.ms => (b.cycles - a.cycles) * 1000 / (b.ms - a.ms),
            _ => 0,
        }
    }

    /// instantaneous_eventloop_duration_usec: the mean round over the samples kept.
    pub fn cycle_usec(&self) -> u64 {
        match (self.ops_samples.front(), self.ops_samples.back()) {
            (Some(a), Some(b)) if b.cycles > a.cycles => {
                (b.cycles_ns - a.cycles_ns) / (b.cycles - a.cycles) / 1000
            }
            _ => 0,
        }
    }

    /// Kilobytes a second between the oldest and newest sample of one byte counter.
    fn kbps(&self, counter: impl Fn(&Sample) -> u64) -> f64 {
        match (self.ops_samples.front(), self.ops_samples.back()) {
            (Some(a), Some(b)) if b.ms > a.ms => {
                (counter(b).saturating_sub(counter(a))) as f64 / 1024.0 * 1000.0
                    / (b.ms - a.ms) as f64
            }
            _ => 0.0,
        }
    }

    /// instantaneous_input_kbps
    pub fn input_kbps(&self) -> f64 {
        self.kbps(|s| s.input)
    }

    /// instantaneous_output_kbps
    pub fn output_kbps(&self) -> f64 {
        self.kbps(|s| s.output)
    }

    /// instantaneous_input_repl_kbps
    pub fn input_repl_kbps(&self) -> f64 {
        self.kbps(|s| s.repl_input)
    }

    /// instantaneous_output_repl_kbps
    pub fn output_repl_kbps(&self) -> f64 {
        self.kbps(|s| s.repl_output)
    }

    /// Moves the output bytes counted since `before` (of total_net_output_bytes) to the
    /// replication's count: they went to a replica, as Redis counts them.
    pub fn output_was_replication(&mut self, before: u64) {
        let n = self.net_output_bytes - before;
        self.net_output_bytes = before;
        self.net_repl_output_bytes += n;
    }

    /// The counters of the command with stats slot `slot` called `name`.
    #[inline]
    pub fn command(&mut self, slot: usize, name: &'static str) -> &mut CommandStats {
        if slot >= self.commands.len() {
            self.commands.resize_with(slot + 1, CommandStats::default);
        }
        let c = &mut self.commands[slot];
        c.name = name;
        c
    }

    /// Every command's counters that ever counted something, by name.
    pub fn commands_by_name(&self) -> Vec<&CommandStats> {
        let mut v: Vec<&CommandStats> = self
            .commands
            .iter()
            .filter(|c| !c.name.is_empty())
            .collect();
        v.sort_unstable_by_key(|c| c.name);
        v
    }

    /// CONFIG RESETSTAT.
    pub fn reset(&mut self) {
        *self = Stats::default();
    }
}

#[cfg(test)]
mod tests {
    use super::LatencyHistogram;

    #[test]
    fn bucket_index_and_low_agree() {
        let mut last = (0, 0);
        for v in (1..5000u64).chain((5000..1_000_000_000).step_by(99_991)) {
            let (m, i) = LatencyHistogram::index(v);
            assert!((m, i) >= last && m < LatencyHistogram::MAGNITUDES, "{v}");
            assert!(i < if m == 0 { 256 } else { 128 }, "{v}");
            let unit = LatencyHistogram::unit(v);
            assert_eq!(LatencyHistogram::low(m, i), v / unit * unit, "{v}");
            last = (m, i);
        }
    }

    #[test]
    fn cumulative_distribution_as_latency_histogram_prints_it() {
        let mut h = LatencyHistogram::default();
        assert!(h.cumulative_by_powers().is_empty());
        // A CONFIG RESETSTAT of ~263 us on Redis: one call, "264".
        h.record(263_000);
        assert_eq!(h.cumulative_by_powers(), vec![(264, 1)]);
        for v in [500, 1024, 1031, 1032, 5000, 40_000] {
            h.record(v);
        }
        // 500, 1024, 1031 up to the 1024 bucket (1 us); 1032 by 2048's bucket (2 us);
        // 5000 by 8192's (8 us); 40000 by 65536's (66 us).
        assert_eq!(
            h.cumulative_by_powers(),
            vec![(1, 3), (2, 4), (8, 5), (66, 6), (264, 7)]
        );
        h.record(5_000_000_000);
        assert_eq!(h.cumulative_by_powers().last(), Some(&(1_073_741, 8)));
    }

    #[test]
    fn percentiles_as_redis_reports_them() {
        let mut h = LatencyHistogram::default();
        assert!(h.is_empty());
        // Redis reports one PING of 4000 ns as p50=4.015 (the bucket 4000..4015).
        h.record(4000);
        assert_eq!(h.percentile(50.0), 4015);
        assert_eq!(h.percentile(99.9), 4015);
        let mut h = LatencyHistogram::default();
        for v in 1..=100u64 {
            h.record(v);
        }
        assert_eq!(h.percentile(50.0), 50);
        assert_eq!(h.percentile(99.0), 99);
        assert_eq!(h.percentile(100.0), 100);
        // Past one second a duration counts as one second, as in Redis.
        h.record(5_000_000_000);
        let unit = LatencyHistogram::unit(1_000_000_000);
        assert_eq!(h.percentile(100.0), 1_000_000_000 / unit * unit + unit - 1);
    }
}
