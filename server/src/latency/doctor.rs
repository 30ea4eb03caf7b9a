//! LATENCY DOCTOR: Redis's createLatencyReport, its statistics per event and its advice,
//! word for word.

use super::{Events, Series};

/// What the report needs to know of the server besides the events.
#[derive(Debug, Clone, Default)]
pub struct Facts {
    /// latency-monitor-threshold, milliseconds.
    pub threshold_ms: u64,
    /// slowlog-log-slower-than, microseconds.
    pub slowlog_log_slower_than: i64,
    /// hz.
    pub hz: u32,
    /// appendfsync is `always`.
    pub fsync_always: bool,
    /// Gigabytes of memory copied per second by the last fork (Redis's stat_fork_rate).
    pub fork_rate: f64,
    /// The process uses anonymous huge pages (AnonHugePages in /proc/self/smaps).
    pub anon_huge_pages: bool,
}

/// The statistics of one event's samples (Redis's analyzeLatencyForEvent).
struct Analysis {
    samples: u64,
    avg: u64,
    mad: u64,
    period: u64,
}

fn analyze(ts: &Series, now: u64) -> Analysis {
    let samples: Vec<(u64, u64)> = ts.samples().collect();
    let n = samples.len() as u64;
    if n == 0 {
        return Analysis {
            samples: 0,
            avg: 0,
            mad: 0,
            period: 0,
        };
    }
    let sum: u64 = samples.iter().map(|s| s.1).sum();
    let avg = sum / n;
    let oldest = samples.iter().map(|s| s.0).min().unwrap_or(now);
    let period = now.saturating_sub(oldest).max(1);
    let deviations: u64 = samples.iter().map(|s| avg.abs_diff(s.1)).sum();
    Analysis {
        samples: n,
        avg,
        mad: deviations / n,
        period,
    }
}

/// The advice flags, in the order the report prints them.
#[derive(Default)]
struct Advice {
    better_vm: bool,
    slowlog_enabled: bool,
    slowlog_tuning: bool,
    slowlog_inspect: bool,
    disk_contention: bool,
    scheduler: bool,
    data_writeback: bool,
    no_appendfsync: bool,
    local_disk: bool,
    ssd: bool,
    write_load_info: bool,
    hz: bool,
    large_objects: bool,
    mass_eviction: bool,
    relax_fsync_policy: bool,
    disable_thp: bool,
}

