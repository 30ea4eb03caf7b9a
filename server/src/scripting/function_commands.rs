//! FCALL, FCALL_RO and FUNCTION LOAD / DELETE / FLUSH / LIST / STATS / DUMP / RESTORE /
//! KILL / HELP (Redis's functions.c).

use super::functions::{FILE_LOAD_TIMEOUT, LOAD_TIMEOUT};
use super::{library, run};
use crate::commands::{
    container, help_reply, subcommand_syntax_error, Command, Ctx, Flags, StatSlot,
};

/// FCALL and FCALL_RO: `ro` refuses functions that may write.
fn fcall_generic(ctx: &mut Ctx, args: &[&[u8]], ro: bool) {
    // As Redis 7: a function replicates its effects, never itself.
    ctx.propagate_nothing();
    let Some(function) = ctx.server.scripting.functions.libraries.function(args[1]) else {
        return ctx.error("ERR Function not found");
    };
    let Some(numkeys) = crate::numbers::parse_i64(args[2]) else {
        return ctx.error("ERR Bad number of keys provided");
    };
    if numkeys > (args.len() - 3) as i64 {
        return ctx.error("ERR Number of keys can't be greater than number of args");
    }
    if numkeys < 0 {
        return ctx.error("ERR Number of keys can't be negative");
    }
    let (keys, argv) = args[3..].split_at(numkeys as usize);
    let name = String::from_utf8_lossy(&function.name).into_owned();
    let callee = run::Callee {
        engine: ctx.server.scripting.functions.engine.clone(),
        function: &function.callback,
        flags: function.flags,
        name: &name,
        fcall: Some(args),
        debug: None,
    };
    let caller = if ro { "fcall_ro" } else { "fcall" };
    run::run(ctx, callee, keys, argv, ro, caller);
}

/// FCALL function numkeys [key ...] [arg ...]
pub fn fcall(ctx: &mut Ctx, args: &[&[u8]]) {
    fcall_generic(ctx, args, false);
}

/// FCALL_RO function numkeys [key ...] [arg ...]
pub fn fcall_ro(ctx: &mut Ctx, args: &[&[u8]]) {
    fcall_generic(ctx, args, true);
}

/// The libraries changed: counted as a change, so the command is propagated and saves
/// see it (Redis's server.dirty++).
fn changed(ctx: &mut Ctx) {
    ctx.server.keyspace.add_dirty(1);
}

/// FUNCTION LOAD [REPLACE] code
fn function_load(ctx: &mut Ctx, args: &[&[u8]]) {
    let mut replace = false;
    let mut pos = 2;
    while pos < args.len() - 1 {
        let arg = args[pos];
        pos += 1;
        if arg.eq_ignore_ascii_case(b"replace") {
            replace = true;
            continue;
        }
        return ctx.error(&format!(
            "ERR Unknown option given: {}",
            String::from_utf8_lossy(arg)
        ));
    }
    if pos >= args.len() {
        return ctx.error("ERR Function code is missing");
    }
    // Redis gives the AOF's commands no budget; here a long one, so a crafted file
    // cannot hang the server.
    let timeout = match ctx.client.id == crate::aof::load::AOF_CLIENT_ID {
        true => FILE_LOAD_TIMEOUT,
        false => LOAD_TIMEOUT,
    };
    match ctx
        .server
        .scripting
        .functions
        .load(args[pos], replace, Some(timeout))
    {
        Ok(name) => {
            changed(ctx);
            ctx.out.bulk(&name);
        }
        Err(text) => ctx.error(&format!("ERR {text}")),
    }
}

/// FUNCTION DELETE library
fn function_delete(ctx: &mut Ctx, args: &[&[u8]]) {
    if !ctx.server.scripting.functions.delete(args[2]) {
        return ctx.error("ERR Library not found");
    }
    changed(ctx);
    ctx.out.ok();
}

/// FUNCTION FLUSH [ASYNC|SYNC] (both free the libraries at once: a fresh interpreter).
fn function_flush(ctx: &mut Ctx, args: &[&[u8]]) {
    if args.len() > 3 {
        return subcommand_syntax_error(ctx, args);
    }
    if let Some(mode) = args.get(2) {
        if !mode.eq_ignore_ascii_case(b"sync") && !mode.eq_ignore_ascii_case(b"async") {
            return ctx.error("ERR FUNCTION FLUSH only supports SYNC|ASYNC option");
        }
    }
    ctx.server.scripting.functions.flush();
    changed(ctx);
    ctx.out.ok();
}

