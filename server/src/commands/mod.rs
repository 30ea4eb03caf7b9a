//! Commands: the table, the dispatcher and the context handlers run in.
//!
//! Flow for one request: look the name up (case-insensitively), check arity and
//! authentication, queue it when inside MULTI, otherwise [`call`] its handler, which writes
//! the reply through [`Ctx`]. Statistics (commandstats, errorstats, slowlog) are kept here,
//! so handlers only do their command's work.

mod acl_cmd;
pub(crate) mod admission;
mod blocking;
pub(crate) mod client_cmd;
mod cluster_cmd;
pub(crate) mod cluster_route;
mod connection;
mod debug_cmd;
mod debug_digest;
mod debug_object;
mod dump;
pub(crate) mod expire;
mod info;
mod introspection;
mod keys;
pub mod keyspecs;
mod latency;
mod lolwut;
mod lookup;
mod memory;
mod migrate;
mod module_cmd;
pub mod monitor;
mod multi;
pub mod pause;
mod persistence;
mod pubsub;
pub mod renamed;
pub mod replication;
mod server_cmds;
mod table;
pub(crate) mod tracking;
pub mod unreplied;

pub(crate) use acl_cmd::check_and_log as check_acl_and_log;
pub use acl_cmd::{load_at_start as load_acl_at_start, starts_authenticated};
pub use blocking::{
    block_or_null, client_gone, expire_blocked, first_present, next_deadline, refuse_blocked,
    serve_ready_keys, serve_waits,
};
pub use cluster_route::redirect_blocked_clients;
pub(crate) use introspection::info_of as introspection_info;
pub use keys::{write_scan_reply, ScanOptions};
pub use lookup::{Pick, PickMut};
pub use pubsub::{deliver_from_bus, publish_notifications};
pub use server_cmds::{help_reply, subcommand_syntax_error, SlowLog};
pub use table::{all, container, lookup, Command, Flags, StatSlot};
pub use tracking::after_round as tracking_round;

use crate::clients::{Client, ReplyMode};
use crate::clock::unix_us;
use crate::errors;
use crate::resp::reply::ReplyWriter;
use crate::server::Server;
use crate::stats::Stats;
use std::time::Duration;

/// A handler: runs one command whose arity was checked.
pub type Handler = fn(&mut Ctx, &[&[u8]]);

/// What a handler sees: the server, its client, and the reply writer.
pub struct Ctx<'a> {
    /// The whole server.
    pub server: &'a mut Server,
    /// The client running the command.
    pub client: &'a mut Client,
    /// Where the reply goes.
    pub out: ReplyWriter<'a>,
    /// Time of the command, Unix milliseconds (one value for a whole command, as Redis).
    pub now_ms: u64,
    /// Where the command's changes propagate (a script's redis.set_repl).
    pub propagate_to: crate::propagate::Targets,
    /// The same time in microseconds (TIME's; a script's or EXEC's commands keep the
    /// caller's, as Redis's cached time).
    pub now_us: u64,
    /// Set when the handler replied with an error.
    failed: bool,
    /// Set when running inside EXEC (blocking commands must not block).
    pub in_exec: bool,
    /// Set by a blocking command that must wait: keys and timeout.
    pub block: Option<(Vec<Vec<u8>>, Option<u64>)>,
    /// The command a waiting client runs again, when not the one received (XREAD's `$`
    /// rewritten to the ids it stood for).
    pub blocked_command: Option<Vec<Vec<u8>>>,
    /// What the running command propagates instead of itself (see [`crate::propagate`]).
    rewrite: crate::propagate::Rewrite,
    /// Services the other clients while this command runs long (a busy script).
    pub while_blocked: Option<&'a mut dyn WhileBlocked>,
    /// A blocked command run again now that its keys are ready (not shown to MONITOR
    /// again).
    pub reprocessing: bool,
}

/// What `net` gives a command that may run long (a script past busy-reply-threshold):
/// servicing the other clients meanwhile, as Redis's processEventsWhileBlocked.
pub trait WhileBlocked {
    /// Reads and answers what the other connections sent (the running client's excepted).
    fn process_events(&mut self, server: &mut Server);
}

