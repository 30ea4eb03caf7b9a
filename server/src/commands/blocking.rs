//! Blocked clients: registering a wait, serving clients when their keys become ready,
//! timeouts, CLIENT UNBLOCK, and cleanup when a client goes away.
//!
//! A blocking command that finds nothing to pop sets `Ctx::block`; the client is then
//! queued on each key (FIFO per key) and reads no further requests. When a write makes a
//! key non-empty, [`serve_ready_keys`] re-runs the waiting clients' commands in arrival
//! order until the key is empty again, as Redis 7 does.

use super::lookup::PickMut;
use super::replication::WaitState;
use super::{call, lookup, Ctx};
use crate::clients::{Blocked, Client, Lease};
use crate::keyspace::WrongType;
use crate::resp::reply::ReplyWriter;
use crate::server::Server;

/// Called by a blocking command that found nothing to serve: the client waits on `keys`
/// until `deadline_ms` (None: forever), or, inside MULTI where nothing may block, gets the
/// reply of a timeout at once: the null array (`null_array`), else the null reply (BLMOVE
/// and BRPOPLPUSH).
pub fn block_or_null(ctx: &mut Ctx, keys: &[&[u8]], deadline_ms: Option<u64>, null_array: bool) {
    if !ctx.in_exec {
        ctx.block = Some((keys.iter().map(|k| k.to_vec()).collect(), deadline_ms));
    } else if null_array {
        ctx.out.null_array();
    } else {
        ctx.out.null();
    }
}

/// The first of `keys` holding a value of the command's type (`pick`), where a pop or a
/// blocking pop takes from; `Err` after the WRONGTYPE reply when a key before it holds
/// another type.
pub fn first_present<T: ?Sized>(
    ctx: &mut Ctx,
    keys: &[&[u8]],
    pick: PickMut<T>,
) -> Result<Option<usize>, WrongType> {
    for (i, key) in keys.iter().enumerate() {
        if ctx.write_typed(key, pick)?.is_some() {
            return Ok(Some(i));
        }
    }
    Ok(None)
}

/// Registers `client` as blocked on `keys` until `deadline_ms`.
pub fn block_client(
    server: &mut Server,
    client: &mut Client,
    keys: Vec<Vec<u8>>,
    deadline_ms: Option<u64>,
    args: &[&[u8]],
) {
    for key in &keys {
        server.keyspace.block_on(client.db, key, client.id);
    }
    server.clients.count_blocked(true);
    client.blocked = Some(Blocked {
        db: client.db,
        keys,
        command: args.iter().map(|a| a.to_vec()).collect(),
        deadline_ms,
    });
}

/// Counts the call of a blocked command whose wait ends without it running again (a
/// timeout, CLIENT UNBLOCK, an error), as Redis's updateStatsOnUnblock: a command blocked on
/// keys, whose call was not counted when it blocked, counts it now; an error ending any
/// wait counts as a failed call.
fn count_unblocked(server: &mut Server, client: &Client, failed: bool) {
    let Some(blocked) = client.blocked.as_ref() else {
        return;
    };
    let Some(cmd) = blocked.command.first().and_then(|name| lookup(name)) else {
        return;
    };
    let on_keys = !blocked.keys.is_empty();
    let stats = server.stats.command(cmd.slot.get(), cmd.name);
    if on_keys {
        stats.calls += 1;
    }
    if failed {
        stats.failed_calls += 1;
    }
    if on_keys {
        server.stats.commands_processed += 1;
    }
}

/// Removes a client from every key queue it waits in.
fn unblock(server: &mut Server, client: &mut Client) {
    let Some(blocked) = client.blocked.take() else {
        return;
    };
    server.clients.count_blocked(false);
    for key in blocked.keys {
        server.keyspace.unblock_from(blocked.db, key, client.id);
    }
}

/// Re-runs the blocked commands of clients waiting on keys that became ready; the clients
/// that got a reply are woken.
pub fn serve_ready_keys(server: &mut Server) {
    while server.keyspace.has_ready_keys() {
        for (db, key) in server.keyspace.take_ready_keys() {
            for id in server.keyspace.waiters(db, &key) {
                // As Redis's LOOKUP_NOEFFECTS: a key whose time has come counts as absent
                // here but is not removed (its DEL goes out when a command next reads it).
                let now_ms = crate::clock::unix_ms();
                let paused = server.keyspace.expiry_paused();
                let kind = server
                    .keyspace
                    .db(db)
                    .get(&key)
                    .filter(|e| paused || !e.is_expired(now_ms))
                    .map(|e| e.value.type_name());
                let Some(mut lease) = server.clients.lease_id(id) else {
                    continue;
                };
                let awaited = lease
                    .client
                    .blocked
                    .as_ref()
                    .and_then(|b| awaited_type(&b.command[0]));
                // XREADGROUP (no awaited type) runs again on any change, deletion included.
                if awaited.is_some_and(|t| Some(t) != kind) {
                    server.clients.restore(lease, false);
                    continue;
                }
                let served = rerun(server, &mut lease);
                server.clients.restore(lease, served);
            }
        }
    }
}

