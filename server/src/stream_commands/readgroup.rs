//! XREADGROUP GROUP group consumer [COUNT count] [BLOCK milliseconds] [NOACK]
//! STREAMS key [key ...] id [id ...]
//!
//! Per stream, `>` delivers the entries after the group's last id (pending for the
//! consumer unless NOACK), any other id serves the consumer's own pending entries after it
//! (an entry deleted meanwhile as `[id, nil]`). The consumer is created on first use. With
//! BLOCK and nothing for `>`, the client waits on the keys as XREAD's do, and the command
//! runs again when a key is written, deleted or replaced (a deleted key or destroyed group
//! then answers NOGROUP, another type WRONGTYPE, as Redis 7.2's unblock-on-no-key waits).
//!
//! Propagation is Redis's: never the command itself, but per delivered entry `XCLAIM ...
//! FORCE JUSTID LASTID`, with NOACK `XGROUP SETID ... ENTRIESREAD` for the moved last id
//! and `XGROUP CREATECONSUMER` for a consumer it created.

use super::id::{self, IdRules};
use super::xread::{parse_options, Options};
use super::{
    no_key_or_group, propagate_claim, propagate_group_id, see_consumer, write_entry,
    write_served_header, write_served_key,
};
use crate::commands::Ctx;
use crate::errors::until_nul;
use crate::keyspace::stream::{Nack, ID_TEXT_LEN};
use crate::keyspace::{StreamId, Value};
use crate::resp::reply::ReplyWriter;

const DOLLAR: &str = "ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer by specifying a proper ID, or use the > ID to get new messages. The $ ID would just return an empty result set.";

/// XREADGROUP GROUP group consumer [COUNT count] [BLOCK milliseconds] [NOACK] STREAMS ...
pub fn xreadgroup(ctx: &mut Ctx, args: &[&[u8]]) {
    ctx.propagate_nothing();
    let Some(o) = parse_options(ctx, args, true) else {
        return;
    };
    let (group, consumer) = o.group.expect("parse_options requires GROUP");
    let n = (args.len() - o.streams) / 2;
    let (keys, id_args) = args[o.streams..].split_at(n);
    // Per key in turn: the type, the group, then the id (`>` as the largest id, as Redis).
    let mut ids = Vec::with_capacity(n);
    for (key, arg) in keys.iter().zip(id_args) {
        let Ok(found) = ctx.read_typed(key, Value::as_stream) else {
            return;
        };
        if found.is_none_or(|s| s.group(group).is_none()) {
            return no_key_or_group(ctx, key, group, " in XREADGROUP with GROUP option");
        }
        ids.push(match until_nul(arg) {
            b"$" => return ctx.error(DOLLAR),
            b">" => StreamId::MAX,
            _ => match id::parse(arg, IdRules::STRICT) {
                Some(p) => p.id,
                None => return ctx.error(id::INVALID_ID),
            },
        });
    }
    let mut served = Vec::new();
    for (key, &after) in keys.iter().zip(&ids) {
        if let Some(reply) = serve(ctx, key, group, consumer, after, &o) {
            served.push(reply);
        }
    }
    if !served.is_empty() {
        write_served_header(&mut ctx.out, served.len());
        for reply in served {
            ctx.out.raw(&reply);
        }
        return;
    }
    match o.block {
        Some(deadline) if !ctx.in_exec => {
            ctx.block = Some((keys.iter().map(|k| k.to_vec()).collect(), deadline));
        }
        _ => ctx.out.null_array(),
    }
}

/// Serves one stream if it has something for the consumer (always, for a history id):
/// updates the group, propagates as Redis does and returns the stream's part of the reply
/// (key and entries). None when `>` finds nothing new.
fn serve(
    ctx: &mut Ctx,
    key: &[u8],
    group: &[u8],
    consumer: &[u8],
    after: StreamId,
    o: &Options,
) -> Option<Vec<u8>> {
    let history = after != StreamId::MAX;
    let Ok(Some(s)) = ctx.read_typed(key, Value::as_stream) else {
        return None;
    };
    let last_delivered = s.group(group)?.last_id;
    let has_new = s.has_live_after(last_delivered);
    if see_consumer(ctx, key, group, consumer) && o.noack {
        ctx.propagate_instead(&[b"XGROUP", b"CREATECONSUMER", key, group, consumer]);
    }
    if !history && !has_new {
        return None;
    }
    ctx.server.keyspace.add_dirty(1);
    let (now, resp3, propagating) = (ctx.now_ms, ctx.out.is_resp3(), ctx.propagating());
    let mut reply = Vec::new();
    let mut out = ReplyWriter::new(&mut reply, resp3);
    write_served_key(&mut out, key);
    let s = ctx.write_typed(key, Value::as_stream_mut).ok()??;
    if history {
        let start = after.next().unwrap_or(StreamId::MAX);
        let pending = s.group(group)?.history(consumer, start, o.count);
        out.array(pending.len());
        for &id in &pending {
            match s.range(id, id, false).next() {
                Some(e) => write_entry(&mut out, &e),
                None => {
                    out.array(2);
                    out.bulk(id.format(&mut [0; ID_TEXT_LEN]));
                    out.null_array();
                }
            }
        }
        let found: Vec<StreamId> = pending.into_iter().filter(|&id| s.contains(id)).collect();
        let g = s.group_mut(group)?;
        for id in found {
            g.redeliver(id, now);
        }
        return Some(reply);
    }
    let delivered = s.read_group(group, consumer, o.count, o.noack, now);
    out.array(delivered.len());
    if let (Some(&first), Some(&last)) = (delivered.first(), delivered.last()) {
        for e in s.range(first, last, false) {
            write_entry(&mut out, &e);
        }
    }
    let g = s.group(group)?;
    let (last, read) = (g.last_id, g.entries_read);
    let claims: Vec<(StreamId, Nack)> = match o.noack || !propagating {
        true => Vec::new(),
        false => delivered
            .iter()
            .filter_map(|id| Some((*id, g.nack(*id)?.to_nack())))
            .collect(),
    };
    for (id, nack) in &claims {
        propagate_claim(ctx, key, group, id.to_string().as_bytes(), nack, *id);
    }
    if o.noack {
        propagate_group_id(ctx, key, group, last, read);
    }
    Some(reply)
}
