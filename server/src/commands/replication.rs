//! The replication commands: SYNC, PSYNC and REPLCONF (what a replica says to its master),
//! REPLICAOF / SLAVEOF, ROLE, WAIT and WAITAOF. The work is in [`crate::replication`].

use super::{Command, Ctx, Flags};
use crate::clients::{Client, Lease, ReplRole};
use crate::notice;
use crate::replication::{master, replica};
use crate::resp::reply::ReplyWriter;
use crate::server::Server;

const ADMIN: Flags = Flags::ADMIN.with(Flags::NOSCRIPT);
const STALE_LOADING: Flags = Flags::STALE.with(Flags::LOADING);
/// Administrative, refused during a replica's async load.
const ADMIN_NO_ASYNC: Flags = ADMIN.with(Flags::NO_ASYNC_LOADING);

/// The replication commands.
pub static COMMANDS: [Command; 9] = [
    Command::simple("sync", 1, ADMIN_NO_ASYNC.with(Flags::NO_MULTI), sync),
    Command::simple("psync", -3, ADMIN_NO_ASYNC.with(Flags::NO_MULTI), sync),
    Command::simple(
        "replconf",
        -1,
        ADMIN.with(STALE_LOADING).with(Flags::ALLOW_BUSY),
        replconf,
    ),
    Command::simple("replicaof", 3, ADMIN_NO_ASYNC.with(Flags::STALE), replicaof),
    Command::simple("slaveof", 3, ADMIN_NO_ASYNC.with(Flags::STALE), replicaof),
    Command::simple(
        "role",
        1,
        Flags::NOSCRIPT.with(STALE_LOADING).with(Flags::FAST),
        role,
    ),
    Command::simple("wait", 3, Flags::NONE, wait),
    Command::simple("waitaof", 4, Flags::NOSCRIPT, waitaof),
    Command::simple("failover", -1, ADMIN.with(Flags::STALE), failover),
];

/// FAILOVER [TO host port [FORCE]] [ABORT] [TIMEOUT ms]
fn failover(ctx: &mut Ctx, args: &[&[u8]]) {
    match crate::replication::failover::command(ctx.server, args) {
        Ok(()) => ctx.out.ok(),
        Err(e) => ctx.error(&e),
    }
}

/// SYNC and PSYNC <replid> <offset> [FAILOVER]
fn sync(ctx: &mut Ctx, args: &[&[u8]]) {
    if args.len() > 3 && args[3].eq_ignore_ascii_case(b"failover") {
        let who = format!("id={} addr={}", ctx.client.id, ctx.client.addr);
        if let Err(e) = crate::replication::failover::psync_request(ctx.server, args[1], &who) {
            return ctx.error(&e);
        }
    }
    let psync = (args.len() >= 3).then(|| (args[1], args[2]));
    match master::sync(ctx.server, ctx.client, psync) {
        Ok(bytes) => ctx.out.raw(&bytes),
        Err(e) => ctx.error(&e),
    }
}

/// REPLCONF <option> <value> [<option> <value> ...]
fn replconf(ctx: &mut Ctx, args: &[&[u8]]) {
    if args.len().is_multiple_of(2) {
        return ctx.syntax_error();
    }
    for (i, pair) in args[1..].chunks(2).enumerate() {
        let (name, value) = (pair[0], pair[1]);
        if name.eq_ignore_ascii_case(b"ack") {
            // ACK <offset> [FACK <aofoffset>]: from a replica only, and never answered.
            if ctx.client.repl_role == ReplRole::Replica {
                let offset = |arg: &[u8]| crate::numbers::parse_i64(arg).map(|o| o.max(0) as u64);
                let fack = match &args[2 * i + 3..] {
                    [word, fsynced, ..] if word.eq_ignore_ascii_case(b"fack") => offset(fsynced),
                    _ => None,
                };
                if let Some(offset) = offset(value) {
                    master::ack(ctx.server, ctx.client.id, offset, fack);
                }
            }
            return;
        }
        if name.eq_ignore_ascii_case(b"getack") {
            if ctx.client.repl_role == ReplRole::Master {
                ctx.server.replication.ack_requested = true;
            }
            return;
        }
        if let Err(e) = master::replconf(ctx.server, ctx.client, name, value) {
            return ctx.error(&e);
        }
    }
    ctx.out.ok();
}

