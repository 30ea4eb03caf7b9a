//! What the debugger prints: Lua values as Redis's ldbCatStackValue writes them, command
//! replies as ldbRedisProtocolToHuman writes them, and strings quoted as sdscatrepr
//! quotes them.

use crate::scripting::convert::format_g;
use mlua::Value;

/// Tables nested deeper than this print a marker instead (Redis's LUA_MINSTACK / 2).
const MAX_DEPTH: usize = 10;

/// Appends `bytes` quoted: `"` and `\` escaped, the usual control escapes, other
/// unprintable bytes as `\xHH`.
pub fn repr(out: &mut Vec<u8>, bytes: &[u8]) {
    out.push(b'"');
    for &b in bytes {
        match b {
            b'\\' | b'"' => out.extend_from_slice(&[b'\\', b]),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            7 => out.extend_from_slice(b"\\a"),
            8 => out.extend_from_slice(b"\\b"),
            0x20..=0x7e => out.push(b),
            _ => out.extend_from_slice(format!("\\x{b:02x}").as_bytes()),
        }
    }
    out.push(b'"');
}

/// Appends a Lua value: strings quoted, numbers as `%g`, tables as `{a; b}` when they
/// are arrays (keys 1, 2, ... in iteration order) and `{[k]=v; ...}` otherwise.
pub fn value(out: &mut Vec<u8>, v: &Value) {
    value_at(out, v, 0);
}

