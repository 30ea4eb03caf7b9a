//! DEBUG OBJECT key: Redis's one-line description of a value.

use super::Ctx;
use crate::errors;
use crate::rdb::write::value_len;

/// Redis's `FILL_MAX`: the largest fill a quicklist keeps.
const FILL_MAX: i64 = (1 << 15) - 1;

/// DEBUG OBJECT key: "Value at:<address> refcount:<n> encoding:<name> serializedlength:<n>
/// lru:<clock> lru_seconds_idle:<n>", where serializedlength is what the RDB writer writes
/// for the value and lru the key's last access on the keyspace's access clock; a quicklist
/// adds Redis's " ql_nodes:<n> ql_avg_node:<%.2f> ql_listpack_max:<fill> ql_compressed:<0|1>
/// ql_uncompressed_size:<bytes>".
pub fn debug_object(ctx: &mut Ctx, key: &[u8]) {
    let compress = ctx.server.config.rdbcompression;
    let clock = ctx.server.keyspace.clock_secs();
    let sharing = ctx.server.config.memory.shares_integers();
    let db = ctx.client.db;
    let Some(entry) = ctx.server.keyspace.find(db, key) else {
        return ctx.error(errors::NO_SUCH_KEY);
    };
    let fill = ctx.server.config.list.max_listpack_size;
    let mut line = format!(
        "Value at:{:p} refcount:{} encoding:{} serializedlength:{} lru:{} lru_seconds_idle:{}",
        entry.value,
        entry.value.refcount(sharing),
        entry.value.encoding_name(),
        value_len(entry.value, compress),
        entry.accessed(),
        crate::keyspace::lfu::idle_secs(clock, entry.accessed()),
    );
    let list = entry.value.as_list().ok();
    if let Some((ql, count)) = list.and_then(|l| Some((l.quicklist_stats()?, l.len()))) {
        line.push_str(&format!(
            " ql_nodes:{} ql_avg_node:{:.2} ql_listpack_max:{} ql_compressed:{} ql_uncompressed_size:{}",
            ql.nodes,
            count as f64 / ql.nodes as f64,
            fill.clamp(-5, FILL_MAX),
            u8::from(ql.compress_depth != 0),
            ql.uncompressed_size,
        ));
    }
    ctx.out.simple(&line);
}
