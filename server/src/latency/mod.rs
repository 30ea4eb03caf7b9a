//! The latency monitor (Redis's latency.c): while `latency-monitor-threshold` is non-zero,
//! every event that took at least that many milliseconds ("command", "fast-command",
//! "fork", "expire-cycle", "expire-del", "eviction-del", "eviction-cycle", "aof-write",
//! "aof-fsync-always", "aof-rename", ...) is kept in a
//! time series of its own: the worst latency of each second, the last 160 such seconds,
//! and the all-time maximum. LATENCY LATEST, HISTORY, GRAPH, DOCTOR and RESET read it
//! (`commands::latency`).
//!
//! The monitor is process-wide, as Redis's `server.latency_events`, so that the places
//! that time something (the command path, forks, the AOF writer, eviction, active expiry)
//! report with one call and no plumbing: [`sample`] is one atomic load while the monitor
//! is off.
//!
//! - [`sparkline`]: the ASCII graph of LATENCY GRAPH.
//! - [`doctor`]: the report of LATENCY DOCTOR.
//! - [`tracking`]: the latency-tracking parameters (per-command histograms).

pub mod doctor;
pub mod sparkline;
pub mod tracking;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// Seconds of history kept per event (Redis's LATENCY_TS_LEN).
pub const HISTORY_LEN: usize = 160;

/// Columns of LATENCY GRAPH.
const GRAPH_COLUMNS: usize = 80;

static THRESHOLD_MS: AtomicU64 = AtomicU64::new(0);
static EVENTS: Mutex<Events> = Mutex::new(Events { series: Vec::new() });

/// Sets latency-monitor-threshold (0 turns the monitor off; what was kept stays).
pub fn set_threshold(ms: u64) {
    THRESHOLD_MS.store(ms, Ordering::Relaxed);
}

/// latency-monitor-threshold.
pub fn threshold() -> u64 {
    THRESHOLD_MS.load(Ordering::Relaxed)
}

/// Records that `event` took `elapsed`, when the monitor is on and it took at least the
/// threshold (Redis's latencyAddSampleIfNeeded, in whole milliseconds).
#[inline]
pub fn sample(event: &'static str, elapsed: Duration) {
    sample_ms(event, elapsed.as_millis() as u64);
}

/// [`sample`] with a duration already in milliseconds.
#[inline]
pub fn sample_ms(event: &'static str, ms: u64) {
    let threshold = threshold();
    if threshold != 0 && ms >= threshold {
        with(|e| e.add(event, ms, crate::clock::unix_ms() / 1000));
    }
}

/// Runs `f` on the process's events.
pub fn with<T>(f: impl FnOnce(&mut Events) -> T) -> T {
    let mut events = EVENTS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    f(&mut events)
}

/// One event's history: a ring of (second, worst latency of that second).
#[derive(Debug, Clone)]
pub struct Series {
    /// The next slot to write.
    idx: usize,
    /// The all-time maximum, milliseconds.
    pub max: u64,
    /// (Unix second, milliseconds); a second of 0 is an empty slot.
    samples: [(u64, u64); HISTORY_LEN],
}

impl Series {
    fn new() -> Series {
        Series {
            idx: 0,
            max: 0,
            samples: [(0, 0); HISTORY_LEN],
        }
    }

    /// The samples kept, oldest first.
    pub fn samples(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        (0..HISTORY_LEN)
            .map(move |j| self.samples[(self.idx + j) % HISTORY_LEN])
            .filter(|s| s.0 != 0)
    }

    /// The latest sample (time and latency; zeros when none).
    pub fn last(&self) -> (u64, u64) {
        self.samples[(self.idx + HISTORY_LEN - 1) % HISTORY_LEN]
    }
}

/// Every event's series, in the order the events first happened.
#[derive(Debug)]
pub struct Events {
    series: Vec<(String, Series)>,
}

impl Events {
    /// Adds a sample of `ms` at Unix second `now` (Redis's latencyAddSample): a second
    /// already sampled keeps its worst latency.
    pub fn add(&mut self, event: &str, ms: u64, now: u64) {
        let at = match self.series.iter().position(|(n, _)| n == event) {
            Some(at) => at,
            None => {
                self.series.push((event.to_owned(), Series::new()));
                self.series.len() - 1
            }
        };
        let ts = &mut self.series[at].1;
        ts.max = ts.max.max(ms);
        let prev = (ts.idx + HISTORY_LEN - 1) % HISTORY_LEN;
        if ts.samples[prev].0 == now {
            ts.samples[prev].1 = ts.samples[prev].1.max(ms);
            return;
        }
        ts.samples[ts.idx] = (now, ms);
        ts.idx = (ts.idx + 1) % HISTORY_LEN;
    }

