//! Lua scripting: EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT, on Lua 5.1 (mlua, built
//! from source) as Redis 7.2 embeds it.
//!
//! - [`engine`]: the interpreter and its sandbox (`prelude.lua`: Redis's globals
//!   protection, read-only tables, its error handler and pcall).
//! - [`cache`]: the scripts by SHA1 (lowercase hex of the body), their shebang flags.
//! - [`api`]: the `redis` table's functions written in Rust (redis.call, redis.pcall,
//!   redis.setresp, redis.log, ...).
//! - [`convert`]: command replies to Lua values, RESP2 and RESP3, as Redis's script_lua.c
//!   converts them; [`lua_reply`]: what a script returns, as its reply.
//! - [`run`]: one invocation: the checks before it, the script client, the busy hook
//!   (BUSY replies to other clients, SCRIPT KILL), the reply.
//! - [`commands`]: the EVAL family and SCRIPT handlers, and their table.
//! - [`library`]: a function library's `#!lua name=` line, names, flags, and the
//!   FUNCTION DUMP payload.
//! - [`functions`]: the function libraries and their interpreter (FUNCTION LOAD's work).
//! - [`function_commands`]: FCALL, FCALL_RO and FUNCTION, and their table.
//! - [`libs`]: the cjson, cmsgpack, bit and struct libraries Redis embeds.
//! - [`ldb`]: the Lua debugger (SCRIPT DEBUG) and its sessions.
//!
//! A script's commands run through [`crate::commands::call`] with a client of their own
//! (the caller's database at the start; SELECT inside moves only that client), so they
//! are counted, logged and propagated as any other command.

pub mod api;
pub mod cache;
pub mod commands;
pub mod convert;
pub mod engine;
pub mod function_commands;
pub mod functions;
pub mod ldb;
pub mod library;
pub mod libs;
pub mod lua_reply;
pub mod run;

pub use commands::COMMANDS;
pub use function_commands::COMMANDS as FUNCTION_COMMANDS;

use crate::clients::Client;
use std::time::Instant;

/// The script running now, as other clients see it while it is busy.
#[derive(Debug)]
pub struct Running {
    /// When it started.
    pub started: Instant,
    /// It passed busy-reply-threshold: other clients get BUSY.
    pub timed_out: bool,
    /// It ran a write command (SCRIPT KILL answers UNKILLABLE).
    pub wrote: bool,
    /// SCRIPT KILL (or SHUTDOWN NOSAVE) asked it to stop.
    pub kill: bool,
    /// A library's function runs (FCALL), not an EVAL script.
    pub function: Option<RunningFunction>,
}

/// The function running now, as FUNCTION STATS shows it.
#[derive(Debug)]
pub struct RunningFunction {
    /// Its name.
    pub name: String,
    /// The command that called it.
    pub command: Vec<Vec<u8>>,
}

/// The scripting state of the server.
pub struct Scripting {
    /// The interpreter (replaced by SCRIPT FLUSH).
    pub engine: engine::Engine,
    /// The scripts by SHA1.
    pub cache: cache::Cache,
    /// The function libraries and their interpreter.
    pub functions: functions::Functions,
    /// The client the scripts' commands run as, while no script runs.
    client: Option<Box<Client>>,
    /// The script being run, if any.
    pub running: Option<Running>,
    /// Scripts run since the last garbage collection step.
    runs_since_gc: u32,
    /// Scripts may run commands flagged noscript (DEBUG SET-DISABLE-DENY-SCRIPTS, for tests
    /// that need one inside a script; SCRIPT FLUSH keeps it, as Redis).
    pub deny_script_disabled: bool,
    /// The children running forked debugging sessions (SCRIPT DEBUG YES), until reaped.
    pub forked_sessions: Vec<libc::pid_t>,
}

impl Default for Scripting {
    fn default() -> Self {
        Scripting {
            engine: engine::Engine::new(),
            cache: cache::Cache::default(),
            functions: functions::Functions::new(),
            client: Some(Box::new(run::script_client())),
            running: None,
            runs_since_gc: 0,
            deny_script_disabled: false,
            forked_sessions: Vec::new(),
        }
    }
}

impl Scripting {
    /// Whether a script runs past busy-reply-threshold (other clients get BUSY).
    pub fn busy(&self) -> bool {
        self.running.as_ref().is_some_and(|r| r.timed_out)
    }

