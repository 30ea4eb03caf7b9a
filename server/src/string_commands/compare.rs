//! Compare-and-set / compare-and-delete (Redis 8.4): the IFEQ / IFNE / IFDEQ / IFDNE
//! conditions SET and DELEX take, the XXH3 digest they compare with, DIGEST and DELEX.
//!
//! A digest is the XXH3 64-bit hash (seed 0) of the string's bytes as 16 lowercase hex
//! digits, leading zeros kept; IFDEQ / IFDNE take exactly 16 hex digits in either case
//! (Redis 8.4 after redis/redis#14502).

use super::write_string;
use crate::commands::Ctx;
use crate::pubsub::notify;
use crate::resp::reply::ReplyWriter;

/// The error for a digest argument that is not 16 hex digits.
const BAD_DIGEST: &str = "ERR must be exactly 16 hexadecimal characters";

/// DELEX's error for a word that names no condition.
const BAD_CONDITION: &str = "ERR Invalid condition. Use IFEQ, IFNE, IFDEQ, or IFDNE";

/// An IFEQ / IFNE / IFDEQ / IFDNE condition on a string's current value. A digest
/// argument is checked only when there is a string to compare it with (Redis's tests: an
/// absent key meets IFDNE 1234567890, a list fails IFDEQ with WRONGTYPE).
#[derive(Clone, Copy)]
pub(super) struct Compare<'a> {
    /// IFDEQ / IFDNE rather than IFEQ / IFNE.
    digest: bool,
    /// IFNE / IFDNE: met when they differ (or when there is no value).
    negated: bool,
    arg: &'a [u8],
}

impl<'a> Compare<'a> {
    /// The condition `word` names with its argument; None when `word` is none of the four.
    pub(super) fn parse(word: &[u8], arg: &'a [u8]) -> Option<Self> {
        let (digest, negated) = match word.to_ascii_uppercase().as_slice() {
            b"IFEQ" => (false, false),
            b"IFNE" => (false, true),
            b"IFDEQ" => (true, false),
            b"IFDNE" => (true, true),
            _ => return None,
        };
        Some(Compare {
            digest,
            negated,
            arg,
        })
    }

    /// Whether the string at `key` (looked up for writing) meets the condition, and
    /// whether the key exists; None after the WRONGTYPE or malformed-digest reply.
    pub(super) fn evaluate(self, ctx: &mut Ctx, key: &[u8]) -> Option<(bool, bool)> {
        let value = write_string(ctx, key).ok()?.map(|s| s.bytes().to_vec());
        let met = self.holds(ctx, value.as_deref())?;
        Some((met, value.is_some()))
    }

    /// Whether a key holding `value` (None: absent) meets the condition: an absent key
    /// meets IFNE and IFDNE and fails IFEQ and IFDEQ. None after the error reply for a
    /// malformed digest.
    fn holds(self, ctx: &mut Ctx, value: Option<&[u8]>) -> Option<bool> {
        let Some(value) = value else {
            return Some(self.negated);
        };
        let equal = if self.digest {
            let Some(want) = parse_digest(self.arg) else {
                ctx.error(BAD_DIGEST);
                return None;
            };
            digest(value) == want
        } else {
            value == self.arg
        };
        Some(equal != self.negated)
    }
}

/// The XXH3 64-bit digest of `bytes`.
fn digest(bytes: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(bytes)
}

/// A digest argument: exactly 16 hex digits, either case.
fn parse_digest(arg: &[u8]) -> Option<u64> {
    if arg.len() != 16 || !arg.iter().all(u8::is_ascii_hexdigit) {
        return None;
    }
    u64::from_str_radix(std::str::from_utf8(arg).ok()?, 16).ok()
}

/// Writes `bytes`' digest as DIGEST replies it: 16 lowercase hex digits.
fn reply_digest(out: &mut ReplyWriter, bytes: &[u8]) {
    out.bulk(format!("{:016x}", digest(bytes)).as_bytes());
}

/// DIGEST key: the digest of the string at `key`, null when absent.
pub fn digest_command(ctx: &mut Ctx, args: &[&[u8]]) {
    let (found, out) = ctx.read_typed_and_out(args[1], crate::keyspace::Value::as_string);
    match found {
        Ok(Some(s)) => reply_digest(out, &s.bytes()),
        Ok(None) => out.null(),
        Err(_) => {}
    }
}

/// DELEX key [IFEQ value | IFNE value | IFDEQ digest | IFDNE digest]: 1 when the key was
/// removed. Without a condition it removes a key of any type (as DEL); with one the key
/// must hold a string. Replayed as DEL.
pub fn delex(ctx: &mut Ctx, args: &[&[u8]]) {
    let key = args[1];
    let cond = match args {
        [_, _] => None,
        [_, _, word, arg] => match Compare::parse(word, arg) {
            Some(c) => Some(c),
            None => return ctx.error(BAD_CONDITION),
        },
        _ => return ctx.error(&crate::errors::wrong_arity("delex")),
    };
    let db = ctx.db();
    let remove = match cond {
        None => ctx.server.keyspace.exists_for_write(db, key, ctx.now_ms),
        Some(c) => match c.evaluate(ctx, key) {
            None => return,
            Some((met, exists)) => met && exists,
        },
    };
    if !remove {
        return ctx.out.int(0);
    }
    ctx.server.keyspace.delete(db, key);
    ctx.notify(notify::GENERIC, "del", key);
    ctx.server.keyspace.add_dirty(1);
    ctx.propagate_instead(&[b"DEL", key]);
    ctx.out.int(1);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_are_xxh3_as_redis_documents_them() {
        // redis.io's DIGEST page: SET key1 "Hello world"; DIGEST key1 -> "b6acb9d84a38ff74".
        assert_eq!(
            format!("{:016x}", digest(b"Hello world")),
            "b6acb9d84a38ff74"
        );
        assert_eq!(
            parse_digest(b"B6ACB9D84A38FF74"),
            Some(digest(b"Hello world"))
        );
        assert_eq!(parse_digest(b"b6acb9d84a38ff7"), None);
        assert_eq!(parse_digest(b"b6acb9d84a38ff7g"), None);
        assert_eq!(parse_digest(b"+6acb9d84a38ff74"), None);
        // Redis's string.tcl: a digest with leading zeros keeps them.
        let v = b"v8lf0c11xh8ymlqztfd3eeq16kfn4sspw7fqmnuuq3k3t75em5wdizgcdw7uc26nnf961u2jkfzkjytls2kwlj7626sd";
        assert_eq!(format!("{:016x}", digest(v)), "00006c38adf31777");
    }

    #[test]
    fn conditions_name_their_kind_and_sense() {
        let c = Compare::parse(b"ifdne", b"x").expect("a condition");
        assert!(c.digest && c.negated);
        assert!(Compare::parse(b"IFEQ", b"x").is_some_and(|c| !c.digest && !c.negated));
        assert!(Compare::parse(b"IF", b"x").is_none());
    }
}
