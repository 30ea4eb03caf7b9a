//! lua-cmsgpack 0.4.0 as Redis embeds it: cmsgpack.pack(...) concatenates the MessagePack
//! of each argument; unpack / unpack_one / unpack_limit decode a stream of values.
//!
//! Numbers that are whole and fit 64 bits pack as the smallest integer encoding, others
//! as float32 when that is exact, else float64; tables whose keys are exactly 1..n pack as
//! arrays, others as maps in `next` order; tables nested 16 deep pack as nil, as do
//! functions and other unsupported values.

use super::{arg_error, check_bytes, error, opt_integer, Pending};
use mlua::{Lua, MultiValue, Table, Value};

/// Tables deeper than this pack as nil (LUACMSGPACK_MAX_NESTING).
const MAX_NESTING: usize = 16;
/// The Lua stack slots a C function may use (LUAI_MAXCSTACK): a decode that would need
/// more fails as luaL_checkstack does.
const MAX_SLOTS: usize = 8000;

fn encode_int(out: &mut Vec<u8>, n: i64) {
    if n >= 0 {
        if n <= 127 {
            out.push(n as u8);
        } else if n <= 0xff {
            out.extend_from_slice(&[0xcc, n as u8]);
        } else if n <= 0xffff {
            out.push(0xcd);
            out.extend_from_slice(&(n as u16).to_be_bytes());
        } else if n <= 0xffff_ffff {
            out.push(0xce);
            out.extend_from_slice(&(n as u32).to_be_bytes());
        } else {
            out.push(0xcf);
            out.extend_from_slice(&(n as u64).to_be_bytes());
        }
    } else if n >= -32 {
        out.push(n as i8 as u8);
    } else if n >= -128 {
        out.extend_from_slice(&[0xd0, n as i8 as u8]);
    } else if n >= -32768 {
        out.push(0xd1);
        out.extend_from_slice(&(n as i16).to_be_bytes());
    } else if n >= -2_147_483_648 {
        out.push(0xd2);
        out.extend_from_slice(&(n as i32).to_be_bytes());
    } else {
        out.push(0xd3);
        out.extend_from_slice(&n.to_be_bytes());
    }
}

fn encode_number(out: &mut Vec<u8>, n: f64) {
    // IS_INT64_EQUIVALENT: not infinite and (int64_t)n == n.
    if !n.is_infinite() && !n.is_nan() && (n as i64) as f64 == n && n < 9.223_372_036_854_776e18 {
        return encode_int(out, n as i64);
    }
    let f = n as f32;
    if n == f as f64 {
        out.push(0xca);
        out.extend_from_slice(&f.to_be_bytes());
    } else {
        out.push(0xcb);
        out.extend_from_slice(&n.to_be_bytes());
    }
}

fn encode_bytes(out: &mut Vec<u8>, s: &[u8]) {
    let len = s.len();
    if len < 32 {
        out.push(0xa0 | len as u8);
    } else if len <= 0xff {
        out.extend_from_slice(&[0xd9, len as u8]);
    } else if len <= 0xffff {
        out.push(0xda);
        out.extend_from_slice(&(len as u16).to_be_bytes());
    } else {
        out.push(0xdb);
        out.extend_from_slice(&(len as u32).to_be_bytes());
    }
    out.extend_from_slice(s);
}

fn header(out: &mut Vec<u8>, len: usize, fix: u8, b16: u8, b32: u8) {
    if len <= 15 {
        out.push(fix | len as u8);
    } else if len <= 0xffff {
        out.push(b16);
        out.extend_from_slice(&(len as u16).to_be_bytes());
    } else {
        out.push(b32);
        out.extend_from_slice(&(len as u32).to_be_bytes());
    }
}

/// table_is_an_array: every key a positive whole number (fitting an int), and as many
/// keys as the largest.
fn is_array(t: &Table) -> mlua::Result<bool> {
    let (mut count, mut max) = (0i64, 0i64);
    // Values read as booleans: no handle is made for them (only the keys are looked at).
    for pair in t.pairs::<Value, bool>() {
        let (key, _) = pair?;
        let n = match key {
            Value::Integer(i) => i as f64,
            Value::Number(n) => n,
            _ => return Ok(false),
        };
        if n <= 0.0 || n.is_infinite() || (n as i32) as f64 != n {
            return Ok(false);
        }
        max = max.max(n as i64);
        count += 1;
    }
    Ok(max == count)
}

