//! Conversions between command replies and Lua values, as Redis's script_lua.c makes them.
//!
//! Reply -> Lua (what redis.call returns): integer -> number, bulk -> string, null bulk
//! and null array -> false, array -> table, status -> `{ok=...}`, error -> `{err=...}`;
//! RESP3 (after redis.setresp(3)): map -> `{map={...}}`, set -> `{set={k=true}}`,
//! null -> nil, boolean -> boolean, double -> `{double=n}`, big number ->
//! `{big_number=s}`, verbatim -> `{verbatim_string={format=, string=}}`; attributes are
//! skipped.
//!
//! Lua -> reply (what a script returns) is [`super::lua_reply`]'s.

use super::api::error_table;
use mlua::{Lua, Value};

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

#[cfg(test)]
mod tests {
    use super::*;
    use mlua::Table;

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
