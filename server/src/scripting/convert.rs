//! Conversions between command replies and Lua values, as Redis's script_lua.c makes them.
//!
//! Reply -> Lua (what redis.call returns): integer -> number, bulk -> string, null bulk
//! and null array -> false, array -> table, status -> `{ok=...}`, error -> `{err=...}`;
//! RESP3 (after redis.setresp(3)): map -> `{map={...}}`, set -> `{set={k=true}}`,
//! null -> nil, boolean -> boolean, double -> `{double=n}`, big number ->
//! `{big_number=s}`, verbatim -> `{verbatim_string={format=, string=}}`; attributes are
//! skipped.
//!
//! Lua -> reply (what a script returns): string -> bulk, number -> integer (truncated),
//! true -> 1 and false -> null (booleans under RESP3), a table with `err`, `ok`,
//! `double`, `big_number`, `verbatim_string`, `map` or `set` -> that reply, any other
//! table -> an array of its elements 1, 2, ... up to the first nil, anything else -> null.

use super::api::error_table;
use crate::commands::Ctx;
use mlua::{Lua, Table, Value};

/// Nesting past which a returned table is answered "reached lua stack limit", about where
/// Redis's lua_checkstack gives up (8000 slots, three per level).
const MAX_DEPTH: usize = 2600;

/// A number as C's `printf("%.*g")` prints it (Redis formats numeric command arguments
/// with `%.17g`, Lua converts numbers to strings with `%.14g`).
pub fn format_g(n: f64, precision: i32) -> Vec<u8> {
    let mut buf = [0u8; 64];
    // SAFETY: the format takes one int and one double; snprintf writes at most 64 bytes
    // into `buf`, NUL included.
    let len = unsafe {
        libc::snprintf(
            buf.as_mut_ptr().cast(),
            buf.len(),
            c"%.*g".as_ptr(),
            precision,
            n,
        )
    };
    buf[..(len.max(0) as usize).min(63)].to_vec()
}

/// A double converted to `long long` as C does on x86-64 (cvttsd2si): truncated toward
/// zero, and the "integer indefinite" (i64::MIN) for NaN and values out of range.
pub fn c_long_long(n: f64) -> i64 {
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    if !(-TWO_63..TWO_63).contains(&n) {
        return i64::MIN;
    }
    n as i64
}

/// The Lua value of the reply at the start of `reply` (Goblin wrote it, so it is well
/// formed), and whether it is an error.
pub fn reply_to_lua(lua: &Lua, reply: &[u8]) -> mlua::Result<(Value, bool)> {
    let mut pos = 0;
    let value = parse(lua, reply, &mut pos)?;
    Ok((value, reply.first() == Some(&b'-')))
}

/// The line at `pos` (without its CRLF); `pos` moves past it.
fn line<'r>(reply: &'r [u8], pos: &mut usize) -> &'r [u8] {
    let start = *pos;
    let end = reply[start..]
        .windows(2)
        .position(|w| w == b"\r\n")
        .map_or(reply.len(), |i| start + i);
    *pos = (end + 2).min(reply.len());
    &reply[start..end]
}

fn number(text: &[u8]) -> i64 {
    crate::numbers::parse_i64(text).unwrap_or(0)
}

/// A table with one field.
fn single(lua: &Lua, field: &str, value: impl mlua::IntoLua) -> mlua::Result<Value> {
    let t = lua.create_table_with_capacity(0, 1)?;
    t.raw_set(field, value)?;
    Ok(Value::Table(t))
}

