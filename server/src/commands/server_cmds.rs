//! Server commands: CONFIG, TIME, LASTSAVE, SHUTDOWN, SLOWLOG, and the HELP reply
//! format they share.

use super::{Command, Ctx, Flags};
use crate::config::{protected_action_allowed, Config, ConfigError, PROTECTED};
use crate::errors;
use std::collections::VecDeque;

/// Writes a HELP reply as Redis does: a header line, the given lines, then HELP itself.
pub fn help_reply(ctx: &mut Ctx, command: &str, lines: &[&str]) {
    ctx.out.array(lines.len() + 3);
    ctx.out.simple(&format!(
        "{command} <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
    ));
    for line in lines {
        ctx.out.simple(line);
    }
    ctx.out.simple("HELP");
    ctx.out.simple("    Print this help.");
}

/// The reply Redis gives when a subcommand gets arguments it does not take
/// (addReplySubcommandSyntaxError): the subcommand as typed, the command in capitals.
pub fn subcommand_syntax_error(ctx: &mut Ctx, args: &[&[u8]]) {
    let sub = errors::shown_128(args[1]);
    let command = String::from_utf8_lossy(args[0]).to_ascii_uppercase();
    ctx.error(&errors::subcommand_syntax(&sub, &command));
}

/// CONFIG GET parameter [parameter ...]
pub fn config_get(ctx: &mut Ctx, args: &[&[u8]]) {
    let mut found = ctx.server.config.get_matching(&args[2..]);
    // replicaof (alias slaveof) shows the master followed now, not a start parameter.
    let master = match &ctx.server.replication.master_addr {
        Some((host, port)) => format!("{host} {port}"),
        None => String::new(),
    };
    for name in ["replicaof", "slaveof"] {
        for pattern in &args[2..] {
            let shown: &[u8] = match pattern.iter().any(|c| b"[*?".contains(c)) {
                true if crate::glob::glob_match(pattern, name.as_bytes(), true) => name.as_bytes(),
                false if pattern.eq_ignore_ascii_case(name.as_bytes()) => pattern,
                _ => continue,
            };
            if !found.iter().any(|(n, _)| n.eq_ignore_ascii_case(shown)) {
                found.push((shown.to_vec(), master.clone()));
            }
        }
    }
    ctx.out.map(found.len());
    for (name, value) in found {
        ctx.out.bulk(&name);
        ctx.out.bulk(value.as_bytes());
    }
}

