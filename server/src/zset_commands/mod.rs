//! The sorted-set commands (Z*, BZ*, GOBLIN.*), their parsing and replies, on the
//! `goblin-zset` engine.
//!
//! - [`parse`]: score, range, lex-range and timeout arguments, with Redis's error texts.
//! - [`write`]: ZADD, ZINCRBY, ZREM, ZREMRANGEBY*.
//! - [`read`]: ZCARD, ZSCORE, ZMSCORE, ZRANK, ZCOUNT, ZLEXCOUNT, ZRANDMEMBER, ZSCAN.
//! - [`range`]: ZRANGE and its legacy forms, ZRANGESTORE.
//! - [`pop`]: ZPOPMIN/MAX, ZMPOP and their blocking forms.
//! - [`setops`]: ZUNION, ZINTER, ZDIFF (and STORE forms), ZINTERCARD.
//! - [`goblin`]: GOBLIN.MEMORY and GOBLIN.OPTIMIZE.

mod goblin;
pub(crate) mod parse;
mod pop;
mod range;
mod read;
mod setops;
mod write;

use crate::commands::{Command, Ctx, Flags, Replied, StatSlot};
use crate::keyspace::{SortedSet, Value};
use crate::resp::reply::ReplyWriter;

const W: Flags = Flags::WRITE;
const WD: Flags = Flags::WRITE.with(Flags::DENYOOM);
const WDF: Flags = Flags::WRITE.with(Flags::DENYOOM).with(Flags::FAST);
const WF: Flags = Flags::WRITE.with(Flags::FAST);
const R: Flags = Flags::READONLY;
const RF: Flags = Flags::READONLY.with(Flags::FAST);
const WB: Flags = Flags::WRITE.with(Flags::BLOCKING);

macro_rules! zcmd {
    ($name:literal, $arity:expr, $flags:expr, $handler:expr) => {
        Command {
            name: $name,
            arity: $arity,
            flags: $flags,
            handler: $handler,
            subcommands: &[],
            slot: StatSlot::new(),
        }
    };
}

/// Every sorted-set command.
pub static COMMANDS: [Command; 37] = [
    zcmd!("zadd", -4, WDF, write::zadd),
    zcmd!("zincrby", 4, WDF, write::zincrby),
    zcmd!("zrem", -3, WF, write::zrem),
    zcmd!("zremrangebyrank", 4, W, write::zremrangebyrank),
    zcmd!("zremrangebyscore", 4, W, write::zremrangebyscore),
    zcmd!("zremrangebylex", 4, W, write::zremrangebylex),
    zcmd!("zcard", 2, RF, read::zcard),
    zcmd!("zscore", 3, RF, read::zscore),
    zcmd!("zmscore", -3, RF, read::zmscore),
    zcmd!("zrank", -3, RF, read::zrank),
    zcmd!("zrevrank", -3, RF, read::zrevrank),
    zcmd!("zcount", 4, RF, read::zcount),
    zcmd!("zlexcount", 4, RF, read::zlexcount),
    zcmd!("zrandmember", -2, R, read::zrandmember),
    zcmd!("zscan", -3, R, read::zscan),
    zcmd!("zrange", -4, R, range::zrange),
    zcmd!("zrangestore", -5, WD, range::zrangestore),
    zcmd!("zrevrange", -4, R, range::zrevrange),
    zcmd!("zrangebyscore", -4, R, range::zrangebyscore),
    zcmd!("zrevrangebyscore", -4, R, range::zrevrangebyscore),
    zcmd!("zrangebylex", -4, R, range::zrangebylex),
    zcmd!("zrevrangebylex", -4, R, range::zrevrangebylex),
    zcmd!("zpopmin", -2, WF, pop::zpopmin),
    zcmd!("zpopmax", -2, WF, pop::zpopmax),
    zcmd!("zmpop", -4, W, pop::zmpop),
    zcmd!("bzpopmin", -3, WB.with(Flags::FAST), pop::bzpopmin),
    zcmd!("bzpopmax", -3, WB.with(Flags::FAST), pop::bzpopmax),
    zcmd!("bzmpop", -5, WB, pop::bzmpop),
    zcmd!("zunion", -3, R, setops::zunion),
    zcmd!("zinter", -3, R, setops::zinter),
    zcmd!("zdiff", -3, R, setops::zdiff),
    zcmd!("zunionstore", -4, WD, setops::zunionstore),
    zcmd!("zinterstore", -4, WD, setops::zinterstore),
    zcmd!("zdiffstore", -4, WD, setops::zdiffstore),
    zcmd!("zintercard", -3, RF, setops::zintercard),
    zcmd!("goblin.memory", -1, R, goblin::memory),
    zcmd!("goblin.optimize", -2, W, goblin::optimize),
];

/// The sorted set at `key` for reading (expired keys are removed first): `Ok(None)` when
/// missing, `Err(Replied)` once WRONGTYPE is replied.
fn read_zset<'c>(ctx: &'c mut Ctx, key: &[u8]) -> Result<Option<&'c SortedSet>, Replied> {
    ctx.read_typed(key, Value::as_zset)
}

/// The sorted set at `key` for reading beside the reply writer (split borrows), so a reply
/// can be written straight from the set's own bytes.
fn read_zset_and_out<'c, 'a>(
    ctx: &'c mut Ctx<'a>,
    key: &[u8],
) -> (
    Result<Option<&'c SortedSet>, Replied>,
    &'c mut ReplyWriter<'a>,
) {
    ctx.read_typed_and_out(key, Value::as_zset)
}

/// The sorted set at `key` for writing: `Ok(None)` when missing, `Err(Replied)` once
/// WRONGTYPE is replied.
fn write_zset<'c>(ctx: &'c mut Ctx, key: &[u8]) -> Result<Option<&'c mut SortedSet>, Replied> {
    ctx.write_typed(key, Value::as_zset_mut)
}

/// After a write to `key` that left its set `empty` or not: signals watchers, and removes
/// the key when the set is empty (the set commands' too).
pub(crate) fn after_write(ctx: &mut Ctx, key: &[u8], empty: bool) {
    let db = ctx.client.db;
    if empty {
        ctx.server.keyspace.delete(db, key);
    } else {
        ctx.server.keyspace.signal_modified(db, key);
    }
}

/// Stores `members` (any order, unique) as the set at `dst`, encoded as Redis encodes a
/// result of that size; an empty result deletes `dst`. Returns the member count.
fn store_result(ctx: &mut Ctx, dst: &[u8], members: Vec<(Vec<u8>, f64)>) -> usize {
    let db = ctx.client.db;
    let count = members.len();
    if count == 0 {
        ctx.server.keyspace.delete(db, dst);
        return 0;
    }
    let set = SortedSet::from_members(&members, &ctx.server.config.zset);
    ctx.server.keyspace.store(db, dst, Value::ZSet(set));
    count
}

/// Writes members, with scores when asked: RESP2 flat, RESP3 as [member, score] pairs.
fn write_members<'a>(
    out: &mut ReplyWriter,
    items: impl ExactSizeIterator<Item = (&'a [u8], f64)>,
    withscores: bool,
) {
    let nested = withscores && out.is_resp3();
    out.array(if withscores && !nested {
        items.len() * 2
    } else {
        items.len()
    });
    for (member, score) in items {
        if nested {
            out.array(2);
        }
        out.bulk(member);
        if withscores {
            out.double(score);
        }
    }
}