fn encode_value(out: &mut Vec<u8>, value: &Value, level: usize) -> mlua::Result<()> {
    match value {
        Value::String(s) => encode_bytes(out, &s.as_bytes()),
        Value::Boolean(b) => out.push(if *b { 0xc3 } else { 0xc2 }),
        Value::Integer(n) => encode_number(out, *n as f64),
        Value::Number(n) => encode_number(out, *n),
        Value::Table(t) if level < MAX_NESTING => {
            if is_array(t)? {
                let len = t.raw_len();
                header(out, len, 0x90, 0xdc, 0xdd);
                for i in 1..=len {
                    let item: Value = t.raw_get(i)?;
                    encode_value(out, &item, level + 1)?;
                }
            } else {
                // Counted, then walked again: holding every pair at once would take a
                // handle per key and value.
                let mut len = 0;
                for pair in t.pairs::<bool, bool>() {
                    pair?;
                    len += 1;
                }
                header(out, len, 0x80, 0xde, 0xdf);
                for pair in t.pairs::<Value, Value>() {
                    let (k, v) = pair?;
                    encode_value(out, &k, level + 1)?;
                    encode_value(out, &v, level + 1)?;
                }
            }
        }
        _ => out.push(0xc0),
    }
    Ok(())
}

/// The MessagePack of one value.
pub fn pack_value(value: &Value) -> mlua::Result<Vec<u8>> {
    let mut out = Vec::new();
    encode_value(&mut out, value, 0)?;
    Ok(out)
}

/// Why a decode stopped.
#[derive(Debug, PartialEq)]
pub enum DecodeError {
    /// MP_CUR_ERROR_EOF.
    Eof,
    /// MP_CUR_ERROR_BADFMT.
    BadFormat,
    /// A Lua error (a nil or NaN map key).
    Lua(String),
    /// luaL_checkstack failed: its message.
    Stack(&'static str),
}

struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
}

impl Cursor<'_> {
    fn left(&self) -> usize {
        self.data.len() - self.pos
    }

    fn take(&mut self, n: usize) -> Result<&[u8], DecodeError> {
        if self.left() < n {
            return Err(DecodeError::Eof);
        }
        let s = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    fn be(&mut self, n: usize) -> Result<u64, DecodeError> {
        Ok(self.take(n)?.iter().fold(0u64, |a, &b| (a << 8) | b as u64))
    }
}

/// What the first byte of an item starts.
enum Item {
    /// A whole value.
    Value(Value),
    /// An array of this many items.
    Array(usize),
    /// A map of this many pairs.
    Map(usize),
}