/// CONFIG SET parameter value [parameter value ...]: all or nothing.
pub fn config_set(ctx: &mut Ctx, args: &[&[u8]]) {
    if !args.len().is_multiple_of(2) {
        return ctx.syntax_error();
    }
    if let Some(refusal) = refused_name(ctx, &args[2..]) {
        return ctx.error(&refusal);
    }
    let mut updated = ctx.server.config.clone();
    for pair in args[2..].chunks(2) {
        let name = String::from_utf8_lossy(pair[0]).to_ascii_lowercase();
        if let Err(e) = updated.apply(&name, pair[1], false) {
            return ctx.error(&config_set_failure(&name, e));
        }
    }
    let current = &ctx.server.config;
    if (updated.port, &updated.bind) != (current.port, &current.bind) {
        // As Redis: a new bind list is checked as a whole, a new port on its own.
        let (name, why) = if updated.bind != current.bind {
            ("bind", "Failed to bind to specified addresses.")
        } else {
            ("port", "Unable to listen on this port. Check server logs.")
        };
        match crate::net::listen::plan(
            &updated.bind,
            updated.port,
            updated.sockets(),
            &ctx.server.listening,
        ) {
            Ok(plan) => ctx.server.relisten = Some(plan),
            Err(_) => {
                return ctx.error(&format!(
                    "ERR CONFIG SET failed (possibly related to argument '{name}') - {why}"
                ))
            }
        }
    }
    if updated.loglevel != ctx.server.config.loglevel {
        crate::log::set_level(updated.loglevel);
    }
    let aof_wanted = updated.aof.enabled;
    let old = std::mem::replace(&mut ctx.server.config, updated);
    if aof_wanted != old.aof.enabled
        && !crate::aof::set_enabled(ctx.server, aof_wanted, ctx.in_exec)
    {
        ctx.server.config = old;
        return ctx.error("ERR CONFIG SET failed (possibly related to argument 'appendonly') - Unable to turn on AOF. Check server logs.");
    }
    if old.aof.disable_auto_gc && !ctx.server.config.aof.disable_auto_gc {
        crate::aof::collect_history(ctx.server);
    }
    let process = &ctx.server.config.process;
    if (process.oom_mode, process.oom_values) != (old.process.oom_mode, old.process.oom_values) {
        let replica = ctx.server.replication.master_addr.is_some();
        if !crate::service::process::apply_oom_score(process, replica) {
            let name = if process.oom_mode != old.process.oom_mode {
                "oom-score-adj"
            } else {
                "oom-score-adj-values"
            };
            // The score the old settings give (as Redis's rollback applies them again).
            crate::service::process::apply_oom_score(&old.process, replica);
            ctx.server.config = old;
            return ctx.error(&format!("ERR CONFIG SET failed (possibly related to argument '{name}') - Failed to set current oom_score_adj. Check server logs."));
        }
    }
    if ctx.server.config.locale_collate != old.locale_collate
        && !crate::service::locale::set_collate(&ctx.server.config.locale_collate)
    {
        ctx.server.config = old;
        return ctx.error("ERR CONFIG SET failed (possibly related to argument 'locale-collate') - Invalid locale name");
    }
    if ctx.server.config.process.title_template != old.process.title_template {
        crate::service::process::set_title(&ctx.server.config);
    }
    let maxmemory = ctx.server.config.memory.maxmemory;
    if maxmemory != 0 && maxmemory != old.memory.maxmemory {
        let used = ctx
            .server
            .memory
            .gauge
            .read(&ctx.server.keyspace)
            .saturating_sub(crate::memory::not_counted_for_evict(ctx.server));
        if maxmemory < used {
            crate::warning!("WARNING: the new maxmemory value set via CONFIG SET ({maxmemory}) is smaller than the current memory usage ({used}). This will result in key eviction and/or the inability to accept new write commands depending on the maxmemory-policy.");
        }
        ctx.server.memory.eviction_running = true;
    }
    let access = ctx.server.config.memory.access_policy();
    ctx.server.keyspace.set_access_policy(access);
    let lazy = ctx.server.config.lazy_removals();
    ctx.server.keyspace.set_lazy_removals(lazy);
    if old.requirepass != ctx.server.config.requirepass {
        let password = ctx.server.config.requirepass.clone();
        ctx.server.acl.set_default_password(password.as_deref());
    }
    ctx.server.acl.pubsub_default_all = ctx.server.config.acl_pubsub_default_all;
    crate::latency::set_threshold(ctx.server.config.latency_monitor_threshold);
    crate::service::crash::set_exit_on_panic(ctx.server.config.use_exit_on_panic);
    if ctx.server.config.crash_log_enabled != old.crash_log_enabled {
        crate::service::crash::set_crash_log(ctx.server.config.crash_log_enabled);
    }
    let classes = ctx.server.config.notify_keyspace_events;
    ctx.server.keyspace.notifier.set_flags(classes);
    crate::replication::resize_backlog(ctx.server);
    // As Redis: this node's announced hostname, names and ports show at once.
    if let Some(cluster) = ctx.server.cluster.as_deref_mut() {
        cluster.refresh_myself(&ctx.server.config);
    }
    ctx.out.ok();
}

/// The reply to a CONFIG SET refused for parameter `arg`.
fn config_set_failure(arg: &str, e: ConfigError) -> String {
    let why = match e {
        ConfigError::Unknown => {
            return format!("ERR Unknown option or number of arguments for CONFIG SET - '{arg}'")
        }
        ConfigError::Immutable => "can't set immutable config".to_string(),
        ConfigError::BadValue(why) => why,
    };
    format!("ERR CONFIG SET failed (possibly related to argument '{arg}') - {why}")
}

/// The parameters CONFIG SET refuses with -LOADING while a load runs (Redis's
/// DENY_LOADING_CONFIG).
const DENY_LOADING: [&str; 3] = ["appendonly", "dir", "repl-diskless-load"];

/// Redis checks every name of a CONFIG SET before any value: the first one unknown,
/// start-only, protected (enable-protected-configs not allowing it to this client),
/// refused while loading, or repeated (in any case; an alias is a name of its own) refuses
/// the whole command, named as typed.
fn refused_name(ctx: &Ctx, pairs: &[&[u8]]) -> Option<String> {
    let local = ctx.client.addr.is_local();
    let protected_ok = protected_action_allowed(&ctx.server.config.enable_protected_configs, local);
    let mut seen: Vec<String> = Vec::new();
    for pair in pairs.chunks(2) {
        let typed = String::from_utf8_lossy(pair[0]);
        let lower = typed.to_ascii_lowercase();
        let why = match Config::settable(&lower) {
            Err(e) => return Some(config_set_failure(&typed, e)),
            Ok(name) if PROTECTED.contains(&name) && !protected_ok => "can't set protected config",
            Ok(name)
                if DENY_LOADING.contains(&name)
                    && (ctx.server.is_loading()
                        || crate::replication::replica::async_loading(ctx.server)) =>
            {
                return Some(errors::LOADING.to_string());
            }
            Ok(_) if seen.contains(&lower) => "duplicate parameter",
            Ok(_) => {
                seen.push(lower);
                continue;
            }
        };
        return Some(format!(
            "ERR CONFIG SET failed (possibly related to argument '{typed}') - {why}"
        ));
    }
    None
}

