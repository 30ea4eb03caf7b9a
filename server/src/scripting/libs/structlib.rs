//! The `struct` library (Roberto Ierusalimschy's lua_struct, as Redis embeds it):
//! struct.pack(fmt, ...), struct.unpack(fmt, data [, pos]), struct.size(fmt), with C's
//! sizes on x86-64 (short 2, int 4, long and size_t 8), native little-endian order and
//! alignment 1 unless `!` sets it.

use super::{arg, arg_error, check_bytes, error, opt_integer, type_name, Pending};
use mlua::{Lua, MultiValue, Table, Value};

/// Largest integer size (MAXINTSIZE).
const MAX_INT_SIZE: usize = 32;
/// Alignment `!` sets without a number (that of a double).
const MAX_ALIGN: usize = 8;

/// Byte order and maximum alignment in force.
struct Header {
    little: bool,
    align: usize,
}

impl Default for Header {
    fn default() -> Self {
        Header {
            little: true,
            align: 1,
        }
    }
}

/// A format being read.
struct Format<'a> {
    fmt: &'a [u8],
    pos: usize,
}

/// What a format step failed with.
enum Fail {
    /// luaL_error.
    Error(String),
    /// luaL_argerror on argument 1.
    Arg(String),
}

impl Format<'_> {
    fn next(&mut self) -> Option<u8> {
        let c = *self.fmt.get(self.pos)?;
        // The format is a C string: it ends at a NUL.
        if c == 0 {
            return None;
        }
        self.pos += 1;
        Some(c)
    }

    /// getnum: a decimal number at the cursor, or `default`.
    fn number(&mut self, default: usize) -> Result<usize, Fail> {
        if !self.fmt.get(self.pos).is_some_and(u8::is_ascii_digit) {
            return Ok(default);
        }
        let mut a: i64 = 0;
        while let Some(d) = self.fmt.get(self.pos).filter(|b| b.is_ascii_digit()) {
            let d = (d - b'0') as i64;
            if a > (i32::MAX as i64) / 10 || a * 10 > i32::MAX as i64 - d {
                return Err(Fail::Error("integral size overflow".into()));
            }
            a = a * 10 + d;
            self.pos += 1;
        }
        Ok(a as usize)
    }

    /// optsize: the size of option `opt`.
    fn size(&mut self, opt: u8) -> Result<usize, Fail> {
        Ok(match opt {
            b'B' | b'b' | b'x' => 1,
            b'H' | b'h' => 2,
            b'L' | b'l' | b'T' | b'd' => 8,
            b'f' => 4,
            b'c' => self.number(1)?,
            b'i' | b'I' => {
                let size = self.number(4)?;
                if size > MAX_INT_SIZE {
                    return Err(Fail::Error(format!(
                        "integral size {size} is larger than limit of {MAX_INT_SIZE}"
                    )));
                }
                size
            }
            _ => 0,
        })
    }

    /// controloptions: spaces, `<`, `>` and `!n`; anything else is an invalid option.
    fn control(&mut self, opt: u8, h: &mut Header) -> Result<(), Fail> {
        match opt {
            b' ' => {}
            b'>' => h.little = false,
            b'<' => h.little = true,
            b'!' => {
                let a = self.number(MAX_ALIGN)?;
                if !a.is_power_of_two() {
                    return Err(Fail::Error(format!("alignment {a} is not a power of 2")));
                }
                h.align = a;
            }
            other => {
                return Err(Fail::Arg(format!(
                    "invalid format option '{}'",
                    other as char
                )))
            }
        }
        Ok(())
    }
}

/// gettoalign: padding before an item of `size` at `len`.
fn to_align(len: usize, h: &Header, opt: u8, size: usize) -> usize {
    if size == 0 || opt == b'c' {
        return 0;
    }
    let size = size.min(h.align);
    (size - (len & (size - 1))) & (size - 1)
}

fn fail(lua: &Lua, p: &Pending, f: Fail) -> mlua::Error {
    match f {
        Fail::Error(text) => error(lua, p, &text),
        Fail::Arg(text) => arg_error(lua, p, 1, &text),
    }
}