/// `while_blocked` lent for one call: an `Option::as_deref_mut` that also shortens the trait
/// object's lifetime, which a `&mut dyn` passed on down needs.
pub fn lend<'s>(
    while_blocked: &'s mut Option<&mut dyn WhileBlocked>,
) -> Option<&'s mut dyn WhileBlocked> {
    while_blocked
        .as_mut()
        .map(|w| &mut **w as &mut dyn WhileBlocked)
}

impl<'a> Ctx<'a> {
    /// A context for one command of `client`, replying into `wbuf` in the client's protocol.
    pub fn new(server: &'a mut Server, client: &'a mut Client, wbuf: &'a mut Vec<u8>) -> Self {
        let resp3 = client.resp3;
        let now_us = unix_us();
        Ctx {
            server,
            client,
            out: ReplyWriter::new(wbuf, resp3),
            now_ms: now_us / 1000,
            now_us,
            propagate_to: crate::propagate::Targets::ALL,
            failed: false,
            in_exec: false,
            block: None,
            blocked_command: None,
            rewrite: Default::default(),
            while_blocked: None,
            reprocessing: false,
        }
    }

    /// Propagates `argv` in place of the running command (called again: one more command
    /// after it), as Redis's rewriteClientCommandVector / alsoPropagate. Only the commands
    /// whose replay would differ need it: the default is the command as received, when it
    /// changed the dataset.
    pub fn propagate_instead(&mut self, argv: &[&[u8]]) {
        if self.server.propagation.enabled() {
            self.rewrite.instead(argv);
        }
    }

    /// Whether what the running command propagates is collected (an AOF or a replica
    /// takes it): a rewritten command needs building only then.
    pub fn propagating(&self) -> bool {
        self.server.propagation.enabled()
    }

    /// The running command propagates nothing (Redis's preventCommandPropagation).
    pub fn propagate_nothing(&mut self) {
        self.rewrite.nothing();
    }

    /// The running command propagates even when it changed nothing (FLUSHALL, FLUSHDB).
    pub fn force_propagation(&mut self) {
        self.rewrite.force();
    }

    /// The running command goes to the replicas, and not to the AOF, whatever it changed
    /// (PUBLISH and SPUBLISH outside cluster mode, as Redis's PROPAGATE_REPL).
    pub fn force_propagation_to_replicas(&mut self) {
        self.rewrite.force_to(crate::propagate::Targets::REPLICAS);
    }

    /// How many bytes the reply buffer may hold before the client passes its hard output
    /// limit (`usize::MAX` when it has none, or is a script's or the AOF's client). A
    /// command writing a reply of a client-chosen length (SRANDMEMBER, HRANDFIELD,
    /// ZRANDMEMBER with a negative count) stops once past it and calls
    /// [`Ctx::close_for_output_limit`], as Redis stops at CLIENT_CLOSE_ASAP.
    pub fn reply_cap(&self) -> usize {
        if self.client.fd < 0 {
            return usize::MAX;
        }
        match crate::net::limits::output_limit_of(&self.server.config, self.client).hard {
            0 => usize::MAX,
            hard => usize::try_from(hard).unwrap_or(usize::MAX),
        }
    }

    /// Closes the client whose reply was cut short past its output limit (logged as Redis
    /// logs it): the partial reply is never followed by another one.
    pub fn close_for_output_limit(&mut self) {
        crate::clients::warn_output_limit(self.client, true);
        self.client.close_after_reply = true;
    }

    /// Replies with an error and counts it (errorstats).
    pub fn error(&mut self, message: &str) {
        record_error(
            &mut self.out,
            &mut self.server.stats,
            &mut self.failed,
            message,
        );
    }

    /// Replies with an error already counted in errorstats (a script passing on the error
    /// of a command it called): the command still counts as failed.
    pub fn error_counted(&mut self, message: &str) {
        self.out.error(message);
        self.failed = true;
    }

    /// The syntax error reply.
    pub fn syntax_error(&mut self) {
        self.error(errors::SYNTAX);
    }

    /// Parses an integer argument or replies "value is not an integer or out of range".
    pub fn int_arg(&mut self, arg: &[u8]) -> Option<i64> {
        let v = crate::numbers::parse_i64(arg);
        if v.is_none() {
            self.error(errors::NOT_AN_INTEGER);
        }
        v
    }

    /// The database the client selected.
    pub fn db(&self) -> usize {
        self.client.db
    }