/// CONFIG RESETSTAT
pub fn config_resetstat(ctx: &mut Ctx, _args: &[&[u8]]) {
    ctx.server.stats.reset();
    ctx.server.keyspace.reset_stats();
    ctx.server.memory.evicted_keys = 0;
    ctx.server.memory.evicted_clients = 0;
    ctx.server.memory.gauge.reset_peak();
    ctx.server.slowlog.entries.clear();
    crate::rdb::reset_sanitizations();
    // As Redis's resetServerStats: the sync, fork and persistence counters too.
    let repl = &mut ctx.server.replication;
    (repl.sync_full, repl.sync_partial_ok, repl.sync_partial_err) = (0, 0, 0);
    let rdb = &mut ctx.server.rdb;
    (rdb.saves, rdb.latest_fork_usec, rdb.total_forks) = (0, 0, 0);
    let rewrite = &mut ctx.server.aof.rewrite;
    (rewrite.rewrites, rewrite.consecutive_failures) = (0, 0);
    ctx.out.ok();
}

/// CONFIG REWRITE
pub fn config_rewrite(ctx: &mut Ctx, _args: &[&[u8]]) {
    use crate::config_rewrite::RewriteError;
    match crate::config_rewrite::rewrite(ctx.server, false) {
        Ok(()) => {
            crate::notice!("CONFIG REWRITE executed with success.");
            ctx.out.ok()
        }
        Err(RewriteError::NoConfigFile) => {
            ctx.error("ERR The server is running without a config file")
        }
        Err(RewriteError::Io(why)) => {
            crate::warning!("CONFIG REWRITE failed: {why}");
            ctx.error(&format!("ERR Rewriting config file: {why}"))
        }
    }
}

/// CONFIG HELP
pub fn config_help(ctx: &mut Ctx, _args: &[&[u8]]) {
    help_reply(
        ctx,
        "CONFIG",
        &[
            "GET <pattern>",
            "    Return parameters matching the glob-like <pattern> and their values.",
            "SET <directive> <value>",
            "    Set the configuration <directive> to <value>.",
            "RESETSTAT",
            "    Reset statistics reported by the INFO command.",
            "REWRITE",
            "    Rewrite the configuration file.",
        ],
    );
}

/// TIME
pub fn time(ctx: &mut Ctx, _args: &[&[u8]]) {
    let (secs, micros) = (ctx.now_us / 1_000_000, ctx.now_us % 1_000_000);
    ctx.out.array(2);
    ctx.out.bulk(secs.to_string().as_bytes());
    ctx.out.bulk(micros.to_string().as_bytes());
}

/// SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] [ABORT]: the caller blocks while the shutdown
/// waits for lagging replicas, and gets no reply if the server exits.
pub fn shutdown(ctx: &mut Ctx, args: &[&[u8]]) {
    use crate::service::shutdown::{self, Outcome, FORCE, NOSAVE, NOW, SAVE};
    let (mut flags, mut abort) = (0, false);
    for arg in &args[1..] {
        match arg.to_ascii_uppercase().as_slice() {
            b"SAVE" => flags |= SAVE,
            b"NOSAVE" => flags |= NOSAVE,
            b"FORCE" => flags |= FORCE,
            b"NOW" => flags |= NOW,
            b"ABORT" => abort = true,
            _ => return ctx.syntax_error(),
        }
    }
    if (abort && flags != 0) || (flags & SAVE != 0 && flags & NOSAVE != 0) {
        return ctx.syntax_error();
    }
    if abort {
        return match shutdown::abort(ctx.server) {
            true => ctx.out.ok(),
            false => ctx.error("ERR No shutdown in progress."),
        };
    }
    if ctx.server.scripting.busy() && flags & NOSAVE == 0 {
        // Only SHUTDOWN NOSAVE stops a server whose script is busy (the script is killed).
        let busy = ctx.server.scripting.busy_error();
        return ctx.error(busy);
    }
    match shutdown::request(ctx.server, flags) {
        Outcome::Exit => {}
        Outcome::Waiting => ctx.block = Some((Vec::new(), None)),
        Outcome::Failed => ctx.error(shutdown::FAILED),
    }
}

