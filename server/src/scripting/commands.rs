//! EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT LOAD / EXISTS / FLUSH / KILL / HELP.

use super::cache::{self, Script};
use super::{ldb, run};
use crate::commands::{container, help_reply, Command, Ctx, Flags, StatSlot};
use crate::notice;
use std::rc::Rc;

/// NOSCRIPT's reply to an unknown SHA1.
const NOSCRIPT: &str = "NOSCRIPT No matching script. Please use EVAL.";

/// The cached script with this body, compiled and added when new (Redis's
/// luaCreateFunction); `None` after replying with the error. (An EVAL whose declared flags
/// refuse it now was refused before it ran: [`crate::scripting::command_flags`].)
fn create(ctx: &mut Ctx, body: &[u8]) -> Option<Rc<Script>> {
    let sha = cache::sha1hex(body);
    if let Some(script) = ctx.server.scripting.cache.get(sha.as_bytes()) {
        return Some(script);
    }
    let (flags, shebang_len) = match cache::shebang(body) {
        Ok(found) => found,
        Err(text) => {
            ctx.error(&format!("ERR {text}"));
            return None;
        }
    };
    let function = match ctx.server.scripting.engine.compile(&body[shebang_len..]) {
        Ok(f) => f,
        Err(text) => {
            ctx.error(&format!(
                "ERR Error compiling script (new function): {text}"
            ));
            return None;
        }
    };
    Some(ctx.server.scripting.cache.insert(Script {
        sha,
        flags,
        function,
        body_len: body.len(),
    }))
}

/// The EVAL family: `evalsha` names the script by SHA1, `ro` refuses writes. A client in
/// SCRIPT DEBUG mode debugs its EVAL (and may not use EVALSHA).
fn eval_generic(ctx: &mut Ctx, args: &[&[u8]], evalsha: bool, ro: bool) {
    // As Redis 7: a script replicates its effects (the write commands it ran, in one
    // MULTI / EXEC when there are several), never itself.
    ctx.propagate_nothing();
    match ctx.client.lua_debug {
        None => eval_script(ctx, args, evalsha, ro, None),
        Some(_) if evalsha && args[1].len() != 40 => ctx.error(NOSCRIPT),
        Some(_) if evalsha => ctx.error("ERR Please use EVAL instead of EVALSHA for debugging"),
        Some(mode) => debug_eval(ctx, args, ro, mode),
    }
}

/// EVAL under the Lua debugger: the session starts before the script is even compiled,
/// as Redis's. In a forked session the parent closes the connection without a reply and
/// the child answers and exits; a synchronous one closes it after the reply.
fn debug_eval(ctx: &mut Ctx, args: &[&[u8]], ro: bool, mode: ldb::Mode) {
    let forked = match mode {
        ldb::Mode::Sync => {
            notice!("Redis synchronous debugging eval session started");
            false
        }
        ldb::Mode::Fork => match ldb::fork::fork(ctx.server) {
            Ok(ldb::fork::Side::Child) => true,
            Ok(ldb::fork::Side::Parent) => {
                ctx.client.lua_debug = None;
                ctx.client.evicted = true;
                ctx.client.close_after_reply = true;
                return;
            }
            Err(e) => {
                ctx.client.lua_debug = None;
                return ctx.error(&format!(
                    "ERR Fork() failed: can't run EVAL in debugging mode: {}",
                    crate::errors::os_error_text(&e)
                ));
            }
        },
    };
    let start = ctx.out.position();
    let session = ldb::Session::start(ctx.client.fd, args[1]);
    eval_script(ctx, args, false, ro, Some(session.clone()));
    ldb::end(&session);
    if forked {
        // All the client has not been sent yet: the replies before this command's too.
        let unsent = start.saturating_sub(ctx.client.io.pending_output);
        ldb::send(&session, ctx.out.since(unsent));
        ldb::fork::exit_child();
    }
    notice!("Redis synchronous debugging eval session ended");
    ctx.client.close_after_reply = true;
}

/// Runs an EVAL-family command's script, under the debugger's `session` if given.
fn eval_script(
    ctx: &mut Ctx,
    args: &[&[u8]],
    evalsha: bool,
    ro: bool,
    session: Option<ldb::Shared>,
) {
    let Some(numkeys) = ctx.int_arg(args[2]) else {
        return;
    };
    if numkeys > (args.len() - 3) as i64 {
        return ctx.error("ERR Number of keys can't be greater than number of args");
    }
    if numkeys < 0 {
        return ctx.error("ERR Number of keys can't be negative");
    }
    let script = if evalsha {
        match ctx.server.scripting.cache.get(args[1]) {
            Some(script) => script,
            None => return ctx.error(NOSCRIPT),
        }
    } else {
        match create(ctx, args[1]) {
            Some(script) => script,
            None => return,
        }
    };
    let (keys, argv) = args[3..].split_at(numkeys as usize);
    let caller = match (evalsha, ro) {
        (false, false) => "eval",
        (true, false) => "evalsha",
        (false, true) => "eval_ro",
        (true, true) => "evalsha_ro",
    };
    let callee = run::Callee {
        engine: ctx.server.scripting.engine.clone(),
        function: &script.function,
        flags: script.flags,
        name: &script.sha,
        fcall: None,
        debug: session,
    };
    run::run(ctx, callee, keys, argv, ro, caller);
}

/// EVAL script numkeys [key ...] [arg ...]
pub fn eval(ctx: &mut Ctx, args: &[&[u8]]) {
    eval_generic(ctx, args, false, false);
}

/// EVALSHA sha1 numkeys [key ...] [arg ...]
pub fn evalsha(ctx: &mut Ctx, args: &[&[u8]]) {
    eval_generic(ctx, args, true, false);
}

