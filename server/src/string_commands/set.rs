//! SET and its kin: SETNX, SETEX, PSETEX, GETSET, MSET, MSETNX; the expiry options SET and
//! GETEX share (Redis's parseExtendedStringArgumentsOrReply and getExpireMillisecondsOrReply).
//! SET's IFEQ / IFNE / IFDEQ / IFDNE (Redis 8.4) are in `compare`.

use super::compare::Compare;
use super::{get, store};
use crate::commands::Ctx;
use crate::errors;
use crate::keyspace::StringValue;
use crate::pubsub::notify;

/// Which command parses the options: SET takes NX XX GET KEEPTTL and the IF* conditions,
/// MSETEX NX XX KEEPTTL, GETEX PERSIST.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Family {
    /// SET.
    Set,
    /// MSETEX.
    Mset,
    /// GETEX.
    Get,
}

/// An expiry argument: its text and how to read it.
#[derive(Clone, Copy)]
pub(super) struct Expiry<'a> {
    /// The number as given.
    pub text: &'a [u8],
    /// Seconds (EX, EXAT) rather than milliseconds.
    pub seconds: bool,
    /// Relative to now (EX, PX) rather than a Unix time (EXAT, PXAT).
    pub relative: bool,
}

/// The options of SET or GETEX.
#[derive(Default)]
pub(super) struct Options<'a> {
    /// NX: only when the key is absent.
    pub nx: bool,
    /// XX: only when the key exists.
    pub xx: bool,
    /// IFEQ / IFNE / IFDEQ / IFDNE: only when the current value meets it.
    pub cond: Option<Compare<'a>>,
    /// GET: reply with the old value.
    pub get: bool,
    /// KEEPTTL: keep the key's expiry.
    pub keep_ttl: bool,
    /// PERSIST: remove the expiry (GETEX).
    pub persist: bool,
    /// EX / PX / EXAT / PXAT.
    pub expiry: Option<Expiry<'a>>,
}

impl Expiry<'_> {
    /// The option's token: EX, PX, EXAT or PXAT.
    fn token(&self) -> &'static [u8] {
        match (self.seconds, self.relative) {
            (true, true) => b"EX",
            (false, true) => b"PX",
            (true, false) => b"EXAT",
            (false, false) => b"PXAT",
        }
    }
}

