//! The debugger's line hook (Redis's luaLdbLineHook) and, at each stop, its commands read
//! from the client (ldbRepl): step, continue, list, whole, print, break, trace, eval,
//! redis, maxlen, abort, help. Each command but those that resume the script is answered
//! with the lines it logged.

use super::show;
use super::wire::{self, Parse};
use super::{session, Shared, MAX_BREAKPOINTS};
use crate::numbers::atoi;
use crate::scripting::api::Pending;
use crate::scripting::engine::{self, ActiveRun};
use crate::scripting::run;
use mlua::debug::{Debug, DebugEvent};
use mlua::{Function, HookTriggers, Lua, MultiValue, Table, Value, VmState};

/// Instructions between two looks at the clock (a script that runs long between stops
/// is stopped as if it looped forever).
const COUNT_PERIOD: u32 = 100_000;
/// The input a client may send without completing a command.
const MAX_INPUT: usize = 1 << 20;

/// What the hook needs besides the session.
#[derive(Clone)]
pub struct Hook {
    /// The invocation running (its clock).
    pub active: ActiveRun,
    /// Where errors raised to the script wait for the error handler.
    pub pending: Pending,
    /// `frame` and `run` of `inspect.lua`.
    pub inspect: (Function, Function),
}

/// Sets the debugger's hook on the interpreter (in place of the busy hook).
pub fn install(lua: &Lua, hook: Hook) -> mlua::Result<()> {
    let triggers = HookTriggers {
        every_line: true,
        every_nth_instruction: Some(COUNT_PERIOD),
        ..HookTriggers::new()
    };
    lua.set_hook(triggers, move |lua, debug| on_event(lua, &hook, debug))
}

/// How a stop ended.
enum Resume {
    /// A command resumed the script.
    Command,
    /// The client is gone: the script runs on without stopping.
    ClientGone,
}

fn on_event(lua: &Lua, hook: &Hook, debug: &Debug) -> mlua::Result<VmState> {
    let Some(shared) = session(lua) else {
        return Ok(VmState::Continue);
    };
    let line = debug.current_line().map_or(-1, |l| l as i64);
    let (at_breakpoint, lua_breakpoint, step) = {
        let mut s = shared.borrow_mut();
        s.current_line = line;
        (
            s.is_breakpoint(line) || s.lua_breakpoint,
            s.lua_breakpoint,
            s.step,
        )
    };
    let in_script = debug
        .source()
        .short_src
        .is_some_and(|src| src.contains("user_script"));
    if !in_script {
        return Ok(VmState::Continue);
    }
    let mut timeout = false;
    if debug.event() == DebugEvent::Count && !step && !at_breakpoint {
        if !run::current(&hook.active).is_some_and(|r| r.debug_time_up()) {
            return Ok(VmState::Continue);
        }
        timeout = true;
    }
    if !(step || at_breakpoint || timeout) {
        return Ok(VmState::Continue);
    }
    let reason = match (at_breakpoint, lua_breakpoint, timeout) {
        (true, true, _) => "redis.breakpoint() called",
        (true, false, _) => "break point",
        (false, _, true) => "timeout reached, infinite loop?",
        _ => "step over",
    };
    {
        let mut s = shared.borrow_mut();
        s.step = false;
        s.lua_breakpoint = false;
        s.log(format!("* Stopped at {line}, stop reason = {reason}"));
        s.log_source_line(line);
        s.send_logs();
    }
    if let Resume::ClientGone = commands(lua, hook, &shared)? {
        if timeout {
            // Nobody can stop a script that loops forever now.
            return Err(raise(
                lua,
                hook,
                "timeout during Lua debugging with client closing connection",
            ));
        }
    }
    if let Some(run) = run::current(&hook.active) {
        run.restart_clock();
    }
    Ok(VmState::Continue)
}

/// An error raised to the script from the hook, with Redis's error table.
fn raise(lua: &Lua, hook: &Hook, text: &str) -> mlua::Error {
    hook.pending.raise_text(lua, text)
}

