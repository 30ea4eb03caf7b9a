//! MEMORY STATS, DOCTOR, MALLOC-STATS, PURGE and HELP, in Redis's shapes (MEMORY USAGE is
//! with the key commands).

use super::Ctx;
use crate::memory::allocator;
use crate::memory::figures::Figures;

/// MEMORY STATS: Redis's map of figures, the per-database overheads among them.
pub fn stats(ctx: &mut Ctx, _args: &[&[u8]]) {
    let f = Figures::of(ctx.server);
    let r = f.ratios();
    let dbs: Vec<(usize, (usize, usize))> = ctx
        .server
        .keyspace
        .databases()
        .iter()
        .enumerate()
        .filter(|(_, db)| !db.is_empty())
        .map(|(i, db)| (i, db.overhead()))
        .collect();
    let out = &mut ctx.out;
    out.map(27 + dbs.len());
    let int = |out: &mut crate::resp::reply::ReplyWriter, name: &str, v: i64| {
        out.bulk(name.as_bytes());
        out.int(v);
    };
    let double = |out: &mut crate::resp::reply::ReplyWriter, name: &str, v: f64| {
        out.bulk(name.as_bytes());
        out.double(v);
    };
    int(out, "peak.allocated", f.peak as i64);
    int(out, "total.allocated", f.used as i64);
    int(out, "startup.allocated", f.startup as i64);
    int(out, "replication.backlog", f.replication.backlog as i64);
    int(out, "clients.slaves", f.replication.replicas as i64);
    int(out, "clients.normal", f.clients as i64);
    int(out, "cluster.links", f.cluster_links as i64);
    int(out, "aof.buffer", f.aof_buffer as i64);
    int(out, "lua.caches", f.lua_caches as i64);
    int(out, "functions.caches", f.functions_caches as i64);
    for (i, (main, expires)) in dbs {
        out.bulk(format!("db.{i}").as_bytes());
        out.map(3);
        int(out, "overhead.hashtable.main", main as i64);
        int(out, "overhead.hashtable.expires", expires as i64);
        int(out, "overhead.hashtable.slot-to-keys", 0);
    }
    int(out, "overhead.total", f.overhead as i64);
    int(out, "keys.count", f.keys as i64);
    int(out, "keys.bytes-per-key", f.bytes_per_key() as i64);
    int(out, "dataset.bytes", f.dataset as i64);
    double(out, "dataset.percentage", f.dataset_percent());
    double(out, "peak.percentage", f.peak_percent());
    int(out, "allocator.allocated", f.used as i64);
    int(out, "allocator.active", f.resident as i64);
    int(out, "allocator.resident", f.resident as i64);
    double(out, "allocator-fragmentation.ratio", r.allocator_frag.0);
    int(out, "allocator-fragmentation.bytes", r.allocator_frag.1);
    double(out, "allocator-rss.ratio", r.allocator_rss.0);
    int(out, "allocator-rss.bytes", r.allocator_rss.1);
    double(out, "rss-overhead.ratio", r.rss_overhead.0);
    int(out, "rss-overhead.bytes", r.rss_overhead.1);
    double(out, "fragmentation", r.fragmentation.0);
    int(out, "fragmentation.bytes", r.fragmentation.1);
}

/// Below this many allocated bytes MEMORY DOCTOR has nothing to say (Redis's 5 MB).
const DOCTOR_MIN_BYTES: u64 = 5 << 20;

/// MEMORY DOCTOR: Redis's report on the peak and the fragmentation.
pub fn doctor(ctx: &mut Ctx, _args: &[&[u8]]) {
    let report = doctor_report(&Figures::of(ctx.server));
    ctx.out.verbatim(report.as_bytes());
}

/// The report for figures `f` (getMemoryDoctorReport's checks that apply to Goblin).
fn doctor_report(f: &Figures) -> String {
    if f.used < DOCTOR_MIN_BYTES {
        return "Hi Sam, this instance is empty or is using very little memory, my issues detector can't be used in these conditions. Please, leave for your mission on Earth and fill it with some data. The new Sam and I will be back to our programming as soon as I finished rebooting.\n".into();
    }
    let r = f.ratios();
    let big_peak = f.peak as f64 / f.used as f64 > 1.5;
    let high_frag = r.fragmentation.0 > 1.4 && r.fragmentation.1 > 10 << 20;
    if !big_peak && !high_frag {
        return "Hi Sam, I can't find any memory issue in your instance. I can only account for what occurs on this base.\n".into();
    }
    let mut s =
        String::from("Sam, I detected a few issues in this Redis instance memory implants:\n\n");
    if big_peak {
        s.push_str(" * Peak memory: In the past this instance used more than 150% the memory that is currently using. The allocator is normally not able to release memory after a peak, so you can expect to see a big fragmentation ratio, however this is actually harmless and is only due to the memory peak, and if the Redis instance Resident Set Size (RSS) is currently bigger than expected, the memory will be used as soon as you fill the Redis instance with more data. If the memory peak was only occasional and you want to try to reclaim memory, please try the MEMORY PURGE command, otherwise the only other option is to shutdown and restart the instance.\n\n");
    }
    if high_frag {
        s.push_str(" * High total RSS: This instance has a memory fragmentation and RSS overhead greater than 1.4 (this means that the Resident Set Size of the Redis process is much larger than the sum of the logical allocations Redis performed). This problem is usually due either to a large peak memory (check if there is a peak memory entry above in the report) or may result from a workload that causes the allocator to fragment memory a lot. If the problem is a large peak memory, then there is no issue. Otherwise, make sure you are using the Jemalloc allocator and not the default libc malloc. Note: The currently used allocator is \"libc\".\n\n");
    }
    s.push_str("I'm here to keep you safe, Sam. I want to help you.\n");
    s
}

/// MEMORY MALLOC-STATS: the allocator's own report (glibc's malloc_info).
pub fn malloc_stats(ctx: &mut Ctx, _args: &[&[u8]]) {
    ctx.out.verbatim(allocator::report().as_bytes());
}

/// MEMORY PURGE: gives free memory back to the system (malloc_trim).
pub fn purge(ctx: &mut Ctx, _args: &[&[u8]]) {
    allocator::purge();
    ctx.out.ok();
}

/// MEMORY HELP
pub fn help(ctx: &mut Ctx, _args: &[&[u8]]) {
    super::server_cmds::help_reply(
        ctx,
        "MEMORY",
        &[
            "DOCTOR",
            "    Return memory problems reports.",
            "MALLOC-STATS",
            "    Return internal statistics report from the memory allocator.",
            "PURGE",
            "    Attempt to purge dirty pages for reclamation by the allocator.",
            "STATS",
            "    Return information about the memory usage of the server.",
            "USAGE <key> [SAMPLES <count>]",
            "    Return memory in bytes used by <key> and its value. Nested values are",
            "    sampled up to <count> times (default: 5, 0 means sample all).",
        ],
    );
}
