//! One script invocation, as Redis's scriptPrepareForRun / luaCallFunction / scriptCall:
//! the checks its shebang flags call for, the script client its commands run as, the
//! count hook that makes a long script busy (other clients get BUSY and may SCRIPT KILL
//! it), and the reply.
//!
//! While the script runs, the `redis` functions reach this run through the engine's
//! [`ActiveRun`] slot: a pointer to the [`Run`] on [`run`]'s stack, set before the script
//! starts and cleared before `run` returns, so it is only dereferenced while the `Run` it
//! points to is alive and nothing else borrows it (Lua calls back one function at a time).

use super::api::{self, Pending};
use super::cache::ScriptFlags;
use super::engine::{ActiveRun, Engine};
use super::{convert, Running};
use crate::clients::Client;
use crate::commands::renamed::{find_request, Renames};
use crate::commands::{self, Command, Ctx, Flags};
use crate::propagate::Targets;
use mlua::{HookTriggers, Lua, MultiValue, Value, VmState};
use std::borrow::Cow;
use std::time::Instant;

/// Instructions between two calls of the busy hook (Redis's count).
const HOOK_PERIOD: u32 = 100_000;

/// The id of the script client (connections' ids start at 1): MONITOR shows its commands
/// as `[<db> lua]`.
pub const SCRIPT_CLIENT_ID: u64 = 0;

/// The client scripts' commands run as (Redis's lua_client): no connection, authenticated.
pub fn script_client() -> Client {
    Client::internal(SCRIPT_CLIENT_ID)
}

/// The invocation running now.
pub struct Run<'r, 'a> {
    /// The caller's command.
    ctx: &'r mut Ctx<'a>,
    /// The script client (taken from the scripting state for the run).
    client: Box<Client>,
    /// The reply of the command the script called last.
    reply: Vec<u8>,
    /// redis.setresp(3) was called.
    pub resp3: bool,
    /// Where the script's commands propagate (redis.set_repl).
    pub repl: Targets,
    /// Write commands are refused (EVAL_RO, `no-writes`).
    read_only: bool,
    /// `allow-oom`: commands that may grow memory run over maxmemory.
    allow_oom: bool,
    /// Memory was over maxmemory when the script started.
    script_oom: bool,
    /// SCRIPT KILL stopped the script.
    killed: bool,
    /// In cluster mode, the slot of the declared keys, else of the first key a command
    /// touched: the script's other commands must stay in it (Redis's original_c->slot).
    slot: Option<u16>,
    /// The commands' keys may be in any of this node's slots (`allow-cross-slot-keys`, or
    /// a script without a shebang line).
    cross_slot: bool,
    /// The caller's command (EVAL, EVALSHA, ...), for ACL LOG's client line.
    caller: &'static str,
}

/// The run the slot points to, if a script runs.
// The slot is shared (Rc<Cell>), the Run it points to is not: see the module comment.
#[allow(clippy::mut_from_ref)]
pub fn current(active: &ActiveRun) -> Option<&mut Run<'static, 'static>> {
    let p = active.get() as *mut Run<'static, 'static>;
    // SAFETY: see the module comment: the slot holds null or a live, unborrowed Run.
    unsafe { p.as_mut() }
}

/// The command arguments of a redis.call (Redis's luaArgsToRedisArgv): strings as they
/// are, numbers as `%.17g`.
pub fn command_args(args: &MultiValue) -> Result<Vec<Vec<u8>>, &'static str> {
    if args.is_empty() {
        return Err("Please specify at least one argument for this redis lib call");
    }
    args.iter()
        .map(|v| match v {
            Value::String(s) => Ok(s.as_bytes().to_vec()),
            Value::Integer(n) => Ok(n.to_string().into_bytes()),
            Value::Number(n) => Ok(convert::format_g(*n, 17)),
            _ => Err("Lua redis lib command arguments must be strings or integers"),
        })
        .collect()
}