fn value_at(out: &mut Vec<u8>, v: &Value, depth: usize) {
    if depth == MAX_DEPTH {
        out.extend_from_slice(b"<max recursion level reached! Nested table?>");
        return;
    }
    match v {
        Value::String(s) => repr(out, &s.as_bytes()),
        Value::Boolean(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Value::Integer(n) => out.extend_from_slice(&format_g(*n as f64, 6)),
        Value::Number(n) => out.extend_from_slice(&format_g(*n, 6)),
        Value::Nil => out.extend_from_slice(b"nil"),
        Value::Table(t) => {
            // Both forms are built as the pairs come; the array one is kept if every key
            // was the next index.
            let (mut array, mut full) = (Vec::new(), Vec::new());
            let mut is_array = true;
            let mut expected = 1.0;
            for pair in t.clone().pairs::<Value, Value>() {
                let Ok((k, item)) = pair else { break };
                let index = match k {
                    Value::Integer(n) => Some(n as f64),
                    Value::Number(n) => Some(n),
                    _ => None,
                };
                if index != Some(expected) {
                    is_array = false;
                }
                value_at(&mut array, &item, depth + 1);
                array.extend_from_slice(b"; ");
                full.push(b'[');
                value_at(&mut full, &k, depth + 1);
                full.extend_from_slice(b"]=");
                value_at(&mut full, &item, depth + 1);
                full.extend_from_slice(b"; ");
                expected += 1.0;
            }
            let chosen = if is_array { array } else { full };
            out.push(b'{');
            out.extend_from_slice(&chosen[..chosen.len().saturating_sub(2)]);
            out.push(b'}');
        }
        other => {
            let kind = match other {
                Value::Function(_) => "function",
                Value::UserData(_) => "userdata",
                Value::Thread(_) => "thread",
                Value::LightUserData(_) => "light-userdata",
                _ => {
                    out.extend_from_slice(b"\"<unknown-lua-type>\"");
                    return;
                }
            };
            out.extend_from_slice(format!("\"{kind}@{:p}\"", other.to_pointer()).as_bytes());
        }
    }
}

/// Appends a command reply (RESP2 or RESP3) in the debugger's words: `"bulk"`, `NULL`,
/// `"+OK"`, `[a,b]`, `~(a,b)`, `{k => v}`, `(null)`, `#true`, `(double) 1.5`; returns
/// where the reply ends. As Redis's, a type it does not know (big numbers, verbatim
/// strings, attributes) prints nothing and is not stepped over.
pub fn reply(out: &mut Vec<u8>, r: &[u8], at: usize) -> usize {
    let line_end = |from: usize| {
        r[from..]
            .iter()
            .position(|&b| b == b'\r')
            .map_or(r.len(), |i| from + i)
    };
    let Some(&kind) = r.get(at) else { return at };
    let end = line_end(at + 1);
    let head = &r[at + 1..end];
    let next = (end + 2).min(r.len());
    let count = || {
        std::str::from_utf8(head)
            .ok()
            .and_then(|t| t.parse::<i64>().ok())
            .unwrap_or(0)
    };
    match kind {
        b':' => {
            out.extend_from_slice(head);
            next
        }
        b'$' => match count() {
            -1 => {
                out.extend_from_slice(b"NULL");
                next
            }
            n => {
                let stop = (next + n.max(0) as usize).min(r.len());
                repr(out, &r[next..stop]);
                (stop + 2).min(r.len())
            }
        },
        b'+' | b'-' => {
            repr(out, &r[at..end]);
            next
        }
        b'*' if count() == -1 => {
            out.extend_from_slice(b"NULL");
            next
        }
        b'*' => items(out, r, next, count(), b"[", b"]", false),
        b'~' => items(out, r, next, count(), b"~(", b")", false),
        b'%' => items(out, r, next, count(), b"{", b"}", true),
        b'_' => {
            out.extend_from_slice(b"(null)");
            next
        }
        b'#' => {
            out.extend_from_slice(if head.first() == Some(&b't') {
                b"#true"
            } else {
                b"#false"
            });
            next
        }
        b',' => {
            out.extend_from_slice(b"(double) ");
            out.extend_from_slice(head);
            next
        }
        _ => at,
    }
}

/// The elements of an aggregate reply, `pairs` for a map's.
fn items(
    out: &mut Vec<u8>,
    r: &[u8],
    mut at: usize,
    n: i64,
    open: &[u8],
    close: &[u8],
    pairs: bool,
) -> usize {
    out.extend_from_slice(open);
    for j in 0..n.max(0) {
        at = reply(out, r, at);
        if pairs {
            out.extend_from_slice(b" => ");
            at = reply(out, r, at);
        }
        if j != n - 1 {
            out.push(b',');
        }
    }
    out.extend_from_slice(close);
    at
}

#[cfg(test)]
mod tests {
    use super::*;
    use mlua::Lua;

    fn shown_value(lua: &Lua, code: &str) -> String {
        let v: Value = lua.load(code).eval().unwrap();
        let mut out = Vec::new();
        value(&mut out, &v);
        String::from_utf8(out).unwrap()
    }

    fn shown_reply(r: &[u8]) -> String {
        let mut out = Vec::new();
        reply(&mut out, r, 0);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn strings_are_quoted_as_sdscatrepr() {
        let mut out = Vec::new();
        repr(&mut out, b"a\nb\0\x01\xff\"\\\t\x07\x08\r");
        assert_eq!(
            String::from_utf8(out).unwrap(),
            r#""a\nb\x00\x01\xff\"\\\t\a\b\r""#
        );
    }

    #[test]
    fn lua_values_print_as_redis_prints_them() {
        let lua = Lua::new();
        assert_eq!(
            shown_value(&lua, "return {1, 2, 'x', {y = 3}}"),
            r#"{1; 2; "x"; {["y"]=3}}"#
        );
        assert_eq!(
            shown_value(&lua, "return {1.5, 1e300, 1/0, -(2^63)}"),
            "{1.5; 1e+300; inf; -9.22337e+18}"
        );
        assert_eq!(shown_value(&lua, "return {}"), "{}");
        assert_eq!(shown_value(&lua, "return nil"), "nil");
        assert_eq!(shown_value(&lua, "return true"), "true");
        assert_eq!(
            shown_value(&lua, "local t = {} t[1] = t return t"),
            format!(
                "{}<max recursion level reached! Nested table?>{}",
                "{".repeat(10),
                "}".repeat(10)
            )
        );
        assert!(shown_value(&lua, "return print").starts_with("\"function@0x"));
    }

    #[test]
    fn replies_print_as_redis_prints_them() {
        assert_eq!(shown_reply(b"+PONG\r\n"), r#""+PONG""#);
        assert_eq!(shown_reply(b"-ERR bad\r\n"), r#""-ERR bad""#);
        assert_eq!(shown_reply(b":12\r\n"), "12");
        assert_eq!(shown_reply(b"$-1\r\n"), "NULL");
        assert_eq!(shown_reply(b"*-1\r\n"), "NULL");
        assert_eq!(shown_reply(b"*2\r\n$1\r\nv\r\n$-1\r\n"), r#"["v",NULL]"#);
        assert_eq!(shown_reply(b"*0\r\n"), "[]");
        assert_eq!(
            shown_reply(b"%1\r\n$1\r\nk\r\n~2\r\n:1\r\n#f\r\n"),
            "{\"k\" => ~(1,#false)}"
        );
        assert_eq!(shown_reply(b",1.5\r\n"), "(double) 1.5");
        assert_eq!(shown_reply(b"_\r\n"), "(null)");
        assert_eq!(shown_reply(b"(123\r\n"), "");
    }
}
