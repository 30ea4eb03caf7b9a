//! PFADD key [element ...]

use super::{create_hll, edit_hll, Found, CORRUPT};
use crate::commands::Ctx;
use crate::pubsub::notify;
use goblin_zset::hll::{self, Corrupt};

/// PFADD key [element ...]: 1 when the key was created or a register grew, else 0. A
/// corrupt sparse HLL stops it with INVALIDOBJ (the registers raised before stay, as in
/// Redis, but nothing is signalled or propagated).
pub fn pfadd(ctx: &mut Ctx, args: &[&[u8]]) {
    let key = args[1];
    let elements = &args[2..];
    let sparse_max = ctx.server.config.hll_sparse_max_bytes;
    let add_all = |bytes: &mut Vec<u8>| add_elements(bytes, elements, sparse_max);
    let updated = match edit_hll(ctx, key, add_all) {
        None => return,
        Some(Found::Edited(Err(Corrupt))) => return ctx.error(CORRUPT),
        Some(Found::Edited(Ok(n))) => n,
        Some(Found::Missing) => {
            let created = |bytes: &mut Vec<u8>| {
                // Created counts as a change, so even an empty new HLL has a stale cache.
                hll::invalidate(bytes);
                add_all(bytes)
            };
            1 + create_hll(ctx, key, created).expect("a new HLL is valid")
        }
    };
    if updated > 0 {
        let db = ctx.db();
        ctx.server.keyspace.signal_modified(db, key);
        ctx.notify(notify::STRING, "pfadd", key);
        ctx.server.keyspace.add_dirty(updated as u64);
    }
    ctx.out.int((updated > 0) as i64);
}

/// Adds each element; how many raised a register (the cached count then marked stale).
fn add_elements(
    bytes: &mut Vec<u8>,
    elements: &[&[u8]],
    sparse_max: usize,
) -> Result<usize, Corrupt> {
    let mut updated = 0;
    for e in elements {
        updated += hll::add(bytes, e, sparse_max)? as usize;
    }
    if updated > 0 {
        hll::invalidate(bytes);
    }
    Ok(updated)
}