impl<'a> Options<'a> {
    /// Parses `args` (after the key, or key and value) as Redis does: a flag that conflicts
    /// with one already given, or an expiry without its number, is a syntax error.
    pub(super) fn parse(ctx: &mut Ctx, args: &[&'a [u8]], family: Family) -> Option<Options<'a>> {
        let mut o = Options::default();
        let set = family != Family::Get;
        let single = family == Family::Set;
        let mut j = 0;
        while j < args.len() {
            let opt = args[j].to_ascii_uppercase();
            let next = args.get(j + 1).copied();
            let timed = o.expiry.map(|e| (e.seconds, e.relative));
            let no_ttl_flags = !o.keep_ttl && !o.persist;
            let unconditional = !o.nx && !o.xx && o.cond.is_none();
            match opt.as_slice() {
                b"NX" if !o.xx && o.cond.is_none() && set => o.nx = true,
                b"XX" if !o.nx && o.cond.is_none() && set => o.xx = true,
                b"IFEQ" | b"IFNE" | b"IFDEQ" | b"IFDNE"
                    if unconditional && single && next.is_some() =>
                {
                    o.cond = Compare::parse(&opt, next.expect("checked"));
                    j += 1;
                }
                b"GET" if single => o.get = true,
                b"KEEPTTL" if !o.persist && timed.is_none() && set => o.keep_ttl = true,
                b"PERSIST" if !set && !o.keep_ttl && timed.is_none() => o.persist = true,
                b"EX" | b"PX" | b"EXAT" | b"PXAT" if no_ttl_flags && next.is_some() => {
                    let seconds = opt[0] == b'E';
                    let relative = opt.len() == 2;
                    if timed.is_some_and(|t| t != (seconds, relative)) {
                        ctx.syntax_error();
                        return None;
                    }
                    o.expiry = Some(Expiry {
                        text: next.expect("checked"),
                        seconds,
                        relative,
                    });
                    j += 1;
                }
                _ => {
                    ctx.syntax_error();
                    return None;
                }
            }
            j += 1;
        }
        Some(o)
    }
}

/// The absolute expiry in Unix milliseconds of `e`, or the reply "invalid expire time in
/// '<command>' command".
pub(super) fn expire_at(ctx: &mut Ctx, e: Expiry, command: &str) -> Option<i64> {
    let mut ms = ctx.int_arg(e.text)?;
    let invalid = format!("ERR invalid expire time in '{command}' command");
    if ms <= 0 || (e.seconds && ms > i64::MAX / 1000) {
        ctx.error(&invalid);
        return None;
    }
    if e.seconds {
        ms *= 1000;
    }
    if e.relative {
        ms = ms.wrapping_add(ctx.now_ms as i64);
    }
    if ms <= 0 {
        ctx.error(&invalid);
        return None;
    }
    Some(ms)
}

/// The absolute expiry of an optional expiry option: Some(None) without one, None after
/// the error reply.
pub(super) fn optional_expire_at(
    ctx: &mut Ctx,
    e: Option<Expiry>,
    command: &str,
) -> Option<Option<i64>> {
    match e {
        Some(e) => expire_at(ctx, e, command).map(Some),
        None => Some(None),
    }
}

/// What a refused SET (NX or XX not met) answers, and what a done one answers.
struct Replies {
    refused: fn(&mut Ctx),
    done: fn(&mut Ctx),
}

const SET_REPLIES: Replies = Replies {
    refused: |ctx| ctx.out.null(),
    done: |ctx| ctx.out.ok(),
};

/// Redis's setGenericCommand.
fn set_generic(ctx: &mut Ctx, key: &[u8], value: &[u8], o: &Options, command: &str, r: Replies) {
    let Some(at) = optional_expire_at(ctx, o.expiry, command) else {
        return;
    };
    if o.get && !get::reply_value(ctx, key) {
        return;
    }
    // A condition compares with a string's value (WRONGTYPE for another type).
    let met = match o.cond {
        None => true,
        Some(c) => match c.evaluate(ctx, key) {
            None => return,
            Some((met, _)) => met,
        },
    };
    let db = ctx.db();
    let found = ctx.server.keyspace.exists_for_write(db, key, ctx.now_ms);
    if (o.nx && found) || (o.xx && !found) || !met {
        if !o.get {
            (r.refused)(ctx);
        }
        return;
    }
    store(ctx, key, StringValue::from_set(value), o.keep_ttl);
    ctx.notify(notify::STRING, "set", key);
    if let Some(at) = at {
        ctx.server.keyspace.set_expiry(db, key, at as u64);
        ctx.notify(notify::GENERIC, "expire", key);
        // Replayed as SET key value PXAT ms, unless given so (Redis's setGenericCommand).
        if o.expiry.is_some_and(|e| e.seconds || e.relative) {
            let at = at.to_string();
            ctx.propagate_instead(&[b"SET", key, value, b"PXAT", at.as_bytes()]);
        }
    }
    if !o.get {
        (r.done)(ctx);
    }
}

/// SET key value [NX|XX|IFEQ v|IFNE v|IFDEQ d|IFDNE d] [GET] [EX s|PX ms|EXAT t|PXAT t|KEEPTTL]
pub fn set(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(o) = Options::parse(ctx, &args[3..], Family::Set) else {
        return;
    };
    set_generic(ctx, args[1], args[2], &o, "set", SET_REPLIES);
    if o.get && o.expiry.is_none() && ctx.propagating() {
        // Replayed without its GETs (Redis's setGenericCommand; with an expiry the command
        // was rewritten whole, or, for PXAT, is replayed as given).
        let argv: Vec<&[u8]> = (args.iter().enumerate())
            .filter(|(i, a)| *i < 3 || !a.eq_ignore_ascii_case(b"get"))
            .map(|(_, a)| *a)
            .collect();
        ctx.propagate_instead(&argv);
    }
}

/// SETNX key value
pub fn setnx(ctx: &mut Ctx, args: &[&[u8]]) {
    let o = Options {
        nx: true,
        ..Options::default()
    };
    let replies = Replies {
        refused: |ctx| ctx.out.int(0),
        done: |ctx| ctx.out.int(1),
    };
    set_generic(ctx, args[1], args[2], &o, "setnx", replies);
}

/// SETEX and PSETEX: key, a relative expiry, value.
fn setex_generic(ctx: &mut Ctx, args: &[&[u8]], seconds: bool, command: &str) {
    let o = Options {
        expiry: Some(Expiry {
            text: args[2],
            seconds,
            relative: true,
        }),
        ..Options::default()
    };
    set_generic(ctx, args[1], args[3], &o, command, SET_REPLIES);
}

/// SETEX key seconds value
pub fn setex(ctx: &mut Ctx, args: &[&[u8]]) {
    setex_generic(ctx, args, true, "setex");
}

/// PSETEX key milliseconds value
pub fn psetex(ctx: &mut Ctx, args: &[&[u8]]) {
    setex_generic(ctx, args, false, "psetex");
}

/// GETSET key value: the old value, and the new one stored without an expiry.
pub fn getset(ctx: &mut Ctx, args: &[&[u8]]) {
    if get::reply_value(ctx, args[1]) {
        store(ctx, args[1], StringValue::from_set(args[2]), false);
        ctx.notify(notify::STRING, "set", args[1]);
        // Replayed as SET, as Redis rewrites it.
        ctx.propagate_instead(&[b"SET", args[1], args[2]]);
    }
}

/// MSET and MSETNX: pairs of key and value; with `nx`, nothing is set when a key exists.
fn mset_generic(ctx: &mut Ctx, args: &[&[u8]], nx: bool, name: &str) {
    if args.len().is_multiple_of(2) {
        return ctx.error(&errors::wrong_arity(name));
    }
    let db = ctx.db();
    if nx {
        let now = ctx.now_ms;
        let exists = args[1..]
            .iter()
            .step_by(2)
            .any(|k| ctx.server.keyspace.exists_for_write(db, k, now));
        if exists {
            return ctx.out.int(0);
        }
    }
    for pair in args[1..].chunks(2) {
        store(ctx, pair[0], StringValue::from_set(pair[1]), false);
        ctx.notify(notify::STRING, "set", pair[0]);
    }
    if nx {
        ctx.out.int(1);
    } else {
        ctx.out.ok();
    }
}

/// The error of MSETEX for a bad key count.
const BAD_NUMKEYS: &str = "ERR invalid numkeys value";

/// MSETEX numkeys key value [key value ...] [NX|XX] [EX s|PX ms|EXAT t|PXAT t|KEEPTTL]
/// (Redis 8.4): 1 when every pair was set, 0 when NX or XX refused them all. Replayed with
/// EX / PX / EXAT turned into PXAT and the absolute time.
pub fn msetex(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(n) =
        crate::numbers::parse_i64(args[1]).filter(|n| (1..=i64::from(i32::MAX)).contains(n))
    else {
        return ctx.error(BAD_NUMKEYS);
    };
    let end = 2 + 2 * n as usize;
    if end > args.len() {
        return ctx.error("ERR wrong number of key-value pairs");
    }
    let Some(o) = Options::parse(ctx, &args[end..], Family::Mset) else {
        return;
    };
    let Some(at) = optional_expire_at(ctx, o.expiry, "msetex") else {
        return;
    };
    let pairs = &args[2..end];
    let db = ctx.db();
    let now = ctx.now_ms;
    let refused = (o.nx || o.xx)
        && pairs
            .iter()
            .step_by(2)
            .any(|k| ctx.server.keyspace.exists_for_write(db, k, now) == o.nx);
    if refused {
        return ctx.out.int(0);
    }
    for pair in pairs.chunks(2) {
        store(ctx, pair[0], StringValue::from_set(pair[1]), o.keep_ttl);
        ctx.notify(notify::STRING, "set", pair[0]);
        if let Some(at) = at {
            ctx.server.keyspace.set_expiry(db, pair[0], at as u64);
            ctx.notify(notify::GENERIC, "expire", pair[0]);
        }
    }
    if let (Some(at), Some(e)) = (at, o.expiry) {
        if e.seconds || e.relative {
            // The expiry's token and number are the last two of their kind in the options.
            let opts = &args[end..];
            let pos = end
                + opts
                    .iter()
                    .rposition(|a| a.eq_ignore_ascii_case(e.token()))
                    .expect("parsed");
            let at = at.to_string();
            let mut argv = args.to_vec();
            argv[pos] = b"PXAT";
            argv[pos + 1] = at.as_bytes();
            ctx.propagate_instead(&argv);
        }
    }
    ctx.out.int(1);
}

/// MSET key value [key value ...]
pub fn mset(ctx: &mut Ctx, args: &[&[u8]]) {
    mset_generic(ctx, args, false, "mset");
}

/// MSETNX key value [key value ...]
pub fn msetnx(ctx: &mut Ctx, args: &[&[u8]]) {
    mset_generic(ctx, args, true, "msetnx");
}