fn parse(lua: &Lua, reply: &[u8], pos: &mut usize) -> mlua::Result<Value> {
    let tag = reply[*pos];
    *pos += 1;
    let head = line(reply, pos);
    Ok(match tag {
        b'+' => single(lua, "ok", lua.create_string(head)?)?,
        b'-' => {
            let mut text = b"-".to_vec();
            text.extend_from_slice(head);
            let t = error_table(lua, &text)?;
            // Already counted in errorstats when the command failed.
            t.raw_set("ignore_error_stats_update", true)?;
            Value::Table(t)
        }
        b':' => Value::Number(number(head) as f64),
        b'$' | b'=' => {
            let n = number(head);
            if n < 0 {
                return Ok(Value::Boolean(false));
            }
            let body = &reply[*pos..*pos + n as usize];
            *pos += n as usize + 2;
            if tag == b'$' {
                Value::String(lua.create_string(body)?)
            } else {
                let (format, text) = body.split_at(body.len().min(4));
                let inner = lua.create_table_with_capacity(0, 2)?;
                inner.raw_set("string", lua.create_string(text)?)?;
                inner.raw_set("format", lua.create_string(&format[..format.len().min(3)])?)?;
                single(lua, "verbatim_string", inner)?
            }
        }
        b'*' | b'>' => {
            let n = number(head);
            if n < 0 {
                return Ok(Value::Boolean(false));
            }
            let t = lua.create_table_with_capacity(n as usize, 0)?;
            for i in 1..=n {
                t.raw_set(i, parse(lua, reply, pos)?)?;
            }
            Value::Table(t)
        }
        b'%' | b'~' => {
            let n = number(head);
            let inner = lua.create_table()?;
            for _ in 0..n {
                let k = parse(lua, reply, pos)?;
                let v = if tag == b'%' {
                    parse(lua, reply, pos)?
                } else {
                    Value::Boolean(true)
                };
                inner.raw_set(k, v)?;
            }
            single(lua, if tag == b'%' { "map" } else { "set" }, inner)?
        }
        b'|' => {
            for _ in 0..number(head) * 2 {
                parse(lua, reply, pos)?;
            }
            parse(lua, reply, pos)?
        }
        b'_' => Value::Nil,
        b'#' => Value::Boolean(head == b"t"),
        b',' => {
            let d = crate::numbers::parse_f64(head).unwrap_or(f64::NAN);
            single(lua, "double", d)?
        }
        b'(' => single(lua, "big_number", lua.create_string(head)?)?,
        _ => Value::Nil,
    })
}

/// Writes what a script returned as the reply of `ctx`'s command; `resp3` is the script's
/// protocol (redis.setresp), which decides how booleans go out.
pub fn lua_to_reply(ctx: &mut Ctx, value: &Value, resp3: bool) {
    write_value(ctx, value, resp3, 0);
}

fn write_value(ctx: &mut Ctx, value: &Value, resp3: bool, depth: usize) {
    match value {
        Value::String(s) => ctx.out.bulk(&s.as_bytes()),
        Value::Boolean(b) => match (resp3, b) {
            (false, true) => ctx.out.int(1),
            (false, false) => ctx.out.null(),
            (true, b) => ctx.out.boolean(*b),
        },
        Value::Integer(n) => ctx.out.int(*n),
        Value::Number(n) => ctx.out.int(c_long_long(*n)),
        Value::Table(t) if depth >= MAX_DEPTH => {
            let _ = t;
            ctx.error("reached lua stack limit");
        }
        Value::Table(t) => write_table(ctx, t, resp3, depth),
        _ => ctx.out.null(),
    }
}

/// A field of `t` read without metamethods, if it is of the kind `pick` accepts.
fn field<T>(t: &Table, name: &str, pick: impl Fn(Value) -> Option<T>) -> Option<T> {
    t.raw_get::<Value>(name).ok().and_then(pick)
}

fn string_of(v: Value) -> Option<mlua::LuaString> {
    match v {
        Value::String(s) => Some(s),
        _ => None,
    }
}

/// Spaces for the CR and LF of a status or big number, as Redis maps them.
fn no_newlines(bytes: &[u8]) -> Vec<u8> {
    bytes
        .iter()
        .map(|&b| if b == b'\r' || b == b'\n' { b' ' } else { b })
        .collect()
}

