//! The hash commands (H*), on the `goblin-zset` hash engine.
//!
//! - [`write`]: HSET, HMSET, HSETNX, HDEL, HINCRBY, HINCRBYFLOAT.
//! - [`read`]: HGET, HMGET, HGETALL, HKEYS, HVALS, HEXISTS, HLEN, HSTRLEN, HSCAN.
//! - [`random`]: HRANDFIELD, with Redis's cases for its count.
//! - [`field_ttl`]: hash-field expiry (Redis 7.4): HEXPIRE and its forms, HTTL and its
//!   forms, HPERSIST.
//! - [`getex`]: HGETEX and HGETDEL (Redis 8.0).
//! - [`setex`]: HSETEX (Redis 8.0).
//! - `lazy`: fields whose time has passed, seen missing and removed when touched.
//!
//! Every write goes through the engine's `set`, which converts a listpack to a hashtable
//! exactly when Redis 7.2's hashTypeSet does; HSET and HMSET first apply the count test of
//! hashTypeTryConversion, so replies come in the order of the encoding Redis would have
//! (insertion order for a listpack).

mod field_ttl;
mod getex;
mod lazy;
mod random;
mod read;
mod setex;
mod write;

use crate::commands::{Command, Ctx, Flags};
use crate::errors;
use crate::keyspace::{Hash, HashConfig, Value, WrongType};
use crate::resp::reply::ReplyWriter;

const WDF: Flags = Flags::WRITE.with(Flags::DENYOOM).with(Flags::FAST);
const WF: Flags = Flags::WRITE.with(Flags::FAST);
const R: Flags = Flags::READONLY;
const RF: Flags = Flags::READONLY.with(Flags::FAST);

/// Every hash command.
pub static COMMANDS: [Command; 28] = [
    Command::simple("hset", -4, WDF, write::hset),
    Command::simple("hmset", -4, WDF, write::hset),
    Command::simple("hsetnx", 4, WDF, write::hsetnx),
    Command::simple("hdel", -3, WF, write::hdel),
    Command::simple("hincrby", 4, WDF, write::hincrby),
    Command::simple("hincrbyfloat", 4, WDF, write::hincrbyfloat),
    Command::simple("hget", 3, RF, read::hget),
    Command::simple("hmget", -3, RF, read::hmget),
    Command::simple("hgetall", 2, R, read::hgetall),
    Command::simple("hkeys", 2, R, read::hkeys),
    Command::simple("hvals", 2, R, read::hvals),
    Command::simple("hexists", 3, RF, read::hexists),
    Command::simple("hlen", 2, RF, read::hlen),
    Command::simple("hstrlen", 3, RF, read::hstrlen),
    Command::simple("hrandfield", -2, R, random::hrandfield),
    Command::simple("hscan", -3, R, read::hscan),
    Command::simple("hexpire", -6, WDF, field_ttl::hexpire),
    Command::simple("hpexpire", -6, WDF, field_ttl::hpexpire),
    Command::simple("hexpireat", -6, WDF, field_ttl::hexpireat),
    Command::simple("hpexpireat", -6, WDF, field_ttl::hpexpireat),
    Command::simple("httl", -5, RF, field_ttl::httl),
    Command::simple("hpttl", -5, RF, field_ttl::hpttl),
    Command::simple("hexpiretime", -5, RF, field_ttl::hexpiretime),
    Command::simple("hpexpiretime", -5, RF, field_ttl::hpexpiretime),
    Command::simple("hpersist", -5, WF, field_ttl::hpersist),
    Command::simple("hgetex", -5, WF, getex::hgetex),
    Command::simple("hsetex", -6, WDF, setex::hsetex),
    Command::simple("hgetdel", -5, WF, getex::hgetdel),
];

/// The hash at `key` for reading: None when absent, `Err` after the WRONGTYPE reply.
fn read_hash<'c>(ctx: &'c mut Ctx, key: &[u8]) -> Result<Option<&'c Hash>, WrongType> {
    ctx.read_typed(key, Value::as_hash)
}

/// The hash at `key` for writing: None when absent, `Err` after the WRONGTYPE reply.
fn write_hash<'c>(ctx: &'c mut Ctx, key: &[u8]) -> Result<Option<&'c mut Hash>, WrongType> {
    ctx.write_typed(key, Value::as_hash_mut)
}

/// [`read_hash`] beside the reply writer, so a reply is written from the hash's own bytes.
fn read_hash_and_out<'c, 'a>(
    ctx: &'c mut Ctx<'a>,
    key: &[u8],
) -> (Result<Option<&'c Hash>, WrongType>, &'c mut ReplyWriter<'a>) {
    ctx.read_typed_and_out(key, Value::as_hash)
}

/// Runs `f` on the hash at `key`, created empty when absent (Redis's
/// hashTypeLookupWriteOrCreate, which signals a created key); returns its result and
/// whether the key was created, or None after the WRONGTYPE reply.
fn with_hash_or_create<R>(
    ctx: &mut Ctx,
    key: &[u8],
    f: impl FnOnce(&mut Hash, &HashConfig) -> R,
) -> Option<(R, bool)> {
    let db = ctx.client.db;
    let cfg = ctx.server.config.hash;
    let (entry, created) = ctx
        .server
        .keyspace
        .lookup_write_or_create(db, key, ctx.now_ms, || Value::Hash(Hash::new()));
    let Ok(hash) = entry.value.as_hash_mut() else {
        ctx.error(errors::WRONGTYPE);
        return None;
    };
    Some((f(hash, &cfg), created))
}

/// Writes a field and, when asked, its value: flat in RESP2, a [field, value] pair in
/// RESP3 (HRANDFIELD's shape).
fn write_pair(out: &mut ReplyWriter, field: &[u8], value: &[u8], with_values: bool) {
    if with_values && out.is_resp3() {
        out.array(2);
    }
    out.bulk(field);
    if with_values {
        out.bulk(value);
    }
}