/// The command (or subcommand) `argv` names under `renames` (rename-command), as Redis's
/// lookupCommand: a script calls a command by the name clients call it.
pub fn resolve(renames: &Renames, argv: &[Vec<u8>]) -> Option<&'static Command> {
    let head = [&argv[0][..], argv.get(1).map_or(&[][..], Vec::as_slice)];
    find_request(renames, &head[..argv.len().min(2)]).ok()
}

impl Run<'_, '_> {
    /// The command `argv` names under the server's renames (redis.acl_check_cmd's lookup).
    pub fn resolve(&self, argv: &[Vec<u8>]) -> Option<&'static Command> {
        resolve(&self.ctx.server.config.renamed_commands, argv)
    }

    /// Whether the caller's user may run `cmd` with `argv` (redis.acl_check_cmd).
    pub fn acl_allows(&self, cmd: &Command, argv: &[Vec<u8>]) -> bool {
        let args: Vec<&[u8]> = argv.iter().map(Vec::as_slice).collect();
        self.ctx
            .server
            .acl
            .check(&self.client.user, cmd, &args)
            .is_ok()
    }

    /// redis.call / redis.pcall: runs one command as the script client and converts its
    /// reply; with `raise_errors`, an error (refusal or error reply) is to be raised.
    pub fn call(
        &mut self,
        lua: &Lua,
        pending: &Pending,
        args: &MultiValue,
        raise_errors: bool,
    ) -> mlua::Result<Value> {
        let fail = |value: Value| match raise_errors {
            true => Err(pending.raise(value)),
            false => Ok(value),
        };
        let argv = match command_args(args) {
            Ok(argv) => argv,
            Err(text) => return fail(Value::Table(api::error_table(lua, text.as_bytes())?)),
        };
        super::ldb::log_command(lua, &argv);
        let cmd = match self.admit(&argv) {
            Ok(cmd) => cmd,
            Err((cmd, text)) => {
                // Counted here, as 7.2's scriptCall counts a refusal (errorstats, and the
                // command's rejected_calls), so not again when the script fails with it.
                let t = api::error_table(lua, text.as_bytes())?;
                let stats = &mut self.ctx.server.stats;
                stats.count_error(&String::from_utf8_lossy(
                    &t.raw_get::<mlua::LuaString>("err")?.as_bytes(),
                ));
                if let Some(cmd) = cmd {
                    stats.command(cmd.slot.get(), cmd.name).rejected_calls += 1;
                }
                t.raw_set("ignore_error_stats_update", true)?;
                return fail(Value::Table(t));
            }
        };
        self.client.resp3 = self.resp3;
        self.reply.clear();
        let (now_ms, now_us) = (self.ctx.now_ms, self.ctx.now_us);
        let mut inner = Ctx::new(self.ctx.server, &mut self.client, &mut self.reply);
        // Scripts never block (Redis's CLIENT_DENY_BLOCKING): blocking commands answer
        // at once, as inside EXEC.
        inner.in_exec = true;
        inner.now_ms = now_ms;
        inner.now_us = now_us;
        inner.propagate_to = self.repl;
        let args: Vec<&[u8]> = argv.iter().map(Vec::as_slice).collect();
        commands::call(&mut inner, cmd, &args);
        if self.ctx.server.tracking.clients() > 0 {
            commands::tracking::remember_reads(self.ctx.server, self.ctx.client, cmd, &args);
        }
        let converted = convert::reply_to_lua(lua, &self.reply)?;
        super::ldb::log_reply(lua, &self.reply);
        match converted {
            (value, true) => fail(value),
            (value, false) => Ok(value),
        }
    }

    /// Under the debugger: whether the script ran past busy-reply-threshold (5 s when it
    /// is 0) since it started or last stopped.
    pub fn debug_time_up(&self) -> bool {
        let limit = match self.ctx.server.config.busy_reply_threshold {
            0 => 5000,
            ms => ms,
        };
        self.ctx
            .server
            .scripting
            .running
            .as_ref()
            .is_some_and(|r| r.started.elapsed().as_millis() as u64 >= limit)
    }

    /// Under the debugger: the script's clock restarts after a stop.
    pub fn restart_clock(&mut self) {
        if let Some(running) = self.ctx.server.scripting.running.as_mut() {
            running.started = Instant::now();
        }
    }

    /// The checks of Redis's scriptCall before a command runs; the command and the error
    /// text (without its `ERR`) when the command is refused.
    fn admit(
        &mut self,
        argv: &[Vec<u8>],
    ) -> Result<&'static Command, (Option<&'static Command>, Cow<'static, str>)> {
        let cmd = self
            .resolve(argv)
            .ok_or((None, "Unknown Redis command called from script".into()))?;
        let refuse = |text: &'static str| Err((Some(cmd), text.into()));
        if !cmd.arity_ok(argv.len()) {
            return refuse("Wrong number of args calling Redis command from script");
        }
        if cmd.flags.contains(Flags::NOSCRIPT) && !self.ctx.server.scripting.deny_script_disabled {
            return refuse("This Redis command is not allowed from script");
        }
        if !self.ctx.server.acl.unrestricted(&mut self.client.user) {
            let args: Vec<&[u8]> = argv.iter().map(Vec::as_slice).collect();
            let user = self.client.user.clone();
            if let Err(d) = commands::check_acl_and_log(
                self.ctx,
                &user,
                cmd,
                &args,
                crate::acl::log::Context::Lua,
                self.caller,
            ) {
                let text = crate::acl::denial_message(&user.name, cmd.name, d);
                return Err((Some(cmd), format!("ACL failure in script: {text}").into()));
            }
        }
        let obeyed = obeys(self.ctx.client);
        let server = &mut *self.ctx.server;
        let writes = cmd.flags.contains(Flags::WRITE);
        let dirty = server.scripting.running.as_ref().is_some_and(|r| r.wrote);
        // Redis's scriptVerifyWriteCommandAllow: a script that already wrote is never
        // failed on the server's state.
        // As Redis: a may-replicate command (PUBLISH, ...) counts as a write here.
        if self.read_only && (writes || commands::pause::may_replicate_command(cmd)) {
            return refuse("Write commands are not allowed from read-only scripts.");
        }
        if writes && !dirty {
            if read_only_replica(server) && !obeyed {
                return refuse("-READONLY You can't write against a read only replica.");
            }
            if disk_error(server) {
                return refuse(MISCONF_DASH);
            }
            if !crate::replication::master::min_replicas_met(server) {
                return refuse("-NOREPLICAS Not enough good replicas to write.");
            }
        }
        let running = server.scripting.running.as_mut().expect("a script runs");
        if !self.allow_oom
            && server.config.memory.maxmemory != 0
            && !running.wrote
            && self.script_oom
            && cmd.flags.contains(Flags::DENYOOM)
        {
            return refuse(OOM_DASH);
        }
        if writes {
            running.wrote = true;
        }
        if self.ctx.server.cluster.is_some() {
            let args: Vec<&[u8]> = argv.iter().map(Vec::as_slice).collect();
            match commands::cluster_route::script_check(self.ctx, cmd, &args) {
                Err(text) => return refuse(text),
                Ok(Some(slot)) if !self.cross_slot => match self.slot {
                    None => self.slot = Some(slot),
                    Some(bound) if bound != slot => {
                        return refuse(
                            "Script attempted to access keys that do not hash to the same slot",
                        )
                    }
                    Some(_) => {}
                },
                Ok(_) => {}
            }
        }
        if !cmd.flags.contains(Flags::STALE) && commands::admission::serving_stale(self.ctx.server)
        {
            return refuse("Can not execute the command on a stale replica");
        }
        Ok(cmd)
    }

    /// The busy hook (Redis's scriptInterrupt): past busy-reply-threshold the script is
    /// busy, and from then on every call services the other clients; a kill asked meanwhile
    /// stops the script with an error no pcall keeps (the hook then runs at every line).
    fn interrupt(&mut self, lua: &Lua, engine: &Hooked) -> mlua::Result<VmState> {
        let threshold = self.ctx.server.config.busy_reply_threshold;
        let running = self
            .ctx
            .server
            .scripting
            .running
            .as_mut()
            .expect("a script runs");
        if !running.timed_out {
            let elapsed = running.started.elapsed().as_millis() as u64;
            if elapsed < threshold {
                return Ok(VmState::Continue);
            }
            crate::warning!(
                "Slow script detected: still in execution after {elapsed} milliseconds. You can try killing the script using the SCRIPT KILL command."
            );
            running.timed_out = true;
        }
        if let Some(events) = self.ctx.while_blocked.as_deref_mut() {
            events.process_events(self.ctx.server);
        }
        let kill = self.ctx.server.shutdown
            || self
                .ctx
                .server
                .scripting
                .running
                .as_ref()
                .is_some_and(|r| r.kill);
        if !kill {
            return Ok(VmState::Continue);
        }
        if !self.killed {
            crate::warning!("Lua script killed by user with SCRIPT KILL.");
            self.killed = true;
            set_hook(lua, engine, HookTriggers::EVERY_LINE)?;
        }
        Err(engine
            .pending
            .raise_text(lua, "Script killed by user with SCRIPT KILL..."))
    }
}