/// Reads one item's header (a scalar whole), as mp_decode_to_lua_type's switch.
fn item(lua: &Lua, c: &mut Cursor) -> Result<Item, DecodeError> {
    let lua_err = |e: mlua::Error| DecodeError::Lua(e.to_string());
    if c.left() < 1 {
        return Err(DecodeError::Eof);
    }
    let tag = c.data[c.pos];
    // A tag and `n` bytes after it, big-endian.
    let fixed = |c: &mut Cursor, n: usize| -> Result<u64, DecodeError> {
        if c.left() < 1 + n {
            return Err(DecodeError::Eof);
        }
        c.pos += 1;
        c.be(n)
    };
    // A string of `len` bytes after a header of `hdr` bytes.
    let string = |c: &mut Cursor, hdr: usize, len: usize| -> Result<Item, DecodeError> {
        if c.left() < hdr + len {
            return Err(DecodeError::Eof);
        }
        c.pos += hdr;
        let s = c.take(len)?;
        Ok(Item::Value(Value::String(
            lua.create_string(s).map_err(lua_err)?,
        )))
    };
    let number = |v: f64| Ok(Item::Value(Value::Number(v)));
    match tag {
        0xcc => number(fixed(c, 1)? as f64),
        0xd0 => number(fixed(c, 1)? as u8 as i8 as f64),
        0xcd => number(fixed(c, 2)? as f64),
        0xd1 => number(fixed(c, 2)? as u16 as i16 as f64),
        0xce => number(fixed(c, 4)? as f64),
        0xd2 => number(fixed(c, 4)? as u32 as i32 as f64),
        // As lua-cmsgpack: pushed through lua_Integer (int64), so past 2^63 it wraps.
        0xcf => number(fixed(c, 8)? as i64 as f64),
        0xd3 => number(fixed(c, 8)? as i64 as f64),
        0xca => number(f32::from_bits(fixed(c, 4)? as u32) as f64),
        0xcb => number(f64::from_bits(fixed(c, 8)?)),
        0xc0 => {
            c.pos += 1;
            Ok(Item::Value(Value::Nil))
        }
        0xc3 | 0xc2 => {
            c.pos += 1;
            Ok(Item::Value(Value::Boolean(tag == 0xc3)))
        }
        0xd9..=0xdb => {
            let n = match tag {
                0xd9 => 1,
                0xda => 2,
                _ => 4,
            };
            if c.left() < 1 + n {
                return Err(DecodeError::Eof);
            }
            let len = c.data[c.pos + 1..c.pos + 1 + n]
                .iter()
                .fold(0usize, |a, &b| (a << 8) | b as usize);
            string(c, 1 + n, len)
        }
        0xdc => Ok(Item::Array(fixed(c, 2)? as usize)),
        0xdd => Ok(Item::Array(fixed(c, 4)? as usize)),
        0xde => Ok(Item::Map(fixed(c, 2)? as usize)),
        0xdf => Ok(Item::Map(fixed(c, 4)? as usize)),
        t if t & 0x80 == 0 => {
            c.pos += 1;
            number(t as f64)
        }
        t if t & 0xe0 == 0xe0 => {
            c.pos += 1;
            number(t as i8 as f64)
        }
        t if t & 0xe0 == 0xa0 => string(c, 1, (t & 0x1f) as usize),
        t if t & 0xf0 == 0x90 => {
            c.pos += 1;
            Ok(Item::Array((t & 0xf) as usize))
        }
        t if t & 0xf0 == 0x80 => {
            c.pos += 1;
            Ok(Item::Map((t & 0xf) as usize))
        }
        _ => Err(DecodeError::BadFormat),
    }
}

/// An array or map being filled.
struct Open {
    table: Table,
    /// Items (array) or pairs (map) still to read.
    remaining: usize,
    /// Array: the next index. Map: unused.
    next_index: usize,
    /// Map: the key read, waiting for its value.
    key: Option<Value>,
    is_map: bool,
}

impl Open {
    /// The Lua stack slots this container holds: its table, and the index or key of the
    /// item being read.
    fn slots(&self) -> usize {
        if self.is_map {
            1 + usize::from(self.key.is_some())
        } else {
            2
        }
    }
}

/// One value (mp_decode_to_lua_type), without recursion; `base` is the Lua stack slots in
/// use before it (the argument and the values decoded so far), so that nesting fails
/// where lua-cmsgpack's luaL_checkstack calls fail.
fn decode_value(lua: &Lua, c: &mut Cursor, base: usize) -> Result<Value, DecodeError> {
    let lua_err = |e: mlua::Error| DecodeError::Lua(e.to_string());
    let mut open: Vec<Open> = Vec::new();
    let mut used = base;
    loop {
        if used + 1 > MAX_SLOTS {
            return Err(DecodeError::Stack(
                "too many return values at once; use unpack_one or unpack_limit instead.",
            ));
        }
        let mut value = match item(lua, c)? {
            Item::Value(v) => v,
            Item::Array(n) => {
                if used + 2 > MAX_SLOTS {
                    return Err(DecodeError::Stack("in function mp_decode_to_lua_array"));
                }
                let table = lua.create_table().map_err(lua_err)?;
                if n == 0 {
                    Value::Table(table)
                } else {
                    let o = Open {
                        table,
                        remaining: n,
                        next_index: 1,
                        key: None,
                        is_map: false,
                    };
                    used += o.slots();
                    open.push(o);
                    continue;
                }
            }
            Item::Map(n) => {
                let table = lua.create_table().map_err(lua_err)?;
                if n == 0 {
                    Value::Table(table)
                } else {
                    let o = Open {
                        table,
                        remaining: n,
                        next_index: 0,
                        key: None,
                        is_map: true,
                    };
                    used += o.slots();
                    open.push(o);
                    continue;
                }
            }
        };
        // Store the value in the containers it completes, innermost first.
        loop {
            let Some(top) = open.last_mut() else {
                return Ok(value);
            };
            used -= top.slots();
            if top.is_map {
                match top.key.take() {
                    None => {
                        top.key = Some(value);
                        used += top.slots();
                        break;
                    }
                    Some(key) => {
                        match &key {
                            Value::Nil => {
                                return Err(DecodeError::Lua("table index is nil".into()))
                            }
                            Value::Number(x) if x.is_nan() => {
                                return Err(DecodeError::Lua("table index is NaN".into()))
                            }
                            _ => {}
                        }
                        top.table.raw_set(key, value).map_err(lua_err)?;
                    }
                }
            } else {
                top.table.raw_set(top.next_index, value).map_err(lua_err)?;
                top.next_index += 1;
            }
            top.remaining -= 1;
            if top.remaining > 0 {
                used += top.slots();
                break;
            }
            let done = open.pop().expect("a container");
            value = Value::Table(done.table);
        }
    }
}