/// The type of value a blocking command waits for (Redis's blocking types): a key made
/// ready holding another type, or deleted, leaves its clients waiting. None for
/// XREADGROUP, which Redis wakes on any change of its keys, their deletion included (its
/// command then replies NOGROUP or WRONGTYPE).
fn awaited_type(command: &[u8]) -> Option<&'static str> {
    match command.to_ascii_lowercase().as_slice() {
        b"blpop" | b"brpop" | b"brpoplpush" | b"blmove" | b"blmpop" | b"blmovem" => Some("list"),
        b"bzpopmin" | b"bzpopmax" | b"bzmpop" => Some("zset"),
        b"xread" => Some("stream"),
        _ => None,
    }
}

/// Whether a wait ends on its key's deletion too (Redis's unblock_on_nokey): XREADGROUP's.
fn wakes_on_no_key(blocked: &Blocked) -> bool {
    blocked
        .command
        .first()
        .is_some_and(|n| n.eq_ignore_ascii_case(b"xreadgroup"))
}

/// How many keys have a client waiting that wakes on their deletion (INFO
/// total_blocking_keys_on_nokey).
pub fn keys_waited_on_no_key(server: &Server) -> usize {
    let keys: std::collections::HashSet<(usize, &[u8])> = server
        .clients
        .iter()
        .filter_map(|(c, _)| c.blocked.as_ref())
        .filter(|b| wakes_on_no_key(b))
        .flat_map(|b| b.keys.iter().map(move |k| (b.db, k.as_slice())))
        .collect();
    keys.len()
}

/// Runs a blocked client's command again. Returns true when it completed.
fn rerun(server: &mut Server, lease: &mut Lease) -> bool {
    let Lease { client, out, .. } = lease;
    let Some(blocked) = client.blocked.clone() else {
        return false;
    };
    let args: Vec<&[u8]> = blocked.command.iter().map(Vec::as_slice).collect();
    let Some(cmd) = lookup(args[0]) else {
        return false;
    };
    let mut ctx = Ctx::new(server, client, out);
    ctx.reprocessing = true;
    // The user's rules may have changed while it waited: checked again, as Redis runs a
    // reprocessed command through processCommand (a refusal ends the wait, as a rejected
    // call).
    let refused = match ctx.server.acl.unrestricted(&mut ctx.client.user) {
        true => None,
        false => super::acl_cmd::permit(&mut ctx, cmd, &args).err(),
    };
    if let Some(noperm) = refused {
        super::reject(&mut ctx, Some(cmd), &noperm);
        let Ctx { server, client, .. } = ctx;
        unblock(server, client);
        return true;
    }
    let mark = ctx.out.position();
    call(&mut ctx, cmd, &args);
    if ctx.block.is_some() {
        ctx.out.truncate(mark);
        return false;
    }
    let Ctx {
        server,
        client,
        mut out,
        ..
    } = ctx;
    unblock(server, client);
    super::pubsub::publish_notifications(server, Some((client, &mut out)));
    true
}

/// Ends the waits whose timeout passed with the null reply; the clients are woken.
pub fn expire_blocked(server: &mut Server, now_ms: u64) {
    if server.clients.blocked() == 0 {
        return;
    }
    let expired = server.clients.ids_where(|c| {
        c.blocked
            .as_ref()
            .and_then(|b| b.deadline_ms)
            .is_some_and(|d| d <= now_ms)
    });
    for id in expired {
        let Some(mut lease) = server.clients.lease_id(id) else {
            continue;
        };
        if super::replication::is_wait(&lease.client) {
            super::replication::wait_reply(server, &mut lease);
        } else {
            ReplyWriter::new(&mut lease.out, lease.client.resp3).null_array();
        }
        count_unblocked(server, &lease.client, false);
        unblock(server, &mut lease.client);
        server.clients.restore(lease, true);
    }
}

/// Ends with an error the waits that `refusal` refuses (cluster mode: keys of a slot this
/// node no longer serves); the clients are woken.
pub fn refuse_blocked(server: &mut Server, refusal: impl Fn(&Server, &Client) -> Option<String>) {
    let ids = server.clients.ids_where(|c| c.blocked.is_some());
    for id in ids {
        let Some(mut lease) = server.clients.lease_id(id) else {
            continue;
        };
        match refusal(server, &lease.client) {
            Some(text) => {
                ReplyWriter::new(&mut lease.out, lease.client.resp3).error(&text);
                server.stats.count_error(&text);
                count_unblocked(server, &lease.client, true);
                unblock(server, &mut lease.client);
                server.clients.restore(lease, true);
            }
            None => server.clients.restore(lease, false),
        }
    }
}