/// The report for `events` at Unix second `now`.
pub fn report(events: &Events, facts: &Facts, now: u64) -> String {
    if events.is_empty() && facts.threshold_ms == 0 {
        return "I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis instance. You may use \"CONFIG SET latency-monitor-threshold <milliseconds>.\" in order to enable it. If we weren't in a deep space mission I'd suggest to take a look at https://redis.io/topics/latency-monitor.\n".into();
    }
    let mut out = String::new();
    let mut a = Advice::default();
    let mut advices = 0;
    let mut eventnum = 0;
    for (event, ts) in events.iter() {
        eventnum += 1;
        if eventnum == 1 {
            out.push_str("Dave, I have observed latency spikes in this Redis instance. You don't mind talking about it, do you Dave?\n\n");
        }
        let ls = analyze(ts, now);
        out.push_str(&format!(
            "{eventnum}. {event}: {} latency spikes (average {}ms, mean deviation {}ms, period {:.2} sec). Worst all time event {}ms.",
            ls.samples,
            ls.avg,
            ls.mad,
            ls.period as f64 / ls.samples.max(1) as f64,
            ts.max
        ));
        let is = |name: &str| event.eq_ignore_ascii_case(name);
        if is("fork") {
            let quality = if facts.fork_rate < 10.0 {
                a.better_vm = true;
                advices += 1;
                "terrible"
            } else if facts.fork_rate < 25.0 {
                a.better_vm = true;
                advices += 1;
                "poor"
            } else if facts.fork_rate < 100.0 {
                "good"
            } else {
                "excellent"
            };
            out.push_str(&format!(
                " Fork rate is {:.2} GB/sec ({quality}).",
                facts.fork_rate
            ));
        }
        if is("command") {
            if facts.slowlog_log_slower_than < 0 {
                a.slowlog_enabled = true;
                advices += 1;
            } else if facts.slowlog_log_slower_than / 1000 > facts.threshold_ms as i64 {
                a.slowlog_tuning = true;
                advices += 1;
            }
            a.slowlog_inspect = true;
            a.large_objects = true;
            advices += 2;
        }
        if is("fast-command") {
            a.scheduler = true;
            advices += 1;
        }
        if is("aof-write-pending-fsync") {
            a.local_disk = true;
            a.disk_contention = true;
            a.ssd = true;
            a.data_writeback = true;
            advices += 4;
        }
        if is("aof-write-active-child") {
            a.no_appendfsync = true;
            a.data_writeback = true;
            a.ssd = true;
            advices += 3;
        }
        if is("aof-write-alone") {
            a.local_disk = true;
            a.data_writeback = true;
            a.ssd = true;
            advices += 3;
        }
        if is("aof-fsync-always") {
            a.relax_fsync_policy = true;
            advices += 1;
        }
        if is("aof-fstat") || is("rdb-unlink-temp-file") {
            a.disk_contention = true;
            a.local_disk = true;
            advices += 2;
        }
        if is("aof-rewrite-diff-write") || is("aof-rename") {
            a.write_load_info = true;
            a.data_writeback = true;
            a.ssd = true;
            a.local_disk = true;
            advices += 4;
        }
        if is("expire-cycle") {
            a.hz = true;
            a.large_objects = true;
            advices += 2;
        }
        if is("eviction-del") {
            a.large_objects = true;
            advices += 1;
        }
        if is("eviction-cycle") {
            a.mass_eviction = true;
            advices += 1;
        }
        out.push('\n');
    }
    if facts.anon_huge_pages {
        a.disable_thp = true;
        advices += 1;
    }
    if eventnum == 0 && advices == 0 {
        out.push_str("Dave, no latency spike was observed during the lifetime of this Redis instance, not in the slightest bit. I honestly think you ought to sit down calmly, take a stress pill, and think things over.\n");
        return out;
    }
    if eventnum > 0 && advices == 0 {
        out.push_str("\nWhile there are latency events logged, I'm not able to suggest any easy fix. Please use the Redis community to get some help, providing this report in your help request.\n");
        return out;
    }
    out.push_str("\nI have a few advices for you:\n\n");
    let threshold_us = facts.threshold_ms * 1000;
    let lines: [(bool, String); 16] = [
        (a.better_vm, "- If you are using a virtual machine, consider upgrading it with a faster one using a hypervisior that provides less latency during fork() calls. Xen is known to have poor fork() performance. Even in the context of the same VM provider, certain kinds of instances can execute fork faster than others.\n".into()),
        (a.slowlog_enabled, format!("- There are latency issues with potentially slow commands you are using. Try to enable the Slow Log Redis feature using the command 'CONFIG SET slowlog-log-slower-than {threshold_us}'. If the Slow log is disabled Redis is not able to log slow commands execution for you.\n")),
        (a.slowlog_tuning, format!("- Your current Slow Log configuration only logs events that are slower than your configured latency monitor threshold. Please use 'CONFIG SET slowlog-log-slower-than {threshold_us}'.\n")),
        (a.slowlog_inspect, "- Check your Slow Log to understand what are the commands you are running which are too slow to execute. Please check https://redis.io/commands/slowlog for more information.\n".into()),
        (a.scheduler, "- The system is slow to execute Redis code paths not containing system calls. This usually means the system does not provide Redis CPU time to run for long periods. You should try to:\n  1) Lower the system load.\n  2) Use a computer / VM just for Redis if you are running other software in the same system.\n  3) Check if you have a \"noisy neighbour\" problem.\n  4) Check with 'redis-cli --intrinsic-latency 100' what is the intrinsic latency in your system.\n  5) Check if the problem is allocator-related by recompiling Redis with MALLOC=libc, if you are using Jemalloc. However this may create fragmentation problems.\n".into()),
        (a.local_disk, "- It is strongly advised to use local disks for persistence, especially if you are using AOF. Remote disks provided by platform-as-a-service providers are known to be slow.\n".into()),
        (a.ssd, "- SSD disks are able to reduce fsync latency, and total time needed for snapshotting and AOF log rewriting (resulting in smaller memory usage and smaller final AOF rewrite buffer flushes). With extremely high write load SSD disks can be a good option. However Redis should perform reasonably with high load using normal disks. Use this advice as a last resort.\n".into()),
        (a.data_writeback, "- Mounting ext3/4 filesystems with data=writeback can provide a performance boost compared to data=ordered, however this mode of operation provides less guarantees, and sometimes it can happen that after a hard crash the AOF file will have a half-written command at the end and will require to be repaired before Redis restarts.\n".into()),
        (a.disk_contention, "- Try to lower the disk contention. This is often caused by other disk intensive processes running in the same computer (including other Redis instances).\n".into()),
        (a.no_appendfsync, "- Assuming from the point of view of data safety this is viable in your environment, you could try to enable the 'no-appendfsync-on-rewrite' option, so that fsync will not be performed while there is a child rewriting the AOF file or producing an RDB file (the moment where there is high disk contention).\n".into()),
        (a.relax_fsync_policy && facts.fsync_always, "- Your fsync policy is set to 'always'. It is very hard to get good performances with such a setup, if possible try to relax the fsync policy to 'onesec'.\n".into()),
        (a.write_load_info, "- Latency during the AOF atomic rename operation or when the final difference is flushed to the AOF file at the end of the rewrite, sometimes is caused by very high write load, causing the AOF buffer to get very large. If possible try to send less commands to accomplish the same work, or use Lua scripts to group multiple operations into a single EVALSHA call.\n".into()),
        (a.hz && facts.hz < 100, "- In order to make the Redis keys expiring process more incremental, try to set the 'hz' configuration parameter to 100 using 'CONFIG SET hz 100'.\n".into()),
        (a.large_objects, "- Deleting, expiring or evicting (because of maxmemory policy) large objects is a blocking operation. If you have very large objects that are often deleted, expired, or evicted, try to fragment those objects into multiple smaller objects.\n".into()),
        (a.mass_eviction, "- Sudden changes to the 'maxmemory' setting via 'CONFIG SET', or allocation of large objects via sets or sorted sets intersections, STORE option of SORT, Redis Cluster large keys migrations (RESTORE command), may create sudden memory pressure forcing the server to block trying to evict keys. \n".into()),
        (a.disable_thp, "- I detected a non zero amount of anonymous huge pages used by your process. This creates very serious latency events in different conditions, especially when Redis is persisting on disk. To disable THP support use the command 'echo never > /sys/kernel/mm/transparent_hugepage/enabled', make sure to also add it into /etc/rc.local so that the command will be executed again after a reboot. Note that even if you have already disabled THP, you still need to restart the Redis process to get rid of the huge pages already created.\n".into()),
    ];
    for (on, text) in lines {
        if on {
            out.push_str(&text);
        }
    }
    out
}

