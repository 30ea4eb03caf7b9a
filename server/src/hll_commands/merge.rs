//! PFMERGE destkey [sourcekey ...]

use super::count::merge_sources;
use super::{create_hll, edit_hll, Found, CORRUPT};
use crate::commands::Ctx;
use crate::pubsub::notify;
use goblin_zset::hll::{self, Registers, REGISTERS};

/// PFMERGE destkey [sourcekey ...]: the destination (a source too) gets the highest of each
/// register; dense when any source is. Fires "pfadd", as Redis.
pub fn pfmerge(ctx: &mut Ctx, args: &[&[u8]]) {
    let mut max: Box<Registers> = Box::new([0; REGISTERS]);
    let Some(dense) = merge_sources(ctx, &args[1..], &mut max) else {
        return;
    };
    let key = args[1];
    let sparse_max = ctx.server.config.hll_sparse_max_bytes;
    let write = |bytes: &mut Vec<u8>| hll::raise_to(bytes, &max, dense, sparse_max);
    let written = match edit_hll(ctx, key, write) {
        None => return,
        Some(Found::Edited(r)) => r,
        Some(Found::Missing) => create_hll(ctx, key, write),
    };
    if written.is_err() {
        return ctx.error(CORRUPT);
    }
    let db = ctx.db();
    ctx.server.keyspace.signal_modified(db, key);
    ctx.notify(notify::STRING, "pfadd", key);
    ctx.server.keyspace.add_dirty(1);
    ctx.out.ok();
}