/// A type error for argument `narg` of pack, which pushes a nil after its arguments:
/// the first missing one reads as nil.
fn pack_type_error(
    lua: &Lua,
    p: &Pending,
    args: &MultiValue,
    narg: usize,
    expected: &str,
) -> mlua::Error {
    let got = match args.get(narg - 1) {
        Some(v) => type_name(v),
        None if narg == args.len() + 1 => "nil",
        None => "no value",
    };
    arg_error(lua, p, narg, &format!("{expected} expected, got {got}"))
}

fn pack_number(lua: &Lua, p: &Pending, args: &MultiValue, narg: usize) -> mlua::Result<f64> {
    super::to_number(arg(args, narg)).ok_or_else(|| pack_type_error(lua, p, args, narg, "number"))
}

fn pack(lua: &Lua, p: &Pending, args: &MultiValue) -> mlua::Result<Vec<u8>> {
    let fmt = check_bytes(lua, p, args, 1)?;
    let mut f = Format { fmt: &fmt, pos: 0 };
    let mut h = Header::default();
    let mut narg = 2;
    let mut out = Vec::new();
    let mut total = 0usize;
    while let Some(opt) = f.next() {
        let mut size = f.size(opt).map_err(|e| fail(lua, p, e))?;
        let pad = to_align(total, &h, opt, size);
        total += pad;
        out.resize(out.len() + pad, 0);
        match opt {
            b'b' | b'B' | b'h' | b'H' | b'l' | b'L' | b'T' | b'i' | b'I' => {
                let n = pack_number(lua, p, args, narg)?;
                narg += 1;
                let mut value: u64 = if n < 0.0 { n as i64 as u64 } else { n as u64 };
                let mut bytes = vec![0u8; size];
                for i in 0..size {
                    let slot = if h.little { i } else { size - 1 - i };
                    bytes[slot] = (value & 0xff) as u8;
                    value = value.checked_shr(8).unwrap_or(0);
                }
                out.extend_from_slice(&bytes);
            }
            b'x' => out.push(0),
            b'f' => {
                let v = pack_number(lua, p, args, narg)? as f32;
                narg += 1;
                out.extend_from_slice(&if h.little {
                    v.to_le_bytes()
                } else {
                    v.to_be_bytes()
                });
            }
            b'd' => {
                let v = pack_number(lua, p, args, narg)?;
                narg += 1;
                out.extend_from_slice(&if h.little {
                    v.to_le_bytes()
                } else {
                    v.to_be_bytes()
                });
            }
            b'c' | b's' => {
                let s = match super::api::to_bytes(arg(args, narg)) {
                    Some(s) => s,
                    None => return Err(pack_type_error(lua, p, args, narg, "string")),
                };
                narg += 1;
                if size == 0 {
                    size = s.len();
                }
                if s.len() < size {
                    // As lua_struct: the check names the argument after the string.
                    return Err(arg_error(lua, p, narg, "string too short"));
                }
                out.extend_from_slice(&s[..size]);
                if opt == b's' {
                    out.push(0);
                    size += 1;
                }
            }
            other => f.control(other, &mut h).map_err(|e| fail(lua, p, e))?,
        }
        total += size;
    }
    Ok(out)
}

/// getinteger: `size` bytes as an integer (sign-extended for a signed format).
fn get_integer(bytes: &[u8], little: bool, signed: bool) -> f64 {
    let mut l: u64 = 0;
    let size = bytes.len();
    for i in 0..size {
        let b = if little {
            bytes[size - 1 - i]
        } else {
            bytes[i]
        };
        l = (l << 8) | b as u64;
    }
    if !signed {
        return l as f64;
    }
    let mask = (!0u64).wrapping_shl((size * 8).wrapping_sub(1) as u32);
    if l & mask != 0 {
        l |= mask;
    }
    l as i64 as f64
}