/// EVAL_RO script numkeys [key ...] [arg ...]
pub fn eval_ro(ctx: &mut Ctx, args: &[&[u8]]) {
    eval_generic(ctx, args, false, true);
}

/// EVALSHA_RO sha1 numkeys [key ...] [arg ...]
pub fn evalsha_ro(ctx: &mut Ctx, args: &[&[u8]]) {
    eval_generic(ctx, args, true, true);
}

/// SCRIPT LOAD script
fn script_load(ctx: &mut Ctx, args: &[&[u8]]) {
    if let Some(script) = create(ctx, args[2]) {
        ctx.out.bulk(script.sha.as_bytes());
    }
}

/// SCRIPT EXISTS sha1 [sha1 ...]
fn script_exists(ctx: &mut Ctx, args: &[&[u8]]) {
    ctx.out.array(args.len() - 2);
    for sha in &args[2..] {
        let found = ctx.server.scripting.cache.get(sha).is_some();
        ctx.out.int(found as i64);
    }
}

/// SCRIPT FLUSH [ASYNC|SYNC] (both free the scripts at once: a fresh interpreter).
fn script_flush(ctx: &mut Ctx, args: &[&[u8]]) {
    let mode_ok = match args.get(2) {
        None => true,
        Some(mode) => {
            args.len() == 3
                && (mode.eq_ignore_ascii_case(b"sync") || mode.eq_ignore_ascii_case(b"async"))
        }
    };
    if !mode_ok {
        return ctx.error("ERR SCRIPT FLUSH only support SYNC|ASYNC option");
    }
    ctx.server.scripting.flush();
    ctx.out.ok();
}

/// SCRIPT KILL
fn script_kill(ctx: &mut Ctx, _args: &[&[u8]]) {
    match ctx.server.scripting.kill(false) {
        Ok(()) => ctx.out.ok(),
        Err(e) => ctx.error(e),
    }
}

/// SCRIPT DEBUG YES|SYNC|NO: the client's next EVAL runs under the Lua debugger, forked
/// (YES) or blocking the server (SYNC). As Redis's, YES after SYNC leaves SYNC on.
fn script_debug(ctx: &mut Ctx, args: &[&[u8]]) {
    // Inside EXEC, EXEC's own reply is already pending, as in Redis.
    if ctx.client.io.pending_output > 0 || ctx.client.exec_queued.is_some() {
        return ctx.error("ERR SCRIPT DEBUG must be called outside a pipeline");
    }
    let mode = args[2];
    ctx.client.lua_debug = if mode.eq_ignore_ascii_case(b"no") {
        None
    } else if mode.eq_ignore_ascii_case(b"yes") {
        Some(ctx.client.lua_debug.unwrap_or(ldb::Mode::Fork))
    } else if mode.eq_ignore_ascii_case(b"sync") {
        Some(ldb::Mode::Sync)
    } else {
        return ctx.error("ERR Use SCRIPT DEBUG YES/SYNC/NO");
    };
    ctx.out.ok();
}

/// SCRIPT HELP
fn script_help(ctx: &mut Ctx, _args: &[&[u8]]) {
    help_reply(
        ctx,
        "SCRIPT",
        &[
            "DEBUG (YES|SYNC|NO)",
            "    Set the debug mode for subsequent scripts executed.",
            "EXISTS <sha1> [<sha1> ...]",
            "    Return information about the existence of the scripts in the script cache.",
            "FLUSH [ASYNC|SYNC]",
            "    Flush the Lua scripts cache. Very dangerous on replicas.",
            "    When called without the optional mode argument, the behavior is determined by the",
            "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
            "    * ASYNC: Asynchronously flush the scripts cache.",
            "    * SYNC: Synchronously flush the scripts cache.",
            "KILL",
            "    Kill the currently executing Lua script.",
            "LOAD <script>",
            "    Load a script into the scripts cache without executing it.",
        ],
    );
}

/// Flags of the EVAL family: not inside scripts, allowed on a stale replica, may write.
const EVAL_FLAGS: Flags = Flags::NOSCRIPT
    .with(Flags::STALE)
    .with(Flags::MONITOR_BEFORE);
/// SCRIPT's subcommands: not inside scripts.
const SCRIPT_FLAGS: Flags = Flags::NOSCRIPT;

static SCRIPT_SUBS: [Command; 6] = [
    Command::simple("script|debug", 3, SCRIPT_FLAGS, script_debug),
    Command::simple(
        "script|load",
        3,
        SCRIPT_FLAGS.with(Flags::STALE),
        script_load,
    ),
    Command::simple("script|exists", -3, SCRIPT_FLAGS, script_exists),
    Command::simple("script|flush", -2, SCRIPT_FLAGS, script_flush),
    Command::simple(
        "script|kill",
        2,
        SCRIPT_FLAGS.with(Flags::ALLOW_BUSY),
        script_kill,
    ),
    Command::simple(
        "script|help",
        2,
        Flags::LOADING.with(Flags::STALE),
        script_help,
    ),
];

/// The scripting commands.
pub static COMMANDS: [Command; 5] = [
    Command::simple("eval", -3, EVAL_FLAGS, eval),
    Command::simple("evalsha", -3, EVAL_FLAGS, evalsha),
    Command::simple("eval_ro", -3, EVAL_FLAGS.with(Flags::READONLY), eval_ro),
    Command::simple(
        "evalsha_ro",
        -3,
        EVAL_FLAGS.with(Flags::READONLY),
        evalsha_ro,
    ),
    Command {
        name: "script",
        arity: -2,
        flags: Flags::NOSCRIPT,
        handler: container,
        subcommands: &SCRIPT_SUBS,
        slot: StatSlot::new(),
    },
];
