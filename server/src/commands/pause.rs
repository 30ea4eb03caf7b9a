//! Pausing clients, as Redis 7.2's pauseActions: CLIENT PAUSE / CLIENT UNPAUSE, and the
//! pauses a shutdown and a failover (FAILOVER, CLUSTER FAILOVER) hold while replicas
//! catch up.
//!
//! Each [`Purpose`] holds its own set of paused actions and its own end; the pause in
//! effect is the union of the actions of the purposes whose end is still ahead. A paused
//! client's command is postponed (Redis's blockPostponeClient): it stays with the client,
//! which reads nothing more, and runs again from the start of the dispatcher once the
//! pause becomes less restrictive (where it may be postponed again). The master's stream
//! on a replica is held the same way, where it stands ([`holds_master_command`]).
//! Replicas are never paused; a write pause also holds expiry (keys whose time came look missing but stay)
//! and eviction.

use super::{Command, Ctx, Flags};
use crate::clients::{Client, ReplRole};
use crate::clock::unix_ms;
use crate::server::Server;

/// Commands that change nothing themselves but may add to the replication stream
/// (Redis's CMD_MAY_REPLICATE: PFCOUNT may rewrite a sparse HyperLogLog's cache).
const MAY_REPLICATE: [&str; 6] = ["eval", "evalsha", "fcall", "pfcount", "publish", "spublish"];

/// Whether `cmd` is one of Redis's may-replicate commands (held by a write pause, refused
/// in read-only scripts as writes are).
pub fn may_replicate_command(cmd: &Command) -> bool {
    MAY_REPLICATE.contains(&cmd.name)
}

/// Clients' write commands (and those that may replicate) are held.
pub const CLIENT_WRITE: u32 = 1;
/// Every command of clients is held.
pub const CLIENT_ALL: u32 = 1 << 1;
/// Keys are not expired (lookups see expired keys as missing but leave them).
pub const EXPIRE: u32 = 1 << 2;
/// Keys are not evicted.
pub const EVICT: u32 = 1 << 3;
/// Nothing is sent to replicas on the server's own account (no PING on the stream), so
/// their offsets can match the master's.
pub const REPLICA: u32 = 1 << 4;
/// A write pause: what CLIENT PAUSE WRITE, a shutdown and a failover hold.
pub const WRITE_SET: u32 = CLIENT_WRITE | EXPIRE | EVICT | REPLICA;
/// A pause of everything (CLIENT PAUSE ALL).
pub const ALL_SET: u32 = CLIENT_ALL | EXPIRE | EVICT | REPLICA;

/// Why clients are paused (Redis's pause_purpose); each has its own actions and end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// CLIENT PAUSE.
    ClientCommand = 0,
    /// SHUTDOWN waiting for replicas to catch up.
    Shutdown = 1,
    /// FAILOVER, or CLUSTER FAILOVER on the master side.
    Failover = 2,
}

/// One purpose's pause.
#[derive(Debug, Clone, Copy, Default)]
struct Pause {
    actions: u32,
    end_ms: u64,
}

/// The pauses of every purpose, the actions paused now, and the postponed clients.
#[derive(Debug, Default)]
pub struct Pauses {
    purposes: [Pause; 3],
    actions: u32,
    /// Clients whose command waits for the pause to end, in arrival order.
    postponed: Vec<u64>,
    /// The pause became less restrictive: the postponed clients run again.
    release: bool,
}

impl Pauses {
    /// The actions paused now (as of the last update: the end of a pause is seen by
    /// [`paused`] and [`release`]).
    pub fn actions(&self) -> u32 {
        self.actions
    }

    /// The nearest end of a pause in effect, Unix milliseconds (for the loop's wait).
    pub fn next_end(&self) -> Option<u64> {
        self.purposes
            .iter()
            .filter(|p| p.actions != 0)
            .map(|p| p.end_ms)
            .min()
    }

    /// Recomputes the actions in effect at `now_ms`; forgets the pauses that ended. True
    /// when fewer client commands are held than before.
    fn update(&mut self, now_ms: u64) -> bool {
        let before = self.actions;
        self.actions = 0;
        for p in &mut self.purposes {
            if p.end_ms > now_ms {
                self.actions |= p.actions;
            } else {
                *p = Pause::default();
            }
        }
        let clients = CLIENT_WRITE | CLIENT_ALL;
        let lighter = (self.actions & clients) < (before & clients);
        self.release |= lighter;
        lighter
    }

