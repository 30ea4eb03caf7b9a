//! The `redis` table's functions written in Rust (and math.random on Redis's rand48).
//! They raise their errors as Redis's C functions do: the value Redis raises (its error
//! table, or a message with the script's position) is kept in [`Pending`] and an opaque
//! error goes up instead, which `prelude.lua`'s handler and pcall trade for the value.

use super::cache::sha1hex;
use super::convert::format_g;
use super::engine::ActiveRun;
use super::run::{self, Run};
use crate::config::LogLevel;
use crate::propagate::Targets;
use mlua::{Lua, MultiValue, Table, Value};
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};

/// The error value raised last by a Rust function, until the Lua side takes it.
#[derive(Clone, Default)]
pub struct Pending(Rc<RefCell<Option<Value>>>);

impl Pending {
    /// Keeps `value` and gives the error that raises it.
    pub fn raise(&self, value: Value) -> mlua::Error {
        *self.0.borrow_mut() = Some(value);
        mlua::Error::runtime("script error")
    }

    /// Raises Redis's error table for `text`.
    pub fn raise_text(&self, lua: &Lua, text: &str) -> mlua::Error {
        match error_table(lua, text.as_bytes()) {
            Ok(t) => self.raise(Value::Table(t)),
            Err(e) => e,
        }
    }

    /// The value kept, or `fallback` (an error not raised by these functions).
    fn take(&self, fallback: Value) -> Value {
        self.0.borrow_mut().take().unwrap_or(fallback)
    }

    /// The value kept, if any (taken).
    pub fn take_raised(&self) -> Option<Value> {
        self.0.borrow_mut().take()
    }

    /// Drops a value a script's own error handler left behind.
    pub fn clear(&self) {
        self.0.borrow_mut().take();
    }
}

/// The error table Redis pushes for an error text (luaPushErrorBuff): `-CODE message`
/// keeps its code, a text without the dash gets `ERR`; CR and LF at the ends are trimmed.
/// A debugging session that steps logs the text as it came.
pub fn error_table(lua: &Lua, text: &[u8]) -> mlua::Result<Table> {
    super::ldb::log_error(lua, text);
    let (code, message): (&[u8], &[u8]) = match text.strip_prefix(b"-") {
        Some(rest) => match rest.iter().position(|&b| b == b' ') {
            Some(sp) => (&rest[..sp], &rest[sp + 1..]),
            None => (b"ERR", rest),
        },
        None => (b"ERR", text),
    };
    let trim = |b: &u8| *b == b'\r' || *b == b'\n';
    let start = message
        .iter()
        .position(|b| !trim(b))
        .unwrap_or(message.len());
    let end = message
        .iter()
        .rposition(|b| !trim(b))
        .map_or(start, |i| i + 1);
    let mut err = code.to_vec();
    err.push(b' ');
    err.extend_from_slice(&message[start..end.max(start)]);
    let t = lua.create_table_with_capacity(0, 1)?;
    t.raw_set("err", lua.create_string(err)?)?;
    Ok(t)
}

/// What lua_tolstring gives for a value: strings as they are, numbers as `%.14g`.
pub fn to_bytes(value: &Value) -> Option<Vec<u8>> {
    match value {
        Value::String(s) => Some(s.as_bytes().to_vec()),
        Value::Integer(n) => Some(format_g(*n as f64, 14)),
        Value::Number(n) => Some(format_g(*n, 14)),
        _ => None,
    }
}

/// What lua_tonumber gives: numbers, and strings that read as numbers.
pub fn to_number(value: &Value) -> Option<f64> {
    match value {
        Value::Integer(n) => Some(*n as f64),
        Value::Number(n) => Some(*n),
        Value::String(s) => {
            let text = s.as_bytes();
            let text = std::str::from_utf8(&text).ok()?.trim();
            text.parse::<f64>().ok().or_else(|| {
                let hex = text
                    .strip_prefix("0x")
                    .or_else(|| text.strip_prefix("0X"))?;
                i64::from_str_radix(hex, 16).ok().map(|n| n as f64)
            })
        }
        _ => None,
    }
}

/// Redis's rand48 state (redisLrand48), one for the process as in Redis: math.random gives
/// the same sequence on every platform, continuing from one script to the next.
static RAND48: AtomicU64 = AtomicU64::new(0x1234_ABCD_330E);

/// The next redisLrand48 value (31 bits).
fn lrand48() -> u64 {
    const A: u64 = 0x5_DEEC_E66D;
    let mask = (1u64 << 48) - 1;
    let next = (RAND48
        .load(Ordering::Relaxed)
        .wrapping_mul(A)
        .wrapping_add(0xB))
        & mask;
    RAND48.store(next, Ordering::Relaxed);
    next >> 17
}