/// FUNCTION LIST [LIBRARYNAME pattern] [WITHCODE]
fn function_list(ctx: &mut Ctx, args: &[&[u8]]) {
    let mut with_code = false;
    let mut pattern: Option<&[u8]> = None;
    let mut i = 2;
    while i < args.len() {
        let arg = args[i];
        if !with_code && arg.eq_ignore_ascii_case(b"withcode") {
            with_code = true;
        } else if pattern.is_none() && arg.eq_ignore_ascii_case(b"libraryname") {
            if i >= args.len() - 1 {
                return ctx.error("ERR library name argument was not given");
            }
            i += 1;
            pattern = Some(args[i]);
        } else {
            return ctx.error(&format!(
                "ERR Unknown argument {}",
                String::from_utf8_lossy(arg)
            ));
        }
        i += 1;
    }
    let libraries = &ctx.server.scripting.functions.libraries;
    let matching: Vec<_> = libraries
        .iter()
        .filter(|l| pattern.is_none_or(|p| crate::glob::glob_match(p, &l.name, true)))
        .collect();
    let out = &mut ctx.out;
    out.array(matching.len());
    for library in matching {
        out.map(if with_code { 4 } else { 3 });
        out.bulk(b"library_name");
        out.bulk(&library.name);
        out.bulk(b"engine");
        out.bulk(b"LUA");
        out.bulk(b"functions");
        out.array(library.functions.len());
        for f in &library.functions {
            out.map(3);
            out.bulk(b"name");
            out.bulk(&f.name);
            out.bulk(b"description");
            match &f.description {
                Some(d) => out.bulk(d),
                None => out.null(),
            }
            out.bulk(b"flags");
            let names = library::flag_names(&f.flags);
            out.set(names.len());
            for name in names {
                out.simple(name);
            }
        }
        if with_code {
            out.bulk(b"library_code");
            out.bulk(&library.code);
        }
    }
}

/// FUNCTION STATS
fn function_stats(ctx: &mut Ctx, _args: &[&[u8]]) {
    let scripting = &ctx.server.scripting;
    if scripting
        .running
        .as_ref()
        .is_some_and(|r| r.function.is_none())
    {
        return ctx.error(super::BUSY);
    }
    let out = &mut ctx.out;
    out.map(2);
    out.bulk(b"running_script");
    match scripting.running.as_ref() {
        Some(running) => {
            let function = running.function.as_ref().expect("checked");
            out.map(3);
            out.bulk(b"name");
            out.bulk(function.name.as_bytes());
            out.bulk(b"command");
            out.array(function.command.len());
            for arg in &function.command {
                out.bulk(arg);
            }
            out.bulk(b"duration_ms");
            out.int(running.started.elapsed().as_millis() as i64);
        }
        None => out.null(),
    }
    out.bulk(b"engines");
    out.map(1);
    out.bulk(b"LUA");
    out.map(2);
    let libraries = &scripting.functions.libraries;
    out.bulk(b"libraries_count");
    out.int(libraries.len() as i64);
    out.bulk(b"functions_count");
    out.int(libraries.function_count() as i64);
}

/// FUNCTION DUMP
fn function_dump(ctx: &mut Ctx, _args: &[&[u8]]) {
    let functions = &ctx.server.scripting.functions;
    let payload = library::dump_payload(
        functions.libraries.iter().map(|l| l.code.as_slice()),
        ctx.server.config.rdbcompression,
    );
    ctx.out.bulk(&payload);
}

/// How FUNCTION RESTORE treats the libraries there are.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Policy {
    Flush,
    Append,
    Replace,
}

/// FUNCTION RESTORE payload [FLUSH|APPEND|REPLACE]
fn function_restore(ctx: &mut Ctx, args: &[&[u8]]) {
    if args.len() > 4 {
        return subcommand_syntax_error(ctx, args);
    }
    let policy =
        match args.get(3) {
            None => Policy::Append,
            Some(p) if p.eq_ignore_ascii_case(b"append") => Policy::Append,
            Some(p) if p.eq_ignore_ascii_case(b"replace") => Policy::Replace,
            Some(p) if p.eq_ignore_ascii_case(b"flush") => Policy::Flush,
            Some(_) => return ctx.error(
                "ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.",
            ),
        };
    let outcome = library::read_payload(args[2]).and_then(|codes| {
        let functions = &mut ctx.server.scripting.functions;
        // Redis runs a restored library without a budget: here the one of FUNCTION LOAD,
        // so a crafted payload cannot hang the server.
        let incoming = functions.create_all(&codes, LOAD_TIMEOUT)?;
        if policy == Policy::Flush {
            functions.libraries = incoming;
            return Ok(());
        }
        let mut current = std::mem::take(&mut functions.libraries);
        let joined = current.join(incoming, policy == Policy::Replace);
        functions.libraries = current;
        joined
    });
    match outcome {
        Ok(()) => {
            changed(ctx);
            ctx.out.ok();
        }
        Err(text) => ctx.error(&format!("ERR {text}")),
    }
}