    /// Fires keyspace event `name` of class `class` (a [`crate::pubsub::notify`] bit) for
    /// `key` of the client's database (Redis's notifyKeyspaceEvent).
    #[inline]
    pub fn notify(&mut self, class: u32, name: &'static str, key: &[u8]) {
        let db = self.client.db;
        self.server.keyspace.notifier.fire(class, name, db, key);
    }
}

/// Writes an error reply, counts it (errorstats) and marks the command failed: the body of
/// [`Ctx::error`], for handlers holding split borrows of the context.
fn record_error(out: &mut ReplyWriter, stats: &mut Stats, failed: &mut bool, message: &str) {
    out.error(message);
    stats.count_error(message);
    *failed = true;
}

/// Builds the command metadata (COMMAND INFO and DOCS, the key specs) at start-up, as Redis
/// builds its command table: so used_memory does not jump by a megabyte or more at the first
/// COMMAND, ACL key check or tracked read, past a maxmemory set just above it.
pub fn load_metadata() {
    introspection::load_now();
    keyspecs::load_now();
}

/// Runs one request from a client: lookup, checks, MULTI queuing, then the call.
pub fn execute(server: &mut Server, client: &mut Client, wbuf: &mut Vec<u8>, args: &[&[u8]]) {
    execute_with(server, client, wbuf, args, None);
}

/// [`execute`], with what services the other clients if the command runs long (a script).
pub fn execute_with<'a>(
    server: &'a mut Server,
    client: &'a mut Client,
    wbuf: &'a mut Vec<u8>,
    args: &[&[u8]],
    while_blocked: Option<&'a mut dyn WhileBlocked>,
) {
    if args.is_empty() {
        return;
    }
    let reply_start = wbuf.len();
    let mut ctx = Ctx::new(server, client, wbuf);
    ctx.while_blocked = while_blocked;
    let mut called = None;
    let mut own_pushes = Vec::new();
    match resolve(&mut ctx, args) {
        Some(cmd) if pause::postpone_if_paused(&mut ctx, cmd, args) => return,
        Some(cmd) => {
            if let (Some(queue), false) = (
                ctx.client.multi.as_mut(),
                cmd.flags.contains(Flags::MULTI_CONTROL),
            ) {
                queue.push((cmd, args.iter().map(|a| a.to_vec()).collect()));
                ctx.out.simple("QUEUED");
            } else {
                let outer = ctx.server.pushes.start(ctx.client.id, ctx.client.resp3);
                let started_us = ctx.now_us;
                call_since(&mut ctx, cmd, args, started_us);
                own_pushes = ctx.server.pushes.finish(outer);
                called = Some(cmd);
                if let Some((keys, deadline)) = ctx.block.take() {
                    let stored = ctx.blocked_command.take();
                    let stored: Option<Vec<&[u8]>> = stored
                        .as_ref()
                        .map(|c| c.iter().map(Vec::as_slice).collect());
                    let command = stored.as_deref().unwrap_or(args);
                    blocking::block_client(ctx.server, ctx.client, keys, deadline, command);
                }
            }
        }
        None => {
            if ctx.client.multi.is_some() {
                ctx.client.multi_failed = true;
            }
        }
    }
    if ctx.client.cluster.asking {
        cluster_route::after_command(&mut ctx, args[0]);
    }
    apply_reply_mode(&mut ctx, reply_start, called, args);
    // The messages the command published to this client follow its whole reply (Redis
    // 7.2's pending push messages), whatever CLIENT REPLY says.
    if !own_pushes.is_empty() {
        ctx.out.raw(&own_pushes);
    }
    // Keyspace notifications follow the reply (and a whole EXEC's or script's), as Redis
    // 7.2's pending push messages; not while a busy script lets this client in. (Looked
    // at here first: most commands fire none, or none that anyone listens to.)
    if ctx.server.keyspace.notifier.has_pending() && ctx.server.scripting.running.is_none() {
        let Ctx {
            server,
            client,
            out,
            ..
        } = &mut ctx;
        pubsub::publish_notifications(server, Some((client, out)));
    }
    // CLIENT CACHING is only ever set while tracking is on, so no client tracking and an
    // empty key table mean nothing to do (and nothing on the command path).
    if let Some(cmd) = called.filter(|_| ctx.server.tracking.active()) {
        let Ctx {
            server,
            client,
            out,
            ..
        } = &mut ctx;
        tracking::after_command(server, client, out, cmd.name);
    }
}