/// REPLICAOF host port | REPLICAOF NO ONE (and SLAVEOF)
fn replicaof(ctx: &mut Ctx, args: &[&[u8]]) {
    // In cluster mode the replication follows CLUSTER REPLICATE and failovers.
    if ctx.server.cluster.is_some() {
        return ctx.error("ERR REPLICAOF not allowed in cluster mode.");
    }
    if ctx.server.replication.failover.active() {
        return ctx.error("ERR REPLICAOF not allowed while failing over.");
    }
    if args[1].eq_ignore_ascii_case(b"no") && args[2].eq_ignore_ascii_case(b"one") {
        if ctx.server.replication.is_replica() {
            replica::unset_master(ctx.server);
            notice!(
                "MASTER MODE enabled (user request from 'id={} addr={}')",
                ctx.client.id,
                ctx.client.addr
            );
        }
        return ctx.out.ok();
    }
    if ctx.client.repl_role == ReplRole::Replica {
        return ctx.error("ERR Command is not valid when client is a replica.");
    }
    let Some(port) = crate::numbers::parse_i64(args[2]).filter(|p| (0..=65535).contains(p)) else {
        return ctx.error("ERR Invalid master port");
    };
    let host = String::from_utf8_lossy(args[1]).into_owned();
    if let Some((h, p)) = &ctx.server.replication.master_addr {
        if h.eq_ignore_ascii_case(&host) && *p as i64 == port {
            notice!("REPLICAOF would result into synchronization with the master we are already connected with. No operation performed.");
            return ctx.out.simple("OK Already connected to specified master");
        }
    }
    if !ctx.server.replication.is_replica() {
        super::blocking::disconnect_blocked(ctx.server);
    }
    replica::set_master(ctx.server, host.clone(), port as u16);
    notice!(
        "REPLICAOF {host}:{port} enabled (user request from 'id={} addr={}')",
        ctx.client.id,
        ctx.client.addr
    );
    ctx.out.ok();
}

/// ROLE
fn role(ctx: &mut Ctx, _args: &[&[u8]]) {
    let server = &*ctx.server;
    match (&server.replication.master_addr, &server.replication.link) {
        (Some((host, port)), Some(link)) => {
            ctx.out.array(5);
            ctx.out.bulk(b"slave");
            ctx.out.bulk(host.as_bytes());
            ctx.out.int(*port as i64);
            ctx.out.bulk(link.role_state().as_bytes());
            ctx.out.int(link.role_offset());
        }
        _ => {
            let replicas = master::role_entries(server);
            ctx.out.array(3);
            ctx.out.bulk(b"master");
            ctx.out.int(server.replication.offset() as i64);
            ctx.out.array(replicas.len());
            for (ip, port, offset) in replicas {
                ctx.out.array(3);
                ctx.out.bulk(ip.as_bytes());
                ctx.out.bulk(port.to_string().as_bytes());
                ctx.out.bulk(offset.to_string().as_bytes());
            }
        }
    }
}

/// WAIT numreplicas timeout
fn wait(ctx: &mut Ctx, args: &[&[u8]]) {
    if ctx.server.replication.is_replica() {
        return ctx.error("ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 if a replica is configured to be writable (which is not the default) writes to replicas are just local and are not propagated.");
    }
    let Some(numreplicas) = ctx.int_arg(args[1]) else {
        return;
    };
    let Some(deadline) = crate::zset_commands::parse::timeout_ms(ctx, args[2]) else {
        return;
    };
    let acked = master::acked(ctx.server, ctx.client.woff) as i64;
    if acked >= numreplicas || ctx.in_exec {
        return ctx.out.int(acked);
    }
    ctx.block = Some((Vec::new(), deadline));
    ctx.server.replication.master.ask_acks = true;
}

/// WAITAOF's refusal when the local AOF it would wait for is off (at the call, or turned
/// off while it waits).
const WAITAOF_NO_AOF: &str =
    "ERR WAITAOF cannot be used when numlocal is set but appendonly is disabled.";

