//! The store's coarse clock, kept as memcached keeps it: whole seconds since a point a little
//! before the process started, so that 0 can mean "never expires" and 1 "already expired".
//!
//! Protocol expiry values are converted with [`expiry`]: zero is "never", negative is "now",
//! up to 30 days is relative, anything larger is an absolute Unix time.

use std::sync::OnceLock;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// Largest expiry taken as relative seconds; larger values are absolute Unix times.
const REALTIME_MAXDELTA: i64 = 60 * 60 * 24 * 30;

/// Seconds the clock reads at start (memcached starts its clock at 62 for the same reason).
const START_OFFSET: u64 = 62;

struct Epoch {
    started: Instant,
    unix_started: i64,
}

fn epoch() -> &'static Epoch {
    static EPOCH: OnceLock<Epoch> = OnceLock::new();
    EPOCH.get_or_init(|| {
        let unix = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        Epoch {
            started: Instant::now(),
            unix_started: unix as i64 - START_OFFSET as i64,
        }
    })
}

/// Current time on the store clock, in seconds.
pub fn now() -> u32 {
    (epoch().started.elapsed().as_secs() + START_OFFSET) as u32
}

/// Seconds since the process started (the clock's reading less its start offset).
pub fn uptime() -> u32 {
    now().saturating_sub(START_OFFSET as u32)
}

/// Current Unix time in seconds, as the store clock sees it.
pub fn unix_now() -> i64 {
    to_unix(now())
}

/// The Unix time of store-clock time `t` (memcached's `t + process_started`).
pub fn to_unix(t: u32) -> i64 {
    epoch().unix_started + i64::from(t)
}

/// Converts a protocol expiry to the store clock: 0 stays 0 (never), negative values and
/// absolute times in the past become 1 (expired), up to 30 days counts from now.
pub fn expiry(exptime: i64) -> u32 {
    let exptime = if exptime < 0 {
        REALTIME_MAXDELTA + 1
    } else {
        exptime
    };
    if exptime == 0 {
        0
    } else if exptime > REALTIME_MAXDELTA {
        let started = epoch().unix_started;
        if exptime <= started {
            1
        } else {
            (exptime - started).min(i64::from(u32::MAX)) as u32
        }
    } else {
        (exptime + i64::from(now())) as u32
    }
}

/// True when an item with store-clock expiry `exptime` is dead at time `now`.
pub fn is_expired(exptime: u32, now: u32) -> bool {
    exptime != 0 && exptime <= now
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expiry_forms() {
        let n = now();
        assert_eq!(expiry(0), 0);
        assert_eq!(expiry(-1), 1);
        assert!(is_expired(expiry(-1), n));
        assert_eq!(expiry(10), n + 10);
        assert_eq!(expiry(REALTIME_MAXDELTA + 1), 1);
        let later = unix_now() + 100;
        assert_eq!(expiry(later), n + 100);
        assert!(!is_expired(expiry(later), n));
    }
}