/// redisSrand48.
fn srand48(seed: i64) {
    RAND48.store(((seed as u32 as u64) << 16) | 0x330E, Ordering::Relaxed);
}

/// Where the function calling us is, as luaL_where(L, 1) prints it ("user_script:3: ").
fn position(lua: &Lua) -> String {
    lua.inspect_stack(1, |d| {
        let line = d.current_line()?;
        let src = d.source().short_src?.into_owned();
        Some(format!("{src}:{line}: "))
    })
    .flatten()
    .unwrap_or_default()
}

/// A message with the caller's position, raised as luaL_error raises it.
pub fn raise_here(lua: &Lua, pending: &Pending, message: &str) -> mlua::Error {
    match lua.create_string(format!("{}{message}", position(lua))) {
        Ok(s) => pending.raise(Value::String(s)),
        Err(e) => e,
    }
}

/// luaL_checkint for argument `n` of math.random (1-based): a number or numeric string,
/// truncated toward zero.
fn check_int(lua: &Lua, pending: &Pending, args: &MultiValue, n: usize) -> mlua::Result<i64> {
    let value = args.get(n - 1).unwrap_or(&Value::Nil);
    match to_number(value) {
        Some(v) => Ok(v as i32 as i64),
        None => {
            let got = match value {
                Value::Nil if n > args.len() => "no value",
                v => v.type_name(),
            };
            let msg = format!("bad argument #{n} to 'random' (number expected, got {got})");
            Err(raise_here(lua, pending, &msg))
        }
    }
}

/// math.random([m [, n]]) as Redis's redis_math_random.
fn random(lua: &Lua, pending: &Pending, args: MultiValue) -> mlua::Result<f64> {
    const RAND_MAX: u64 = 2_147_483_647;
    let r = (lrand48() % RAND_MAX) as f64 / RAND_MAX as f64;
    let interval_empty = |n: usize| {
        let msg = format!("bad argument #{n} to 'random' (interval is empty)");
        raise_here(lua, pending, &msg)
    };
    match args.len() {
        0 => Ok(r),
        1 => {
            let u = check_int(lua, pending, &args, 1)?;
            if u < 1 {
                return Err(interval_empty(1));
            }
            Ok((r * u as f64).floor() + 1.0)
        }
        2 => {
            let l = check_int(lua, pending, &args, 1)?;
            let u = check_int(lua, pending, &args, 2)?;
            if l > u {
                return Err(interval_empty(2));
            }
            Ok((r * (u - l + 1) as f64).floor() + l as f64)
        }
        _ => Err(raise_here(lua, pending, "wrong number of arguments")),
    }
}

/// The functions `prelude.lua` builds the `redis` table from.
pub fn functions(lua: &Lua, active: &ActiveRun, pending: &Pending) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    for (name, raise_errors) in [("call", true), ("pcall", false)] {
        let (active, pending) = (active.clone(), pending.clone());
        t.raw_set(
            name,
            lua.create_function(move |lua, args: MultiValue| match run::current(&active) {
                Some(run) => run.call(lua, &pending, &args, raise_errors),
                None => Err(pending.raise_text(
                    lua,
                    "redis.call/pcall can only be called inside a script invocation",
                )),
            })?,
        )?;
    }
    let p = pending.clone();
    t.raw_set(
        "sha1hex",
        lua.create_function(move |lua, args: MultiValue| {
            if args.len() != 1 {
                return Err(p.raise_text(lua, "wrong number of arguments"));
            }
            let bytes = to_bytes(&args[0]).unwrap_or_default();
            lua.create_string(sha1hex(&bytes))
        })?,
    )?;
    t.raw_set(
        "error_reply",
        lua.create_function(|lua, args: MultiValue| match single_string(&args) {
            Some(text) if text.starts_with(b"-") => error_table(lua, &text),
            Some(text) => error_table(lua, &[b"-".as_slice(), &text].concat()),
            None => error_table(lua, b"wrong number or type of arguments"),
        })?,
    )?;
    t.raw_set(
        "status_reply",
        lua.create_function(|lua, args: MultiValue| match single_string(&args) {
            Some(text) => {
                let t = lua.create_table_with_capacity(0, 1)?;
                t.raw_set("ok", lua.create_string(text)?)?;
                Ok(t)
            }
            None => error_table(lua, b"wrong number or type of arguments"),
        })?,
    )?;
    let p = pending.clone();
    t.raw_set(
        "log",
        lua.create_function(move |lua, args: MultiValue| {
            log(args).map_err(|text| p.raise_text(lua, text))
        })?,
    )?;
    for (name, what) in [("setresp", Setting::Resp), ("set_repl", Setting::Repl)] {
        let (active, p) = (active.clone(), pending.clone());
        t.raw_set(
            name,
            lua.create_function(move |lua, args: MultiValue| {
                setting(run::current(&active), what, &args).map_err(|text| p.raise_text(lua, &text))
            })?,
        )?;
    }
    let (acl_active, p) = (active.clone(), pending.clone());
    t.raw_set(
        "acl_check_cmd",
        lua.create_function(move |lua, args: MultiValue| {
            let Some(run) = run::current(&acl_active) else {
                return Err(p.raise_text(
                    lua,
                    "redis.acl_check_cmd can only be called inside a script invocation",
                ));
            };
            let argv = run::command_args(&args).map_err(|text| p.raise_text(lua, text))?;
            let Some(cmd) = run.resolve(&argv) else {
                return Err(p.raise_text(lua, "Invalid command passed to redis.acl_check_cmd()"));
            };
            Ok(run.acl_allows(cmd, &argv))
        })?,
    )?;
    t.raw_set(
        "breakpoint",
        lua.create_function(|lua, ()| Ok(super::ldb::breakpoint(lua)))?,
    )?;
    t.raw_set(
        "debug",
        lua.create_function(|lua, args: MultiValue| {
            super::ldb::debug(lua, &args);
            Ok(())
        })?,
    )?;
    let p = pending.clone();
    t.raw_set(
        "take_error",
        lua.create_function(move |_, raised: Value| Ok(p.take(raised)))?,
    )?;
    let p = pending.clone();
    t.raw_set(
        "random",
        lua.create_function(move |lua, args: MultiValue| random(lua, &p, args))?,
    )?;
    let p = pending.clone();
    t.raw_set(
        "randomseed",
        lua.create_function(move |lua, args: MultiValue| {
            srand48(check_int(lua, &p, &args, 1)?);
            Ok(())
        })?,
    )?;
    Ok(t)
}

