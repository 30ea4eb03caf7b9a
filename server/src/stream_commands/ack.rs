//! XACK.

use super::id::{self, IdRules};
use crate::commands::Ctx;
use crate::keyspace::Value;

/// XACK key group id [id ...]: removes the ids from the group's PEL (and their consumers');
/// replies how many were pending. A missing key or group replies 0 before the ids are
/// looked at; then every id is checked before any is acknowledged. As in Redis, the key is
/// looked up for reading (hits and misses count) and no keyspace event fires.
pub fn xack(ctx: &mut Ctx, args: &[&[u8]]) {
    let (key, group) = (args[1], args[2]);
    let Ok(found) = ctx.read_typed(key, Value::as_stream) else {
        return;
    };
    if found.is_none_or(|s| s.group(group).is_none()) {
        return ctx.out.int(0);
    }
    let mut ids = Vec::with_capacity(args.len() - 3);
    for arg in &args[3..] {
        match id::parse(arg, IdRules::STRICT) {
            Some(p) => ids.push(p.id),
            None => return ctx.error(id::INVALID_ID),
        }
    }
    let acked = match ctx.write_typed(key, Value::as_stream_mut) {
        Ok(Some(s)) => s
            .group_mut(group)
            .map_or(0, |g| ids.iter().filter(|&&id| g.ack(id)).count()),
        _ => 0,
    };
    ctx.server.keyspace.add_dirty(acked as u64);
    ctx.out.int(acked as i64);
}
