//! INFO: the sections and field names Redis uses, with Goblin's true values.

use super::Ctx;
use std::fmt::Write;

/// The Redis version Goblin follows; clients gate features on it.
pub const REDIS_VERSION: &str = "7.2.4";

const DEFAULT_SECTIONS: &[&str] = &[
    "server",
    "clients",
    "memory",
    "persistence",
    "stats",
    "replication",
    "cpu",
    "modules",
    "errorstats",
    "cluster",
    "keyspace",
    "objcache",
];
const ALL_EXTRA: &[&str] = &["commandstats", "latencystats"];

/// INFO [section ...]
pub fn info(ctx: &mut Ctx, args: &[&[u8]]) {
    let mut wanted: Vec<String> = Vec::new();
    for arg in &args[1..] {
        let s = String::from_utf8_lossy(arg).to_ascii_lowercase();
        match s.as_str() {
            "default" => wanted.extend(DEFAULT_SECTIONS.iter().map(|s| s.to_string())),
            "all" | "everything" => {
                wanted.extend(DEFAULT_SECTIONS.iter().map(|s| s.to_string()));
                wanted.extend(ALL_EXTRA.iter().map(|s| s.to_string()));
            }
            _ => wanted.push(s),
        }
    }
    if args.len() == 1 {
        wanted.extend(DEFAULT_SECTIONS.iter().map(|s| s.to_string()));
    }
    let order: Vec<&str> = DEFAULT_SECTIONS.iter().chain(ALL_EXTRA).copied().collect();
    let mut text = String::new();
    for section in order {
        if !wanted.iter().any(|w| w == section) {
            continue;
        }
        let body = match section_text(ctx, section) {
            Some(body) => body,
            None => continue,
        };
        if !text.is_empty() {
            text.push_str("\r\n");
        }
        text.push_str(&body);
    }
    ctx.out.verbatim(text.as_bytes());
}

fn human(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "K", "M", "G", "T"];
    let mut v = bytes as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit < UNITS.len() - 1 {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes}B")
    } else {
        format!("{v:.2}{}", UNITS[unit])
    }
}

/// Resident set size of this process, from /proc.
pub fn rss_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    pages * 4096
}

fn cpu_times() -> (f64, f64) {
    // SAFETY: getrusage writes into the zeroed struct we pass and reads nothing else.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (secs(usage.ru_stime), secs(usage.ru_utime))
}

