//! XADD and XTRIM.

use super::{obeys_unconditionally, trim};
use crate::commands::Ctx;
use crate::errors;
use crate::keyspace::stream::{AppendError, NewId, ID_TEXT_LEN};
use crate::keyspace::{StreamId, Value};
use crate::pubsub::notify;

/// XADD key [NOMKSTREAM] [MAXLEN|MINID [=|~] threshold [LIMIT count]] *|id field value
/// [field value ...]
pub fn xadd(ctx: &mut Ctx, args: &[&[u8]]) {
    let obeyed = obeys_unconditionally(ctx);
    let Some(a) = trim::parse(ctx, args, true, obeyed) else {
        return;
    };
    let fields = args.get(a.id_index + 1..).unwrap_or_default();
    if fields.len() < 2 || !fields.len().is_multiple_of(2) {
        return ctx.error(&errors::wrong_arity("xadd"));
    }
    if a.id.is_some_and(|p| p.seq_given && p.id.is_zero()) {
        return ctx.error("ERR The ID specified in XADD must be greater than 0-0");
    }
    let (db, key, now_ms, propagating) = (ctx.client.db, args[1], ctx.now_ms, ctx.propagating());
    let cfg = ctx.server.config.stream;
    let keyspace = &mut ctx.server.keyspace;
    let stream = if a.no_mkstream {
        match keyspace.lookup_write(db, key, now_ms) {
            None => return ctx.out.null(),
            Some(e) => e.value.as_stream_mut(),
        }
    } else {
        let make = || Value::Stream(Box::default());
        keyspace
            .lookup_write_or_create(db, key, now_ms, make)
            .0
            .value
            .as_stream_mut()
    };
    let Ok(stream) = stream else {
        return ctx.error(errors::WRONGTYPE);
    };
    if stream.last_id() == StreamId::MAX {
        return ctx
            .error("ERR The stream has exhausted the last possible ID, unable to add more items");
    }
    let how = match a.id {
        None => NewId::Auto,
        Some(p) if p.seq_given => NewId::Exact(p.id),
        Some(p) => NewId::AutoSeq(p.id.ms),
    };
    let id = match stream.append(how, fields, now_ms, &cfg) {
        Ok(id) => id,
        Err(AppendError::IdTooSmall) => {
            return ctx.error(
                "ERR The ID specified in XADD is equal or smaller than the target stream top item",
            )
        }
        Err(AppendError::TooLarge) => return ctx.error("ERR Elements are too large to be stored"),
    };
    let trimmed = trim::apply(stream, &a);
    let mut text = [0; ID_TEXT_LEN];
    let id_text = id.format(&mut text);
    // The command propagates with `=` for `~` (what was trimmed) and the id it made.
    let made_id = !matches!(how, NewId::Exact(_));
    let argv = ((a.approx || made_id) && propagating).then(|| {
        let mut argv: Vec<Vec<u8>> = args.iter().map(|a| a.to_vec()).collect();
        if a.approx {
            trim::rewrite_approx(&mut argv, &a, stream);
        }
        if made_id {
            argv[a.id_index] = id_text.to_vec();
        }
        argv
    });
    ctx.out.bulk(id_text);
    ctx.server.keyspace.signal_modified(db, key);
    ctx.notify(notify::STREAM, "xadd", key);
    ctx.server.keyspace.add_dirty(1);
    if trimmed > 0 {
        ctx.notify(notify::STREAM, "xtrim", key);
    }
    if let Some(argv) = argv {
        let argv: Vec<&[u8]> = argv.iter().map(Vec::as_slice).collect();
        ctx.propagate_instead(&argv);
    }
    ctx.server.keyspace.signal_ready(db, key);
}

/// XTRIM key MAXLEN|MINID [=|~] threshold [LIMIT count]
pub fn xtrim(ctx: &mut Ctx, args: &[&[u8]]) {
    let obeyed = obeys_unconditionally(ctx);
    let Some(a) = trim::parse(ctx, args, false, obeyed) else {
        return;
    };
    let key = args[1];
    let Ok(found) = ctx.write_typed(key, Value::as_stream_mut) else {
        return;
    };
    let Some(stream) = found else {
        return ctx.out.int(0);
    };
    let trimmed = trim::apply(stream, &a);
    if trimmed > 0 {
        if a.approx {
            let mut argv: Vec<Vec<u8>> = args.iter().map(|a| a.to_vec()).collect();
            trim::rewrite_approx(&mut argv, &a, stream);
            let argv: Vec<&[u8]> = argv.iter().map(Vec::as_slice).collect();
            ctx.propagate_instead(&argv);
        }
        ctx.notify(notify::STREAM, "xtrim", key);
        let db = ctx.client.db;
        ctx.server.keyspace.signal_modified(db, key);
        ctx.server.keyspace.add_dirty(trimmed);
    }
    ctx.out.int(trimmed as i64);
}
