//! APPEND, SETRANGE, GETRANGE (and SUBSTR), STRLEN.

use super::{fits, read_string, store, write_string, TOO_LONG};
use crate::commands::Ctx;
use crate::keyspace::string::range;
use crate::keyspace::{StringValue, Value};
use crate::pubsub::notify;

/// APPEND key value: a missing key is created as SET would; an existing one grows in place
/// (and becomes `raw`).
pub fn append(ctx: &mut Ctx, args: &[&[u8]]) {
    let (key, tail) = (args[1], args[2]);
    let max = ctx.server.config.proto_max_bulk_len;
    let grown = match write_string(ctx, key) {
        Err(_) => return,
        Ok(None) => None,
        Ok(Some(s)) => Some(fits(max, s.len() as u64, tail.len() as u64).then(|| s.append(tail))),
    };
    match grown {
        None => {
            store(ctx, key, StringValue::from_set(tail), false);
            ctx.notify(notify::STRING, "append", key);
            ctx.out.int(tail.len() as i64);
        }
        Some(None) => ctx.error(TOO_LONG),
        Some(Some(len)) => {
            let db = ctx.db();
            ctx.server.keyspace.signal_modified(db, key);
            ctx.server.keyspace.add_dirty(1);
            ctx.notify(notify::STRING, "append", key);
            ctx.out.int(len as i64);
        }
    }
}

/// SETRANGE key offset value: a missing key is created `raw`, zero-padded to the offset.
pub fn setrange(ctx: &mut Ctx, args: &[&[u8]]) {
    let (key, data) = (args[1], args[3]);
    let Some(offset) = ctx.int_arg(args[2]) else {
        return;
    };
    if offset < 0 {
        return ctx.error("ERR offset is out of range");
    }
    let allowed = fits(
        ctx.server.config.proto_max_bulk_len,
        offset as u64,
        data.len() as u64,
    );
    let offset = offset as usize;
    let done = match write_string(ctx, key) {
        Err(_) => return,
        Ok(None) if data.is_empty() => return ctx.out.int(0),
        Ok(Some(s)) if data.is_empty() => {
            let len = s.len() as i64;
            return ctx.out.int(len);
        }
        Ok(_) if !allowed => return ctx.error(TOO_LONG),
        Ok(Some(s)) => Some(s.set_range(offset, data)),
        Ok(None) => None,
    };
    let db = ctx.db();
    let len = match done {
        Some(len) => {
            ctx.server.keyspace.signal_modified(db, key);
            ctx.server.keyspace.add_dirty(1);
            len
        }
        None => {
            let mut bytes = vec![0u8; offset + data.len()];
            bytes[offset..].copy_from_slice(data);
            store(ctx, key, StringValue::raw(&bytes), false);
            bytes.len()
        }
    };
    ctx.notify(notify::STRING, "setrange", key);
    ctx.out.int(len as i64);
}

/// GETRANGE key start end (and SUBSTR): the bytes between two offsets, both included.
pub fn getrange(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(start) = ctx.int_arg(args[2]) else {
        return;
    };
    let Some(end) = ctx.int_arg(args[3]) else {
        return;
    };
    let (found, out) = ctx.read_typed_and_out(args[1], Value::as_string);
    match found {
        Ok(Some(s)) => {
            let bytes = s.bytes();
            let r = range(bytes.len(), start, end).unwrap_or(0..0);
            out.bulk(&bytes[r]);
        }
        Ok(None) => out.bulk(b""),
        Err(_) => {}
    }
}

/// STRLEN key
pub fn strlen(ctx: &mut Ctx, args: &[&[u8]]) {
    if let Ok(found) = read_string(ctx, args[1]) {
        let n = found.map_or(0, |s| s.len());
        ctx.out.int(n as i64);
    }
}
