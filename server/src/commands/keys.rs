//! Keyspace commands: DEL, EXISTS, TYPE, RENAME, COPY, MOVE, KEYS, SCAN, RANDOMKEY, DBSIZE,
//! FLUSHDB, FLUSHALL, SWAPDB, OBJECT, MEMORY.

use super::Ctx;
use crate::errors;
use crate::glob::glob_match;
use crate::keyspace::lfu::idle_secs;
use crate::keyspace::Entry;
use crate::keyspace::Free;
use crate::pubsub::notify;

/// Whether `key` exists (not expired) in `db`, for writers.
fn alive(ctx: &mut Ctx, db: usize, key: &[u8]) -> bool {
    ctx.server.keyspace.exists_for_write(db, key, ctx.now_ms)
}

/// DEL / UNLINK key [key ...]
pub fn del(ctx: &mut Ctx, args: &[&[u8]]) {
    let db = ctx.db();
    let unlink = args[0].eq_ignore_ascii_case(b"UNLINK");
    let free = Free::lazily_if(unlink || ctx.server.config.lazyfree_lazy_user_del);
    let mut n = 0;
    for key in &args[1..] {
        if alive(ctx, db, key) && ctx.server.keyspace.delete_freeing(db, key, free) {
            ctx.notify(notify::GENERIC, "del", key);
            n += 1;
        }
    }
    ctx.server.keyspace.add_dirty(n as u64);
    ctx.out.int(n);
}

/// EXISTS / TOUCH key [key ...]. EXISTS never updates access times (Redis looks the keys
/// up with LOOKUP_NOTOUCH); TOUCH always does, even under CLIENT NO-TOUCH.
pub fn exists(ctx: &mut Ctx, args: &[&[u8]]) {
    let db = ctx.db();
    let touch = args[0].eq_ignore_ascii_case(b"TOUCH");
    let mut n = 0;
    for key in &args[1..] {
        if ctx
            .server
            .keyspace
            .lookup_read(db, key, ctx.now_ms, touch)
            .is_some()
        {
            n += 1;
        }
    }
    ctx.out.int(n);
}

/// TYPE key (does not update the access time: LOOKUP_NOTOUCH in Redis)
pub fn type_of(ctx: &mut Ctx, args: &[&[u8]]) {
    let db = ctx.db();
    let name = ctx
        .server
        .keyspace
        .lookup_read(db, args[1], ctx.now_ms, false)
        .map(|e| e.value.type_name())
        .unwrap_or("none");
    ctx.out.simple(name);
}

fn rename_generic(ctx: &mut Ctx, args: &[&[u8]], nx: bool) {
    let db = ctx.db();
    let (src, dst) = (args[1], args[2]);
    if !alive(ctx, db, src) {
        return ctx.error(errors::NO_SUCH_KEY);
    }
    if src == dst {
        return if nx { ctx.out.int(0) } else { ctx.out.ok() };
    }
    if alive(ctx, db, dst) {
        if nx {
            return ctx.out.int(0);
        }
        ctx.server.keyspace.delete(db, dst);
    }
    ctx.server.keyspace.relocate(db, src, db, dst);
    ctx.notify(notify::GENERIC, "rename_from", src);
    ctx.notify(notify::GENERIC, "rename_to", dst);
    ctx.server.keyspace.add_dirty(1);
    if nx {
        ctx.out.int(1)
    } else {
        ctx.out.ok()
    }
}

/// RENAME key newkey
pub fn rename(ctx: &mut Ctx, args: &[&[u8]]) {
    rename_generic(ctx, args, false);
}

/// RENAMENX key newkey
pub fn renamenx(ctx: &mut Ctx, args: &[&[u8]]) {
    rename_generic(ctx, args, true);
}

/// Parses a database index argument.
fn db_index(ctx: &mut Ctx, arg: &[u8]) -> Option<usize> {
    let index = ctx.int_arg(arg)?;
    if index < 0 || index as usize >= ctx.server.keyspace.db_count() {
        ctx.error(errors::DB_INDEX_OUT_OF_RANGE);
        return None;
    }
    Some(index as usize)
}