fn section_text(ctx: &mut Ctx, section: &str) -> Option<String> {
    let server = &*ctx.server;
    let mut s = String::new();
    let w = &mut s;
    let now_ms = crate::server::unix_ms();
    match section {
        "server" => {
            let uptime = server.started.elapsed().as_secs();
            let _ = write!(
                w,
                "# Server\r\nredis_version:{REDIS_VERSION}\r\ngoblin_version:{}\r\nredis_git_sha1:00000000\r\nredis_git_dirty:0\r\nredis_build_id:0\r\nredis_mode:standalone\r\nos:{} {}\r\narch_bits:64\r\nmonotonic_clock:POSIX clock_gettime\r\nmultiplexing_api:epoll\r\natomicvar_api:c11-builtin\r\ngcc_version:0.0.0\r\nprocess_id:{}\r\nprocess_supervised:no\r\nrun_id:{}\r\ntcp_port:{}\r\nserver_time_usec:{}\r\nuptime_in_seconds:{}\r\nuptime_in_days:{}\r\nhz:{}\r\nconfigured_hz:{}\r\nlru_clock:{}\r\nexecutable:{}\r\nconfig_file:\r\nio_threads_active:0\r\n",
                env!("CARGO_PKG_VERSION"),
                std::env::consts::OS,
                std::env::consts::ARCH,
                std::process::id(),
                server.run_id,
                server.config.port,
                now_ms * 1000,
                uptime,
                uptime / 86400,
                server.config.hz,
                server.config.hz,
                (now_ms / 1000) & ((1 << 24) - 1),
                std::env::current_exe().map(|p| p.display().to_string()).unwrap_or_default(),
            );
        }
        "clients" => {
            let connected = server.conns.len();
            let blocking_keys = server.blocked_on.len();
            let _ = write!(
                w,
                "# Clients\r\nconnected_clients:{connected}\r\ncluster_connections:0\r\nmaxclients:{}\r\nclient_recent_max_input_buffer:0\r\nclient_recent_max_output_buffer:0\r\nblocked_clients:{}\r\ntracking_clients:0\r\nclients_in_timeout_table:{}\r\ntotal_blocking_keys:{blocking_keys}\r\ntotal_blocking_keys_on_nokey:0\r\n",
                server.config.maxclients, server.blocked_clients, server.blocked_clients,
            );
        }
        "memory" => {
            let used = server.used_memory() as u64;
            let rss = rss_bytes();
            let pending = server
                .lazyfree
                .pending
                .load(std::sync::atomic::Ordering::Relaxed);
            let freed = server
                .lazyfree
                .freed
                .load(std::sync::atomic::Ordering::Relaxed);
            let total = std::fs::read_to_string("/proc/meminfo")
                .ok()
                .and_then(|m| {
                    m.lines()
                        .next()
                        .and_then(|l| l.split_whitespace().nth(1))
                        .and_then(|v| v.parse::<u64>().ok())
                })
                .unwrap_or(0)
                * 1024;
            let _ = write!(
                w,
                "# Memory\r\nused_memory:{used}\r\nused_memory_human:{}\r\nused_memory_rss:{rss}\r\nused_memory_rss_human:{}\r\nused_memory_dataset:{used}\r\ntotal_system_memory:{total}\r\ntotal_system_memory_human:{}\r\nmaxmemory:0\r\nmaxmemory_human:0B\r\nmaxmemory_policy:noeviction\r\nmem_fragmentation_ratio:{:.2}\r\nmem_allocator:libc\r\nlazyfree_pending_objects:{pending}\r\nlazyfreed_objects:{freed}\r\n",
                human(used),
                human(rss),
                human(total),
                if used > 0 { rss as f64 / used as f64 } else { 0.0 },
            );
        }
        "persistence" => crate::rdb::info_persistence(server, w),
        "stats" => {
            let st = &server.stats;
            let _ = write!(
                w,
                "# Stats\r\ntotal_connections_received:{}\r\ntotal_commands_processed:{}\r\ninstantaneous_ops_per_sec:{}\r\ntotal_net_input_bytes:{}\r\ntotal_net_output_bytes:{}\r\nrejected_connections:{}\r\nsync_full:0\r\nsync_partial_ok:0\r\nsync_partial_err:0\r\nexpired_keys:{}\r\nevicted_keys:0\r\nevicted_clients:0\r\nkeyspace_hits:{}\r\nkeyspace_misses:{}\r\npubsub_channels:0\r\npubsub_patterns:0\r\nlatest_fork_usec:{}\r\ntotal_forks:{}\r\ntotal_error_replies:{}\r\n",
                st.connections_received, st.commands_processed, st.ops_per_sec(), st.net_input_bytes, st.net_output_bytes, st.rejected_connections, st.expired_keys, st.keyspace_hits, st.keyspace_misses, server.rdb.latest_fork_usec, server.rdb.total_forks, st.error_replies,
            );
        }
        "replication" => {
            let _ = write!(
                w,
                "# Replication\r\nrole:master\r\nconnected_slaves:0\r\nmaster_failover_state:no-failover\r\nmaster_replid:{}\r\nmaster_replid2:0000000000000000000000000000000000000000\r\nmaster_repl_offset:0\r\nsecond_repl_offset:-1\r\nrepl_backlog_active:0\r\nrepl_backlog_size:1048576\r\nrepl_backlog_first_byte_offset:0\r\nrepl_backlog_histlen:0\r\n",
                server.run_id
            );
        }
        "cpu" => {
            let (sys, user) = cpu_times();
            let _ = write!(w, "# CPU\r\nused_cpu_sys:{sys:.6}\r\nused_cpu_user:{user:.6}\r\nused_cpu_sys_children:0.000000\r\nused_cpu_user_children:0.000000\r\n");
        }
        "modules" => w.push_str("# Modules\r\n"),
        "errorstats" => {
            w.push_str("# Errorstats\r\n");
            for (code, count) in &server.stats.errors {
                let _ = write!(w, "errorstat_{code}:count={count}\r\n");
            }
        }
        "cluster" => w.push_str("# Cluster\r\ncluster_enabled:0\r\n"),
        "keyspace" => {
            w.push_str("# Keyspace\r\n");
            for (i, db) in server.dbs.iter().enumerate() {
                let (keys, expires) = super::keys::db_counts(db);
                if keys > 0 {
                    let _ = write!(w, "db{i}:keys={keys},expires={expires},avg_ttl=0\r\n");
                }
            }
        }
        "commandstats" => {
            w.push_str("# Commandstats\r\n");
            for (name, c) in &server.stats.commands {
                if c.calls == 0 && c.rejected_calls == 0 && c.failed_calls == 0 {
                    continue;
                }
                let per_call = if c.calls > 0 {
                    c.usec as f64 / c.calls as f64
                } else {
                    0.0
                };
                let _ = write!(w, "cmdstat_{name}:calls={},usec={},usec_per_call={per_call:.2},rejected_calls={},failed_calls={}\r\n", c.calls, c.usec, c.rejected_calls, c.failed_calls);
            }
        }
        "latencystats" => w.push_str("# Latencystats\r\n"),
        "objcache" => w.push_str(&server.store.as_ref()?.info_section()),
        _ => return None,
    }
    Some(s)
}