/// Reads and runs the client's commands until one resumes the script.
fn commands(lua: &Lua, hook: &Hook, shared: &Shared) -> mlua::Result<Resume> {
    loop {
        let argv = loop {
            match wire::parse(&shared.borrow().input) {
                Ok(argv) => break argv,
                Err(Parse::ProtocolError) => return Err(raise(lua, hook, "protocol error")),
                Err(Parse::Incomplete) => {}
            }
            let wire = shared.borrow().wire;
            let Some(bytes) = wire.read() else {
                let mut s = shared.borrow_mut();
                s.step = false;
                s.breakpoint_count = 0;
                return Ok(Resume::ClientGone);
            };
            let mut s = shared.borrow_mut();
            s.input.extend_from_slice(&bytes);
            if s.input.len() > MAX_INPUT {
                s.input = Vec::new();
                drop(s);
                return Err(raise(lua, hook, "max client buffer reached"));
            }
        };
        // Whatever followed the command in the input is dropped, as Redis drops it.
        shared.borrow_mut().input.clear();
        // Names compare as C strings: up to a NUL.
        let name = c_str(&argv[0]).to_ascii_lowercase();
        match name.as_slice() {
            b"s" | b"step" | b"n" | b"next" => {
                shared.borrow_mut().step = true;
                return Ok(Resume::Command);
            }
            b"c" | b"continue" => return Ok(Resume::Command),
            b"a" | b"abort" => return Err(raise(lua, hook, "script aborted for user request")),
            b"h" | b"help" => help(shared),
            b"t" | b"trace" => trace(hook, shared)?,
            b"m" | b"maxlen" => maxlen(shared, &argv),
            b"b" | b"break" => breakpoints(shared, &argv),
            b"e" | b"eval" => eval(lua, hook, shared, &argv)?,
            b"r" | b"redis" if argv.len() > 1 => redis(lua, hook, shared, &argv)?,
            b"p" | b"print" if argv.len() == 2 => print_variable(lua, hook, shared, &argv[1])?,
            b"p" | b"print" => print_locals(hook, shared)?,
            b"l" | b"list" => {
                let mut s = shared.borrow_mut();
                let mut around = s.current_line;
                if let Some(n) = argv.get(1).map(|a| i64::from(atoi(a))).filter(|&n| n > 0) {
                    around = n;
                }
                let context = argv.get(2).map_or(5, |a| i64::from(atoi(a)));
                s.list(around, context);
            }
            b"w" | b"whole" => shared.borrow_mut().list(1, 1_000_000),
            _ => shared
                .borrow_mut()
                .log("<error> Unknown Redis Lua debugger command or wrong number of arguments."),
        }
        shared.borrow_mut().send_logs();
    }
}

/// The bytes before the first NUL.
fn c_str(bytes: &[u8]) -> &[u8] {
    &bytes[..bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len())]
}

const HELP: &[&str] = &[
    "Redis Lua debugger help:",
    "[h]elp               Show this help.",
    "[s]tep               Run current line and stop again.",
    "[n]ext               Alias for step.",
    "[c]ontinue           Run till next breakpoint.",
    "[l]ist               List source code around current line.",
    "[l]ist [line]        List source code around [line].",
    "                     line = 0 means: current position.",
    "[l]ist [line] [ctx]  In this form [ctx] specifies how many lines",
    "                     to show before/after [line].",
    "[w]hole              List all source code. Alias for 'list 1 1000000'.",
    "[p]rint              Show all the local variables.",
    "[p]rint <var>        Show the value of the specified variable.",
    "                     Can also show global vars KEYS and ARGV.",
    "[b]reak              Show all breakpoints.",
    "[b]reak <line>       Add a breakpoint to the specified line.",
    "[b]reak -<line>      Remove breakpoint from the specified line.",
    "[b]reak 0            Remove all breakpoints.",
    "[t]race              Show a backtrace.",
    "[e]val <code>        Execute some Lua code (in a different callframe).",
    "[r]edis <cmd>        Execute a Redis command.",
    "[m]axlen [len]       Trim logged Redis replies and Lua var dumps to len.",
    "                     Specifying zero as <len> means unlimited.",
    "[a]bort              Stop the execution of the script. In sync",
    "                     mode dataset changes will be retained.",
    "",
    "Debugger functions you can call from Lua scripts:",
    "redis.debug()        Produce logs in the debugger console.",
    "redis.breakpoint()   Stop execution like if there was a breakpoint in the",
    "                     next line of code.",
];

