//! XRANGE, XREVRANGE, XLEN.

use super::{id, write_entries};
use crate::commands::Ctx;
use crate::keyspace::stream::EntryRef;
use crate::keyspace::{Stream, Value};

/// XRANGE key start end [COUNT count]
pub fn xrange(ctx: &mut Ctx, args: &[&[u8]]) {
    range(ctx, args, false);
}

/// XREVRANGE key end start [COUNT count]
pub fn xrevrange(ctx: &mut Ctx, args: &[&[u8]]) {
    range(ctx, args, true);
}

/// XRANGE and XREVRANGE: bounds (`(` excludes; an incomplete start gets sequence 0, an
/// incomplete end the largest), then COUNT (negative: 0, which replies a null array).
fn range(ctx: &mut Ctx, args: &[&[u8]], rev: bool) {
    let (start_arg, end_arg) = if rev {
        (args[3], args[2])
    } else {
        (args[2], args[3])
    };
    let Some((start, excluded)) = id::parse_bound(start_arg, 0) else {
        return ctx.error(id::INVALID_ID);
    };
    let start = if excluded { start.next() } else { Some(start) };
    let Some(start) = start else {
        return ctx.error("ERR invalid start ID for the interval");
    };
    let Some((end, excluded)) = id::parse_bound(end_arg, u64::MAX) else {
        return ctx.error(id::INVALID_ID);
    };
    let end = if excluded { end.prev() } else { Some(end) };
    let Some(end) = end else {
        return ctx.error("ERR invalid end ID for the interval");
    };
    let mut count = None;
    let mut j = 4;
    while j < args.len() {
        if args[j].eq_ignore_ascii_case(b"COUNT") && j + 1 < args.len() {
            let Some(n) = ctx.int_arg(args[j + 1]) else {
                return;
            };
            count = Some(n.max(0) as usize);
            j += 2;
        } else {
            return ctx.syntax_error();
        }
    }
    let (found, out) = ctx.read_typed_and_out(args[1], Value::as_stream);
    let stream = match found {
        Err(_) => return,
        Ok(None) => return out.array(0),
        Ok(Some(s)) => s,
    };
    if count == Some(0) {
        return out.null_array();
    }
    let entries: Vec<EntryRef> = stream
        .range(start, end, rev)
        .take(count.unwrap_or(usize::MAX))
        .collect();
    write_entries(out, &entries);
}

/// XLEN key
pub fn xlen(ctx: &mut Ctx, args: &[&[u8]]) {
    let Ok(found) = ctx.read_typed(args[1], Value::as_stream) else {
        return;
    };
    let len = found.map_or(0, Stream::len);
    ctx.out.int(len as i64);
}
