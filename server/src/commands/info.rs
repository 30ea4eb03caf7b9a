//! INFO: the sections and field names Redis uses, with Goblin's true values.

use super::Ctx;
use crate::memory::allocator;
use crate::memory::figures::{human, Figures};
use crate::server::Server;
use crate::REDIS_VERSION;
use std::fmt::Write;

/// Sections only `INFO all` / `INFO everything` (or naming them) prints.
const ALL_EXTRA: &[&str] = &["commandstats", "latencystats"];
/// Sections printed only when named: not by `INFO all` / `INFO everything`.
const NAMED_ONLY: &[&str] = &["debug"];
/// The order Redis prints sections in (Goblin's objcache last).
const ORDER: &[&str] = &[
    "server",
    "clients",
    "memory",
    "persistence",
    "stats",
    "replication",
    "cpu",
    "modules",
    "commandstats",
    "errorstats",
    "latencystats",
    "cluster",
    "keyspace",
    "debug",
    "objcache",
];

/// INFO [section ...]
pub fn info(ctx: &mut Ctx, args: &[&[u8]]) {
    let defaults = || {
        ORDER
            .iter()
            .filter(|s| !ALL_EXTRA.contains(s) && !NAMED_ONLY.contains(s))
            .map(|s| s.to_string())
    };
    let mut wanted: Vec<String> = Vec::new();
    for arg in &args[1..] {
        let s = String::from_utf8_lossy(arg).to_ascii_lowercase();
        match s.as_str() {
            "default" => wanted.extend(defaults()),
            "all" | "everything" => wanted.extend(
                ORDER
                    .iter()
                    .filter(|s| !NAMED_ONLY.contains(s))
                    .map(|s| s.to_string()),
            ),
            _ => wanted.push(s),
        }
    }
    if args.len() == 1 {
        wanted.extend(defaults());
    }
    let figures = wanted
        .iter()
        .any(|w| w == "memory")
        .then(|| Figures::of(ctx.server));
    let mut text = String::new();
    for &section in ORDER {
        if !wanted.iter().any(|w| w == section) {
            continue;
        }
        let body = match section_text(ctx, section, figures.as_ref()) {
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

/// The system and user CPU time of `who` in seconds, as INFO cpu prints them.
fn cpu_times(who: libc::c_int) -> (f64, f64) {
    let (user, sys) = crate::clock::cpu_us(who);
    (sys as f64 / 1e6, user as f64 / 1e6)
}

fn section_text(ctx: &mut Ctx, section: &str, figures: Option<&Figures>) -> Option<String> {
    let server = &*ctx.server;
    let mut s = String::new();
    let w = &mut s;
    let now_ms = crate::clock::unix_ms();
    match section {
        "server" => {
            let uptime = server.started.elapsed().as_secs();
            let _ = write!(
                w,
                "# Server\r\nredis_version:{REDIS_VERSION}\r\ngoblin_version:{}\r\nredis_git_sha1:00000000\r\nredis_git_dirty:0\r\nredis_build_id:0\r\nredis_mode:{}\r\nos:{} {}\r\narch_bits:64\r\nmonotonic_clock:POSIX clock_gettime\r\nmultiplexing_api:epoll\r\natomicvar_api:c11-builtin\r\ngcc_version:0.0.0\r\nprocess_id:{}\r\nprocess_supervised:{}\r\nrun_id:{}\r\ntcp_port:{}\r\nserver_time_usec:{}\r\nuptime_in_seconds:{}\r\nuptime_in_days:{}\r\nhz:{}\r\nconfigured_hz:{}\r\nlru_clock:{}\r\nexecutable:{}\r\nconfig_file:{}\r\nio_threads_active:0\r\n",
                env!("CARGO_PKG_VERSION"),
                if server.cluster.is_some() {
                    "cluster"
                } else {
                    "standalone"
                },
                std::env::consts::OS,
                std::env::consts::ARCH,
                std::process::id(),
                crate::service::notify::Supervisor::current().name(),
                server.run_id,
                server.config.port,
                now_ms * 1000,
                uptime,
                uptime / 86400,
                server.hz(),
                server.config.hz,
                (now_ms / 1000) & ((1 << 24) - 1),
                std::env::current_exe().map(|p| p.display().to_string()).unwrap_or_default(),
                server.config.config_file.as_ref().map(|p| p.display().to_string()).unwrap_or_default(),
            );
            if let Some(pending) = &server.shutdown_pending {
                let left = pending.remaining_ms(now_ms);
                let _ = write!(w, "shutdown_in_milliseconds:{left}\r\n");
            }
        }
        "clients" => {
            // As Redis: replicas are not counted among the clients.
            let connected = server.clients.len() - server.replication.master.replicas.len();
            let blocking_keys = server.keyspace.blocking_key_count();
            let on_no_key = super::blocking::keys_waited_on_no_key(server);
            let tracking = server.tracking.clients();
            // As Redis's timeout table: the blocked clients that have a timeout.
            let timed = server
                .clients
                .iter()
                .filter(|(c, _)| c.blocked.as_ref().is_some_and(|b| b.deadline_ms.is_some()))
                .count();
            let _ = write!(
                w,
                "# Clients\r\nconnected_clients:{connected}\r\ncluster_connections:0\r\nmaxclients:{}\r\nclient_recent_max_input_buffer:0\r\nclient_recent_max_output_buffer:0\r\nblocked_clients:{}\r\ntracking_clients:{tracking}\r\nclients_in_timeout_table:{}\r\ntotal_blocking_keys:{blocking_keys}\r\ntotal_blocking_keys_on_nokey:{on_no_key}\r\n",
                server.config.maxclients, server.clients.blocked(), timed,
            );
        }
        "memory" => memory_section(server, figures?, w),
        "persistence" => super::persistence::info_section(server, w),
        "stats" => {
            let st = &server.stats;
            let ks = server.keyspace.stats();
            let tracking_keys = server.tracking.keys();
            let tracking_items = server.tracking.items();
            let tracking_prefixes = server.tracking.prefixes();
            let sanitizations = crate::rdb::sanitizations();
            let _ = write!(
                w,
                "# Stats\r\ntotal_connections_received:{}\r\ntotal_commands_processed:{}\r\ninstantaneous_ops_per_sec:{}\r\ntotal_net_input_bytes:{}\r\ntotal_net_output_bytes:{}\r\ntotal_net_repl_input_bytes:{}\r\ntotal_net_repl_output_bytes:{}\r\ninstantaneous_input_kbps:{:.2}\r\ninstantaneous_output_kbps:{:.2}\r\ninstantaneous_input_repl_kbps:{:.2}\r\ninstantaneous_output_repl_kbps:{:.2}\r\nrejected_connections:{}\r\nsync_full:{}\r\nsync_partial_ok:{}\r\nsync_partial_err:{}\r\nexpired_keys:{}\r\nexpired_stale_perc:{:.2}\r\nexpired_time_cap_reached_count:{}\r\nexpire_cycle_cpu_milliseconds:{}\r\nevicted_keys:{}\r\nevicted_clients:{}\r\ntotal_eviction_exceeded_time:0\r\ncurrent_eviction_exceeded_time:0\r\nkeyspace_hits:{}\r\nkeyspace_misses:{}\r\npubsub_channels:{}\r\npubsub_patterns:{}\r\npubsubshard_channels:{}\r\nlatest_fork_usec:{}\r\ntotal_forks:{}\r\nmigrate_cached_sockets:{}\r\nslave_expires_tracked_keys:{}\r\nactive_defrag_hits:0\r\nactive_defrag_misses:0\r\nactive_defrag_key_hits:0\r\nactive_defrag_key_misses:0\r\ntotal_active_defrag_time:0\r\ncurrent_active_defrag_time:0\r\ntracking_total_keys:{tracking_keys}\r\ntracking_total_items:{tracking_items}\r\ntracking_total_prefixes:{tracking_prefixes}\r\nunexpected_error_replies:{}\r\ntotal_error_replies:{}\r\ndump_payload_sanitizations:{sanitizations}\r\ntotal_reads_processed:{}\r\ntotal_writes_processed:{}\r\nio_threaded_reads_processed:0\r\nio_threaded_writes_processed:0\r\nreply_buffer_shrinks:{}\r\nreply_buffer_expands:{}\r\neventloop_cycles:{}\r\neventloop_duration_sum:{}\r\neventloop_duration_cmd_sum:{}\r\ninstantaneous_eventloop_cycles_per_sec:{}\r\ninstantaneous_eventloop_duration_usec:{}\r\nacl_access_denied_auth:{}\r\nacl_access_denied_cmd:{}\r\nacl_access_denied_key:{}\r\nacl_access_denied_channel:{}\r\n",
                st.connections_received, st.commands_processed, st.ops_per_sec(), st.net_input_bytes + st.net_repl_input_bytes, st.net_output_bytes + st.net_repl_output_bytes, st.net_repl_input_bytes, st.net_repl_output_bytes, st.input_kbps(), st.output_kbps(), st.input_repl_kbps(), st.output_repl_kbps(), st.rejected_connections, server.replication.sync_full, server.replication.sync_partial_ok, server.replication.sync_partial_err, ks.expired_keys, ks.expired_stale * 100.0, ks.expire_time_cap_reached, ks.expire_cycle_micros / 1000, server.memory.evicted_keys, server.memory.evicted_clients, ks.keyspace_hits, ks.keyspace_misses, server.pubsub.len(crate::pubsub::Kind::Channel), server.pubsub.len(crate::pubsub::Kind::Pattern), server.pubsub.len(crate::pubsub::Kind::Shard), server.rdb.latest_fork_usec, server.rdb.total_forks, server.migrate.len(), server.keyspace.replica_expires_tracked(), st.unexpected_error_replies, st.error_replies, st.reads_processed, st.writes_processed, st.reply_buffer_shrinks, st.reply_buffer_expands, st.eventloop.cycles, st.eventloop.duration_ns / 1000, st.eventloop.command_ns / 1000, st.cycles_per_sec(), st.cycle_usec(), server.acl.log.denied_auth, server.acl.log.denied_cmd, server.acl.log.denied_key, server.acl.log.denied_channel,
            );
        }
        "replication" => w.push_str(&crate::replication::info_section(server)),
        "cpu" => {
            let (sys, user) = cpu_times(libc::RUSAGE_SELF);
            let (sys_children, user_children) = cpu_times(libc::RUSAGE_CHILDREN);
            // INFO runs on the event loop's thread, the one that runs every command.
            let (sys_main, user_main) = cpu_times(libc::RUSAGE_THREAD);
            let _ = write!(w, "# CPU\r\nused_cpu_sys:{sys:.6}\r\nused_cpu_user:{user:.6}\r\nused_cpu_sys_children:{sys_children:.6}\r\nused_cpu_user_children:{user_children:.6}\r\nused_cpu_sys_main_thread:{sys_main:.6}\r\nused_cpu_user_main_thread:{user_main:.6}\r\n");
        }
        "modules" => w.push_str("# Modules\r\n"),
        "errorstats" => {
            w.push_str("# Errorstats\r\n");
            for (code, count) in &server.stats.errors {
                let _ = write!(w, "errorstat_{code}:count={count}\r\n");
            }
        }
        "cluster" => w.push_str(if server.cluster.is_some() {
            "# Cluster\r\ncluster_enabled:1\r\n"
        } else {
            "# Cluster\r\ncluster_enabled:0\r\n"
        }),
        "keyspace" => {
            w.push_str("# Keyspace\r\n");
            for (i, db) in server.keyspace.databases().iter().enumerate() {
                let (keys, expires) = (db.len(), db.volatile_len());
                if keys > 0 {
                    let _ = write!(w, "db{i}:keys={keys},expires={expires},avg_ttl=0\r\n");
                }
            }
        }
        "commandstats" => {
            w.push_str("# Commandstats\r\n");
            for c in server.stats.commands_by_name() {
                let name = c.name;
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
        "latencystats" => {
            w.push_str("# Latencystats\r\n");
            let tracking = &server.config.latency_tracking;
            let commands = server.stats.commands_by_name();
            for c in commands.into_iter().filter(|_| tracking.enabled) {
                let name = c.name;
                if c.latency.is_empty() {
                    continue;
                }
                let _ = write!(w, "latency_percentiles_usec_{name}:");
                for (i, &p) in tracking.percentiles.iter().enumerate() {
                    let sep = if i == 0 { "" } else { "," };
                    let label = crate::latency::tracking::percentile_text(p);
                    let usec = c.latency.percentile(p) as f64 / 1000.0;
                    let _ = write!(w, "{sep}p{label}={usec:.3}");
                }
                w.push_str("\r\n");
            }
        }
        "debug" => {
            let el = &server.stats.eventloop;
            let _ = write!(
                w,
                "# Debug\r\neventloop_duration_aof_sum:{}\r\neventloop_duration_cron_sum:{}\r\neventloop_duration_max:{}\r\neventloop_cmd_per_cycle_max:{}\r\n",
                el.aof_ns / 1000,
                el.cron_ns / 1000,
                el.duration_max_ns / 1000,
                el.commands_per_cycle_max,
            );
        }
        "objcache" => w.push_str(&server.store.as_ref()?.info_section()),
        _ => return None,
    }
    Some(s)
}

/// The `# Memory` section: the allocator's figures with Redis's meanings.
fn memory_section(server: &Server, f: &Figures, w: &mut String) {
    let r = f.ratios();
    let repl = f.replication;
    let not_counted = crate::memory::not_counted_for_evict(server);
    let total = allocator::total_system_memory();
    let maxmemory = server.config.memory.maxmemory;
    let lua = server.scripting.vm_memory() as u64;
    let lua_human = human(lua);
    let functions = &server.scripting.functions;
    let (nfunctions, nlibraries) = (
        functions.libraries.function_count(),
        functions.libraries.len(),
    );
    let vm_functions = functions.vm_memory() as u64;
    let functions_memory = f.functions_caches;
    let vm_total = lua + vm_functions;
    let vm_total_human = human(vm_total);
    let scripts_eval = f.lua_caches;
    let scripts = scripts_eval + functions_memory;
    let scripts_human = human(scripts);
    let cached = server.scripting.cache.len();
    let (aof_buffer, cluster_links) = (f.aof_buffer, f.cluster_links);
    let _ = write!(
        w,
        "# Memory\r\nused_memory:{}\r\nused_memory_human:{}\r\nused_memory_rss:{}\r\nused_memory_rss_human:{}\r\nused_memory_peak:{}\r\nused_memory_peak_human:{}\r\nused_memory_peak_perc:{:.2}%\r\nused_memory_overhead:{}\r\nused_memory_startup:{}\r\nused_memory_dataset:{}\r\nused_memory_dataset_perc:{:.2}%\r\nallocator_allocated:{}\r\nallocator_active:{}\r\nallocator_resident:{}\r\ntotal_system_memory:{total}\r\ntotal_system_memory_human:{}\r\nused_memory_lua:{lua}\r\nused_memory_vm_eval:{lua}\r\nused_memory_lua_human:{lua_human}\r\nused_memory_scripts_eval:{scripts_eval}\r\nnumber_of_cached_scripts:{cached}\r\nnumber_of_functions:{nfunctions}\r\nnumber_of_libraries:{nlibraries}\r\nused_memory_vm_functions:{vm_functions}\r\nused_memory_vm_total:{vm_total}\r\nused_memory_vm_total_human:{vm_total_human}\r\nused_memory_functions:{functions_memory}\r\nused_memory_scripts:{scripts}\r\nused_memory_scripts_human:{scripts_human}\r\nmaxmemory:{maxmemory}\r\nmaxmemory_human:{}\r\nmaxmemory_policy:{}\r\nallocator_frag_ratio:{:.2}\r\nallocator_frag_bytes:{}\r\nallocator_rss_ratio:{:.2}\r\nallocator_rss_bytes:{}\r\nrss_overhead_ratio:{:.2}\r\nrss_overhead_bytes:{}\r\nmem_fragmentation_ratio:{:.2}\r\nmem_fragmentation_bytes:{}\r\nmem_not_counted_for_evict:{not_counted}\r\nmem_replication_backlog:{}\r\nmem_total_replication_buffers:{}\r\nmem_clients_slaves:{}\r\nmem_clients_normal:{}\r\nmem_cluster_links:{cluster_links}\r\nmem_aof_buffer:{aof_buffer}\r\nmem_allocator:libc\r\nactive_defrag_running:0\r\nlazyfree_pending_objects:{}\r\nlazyfreed_objects:{}\r\n",
        f.used,
        human(f.used),
        f.rss,
        human(f.rss),
        f.peak,
        human(f.peak),
        f.peak_percent(),
        f.overhead,
        f.startup,
        f.dataset,
        f.dataset_percent(),
        f.used,
        f.resident,
        f.resident,
        human(total),
        human(maxmemory),
        server.config.memory.policy.name(),
        r.allocator_frag.0,
        r.allocator_frag.1,
        r.allocator_rss.0,
        r.allocator_rss.1,
        r.rss_overhead.0,
        r.rss_overhead.1,
        r.fragmentation.0,
        r.fragmentation.1,
        repl.backlog,
        repl.total(),
        repl.replicas,
        f.clients,
        server.keyspace.lazyfree_pending(),
        server.keyspace.lazyfreed(),
    );
}