/// The one string argument of error_reply / status_reply.
fn single_string(args: &MultiValue) -> Option<Vec<u8>> {
    match args.len() {
        1 => match &args[0] {
            Value::String(s) => Some(s.as_bytes().to_vec()),
            _ => None,
        },
        _ => None,
    }
}

/// redis.log(level, ...): the arguments joined by spaces, at Redis's level 0 (debug) to
/// 3 (warning).
fn log(args: MultiValue) -> Result<(), &'static str> {
    if args.len() < 2 {
        return Err("redis.log() requires two arguments or more.");
    }
    let level = to_number(&args[0]).ok_or("First argument must be a number (log level).")?;
    let level = match level as i64 {
        0 => LogLevel::Debug,
        1 => LogLevel::Verbose,
        2 => LogLevel::Notice,
        3 => LogLevel::Warning,
        _ => return Err("Invalid debug level."),
    };
    let mut line = Vec::new();
    for (j, arg) in args.iter().enumerate().skip(1) {
        if let Some(bytes) = to_bytes(arg) {
            if j != 1 {
                line.push(b' ');
            }
            line.extend_from_slice(&bytes);
        }
    }
    crate::log::log(level, &String::from_utf8_lossy(&line));
    Ok(())
}

/// The run settings a script may change.
#[derive(Clone, Copy)]
enum Setting {
    /// redis.setresp(2|3)
    Resp,
    /// redis.set_repl(flags)
    Repl,
}

fn setting(run: Option<&mut Run>, what: Setting, args: &MultiValue) -> Result<(), String> {
    let name = match what {
        Setting::Resp => "setresp",
        Setting::Repl => "set_repl",
    };
    let run =
        run.ok_or_else(|| format!("redis.{name} can only be called inside a script invocation"))?;
    if args.len() != 1 {
        return Err(format!("redis.{name}() requires one argument."));
    }
    let value = to_number(&args[0]).unwrap_or(0.0) as i64;
    match what {
        Setting::Resp if value == 2 || value == 3 => run.resp3 = value == 3,
        Setting::Resp => return Err("RESP version must be 2 or 3.".into()),
        Setting::Repl if value & !3 == 0 => run.repl = Targets(value as u8),
        Setting::Repl => {
            return Err(
                "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE."
                    .into(),
            )
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_tables_keep_or_add_the_code() {
        let lua = Lua::new();
        let err =
            |text: &[u8]| -> String { error_table(&lua, text).unwrap().raw_get("err").unwrap() };
        assert_eq!(
            err(b"-WRONGTYPE Operation against"),
            "WRONGTYPE Operation against"
        );
        assert_eq!(err(b"-X"), "ERR X");
        assert_eq!(err(b"plain words\r\n"), "ERR plain words");
    }

    #[test]
    fn rand48_follows_redis() {
        srand48(0);
        let first = lrand48();
        srand48(0);
        assert_eq!(lrand48(), first);
        assert!(first < 1 << 31);
    }
}
