//! DEBUG subcommand ...: Redis 7.2's testing and introspection hooks, allowed as
//! enable-debug-command says.

use super::server_cmds::help_reply;
use super::Ctx;
use crate::errors;
use crate::keyspace::{StringValue, Value};
use crate::numbers::atoi;

/// DEBUG HELP's lines, in Redis 7.2's words and order, for the subcommands Goblin has
/// (Redis's crash, leak, allocator, hash-table and cluster-link hooks are not among them).
const HELP: &[&str] = &[
    "AOF-FLUSH-SLEEP <microsec>",
    "    Server will sleep before flushing the AOF, this is used for testing.",
    "CHANGE-REPL-ID",
    "    Change the replication IDs of the instance.",
    "    Dangerous: should be used only for testing the replication subsystem.",
    "CONFIG-REWRITE-FORCE-ALL",
    "    Like CONFIG REWRITE but writes all configuration options, including",
    "    keywords not listed in original configuration file or default values.",
    "DIGEST",
    "    Output a hex signature representing the current DB content.",
    "DIGEST-VALUE <key> [<key> ...]",
    "    Output a hex signature of the values of all the specified keys.",
    "ERROR <string>",
    "    Return a Redis protocol error with <string> as message. Useful for clients",
    "    unit tests to simulate Redis errors.",
    "LOG <message>",
    "    Write <message> to the server log.",
    "LOADAOF",
    "    Flush the AOF buffers on disk and reload the AOF in memory.",
    "REPLICATE <string>",
    "    Replicates the provided string to replicas, allowing data divergence.",
    "OBJECT <key>",
    "    Show low level info about `key` and associated value.",
    "DROP-CLUSTER-PACKET-FILTER <packet-type>",
    "    Drop all packets that match the filtered type. Set to -1 allow all packets.",
    "POPULATE <count> [<prefix>] [<size>]",
    "    Create <count> string keys named key:<num>. If <prefix> is specified then",
    "    it is used instead of the 'key' prefix. These are not propagated to",
    "    replicas. Cluster slots are not respected so keys not belonging to the",
    "    current node can be created in cluster mode.",
    "PROTOCOL <type>",
    "    Reply with a test value of the specified type. <type> can be: string,",
    "    integer, double, bignum, null, array, set, map, attrib, push, verbatim,",
    "    true, false.",
    "RELOAD [option ...]",
    "    Save the RDB on disk and reload it back to memory. Valid <option> values:",
    "    * MERGE: conflicting keys will be loaded from RDB.",
    "    * NOFLUSH: the existing database will not be removed before load, but",
    "      conflicting keys will generate an exception and kill the server.",
    "    * NOSAVE: the database will be loaded from an existing RDB file.",
    "    Examples:",
    "    * DEBUG RELOAD: verify that the server is able to persist, flush and reload",
    "      the database.",
    "    * DEBUG RELOAD NOSAVE: replace the current database with the contents of an",
    "      existing RDB file.",
    "    * DEBUG RELOAD NOSAVE NOFLUSH MERGE: add the contents of an existing RDB",
    "      file to the database.",
    "SEGFAULT",
    "    Crash the server with sigsegv.",
    "SET-ACTIVE-EXPIRE <0|1>",
    "    Setting it to 0 disables expiring keys in background when they are not",
    "    accessed (otherwise the Redis behavior). Setting it to 1 reenables back the",
    "    default.",
    "QUICKLIST-PACKED-THRESHOLD <size>",
    "    Sets the threshold for elements to be inserted as plain vs packed nodes",
    "    Default value is 1GB, allows values up to 4GB. Setting to 0 restores to default.",
    "SET-SKIP-CHECKSUM-VALIDATION <0|1>",
    "    Enables or disables checksum checks for RDB files and RESTORE's payload.",
    "SLEEP <seconds>",
    "    Stop the server for <seconds>. Decimals allowed.",
    "PAUSE-CRON <0|1>",
    "    Stop periodic cron job processing.",
    "REPLYBUFFER PEAK-RESET-TIME <NEVER||RESET|time>",
    "    Sets the time (in milliseconds) to wait between client reply buffer peak resets.",
    "    In case NEVER is provided the last observed peak will never be reset",
    "    In case RESET is provided the peak reset time will be restored to the default value",
    "REPLYBUFFER RESIZING <0|1>",
    "    Enable or disable the reply buffer resize cron job",
    "CLUSTERLINK KILL <to|from|all> <node-id>",
    "    Kills the link based on the direction to/from (both) with the provided node.",
];

