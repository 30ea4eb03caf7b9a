//! PFCOUNT key [key ...]

use super::{edit_hll, hll_encoding, Found, CORRUPT, NOT_HLL};
use crate::commands::Ctx;
use crate::keyspace::string::Encoding as StrEncoding;
use crate::keyspace::Value;
use goblin_zset::hll::{self, Corrupt, Registers, REGISTERS};

/// PFCOUNT key [key ...]: one key's estimate (its cached cardinality, computed and cached
/// when stale: a change of the value, signalled and propagated as Redis does), or the
/// estimate of several keys' union. Missing keys count as empty HLLs.
pub fn pfcount(ctx: &mut Ctx, args: &[&[u8]]) {
    if args.len() > 2 {
        let mut max: Box<Registers> = Box::new([0; REGISTERS]);
        if merge_sources(ctx, &args[1..], &mut max).is_some() {
            ctx.out.int(hll::count_registers(&max) as i64);
        }
        return;
    }
    let key = args[1];
    let (found, out) = ctx.read_typed_and_out(key, Value::as_string);
    let cached = match found {
        Err(_) => return,
        Ok(None) => return out.int(0),
        Ok(Some(s)) => match hll_encoding(s) {
            None => None,
            // Served from the cache without an edit only when the value is already `raw`
            // (Redis unshares the value on every PFCOUNT).
            Some(_) if s.encoding() == StrEncoding::Raw => Some(hll::cached_count(&s.bytes())),
            Some(_) => Some(None),
        },
    };
    match cached {
        None => ctx.error(NOT_HLL),
        Some(Some(count)) => ctx.out.int(count as i64),
        Some(None) => count_and_cache(ctx, key),
    }
}

/// Counts the HLL at `key` from its cache, or its registers then caching the count.
fn count_and_cache(ctx: &mut Ctx, key: &[u8]) {
    let counted = edit_hll(ctx, key, |bytes| match hll::cached_count(bytes) {
        Some(count) => Ok((count, false)),
        None => hll::count(bytes).map(|count| {
            hll::store_count(bytes, count);
            (count, true)
        }),
    });
    match counted {
        Some(Found::Edited(Ok((count, stored)))) => {
            if stored {
                let db = ctx.db();
                ctx.server.keyspace.signal_modified(db, key);
                ctx.server.keyspace.add_dirty(1);
            }
            ctx.out.int(count as i64);
        }
        Some(Found::Edited(Err(Corrupt))) => ctx.error(CORRUPT),
        Some(Found::Missing) => unreachable!("read just before"),
        None => {}
    }
}

/// Raises `max` to the registers of each HLL of `keys` (looked up for reading; missing
/// keys skipped); whether one is dense. None after replying an error.
pub(super) fn merge_sources(ctx: &mut Ctx, keys: &[&[u8]], max: &mut Registers) -> Option<bool> {
    let mut dense = false;
    for key in keys {
        let merged = match ctx.read_typed(key, Value::as_string) {
            Err(_) => return None,
            Ok(None) => continue,
            Ok(Some(s)) => hll_encoding(s).map(|encoding| {
                dense |= encoding == hll::Encoding::Dense;
                hll::merge_into(max, &s.bytes())
            }),
        };
        match merged {
            None => {
                ctx.error(NOT_HLL);
                return None;
            }
            Some(Err(Corrupt)) => {
                ctx.error(CORRUPT);
                return None;
            }
            Some(Ok(())) => {}
        }
    }
    Some(dense)
}
