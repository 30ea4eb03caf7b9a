//! The store's coarse clock, kept as memcached keeps it: whole seconds since a point a little
//! before the process started, so that 0 can mean "never expires" and 1 "already expired".
//!
//! Protocol expiry values are converted with [`expiry`]: zero is "never", negative is "now",
//! up to 30 days is relative, anything larger is an absolute Unix time.
//!
//! It also converts between days since 1970 and calendar dates, for HTTP dates and logs.

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
    epoch().unix_started + i64::from(now())
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

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
pub fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146097 + doe - 719468
}

/// The (year, month, day) of a count of days since 1970-01-01 in the proleptic Gregorian
/// calendar (Howard Hinnant's algorithm), for HTTP dates and log timestamps; the inverse of
/// [`days_from_civil`].
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719468;
    let era = z.div_euclid(146097);
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calendar() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20789), (2026, 12, 2));
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
        assert_eq!(civil_from_days(11016), (2000, 2, 29));
        for days in [-719_468, -1, 0, 11016, 20789, 2_932_896] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
    }

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