/// DEBUG subcommand ... (allowed as enable-debug-command says: the dispatcher checks it
/// before authentication, see [`super::protected_refusal`]).
pub fn debug(ctx: &mut Ctx, args: &[&[u8]]) {
    // As Redis: DEBUG never propagates, not even what POPULATE, RELOAD or LOADAOF changed
    // (a LOADAOF in the AOF would replay itself when the AOF is next loaded).
    ctx.propagate_nothing();
    let sub = args[1].to_ascii_lowercase();
    match (sub.as_slice(), args.len()) {
        (b"help", 2) => help_reply(ctx, "DEBUG", HELP),
        (b"sleep", 3) => {
            let secs = strtod(args[2]);
            if secs > 0.0 {
                std::thread::sleep(std::time::Duration::from_secs_f64(secs.min(3600.0)));
            }
            ctx.out.ok();
        }
        (b"reload", _) => super::persistence::debug_reload(ctx, &args[2..]),
        (b"set-active-expire", 3) => {
            ctx.server.keyspace.active_expire_enabled = atoi(args[2]) != 0;
            ctx.out.ok();
        }
        (b"object", 3) => super::debug_object::debug_object(ctx, args[2]),
        (b"digest", 2) => super::debug_digest::digest(ctx),
        (b"digest-value", _) => super::debug_digest::digest_value(ctx, &args[2..]),
        (b"error", 3) => {
            // The argument is the whole error line, as given (no code added, not counted
            // in errorstats, as Redis's).
            let mut line = Vec::with_capacity(args[2].len() + 3);
            line.push(b'-');
            line.extend(args[2].iter().map(|&b| match b {
                b'\r' | b'\n' => b' ',
                b => b,
            }));
            line.extend_from_slice(b"\r\n");
            ctx.out.raw(&line);
        }
        (b"replicate", 3..) => super::unreplied::debug_replicate(ctx, &args[2..]),
        (b"log", 3) => {
            crate::warning!("DEBUG LOG: {}", String::from_utf8_lossy(args[2]));
            ctx.out.ok();
        }
        (b"protocol", 3) => protocol(ctx, args[2]),
        (b"populate", 3..=5) => populate(ctx, &args[2..]),
        (b"set-skip-checksum-validation", 3) => {
            crate::rdb::set_skip_checksum(atoi(args[2]) != 0);
            ctx.out.ok();
        }
        (b"quicklist-packed-threshold", 3) => {
            let size = std::str::from_utf8(args[2])
                .ok()
                .and_then(crate::config::memtoull);
            if size.is_some_and(goblin_zset::list::set_packed_threshold) {
                ctx.out.ok();
            } else {
                ctx.error("ERR argument must be a memory value bigger than 1 and smaller than 4gb");
            }
        }
        (b"drop-cluster-packet-filter", 3) => match crate::numbers::parse_i64(args[2]) {
            Some(mtype) => {
                if let Some(cluster) = ctx.server.cluster.as_deref_mut() {
                    cluster.state.drop_filter = mtype;
                }
                ctx.out.ok();
            }
            None => ctx.error(errors::NOT_AN_INTEGER),
        },
        (b"clusterlink", 5) if args[2].eq_ignore_ascii_case(b"kill") => clusterlink_kill(ctx, args),
        (b"pause-cron", 3) => {
            ctx.server.pause_cron = atoi(args[2]) != 0;
            ctx.out.ok();
        }
        (b"segfault", _) => crate::service::crash::segfault(),
        (b"loadaof", _) => {
            if crate::aof::reload(ctx.server, super::lend(&mut ctx.while_blocked)) {
                ctx.out.ok();
            } else {
                ctx.error("ERR Error trying to load the AOF files, check server logs.");
            }
        }
        (b"aof-flush-sleep", 3) => {
            ctx.server.aof.flush_sleep_us = atoi(args[2]).max(0) as u64;
            ctx.out.ok();
        }
        (b"set-disable-deny-scripts", 3) => {
            ctx.server.scripting.deny_script_disabled = atoi(args[2]) != 0;
            ctx.out.ok();
        }
        (b"config-rewrite-force-all", 2) => config_rewrite_force_all(ctx),
        (b"replybuffer", 4) => replybuffer(ctx, args),
        (b"change-repl-id", 2) => {
            crate::notice!("Changing replication IDs after receiving DEBUG change-repl-id");
            crate::replication::new_history(ctx.server);
            ctx.out.ok();
        }
        _ => {
            let name = String::from_utf8_lossy(args[1]).into_owned();
            ctx.error(&errors::subcommand_syntax(&name, "DEBUG"))
        }
    }
}