/// The MISCONF text as Redis's shared object carries it (code and all).
const MISCONF_DASH: &str = "-MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. Commands that may modify the data set are disabled, because this instance is configured to report errors during writes if RDB snapshotting fails (stop-writes-on-bgsave-error option). Please check the Redis logs for details about the RDB error.";
/// The OOM text as Redis's shared object carries it.
const OOM_DASH: &str = "-OOM command not allowed when used memory > 'maxmemory'.";

/// Writes are refused after a failed BGSAVE (stop-writes-on-bgsave-error).
fn disk_error(server: &crate::server::Server) -> bool {
    server.config.stop_writes_on_bgsave_error
        && !server.config.save.is_empty()
        && !server.rdb.last_bgsave_ok
}

/// What the busy hook needs of the engine.
#[derive(Clone)]
struct Hooked {
    active: ActiveRun,
    pending: Pending,
}

fn set_hook(lua: &Lua, hooked: &Hooked, triggers: HookTriggers) -> mlua::Result<()> {
    let hooked = hooked.clone();
    lua.set_hook(triggers, move |lua, _| match current(&hooked.active) {
        Some(run) => run.interrupt(lua, &hooked),
        None => Ok(VmState::Continue),
    })
}

/// What a run calls: an EVAL script or a library's function.
pub struct Callee<'s> {
    /// The interpreter it lives in.
    pub engine: Engine,
    /// The compiled script, or the function's callback.
    pub function: &'s mlua::Function,
    /// Its flags (a script's shebang, a function's registered flags).
    pub flags: ScriptFlags,
    /// The script's SHA1 or the function's name, as error replies name it.
    pub name: &'s str,
    /// For a function, the caller's command (FUNCTION STATS shows it); a function gets
    /// its keys and arguments as arguments, a script as the KEYS and ARGV globals.
    pub fcall: Option<&'s [&'s [u8]]>,
    /// The Lua debugger's session it runs under (SCRIPT DEBUG), if any.
    pub debug: Option<super::ldb::Shared>,
}