/// mp_unpack_full: up to `limit` values from `offset` (`limit` and `offset` 0: all of
/// them, without the next offset).
fn unpack_full(
    lua: &Lua,
    p: &Pending,
    data: &[u8],
    limit: i64,
    offset: i64,
) -> mlua::Result<MultiValue> {
    let decode_all = limit == 0 && offset == 0;
    if offset < 0 || limit < 0 {
        return Err(error(
            lua,
            p,
            &format!(
                "Invalid request to unpack with offset of {offset} and limit of {}.",
                data.len()
            ),
        ));
    }
    if offset as u64 > data.len() as u64 {
        return Err(error(
            lua,
            p,
            &format!(
                "Start offset {offset} greater than input length {}.",
                data.len()
            ),
        ));
    }
    let limit = if decode_all { i64::MAX } else { limit };
    let mut c = Cursor {
        data,
        pos: offset as usize,
    };
    let mut out = Vec::new();
    while c.left() > 0 && (out.len() as i64) < limit {
        // The string argument, then the values decoded so far.
        match decode_value(lua, &mut c, 1 + out.len()) {
            Ok(v) => out.push(v),
            Err(DecodeError::Eof) => return Err(error(lua, p, "Missing bytes in input.")),
            Err(DecodeError::BadFormat) => return Err(error(lua, p, "Bad data format in input.")),
            Err(DecodeError::Lua(text)) => {
                return Err(p.raise(Value::String(lua.create_string(text)?)))
            }
            Err(DecodeError::Stack(what)) => {
                return Err(error(lua, p, &format!("stack overflow ({what})")))
            }
        }
    }
    if !decode_all {
        if 1 + out.len() + 1 > MAX_SLOTS {
            return Err(error(lua, p, "stack overflow (in function mp_unpack_full)"));
        }
        let next = if c.left() == 0 { -1 } else { c.pos as i64 };
        out.insert(0, Value::Number(next as f64));
    }
    Ok(MultiValue::from_vec(out))
}