    /// Sets `purpose`'s pause to `actions` until `end_ms` (a later end already set stays).
    fn set(&mut self, purpose: Purpose, end_ms: u64, actions: u32, now_ms: u64) {
        let p = &mut self.purposes[purpose as usize];
        p.actions = actions;
        p.end_ms = p.end_ms.max(end_ms);
        self.update(now_ms);
    }

    /// Ends `purpose`'s pause.
    fn clear(&mut self, purpose: Purpose, now_ms: u64) {
        self.purposes[purpose as usize] = Pause::default();
        self.update(now_ms);
    }
}

/// Pauses `actions` for `purpose` until `end_ms` (Unix milliseconds), as Redis's
/// pauseActions: the purpose's actions are replaced, its end only moves later.
pub fn pause(server: &mut Server, purpose: Purpose, end_ms: u64, actions: u32) {
    server.pauses.set(purpose, end_ms, actions, unix_ms());
    sync_expiry(server);
}

/// Ends `purpose`'s pause (Redis's unpauseActions); the clients it held run again at the
/// end of the loop's iteration, unless another purpose still holds them.
pub fn unpause(server: &mut Server, purpose: Purpose) {
    server.pauses.clear(purpose, unix_ms());
    sync_expiry(server);
}

/// Whether any of `actions` is paused now (Redis's isPausedActionsWithUpdate).
pub fn paused(server: &mut Server, actions: u32) -> bool {
    if server.pauses.actions & actions == 0 {
        return false;
    }
    server.pauses.update(unix_ms());
    sync_expiry(server);
    server.pauses.actions & actions != 0
}

/// The keyspace holds expired keys while expiry is paused.
fn sync_expiry(server: &mut Server) {
    let hold = server.pauses.actions & EXPIRE != 0;
    server.keyspace.hold_expiry(hold);
}

/// The dispatcher's check, after the others and before MULTI queues the command: when the
/// pause holds `cmd` for this client, the command is kept to run again once the pause
/// lifts, and true is returned (nothing is replied now). Inlined for its common answer, no
/// client pause in effect (one test of the pause flags instead of a call).
#[inline]
pub fn postpone_if_paused(ctx: &mut Ctx, cmd: &'static Command, args: &[&[u8]]) -> bool {
    if !pausing_clients(ctx.server) || ctx.client.repl_role != ReplRole::Normal {
        return false;
    }
    postpone_if_held(ctx, cmd, args)
}

/// [`postpone_if_paused`] while a client pause is in effect.
#[inline(never)]
fn postpone_if_held(ctx: &mut Ctx, cmd: &'static Command, args: &[&[u8]]) -> bool {
    let held = holds(ctx.server, ctx.client, cmd, args);
    if held {
        // As Redis's blockPostponeClient: the client counts among the blocked ones.
        ctx.client.postponed = Some(args.iter().map(|a| a.to_vec()).collect());
        ctx.client.last_command = cmd.name;
        ctx.server.pauses.postponed.push(ctx.client.id);
        ctx.server.clients.count_blocked(true);
    }
    held
}

/// Whether a CLIENT PAUSE (WRITE or ALL) may be in effect: its flags are set (whether its
/// time has passed is for [`paused`] to say).
#[inline]
fn pausing_clients(server: &Server) -> bool {
    server.pauses.actions & (CLIENT_WRITE | CLIENT_ALL) != 0
}

/// Whether the pause in effect holds `cmd` from `client`.
fn holds(server: &mut Server, client: &Client, cmd: &Command, args: &[&[u8]]) -> bool {
    if !pausing_clients(server) {
        return false;
    }
    paused(server, CLIENT_ALL)
        || (paused(server, CLIENT_WRITE) && may_replicate(server, client, cmd, args))
}

/// Whether the pause in effect holds the command `args` of this replica's master (Redis
/// pauses the master's client as any other: its stream is read on, slave_read_repl_offset
/// grows, but nothing more is applied, and slave_repl_offset stays, until the pause
/// lifts).
pub fn holds_master_command(server: &mut Server, master: &Client, args: &[&[u8]]) -> bool {
    if !pausing_clients(server) {
        return false;
    }
    // As the dispatcher finds it; a request it refuses is not held.
    match super::renamed::find_request(&server.config.renamed_commands, args) {
        Ok(cmd) => holds(server, master, cmd, args),
        Err(_) => false,
    }
}