/// Refuses a script whose flags do not let it run now (Redis's scriptPrepareForRun);
/// returns whether memory is over maxmemory (for the per-command OOM check).
fn prepare(ctx: &mut Ctx, flags: ScriptFlags, ro: bool) -> Option<bool> {
    let obeyed = obeys(ctx.client);
    let server = &mut *ctx.server;
    let script_oom =
        server.config.memory.maxmemory != 0 && !crate::memory::perform_evictions(server);
    if flags.compat {
        // A script without flags runs nothing on a stale replica (EVAL itself is flagged
        // `stale`, so it got this far; one with flags was judged by them before).
        if crate::commands::admission::serving_stale(server) {
            ctx.error(crate::errors::MASTERDOWN);
            return None;
        }
        return Some(script_oom);
    }
    if flags.no_cluster && server.cluster.is_some() {
        ctx.error("ERR Can not run script on cluster, 'no-cluster' flag is set.");
        return None;
    }
    if !flags.no_writes {
        if read_only_replica(server) && !obeyed {
            ctx.error("READONLY Can not run script with write flag on readonly replica");
            return None;
        }
        if disk_error(server) && !obeyed {
            ctx.error("MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. Writable scripts are blocked. Use 'no-writes' flag for read only scripts.");
            return None;
        }
        if ro {
            ctx.error("ERR Can not execute a script with write flag using *_ro command.");
            return None;
        }
        if !crate::replication::master::min_replicas_met(server) {
            ctx.error(NOREPLICAS);
            return None;
        }
        if !flags.allow_oom && script_oom && !obeyed {
            ctx.error("OOM allow-oom flag is not set on the script, can not run it when used memory > 'maxmemory'");
            return None;
        }
    }
    Some(script_oom)
}