/// DEBUG CONFIG-REWRITE-FORCE-ALL: CONFIG REWRITE with a line for every parameter.
fn config_rewrite_force_all(ctx: &mut Ctx) {
    use crate::config_rewrite::RewriteError;
    let why = match crate::config_rewrite::rewrite(ctx.server, true) {
        Ok(()) => return ctx.out.ok(),
        // Redis hands its rewrite a NULL path then, which open(2) refuses so.
        Err(RewriteError::NoConfigFile) => "Bad address".to_string(),
        Err(RewriteError::Io(why)) => why,
    };
    ctx.error(&format!("ERR CONFIG-REWRITE-FORCE-ALL failed: {why}"));
}

/// DEBUG REPLYBUFFER PEAK-RESET-TIME <NEVER|RESET|ms> | RESIZING <0|1>: the reply
/// buffers' resize policy (see [`crate::clients::reply_buffer`]).
fn replybuffer(ctx: &mut Ctx, args: &[&[u8]]) {
    use crate::clients::reply_buffer::DEFAULT_PEAK_RESET_MS;
    let policy = &mut ctx.server.clients.reply_buffer_policy;
    let value = args[3];
    match args[2].to_ascii_lowercase().as_slice() {
        b"peak-reset-time" if value.eq_ignore_ascii_case(b"never") => policy.peak_reset_ms = -1,
        b"peak-reset-time" if value.eq_ignore_ascii_case(b"reset") => {
            policy.peak_reset_ms = DEFAULT_PEAK_RESET_MS
        }
        b"peak-reset-time" => match crate::numbers::parse_i64(value) {
            Some(ms) => policy.peak_reset_ms = ms,
            None => return ctx.error(errors::NOT_AN_INTEGER),
        },
        b"resizing" => policy.resizing = atoi(value) != 0,
        _ => {
            let name = String::from_utf8_lossy(args[1]).into_owned();
            return ctx.error(&errors::subcommand_syntax(&name, "DEBUG"));
        }
    }
    ctx.out.ok();
}

/// DEBUG PROTOCOL type: a fixed value of each reply type.
fn protocol(ctx: &mut Ctx, name: &[u8]) {
    match name.to_ascii_lowercase().as_slice() {
        b"string" => ctx.out.bulk(b"Hello World"),
        b"integer" => ctx.out.int(12345),
        // Redis's test value, not an approximation of pi.
        #[allow(clippy::approx_constant)]
        b"double" => ctx.out.double(3.141),
        b"bignum" => ctx.out.big_number(b"1234567999999999999999999999999999999"),
        b"null" => ctx.out.null(),
        b"array" | b"set" => {
            if name.eq_ignore_ascii_case(b"set") {
                ctx.out.set(3);
            } else {
                ctx.out.array(3);
            }
            (0..3).for_each(|j| ctx.out.int(j));
        }
        b"map" => {
            ctx.out.map(3);
            for j in 0..3 {
                ctx.out.int(j);
                ctx.out.boolean(j == 1);
            }
        }
        b"attrib" => {
            // An attribute is no reply of its own: a real reply follows it.
            if ctx.out.is_resp3() {
                ctx.out.raw(b"|1\r\n");
                ctx.out.bulk(b"key-popularity");
                ctx.out.array(2);
                ctx.out.bulk(b"key:123");
                ctx.out.int(90);
            }
            ctx.out.bulk(b"Some real reply following the attribute");
        }
        b"push" => {
            if !ctx.out.is_resp3() {
                return ctx.error("ERR RESP2 is not supported by this command");
            }
            // Redis 7.2 sends the pushes a command makes after its reply.
            ctx.out.bulk(b"Some real reply following the push reply");
            ctx.out.push(2);
            ctx.out.bulk(b"server-cpu-usage");
            ctx.out.int(42);
        }
        b"true" => ctx.out.boolean(true),
        b"false" => ctx.out.boolean(false),
        b"verbatim" => ctx.out.verbatim(b"This is a verbatim\nstring"),
        _ => ctx.error("ERR Wrong protocol type name. Please use one of the following: string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false"),
    }
}