fn write_table(ctx: &mut Ctx, t: &Table, resp3: bool, depth: usize) {
    if let Some(err) = field(t, "err", string_of) {
        let text = String::from_utf8_lossy(&err.as_bytes()).into_owned();
        let counted = field(t, "ignore_error_stats_update", |v| match v {
            Value::Boolean(b) => Some(b),
            _ => None,
        })
        .unwrap_or(false);
        return if counted {
            ctx.error_counted(&text)
        } else {
            ctx.error(&text)
        };
    }
    if let Some(ok) = field(t, "ok", string_of) {
        let text = no_newlines(&ok.as_bytes());
        let end = text.iter().position(|&b| b == 0).unwrap_or(text.len());
        return ctx.out.simple(&String::from_utf8_lossy(&text[..end]));
    }
    if let Some(d) = field(t, "double", |v| match v {
        Value::Number(n) => Some(n),
        Value::Integer(n) => Some(n as f64),
        _ => None,
    }) {
        return ctx.out.double(d);
    }
    if let Some(big) = field(t, "big_number", string_of) {
        return ctx.out.big_number(&no_newlines(&big.as_bytes()));
    }
    if let Ok(Value::Table(v)) = t.raw_get::<Value>("verbatim_string") {
        if let (Some(format), Some(text)) = (
            field(&v, "format", string_of),
            field(&v, "string", string_of),
        ) {
            return ctx.out.verbatim_as(&format.as_bytes(), &text.as_bytes());
        }
    }
    if let Ok(Value::Table(map)) = t.raw_get::<Value>("map") {
        let pairs: Vec<(Value, Value)> = map.pairs().filter_map(Result::ok).collect();
        ctx.out.map(pairs.len());
        for (k, v) in &pairs {
            write_value(ctx, k, resp3, depth + 1);
            write_value(ctx, v, resp3, depth + 1);
        }
        return;
    }
    if let Ok(Value::Table(set)) = t.raw_get::<Value>("set") {
        let members: Vec<Value> = set
            .pairs::<Value, Value>()
            .filter_map(|p| p.ok().map(|(k, _)| k))
            .collect();
        ctx.out.set(members.len());
        for m in &members {
            write_value(ctx, m, resp3, depth + 1);
        }
        return;
    }
    let mut items = Vec::new();
    for i in 1.. {
        match t.raw_get::<Value>(i) {
            Ok(Value::Nil) | Err(_) => break,
            Ok(v) => items.push(v),
        }
    }
    ctx.out.array(items.len());
    for v in &items {
        write_value(ctx, v, resp3, depth + 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_print_as_c_does() {
        assert_eq!(format_g(3.0, 17), b"3");
        assert_eq!(format_g(0.1, 17), b"0.10000000000000001");
        assert_eq!(format_g(1e20, 17), b"1e+20");
        assert_eq!(format_g(1.5, 14), b"1.5");
    }

    #[test]
    fn replies_become_lua_values() {
        let lua = Lua::new();
        let lua_of = |reply: &[u8]| reply_to_lua(&lua, reply).unwrap();
        assert_eq!(lua_of(b":42\r\n").0, Value::Number(42.0));
        assert_eq!(lua_of(b"$-1\r\n").0, Value::Boolean(false));
        assert_eq!(lua_of(b"*-1\r\n").0, Value::Boolean(false));
        assert_eq!(lua_of(b"_\r\n").0, Value::Nil);
        assert_eq!(lua_of(b"#t\r\n").0, Value::Boolean(true));
        let (v, _) = lua_of(b"$3\r\nabc\r\n");
        assert_eq!(v.as_string().unwrap().as_bytes().as_ref(), b"abc");
        let (v, _) = lua_of(b"*3\r\n:1\r\n$-1\r\n+OK\r\n");
        let t = v.as_table().unwrap();
        assert_eq!(t.raw_len(), 3);
        assert_eq!(t.raw_get::<Value>(2).unwrap(), Value::Boolean(false));
        let ok: Table = t.raw_get(3).unwrap();
        assert_eq!(ok.raw_get::<String>("ok").unwrap(), "OK");
        let (v, is_error) = lua_of(b"-WRONGTYPE Operation\r\n");
        assert!(is_error);
        let t = v.as_table().unwrap();
        assert_eq!(t.raw_get::<String>("err").unwrap(), "WRONGTYPE Operation");
        let (v, _) = lua_of(b"%1\r\n$1\r\na\r\n,1.5\r\n");
        let map: Table = v.as_table().unwrap().raw_get("map").unwrap();
        let d: Table = map.raw_get("a").unwrap();
        assert_eq!(d.raw_get::<f64>("double").unwrap(), 1.5);
        let (v, _) = lua_of(b"=8\r\ntxt:abcd\r\n");
        let vs: Table = v.as_table().unwrap().raw_get("verbatim_string").unwrap();
        assert_eq!(vs.raw_get::<String>("format").unwrap(), "txt");
        assert_eq!(vs.raw_get::<String>("string").unwrap(), "abcd");
        let (v, _) = lua_of(b"(12345678901234567890\r\n");
        let big: String = v.as_table().unwrap().raw_get("big_number").unwrap();
        assert_eq!(big, "12345678901234567890");
        let (v, _) = lua_of(b"|1\r\n+a\r\n+b\r\n:7\r\n");
        assert_eq!(v, Value::Number(7.0));
    }
}