/// COPY source destination [DB destination-db] [REPLACE]
pub fn copy(ctx: &mut Ctx, args: &[&[u8]]) {
    let src_db = ctx.db();
    let mut dst_db = src_db;
    let mut replace = false;
    let mut i = 3;
    while i < args.len() {
        if args[i].eq_ignore_ascii_case(b"REPLACE") {
            replace = true;
            i += 1;
        } else if args[i].eq_ignore_ascii_case(b"DB") && i + 1 < args.len() {
            let Some(d) = db_index(ctx, args[i + 1]) else {
                return;
            };
            if ctx.server.cluster.is_some() && d != src_db {
                return ctx.error("ERR Copying to another database is not allowed in cluster mode");
            }
            dst_db = d;
            i += 2;
        } else {
            return ctx.syntax_error();
        }
    }
    let (src, dst) = (args[1], args[2]);
    if src_db == dst_db && src == dst {
        return ctx.error(errors::SAME_SOURCE_AND_DESTINATION);
    }
    let Some(entry) = ctx.server.keyspace.lookup_write(src_db, src, ctx.now_ms) else {
        return ctx.out.int(0);
    };
    let (value, expire) = (entry.value.clone(), entry.expire_at());
    if alive(ctx, dst_db, dst) {
        if !replace {
            return ctx.out.int(0);
        }
        ctx.server.keyspace.delete(dst_db, dst);
    }
    ctx.server.keyspace.store(dst_db, dst, value);
    if let Some(at) = expire {
        ctx.server.keyspace.set_expiry(dst_db, dst, at);
    }
    let notifier = &mut ctx.server.keyspace.notifier;
    notifier.fire(notify::GENERIC, "copy_to", dst_db, dst);
    ctx.server.keyspace.add_dirty(1);
    ctx.out.int(1);
}

/// MOVE key db
pub fn move_key(ctx: &mut Ctx, args: &[&[u8]]) {
    if ctx.server.cluster.is_some() {
        return ctx.error("ERR MOVE is not allowed in cluster mode");
    }
    let src_db = ctx.db();
    let Some(dst_db) = db_index(ctx, args[2]) else {
        return;
    };
    if src_db == dst_db {
        return ctx.error(errors::SAME_SOURCE_AND_DESTINATION);
    }
    if !alive(ctx, src_db, args[1]) || alive(ctx, dst_db, args[1]) {
        return ctx.out.int(0);
    }
    ctx.server
        .keyspace
        .relocate(src_db, args[1], dst_db, args[1]);
    let notifier = &mut ctx.server.keyspace.notifier;
    notifier.fire(notify::GENERIC, "move_from", src_db, args[1]);
    notifier.fire(notify::GENERIC, "move_to", dst_db, args[1]);
    ctx.server.keyspace.add_dirty(1);
    ctx.out.int(1);
}

/// KEYS pattern
pub fn keys(ctx: &mut Ctx, args: &[&[u8]]) {
    let db = ctx.server.keyspace.db(ctx.client.db);
    let now = ctx.now_ms;
    let all = args[1] == b"*";
    let found: Vec<&[u8]> = db
        .iter()
        .filter(|e| !e.is_expired(now))
        .map(|e| e.key())
        .filter(|k| all || glob_match(args[1], k, false))
        .collect();
    ctx.out.array(found.len());
    for k in found {
        ctx.out.bulk(k);
    }
}

/// SCAN cursor [MATCH pattern] [COUNT count] [TYPE type]
pub fn scan(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(cursor) = crate::numbers::parse_cursor(args[1]) else {
        return ctx.error(errors::INVALID_CURSOR);
    };
    let Some(opts) = ScanOptions::parse(ctx, &args[2..], true) else {
        return;
    };
    let db = ctx.db();
    let now = ctx.now_ms;
    let mut found = Vec::new();
    let mut expired = Vec::new();
    let next = ctx.server.keyspace.db(db).scan(cursor, opts.count, |e| {
        let matched = opts
            .pattern
            .as_ref()
            .is_none_or(|p| glob_match(p, e.key(), false));
        if !matched {
            return;
        }
        if e.is_expired(now) {
            expired.push(e.key().to_vec());
            return;
        }
        let type_ok = opts
            .type_name
            .as_ref()
            .is_none_or(|t| t.eq_ignore_ascii_case(e.value.type_name().as_bytes()));
        if type_ok {
            found.push(e.key().to_vec());
        }
    });
    // As Redis: the expired keys the cursor met that match the pattern are deleted (each
    // propagated as its own DEL).
    for key in &expired {
        ctx.server.keyspace.expire_if_needed(db, key, now);
    }
    write_scan_reply(ctx, next, found.iter().map(Vec::as_slice));
}