/// Longest argument kept in a slowlog entry, and most arguments kept.
const SLOWLOG_MAX_STRING: usize = 128;
const SLOWLOG_MAX_ARGC: usize = 32;

/// One slowlog entry.
pub struct SlowlogEntry {
    id: u64,
    time: u64,
    micros: u64,
    args: Vec<Vec<u8>>,
    addr: String,
    name: Vec<u8>,
}

/// The slowlog.
#[derive(Default)]
pub struct SlowLog {
    /// Newest first.
    pub entries: VecDeque<SlowlogEntry>,
    next_id: u64,
}

/// Adds an entry when a command took longer than slowlog-log-slower-than. The check runs
/// after every command, so it inlines into the dispatcher; the recording does not.
#[inline]
pub fn slowlog_record(ctx: &mut Ctx, cmd: &Command, args: &[&[u8]], micros: u64) {
    let threshold = ctx.server.config.slowlog_log_slower_than;
    if threshold < 0 || micros < threshold as u64 || cmd.flags.contains(Flags::SKIP_SLOWLOG) {
        return;
    }
    // Passwords and ACL rules are redacted, as for MONITOR.
    let shown = super::monitor::redact(args);
    let args: Vec<&[u8]> = shown.iter().map(|a| &**a).collect();
    slowlog_push(ctx, &args, micros);
}

/// Records a slow command: its arguments (trimmed as Redis trims them), time and client.
#[cold]
fn slowlog_push(ctx: &mut Ctx, args: &[&[u8]], micros: u64) {
    let mut kept: Vec<Vec<u8>> = Vec::new();
    for (i, arg) in args.iter().enumerate() {
        if i == SLOWLOG_MAX_ARGC - 1 && args.len() > SLOWLOG_MAX_ARGC {
            kept.push(format!("... ({} more arguments)", args.len() - i).into_bytes());
            break;
        }
        if arg.len() > SLOWLOG_MAX_STRING {
            let mut a = arg[..SLOWLOG_MAX_STRING].to_vec();
            a.extend_from_slice(
                format!("... ({} more bytes)", arg.len() - SLOWLOG_MAX_STRING).as_bytes(),
            );
            kept.push(a);
        } else {
            kept.push(arg.to_vec());
        }
    }
    let log = &mut ctx.server.slowlog;
    let entry = SlowlogEntry {
        id: log.next_id,
        time: crate::clock::unix_ms() / 1000,
        micros,
        args: kept,
        addr: ctx.client.addr.to_string(),
        name: ctx.client.name.clone().unwrap_or_default(),
    };
    log.next_id += 1;
    log.entries.push_front(entry);
    log.entries.truncate(ctx.server.config.slowlog_max_len);
}

/// SLOWLOG GET [count]
pub fn slowlog_get(ctx: &mut Ctx, args: &[&[u8]]) {
    let mut count = 10usize;
    if args.len() > 3 {
        return subcommand_syntax_error(ctx, args);
    }
    if let Some(arg) = args.get(2) {
        match crate::numbers::parse_i64(arg) {
            Some(-1) => count = usize::MAX,
            Some(n) if n >= 0 => count = n as usize,
            _ => return ctx.error("ERR count should be greater than or equal to -1"),
        }
    }
    let entries: Vec<&SlowlogEntry> = ctx.server.slowlog.entries.iter().take(count).collect();
    ctx.out.array(entries.len());
    for e in entries {
        ctx.out.array(6);
        ctx.out.int(e.id as i64);
        ctx.out.int(e.time as i64);
        ctx.out.int(e.micros as i64);
        ctx.out.array(e.args.len());
        for a in &e.args {
            ctx.out.bulk(a);
        }
        ctx.out.bulk(e.addr.as_bytes());
        ctx.out.bulk(&e.name);
    }
}

/// SLOWLOG LEN
pub fn slowlog_len(ctx: &mut Ctx, _args: &[&[u8]]) {
    ctx.out.int(ctx.server.slowlog.entries.len() as i64);
}

/// SLOWLOG RESET
pub fn slowlog_reset(ctx: &mut Ctx, _args: &[&[u8]]) {
    ctx.server.slowlog.entries.clear();
    ctx.out.ok();
}

/// SLOWLOG HELP
pub fn slowlog_help(ctx: &mut Ctx, _args: &[&[u8]]) {
    help_reply(
        ctx,
        "SLOWLOG",
        &[
            "GET [<count>]",
            "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
            "    Entries are made of:",
            "    id, timestamp, time in microseconds, arguments array, client IP and port,",
            "    client name",
            "LEN",
            "    Return the length of the slowlog.",
            "RESET",
            "    Reset the slowlog.",
        ],
    );
}
