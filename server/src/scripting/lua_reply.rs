//! What a script returned, written as its command's reply, as Redis's luaReplyToRedisReply
//! writes it: string -> bulk, number -> integer (truncated), true -> 1 and false -> null
//! (booleans under RESP3), a table with `err`, `ok`, `double`, `big_number`,
//! `verbatim_string`, `map` or `set` -> that reply, any other table -> an array of its
//! elements 1, 2, ... up to the first nil, anything else -> null.
//!
//! The walk runs on the Lua stack itself, pushing what Redis pushes: each element is
//! converted from the top of the stack and popped, an array's element one slot above its
//! table, a map's value three (the map, the key, the value) and its key four (and a copy
//! of the key), a set's member three. A table nested that deep (a table that holds itself
//! has no end) stops where Redis's lua_checkstack gives up, the element answered "ERR
//! reached lua stack limit" in its place. (mlua values would each hold a slot of mlua's
//! own reference stack, which runs out a few levels earlier.)

use super::convert::c_long_long;
use crate::commands::Ctx;
use mlua::ffi::{self, lua_State};
use mlua::{Lua, Value};
use std::os::raw::c_int;

/// Stack slots above the returned value at which an element is answered "ERR reached lua
/// stack limit" (Redis's lua_checkstack(4) fails there, LUAI_MAXCSTACK being 8000).
const STACK_LIMIT: c_int = 7995;

/// Writes what a script returned as the reply of `ctx`'s command; `resp3` is the script's
/// protocol (redis.setresp), which decides how booleans go out.
pub fn lua_to_reply(ctx: &mut Ctx, lua: &Lua, value: Value, resp3: bool) {
    // SAFETY: the closure runs as a protected Lua C function with `value` on its stack; it
    // reads tables with raw accesses only (no metamethods) and keeps the stack balanced.
    let outcome = unsafe {
        lua.exec_raw::<()>(value, |state| {
            let mut walk = Walk {
                ctx: &mut *ctx,
                resp3,
                base: ffi::lua_gettop(state),
            };
            walk.top(state);
        })
    };
    if let Err(e) = outcome {
        ctx.error(&format!("ERR {e}"));
    }
}

/// One conversion: where the reply goes, and the stack height of the returned value.
struct Walk<'w, 'a> {
    ctx: &'w mut Ctx<'a>,
    resp3: bool,
    base: c_int,
}

/// Bytes of the string at `idx` (only called on strings: lua_tolstring converts numbers in
/// place).
unsafe fn bytes_at<'s>(state: *mut lua_State, idx: c_int) -> &'s [u8] {
    let mut len = 0usize;
    let p = ffi::lua_tolstring(state, idx, &mut len);
    std::slice::from_raw_parts(p as *const u8, len)
}

/// Pushes `table[name]` (the table on top), read raw; returns its Lua type.
unsafe fn push_field(state: *mut lua_State, name: &str) -> c_int {
    ffi::lua_pushlstring(state, name.as_ptr() as *const _, name.len());
    ffi::lua_rawget(state, -2)
}

/// The string field `name` of the table on top, if it is a string.
unsafe fn string_field(state: *mut lua_State, name: &str) -> Option<Vec<u8>> {
    let kind = push_field(state, name);
    let s = (kind == ffi::LUA_TSTRING).then(|| bytes_at(state, -1).to_vec());
    ffi::lua_pop(state, 1);
    s
}

/// What Redis reads of a Lua string as a C string (the status and error texts): the bytes
/// up to the first NUL.
fn c_string(bytes: &[u8]) -> &[u8] {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    &bytes[..end]
}

/// Spaces for the CR and LF of a status or big number, as Redis maps them.
fn no_newlines(bytes: &[u8]) -> Vec<u8> {
    bytes
        .iter()
        .map(|&b| if b == b'\r' || b == b'\n' { b' ' } else { b })
        .collect()
}

