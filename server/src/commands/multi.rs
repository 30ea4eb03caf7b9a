//! Transactions: MULTI, EXEC, DISCARD, WATCH, UNWATCH.

use super::{call, Ctx};

/// MULTI
pub fn multi(ctx: &mut Ctx, _args: &[&[u8]]) {
    if ctx.client.multi.is_some() {
        return ctx.error("ERR MULTI calls can not be nested");
    }
    ctx.client.multi = Some(Vec::new());
    ctx.client.multi_failed = false;
    ctx.out.ok();
}

/// Leaves MULTI: drops the queue and the WATCHes.
pub(super) fn end_transaction(ctx: &mut Ctx) {
    ctx.client.multi = None;
    ctx.client.multi_failed = false;
    let id = ctx.client.id;
    ctx.server.keyspace.unwatch_all(id, &mut ctx.client.watched);
}

/// DISCARD
pub fn discard(ctx: &mut Ctx, _args: &[&[u8]]) {
    if ctx.client.multi.is_none() {
        return ctx.error("ERR DISCARD without MULTI");
    }
    end_transaction(ctx);
    ctx.out.ok();
}

/// EXEC
pub fn exec(ctx: &mut Ctx, _args: &[&[u8]]) {
    let Some(queued) = ctx.client.multi.take() else {
        return ctx.error("ERR EXEC without MULTI");
    };
    if ctx.client.multi_failed {
        end_transaction(ctx);
        return ctx.error("EXECABORT Transaction discarded because of previous errors.");
    }
    if ctx
        .server
        .keyspace
        .watched_keys_changed(ctx.client.id, &ctx.client.watched, ctx.now_ms)
    {
        end_transaction(ctx);
        return ctx.out.null_array();
    }
    end_transaction(ctx);
    ctx.out.array(queued.len());
    ctx.in_exec = true;
    // While EXEC runs, CLIENT LIST / INFO show the client in MULTI with its queue, as Redis.
    ctx.client.exec_queued = Some(queued.len());
    for (cmd, command) in &queued {
        let args: Vec<&[u8]> = command.iter().map(Vec::as_slice).collect();
        if !ctx.server.acl.unrestricted(&mut ctx.client.user) {
            if let Err(noperm) = super::acl_cmd::permit_in_exec(ctx, cmd, &args) {
                ctx.error(&noperm);
                continue;
            }
        }
        call(ctx, cmd, &args);
    }
    ctx.client.exec_queued = None;
    ctx.in_exec = false;
    // The queued commands' errors are theirs: EXEC itself did not fail (Redis's
    // commandstats).
    ctx.failed = false;
}

/// WATCH key [key ...]
pub fn watch(ctx: &mut Ctx, args: &[&[u8]]) {
    if ctx.client.multi.is_some() {
        return ctx.error("ERR WATCH inside MULTI is not allowed");
    }
    let db = ctx.db();
    for key in &args[1..] {
        if ctx
            .client
            .watched
            .iter()
            .any(|(d, k, _)| *d == db && k == key)
        {
            continue;
        }
        let alive = ctx
            .server
            .keyspace
            .watch(db, key, ctx.client.id, ctx.now_ms);
        ctx.client.watched.push((db, key.to_vec(), alive));
    }
    ctx.out.ok();
}

/// UNWATCH
pub fn unwatch(ctx: &mut Ctx, _args: &[&[u8]]) {
    let id = ctx.client.id;
    ctx.server.keyspace.unwatch_all(id, &mut ctx.client.watched);
    ctx.out.ok();
}
