//! CPU affinity, as Redis's `server_cpulist`, `bio_cpulist`, `aof_rewrite_cpulist` and
//! `bgsave_cpulist` set it: the main thread, the background threads (lazy free, AOF fsync,
//! file close), and the forked children that rewrite the AOF or write a snapshot each run
//! on the CPUs their list names. A list is taskset's form (`0,2,3`, `0,2-3`, `0-20:2`); an
//! empty one leaves the affinity as inherited, and one that does not parse is ignored
//! whole, as Redis's setcpuaffinity ignores it.
//!
//! The lists are start-only parameters, kept process-wide once the configuration is read
//! ([`configure`]), so threads and children started anywhere take theirs.

use std::sync::OnceLock;

/// The four lists, as configured (empty: not set).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CpuLists {
    /// server_cpulist: the main thread.
    pub server: String,
    /// bio_cpulist: the background threads.
    pub bio: String,
    /// aof_rewrite_cpulist: the AOF rewrite child.
    pub aof_rewrite: String,
    /// bgsave_cpulist: the snapshot children (BGSAVE, a full sync's snapshot).
    pub bgsave: String,
}

static LISTS: OnceLock<CpuLists> = OnceLock::new();

/// Keeps the lists for the threads and children started from now on (at start, once).
pub fn configure(lists: &CpuLists) {
    let _ = LISTS.set(lists.clone());
}

/// Which list a thread or child takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The main thread.
    Server,
    /// A background thread.
    Bio,
    /// The AOF rewrite child.
    AofRewrite,
    /// A snapshot child.
    Bgsave,
}

/// Pins the calling thread to its role's CPUs, when its list is set and parses.
pub fn enter(role: Role) {
    let Some(lists) = LISTS.get() else {
        return;
    };
    let list = match role {
        Role::Server => &lists.server,
        Role::Bio => &lists.bio,
        Role::AofRewrite => &lists.aof_rewrite,
        Role::Bgsave => &lists.bgsave,
    };
    if list.is_empty() {
        return;
    }
    let Some(cpus) = parse(list) else {
        return;
    };
    // SAFETY: a zeroed cpu_set_t is the empty set; CPU_SET is given indices under
    // CPU_SETSIZE (parse refuses larger ones) and sched_setaffinity reads the set we pass.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for cpu in cpus {
            libc::CPU_SET(cpu, &mut set);
        }
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

/// The CPUs of a list in taskset's form: comma-separated entries `a`, `a-b` or `a-b:s`
/// (every s-th CPU from a to b); None when an entry does not parse, a range runs
/// backwards, a stride is 0 or a CPU is past the set's size.
pub fn parse(list: &str) -> Option<Vec<usize>> {
    let mut cpus = Vec::new();
    for entry in list.split(',') {
        let (range, stride) = match entry.split_once(':') {
            Some((range, stride)) => (range, number(stride)?),
            None => (entry, 1),
        };
        let (first, last) = match range.split_once('-') {
            Some((a, b)) => (number(a)?, number(b)?),
            None if stride == 1 && !entry.contains(':') => (number(range)?, number(range)?),
            None => return None,
        };
        if stride == 0 || first > last || last >= libc::CPU_SETSIZE as usize {
            return None;
        }
        cpus.extend((first..=last).step_by(stride));
    }
    Some(cpus)
}

/// A CPU number: decimal digits only.
fn number(text: &str) -> Option<usize> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_in_tasksets_form() {
        assert_eq!(parse("0"), Some(vec![0]));
        assert_eq!(parse("0,2,3"), Some(vec![0, 2, 3]));
        assert_eq!(parse("0,2-3"), Some(vec![0, 2, 3]));
        assert_eq!(parse("0-8:2"), Some(vec![0, 2, 4, 6, 8]));
        assert_eq!(parse("1-3,7"), Some(vec![1, 2, 3, 7]));
        for bad in [
            "", "x", "1,", "-1", "3-1", "0-4:0", "1:2", "0-", "2 ", "99999",
        ] {
            assert_eq!(parse(bad), None, "{bad:?}");
        }
    }
}
