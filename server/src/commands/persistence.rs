//! Persistence commands: SAVE, BGSAVE, LASTSAVE, DEBUG RELOAD, and INFO persistence. The
//! snapshot work itself is [`crate::rdb`]'s.

use super::Ctx;
use crate::errors::{self, BGSAVE_IN_PROGRESS};
use crate::rdb::{BgsaveError, ReloadError};
use crate::server::Server;
use std::fmt::Write as _;

/// SAVE
pub fn save(ctx: &mut Ctx, _args: &[&[u8]]) {
    if ctx.server.rdb.child.is_some() {
        return ctx.error(BGSAVE_IN_PROGRESS);
    }
    match ctx.server.snapshots().save() {
        Ok(_) => ctx.out.ok(),
        Err(_) => ctx.error(errors::ERR),
    }
}

/// BGSAVE [SCHEDULE]
pub fn bgsave(ctx: &mut Ctx, args: &[&[u8]]) {
    let schedule = match args {
        [_] => false,
        [_, opt] if opt.eq_ignore_ascii_case(b"schedule") => true,
        _ => return ctx.syntax_error(),
    };
    let other_child = ctx.server.aof.rewriting() || ctx.server.replication.has_child();
    if (ctx.server.rdb.child.is_some() || other_child) && schedule {
        ctx.server.rdb.scheduled = true;
        return ctx.out.simple("Background saving scheduled");
    }
    if other_child {
        return ctx.error("ERR Another child process is active (AOF?): can't BGSAVE right now. Use BGSAVE SCHEDULE in order to schedule a BGSAVE whenever possible.");
    }
    match ctx.server.snapshots().bgsave() {
        Ok(()) => ctx.out.simple("Background saving started"),
        Err(BgsaveError::InProgress) => ctx.error(BGSAVE_IN_PROGRESS),
        Err(BgsaveError::Fork) => ctx.error(errors::ERR),
    }
}

/// BGREWRITEAOF
pub fn bgrewriteaof(ctx: &mut Ctx, _args: &[&[u8]]) {
    match crate::aof::rewrite::bgrewriteaof(ctx.server, ctx.in_exec) {
        Ok(status) => ctx.out.simple(status),
        Err(e) => ctx.error(e),
    }
}

/// LASTSAVE: Unix time of the last successful save (the start time before any).
pub fn lastsave(ctx: &mut Ctx, _args: &[&[u8]]) {
    ctx.out.int(ctx.server.rdb.last_save as i64);
}

/// DEBUG RELOAD [MERGE] [NOFLUSH] [NOSAVE]: save (unless NOSAVE), then load the file in
/// place of the data (or into it, see [`crate::rdb::ReloadOptions`]).
pub fn debug_reload(ctx: &mut Ctx, options: &[&[u8]]) {
    let mut opts = crate::rdb::ReloadOptions {
        save: true,
        flush: true,
        merge: false,
    };
    for opt in options {
        match opt.to_ascii_lowercase().as_slice() {
            b"merge" => opts.merge = true,
            b"noflush" => opts.flush = false,
            b"nosave" => opts.save = false,
            _ => {
                return ctx
                    .error("ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.")
            }
        }
    }
    match ctx.server.snapshots().reload(opts) {
        Ok(()) => ctx.out.ok(),
        Err(ReloadError::Save) => {
            ctx.error("ERR Error trying to save the RDB dump, check server logs.")
        }
        Err(ReloadError::Load) => {
            ctx.error("ERR Error trying to load the RDB dump, check server logs.")
        }
    }
}

/// The `# Persistence` section of INFO.
pub fn info_section(server: &Server, w: &mut String) {
    let st = &server.rdb;
    let current = st
        .child
        .as_ref()
        .map_or(-1, |c| c.started.elapsed().as_secs() as i64);
    let _ = write!(
        w,
        "# Persistence\r\nloading:{}\r\nasync_loading:{}\r\n",
        server.is_loading() as u8,
        crate::replication::replica::async_loading(server) as u8,
    );
    if let Some(load) = &server.loading {
        load.info_fields(w);
    } else if let Some(progress) = &server.aof.progress {
        progress.info_fields(w);
    }
    let (progress, keys_total, cow_age) = server.child().map_or(Default::default(), |c| {
        (c.progress, c.keys_total, c.cow_age_secs())
    });
    let fork_perc = match keys_total {
        0 => 0.0,
        total => progress.keys as f64 * 100.0 / total as f64,
    };
    let _ = write!(
        w,
        "current_cow_peak:{}\r\ncurrent_cow_size:{}\r\ncurrent_cow_size_age:{cow_age}\r\ncurrent_fork_perc:{fork_perc:.2}\r\ncurrent_save_keys_processed:{}\r\ncurrent_save_keys_total:{keys_total}\r\nrdb_changes_since_last_save:{}\r\nrdb_bgsave_in_progress:{}\r\nrdb_last_save_time:{}\r\nrdb_last_bgsave_status:{}\r\nrdb_last_bgsave_time_sec:{}\r\nrdb_current_bgsave_time_sec:{current}\r\nrdb_saves:{}\r\nrdb_last_cow_size:{}\r\nrdb_last_load_keys_expired:{}\r\nrdb_last_load_keys_loaded:{}\r\n",
        progress.cow_peak,
        progress.cow,
        progress.keys,
        server.keyspace.dirty(),
        // A diskless sync's child writes a snapshot too (Redis counts it here).
        server.snapshot_child() as u8,
        st.last_save,
        if st.last_bgsave_ok { "ok" } else { "err" },
        st.last_bgsave_secs,
        st.saves,
        st.last_cow_bytes,
        st.last_load_expired,
        st.last_load_keys,
    );
    crate::aof::info_fields(server, w);
}
