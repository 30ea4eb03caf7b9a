//! The system checks Redis makes at start on Linux (linuxMemoryWarnings): memory
//! overcommit must be on for a fork to be safe under memory pressure, and Transparent Huge
//! Pages set to `always` make every copy-on-write after a fork copy 2 MB. With
//! `disable-thp yes` (the default) THP is turned off for this process instead of warned
//! about, as Redis does with prctl(PR_SET_THP_DISABLE).

use crate::warning;

const OVERCOMMIT: &str = "/proc/sys/vm/overcommit_memory";
const THP: &str = "/sys/kernel/mm/transparent_hugepage/enabled";

/// Redis's warning when overcommit is off (without its Jemalloc sentence: Goblin uses libc
/// malloc, as a Redis built with it).
const OVERCOMMIT_WARNING: &str = "WARNING Memory overcommit must be enabled! Without it, a background save or replication may fail under low memory condition. To fix this issue add 'vm.overcommit_memory = 1' to /etc/sysctl.conf and then reboot or run the command 'sysctl vm.overcommit_memory=1' for this to take effect.";

/// Redis's warning when THP is `always` and was not turned off for the process.
const THP_WARNING: &str = "WARNING You have Transparent Huge Pages (THP) support enabled in your kernel. This will create latency and memory usage issues with Redis. To fix this issue run the command 'echo madvise > /sys/kernel/mm/transparent_hugepage/enabled' as root, and add it to your /etc/rc.local in order to retain the setting after a reboot. Redis must be restarted after THP is disabled (set to 'madvise' or 'never').";

/// Runs the checks, logging what Redis logs; `disable_thp` is the directive.
pub fn memory_warnings(disable_thp: bool) {
    let first_line = |path: &str| std::fs::read_to_string(path).ok();
    if first_line(OVERCOMMIT).is_some_and(|text| !overcommit_on(&text)) {
        warning!("{OVERCOMMIT_WARNING}");
    }
    if first_line(THP).is_some_and(|text| thp_always(&text)) {
        // SAFETY: prctl with PR_SET_THP_DISABLE takes plain integers.
        let disabled =
            disable_thp && unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0) } == 0;
        if !disabled {
            warning!("{THP_WARNING}");
        }
    }
}

/// Whether overcommit_memory says 1 (strtol of its text, as Redis reads it).
fn overcommit_on(text: &str) -> bool {
    let digits: String = text
        .trim_start()
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse::<i64>() == Ok(1)
}

/// Whether the THP setting's first line has `[always]` chosen.
fn thp_always(text: &str) -> bool {
    text.lines().next().is_some_and(|l| l.contains("[always]"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_read_as_redis_reads_them() {
        assert!(overcommit_on("1\n"));
        assert!(!overcommit_on("0\n") && !overcommit_on("2\n") && !overcommit_on(""));
        assert!(thp_always("[always] madvise never\n"));
        assert!(!thp_always("always [madvise] never\n"));
        assert!(!thp_always("always madvise [never]\n"));
    }
}