/// A replica's command `args` wrote a reply (from `reply_start`): Redis's warnings (the
/// error one too when it is an error), naming the command even when it was refused, and
/// the replica is closed.
fn replica_replied(ctx: &mut Ctx, reply_start: usize, called: Option<&Command>, args: &[&[u8]]) {
    let named =
        called.or_else(
            || match renamed::find_request(&ctx.server.config.renamed_commands, args) {
                Ok(cmd) | Err(renamed::Unknown::Subcommand(cmd)) => Some(cmd),
                Err(renamed::Unknown::Command) => None,
            },
        );
    let name = named.map_or("<unknown>", |c| c.name);
    let reply = ctx.out.since(reply_start);
    if let Some(error) = reply.strip_prefix(b"-") {
        let line = error.split(|&b| b == b'\r').next().unwrap_or_default();
        let text = unreplied::error_text(line);
        unreplied::report(ctx.server, unreplied::Source::Replica, &text, Some(name));
    }
    let info = client_cmd::describe(ctx.client, ctx.client.io, Some(name));
    crate::warning!("Replica generated a reply to command '{name}', disconnecting it: {info}");
    ctx.client.close_after_reply = true;
}

/// CLIENT REPLY OFF / SKIP: drop what this command wrote, unless it ran and its replies are
/// pub/sub confirmations, which Redis 7.2 pushes regardless.
fn apply_reply_mode(ctx: &mut Ctx, reply_start: usize, called: Option<&Command>, args: &[&[u8]]) {
    if ctx.client.repl_role == crate::clients::ReplRole::Replica
        && !called.is_some_and(|c| c.name == "sync" || c.name == "psync")
    {
        // A replica's connection carries the stream: a command that answered it is logged
        // and the replica dropped, as Redis's _addReplyToBufferOrList does.
        if ctx.out.position() > reply_start {
            replica_replied(ctx, reply_start, called, args);
        }
        ctx.out.truncate(reply_start);
        return;
    }
    let drop = |ctx: &mut Ctx| {
        if !called.is_some_and(pubsub::replies_are_pushes) {
            ctx.out.truncate(reply_start);
        }
    };
    match ctx.client.reply_mode {
        ReplyMode::On => {}
        ReplyMode::Off => drop(ctx),
        ReplyMode::Skip => {
            drop(ctx);
            ctx.client.reply_mode = ReplyMode::On;
        }
        ReplyMode::SkipNext => ctx.client.reply_mode = ReplyMode::Skip,
    }
}

