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

use crate::commands::{Command, Ctx, Flags};
use crate::keyspace::{SortedSet, Value, WrongType, ZSetRef};
use crate::pubsub::notify;
use crate::resp::reply::ReplyWriter;

const W: Flags = Flags::WRITE;
const WD: Flags = Flags::WRITE.with(Flags::DENYOOM);
const WDF: Flags = Flags::WRITE.with(Flags::DENYOOM).with(Flags::FAST);
const WF: Flags = Flags::WRITE.with(Flags::FAST);
const R: Flags = Flags::READONLY;
const RF: Flags = Flags::READONLY.with(Flags::FAST);
/// Blocking pops (a script or MULTI runs them without blocking, as Redis does).
const WB: Flags = Flags::WRITE.with(Flags::BLOCKING);

/// Every sorted-set command.
pub static COMMANDS: [Command; 37] = [
    Command::simple("zadd", -4, WDF, write::zadd),
    Command::simple("zincrby", 4, WDF, write::zincrby),
    Command::simple("zrem", -3, WF, write::zrem),
    Command::simple("zremrangebyrank", 4, W, write::zremrangebyrank),
    Command::simple("zremrangebyscore", 4, W, write::zremrangebyscore),
    Command::simple("zremrangebylex", 4, W, write::zremrangebylex),
    Command::simple("zcard", 2, RF, read::zcard),
    Command::simple("zscore", 3, RF, read::zscore),
    Command::simple("zmscore", -3, RF, read::zmscore),
    Command::simple("zrank", -3, RF, read::zrank),
    Command::simple("zrevrank", -3, RF, read::zrevrank),
    Command::simple("zcount", 4, RF, read::zcount),
    Command::simple("zlexcount", 4, RF, read::zlexcount),
    Command::simple("zrandmember", -2, R, read::zrandmember),
    Command::simple("zscan", -3, R, read::zscan),
    Command::simple("zrange", -4, R, range::zrange),
    Command::simple("zrangestore", -5, WD, range::zrangestore),
    Command::simple("zrevrange", -4, R, range::zrevrange),
    Command::simple("zrangebyscore", -4, R, range::zrangebyscore),
    Command::simple("zrevrangebyscore", -4, R, range::zrevrangebyscore),
    Command::simple("zrangebylex", -4, R, range::zrangebylex),
    Command::simple("zrevrangebylex", -4, R, range::zrevrangebylex),
    Command::simple("zpopmin", -2, WF, pop::zpopmin),
    Command::simple("zpopmax", -2, WF, pop::zpopmax),
    Command::simple("zmpop", -4, W, pop::zmpop),
    Command::simple("bzpopmin", -3, WB.with(Flags::FAST), pop::bzpopmin),
    Command::simple("bzpopmax", -3, WB.with(Flags::FAST), pop::bzpopmax),
    Command::simple("bzmpop", -5, WB, pop::bzmpop),
    Command::simple("zunion", -3, R, setops::zunion),
    Command::simple("zinter", -3, R, setops::zinter),
    Command::simple("zdiff", -3, R, setops::zdiff),
    Command::simple("zunionstore", -4, WD, setops::zunionstore),
    Command::simple("zinterstore", -4, WD, setops::zinterstore),
    Command::simple("zdiffstore", -4, WD, setops::zdiffstore),
    Command::simple("zintercard", -3, RF, setops::zintercard),
    Command::simple("goblin.memory", -1, R, goblin::memory),
    Command::simple("goblin.optimize", -2, W, goblin::optimize),
];

/// The sorted set at `key` for reading (expired keys are removed first): None when
/// absent, `Err` after the WRONGTYPE reply.
fn read_zset<'c>(ctx: &'c mut Ctx, key: &[u8]) -> Result<Option<&'c SortedSet>, WrongType> {
    ctx.read_typed(key, Value::as_zset)
}

/// `read(the sorted set at key)` for reading its scores, a small one where its key's
/// record holds it (None when absent): `Err` after the WRONGTYPE reply.
fn read_scores<R>(
    ctx: &mut Ctx,
    key: &[u8],
    read: impl FnOnce(Option<ZSetRef<'_>>) -> R,
) -> Result<R, WrongType> {
    let touch = !ctx.client.no_touch;
    let found = ctx
        .server
        .keyspace
        .lookup_zset_scores(ctx.client.db, key, ctx.now_ms, touch)
        .map(read);
    if found.is_err() {
        ctx.error(crate::errors::WRONGTYPE);
    }
    found
}

/// The sorted set at `key` for reading beside the reply writer (split borrows), so a reply
/// can be written straight from the set's own bytes.
fn read_zset_and_out<'c, 'a>(
    ctx: &'c mut Ctx<'a>,
    key: &[u8],
) -> (
    Result<Option<&'c SortedSet>, WrongType>,
    &'c mut ReplyWriter<'a>,
) {
    ctx.read_typed_and_out(key, Value::as_zset)
}

/// The sorted set at `key` for writing: None when absent, `Err` after the WRONGTYPE reply.
fn write_zset<'c>(ctx: &'c mut Ctx, key: &[u8]) -> Result<Option<&'c mut SortedSet>, WrongType> {
    ctx.write_typed(key, Value::as_zset_mut)
}

/// After a write to `key` that left its set `empty` or not: fires the write's keyspace
/// event (`class`, `event`), signals watchers, and removes the key when the set is empty
/// (firing "del" after the write's event, as Redis does); the other collection commands'
/// too.
pub(crate) fn after_write(ctx: &mut Ctx, key: &[u8], empty: bool, class: u32, event: &'static str) {
    let db = ctx.client.db;
    ctx.notify(class, event, key);
    if empty {
        ctx.server.keyspace.delete(db, key);
        ctx.notify(notify::GENERIC, "del", key);
    } else {
        ctx.server.keyspace.signal_modified(db, key);
    }
}

/// Stores `members` (any order, unique) as the set at `dst`, encoded as Redis encodes a
/// result of that size; an empty result deletes `dst`. Returns the member count.
fn store_result(
    ctx: &mut Ctx,
    dst: &[u8],
    members: Vec<(Vec<u8>, f64)>,
    event: &'static str,
) -> usize {
    let db = ctx.client.db;
    let count = members.len();
    if count == 0 {
        let existed = ctx.server.keyspace.delete(db, dst);
        if existed {
            ctx.notify(notify::GENERIC, "del", dst);
        }
        ctx.server.keyspace.add_dirty(existed as u64);
        return 0;
    }
    let set = SortedSet::from_members(&members, &ctx.server.config.zset);
    ctx.server.keyspace.store(db, dst, Value::ZSet(set));
    ctx.notify(notify::ZSET, event, dst);
    ctx.server.keyspace.add_dirty(1);
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