    /// The series of `event` (names compare exactly, as Redis's dictionary does).
    pub fn get(&self, event: &[u8]) -> Option<(&str, &Series)> {
        self.series
            .iter()
            .find(|(n, _)| n.as_bytes() == event)
            .map(|(n, s)| (n.as_str(), s))
    }

    /// Every event with its series.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Series)> {
        self.series.iter().map(|(n, s)| (n.as_str(), s))
    }

    /// Whether no event was recorded (since the last reset).
    pub fn is_empty(&self) -> bool {
        self.series.is_empty()
    }

    /// Forgets `event` (ASCII case ignored), or every event; returns how many went.
    pub fn reset(&mut self, event: Option<&[u8]>) -> usize {
        let before = self.series.len();
        self.series
            .retain(|(n, _)| event.is_some_and(|e| !n.as_bytes().eq_ignore_ascii_case(e)));
        before - self.series.len()
    }

    /// LATENCY GRAPH's text for `event` at Unix second `now`: a title, a rule, and the
    /// sparkline of its samples labelled by their age.
    pub fn graph(&self, event: &[u8], now: u64) -> Option<String> {
        let (name, ts) = self.get(event)?;
        let mut seq = sparkline::Sequence::default();
        let (mut min, mut max) = (0, 0);
        for (i, (time, ms)) in ts.samples().enumerate() {
            if i == 0 {
                (min, max) = (ms, ms);
            } else {
                max = max.max(ms);
                min = min.min(ms);
            }
            let elapsed = now as i64 - time as i64;
            let label = if elapsed < 60 {
                format!("{elapsed}s")
            } else if elapsed < 3600 {
                format!("{}m", elapsed / 60)
            } else if elapsed < 3600 * 24 {
                format!("{}h", elapsed / 3600)
            } else {
                format!("{}d", elapsed / (3600 * 24))
            };
            seq.add(ms as f64, &label);
        }
        let mut out = format!(
            "{name} - high {max} ms, low {min} ms (all time high {} ms)\n",
            ts.max
        );
        out.push_str(&"-".repeat(GRAPH_COLUMNS));
        out.push('\n');
        seq.render(&mut out, GRAPH_COLUMNS, 4);
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events() -> Events {
        Events { series: Vec::new() }
    }

    #[test]
    fn one_sample_per_second_the_worst_kept() {
        let mut e = events();
        e.add("command", 5, 100);
        e.add("command", 3, 100);
        e.add("command", 9, 100);
        e.add("command", 2, 101);
        let (_, ts) = e.get(b"command").unwrap();
        assert_eq!(ts.samples().collect::<Vec<_>>(), vec![(100, 9), (101, 2)]);
        assert_eq!((ts.max, ts.last()), (9, (101, 2)));
        assert!(e.get(b"COMMAND").is_none());
    }

    #[test]
    fn the_ring_keeps_the_last_160_seconds() {
        let mut e = events();
        for s in 1..=200 {
            e.add("fork", s, s);
        }
        let (_, ts) = e.get(b"fork").unwrap();
        let kept: Vec<_> = ts.samples().collect();
        assert_eq!(kept.len(), HISTORY_LEN);
        assert_eq!(kept[0], (41, 41));
        assert_eq!(ts.last(), (200, 200));
    }

    #[test]
    fn reset_by_name_ignores_case() {
        let mut e = events();
        e.add("command", 5, 1);
        e.add("fast-command", 5, 1);
        e.add("fork", 5, 1);
        assert_eq!(e.reset(Some(b"COMMAND")), 1);
        assert_eq!(e.reset(Some(b"nosuch")), 0);
        assert_eq!(e.reset(None), 2);
        assert!(e.is_empty());
    }

    #[test]
    fn graph_labels_samples_by_age() {
        let mut e = events();
        e.add("command", 1, 1000);
        let g = e.graph(b"command", 1001).unwrap();
        let rule = "-".repeat(80);
        assert_eq!(
            g,
            format!(
                "command - high 1 ms, low 1 ms (all time high 1 ms)\n{rule}\n \n \n \n_\n \n1\ns\n"
            )
        );
        assert!(e.graph(b"fork", 0).is_none());
    }
}