/// Whether a command writes or may add to the replication stream (Redis's
/// is_may_replicate_command): a write, a may-replicate command, a script whose flags allow
/// writes, or an EXEC whose queue holds one of those.
fn may_replicate(server: &Server, client: &Client, cmd: &Command, args: &[&[u8]]) -> bool {
    if cmd.name == "exec" {
        return client.multi.as_ref().is_some_and(|queue| {
            queue.iter().any(|(c, argv)| {
                let argv: Vec<&[u8]> = argv.iter().map(Vec::as_slice).collect();
                c.name != "exec" && may_replicate(server, client, c, &argv)
            })
        });
    }
    if let Some(flags) = crate::scripting::declared_flags(server, cmd.name, args) {
        // A script or function that declared its flags replicates only if it may write.
        return !flags.no_writes;
    }
    cmd.flags.contains(Flags::WRITE) || may_replicate_command(cmd)
}

/// Runs again the commands of the postponed clients once the pause became less
/// restrictive (or ended), in arrival order; the clients are woken to read on. Called by
/// the event loop once per iteration; true when some ran.
pub fn release(server: &mut Server) -> bool {
    if server.pauses.actions != 0 {
        server.pauses.update(unix_ms());
        sync_expiry(server);
    }
    if !std::mem::take(&mut server.pauses.release) {
        return false;
    }
    crate::replication::replica::pause_lighter(server);
    if server.pauses.postponed.is_empty() {
        return false;
    }
    for id in std::mem::take(&mut server.pauses.postponed) {
        let Some(mut lease) = server.clients.lease_id(id) else {
            continue;
        };
        if let Some(command) = lease.client.postponed.take() {
            server.clients.count_blocked(false);
            let args: Vec<&[u8]> = command.iter().map(Vec::as_slice).collect();
            super::execute(server, &mut lease.client, &mut lease.out, &args);
            lease.doomed |= lease.client.close_after_reply;
        }
        server.clients.restore(lease, true);
    }
    true
}

/// Forgets the postponed command of a client whose connection closed.
pub fn client_gone(server: &mut Server, client: &mut Client) {
    if client.postponed.take().is_some() {
        server.clients.count_blocked(false);
    }
}

/// CLIENT PAUSE timeout [WRITE|ALL]
pub fn client_pause(ctx: &mut Ctx, args: &[&[u8]]) {
    if args.len() > 4 {
        return super::subcommand_syntax_error(ctx, args);
    }
    let all = match args.get(3) {
        None => true,
        Some(mode) if mode.eq_ignore_ascii_case(b"WRITE") => false,
        Some(mode) if mode.eq_ignore_ascii_case(b"ALL") => true,
        Some(_) => return ctx.error("ERR CLIENT PAUSE mode must be WRITE or ALL"),
    };
    // 0 is an end already past: the pause ends at the next check.
    let Some(end_ms) = crate::zset_commands::parse::timeout_ms(ctx, args[2]) else {
        return;
    };
    let end_ms = end_ms.unwrap_or(0);
    let current = ctx.server.pauses.purposes[Purpose::ClientCommand as usize].actions;
    // A write pause does not lighten a pause of everything still running.
    let actions = if all || current & CLIENT_ALL != 0 {
        ALL_SET
    } else {
        WRITE_SET
    };
    pause(ctx.server, Purpose::ClientCommand, end_ms, actions);
    ctx.out.ok();
}

/// CLIENT UNPAUSE
pub fn client_unpause(ctx: &mut Ctx, _args: &[&[u8]]) {
    unpause(ctx.server, Purpose::ClientCommand);
    ctx.out.ok();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_union_of_the_purposes_is_in_effect_until_each_ends() {
        let mut p = Pauses::default();
        p.set(Purpose::ClientCommand, 1_000, WRITE_SET, 0);
        p.set(Purpose::Failover, 2_000, ALL_SET, 0);
        assert_eq!(p.actions(), WRITE_SET | ALL_SET);
        assert!(p.update(1_500), "the pause of everything holds still");
        assert_eq!(p.actions(), ALL_SET);
        assert!(p.update(2_000));
        assert_eq!(p.actions(), 0);
        assert_eq!(p.next_end(), None);
    }

    #[test]
    fn a_later_end_stays_and_clearing_one_purpose_keeps_the_others() {
        let mut p = Pauses::default();
        p.set(Purpose::Shutdown, 5_000, WRITE_SET, 0);
        p.set(Purpose::Shutdown, 1_000, WRITE_SET, 0);
        assert_eq!(p.next_end(), Some(5_000));
        p.set(Purpose::ClientCommand, 3_000, ALL_SET, 0);
        p.clear(Purpose::ClientCommand, 10);
        assert!(p.release, "lighter than before: the held clients run again");
        assert_eq!(p.actions(), WRITE_SET);
    }
}
