//! The libraries Redis embeds in its Lua beside the standard ones, written on mlua to
//! behave as Redis's vendored C modules do (their replies, number formats and error texts):
//!
//! - [`bit`]: LuaBitOp (tobit, tohex, bnot, band, bor, bxor, lshift, rshift, arshift, rol,
//!   ror, bswap) on 32-bit integers.
//! - [`structlib`]: Roberto Ierusalimschy's struct (pack, unpack, size).
//! - [`cjson`]: lua-cjson 2.1.0 (encode, decode and their settings).
//! - [`cmsgpack`]: lua-cmsgpack 0.4.0 (pack, unpack, unpack_one, unpack_limit).
//!
//! This file: installing them as globals (before the sandbox makes them read-only) and
//! the argument checks of Lua's auxiliary library (luaL_checknumber, luaL_argerror, ...)
//! with its error texts.

pub mod bit;
pub mod cjson;
pub mod cmsgpack;
pub mod structlib;

use super::api::{self, raise_here, Pending};
use mlua::{Lua, MultiValue, Value};

/// Sets the globals `bit`, `struct`, `cjson` and `cmsgpack`.
pub fn install(lua: &Lua, pending: &Pending) -> mlua::Result<()> {
    let globals = lua.globals();
    globals.raw_set("bit", bit::module(lua, pending)?)?;
    globals.raw_set("struct", structlib::module(lua, pending)?)?;
    globals.raw_set("cjson", cjson::module(lua, pending)?)?;
    globals.raw_set("cmsgpack", cmsgpack::module(lua, pending)?)?;
    Ok(())
}

/// Lua's name for a value's type (lua_typename).
pub fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Nil => "nil",
        Value::Boolean(_) => "boolean",
        Value::LightUserData(_) | Value::UserData(_) => "userdata",
        Value::Integer(_) | Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Table(_) => "table",
        Value::Function(_) => "function",
        Value::Thread(_) => "thread",
        _ => "userdata",
    }
}

/// luaL_error: `message` with the caller's position.
pub fn error(lua: &Lua, pending: &Pending, message: &str) -> mlua::Error {
    raise_here(lua, pending, message)
}

/// luaL_argerror: "bad argument #n to 'name' (message)", the function named as its caller
/// named it.
pub fn arg_error(lua: &Lua, pending: &Pending, narg: usize, message: &str) -> mlua::Error {
    let (name, what) = lua
        .inspect_stack(0, |d| {
            let names = d.names();
            (names.name.map(|n| n.into_owned()), names.name_what)
        })
        .unwrap_or((None, None));
    let mut narg = narg;
    if what == Some("method") {
        narg -= 1;
        if narg == 0 {
            let name = name.unwrap_or_else(|| "?".into());
            return error(
                lua,
                pending,
                &format!("calling '{name}' on bad self ({message})"),
            );
        }
    }
    let name = name.unwrap_or_else(|| "?".into());
    error(
        lua,
        pending,
        &format!("bad argument #{narg} to '{name}' ({message})"),
    )
}

/// luaL_typerror: "<expected> expected, got <type>".
pub fn type_error(
    lua: &Lua,
    pending: &Pending,
    args: &MultiValue,
    narg: usize,
    expected: &str,
) -> mlua::Error {
    let got = match args.get(narg - 1) {
        None => "no value",
        Some(v) => type_name(v),
    };
    arg_error(
        lua,
        pending,
        narg,
        &format!("{expected} expected, got {got}"),
    )
}

/// Argument `narg` (1-based), nil when absent.
pub fn arg(args: &MultiValue, narg: usize) -> &Value {
    args.get(narg - 1).unwrap_or(&Value::Nil)
}

/// The number a value is (lua_tonumber: numbers, and strings that read as numbers).
pub fn to_number(value: &Value) -> Option<f64> {
    api::to_number(value)
}

/// luaL_checknumber.
pub fn check_number(
    lua: &Lua,
    pending: &Pending,
    args: &MultiValue,
    narg: usize,
) -> mlua::Result<f64> {
    to_number(arg(args, narg)).ok_or_else(|| type_error(lua, pending, args, narg, "number"))
}

/// luaL_checkinteger (truncated toward zero, as Lua 5.1 on x86-64 converts).
pub fn check_integer(
    lua: &Lua,
    pending: &Pending,
    args: &MultiValue,
    narg: usize,
) -> mlua::Result<i64> {
    check_number(lua, pending, args, narg).map(to_integer)
}

/// lua_Number to lua_Integer as the C cast does (NaN and out-of-range values saturate
/// here, where C leaves them undefined).
pub fn to_integer(n: f64) -> i64 {
    n as i64
}

/// luaL_checklstring: strings, and numbers converted as Lua converts them (`%.14g`).
pub fn check_bytes(
    lua: &Lua,
    pending: &Pending,
    args: &MultiValue,
    narg: usize,
) -> mlua::Result<Vec<u8>> {
    api::to_bytes(arg(args, narg)).ok_or_else(|| type_error(lua, pending, args, narg, "string"))
}

/// luaL_optinteger.
pub fn opt_integer(
    lua: &Lua,
    pending: &Pending,
    args: &MultiValue,
    narg: usize,
    default: i64,
) -> mlua::Result<i64> {
    match arg(args, narg) {
        Value::Nil => Ok(default),
        _ => check_integer(lua, pending, args, narg),
    }
}