/// NOREPLICAS, as Redis's shared error.
const NOREPLICAS: &str = "NOREPLICAS Not enough good replicas to write.";

/// Whether the caller's commands are obeyed whatever this server's state (Redis's
/// mustObeyClient): the master's stream, the AOF's replay.
fn obeys(client: &crate::clients::Client) -> bool {
    client.repl_role == crate::clients::ReplRole::Master
        || client.id == crate::aof::load::AOF_CLIENT_ID
}

/// Whether writes are refused as on a read-only replica.
fn read_only_replica(server: &crate::server::Server) -> bool {
    server.replication.is_replica() && server.config.repl.read_only
}

/// Runs `callee` for `ctx`'s command with these keys and arguments (`ro`: EVAL_RO,
/// EVALSHA_RO, FCALL_RO) and writes its reply.
///
/// `caller` is the command (EVAL, EVALSHA, FCALL, ...), for ACL LOG's client line.
pub fn run(
    ctx: &mut Ctx,
    callee: Callee,
    keys: &[&[u8]],
    args: &[&[u8]],
    ro: bool,
    caller: &'static str,
) {
    let Some(script_oom) = prepare(ctx, callee.flags, ro) else {
        return;
    };
    let engine = callee.engine.clone();
    if callee.fcall.is_none() {
        if let Err(e) = engine.set_keys_and_args(keys, args) {
            return ctx.error(&format!("ERR {e}"));
        }
    }
    let mut client = ctx
        .server
        .scripting
        .take_client()
        .expect("scripts do not nest");
    client.db = ctx.client.db;
    // The script's commands run as the caller's user (its ACL applies to them).
    client.user = ctx.client.user.clone();
    ctx.server.scripting.running = Some(Running {
        started: Instant::now(),
        timed_out: false,
        wrote: false,
        kill: false,
        function: callee.fcall.map(|argv| super::RunningFunction {
            name: callee.name.to_string(),
            command: argv.iter().map(|a| a.to_vec()).collect(),
        }),
    });
    let with_hook = ctx.server.config.busy_reply_threshold > 0;
    let mut run = Run {
        ctx,
        client,
        reply: Vec::new(),
        resp3: false,
        repl: Targets::ALL,
        read_only: ro || (!callee.flags.compat && callee.flags.no_writes),
        allow_oom: !callee.flags.compat && callee.flags.allow_oom,
        script_oom,
        killed: false,
        slot: keys.first().map(|k| crate::cluster::slot::key_slot(k)),
        cross_slot: callee.flags.compat || callee.flags.allow_cross_slot,
        caller,
    };
    engine.pending.clear();
    engine.active.set(&mut run as *mut Run as *mut ());
    if let Some(session) = &callee.debug {
        // The debugger's hook replaces the busy one: nothing else is served meanwhile.
        super::ldb::attach(engine.lua(), session);
        let hook = super::ldb::repl::Hook {
            active: engine.active.clone(),
            pending: engine.pending.clone(),
            inspect: engine.inspect.clone(),
        };
        let set = super::ldb::repl::install(engine.lua(), hook);
        debug_assert!(set.is_ok());
    } else if with_hook {
        let hooked = Hooked {
            active: engine.active.clone(),
            pending: engine.pending.clone(),
        };
        let set = set_hook(
            engine.lua(),
            &hooked,
            HookTriggers::new().every_nth_instruction(HOOK_PERIOD),
        );
        debug_assert!(set.is_ok());
    }
    let outcome = match callee.fcall {
        None => engine.call(callee.function),
        Some(_) => engine.call_function(callee.function, keys, args),
    };
    if callee.debug.is_some() {
        engine.lua().remove_hook();
        super::ldb::detach(engine.lua());
    } else if with_hook {
        engine.lua().remove_hook();
    }
    engine.active.set(std::ptr::null_mut());
    let Run {
        ctx, client, resp3, ..
    } = run;
    ctx.server.scripting.restore_client(client);
    ctx.server.scripting.running = None;
    ctx.server.scripting.count_run(&engine);
    match outcome {
        Ok(Ok(value)) => super::lua_reply::lua_to_reply(ctx, engine.lua(), value, resp3),
        Ok(Err(error)) => reply_error(ctx, callee.name, &error),
        Err(e) => ctx.error(&format!(
            "ERR Error running script {}, {:.100}",
            callee.name,
            e.to_string()
        )),
    }
}

