//! DUMP and RESTORE (and RESTORE-ASKING): a key's value as Redis's serialized payload and
//! back (cluster.c's dumpCommand and restoreCommand). The payload format is
//! [`crate::rdb::dump`].

use super::Ctx;
use crate::pubsub::notify;
use crate::rdb::dump::{self, Payload, RestoreError};

/// DUMP key: the payload Redis 7.2 returns, or a null reply when the key does not exist.
pub fn dump(ctx: &mut Ctx, args: &[&[u8]]) {
    let (db, now, touch) = (ctx.db(), ctx.now_ms, !ctx.client.no_touch);
    let compress = ctx.server.config.rdbcompression;
    let Some(entry) = ctx.server.keyspace.lookup_read(db, args[1], now, touch) else {
        return ctx.out.null();
    };
    let payload = dump::payload(entry.value, compress, Payload::Exact);
    ctx.out.bulk(&payload);
}

/// The options of RESTORE after the payload.
#[derive(Default)]
struct RestoreOptions {
    replace: bool,
    absttl: bool,
    idle: Option<u64>,
    freq: Option<u8>,
}

/// Parses RESTORE's options as Redis does: IDLETIME and FREQ exclude each other (the second
/// one is a syntax error), a bad number is "not an integer", then the range is checked.
fn restore_options(ctx: &mut Ctx, args: &[&[u8]]) -> Option<RestoreOptions> {
    let mut opts = RestoreOptions::default();
    let mut j = 4;
    while j < args.len() {
        let more = args.len() - j - 1;
        let arg = args[j];
        if arg.eq_ignore_ascii_case(b"REPLACE") {
            opts.replace = true;
        } else if arg.eq_ignore_ascii_case(b"ABSTTL") {
            opts.absttl = true;
        } else if arg.eq_ignore_ascii_case(b"IDLETIME") && more >= 1 && opts.freq.is_none() {
            let idle = ctx.int_arg(args[j + 1])?;
            if idle < 0 {
                ctx.error("ERR Invalid IDLETIME value, must be >= 0");
                return None;
            }
            opts.idle = Some(idle as u64);
            j += 1;
        } else if arg.eq_ignore_ascii_case(b"FREQ") && more >= 1 && opts.idle.is_none() {
            let freq = ctx.int_arg(args[j + 1])?;
            if !(0..=255).contains(&freq) {
                ctx.error("ERR Invalid FREQ value, must be >= 0 and <= 255");
                return None;
            }
            opts.freq = Some(freq as u8);
            j += 1;
        } else {
            ctx.syntax_error();
            return None;
        }
        j += 1;
    }
    Some(opts)
}

/// RESTORE key ttl serialized-value [REPLACE] [ABSTTL] [IDLETIME seconds] [FREQ frequency]
/// (and RESTORE-ASKING, the same command for a node importing a slot).
///
/// Checked in Redis's order: options, an existing key (BUSYKEY unless REPLACE), the TTL,
/// the payload's footer (version at most 11 and CRC64), then its value. A TTL already in
/// the past stores nothing (deleting the old key under REPLACE, propagated as DEL); a
/// relative TTL is propagated as an absolute one with ABSTTL, as Redis does.
pub fn restore(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(opts) = restore_options(ctx, args) else {
        return;
    };
    let (db, key, now) = (ctx.db(), args[1], ctx.now_ms);
    if !opts.replace && ctx.server.keyspace.lookup_write(db, key, now).is_some() {
        return ctx.error("BUSYKEY Target key name already exists.");
    }
    let Some(ttl) = ctx.int_arg(args[2]) else {
        return;
    };
    if ttl < 0 {
        return ctx.error("ERR Invalid TTL value, must be >= 0");
    }
    let mut load = crate::rdb::load_options(&ctx.server.config, ctx.server.keyspace.clock_secs());
    let master = ctx.client.repl_role == crate::clients::ReplRole::Master;
    let skip_user =
        (ctx.server.acl.user(&ctx.client.user.name)).is_some_and(|u| !u.sanitize_payload);
    load.deep_sanitize = crate::rdb::deep_sanitize(
        &ctx.server.config.sanitize_dump_payload,
        Some((master, skip_user)),
    );
    let value = match dump::restore(args[3], &load) {
        Ok(value) => value,
        Err(RestoreError::Footer) => {
            return ctx.error("ERR DUMP payload version or checksum are wrong")
        }
        Err(RestoreError::Data(e)) => {
            crate::log::log(crate::config::LogLevel::Verbose, &e.internal_error_line());
            return ctx.error("ERR Bad data format");
        }
    };
    let deleted = opts.replace && ctx.server.keyspace.delete(db, key);
    let at = match (ttl, opts.absttl) {
        (0, _) => None,
        (t, true) => Some(t),
        (t, false) => Some(t.saturating_add(now as i64)),
    };
    if at.is_some_and(|at| at <= now as i64) {
        // Already expired: nothing is stored; a replaced key is gone.
        if deleted {
            let verb = crate::propagate::deletion_verb(
                ctx.server
                    .keyspace
                    .removal_is_lazy(crate::keyspace::Cause::Server),
            );
            ctx.propagate_instead(&[verb, key]);
            ctx.notify(notify::GENERIC, "del", key);
            ctx.server.keyspace.add_dirty(1);
        }
        return ctx.out.ok();
    }
    ctx.server.keyspace.store(db, key, value);
    if let Some(at) = at {
        ctx.server.keyspace.set_expiry(db, key, at as u64);
        if !opts.absttl {
            let text = at.to_string();
            let mut argv: Vec<&[u8]> = args.to_vec();
            argv[2] = text.as_bytes();
            argv.push(b"ABSTTL");
            ctx.propagate_instead(&argv);
        }
    }
    ctx.server
        .keyspace
        .set_access(db, key, opts.freq, opts.idle, now);
    ctx.notify(notify::GENERIC, "restore", key);
    ctx.server.keyspace.add_dirty(1);
    ctx.out.ok();
}