fn help(shared: &Shared) {
    let mut s = shared.borrow_mut();
    for line in HELP {
        s.log(*line);
    }
}

/// A frame of the stack (0: where the script stopped), from `inspect.lua`.
struct Frame {
    short_src: String,
    name: Option<Vec<u8>>,
    line: i64,
    locals: Vec<(Vec<u8>, Value)>,
}

fn frame(hook: &Hook, n: usize) -> mlua::Result<Option<Frame>> {
    let Some(t) = hook.inspect.0.call::<Option<Table>>(n)? else {
        return Ok(None);
    };
    let names: Table = t.raw_get("names")?;
    let values: Table = t.raw_get("values")?;
    let count: usize = t.raw_get("count")?;
    let mut locals = Vec::with_capacity(count);
    for i in 1..=count {
        let name: mlua::LuaString = names.raw_get(i)?;
        locals.push((name.as_bytes().to_vec(), values.raw_get(i)?));
    }
    Ok(Some(Frame {
        short_src: t
            .raw_get::<Option<String>>("short_src")?
            .unwrap_or_default(),
        name: t
            .raw_get::<Option<mlua::LuaString>>("name")?
            .map(|s| s.as_bytes().to_vec()),
        line: t.raw_get::<Option<i64>>("line")?.unwrap_or(-1),
        locals,
    }))
}

/// `trace`: the script's frames from where it stopped outwards.
fn trace(hook: &Hook, shared: &Shared) -> mlua::Result<()> {
    let mut level = 0;
    while let Some(f) = frame(hook, level)? {
        if f.short_src.contains("user_script") {
            let mut s = shared.borrow_mut();
            let mut entry = if level == 0 {
                b"In ".to_vec()
            } else {
                b"From ".to_vec()
            };
            entry.extend_from_slice(f.name.as_deref().unwrap_or(b"top level"));
            entry.push(b':');
            s.log(entry);
            s.log_source_line(f.line);
        }
        level += 1;
    }
    if level == 0 {
        shared.borrow_mut().log("<error> Can't retrieve Lua stack.");
    }
    Ok(())
}

/// A value logged with a prefix, trimmed to `maxlen`.
fn log_value(shared: &Shared, prefix: &[u8], v: &Value) {
    let mut entry = prefix.to_vec();
    show::value(&mut entry, v);
    shared.borrow_mut().log_trimmed(entry);
}

/// `print <var>`: the innermost local of that name in any frame, else the KEYS or ARGV
/// global.
fn print_variable(lua: &Lua, hook: &Hook, shared: &Shared, name: &[u8]) -> mlua::Result<()> {
    let name = c_str(name);
    let mut level = 0;
    while let Some(f) = frame(hook, level)? {
        if let Some((_, v)) = f.locals.iter().find(|(n, _)| n == name) {
            log_value(shared, b"<value> ", v);
            return Ok(());
        }
        level += 1;
    }
    if name == b"KEYS" || name == b"ARGV" {
        let name = std::str::from_utf8(name).unwrap_or_default();
        let v: Value = lua.globals().get(name)?;
        log_value(shared, b"<value> ", &v);
    } else {
        shared.borrow_mut().log("No such variable.");
    }
    Ok(())
}

/// `print`: the locals of the frame the script stopped in.
fn print_locals(hook: &Hook, shared: &Shared) -> mlua::Result<()> {
    let mut shown = 0;
    if let Some(f) = frame(hook, 0)? {
        for (name, v) in &f.locals {
            if name.windows(12).any(|w| w == b"(*temporary)") {
                continue;
            }
            let prefix = [b"<value> ".as_slice(), name, b" = "].concat();
            log_value(shared, &prefix, v);
            shown += 1;
        }
    }
    if shown == 0 {
        shared
            .borrow_mut()
            .log("No local variables in the current context.");
    }
    Ok(())
}