/// The error reply of a failed script: the error table's message, then where the script
/// was when it failed (Redis's luaCallFunction).
fn reply_error(ctx: &mut Ctx, sha: &str, error: &Value) {
    let Value::Table(t) = error else {
        let msg = api::to_bytes(error).unwrap_or_else(|| b"execution failure".to_vec());
        let msg = String::from_utf8_lossy(&msg);
        return ctx.error(&format!("ERR Error running script {sha}, {msg:.100}"));
    };
    let text = |name: &str| {
        t.raw_get::<Value>(name)
            .ok()
            .as_ref()
            .and_then(api::to_bytes)
    };
    let mut msg = String::from_utf8_lossy(&text("err").unwrap_or_default()).into_owned();
    if let (Some(source), Some(line)) = (text("source"), text("line")) {
        msg.push_str(&format!(
            " script: {sha}, on {}:{}.",
            String::from_utf8_lossy(&source),
            String::from_utf8_lossy(&line)
        ));
    }
    let counted = matches!(
        t.raw_get::<Value>("ignore_error_stats_update"),
        Ok(Value::Boolean(true))
    );
    if counted {
        ctx.error_counted(&msg);
    } else {
        ctx.error(&msg);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_strings_or_numbers() {
        let lua = Lua::new();
        let args = MultiValue::from_vec(vec![
            Value::String(lua.create_string("set").unwrap()),
            Value::Number(0.1),
            Value::Integer(7),
        ]);
        assert_eq!(
            command_args(&args).unwrap(),
            vec![
                b"set".to_vec(),
                b"0.10000000000000001".to_vec(),
                b"7".to_vec()
            ]
        );
        let bad = MultiValue::from_vec(vec![Value::Boolean(true)]);
        assert_eq!(
            command_args(&bad).unwrap_err(),
            "Lua redis lib command arguments must be strings or integers"
        );
        assert!(command_args(&MultiValue::new()).is_err());
    }

    #[test]
    fn commands_resolve_with_their_subcommands() {
        let argv = |words: &[&str]| {
            words
                .iter()
                .map(|w| w.as_bytes().to_vec())
                .collect::<Vec<_>>()
        };
        let mut renames = Renames::new();
        let resolve = |r: &Renames, words: &[&str]| resolve(r, &argv(words)).map(|c| c.name);
        assert_eq!(resolve(&renames, &["GET", "k"]), Some("get"));
        assert_eq!(
            resolve(&renames, &["config", "get", "x"]),
            Some("config|get")
        );
        assert_eq!(resolve(&renames, &["config"]), Some("config"));
        assert_eq!(resolve(&renames, &["config", "nope"]), None);
        assert_eq!(resolve(&renames, &["nosuch"]), None);
        commands::renamed::add(&mut renames, b"set", b"foo").unwrap();
        assert_eq!(resolve(&renames, &["set", "k", "v"]), None);
        assert_eq!(resolve(&renames, &["FOO", "k", "v"]), Some("set"));
    }
}
