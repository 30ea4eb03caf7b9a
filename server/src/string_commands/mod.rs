//! The string commands, on the keyspace's [`StringValue`].
//!
//! - [`set`]: SET (NX XX GET EX PX EXAT PXAT KEEPTTL), SETNX, SETEX, PSETEX, GETSET, MSET,
//!   MSETNX, and the expiry options they share with GETEX.
//! - [`get`]: GET, GETDEL, GETEX, MGET.
//! - [`edit`]: APPEND, SETRANGE, GETRANGE, SUBSTR, STRLEN.
//! - [`counter`]: INCR, DECR, INCRBY, DECRBY, INCRBYFLOAT.
//! - [`long_double`]: the x87 80-bit arithmetic INCRBYFLOAT needs to answer as Redis does.

mod counter;
mod edit;
mod get;
mod long_double;
mod set;

use crate::commands::{Command, Ctx, Flags, StatSlot};
use crate::keyspace::{StringValue, Value, WrongType};

const WD: Flags = Flags::WRITE.with(Flags::DENYOOM);
const WDF: Flags = Flags::WRITE.with(Flags::DENYOOM).with(Flags::FAST);
const WF: Flags = Flags::WRITE.with(Flags::FAST);
const R: Flags = Flags::READONLY;
const RF: Flags = Flags::READONLY.with(Flags::FAST);

macro_rules! scmd {
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

/// Every string command.
pub static COMMANDS: [Command; 21] = [
    scmd!("set", -3, WD, set::set),
    scmd!("setnx", 3, WDF, set::setnx),
    scmd!("setex", 4, WD, set::setex),
    scmd!("psetex", 4, WD, set::psetex),
    scmd!("getset", 3, WDF, set::getset),
    scmd!("mset", -3, WD, set::mset),
    scmd!("msetnx", -3, WD, set::msetnx),
    scmd!("get", 2, RF, get::get),
    scmd!("getdel", 2, WF, get::getdel),
    scmd!("getex", -2, WF, get::getex),
    scmd!("mget", -2, RF, get::mget),
    scmd!("append", 3, WDF, edit::append),
    scmd!("setrange", 4, WD, edit::setrange),
    scmd!("getrange", 4, R, edit::getrange),
    scmd!("substr", 4, R, edit::getrange),
    scmd!("strlen", 2, RF, edit::strlen),
    scmd!("incr", 2, WDF, counter::incr),
    scmd!("decr", 2, WDF, counter::decr),
    scmd!("incrby", 3, WDF, counter::incrby),
    scmd!("decrby", 3, WDF, counter::decrby),
    scmd!("incrbyfloat", 3, WDF, counter::incrbyfloat),
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