/// `break`: lists the breakpoints, or adds (`N`), removes (`-N`) or clears (`0`) them.
fn breakpoints(shared: &Shared, argv: &[Vec<u8>]) {
    let mut s = shared.borrow_mut();
    if argv.len() == 1 {
        if s.breakpoint_count == 0 {
            s.log("No breakpoints set. Use 'b <line>' to add one.");
            return;
        }
        let count = s.breakpoint_count;
        s.log(format!("{count} breakpoints set:"));
        for j in 0..s.breakpoint_count {
            let line = s.breakpoints[j] as i64;
            s.log_source_line(line);
        }
        return;
    }
    for arg in &argv[1..] {
        let Some(line) = crate::numbers::parse_i64(arg) else {
            let mut entry = b"Invalid argument:'".to_vec();
            entry.extend_from_slice(c_str(arg));
            entry.push(b'\'');
            s.log(entry);
            continue;
        };
        // Redis keeps breakpoints as C ints.
        let line = line as i32;
        if line == 0 {
            s.breakpoint_count = 0;
            s.log("All breakpoints removed.");
        } else if line > 0 {
            if s.breakpoint_count == MAX_BREAKPOINTS {
                s.log("Too many breakpoints set.");
            } else if line as usize <= s.source.len() && !s.is_breakpoint(line as i64) {
                let n = s.breakpoint_count;
                s.breakpoints[n] = line;
                s.breakpoint_count += 1;
                s.list(line as i64, 1);
            } else {
                s.log("Wrong line number.");
            }
        } else if remove_breakpoint(&mut s, line.wrapping_neg()) {
            s.log("Breakpoint removed.");
        } else {
            s.log("No breakpoint in the specified line.");
        }
    }
}

/// Removes the breakpoint at `line`. Redis's ldbDelBreakpoint moves the later entries
/// down by as many bytes as there are entries left, not as many ints; a listing after a
/// removal shows what that leaves, so the move is made the same way here.
fn remove_breakpoint(s: &mut super::Session, line: i32) -> bool {
    let Some(j) = s.breakpoints[..s.breakpoint_count]
        .iter()
        .position(|&b| b == line)
    else {
        return false;
    };
    s.breakpoint_count -= 1;
    let mut bytes: Vec<u8> = s.breakpoints.iter().flat_map(|b| b.to_ne_bytes()).collect();
    let moved = s.breakpoint_count - j;
    bytes.copy_within(4 * (j + 1)..4 * (j + 1) + moved, 4 * j);
    for (slot, chunk) in s.breakpoints.iter_mut().zip(bytes.chunks_exact(4)) {
        *slot = i32::from_ne_bytes(chunk.try_into().expect("four bytes"));
    }
    true
}

/// The text of an error value (lua_tostring's), for `<error>` lines: a string or number,
/// the message of Redis's error table, or what the Rust functions raised.
fn error_text(hook: &Hook, error: Value) -> Vec<u8> {
    let error = match error {
        Value::Error(_) | Value::UserData(_) => hook.pending.take_raised().unwrap_or(Value::Nil),
        other => other,
    };
    match &error {
        Value::Table(t) => t
            .raw_get::<Value>("err")
            .ok()
            .as_ref()
            .and_then(crate::scripting::api::to_bytes)
            .unwrap_or_default(),
        other => crate::scripting::api::to_bytes(other).unwrap_or_default(),
    }
}

/// `eval <code>`: the words joined by spaces, run as `return <code>` if that compiles,
/// else as they are, in a frame of their own; logs what it returned or its error.
fn eval(lua: &Lua, hook: &Hook, shared: &Shared, argv: &[Vec<u8>]) -> mlua::Result<()> {
    let code = argv[1..].join(&b' ');
    let expression = [b"return ".as_slice(), &code].concat();
    let compiled = engine::compile_in(lua, &expression, "@ldb_eval")
        .or_else(|_| engine::compile_in(lua, &code, "@ldb_eval"));
    let function = match compiled {
        Ok(f) => f,
        Err(message) => {
            let entry = [b"<error> ".as_slice(), message.as_bytes()].concat();
            shared.borrow_mut().log(entry);
            return Ok(());
        }
    };
    let mut out = hook.inspect.1.call::<MultiValue>(function)?.into_iter();
    let ok = matches!(out.next(), Some(Value::Boolean(true)));
    let value = out.next().unwrap_or(Value::Nil);
    if ok {
        log_value(shared, b"<retval> ", &value);
    } else {
        let entry = [b"<error> ".as_slice(), &error_text(hook, value)].concat();
        shared.borrow_mut().log(entry);
    }
    Ok(())
}

