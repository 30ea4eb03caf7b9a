//! DEBUG DIGEST and DEBUG DIGEST-VALUE: SHA-1 digests of the dataset and of values that
//! equal Redis 7.2's for the same data, so digests compare across the two servers.
//!
//! Two ways of folding bytes into a 20-byte digest (all SHA-1):
//! - xor(d, data):  d ^= SHA1(data) (order-free: sets, hash fields, keys of a database);
//! - mix(d, data):  d = SHA1(d ^ SHA1(data)) (ordered: list elements, a member's parts).
//!
//! A value's digest starts from its key's (or from zeros for DIGEST-VALUE): mix the type
//! number (4 bytes, big-endian: string 0, list 1, set 2, zset 3, hash 4), then
//! - string: mix the bytes (an integer as its decimal text);
//! - list: mix each element, head to tail;
//! - set: xor each member;
//! - zset: xor, per member, the digest of mix(member) then mix(score as ZSCORE prints it);
//! - hash: xor, per field, the digest of mix(field) then mix(value);
//! - stream (type 6): per entry in id order, mix "ms.seq", then each field and value;
//!
//! and a key with an expiry xors "!!expire!!". The dataset's digest mixes each non-empty
//! database's number (4 bytes, big-endian) and xors each key's digest (mix(key), then the
//! value's); an empty dataset is 40 zeros.

use super::Ctx;
use crate::keyspace::stream::item_bytes;
use crate::keyspace::{Keyspace, Member, StreamId, Value};
use crate::numbers::double_to_bytes;
use sha1::{Digest as _, Sha1};

/// A 20-byte SHA-1 digest being built.
type Digest = [u8; 20];

fn sha1(data: &[u8]) -> Digest {
    Sha1::digest(data).into()
}

/// d ^= SHA1(data).
fn xor(d: &mut Digest, data: &[u8]) {
    for (a, b) in d.iter_mut().zip(sha1(data)) {
        *a ^= b;
    }
}

/// d = SHA1(d ^ SHA1(data)).
fn mix(d: &mut Digest, data: &[u8]) {
    xor(d, data);
    *d = sha1(d);
}

/// The decimal text of an element the engines hold as an integer, or its bytes.
fn member_bytes<'a>(m: Member<'a>, buf: &'a mut itoa::Buffer) -> &'a [u8] {
    match m {
        Member::Int(v) => buf.format(v).as_bytes(),
        Member::Bytes(b) => b,
    }
}

/// Folds a value (and its expiry) into `d`, as Redis's xorObjectDigest.
fn fold_value(d: &mut Digest, value: &Value, has_expiry: bool) {
    let type_number: u32 = match value {
        Value::Str(_) => 0,
        Value::List(_) => 1,
        Value::Set(_) => 2,
        Value::ZSet(_) => 3,
        Value::Hash(_) => 4,
        Value::Stream(_) => 6,
    };
    mix(d, &type_number.to_be_bytes());
    let mut buf = itoa::Buffer::new();
    match value {
        Value::Str(s) => mix(d, &s.bytes()),
        Value::List(l) => l.each_from(0, |m| {
            mix(d, member_bytes(m, &mut buf));
            std::ops::ControlFlow::Continue(())
        }),
        Value::Set(s) => s.iter().for_each(|m| xor(d, member_bytes(m, &mut buf))),
        Value::ZSet(z) => {
            for (member, score) in z.iter() {
                xor(d, &pair_digest(member, &double_to_bytes(score)));
            }
        }
        Value::Hash(h) => {
            for (field, v) in h.iter() {
                xor(d, &pair_digest(field, v));
            }
        }
        Value::Stream(st) => {
            for e in st.range(StreamId::MIN, StreamId::MAX, false) {
                mix(d, format!("{}.{}", e.id().ms, e.id().seq).as_bytes());
                for (field, v) in e.pairs() {
                    mix(d, &item_bytes(field));
                    mix(d, &item_bytes(v));
                }
            }
        }
    }
    if has_expiry {
        xor(d, b"!!expire!!");
    }
}

/// mix(first) then mix(second), from zeros: a zset member with its score, a hash field
/// with its value.
fn pair_digest(first: &[u8], second: &[u8]) -> Digest {
    let mut e = [0u8; 20];
    mix(&mut e, first);
    mix(&mut e, second);
    e
}

fn hex(d: &Digest) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// DEBUG DIGEST: the dataset's digest.
pub fn digest(ctx: &mut Ctx) {
    let d = dataset_digest(&ctx.server.keyspace);
    ctx.out.simple(&hex(&d));
}

/// The digest of every key of every database (expired ones not yet removed too, as
/// Redis's).
fn dataset_digest(keyspace: &Keyspace) -> Digest {
    let mut total = [0u8; 20];
    for (index, db) in keyspace.databases().iter().enumerate() {
        if db.is_empty() {
            continue;
        }
        mix(&mut total, &(index as u32).to_be_bytes());
        for entry in db.iter() {
            let mut d = [0u8; 20];
            mix(&mut d, entry.key());
            fold_value(&mut d, &entry.value, entry.expire_at().is_some());
            xor(&mut total, &d);
        }
    }
    total
}

/// DEBUG DIGEST-VALUE [key ...]: each key's value digest in the client's database (40
/// zeros for a missing key), logically expired keys included.
pub fn digest_value(ctx: &mut Ctx, keys: &[&[u8]]) {
    ctx.out.array(keys.len());
    for key in keys {
        let mut d = [0u8; 20];
        if let Some(entry) = ctx.server.keyspace.db(ctx.client.db).get(key) {
            fold_value(&mut d, &entry.value, entry.expire_at().is_some());
        }
        ctx.out.simple(&hex(&d));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keyspace::StringValue;

    #[test]
    fn mix_depends_on_order_and_xor_does_not() {
        let (mut a, mut b) = ([0u8; 20], [0u8; 20]);
        mix(&mut a, b"x");
        mix(&mut a, b"y");
        mix(&mut b, b"y");
        mix(&mut b, b"x");
        assert_ne!(a, b);
        let (mut a, mut b) = ([0u8; 20], [0u8; 20]);
        xor(&mut a, b"x");
        xor(&mut a, b"y");
        xor(&mut b, b"y");
        xor(&mut b, b"x");
        assert_eq!(a, b);
    }

    #[test]
    fn digests_are_redis_7_2s() {
        // DEBUG DIGEST-VALUE k and DEBUG DIGEST after `SET k hello` on Redis 7.2.4.
        let mut ks = Keyspace::new(16);
        ks.store(0, b"k", Value::Str(StringValue::from_set(b"hello")));
        let mut d = [0u8; 20];
        fold_value(&mut d, &ks.db(0).get(b"k").unwrap().value, false);
        assert_eq!(hex(&d), "36b23a1456b2dce2c3ed252c456761301dba8060");
        assert_eq!(
            hex(&dataset_digest(&ks)),
            "d101db227d1e3b31616b18b0b8700f84c3ffa5e9"
        );
        assert_eq!(hex(&dataset_digest(&Keyspace::new(16))), "0".repeat(40));
    }
}
