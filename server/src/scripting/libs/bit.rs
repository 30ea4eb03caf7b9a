//! LuaBitOp 1.0 as Redis embeds it: operations on 32-bit integers, results as signed
//! 32-bit numbers.

use super::{arg, to_number, type_error, Pending};
use mlua::{Lua, MultiValue, Table};

/// The low 32 bits of a number as LuaBitOp's barg takes them: adding 2^52 + 2^51 rounds
/// it to an integer (to nearest, ties to even) in the low word of the double.
pub fn tobit(n: f64) -> u32 {
    (n + 6_755_399_441_055_744.0).to_bits() as u32
}

/// barg: argument `narg` as 32 bits; a non-number is an error (Lua 5.1's check: the
/// result is 0 and the argument is not a number).
fn barg(lua: &Lua, pending: &Pending, args: &MultiValue, narg: usize) -> mlua::Result<u32> {
    let value = arg(args, narg);
    let b = tobit(to_number(value).unwrap_or(0.0));
    if b == 0 && to_number(value).is_none() {
        return Err(type_error(lua, pending, args, narg, "number"));
    }
    Ok(b)
}

/// BRET: the bits as a signed 32-bit number.
fn ret(b: u32) -> f64 {
    b as i32 as f64
}

/// tohex's digits: `n` of them (8 by default, at most 8), uppercase when `n` < 0.
pub fn tohex(b: u32, n: i32) -> String {
    let (n, digits) = if n < 0 {
        (n.unsigned_abs(), b"0123456789ABCDEF")
    } else {
        (n as u32, b"0123456789abcdef")
    };
    let n = n.min(8) as usize;
    let mut out = vec![0u8; n];
    let mut b = b;
    for slot in out.iter_mut().rev() {
        *slot = digits[(b & 15) as usize];
        b >>= 4;
    }
    String::from_utf8(out).expect("hex digits")
}

/// The `bit` table.
pub fn module(lua: &Lua, pending: &Pending) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    type Unary = fn(u32) -> u32;
    let unary: [(&str, Unary); 3] = [
        ("tobit", |b| b),
        ("bnot", |b| !b),
        ("bswap", |b| b.swap_bytes()),
    ];
    for (name, op) in unary {
        let p = pending.clone();
        t.raw_set(
            name,
            lua.create_function(move |lua, args: MultiValue| {
                Ok(ret(op(barg(lua, &p, &args, 1)?)))
            })?,
        )?;
    }
    type Fold = fn(u32, u32) -> u32;
    let folds: [(&str, Fold); 3] = [
        ("band", |a, b| a & b),
        ("bor", |a, b| a | b),
        ("bxor", |a, b| a ^ b),
    ];
    for (name, op) in folds {
        let p = pending.clone();
        t.raw_set(
            name,
            lua.create_function(move |lua, args: MultiValue| {
                let mut b = barg(lua, &p, &args, 1)?;
                for i in (2..=args.len()).rev() {
                    b = op(b, barg(lua, &p, &args, i)?);
                }
                Ok(ret(b))
            })?,
        )?;
    }
    type Shift = fn(u32, u32) -> u32;
    let shifts: [(&str, Shift); 5] = [
        ("lshift", |b, n| b << n),
        ("rshift", |b, n| b >> n),
        ("arshift", |b, n| ((b as i32) >> n) as u32),
        ("rol", |b, n| b.rotate_left(n)),
        ("ror", |b, n| b.rotate_right(n)),
    ];
    for (name, op) in shifts {
        let p = pending.clone();
        t.raw_set(
            name,
            lua.create_function(move |lua, args: MultiValue| {
                let b = barg(lua, &p, &args, 1)?;
                let n = barg(lua, &p, &args, 2)? & 31;
                Ok(ret(op(b, n)))
            })?,
        )?;
    }
    let p = pending.clone();
    t.raw_set(
        "tohex",
        lua.create_function(move |lua, args: MultiValue| {
            let b = barg(lua, &p, &args, 1)?;
            let n = match args.len() {
                0 | 1 => 8,
                _ => barg(lua, &p, &args, 2)? as i32,
            };
            Ok(tohex(b, n))
        })?,
    )?;
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_as_luabitop_gives_them() {
        assert_eq!(tobit(0xffff_ffff_u32 as f64) as i32, -1);
        assert_eq!(tobit(2f64.powi(32) + 5.0), 5);
        assert_eq!(tobit(-1.0), 0xffff_ffff);
        assert_eq!(tobit(2.5), 2);
        assert_eq!(tobit(3.5), 4);
        assert_eq!(tohex(255, 8), "000000ff");
        assert_eq!(tohex(255, -2), "FF");
        assert_eq!(tohex(0x1234_5678, 12), "12345678");
        assert_eq!(tohex(0x1234_5678, 0), "");
    }
}