fn unpack(lua: &Lua, p: &Pending, args: &MultiValue) -> mlua::Result<MultiValue> {
    let fmt = check_bytes(lua, p, args, 1)?;
    let data = check_bytes(lua, p, args, 2)?;
    let start = opt_integer(lua, p, args, 3, 1)?;
    if start <= 0 {
        return Err(arg_error(lua, p, 3, "offset must be 1 or greater"));
    }
    let mut pos = (start - 1) as usize;
    let ld = data.len();
    let mut f = Format { fmt: &fmt, pos: 0 };
    let mut h = Header::default();
    let mut out: Vec<Value> = Vec::new();
    let too_short = |lua: &Lua| arg_error(lua, p, 2, "data string too short");
    while let Some(opt) = f.next() {
        let mut size = f.size(opt).map_err(|e| fail(lua, p, e))?;
        pos = pos.saturating_add(to_align(pos, &h, opt, size));
        if size > ld || pos > ld - size {
            return Err(too_short(lua));
        }
        if out.len() > 7990 {
            return Err(error(lua, p, "stack overflow (too many results)"));
        }
        match opt {
            b'b' | b'B' | b'h' | b'H' | b'l' | b'L' | b'T' | b'i' | b'I' => {
                let v = get_integer(&data[pos..pos + size], h.little, opt.is_ascii_lowercase());
                out.push(Value::Number(v));
            }
            b'x' => {}
            b'f' => {
                let b: [u8; 4] = data[pos..pos + 4].try_into().expect("4 bytes");
                let v = if h.little {
                    f32::from_le_bytes(b)
                } else {
                    f32::from_be_bytes(b)
                };
                out.push(Value::Number(v as f64));
            }
            b'd' => {
                let b: [u8; 8] = data[pos..pos + 8].try_into().expect("8 bytes");
                let v = if h.little {
                    f64::from_le_bytes(b)
                } else {
                    f64::from_be_bytes(b)
                };
                out.push(Value::Number(v));
            }
            b'c' => {
                if size == 0 {
                    let Some(n) = out.last().and_then(super::to_number) else {
                        return Err(error(lua, p, "format 'c0' needs a previous size"));
                    };
                    out.pop();
                    size = if n < 0.0 { usize::MAX } else { n as usize };
                    if size > ld || pos > ld - size {
                        return Err(too_short(lua));
                    }
                }
                out.push(Value::String(lua.create_string(&data[pos..pos + size])?));
            }
            b's' => {
                let Some(end) = data[pos..].iter().position(|&b| b == 0) else {
                    return Err(error(lua, p, "unfinished string in data"));
                };
                out.push(Value::String(lua.create_string(&data[pos..pos + end])?));
                size = end + 1;
            }
            other => f.control(other, &mut h).map_err(|e| fail(lua, p, e))?,
        }
        pos += size;
    }
    out.push(Value::Number((pos + 1) as f64));
    Ok(MultiValue::from_vec(out))
}

fn size(lua: &Lua, p: &Pending, args: &MultiValue) -> mlua::Result<f64> {
    let fmt = check_bytes(lua, p, args, 1)?;
    let mut f = Format { fmt: &fmt, pos: 0 };
    let mut h = Header::default();
    let mut pos = 0usize;
    while let Some(opt) = f.next() {
        let size = f.size(opt).map_err(|e| fail(lua, p, e))?;
        pos += to_align(pos, &h, opt, size);
        if opt == b's' {
            return Err(arg_error(lua, p, 1, "option 's' has no fixed size"));
        }
        if opt == b'c' && size == 0 {
            return Err(arg_error(lua, p, 1, "option 'c0' has no fixed size"));
        }
        // As lua_struct's size: only the non-alphanumeric options go to controloptions
        // (an unknown letter is ignored).
        if !opt.is_ascii_alphanumeric() {
            f.control(opt, &mut h).map_err(|e| fail(lua, p, e))?;
        }
        pos += size;
    }
    Ok(pos as f64)
}

/// The `struct` table.
pub fn module(lua: &Lua, pending: &Pending) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    let p = pending.clone();
    t.raw_set(
        "pack",
        lua.create_function(move |lua, args: MultiValue| {
            let bytes = pack(lua, &p, &args)?;
            lua.create_string(bytes)
        })?,
    )?;
    let p = pending.clone();
    t.raw_set(
        "unpack",
        lua.create_function(move |lua, args: MultiValue| unpack(lua, &p, &args))?,
    )?;
    let p = pending.clone();
    t.raw_set(
        "size",
        lua.create_function(move |lua, args: MultiValue| size(lua, &p, &args))?,
    )?;
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_as_lua_struct_reads_them() {
        assert_eq!(get_integer(&[0xff, 0xff], true, true), -1.0);
        assert_eq!(get_integer(&[0xff, 0xff], true, false), 65535.0);
        assert_eq!(get_integer(&[0, 1], false, false), 1.0);
        assert_eq!(
            to_align(
                1,
                &Header {
                    little: true,
                    align: 8
                },
                b'i',
                4
            ),
            3
        );
        assert_eq!(to_align(1, &Header::default(), b'i', 4), 0);
    }
}