/// `redis <cmd> ...`: runs the command through redis.call with logging on, so the
/// command and its reply (or error) are logged as a stepped script's are.
fn redis(lua: &Lua, hook: &Hook, shared: &Shared, argv: &[Vec<u8>]) -> mlua::Result<()> {
    let call: Function = lua.globals().get::<Table>("redis")?.get("call")?;
    let mut args = vec![Value::Function(call)];
    for arg in &argv[1..] {
        args.push(Value::String(lua.create_string(arg)?));
    }
    shared.borrow_mut().step = true;
    let outcome = hook
        .inspect
        .1
        .call::<MultiValue>(MultiValue::from_vec(args));
    shared.borrow_mut().step = false;
    hook.pending.clear();
    outcome.map(drop)
}

/// `maxlen [len]`: shows or sets the trimming length (0: none; at least 60 otherwise).
fn maxlen(shared: &Shared, argv: &[Vec<u8>]) {
    let mut s = shared.borrow_mut();
    if argv.len() == 2 {
        let n = atoi(&argv[1]);
        s.maxlen_hint_sent = true;
        s.maxlen = if n != 0 && n <= 60 { 60 } else { n as usize };
    }
    let entry = match s.maxlen {
        0 => "<value> replies are unlimited.".to_string(),
        n => format!("<value> replies are truncated at {n} bytes."),
    };
    s.log(entry);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scripting::ldb::Session;

    #[test]
    fn frames_seen_from_the_hook_are_the_scripts() {
        let engine = crate::scripting::engine::Engine::new();
        let hook = Hook {
            active: engine.active.clone(),
            pending: engine.pending.clone(),
            inspect: engine.inspect.clone(),
        };
        let seen = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
        let record = seen.clone();
        engine
            .lua()
            .set_hook(HookTriggers::EVERY_LINE, move |_, debug| {
                if debug.current_line() == Some(3) {
                    let mut level = 0;
                    while let Some(f) = frame(&hook, level).unwrap() {
                        let names: Vec<String> = f
                            .locals
                            .iter()
                            .map(|(n, _)| String::from_utf8_lossy(n).into_owned())
                            .filter(|n| n != "(*temporary)")
                            .collect();
                        let name = f.name.map(|n| String::from_utf8_lossy(&n).into_owned());
                        record.borrow_mut().push((f.short_src, name, f.line, names));
                        level += 1;
                    }
                }
                Ok(VmState::Continue)
            })
            .unwrap();
        let body = b"local function f(x)\n  local y = x\n  return y\nend\nlocal r = f(1)\nreturn r";
        let script = engine.compile(body).unwrap();
        assert!(engine.call(&script).unwrap().is_ok());
        engine.lua().remove_hook();
        let seen = seen.borrow();
        assert_eq!(seen[0].0, "user_script");
        assert_eq!(seen[0].1.as_deref(), Some("f"));
        assert_eq!(
            (seen[0].2, &seen[0].3[..]),
            (3, &["x".to_string(), "y".to_string()][..])
        );
        assert_eq!((seen[1].1.as_deref(), seen[1].2), (None, 5));
        assert_eq!(seen[1].3, ["f"]);
        // Past the script: the C functions that called it, never the sandbox's frames.
        assert!(seen[2..].iter().all(|f| f.0 == "[C]"));
    }

    #[test]
    fn breakpoints_are_added_listed_and_removed_as_redis_does() {
        let shared = Session::start(-1, b"a\nb\nc\nd\ne\nf\ng\nh");
        let argv = |words: &[&str]| -> Vec<Vec<u8>> {
            words.iter().map(|w| w.as_bytes().to_vec()).collect()
        };
        breakpoints(&shared, &argv(&["b", "3", "5", "7", "3", "99", "x", "05"]));
        remove_breakpoint(&mut shared.borrow_mut(), 3);
        let s = shared.borrow();
        // Redis's byte-wise move leaves 5, 5 (not 5, 7) in the first two slots.
        assert_eq!(&s.breakpoints[..s.breakpoint_count], &[5, 5]);
        let logs: Vec<String> = s
            .logs
            .iter()
            .map(|l| String::from_utf8_lossy(l).into_owned())
            .collect();
        assert_eq!(
            &logs[9..],
            [
                "Wrong line number.",
                "Wrong line number.",
                "Invalid argument:'x'",
                "Invalid argument:'05'",
            ]
        );
    }
}