/// Finds the command (or subcommand) and checks arity and authentication. Replies with the
/// error and returns None when the request is refused.
fn resolve(ctx: &mut Ctx, args: &[&[u8]]) -> Option<&'static Command> {
    let cmd = match renamed::find_request(&ctx.server.config.renamed_commands, args) {
        Ok(cmd) => cmd,
        Err(renamed::Unknown::Command) => {
            // Redis formats these with %s, so each name or argument ends at its first NUL.
            let mut shown: Vec<u8> = Vec::new();
            for arg in &args[1..] {
                if shown.len() >= 128 {
                    break;
                }
                let room = 128 - shown.len();
                let text = errors::until_nul(arg);
                shown.push(b'\'');
                shown.extend_from_slice(&text[..text.len().min(room)]);
                shown.extend_from_slice(b"' ");
            }
            let name = errors::shown_128(args[0]);
            reject(
                ctx,
                None,
                &format!(
                    "ERR unknown command '{name}', with args beginning with: {}",
                    String::from_utf8_lossy(&shown)
                ),
            );
            return None;
        }
        Err(renamed::Unknown::Subcommand(cmd)) => {
            let sub = errors::shown_128(args[1]);
            reject(
                ctx,
                None,
                &format!(
                    "ERR unknown subcommand '{sub}'. Try {} HELP.",
                    cmd.name.to_ascii_uppercase()
                ),
            );
            return None;
        }
    };
    if !cmd.arity_ok(args.len()) {
        reject(ctx, Some(cmd), &errors::wrong_arity(cmd.name));
        return None;
    }
    if cmd.flags.contains(Flags::PROTECTED) {
        if let Some(refusal) = protected_refusal(ctx, cmd) {
            reject(ctx, Some(cmd), &refusal);
            return None;
        }
    }
    if !ctx.client.authenticated
        && !cmd.flags.contains(Flags::NO_AUTH)
        && ctx.server.acl.auth_required()
    {
        reject(ctx, Some(cmd), errors::NOAUTH);
        return None;
    }
    if ctx.client.multi.is_some() && cmd.flags.contains(Flags::NO_MULTI) {
        reject(
            ctx,
            Some(cmd),
            "ERR Command not allowed inside a transaction",
        );
        return None;
    }
    // Free for a user that may run anything (the default user without rules): one
    // comparison with the connection's cached answer.
    if !ctx.server.acl.unrestricted(&mut ctx.client.user) {
        if let Err(noperm) = acl_cmd::permit(ctx, cmd, args) {
            reject(ctx, Some(cmd), &noperm);
            return None;
        }
    }
    if cluster_route::needs_routing(ctx, cmd) && cluster_route::check(ctx, cmd, args).is_some() {
        return None;
    }
    if ctx.server.config.memory.maxmemory != 0
        || ctx
            .server
            .replication
            .may_refuse(ctx.server.config.repl.min_replicas_to_write)
        || ctx.server.is_loading()
        || ctx.client.repl_role == crate::clients::ReplRole::Replica
        || !ctx.server.rdb.last_bgsave_ok
        || ctx.server.aof.write_error().is_some()
    {
        let refusal = admission::refusal(ctx.server, ctx.client, cmd, args);
        if ctx.server.tracking.active() {
            tracking::before_command(ctx.server, ctx.client, &mut ctx.out);
        }
        if let Some(refusal) = refusal {
            reject(ctx, Some(cmd), &refusal);
            return None;
        }
    }
    if let Some(refusal) = monitor::refusal(ctx.client, cmd) {
        reject(ctx, Some(cmd), refusal);
        return None;
    }
    if pubsub::in_subscribed_mode(ctx.client) && !cmd.flags.contains(Flags::SUBSCRIBED_CONTEXT) {
        reject(ctx, Some(cmd), &pubsub::not_in_subscribed_context(cmd.name));
        return None;
    }
    if ctx.server.scripting.busy() && !cmd.flags.contains(Flags::ALLOW_BUSY) {
        let busy = ctx.server.scripting.busy_error();
        reject(ctx, Some(cmd), busy);
        return None;
    }
    Some(cmd)
}

/// The refusal of a protected command (DEBUG, MODULE LOAD and its kin) that its
/// enable-*-command parameter does not allow to this client; Redis checks it right after
/// the arity, before authentication.
fn protected_refusal(ctx: &Ctx, cmd: &Command) -> Option<String> {
    let config = &ctx.server.config;
    let (command, parameter, value) = match cmd.name {
        "debug" => (
            "DEBUG",
            "enable-debug-command",
            &config.enable_debug_command,
        ),
        _ => (
            "MODULE",
            "enable-module-command",
            &config.enable_module_command,
        ),
    };
    let local = ctx.client.addr.is_local();
    if crate::config::protected_action_allowed(value, local) {
        return None;
    }
    Some(format!("ERR {command} command not allowed. If the {parameter} option is set to \"local\", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server."))
}

/// Adds what the command that just ran in `db` replays to the propagation unit, after the
/// keys expiry and eviction removed meanwhile; the outermost command ends the unit.
fn propagate(
    ctx: &mut Ctx,
    cmd: &Command,
    args: &[&[u8]],
    db: usize,
    changes_before: u64,
    rewrite: crate::propagate::Rewrite,
) {
    let server = &mut *ctx.server;
    for removal in server.keyspace.take_removed() {
        server.propagate_removal(removal);
    }
    let changed = server.keyspace.changes() != changes_before;
    if !cmd.flags.contains(Flags::MULTI_CONTROL) {
        let targets = ctx.propagate_to;
        server
            .propagation
            .command_to(db, args, changed, rewrite, targets);
    }
    if !ctx.in_exec {
        let before = server.propagation.pending_for_replicas();
        server
            .propagation
            .end_unit(!cmd.flags.contains(Flags::READONLY));
        let after = server.propagation.pending_for_replicas();
        if after > before {
            // WAIT waits for the stream up to the end of this write.
            ctx.client.woff = server.replication.offset() + after as u64;
        }
    }
}

