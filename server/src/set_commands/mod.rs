//! The set commands (S*), on the `goblin-zset` set engine.
//!
//! - [`write`]: SADD, SREM, SMOVE, SPOP.
//! - [`read`]: SCARD, SISMEMBER, SMISMEMBER, SRANDMEMBER, SSCAN.
//! - [`algebra`]: SINTER (and SMEMBERS), SINTERCARD, SUNION, SDIFF and the STORE forms,
//!   SDIFFCARD and SUNIONCARD (Redis 8.10).
//!
//! Every result set is built the way Redis 7.2 builds it (a fresh intset or listpack that
//! members are added to under the `set-max-*` rules), so replies come in the order of the
//! encoding Redis would have: ascending for an intset, insertion order for a listpack.

mod algebra;
mod read;
mod write;

use crate::commands::{Command, Ctx, Flags};
use crate::keyspace::{Member, Set, Value, WrongType};
use crate::resp::reply::ReplyWriter;

const WD: Flags = Flags::WRITE.with(Flags::DENYOOM);
const WF: Flags = Flags::WRITE.with(Flags::FAST);
const R: Flags = Flags::READONLY;
const RF: Flags = Flags::READONLY.with(Flags::FAST);

/// Every set command.
pub static COMMANDS: [Command; 19] = [
    Command::simple("sadd", -3, WD.with(Flags::FAST), write::sadd),
    Command::simple("srem", -3, WF, write::srem),
    Command::simple("smove", 4, WF, write::smove),
    Command::simple("spop", -2, WF, write::spop),
    Command::simple("scard", 2, RF, read::scard),
    Command::simple("sismember", 3, RF, read::sismember),
    Command::simple("smismember", -3, RF, read::smismember),
    Command::simple("srandmember", -2, R, read::srandmember),
    Command::simple("sscan", -3, R, read::sscan),
    Command::simple("smembers", 2, R, algebra::smembers),
    Command::simple("sinter", -2, R, algebra::sinter),
    Command::simple("sintercard", -3, R, algebra::sintercard),
    Command::simple("sdiffcard", -3, R, algebra::sdiffcard),
    Command::simple("sunioncard", -3, R, algebra::sunioncard),
    Command::simple("sinterstore", -3, WD, algebra::sinterstore),
    Command::simple("sunion", -2, R, algebra::sunion),
    Command::simple("sunionstore", -3, WD, algebra::sunionstore),
    Command::simple("sdiff", -2, R, algebra::sdiff),
    Command::simple("sdiffstore", -3, WD, algebra::sdiffstore),
];

/// The set at `key` for reading: None when absent, `Err` after the WRONGTYPE reply.
fn read_set<'c>(ctx: &'c mut Ctx, key: &[u8]) -> Result<Option<&'c Set>, WrongType> {
    ctx.read_typed(key, Value::as_set)
}

/// [`read_set`] beside the reply writer, so a reply is written from the set's own bytes.
fn read_set_and_out<'c, 'a>(
    ctx: &'c mut Ctx<'a>,
    key: &[u8],
) -> (Result<Option<&'c Set>, WrongType>, &'c mut ReplyWriter<'a>) {
    ctx.read_typed_and_out(key, Value::as_set)
}

/// The set at `key` for writing: None when absent, `Err` after the WRONGTYPE reply.
fn write_set<'c>(ctx: &'c mut Ctx, key: &[u8]) -> Result<Option<&'c mut Set>, WrongType> {
    ctx.write_typed(key, Value::as_set_mut)
}

/// Writes one member as a bulk string.
fn bulk(out: &mut ReplyWriter, m: Member) {
    m.with_bytes(|b| out.bulk(b));
}

/// Writes every member of `set`, in its order, as a RESP3 set (an array in RESP2).
fn write_set_reply(out: &mut ReplyWriter, set: &Set) {
    out.set(set.len());
    for m in set.iter() {
        bulk(out, m);
    }
}
