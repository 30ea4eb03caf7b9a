//! DEBUG OBJECT key: Redis's one-line description of a value.

use super::Ctx;
use crate::errors;
use crate::rdb::write::value_len;

/// DEBUG OBJECT key: "Value at:<address> refcount:1 encoding:<name> serializedlength:<n>
/// lru:<clock> lru_seconds_idle:<n>", where serializedlength is what the RDB writer writes
/// for the value and lru the key's last access on the keyspace's access clock.
pub fn debug_object(ctx: &mut Ctx, key: &[u8]) {
    let compress = ctx.server.config.rdbcompression;
    let clock = ctx.server.keyspace.clock_secs();
    let (db, now) = (ctx.client.db, ctx.now_ms);
    let Some(entry) = ctx.server.keyspace.peek(db, key, now) else {
        return ctx.error(errors::NO_SUCH_KEY);
    };
    let line = format!(
        "Value at:{:p} refcount:1 encoding:{} serializedlength:{} lru:{} lru_seconds_idle:{}",
        entry.value,
        entry.value.encoding_name(),
        value_len(entry.value, compress),
        entry.accessed(),
        crate::keyspace::lfu::idle_secs(clock, entry.accessed()),
    );
    ctx.out.simple(&line);
}