/// Replies with an error for a refused request (counted as rejected_calls). A refused EXEC
/// discards the transaction and answers EXECABORT with the reason, as Redis does.
fn reject(ctx: &mut Ctx, cmd: Option<&'static Command>, message: &str) {
    if cmd.is_some_and(|c| c.name == "exec") {
        multi::end_transaction(ctx);
        let reason = message.strip_prefix("ERR ").unwrap_or(message);
        ctx.error(&format!(
            "EXECABORT Transaction discarded because of: {reason}"
        ));
    } else {
        ctx.error(message);
    }
    if let Some(cmd) = cmd {
        ctx.server
            .stats
            .command(cmd.slot.get(), cmd.name)
            .rejected_calls += 1;
    }
}

/// Runs a resolved command and keeps its statistics and slowlog entry.
pub fn call(ctx: &mut Ctx, cmd: &'static Command, args: &[&[u8]]) {
    call_since(ctx, cmd, args, unix_us());
}

/// [`call`] of a command whose run is timed from `started_us`, the wall clock's
/// microseconds: a client's command passes its context's time, read as the command
/// started, so the clock is read twice a command, as Redis's call() reads ustime() (its
/// cached time, and the start of the duration without a TSC clock) and again after it.
fn call_since(ctx: &mut Ctx, cmd: &'static Command, args: &[&[u8]], started_us: u64) {
    ctx.failed = false;
    let changes = ctx.server.keyspace.changes();
    let db = ctx.client.db;
    let outer = std::mem::take(&mut ctx.rewrite);
    // On a replica, its own clients' commands leave expired keys to the master's DELs.
    let replica_client = (ctx.server.replication.is_replica()
        && ctx.client.repl_role != crate::clients::ReplRole::Master)
        .then_some(!ctx.server.config.repl.read_only);
    let outer_client = ctx.server.keyspace.set_replica_client(replica_client);
    let monitored = !ctx.server.monitors.is_empty() && !ctx.reprocessing;
    let reply_start = ctx.out.position();
    if monitored && cmd.flags.contains(Flags::MONITOR_BEFORE) {
        monitor::feed(ctx, db, args);
    }
    (cmd.handler)(ctx, args);
    ctx.server.keyspace.set_replica_client(outer_client);
    if monitored && monitor::shown_after(cmd) {
        let db = ctx.client.db;
        monitor::feed(ctx, db, args);
    }
    let rewrite = std::mem::replace(&mut ctx.rewrite, outer);
    if ctx.server.propagation.enabled() {
        propagate(ctx, cmd, args, db, changes, rewrite);
    }
    if ctx.server.tracking.clients() > 0 {
        tracking::remember_reads(ctx.server, ctx.client, cmd, args);
    }
    let micros = unix_us().saturating_sub(started_us);
    let elapsed = Duration::from_micros(micros);
    ctx.client.last_command = cmd.name;
    if ctx.server.hotkeys.active {
        crate::hotkeys::record(ctx, cmd, args, micros, reply_start);
    }
    if !ctx.in_exec && ctx.server.scripting.running.is_none() {
        // Only a top-level command's time (Redis's execution_nesting 0).
        ctx.server.stats.eventloop.command(elapsed);
    }
    if ctx.block.as_ref().is_some_and(|(keys, _)| !keys.is_empty()) {
        // As Redis: a call that blocks on keys is counted when the wait ends (the run that
        // serves it, or blocking::count_unblocked for a timeout or an error).
        return;
    }
    let event = if cmd.flags.contains(Flags::FAST) {
        "fast-command"
    } else {
        "command"
    };
    crate::latency::sample_ms(event, micros / 1000);
    let tracking = ctx.server.config.latency_tracking.enabled;
    let stats = ctx.server.stats.command(cmd.slot.get(), cmd.name);
    stats.calls += 1;
    stats.usec += micros;
    if ctx.failed {
        stats.failed_calls += 1;
    }
    if tracking {
        stats.latency.record(elapsed.as_nanos() as u64);
    }
    ctx.server.stats.commands_processed += 1;
    server_cmds::slowlog_record(ctx, cmd, args, micros);
}
