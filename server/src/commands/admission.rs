//! The checks Redis's processCommand makes before running a command, in its order, once
//! the cheap test in the dispatcher saw that one may apply: eviction and OOM under
//! maxmemory, MISCONF after a failed BGSAVE or AOF write, NOREPLICAS under
//! min-replicas-to-write, READONLY and MASTERDOWN on a replica, LOADING during the start-up
//! load (and, for the commands that must not run then, during a replica's async load). A script or function that declared its flags is judged by them (Redis's
//! getCommandFlags), so a write script is refused before it runs.

use super::{Command, Flags};
use crate::clients::{Client, ReplRole};
use crate::errors;
use crate::server::Server;
use std::borrow::Cow;

/// The error refusing `cmd` from `client`, if any (evicting first when over maxmemory).
/// Out of line: the dispatcher's fast path only tests whether a check applies.
#[cold]
#[inline(never)]
pub fn refusal(
    server: &mut Server,
    client: &Client,
    cmd: &Command,
    args: &[&[u8]],
) -> Option<Cow<'static, str>> {
    if client.repl_role == ReplRole::Master {
        // The master's stream is applied whatever this server's state, except a write this
        // replica could not persist (see master_write_on_disk_error).
        if disk_write_error(server) && cmd.name != "ping" && cmd.flags.contains(Flags::WRITE) {
            master_write_on_disk_error(server);
        }
        return None;
    }
    if client.id == crate::aof::load::AOF_CLIENT_ID {
        // Redis runs the AOF's commands without processCommand's checks: a read-only
        // replica's DEBUG LOADAOF applies its writes.
        return None;
    }
    if server.config.memory.maxmemory != 0
        && !crate::memory::perform_evictions(server)
        && refused_out_of_memory(server, client, cmd, args)
    {
        return Some(errors::OOM.into());
    }
    let disk_error = snapshot_write_error(server);
    let aof_error = (!disk_error).then(|| server.aof.write_error()).flatten();
    if (disk_error || aof_error.is_some())
        && (cmd.name == "ping" || has_flag(server, client, cmd, args, Flags::WRITE))
    {
        return Some(match aof_error {
            Some(e) => format!("MISCONF Errors writing to the AOF file: {e}").into(),
            None => errors::MISCONF.into(),
        });
    }
    let write = has_flag(server, client, cmd, args, Flags::WRITE);
    if write && !crate::replication::master::min_replicas_met(server) {
        return Some("NOREPLICAS Not enough good replicas to write.".into());
    }
    if write && server.replication.is_replica() && server.config.repl.read_only {
        return Some("READONLY You can't write against a read only replica.".into());
    }
    if serving_stale(server) && !stale_allowed(server, client, cmd, args) {
        return Some(errors::MASTERDOWN.into());
    }
    if server.is_loading()
        && client.id != crate::aof::load::AOF_CLIENT_ID
        && !all_have_flag(client, cmd, Flags::LOADING)
    {
        return Some(errors::LOADING.into());
    }
    if crate::replication::replica::async_loading(server)
        && has_flag(server, client, cmd, args, Flags::NO_ASYNC_LOADING)
    {
        return Some(errors::LOADING.into());
    }
    // A replica's link is not a way round CLIENT PAUSE, from which replicas are exempt.
    if client.repl_role == ReplRole::Replica
        && (has_flag(server, client, cmd, args, Flags::WRITE)
            || has_flag(server, client, cmd, args, Flags::READONLY))
    {
        return Some("ERR Replica can't interact with the keyspace".into());
    }
    None
}

/// Whether writes are refused for the last BGSAVE's failure (stop-writes-on-bgsave-error
/// with save points).
fn snapshot_write_error(server: &Server) -> bool {
    server.config.stop_writes_on_bgsave_error
        && !server.config.save.is_empty()
        && !server.rdb.last_bgsave_ok
}

/// Whether writes are refused for a disk error: the last BGSAVE's or the AOF's.
fn disk_write_error(server: &Server) -> bool {
    snapshot_write_error(server) || server.aof.write_error().is_some()
}

/// A write from the master while this replica cannot write to its disk: as Redis, the
/// replica stops (a panic) rather than hold data its disk will not, unless
/// replica-ignore-disk-write-errors says to apply it, with a warning at most every 10 s.
fn master_write_on_disk_error(server: &mut Server) {
    if !server.config.repl.ignore_disk_write_errors {
        crate::service::crash::panic("Replica was unable to write command to disk.");
    }
    let now = crate::clock::unix_ms();
    if now > server.replication.disk_error_logged_ms + 10_000 {
        server.replication.disk_error_logged_ms = now;
        crate::warning!("Replica is applying a command even though it is unable to write to disk.");
    }
}

/// Whether the command has `flag` (a script's by its declared flags), or is an EXEC whose
/// queue holds a command that has it.
fn has_flag(server: &Server, client: &Client, cmd: &Command, args: &[&[u8]], flag: Flags) -> bool {
    let has = |c: &Command, argv: &[&[u8]]| {
        crate::scripting::command_flags(server, c, argv).contains(flag)
    };
    has(cmd, args)
        || (cmd.name == "exec"
            && client.multi.as_ref().is_some_and(|q| {
                q.iter().any(|(c, argv)| {
                    let argv: Vec<&[u8]> = argv.iter().map(Vec::as_slice).collect();
                    has(c, &argv)
                })
            }))
}

/// Whether this server is a replica whose link is down with replica-serve-stale-data no:
/// only the commands flagged `stale` run.
pub fn serving_stale(server: &Server) -> bool {
    server.replication.is_replica()
        && !server.config.repl.serve_stale_data
        && !server
            .replication
            .link
            .as_ref()
            .is_some_and(|l| l.connected())
}

/// Whether the command runs on a stale replica: flagged `stale` (and for EXEC its queue
/// too); a script or function that declared its flags runs only with `allow-stale`, as
/// Redis's scriptFlagsToCmdFlags makes it.
fn stale_allowed(server: &Server, client: &Client, cmd: &Command, args: &[&[u8]]) -> bool {
    match crate::scripting::declared_flags(server, cmd.name, args) {
        Some(flags) => flags.allow_stale,
        None => all_have_flag(client, cmd, Flags::STALE),
    }
}

/// Whether the command has `flag`, and for EXEC every queued command too (Redis's
/// cmd_inv_flags: the state may have changed since they were queued).
fn all_have_flag(client: &Client, cmd: &Command, flag: Flags) -> bool {
    cmd.flags.contains(flag)
        && (cmd.name != "exec"
            || client
                .multi
                .as_ref()
                .is_none_or(|q| q.iter().all(|(c, _)| c.flags.contains(flag))))
}

/// Whether a command is refused while memory stays over maxmemory: one that may grow
/// memory (an EXEC whose queue holds one), or anything but EXEC, DISCARD, QUIT and RESET
/// inside MULTI, whose queue grows too.
fn refused_out_of_memory(server: &Server, client: &Client, cmd: &Command, args: &[&[u8]]) -> bool {
    has_flag(server, client, cmd, args, Flags::DENYOOM)
        || (client.multi.is_some() && !matches!(cmd.name, "exec" | "discard" | "quit" | "reset"))
}