/// Bytes of anonymous huge pages the process maps (the AnonHugePages fields of
/// /proc/self/smaps, as Redis's zmalloc_get_smap_bytes_by_field sums them); 0 when
/// unreadable.
pub fn anon_huge_pages_bytes() -> u64 {
    let Ok(text) = std::fs::read_to_string("/proc/self/smaps") else {
        return 0;
    };
    text.lines()
        .filter_map(|l| l.strip_prefix("AnonHugePages:"))
        .filter_map(|rest| rest.split_whitespace().next()?.parse::<u64>().ok())
        .sum::<u64>()
        * 1024
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events() -> Events {
        Events { series: Vec::new() }
    }

    #[test]
    fn disabled_and_quiet_reports() {
        let facts = Facts::default();
        assert!(report(&events(), &facts, 0).starts_with("I'm sorry, Dave"));
        let on = Facts {
            threshold_ms: 1,
            ..facts
        };
        assert!(report(&events(), &on, 0).starts_with("Dave, no latency spike"));
    }

    #[test]
    fn a_command_spike_as_redis_words_it() {
        let mut e = events();
        e.add("command", 1, 1000);
        let facts = Facts {
            threshold_ms: 1,
            slowlog_log_slower_than: 10000,
            hz: 10,
            ..Facts::default()
        };
        assert_eq!(
            report(&e, &facts, 1000),
            "Dave, I have observed latency spikes in this Redis instance. You don't mind talking about it, do you Dave?\n\n\
             1. command: 1 latency spikes (average 1ms, mean deviation 0ms, period 1.00 sec). Worst all time event 1ms.\n\
             \nI have a few advices for you:\n\n\
             - Your current Slow Log configuration only logs events that are slower than your configured latency monitor threshold. Please use 'CONFIG SET slowlog-log-slower-than 1000'.\n\
             - Check your Slow Log to understand what are the commands you are running which are too slow to execute. Please check https://redis.io/commands/slowlog for more information.\n\
             - Deleting, expiring or evicting (because of maxmemory policy) large objects is a blocking operation. If you have very large objects that are often deleted, expired, or evicted, try to fragment those objects into multiple smaller objects.\n"
        );
    }

    #[test]
    fn mean_deviation_and_period() {
        let mut e = events();
        e.add("expire-cycle", 10, 100);
        e.add("expire-cycle", 20, 104);
        let (_, ts) = e.get(b"expire-cycle").unwrap();
        let a = analyze(ts, 110);
        assert_eq!((a.samples, a.avg, a.mad, a.period), (2, 15, 5, 10));
    }
}
