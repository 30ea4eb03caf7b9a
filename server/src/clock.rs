//! Wall-clock time: Unix milliseconds, the time base of expiry, saves and INFO.

use std::time::{SystemTime, UNIX_EPOCH};

/// The test hook of key-load-delay and rdb-key-save-delay (Redis's debugDelay): sleeps
/// `us` microseconds; a negative -n sleeps one microsecond with probability 1/n, so short
/// delays cost less than a sleep each.
pub fn debug_delay(us: i64) {
    let us = if us < 0 {
        // SAFETY: rand() has no preconditions.
        let draw = i64::from(unsafe { libc::rand() });
        i64::from(draw % -us == 0)
    } else {
        us
    };
    if us > 0 {
        std::thread::sleep(std::time::Duration::from_micros(us as u64));
    }
}

/// Current Unix time in milliseconds.
pub fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// Unix time in microseconds (MONITOR's timestamps).
pub fn unix_us() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_micros() as u64)
        .unwrap_or(0)
}