/// The nearest blocking deadline, for the poll timeout.
pub fn next_deadline(server: &Server) -> Option<u64> {
    server
        .clients
        .iter()
        .filter_map(|(c, _)| c.blocked.as_ref()?.deadline_ms)
        .min()
}

/// CLIENT UNBLOCK client-id [TIMEOUT|ERROR]
pub fn client_unblock(ctx: &mut Ctx, args: &[&[u8]]) {
    if args.len() > 4 {
        return super::server_cmds::subcommand_syntax_error(ctx, args);
    }
    // Redis checks the reason before the id.
    let as_error = match args.get(3) {
        None => false,
        Some(a) if a.eq_ignore_ascii_case(b"TIMEOUT") => false,
        Some(a) if a.eq_ignore_ascii_case(b"ERROR") => true,
        Some(_) => return ctx.error("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR"),
    };
    let Some(id) = ctx.int_arg(args[2]) else {
        return;
    };
    let Some(mut lease) = ctx.server.clients.lease_id(id as u64) else {
        return ctx.out.int(0);
    };
    // A SHUTDOWN caller waits for the shutdown's end only (Redis 7.0 crashes here).
    if lease.client.blocked.is_none() || crate::service::shutdown::waits_for_shutdown(&lease.client)
    {
        ctx.server.clients.restore(lease, false);
        return ctx.out.int(0);
    }
    if as_error {
        // As Redis: the error counts in errorstats, and as a failed call of the command
        // that blocked.
        let message = "UNBLOCKED client unblocked via CLIENT UNBLOCK";
        ReplyWriter::new(&mut lease.out, lease.client.resp3).error(message);
        ctx.server.stats.count_error(message);
    } else if super::replication::is_wait(&lease.client) {
        super::replication::wait_reply(ctx.server, &mut lease);
    } else {
        ReplyWriter::new(&mut lease.out, lease.client.resp3).null_array();
    }
    count_unblocked(ctx.server, &lease.client, as_error);
    unblock(ctx.server, &mut lease.client);
    ctx.server.clients.restore(lease, true);
    ctx.out.int(1);
}

/// Cleans up after a closed connection: WATCHes, blocking waits, a postponed command and
/// subscriptions.
pub fn client_gone(server: &mut Server, client: &mut Client) {
    let id = client.id;
    server.keyspace.unwatch_all(id, &mut client.watched);
    unblock(server, client);
    super::pause::client_gone(server, client);
    super::pubsub::drop_subscriptions(server, client);
    super::tracking::client_gone(server, client);
    super::monitor::stop(server, client);
    crate::replication::client_gone(server, id);
}

/// The server becomes a replica: every blocked client gets Redis's UNBLOCKED error and its
/// connection closes (what it waits for would have to come from its master now).
pub fn disconnect_blocked(server: &mut Server) {
    if server.clients.blocked() == 0 {
        return;
    }
    for id in server.clients.ids_where(|c| c.blocked.is_some()) {
        let Some(mut lease) = server.clients.lease_id(id) else {
            continue;
        };
        ReplyWriter::new(&mut lease.out, lease.client.resp3).error(
            "UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)",
        );
        count_unblocked(server, &lease.client, true);
        unblock(server, &mut lease.client);
        lease.doomed = true;
        server.clients.restore(lease, true);
    }
}

/// Answers the clients in WAIT and WAITAOF whose writes enough replicas (and the local
/// AOF) acknowledged, after ACKs came or the local fsynced offset moved; a WAITAOF waiting
/// for a local AOF turned off since gets Redis's error.
pub fn serve_waits(server: &mut Server) {
    if server.clients.blocked() == 0 {
        return;
    }
    let waiting = server.clients.ids_where(super::replication::is_wait);
    for id in waiting {
        let Some(mut lease) = server.clients.lease_id(id) else {
            continue;
        };
        let done = match super::replication::wait_state(server, &lease.client) {
            WaitState::Pending => false,
            WaitState::Satisfied => {
                super::replication::wait_reply(server, &mut lease);
                true
            }
            WaitState::Refused(message) => {
                ReplyWriter::new(&mut lease.out, lease.client.resp3).error(message);
                server.stats.count_error(message);
                count_unblocked(server, &lease.client, false);
                true
            }
        };
        if done {
            unblock(server, &mut lease.client);
        }
        server.clients.restore(lease, done);
    }
}
