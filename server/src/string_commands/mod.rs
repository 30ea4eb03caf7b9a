//! The string commands, on the keyspace's [`StringValue`].
//!
//! - [`set`]: SET (NX XX GET EX PX EXAT PXAT KEEPTTL), SETNX, SETEX, PSETEX, GETSET, MSET,
//!   MSETNX, MSETEX (Redis 8.4), and the expiry options they share with GETEX.
//! - [`compare`]: SET's IFEQ IFNE IFDEQ IFDNE, DIGEST and DELEX (Redis 8.4).
//! - [`get`]: GET, GETDEL, GETEX, MGET.
//! - [`edit`]: APPEND, SETRANGE, GETRANGE, SUBSTR, STRLEN.
//! - [`counter`]: INCR, DECR, INCRBY, DECRBY, INCRBYFLOAT.
//! - [`increx`]: INCREX (Redis 8.8), INCRBY / INCRBYFLOAT with bounds and an expiry.
//! - [`lcs`]: LCS (LEN IDX MINMATCHLEN WITHMATCHLEN).
//! - [`bits`]: SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP.
//! - [`bitfield`]: BITFIELD, BITFIELD_RO.
//! - [`long_double`]: the x87 80-bit arithmetic INCRBYFLOAT needs to answer as Redis does.

mod bitfield;
mod bits;
mod compare;
mod counter;
mod edit;
mod get;
mod increx;
mod lcs;
pub(crate) mod long_double;
mod set;

use crate::commands::{Command, Ctx, Flags};
use crate::keyspace::{StringValue, Value, WrongType};

const WD: Flags = Flags::WRITE.with(Flags::DENYOOM);
const WDF: Flags = Flags::WRITE.with(Flags::DENYOOM).with(Flags::FAST);
const WF: Flags = Flags::WRITE.with(Flags::FAST);
const R: Flags = Flags::READONLY;
const RF: Flags = Flags::READONLY.with(Flags::FAST);

/// Every string command.
pub static COMMANDS: [Command; 33] = [
    Command::simple("set", -3, WD, set::set),
    Command::simple("setnx", 3, WDF, set::setnx),
    Command::simple("setex", 4, WD, set::setex),
    Command::simple("psetex", 4, WD, set::psetex),
    Command::simple("getset", 3, WDF, set::getset),
    Command::simple("mset", -3, WD, set::mset),
    Command::simple("msetnx", -3, WD, set::msetnx),
    Command::simple("msetex", -4, WD, set::msetex),
    Command::simple("get", 2, RF, get::get),
    Command::simple("getdel", 2, WF, get::getdel),
    Command::simple("getex", -2, WF, get::getex),
    Command::simple("mget", -2, RF, get::mget),
    Command::simple("append", 3, WDF, edit::append),
    Command::simple("setrange", 4, WD, edit::setrange),
    Command::simple("getrange", 4, R, edit::getrange),
    Command::simple("substr", 4, R, edit::getrange),
    Command::simple("strlen", 2, RF, edit::strlen),
    Command::simple("incr", 2, WDF, counter::incr),
    Command::simple("decr", 2, WDF, counter::decr),
    Command::simple("incrby", 3, WDF, counter::incrby),
    Command::simple("decrby", 3, WDF, counter::decrby),
    Command::simple("incrbyfloat", 3, WDF, counter::incrbyfloat),
    Command::simple("increx", -2, WDF, increx::increx),
    Command::simple("lcs", -3, R, lcs::lcs),
    Command::simple("setbit", 4, WD, bits::setbit),
    Command::simple("getbit", 3, RF, bits::getbit),
    Command::simple("bitcount", -2, R, bits::bitcount),
    Command::simple("bitpos", -3, R, bits::bitpos),
    Command::simple("bitop", -4, WD, bits::bitop),
    Command::simple("bitfield", -2, WD, bitfield::bitfield),
    Command::simple("bitfield_ro", -2, RF, bitfield::bitfield_ro),
    Command::simple("digest", 2, RF, compare::digest_command),
    Command::simple("delex", -2, WF, compare::delex),
];

/// The string at `key` for reading: None when absent, `Err` after the WRONGTYPE reply.
fn read_string<'c>(ctx: &'c mut Ctx, key: &[u8]) -> Result<Option<&'c StringValue>, WrongType> {
    ctx.read_typed(key, Value::as_string)
}

/// The string at `key` for writing: None when absent, `Err` after the WRONGTYPE reply.
fn write_string<'c>(
    ctx: &'c mut Ctx,
    key: &[u8],
) -> Result<Option<&'c mut StringValue>, WrongType> {
    ctx.write_typed(key, Value::as_string_mut)
}

/// Stores `value` at `key`, replacing any value; its expiry is dropped unless `keep_ttl`
/// (Redis's setKey with and without SETKEY_KEEPTTL).
fn store(ctx: &mut Ctx, key: &[u8], value: StringValue, keep_ttl: bool) {
    let db = ctx.client.db;
    let ttl = if keep_ttl {
        ctx.server
            .keyspace
            .db(db)
            .get(key)
            .and_then(|e| e.expire_at())
    } else {
        None
    };
    ctx.server.keyspace.store(db, key, Value::Str(value));
    ctx.server.keyspace.add_dirty(1);
    if let Some(at) = ttl {
        ctx.server.keyspace.set_expiry(db, key, at);
    }
}

/// The error of a string that would outgrow proto-max-bulk-len.
const TOO_LONG: &str = "ERR string exceeds maximum allowed size (proto-max-bulk-len)";

/// Whether a string of `size + append` bytes is within `max` (Redis's checkStringLength).
fn fits(max: i64, size: u64, append: u64) -> bool {
    size.checked_add(append)
        .is_some_and(|total| total <= max.max(0) as u64)
}