/// Writes `[cursor, [items...]]`.
pub fn write_scan_reply<'a>(
    ctx: &mut Ctx,
    next: u64,
    items: impl ExactSizeIterator<Item = &'a [u8]>,
) {
    ctx.out.array(2);
    ctx.out.bulk(next.to_string().as_bytes());
    ctx.out.array(items.len());
    for item in items {
        ctx.out.bulk(item);
    }
}

/// MATCH / COUNT (/ TYPE) options of the SCAN family.
pub struct ScanOptions {
    /// MATCH pattern.
    pub pattern: Option<Vec<u8>>,
    /// COUNT hint.
    pub count: usize,
    /// TYPE filter (SCAN only).
    pub type_name: Option<Vec<u8>>,
}

impl ScanOptions {
    /// Parses the options after the cursor; replies with the error and returns None when bad.
    pub fn parse(ctx: &mut Ctx, opts: &[&[u8]], allow_type: bool) -> Option<ScanOptions> {
        let mut o = ScanOptions {
            pattern: None,
            count: 10,
            type_name: None,
        };
        let mut i = 0;
        while i < opts.len() {
            let has_value = i + 1 < opts.len();
            if opts[i].eq_ignore_ascii_case(b"COUNT") && has_value {
                let n = ctx.int_arg(opts[i + 1])?;
                if n < 1 {
                    ctx.syntax_error();
                    return None;
                }
                o.count = n as usize;
            } else if opts[i].eq_ignore_ascii_case(b"MATCH") && has_value {
                o.pattern = (opts[i + 1] != b"*").then(|| opts[i + 1].to_vec());
            } else if allow_type && opts[i].eq_ignore_ascii_case(b"TYPE") && has_value {
                o.type_name = Some(opts[i + 1].to_vec());
            } else {
                ctx.syntax_error();
                return None;
            }
            i += 2;
        }
        Some(o)
    }
}

/// RANDOMKEY
pub fn randomkey(ctx: &mut Ctx, _args: &[&[u8]]) {
    let db = ctx.db();
    match ctx.server.keyspace.random_key(db, ctx.now_ms) {
        Some(key) => ctx.out.bulk(&key),
        None => ctx.out.null(),
    }
}

/// DBSIZE
pub fn dbsize(ctx: &mut Ctx, _args: &[&[u8]]) {
    ctx.out
        .int(ctx.server.keyspace.db(ctx.client.db).len() as i64);
}

/// How FLUSHDB / FLUSHALL free the data: ASYNC lazily, SYNC now, neither as
/// lazyfree-lazy-user-flush says; None (after a syntax error reply) for anything else.
fn flush_mode(ctx: &mut Ctx, args: &[&[u8]]) -> Option<Free> {
    match args {
        [_] => Some(Free::lazily_if(ctx.server.config.lazyfree_lazy_user_flush)),
        [_, mode] if mode.eq_ignore_ascii_case(b"ASYNC") => Some(Free::Lazily),
        [_, mode] if mode.eq_ignore_ascii_case(b"SYNC") => Some(Free::Now),
        _ => {
            ctx.syntax_error();
            None
        }
    }
}

/// FLUSHDB [ASYNC|SYNC]
pub fn flushdb(ctx: &mut Ctx, args: &[&[u8]]) {
    if let Some(free) = flush_mode(ctx, args) {
        ctx.server.keyspace.flush_db(ctx.client.db, free);
        ctx.force_propagation();
        ctx.out.ok();
    }
}

/// FLUSHALL [ASYNC|SYNC]
///
/// As Redis does, a running BGSAVE is killed and, when save points are set, the now empty
/// dataset is saved at once, so a restart does not bring the flushed keys back.
pub fn flushall(ctx: &mut Ctx, args: &[&[u8]]) {
    if let Some(free) = flush_mode(ctx, args) {
        ctx.server.keyspace.flush_all(free);
        ctx.force_propagation();
        // A diskless sync's snapshot is of the old data too: its replicas sync again.
        crate::replication::fullsync::kill_sockets_child(ctx.server);
        let mut snapshots = ctx.server.snapshots();
        snapshots.kill_child();
        if !snapshots.config.save.is_empty() {
            // A failed save is logged by `save`; FLUSHALL still succeeds, as in Redis.
            let _ = snapshots.save();
        }
        ctx.out.ok();
    }
}

