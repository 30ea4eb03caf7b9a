//! Time: wall-clock Unix milliseconds (the time base of expiry, saves and INFO), the
//! monotonic clock, and the CPU time the process used.

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
    unix_us() / 1000
}

/// Unix time in microseconds (MONITOR's timestamps), 0 before 1970 (as `SystemTime` gave).
pub fn unix_us() -> u64 {
    clock_ns(libc::CLOCK_REALTIME) / 1000
}

/// Nanoseconds of the monotonic clock (`Instant`'s), for timing a command without the
/// checked arithmetic of `Instant::elapsed`.
#[inline]
pub fn monotonic_ns() -> u64 {
    clock_ns(libc::CLOCK_MONOTONIC)
}

/// Milliseconds of the monotonic clock: the same clock in a forked child and its parent.
pub fn monotonic_ms() -> u64 {
    monotonic_ns() / 1_000_000
}

/// The user and system CPU time, in microseconds, of `who` (`libc::RUSAGE_SELF`,
/// `RUSAGE_CHILDREN` or `RUSAGE_THREAD`: getrusage's).
pub fn cpu_us(who: libc::c_int) -> (u64, u64) {
    // SAFETY: getrusage writes the zeroed struct it is given and reads nothing else.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(who, &mut usage);
        usage
    };
    let us = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
    (us(usage.ru_utime), us(usage.ru_stime))
}

/// `clock`'s time in nanoseconds (a vDSO call, no system call); 0 before its epoch.
#[inline]
fn clock_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec to write, and both clocks exist on every Linux.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    u64::try_from(ts.tv_sec).map_or(0, |s| s * 1_000_000_000 + ts.tv_nsec as u64)
}
