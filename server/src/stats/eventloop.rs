//! The event loop's own figures (Redis 7.2's INFO eventloop_* and the debug section):
//! how many rounds it made, how long they took, and how much of that went to commands,
//! to the AOF and to the periodic work. Durations are kept in nanoseconds and shown in
//! microseconds, as Redis shows them.

use std::time::{Duration, Instant};

/// Sums and maxima of the loop's rounds since start or CONFIG RESETSTAT.
#[derive(Debug, Default)]
pub struct EventLoopStats {
    /// Rounds completed (eventloop_cycles).
    pub cycles: u64,
    /// Their total time, from poll's return to the next poll (eventloop_duration_sum).
    pub duration_ns: u64,
    /// The longest round (eventloop_duration_max).
    pub duration_max_ns: u64,
    /// Time in top-level commands (eventloop_duration_cmd_sum).
    pub command_ns: u64,
    /// Time writing the AOF (eventloop_duration_aof_sum).
    pub aof_ns: u64,
    /// Time in periodic work: the cron and the bookkeeping after the events
    /// (eventloop_duration_cron_sum).
    pub cron_ns: u64,
    /// The most commands one round ran (eventloop_cmd_per_cycle_max).
    pub commands_per_cycle_max: u64,
    /// The round under way: when poll returned, and the command count then.
    round: Option<(Instant, u64)>,
}

/// Nanoseconds of a duration, saturated.
fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

impl EventLoopStats {
    /// A round starts (poll returned); `commands` is total_commands_processed now.
    pub fn round_started(&mut self, commands: u64) {
        self.round = Some((Instant::now(), commands));
    }

    /// The round ends (the loop is about to poll again); `commands` as above.
    pub fn round_ended(&mut self, commands: u64) {
        let Some((start, at_start)) = self.round.take() else {
            return;
        };
        let took = nanos(start.elapsed());
        self.cycles += 1;
        self.duration_ns += took;
        self.duration_max_ns = self.duration_max_ns.max(took);
        self.commands_per_cycle_max = self
            .commands_per_cycle_max
            .max(commands.saturating_sub(at_start));
    }

    /// A top-level command ran for `took`.
    #[inline]
    pub fn command(&mut self, took: Duration) {
        self.command_ns += nanos(took);
    }

    /// The AOF was written (and maybe fsynced) in `took`.
    pub fn aof(&mut self, took: Duration) {
        self.aof_ns += nanos(took);
    }

    /// Periodic work took `took`.
    pub fn cron(&mut self, took: Duration) {
        self.cron_ns += nanos(took);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_round_counts_its_time_and_commands() {
        let mut s = EventLoopStats::default();
        s.round_ended(5);
        assert_eq!(s.cycles, 0, "no round was started");
        s.round_started(10);
        std::thread::sleep(Duration::from_millis(2));
        s.round_ended(13);
        assert_eq!(s.cycles, 1);
        assert!(s.duration_ns >= 2_000_000);
        assert_eq!(s.duration_max_ns, s.duration_ns);
        assert_eq!(s.commands_per_cycle_max, 3);
        s.round_started(13);
        s.round_ended(14);
        assert_eq!((s.cycles, s.commands_per_cycle_max), (2, 3));
        assert!(s.duration_max_ns >= 2_000_000);
    }
}