/// SWAPDB index1 index2
pub fn swapdb(ctx: &mut Ctx, args: &[&[u8]]) {
    if ctx.server.cluster.is_some() {
        return ctx.error("ERR SWAPDB is not allowed in cluster mode");
    }
    let parse = |arg: &[u8]| crate::numbers::parse_i64(arg);
    let Some(a) = parse(args[1]) else {
        return ctx.error("ERR invalid first DB index");
    };
    let Some(b) = parse(args[2]) else {
        return ctx.error("ERR invalid second DB index");
    };
    let count = ctx.server.keyspace.db_count() as i64;
    if a < 0 || a >= count || b < 0 || b >= count {
        return ctx.error(errors::DB_INDEX_OUT_OF_RANGE);
    }
    ctx.server.keyspace.swap_dbs(a as usize, b as usize);
    ctx.server.keyspace.add_dirty(1);
    ctx.out.ok();
}

/// Looks a key up for OBJECT / MEMORY without touching its access time or statistics.
fn peek<'c>(ctx: &'c mut Ctx, key: &[u8]) -> Option<Entry<'c>> {
    let db = ctx.db();
    ctx.server.keyspace.peek(db, key, ctx.now_ms)
}

/// OBJECT ENCODING key
pub fn object_encoding(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(entry) = peek(ctx, args[2]) else {
        return ctx.out.null();
    };
    let encoding = entry.value.encoding_name();
    ctx.out.bulk(encoding.as_bytes());
}

/// OBJECT REFCOUNT key (see [`crate::keyspace::Value::refcount`])
pub fn object_refcount(ctx: &mut Ctx, args: &[&[u8]]) {
    let sharing = ctx.server.config.memory.shares_integers();
    match peek(ctx, args[2]).map(|entry| entry.value.refcount(sharing)) {
        Some(count) => ctx.out.int(count),
        None => ctx.out.null(),
    }
}

/// OBJECT IDLETIME key
pub fn object_idletime(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(entry) = peek(ctx, args[2]) else {
        return ctx.out.null();
    };
    let accessed = entry.accessed();
    if ctx.server.config.memory.policy.is_lfu() {
        return ctx.error("ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.");
    }
    ctx.out
        .int(idle_secs(ctx.server.keyspace.clock_secs(), accessed) as i64);
}

/// OBJECT FREQ key: the key's LFU counter, decayed; refused unless an LFU policy is set.
pub fn object_freq(ctx: &mut Ctx, args: &[&[u8]]) {
    let db = ctx.db();
    let Some(entry) = ctx.server.keyspace.peek(db, args[2], ctx.now_ms) else {
        return ctx.out.null();
    };
    let accessed = entry.accessed();
    let freq = ctx.server.keyspace.frequency(accessed);
    if !ctx.server.config.memory.policy.is_lfu() {
        return ctx.error("ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.");
    }
    ctx.out.int(freq as i64);
}

/// OBJECT HELP
pub fn object_help(ctx: &mut Ctx, _args: &[&[u8]]) {
    super::server_cmds::help_reply(
        ctx,
        "OBJECT",
        &[
            "ENCODING <key>",
            "    Return the kind of internal representation used in order to store the value",
            "    associated with a <key>.",
            "FREQ <key>",
            "    Return the access frequency index of the <key>. The returned integer is",
            "    proportional to the logarithm of the recent access frequency of the key.",
            "IDLETIME <key>",
            "    Return the idle time of the <key>, that is the approximated number of",
            "    seconds elapsed since the last access to the key.",
            "REFCOUNT <key>",
            "    Return the number of references of the value associated with the specified",
            "    <key>.",
        ],
    );
}

/// MEMORY USAGE key [SAMPLES count]: the engine's tracked bytes plus the key's own cost.
pub fn memory_usage(ctx: &mut Ctx, args: &[&[u8]]) {
    let mut i = 3;
    while i < args.len() {
        if !args[i].eq_ignore_ascii_case(b"SAMPLES") || i + 1 >= args.len() {
            return ctx.syntax_error();
        }
        match ctx.int_arg(args[i + 1]) {
            None => return,
            Some(n) if n < 0 => return ctx.syntax_error(),
            Some(_) => {}
        }
        i += 2;
    }
    let Some(entry) = peek(ctx, args[2]) else {
        return ctx.out.null();
    };
    let bytes = entry.memory_usage();
    ctx.out.int(bytes as i64);
}