/// FUNCTION KILL
fn function_kill(ctx: &mut Ctx, _args: &[&[u8]]) {
    match ctx.server.scripting.kill(true) {
        Ok(()) => ctx.out.ok(),
        Err(e) => ctx.error(e),
    }
}

/// FUNCTION HELP
fn function_help(ctx: &mut Ctx, _args: &[&[u8]]) {
    help_reply(
        ctx,
        "FUNCTION",
        &[
            "LOAD [REPLACE] <FUNCTION CODE>",
            "    Create a new library with the given library name and code.",
            "DELETE <LIBRARY NAME>",
            "    Delete the given library.",
            "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
            "    Return general information on all the libraries:",
            "    * Library name",
            "    * The engine used to run the Library",
            "    * Library description",
            "    * Functions list",
            "    * Library code (if WITHCODE is given)",
            "    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
            "STATS",
            "    Return information about the current function running:",
            "    * Function name",
            "    * Command used to run the function",
            "    * Duration in MS that the function is running",
            "    If no function is running, return nil",
            "    In addition, returns a list of available engines.",
            "KILL",
            "    Kill the current running function.",
            "FLUSH [ASYNC|SYNC]",
            "    Delete all the libraries.",
            "    When called without the optional mode argument, the behavior is determined by the",
            "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
            "    * ASYNC: Asynchronously flush the libraries.",
            "    * SYNC: Synchronously flush the libraries.",
            "DUMP",
            "    Return a serialized payload representing the current libraries, can be restored using FUNCTION RESTORE command",
            "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
            "    Restore the libraries represented by the given payload, it is possible to give a restore policy to",
            "    control how to handle existing libraries (default APPEND):",
            "    * FLUSH: delete all existing libraries.",
            "    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
            "    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the old",
            "      libraries with the new libraries (notice that even on this option there is a chance of failure",
            "      in case of functions name collision with another library).",
        ],
    );
}

/// FUNCTION's subcommands: not inside scripts.
const FUNCTION_FLAGS: Flags = Flags::NOSCRIPT;
/// Subcommands that change the libraries.
const FUNCTION_WRITE: Flags = Flags::NOSCRIPT.with(Flags::WRITE);

static FUNCTION_SUBS: [Command; 9] = [
    Command::simple(
        "function|load",
        -3,
        FUNCTION_WRITE.with(Flags::DENYOOM),
        function_load,
    ),
    Command::simple("function|delete", 3, FUNCTION_WRITE, function_delete),
    Command::simple("function|flush", -2, FUNCTION_WRITE, function_flush),
    Command::simple("function|list", -2, FUNCTION_FLAGS, function_list),
    Command::simple(
        "function|stats",
        2,
        FUNCTION_FLAGS.with(Flags::ALLOW_BUSY),
        function_stats,
    ),
    Command::simple("function|dump", 2, FUNCTION_FLAGS, function_dump),
    Command::simple(
        "function|restore",
        -3,
        FUNCTION_WRITE.with(Flags::DENYOOM),
        function_restore,
    ),
    Command::simple(
        "function|kill",
        2,
        FUNCTION_FLAGS.with(Flags::ALLOW_BUSY),
        function_kill,
    ),
    Command::simple(
        "function|help",
        2,
        Flags::LOADING.with(Flags::STALE),
        function_help,
    ),
];

/// Flags of FCALL: not inside scripts, allowed on a stale replica, shown by MONITOR before
/// the function's commands (as EVAL).
const FCALL_FLAGS: Flags = Flags::NOSCRIPT
    .with(Flags::STALE)
    .with(Flags::MONITOR_BEFORE);

/// FCALL, FCALL_RO and FUNCTION.
pub static COMMANDS: [Command; 3] = [
    Command::simple("fcall", -3, FCALL_FLAGS, fcall),
    Command::simple("fcall_ro", -3, FCALL_FLAGS.with(Flags::READONLY), fcall_ro),
    Command {
        name: "function",
        arity: -2,
        flags: Flags::NOSCRIPT,
        handler: container,
        subcommands: &FUNCTION_SUBS,
        slot: StatSlot::new(),
    },
];