/// Redis's POPULATE key names: at most 127 bytes (its buffer's size less the NUL).
const POPULATE_NAME_MAX: usize = 127;

/// DEBUG POPULATE count [prefix] [size]: string keys `prefix:N` (default prefix "key")
/// holding "value:N" (or `size` bytes starting so, zero-padded), for N in 0..count; a key
/// that exists is left alone. Not propagated, as Redis's.
fn populate(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(count) = positive_arg(ctx, args[0]) else {
        return;
    };
    let size = match args.get(2) {
        Some(arg) => match positive_arg(ctx, arg) {
            Some(size) => size as usize,
            None => return,
        },
        None => 0,
    };
    let prefix = args.get(1).copied().unwrap_or(b"key");
    let (db, now) = (ctx.client.db, ctx.now_ms);
    for j in 0..count {
        let mut key = prefix.to_vec();
        key.extend_from_slice(format!(":{j}").as_bytes());
        key.truncate(POPULATE_NAME_MAX);
        if ctx.server.keyspace.exists_for_write(db, &key, now) {
            continue;
        }
        let text = format!("value:{j}");
        let value = if size == 0 {
            text.into_bytes()
        } else {
            let mut v = vec![0u8; size];
            let n = size.min(text.len());
            v[..n].copy_from_slice(&text.as_bytes()[..n]);
            v
        };
        let value = Value::Str(StringValue::from_set(&value));
        ctx.server.keyspace.store(db, &key, value);
    }
    ctx.out.ok();
}

/// A count that must be 0 or more (Redis's getPositiveLongFromObjectOrReply: one error
/// for a negative number and for no number at all).
fn positive_arg(ctx: &mut Ctx, arg: &[u8]) -> Option<i64> {
    let v = crate::numbers::parse_i64(arg).filter(|v| *v >= 0);
    if v.is_none() {
        ctx.error("ERR value is out of range, must be positive");
    }
    v
}

/// Reads a number as C's strtod() with no error check: the longest prefix (after leading
/// white space) that is a number, and 0 when there is none.
fn strtod(arg: &[u8]) -> f64 {
    let start = arg
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(arg.len());
    let text = &arg[start..arg.len().min(start + 512)];
    (1..=text.len())
        .rev()
        .filter_map(|end| std::str::from_utf8(&text[..end]).ok())
        .find_map(|prefix| {
            // Rust accepts "infinity" and "nan" as strtod does, but not a trailing "e", "."
            // alone or hex floats; a prefix without a digit (other than inf/nan) is no number.
            prefix.parse::<f64>().ok()
        })
        .unwrap_or(0.0)
}

/// DEBUG CLUSTERLINK KILL <to|from|all> <node-id>: the links with the node are closed
/// before the bus next sends (a PUBLISH after it in the same EXEC does not reach the node
/// on the killed link), then connected again by the cron.
fn clusterlink_kill(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(cluster) = ctx.server.cluster.as_deref_mut() else {
        return ctx.error("ERR Debug option only available for cluster mode enabled setup!");
    };
    let Some(node) =
        crate::cluster::node::parse_id(args[4]).filter(|id| cluster.state.nodes.contains_key(id))
    else {
        let name = String::from_utf8_lossy(args[4]);
        return ctx.error(&format!("ERR Unknown node {name}"));
    };
    let (to, from) = match args[3].to_ascii_lowercase().as_slice() {
        b"to" => (true, false),
        b"from" => (false, true),
        b"all" => (true, true),
        _ => {
            let direction = String::from_utf8_lossy(args[3]);
            return ctx.error(&format!("ERR Unknown direction {direction}"));
        }
    };
    cluster.link_kills.push((node, to, from));
    ctx.out.ok();
}