/// WAITAOF numlocal numreplicas timeout
fn waitaof(ctx: &mut Ctx, args: &[&[u8]]) {
    use crate::zset_commands::parse;
    let Some(numlocal) = parse::int_in_range(ctx, args[1], 0, 1, None) else {
        return;
    };
    let positive = Some("ERR value is out of range, must be positive");
    let Some(numreplicas) = parse::int_in_range(ctx, args[2], 0, i64::MAX, positive) else {
        return;
    };
    let Some(deadline) = parse::timeout_ms(ctx, args[3]) else {
        return;
    };
    if ctx.server.replication.is_replica() {
        return ctx.error("ERR WAITAOF cannot be used with replica instances. Please also note that writes to replicas are just local and are not propagated.");
    }
    if numlocal > 0 && !ctx.server.config.aof.enabled {
        return ctx.error(WAITAOF_NO_AOF);
    }
    let (local, replicas) = aof_acks(ctx.server, ctx.client.woff);
    if (replicas >= numreplicas && local >= numlocal) || ctx.in_exec {
        ctx.out.array(2);
        ctx.out.int(local);
        return ctx.out.int(replicas);
    }
    ctx.block = Some((Vec::new(), deadline));
    ctx.server.replication.master.ask_acks = true;
}

/// WAITAOF's two counts for the stream up to `offset`: whether the local AOF fsynced it
/// (0 or 1), and how many replicas did.
fn aof_acks(server: &Server, offset: u64) -> (i64, i64) {
    let local = server.aof.fsynced_reploff >= offset as i64;
    (local as i64, master::aof_acked(server, offset) as i64)
}

/// What a client blocked in WAIT or WAITAOF waits for.
enum Waiting {
    /// WAIT numreplicas.
    Replicas(i64),
    /// WAITAOF numlocal numreplicas.
    Fsyncs(i64, i64),
}

/// What `client` waits for, when it is blocked in WAIT or WAITAOF (rather than for keys).
fn waiting(client: &Client) -> Option<Waiting> {
    let b = client.blocked.as_ref()?;
    let count = |i: usize| {
        b.command
            .get(i)
            .and_then(|n| crate::numbers::parse_i64(n))
            .unwrap_or(0)
    };
    let name = b.command.first()?;
    if name.eq_ignore_ascii_case(b"wait") {
        Some(Waiting::Replicas(count(1)))
    } else if name.eq_ignore_ascii_case(b"waitaof") {
        Some(Waiting::Fsyncs(count(1), count(2)))
    } else {
        None
    }
}

/// Whether a blocked client waits in WAIT or WAITAOF (rather than for keys).
pub fn is_wait(client: &Client) -> bool {
    waiting(client).is_some()
}

/// The reply of a WAIT or WAITAOF that ends now: how many replicas acknowledged its write
/// (WAIT); whether the local AOF and how many replicas' fsynced it (WAITAOF).
pub fn wait_reply(server: &Server, lease: &mut Lease) {
    let offset = lease.client.woff;
    let kind = waiting(&lease.client);
    let mut out = ReplyWriter::new(&mut lease.out, lease.client.resp3);
    match kind {
        Some(Waiting::Fsyncs(..)) => {
            let (local, replicas) = aof_acks(server, offset);
            out.array(2);
            out.int(local);
            out.int(replicas);
        }
        _ => out.int(master::acked(server, offset) as i64),
    }
}

/// Where a client in WAIT or WAITAOF stands now.
pub enum WaitState {
    /// Not enough acknowledgements yet.
    Pending,
    /// Enough: [`wait_reply`] answers it.
    Satisfied,
    /// It can no longer be satisfied: the error to answer.
    Refused(&'static str),
}

/// Where the WAIT or WAITAOF of `client` stands.
pub fn wait_state(server: &Server, client: &Client) -> WaitState {
    let offset = client.woff;
    let satisfied = match waiting(client) {
        None => false,
        Some(Waiting::Replicas(wanted)) => master::acked(server, offset) as i64 >= wanted,
        Some(Waiting::Fsyncs(local, _)) if local > 0 && !server.config.aof.enabled => {
            return WaitState::Refused(WAITAOF_NO_AOF)
        }
        Some(Waiting::Fsyncs(local, replicas)) => {
            let (fsynced, acked) = aof_acks(server, offset);
            fsynced >= local && acked >= replicas
        }
    };
    if satisfied {
        WaitState::Satisfied
    } else {
        WaitState::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_command_is_in_the_lookup() {
        for c in &COMMANDS {
            assert!(
                super::super::lookup(c.name.as_bytes()).is_some(),
                "{}",
                c.name
            );
        }
    }
}