impl Walk<'_, '_> {
    /// Converts the value on top of the stack and pops it.
    unsafe fn top(&mut self, state: *mut lua_State) {
        if ffi::lua_gettop(state) - self.base >= STACK_LIMIT || ffi::lua_checkstack(state, 4) == 0 {
            self.ctx.error("ERR reached lua stack limit");
            return ffi::lua_pop(state, 1);
        }
        match ffi::lua_type(state, -1) {
            ffi::LUA_TSTRING => self.ctx.out.bulk(bytes_at(state, -1)),
            ffi::LUA_TBOOLEAN => match (self.resp3, ffi::lua_toboolean(state, -1) != 0) {
                (false, true) => self.ctx.out.int(1),
                (false, false) => self.ctx.out.null(),
                (true, b) => self.ctx.out.boolean(b),
            },
            ffi::LUA_TNUMBER => self.ctx.out.int(c_long_long(ffi::lua_tonumber(state, -1))),
            ffi::LUA_TTABLE => self.table(state),
            _ => self.ctx.out.null(),
        }
        ffi::lua_pop(state, 1);
    }

    /// Converts the table on top of the stack (left there).
    unsafe fn table(&mut self, state: *mut lua_State) {
        if let Some(err) = string_field(state, "err") {
            // As Redis's "-%s" reply of it: trailing CR and LF dropped (the others become
            // spaces as in every error reply).
            let mut text = c_string(&err);
            while let [rest @ .., b'\r' | b'\n'] = text {
                text = rest;
            }
            let text = String::from_utf8_lossy(text).into_owned();
            let counted = push_field(state, "ignore_error_stats_update") == ffi::LUA_TBOOLEAN
                && ffi::lua_toboolean(state, -1) != 0;
            ffi::lua_pop(state, 1);
            return match counted {
                true => self.ctx.error_counted(&text),
                false => self.ctx.error(&text),
            };
        }
        if let Some(ok) = string_field(state, "ok") {
            let text = no_newlines(c_string(&ok));
            return self.ctx.out.simple(&String::from_utf8_lossy(&text));
        }
        if push_field(state, "double") == ffi::LUA_TNUMBER {
            self.ctx.out.double(ffi::lua_tonumber(state, -1));
            return ffi::lua_pop(state, 1);
        }
        ffi::lua_pop(state, 1);
        if let Some(big) = string_field(state, "big_number") {
            return self.ctx.out.big_number(&no_newlines(&big));
        }
        if push_field(state, "verbatim_string") == ffi::LUA_TTABLE {
            let format = string_field(state, "format");
            let text = string_field(state, "string");
            ffi::lua_pop(state, 1);
            if let (Some(format), Some(text)) = (format, text) {
                return self.ctx.out.verbatim_as(&format, &text);
            }
        } else {
            ffi::lua_pop(state, 1);
        }
        for (name, map) in [("map", true), ("set", false)] {
            if push_field(state, name) == ffi::LUA_TTABLE {
                return self.pairs(state, map);
            }
            ffi::lua_pop(state, 1);
        }
        self.array(state);
    }

    /// Converts the map or set table on top of the stack and pops it: a map's keys and
    /// values, a set's keys.
    unsafe fn pairs(&mut self, state: *mut lua_State, map: bool) {
        let mut n = 0;
        ffi::lua_pushnil(state);
        while ffi::lua_next(state, -2) != 0 {
            n += 1;
            ffi::lua_pop(state, 1);
        }
        if map {
            self.ctx.out.map(n);
        } else {
            self.ctx.out.set(n);
        }
        ffi::lua_pushnil(state);
        while ffi::lua_next(state, -2) != 0 {
            // A set's value is dropped; the copy of the key is converted (and popped) so
            // that lua_next finds it in place.
            if !map {
                ffi::lua_pop(state, 1);
            }
            ffi::lua_pushvalue(state, if map { -2 } else { -1 });
            self.top(state);
            if map {
                self.top(state);
            }
        }
        ffi::lua_pop(state, 1);
    }

    /// Converts the table on top of the stack as an array (left there).
    unsafe fn array(&mut self, state: *mut lua_State) {
        let mut n = 0;
        while ffi::lua_rawgeti(state, -1, n + 1) != ffi::LUA_TNIL {
            n += 1;
            ffi::lua_pop(state, 1);
        }
        ffi::lua_pop(state, 1);
        self.ctx.out.array(n as usize);
        for i in 1..=n {
            ffi::lua_rawgeti(state, -1, i);
            self.top(state);
        }
    }
}
