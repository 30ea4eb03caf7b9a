//! GOBLIN.MEMORY and GOBLIN.OPTIMIZE: the engine's tracked memory, and repacking a set.

use super::{read_zset, write_zset};
use crate::commands::Ctx;
use crate::errors;

/// Target load factor of GOBLIN.OPTIMIZE when none is given.
const DEFAULT_DENSITY: f64 = 0.97;

/// GOBLIN.MEMORY [key]: the bytes the engine holds for one set (null when missing), or a
/// summary of the keyspace: sets, members, bytes and bytes per member.
pub fn memory(ctx: &mut Ctx, args: &[&[u8]]) {
    match args {
        [_, key] => match read_zset(ctx, key) {
            Ok(Some(set)) => {
                let bytes = set.memory_bytes();
                ctx.out.int(bytes as i64)
            }
            Ok(None) => ctx.out.null(),
            Err(_) => {}
        },
        [_] => {
            let (mut sets, mut members, mut bytes) = (0usize, 0usize, 0usize);
            let zsets = ctx.server.keyspace.entries();
            for e in zsets {
                let Ok(z) = e.value.as_zset() else {
                    continue;
                };
                sets += 1;
                members += z.len();
                bytes += z.memory_bytes();
            }
            ctx.out.map(4);
            ctx.out.bulk(b"sets");
            ctx.out.int(sets as i64);
            ctx.out.bulk(b"members");
            ctx.out.int(members as i64);
            ctx.out.bulk(b"bytes");
            ctx.out.int(bytes as i64);
            ctx.out.bulk(b"bytes_per_member");
            ctx.out.double(if members > 0 {
                bytes as f64 / members as f64
            } else {
                0.0
            });
        }
        _ => ctx.error(&errors::wrong_arity("goblin.memory")),
    }
}

/// GOBLIN.OPTIMIZE key [density]: repacks the member index and the score index of the set to
/// the target load factor (default 0.97; 1.0 packs fully, at the cost that a lookup of a
/// missing member scans the whole table). Replies with the set's bytes afterwards.
pub fn optimize(ctx: &mut Ctx, args: &[&[u8]]) {
    if args.len() > 3 {
        return ctx.error(&errors::wrong_arity("goblin.optimize"));
    }
    let density = match args.get(2) {
        None => DEFAULT_DENSITY,
        Some(arg) => match crate::numbers::parse_f64(arg) {
            Some(d) if d > 0.0 && d <= 1.0 => d,
            _ => return ctx.error("ERR density must be a number greater than 0 and at most 1"),
        },
    };
    let set = match write_zset(ctx, args[1]) {
        Ok(Some(set)) => set,
        Ok(None) => return ctx.error(errors::NO_SUCH_KEY),
        Err(_) => return,
    };
    set.optimize(density);
    let bytes = set.memory_bytes();
    // Hand the memory freed by the repack back, so RSS shows the saving.
    crate::memory::allocator::purge();
    ctx.out.int(bytes as i64);
}