/// The `cmsgpack` table.
pub fn module(lua: &Lua, pending: &Pending) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    let p = pending.clone();
    t.raw_set(
        "pack",
        lua.create_function(move |lua, args: MultiValue| {
            if args.is_empty() {
                return Err(arg_error(lua, &p, 0, "MessagePack pack needs input."));
            }
            // lua_checkstack(L, nargs) with the arguments already on the stack.
            if 2 * args.len() > MAX_SLOTS {
                return Err(arg_error(
                    lua,
                    &p,
                    0,
                    "Too many arguments for MessagePack pack.",
                ));
            }
            let mut out = Vec::new();
            for v in args.iter() {
                encode_value(&mut out, v, 0)?;
            }
            lua.create_string(out)
        })?,
    )?;
    let p = pending.clone();
    t.raw_set(
        "unpack",
        lua.create_function(move |lua, args: MultiValue| {
            let data = check_bytes(lua, &p, &args, 1)?;
            unpack_full(lua, &p, &data, 0, 0)
        })?,
    )?;
    let p = pending.clone();
    t.raw_set(
        "unpack_one",
        lua.create_function(move |lua, args: MultiValue| {
            let offset = opt_integer(lua, &p, &args, 2, 0)? as i32 as i64;
            let data = check_bytes(lua, &p, &args, 1)?;
            unpack_full(lua, &p, &data, 1, offset)
        })?,
    )?;
    let p = pending.clone();
    t.raw_set(
        "unpack_limit",
        lua.create_function(move |lua, args: MultiValue| {
            let limit = super::check_integer(lua, &p, &args, 2)? as i32 as i64;
            let offset = opt_integer(lua, &p, &args, 3, 0)? as i32 as i64;
            let data = check_bytes(lua, &p, &args, 1)?;
            unpack_full(lua, &p, &data, limit, offset)
        })?,
    )?;
    t.raw_set("_NAME", "cmsgpack")?;
    t.raw_set("_VERSION", "lua-cmsgpack 0.4.0")?;
    t.raw_set("_COPYRIGHT", "Copyright (C) 2012, Salvatore Sanfilippo")?;
    t.raw_set("_DESCRIPTION", "MessagePack C implementation for Lua")?;
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pack(lua: &Lua, code: &str) -> Vec<u8> {
        let v: Value = lua.load(code).eval().unwrap();
        pack_value(&v).unwrap()
    }

    #[test]
    fn packs_as_lua_cmsgpack() {
        let lua = Lua::new();
        assert_eq!(pack(&lua, "return 1"), [1]);
        assert_eq!(pack(&lua, "return -1"), [0xff]);
        assert_eq!(pack(&lua, "return 200"), [0xcc, 200]);
        assert_eq!(pack(&lua, "return -200"), [0xd1, 0xff, 0x38]);
        assert_eq!(pack(&lua, "return 1.5"), [0xca, 0x3f, 0xc0, 0, 0]);
        assert_eq!(pack(&lua, "return 0.1")[0], 0xcb);
        assert_eq!(pack(&lua, "return {}"), [0x90]);
        assert_eq!(pack(&lua, "return {1, 'a'}"), [0x92, 1, 0xa1, b'a']);
        assert_eq!(pack(&lua, "return {a=true}"), [0x81, 0xa1, b'a', 0xc3]);
        assert_eq!(pack(&lua, "return function() end"), [0xc0]);
    }

    #[test]
    fn decodes_what_it_packs_and_reports_bad_input() {
        let lua = Lua::new();
        let bytes = pack(&lua, "return {1, {x = 'y'}, -5, 0.25, 2^40}");
        let v = decode_value(
            &lua,
            &mut Cursor {
                data: &bytes,
                pos: 0,
            },
            0,
        )
        .unwrap();
        assert_eq!(pack_value(&v).unwrap(), bytes);
        let decode = |b: &[u8]| decode_value(&lua, &mut Cursor { data: b, pos: 0 }, 1).map(|_| ());
        assert_eq!(decode(&[0x92, 1]), Err(DecodeError::Eof));
        assert_eq!(decode(&[0xc1]), Err(DecodeError::BadFormat));
        assert_eq!(decode(&[0xa3, b'a']), Err(DecodeError::Eof));
        assert_eq!(
            decode(&[0x81, 0xc0, 1]),
            Err(DecodeError::Lua("table index is nil".into()))
        );
    }

    proptest::proptest! {
        /// Any bytes decode or fail cleanly; what decodes packs to bytes that decode and
        /// pack to as many bytes (a map's order may change: Lua's `next` order depends on
        /// the order its keys went in).
        #[test]
        fn unpack_then_pack_is_stable(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..40)) {
            let lua = Lua::new();
            if let Ok(v) = decode_value(&lua, &mut Cursor { data: &bytes, pos: 0 }, 1) {
                let once = pack_value(&v).unwrap();
                let again = decode_value(&lua, &mut Cursor { data: &once, pos: 0 }, 1).unwrap();
                proptest::prop_assert_eq!(pack_value(&again).unwrap().len(), once.len());
            }
        }
    }
}