    /// The BUSY error other clients get while a script or function is busy (each names
    /// the command that kills it).
    pub fn busy_error(&self) -> &'static str {
        match self.running.as_ref().is_some_and(|r| r.function.is_some()) {
            true => BUSY_FUNCTION,
            false => BUSY,
        }
    }

    /// SCRIPT KILL (`function` false) or FUNCTION KILL (true): asks the running script to
    /// stop, or gives the error Redis gives (none runs, it wrote, or the other command
    /// kills what runs).
    pub fn kill(&mut self, function: bool) -> Result<(), &'static str> {
        match self.running.as_mut() {
            None => Err("NOTBUSY No scripts in execution right now."),
            Some(r) if r.wrote => Err("UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command."),
            Some(r) if r.function.is_some() != function => Err(self.busy_error()),
            Some(r) => {
                r.kill = true;
                Ok(())
            }
        }
    }

    /// The script client, for a run (`None` while one runs).
    fn take_client(&mut self) -> Option<Box<Client>> {
        self.client.take()
    }

    /// Gives the script client back after a run.
    fn restore_client(&mut self, client: Box<Client>) {
        self.client = Some(client);
    }

    /// Counts a finished run; every 50th runs a step of the collector, as Redis does to
    /// spread the collection's latency.
    fn count_run(&mut self, engine: &engine::Engine) {
        self.runs_since_gc += 1;
        if self.runs_since_gc == 50 {
            self.runs_since_gc = 0;
            engine.gc_step();
        }
    }

    /// SCRIPT FLUSH: a fresh interpreter and an empty cache.
    pub fn flush(&mut self) {
        self.cache = cache::Cache::default();
        self.engine = engine::Engine::new();
    }

    /// INFO's used_memory_lua: the interpreter's allocation, in whole KiB as Redis's
    /// lua_gc(LUA_GCCOUNT) gives it.
    pub fn vm_memory(&self) -> usize {
        self.engine.used_memory() / 1024 * 1024
    }
}

/// The error other clients get while a script is busy.
pub const BUSY: &str =
    "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.";
/// The error other clients get while a function is busy.
pub const BUSY_FUNCTION: &str =
    "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.";

/// The flags a script or function command's callee declared, as the dispatcher sees them
/// before the run (Redis's evalGetCommandFlags / fcallGetCommandFlags): the cached or
/// shebang flags of EVAL's body, the cached script of EVALSHA, FCALL's function. None for
/// other commands, a script without a shebang, an unknown SHA or function.
pub fn declared_flags(
    server: &crate::server::Server,
    command: &str,
    args: &[&[u8]],
) -> Option<cache::ScriptFlags> {
    let flags = match command {
        "eval" | "eval_ro" => match server
            .scripting
            .cache
            .get(cache::sha1hex(args.get(1)?).as_bytes())
        {
            Some(script) => script.flags,
            None => cache::shebang(args[1]).ok()?.0,
        },
        "evalsha" | "evalsha_ro" => server.scripting.cache.get(args.get(1)?)?.flags,
        "fcall" | "fcall_ro" => {
            let name = args.get(1)?;
            server.scripting.functions.libraries.function(name)?.flags
        }
        _ => return None,
    };
    (!flags.compat).then_some(flags)
}

/// A command's flags as Redis's getCommandFlags sees them before it runs: a script or
/// function that declared its flags takes them in place of the command's own write,
/// deny-oom and stale ones (Redis's scriptFlagsToCmdFlags; `no-writes` implies
/// `allow-oom`).
pub fn command_flags(
    server: &crate::server::Server,
    cmd: &crate::commands::Command,
    args: &[&[u8]],
) -> crate::commands::Flags {
    use crate::commands::Flags;
    let Some(declared) = declared_flags(server, cmd.name, args) else {
        return cmd.flags;
    };
    let mut flags = cmd
        .flags
        .without(Flags::WRITE.with(Flags::DENYOOM).with(Flags::STALE));
    if !declared.no_writes {
        flags = flags.with(Flags::WRITE);
        if !declared.allow_oom {
            flags = flags.with(Flags::DENYOOM);
        }
    }
    if declared.allow_stale {
        flags = flags.with(Flags::STALE);
    }
    flags
}
