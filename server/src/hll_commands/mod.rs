//! The HyperLogLog commands, on string values holding Redis's HLL bytes
//! (goblin_zset::hll), so an HLL is a string to every other command, as in Redis.
//!
//! - [`add`]: PFADD [element ...].
//! - [`count`]: PFCOUNT (one key, with the cached cardinality; several keys, their union).
//! - [`merge`]: PFMERGE into a destination that may be a source.
//! - [`debug`]: PFDEBUG (GETREG DECODE ENCODING TODENSE) and PFSELFTEST.

mod add;
mod count;
mod debug;
mod merge;

use crate::commands::{Command, Ctx, Flags};
use crate::keyspace::{StringValue, Value};
use goblin_zset::hll::{self, Encoding};

const WD: Flags = Flags::WRITE.with(Flags::DENYOOM);
const WDF: Flags = WD.with(Flags::FAST);

/// Every HyperLogLog command.
pub static COMMANDS: [Command; 5] = [
    Command::simple("pfadd", -2, WDF, add::pfadd),
    Command::simple("pfcount", -2, Flags::READONLY, count::pfcount),
    Command::simple("pfmerge", -2, WD, merge::pfmerge),
    Command::simple("pfdebug", 3, WD.with(Flags::ADMIN), debug::pfdebug),
    Command::simple("pfselftest", 1, Flags::ADMIN, debug::pfselftest),
];

/// The reply to a string that is not an HLL.
const NOT_HLL: &str = "WRONGTYPE Key is not a valid HyperLogLog string value.";
/// The reply to an HLL whose registers cannot be read.
const CORRUPT: &str = "INVALIDOBJ Corrupted HLL object detected";

/// The HLL encoding of a string value; None when it is not an HLL (Redis's
/// isHLLObjectOrReply: an `int` value's digits never start with the magic).
fn hll_encoding(s: &StringValue) -> Option<Encoding> {
    hll::encoding_of(&s.bytes())
}

/// What a lookup of an HLL for writing found.
enum Found<T> {
    /// No key.
    Missing,
    /// An HLL, edited: what the edit returned.
    Edited(T),
}

/// Runs `edit` on the bytes of the HLL at `key`, looked up for writing; the value becomes
/// `raw`, as Redis unshares it. None after replying WRONGTYPE (another type, or a string
/// that is not an HLL).
fn edit_hll<T>(
    ctx: &mut Ctx,
    key: &[u8],
    edit: impl FnOnce(&mut Vec<u8>) -> T,
) -> Option<Found<T>> {
    let edited = match ctx.write_typed(key, Value::as_string_mut) {
        Err(_) => return None,
        Ok(None) => return Some(Found::Missing),
        Ok(Some(s)) => hll_encoding(s).is_some().then(|| s.edit(edit)),
    };
    match edited {
        Some(t) => Some(Found::Edited(t)),
        None => {
            ctx.error(NOT_HLL);
            None
        }
    }
}

/// Stores a new HLL built by `fill` from an empty one at `key` (which is absent).
fn create_hll<T>(ctx: &mut Ctx, key: &[u8], fill: impl FnOnce(&mut Vec<u8>) -> T) -> T {
    let mut bytes = hll::new_sparse();
    let t = fill(&mut bytes);
    let db = ctx.db();
    let value = StringValue::raw(&bytes);
    ctx.server.keyspace.store(db, key, Value::Str(value));
    t
}
