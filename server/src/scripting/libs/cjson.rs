//! lua-cjson 2.1.0 as Redis embeds it: `cjson.encode`, `cjson.decode`, their settings
//! (encode_sparse_array, encode_max_depth, decode_max_depth, encode_number_precision,
//! encode_keep_buffer, encode_invalid_numbers, decode_invalid_numbers), `cjson.new`,
//! `cjson.null`. Numbers are written with `%.14g` (the precision setting), tables as
//! arrays when their keys are 1..n (not too sparse), objects otherwise, in Lua's `next`
//! order; errors are worded as lua-cjson words them.

use super::{arg, arg_error, check_bytes, error, to_number, type_error, type_name, Pending};
use crate::scripting::convert::format_g;
use mlua::{Function, LightUserData, Lua, MultiValue, Table, Value};
use std::cell::RefCell;
use std::rc::Rc;

/// One module instance's settings (lua-cjson's json_config_t).
#[derive(Debug, Clone)]
pub struct Config {
    sparse_convert: bool,
    sparse_ratio: i64,
    sparse_safe: i64,
    encode_max_depth: i64,
    decode_max_depth: i64,
    precision: i64,
    keep_buffer: bool,
    /// 0 off, 1 on, 2 null.
    encode_invalid: i64,
    decode_invalid: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            sparse_convert: false,
            sparse_ratio: 2,
            sparse_safe: 10,
            encode_max_depth: 1000,
            decode_max_depth: 1000,
            precision: 14,
            keep_buffer: true,
            encode_invalid: 0,
            decode_invalid: true,
        }
    }
}

/// The Lua stack slots a C function may use (LUAI_MAXCSTACK): lua-cjson's
/// lua_checkstack calls fail past them.
const LUA_MAX_SLOTS: usize = 8000;

/// `cjson.null`: a NULL light userdata.
fn null() -> Value {
    Value::LightUserData(LightUserData(std::ptr::null_mut()))
}

/// The number of a Lua number value.
fn number_of(value: &Value) -> Option<f64> {
    match value {
        Value::Integer(n) => Some(*n as f64),
        Value::Number(n) => Some(*n),
        _ => None,
    }
}

/// The escape of each byte in a JSON string (lua-cjson's char2escape), if it has one.
fn escape(b: u8) -> Option<&'static [u8]> {
    Some(match b {
        b'"' => b"\\\"",
        b'\\' => b"\\\\",
        b'/' => b"\\/",
        8 => b"\\b",
        9 => b"\\t",
        10 => b"\\n",
        12 => b"\\f",
        13 => b"\\r",
        0..=31 | 127 => return None,
        _ => return Some(&[]),
    })
}

fn append_string(out: &mut Vec<u8>, s: &[u8]) {
    out.push(b'"');
    for &b in s {
        match escape(b) {
            Some([]) => out.push(b),
            Some(e) => out.extend_from_slice(e),
            None => out.extend_from_slice(format!("\\u{b:04x}").as_bytes()),
        }
    }
    out.push(b'"');
}

/// An encoding error's text ("Cannot serialise <type>: <reason>").
fn exception(value: &Value, reason: &str) -> String {
    format!("Cannot serialise {}: {reason}", type_name(value))
}

fn append_number(cfg: &Config, out: &mut Vec<u8>, value: &Value, n: f64) -> Result<(), String> {
    if !n.is_finite() {
        match cfg.encode_invalid {
            0 => return Err(exception(value, "must not be NaN or Inf")),
            1 if n.is_nan() => {
                out.extend_from_slice(b"nan");
                return Ok(());
            }
            2 => {
                out.extend_from_slice(b"null");
                return Ok(());
            }
            _ => {}
        }
    }
    out.extend_from_slice(&format_g(n, cfg.precision as i32));
    Ok(())
}

/// lua_array_length: the array length of `t` when its keys are 1..n (0 for an empty
/// table), or None for an object.
fn array_length(cfg: &Config, t: &Table) -> Result<Option<i64>, String> {
    let (mut max, mut items) = (0i64, 0i64);
    // Values read as booleans: no handle is made for them (only the keys are looked at).
    for pair in t.pairs::<Value, bool>() {
        let (key, _) = pair.map_err(|e| e.to_string())?;
        match number_of(&key) {
            Some(k) if k != 0.0 && k.floor() == k && k >= 1.0 => {
                max = max.max(k as i64);
                items += 1;
            }
            _ => return Ok(None),
        }
    }
    if cfg.sparse_ratio > 0 && max > items * cfg.sparse_ratio && max > cfg.sparse_safe {
        if !cfg.sparse_convert {
            return Err(exception(
                &Value::Table(t.clone()),
                "excessively sparse array",
            ));
        }
        return Ok(None);
    }
    Ok(Some(max))
}

/// `cjson.encode(value)` on a value, or the error's text. `next` is Lua's `next`, which
/// walks objects one key at a time. Tables are walked without recursion, counting the
/// Lua stack slots lua-cjson would use (the argument; per open array the item, per open
/// object its key and value) so nesting fails where its lua_checkstack fails.
pub fn encode(cfg: &Config, next: &Function, value: &Value) -> Result<Vec<u8>, String> {
    enum Open {
        Array(Table, i64, i64),
        Object(Table, Value, bool),
    }
    let lua_err = |e: mlua::Error| e.to_string();
    let mut out = Vec::new();
    let mut open: Vec<Open> = Vec::new();
    let mut used = 1usize;
    let mut current = value.clone();
    loop {
        match &current {
            Value::String(s) => append_string(&mut out, &s.as_bytes()),
            Value::Integer(_) | Value::Number(_) => append_number(
                cfg,
                &mut out,
                &current,
                number_of(&current).expect("a number"),
            )?,
            Value::Boolean(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
            Value::Nil => out.extend_from_slice(b"null"),
            Value::LightUserData(p) if p.0.is_null() => out.extend_from_slice(b"null"),
            Value::Table(t) => {
                let depth = open.len() as i64 + 1;
                if depth > cfg.encode_max_depth || used + 3 > LUA_MAX_SLOTS {
                    return Err(format!("Cannot serialise, excessive nesting ({depth})"));
                }
                match array_length(cfg, t)? {
                    Some(len) if len > 0 => {
                        out.push(b'[');
                        open.push(Open::Array(t.clone(), len, 1));
                        used += 1;
                    }
                    _ => {
                        out.push(b'{');
                        open.push(Open::Object(t.clone(), Value::Nil, true));
                        used += 2;
                    }
                }
            }
            other => return Err(exception(other, "type not supported")),
        }
        // The next item to write, closing the containers that are done.
        loop {
            let Some(top) = open.last_mut() else {
                return Ok(out);
            };
            match top {
                Open::Array(t, len, i) => {
                    if *i > *len {
                        out.push(b']');
                        open.pop();
                        used -= 1;
                        continue;
                    }
                    if *i > 1 {
                        out.push(b',');
                    }
                    current = t.raw_get(*i).map_err(lua_err)?;
                    *i += 1;
                    break;
                }
                Open::Object(t, key, first) => {
                    let (k, v): (Value, Value) = next.call((&*t, &*key)).map_err(lua_err)?;
                    if k.is_nil() {
                        out.push(b'}');
                        open.pop();
                        used -= 2;
                        continue;
                    }
                    if !*first {
                        out.push(b',');
                    }
                    *first = false;
                    match &k {
                        Value::Integer(_) | Value::Number(_) => {
                            out.push(b'"');
                            append_number(cfg, &mut out, &k, number_of(&k).expect("number"))?;
                            out.extend_from_slice(b"\":");
                        }
                        Value::String(s) => {
                            append_string(&mut out, &s.as_bytes());
                            out.push(b':');
                        }
                        _ => return Err(exception(&k, "table key must be a number or string")),
                    }
                    *key = k;
                    current = v;
                    break;
                }
            }
        }
    }
}

/// A decoding error: its text.
type Failure = String;

/// The tokens of lua-cjson's lexer, named as its errors name them.
#[derive(Debug, Clone, PartialEq)]
enum Token {
    ObjBegin,
    ObjEnd,
    ArrBegin,
    ArrEnd,
    Str(Vec<u8>),
    Number(f64),
    Boolean(bool),
    Null,
    Colon,
    Comma,
    End,
    /// An error token with its text ("invalid token", "invalid number", ...).
    Error(&'static str),
}

impl Token {
    fn name(&self) -> &'static str {
        match self {
            Token::ObjBegin => "T_OBJ_BEGIN",
            Token::ObjEnd => "T_OBJ_END",
            Token::ArrBegin => "T_ARR_BEGIN",
            Token::ArrEnd => "T_ARR_END",
            Token::Str(_) => "T_STRING",
            Token::Number(_) => "T_NUMBER",
            Token::Boolean(_) => "T_BOOLEAN",
            Token::Null => "T_NULL",
            Token::Colon => "T_COLON",
            Token::Comma => "T_COMMA",
            Token::End => "T_END",
            Token::Error(text) => text,
        }
    }
}

/// The longest prefix of `s` C's strtod reads: its value and length (None when it reads
/// nothing).
pub fn strtod_prefix(s: &[u8]) -> Option<(f64, usize)> {
    let mut i = 0;
    let negative = match s.first() {
        Some(b'-') => {
            i = 1;
            true
        }
        Some(b'+') => {
            i = 1;
            false
        }
        _ => false,
    };
    let signed = |v: f64| if negative { -v } else { v };
    let rest = &s[i..];
    let starts_ci = |p: &[u8]| rest.len() >= p.len() && rest[..p.len()].eq_ignore_ascii_case(p);
    if starts_ci(b"inf") {
        let len = if starts_ci(b"infinity") { 8 } else { 3 };
        return Some((signed(f64::INFINITY), i + len));
    }
    if starts_ci(b"nan") {
        let mut len = 3;
        if rest.get(3) == Some(&b'(') {
            let close = rest[4..]
                .iter()
                .position(|b| !(b.is_ascii_alphanumeric() || *b == b'_'));
            if let Some(c) = close {
                if rest[4 + c] == b')' {
                    len = 4 + c + 1;
                }
            }
        }
        return Some((signed(f64::NAN), i + len));
    }
    if rest.len() >= 2 && rest[0] == b'0' && (rest[1] | 0x20) == b'x' {
        if let Some((v, len)) = hex_float(&rest[2..]) {
            return Some((signed(v), i + 2 + len));
        }
        return Some((signed(0.0), i + 1));
    }
    let digits = |from: usize| {
        rest[from..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count()
    };
    let int = digits(0);
    let mut j = int;
    let mut frac = 0;
    if rest.get(j) == Some(&b'.') {
        frac = digits(j + 1);
        if int > 0 || frac > 0 {
            j += 1 + frac;
        }
    }
    if int == 0 && frac == 0 {
        return None;
    }
    if matches!(rest.get(j), Some(b'e' | b'E')) {
        let mut k = j + 1;
        if matches!(rest.get(k), Some(b'+' | b'-')) {
            k += 1;
        }
        let exp = digits(k);
        if exp > 0 {
            j = k + exp;
        }
    }
    let text = std::str::from_utf8(&rest[..j]).ok()?;
    let v: f64 = text.parse().ok()?;
    Some((signed(v), i + j))
}

/// A hexadecimal float after its `0x`: its value and length, None without a digit.
fn hex_float(s: &[u8]) -> Option<(f64, usize)> {
    let hex = |b: u8| (b as char).to_digit(16);
    let (mut m, mut exp, mut i, mut any) = (0f64, 0i64, 0, false);
    while let Some(d) = s.get(i).and_then(|&b| hex(b)) {
        m = m * 16.0 + d as f64;
        any = true;
        i += 1;
    }
    if s.get(i) == Some(&b'.') {
        let mut j = i + 1;
        let mut frac_any = false;
        while let Some(d) = s.get(j).and_then(|&b| hex(b)) {
            m = m * 16.0 + d as f64;
            exp -= 4;
            frac_any = true;
            j += 1;
        }
        if any || frac_any {
            i = j;
            any = true;
        }
    }
    if !any {
        return None;
    }
    if matches!(s.get(i), Some(b'p' | b'P')) {
        let mut k = i + 1;
        let neg = s.get(k) == Some(&b'-');
        if matches!(s.get(k), Some(b'+' | b'-')) {
            k += 1;
        }
        let start = k;
        let mut e = 0i64;
        while let Some(d) = s.get(k).filter(|b| b.is_ascii_digit()) {
            e = (e * 10 + (d - b'0') as i64).min(100_000);
            k += 1;
        }
        if k > start {
            exp += if neg { -e } else { e };
            i = k;
        }
    }
    Some((m * 2f64.powi(exp.clamp(-2000, 2000) as i32), i))
}

struct Parser<'a> {
    data: &'a [u8],
    pos: usize,
    depth: i64,
    cfg: &'a Config,
}

impl Parser<'_> {
    /// The byte at `i`, NUL past the end (Lua strings end with one).
    fn at(&self, i: usize) -> u8 {
        self.data.get(i).copied().unwrap_or(0)
    }

    fn starts_with(&self, p: &[u8]) -> bool {
        self.data[self.pos.min(self.data.len())..].starts_with(p)
    }

    /// json_is_invalid_number: numbers JSON does not allow (a `+`, hex, leading zeros,
    /// inf, nan).
    fn invalid_number(&self) -> bool {
        let mut p = self.pos;
        if self.at(p) == b'+' {
            return true;
        }
        if self.at(p) == b'-' {
            p += 1;
        }
        let c = self.at(p);
        if c == b'0' {
            let c2 = self.at(p + 1);
            return (c2 | 0x20) == b'x' || c2.is_ascii_digit();
        }
        if c <= b'9' {
            return false;
        }
        let rest = &self.data[p.min(self.data.len())..];
        let ci = |w: &[u8]| rest.len() >= 3 && rest[..3].eq_ignore_ascii_case(w);
        ci(b"inf") || ci(b"nan")
    }

    fn number(&mut self) -> Token {
        match strtod_prefix(&self.data[self.pos..]) {
            Some((v, len)) => {
                self.pos += len;
                Token::Number(v)
            }
            None => Token::Error("invalid number"),
        }
    }

    /// The next token and where it starts.
    fn next(&mut self) -> (Token, usize) {
        while matches!(self.at(self.pos), b' ' | b'\t' | b'\n' | b'\r') {
            self.pos += 1;
        }
        let at = self.pos;
        let ch = self.at(self.pos);
        let single = match ch {
            b'{' => Some(Token::ObjBegin),
            b'}' => Some(Token::ObjEnd),
            b'[' => Some(Token::ArrBegin),
            b']' => Some(Token::ArrEnd),
            b',' => Some(Token::Comma),
            b':' => Some(Token::Colon),
            _ => None,
        };
        if let Some(t) = single {
            self.pos += 1;
            return (t, at);
        }
        if ch == 0 {
            return (Token::End, at);
        }
        if !matches!(
            ch,
            b'f' | b'i' | b'I' | b'n' | b'N' | b't' | b'"' | b'+' | b'-' | b'0'..=b'9'
        ) {
            return (Token::Error("invalid token"), at);
        }
        if ch == b'"' {
            return self.string();
        }
        if ch == b'-' || ch.is_ascii_digit() {
            if !self.cfg.decode_invalid && self.invalid_number() {
                return (Token::Error("invalid number"), self.pos);
            }
            let t = self.number();
            let at = if matches!(t, Token::Error(_)) {
                self.pos
            } else {
                at
            };
            return (t, at);
        }
        for (word, token) in [
            (&b"true"[..], Token::Boolean(true)),
            (b"false", Token::Boolean(false)),
            (b"null", Token::Null),
        ] {
            if self.starts_with(word) {
                self.pos += word.len();
                return (token, at);
            }
        }
        if self.cfg.decode_invalid && self.invalid_number() {
            let t = self.number();
            let at = if matches!(t, Token::Error(_)) {
                self.pos
            } else {
                at
            };
            return (t, at);
        }
        (Token::Error("invalid token"), self.pos)
    }

    fn string(&mut self) -> (Token, usize) {
        let at = self.pos;
        self.pos += 1;
        let mut out = Vec::new();
        loop {
            let ch = self.at(self.pos);
            if ch == b'"' {
                break;
            }
            if ch == 0 {
                return (Token::Error("unexpected end of string"), self.pos);
            }
            if ch == b'\\' {
                let translated = match self.at(self.pos + 1) {
                    b'"' => b'"',
                    b'\\' => b'\\',
                    b'/' => b'/',
                    b'b' => 8,
                    b'f' => 12,
                    b'n' => b'\n',
                    b'r' => b'\r',
                    b't' => b'\t',
                    b'u' => {
                        if self.unicode_escape(&mut out) {
                            continue;
                        }
                        return (Token::Error("invalid unicode escape code"), self.pos);
                    }
                    _ => return (Token::Error("invalid escape code"), self.pos),
                };
                out.push(translated);
                self.pos += 2;
                continue;
            }
            out.push(ch);
            self.pos += 1;
        }
        self.pos += 1;
        (Token::Str(out), at)
    }

    fn hex4(&self, from: usize) -> Option<u32> {
        let mut v = 0;
        for i in 0..4 {
            v = v * 16 + (self.at(from + i) as char).to_digit(16)?;
        }
        Some(v)
    }

    /// A `\uXXXX` escape (a surrogate pair takes two) appended as UTF-8; false when bad.
    fn unicode_escape(&mut self, out: &mut Vec<u8>) -> bool {
        let Some(mut cp) = self.hex4(self.pos + 2) else {
            return false;
        };
        let mut len = 6;
        if cp & 0xF800 == 0xD800 {
            if cp & 0x400 != 0 {
                return false;
            }
            if self.at(self.pos + 6) != b'\\' || self.at(self.pos + 7) != b'u' {
                return false;
            }
            let Some(low) = self.hex4(self.pos + 8) else {
                return false;
            };
            if low & 0xFC00 != 0xDC00 {
                return false;
            }
            cp = (((cp & 0x3FF) << 10) | (low & 0x3FF)) + 0x10000;
            len = 12;
        }
        let Some(c) = char::from_u32(cp) else {
            return false;
        };
        let mut buf = [0u8; 4];
        out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        self.pos += len;
        true
    }

    fn parse_error(&self, expected: &str, token: &Token, at: usize) -> Failure {
        format!(
            "Expected {expected} but found {} at character {}",
            token.name(),
            at + 1
        )
    }

    /// json_decode_descend: one level deeper, within decode_max_depth and within the
    /// Lua stack (`used` slots in use, `slots` more wanted).
    fn descend(&mut self, used: usize, slots: usize) -> Result<(), Failure> {
        self.depth += 1;
        if self.depth <= self.cfg.decode_max_depth && used + slots <= LUA_MAX_SLOTS {
            return Ok(());
        }
        Err(format!(
            "Found too many nested data structures ({}) at character {}",
            self.depth, self.pos
        ))
    }

    /// After `{` or `,` in an object: the key and its colon.
    fn object_key(&mut self) -> Result<Vec<u8>, Failure> {
        let (token, at) = self.next();
        let Token::Str(key) = token else {
            return Err(self.parse_error("object key string", &token, at));
        };
        let (colon, at) = self.next();
        if colon != Token::Colon {
            return Err(self.parse_error("colon", &colon, at));
        }
        Ok(key)
    }

    /// json_process_value without recursion: the value `token` starts, the arrays and
    /// objects it opens kept on a stack of their own. The Lua stack slots lua-cjson would
    /// use are counted (the argument; per open array its table; per open object its
    /// table and pending key) so nesting fails where its lua_checkstack fails.
    fn value(&mut self, lua: &Lua, token: Token, at: usize) -> Result<Value, Failure> {
        enum Open {
            Array(Table, i64),
            Object(Table, Vec<u8>),
        }
        let lua_err = |e: mlua::Error| e.to_string();
        let mut open: Vec<Open> = Vec::new();
        let mut used = 1usize;
        let (mut token, mut at) = (token, at);
        loop {
            let mut value = match token {
                Token::Str(s) => Value::String(lua.create_string(s).map_err(lua_err)?),
                Token::Number(n) => Value::Number(n),
                Token::Boolean(b) => Value::Boolean(b),
                Token::Null => null(),
                Token::ObjBegin => {
                    self.descend(used, 3)?;
                    let t = lua.create_table().map_err(lua_err)?;
                    let save = (self.pos, self.depth);
                    let (next, _) = self.next();
                    if next == Token::ObjEnd {
                        self.depth -= 1;
                        Value::Table(t)
                    } else {
                        (self.pos, self.depth) = save;
                        let key = self.object_key()?;
                        used += 2;
                        open.push(Open::Object(t, key));
                        (token, at) = self.next();
                        continue;
                    }
                }
                Token::ArrBegin => {
                    self.descend(used, 2)?;
                    let t = lua.create_table().map_err(lua_err)?;
                    let (next, next_at) = self.next();
                    if next == Token::ArrEnd {
                        self.depth -= 1;
                        Value::Table(t)
                    } else {
                        used += 1;
                        open.push(Open::Array(t, 1));
                        (token, at) = (next, next_at);
                        continue;
                    }
                }
                other => return Err(self.parse_error("value", &other, at)),
            };
            // Store the value in the containers it completes, innermost first.
            loop {
                let Some(top) = open.last_mut() else {
                    return Ok(value);
                };
                match top {
                    Open::Array(t, i) => {
                        t.raw_set(*i, value).map_err(lua_err)?;
                        *i += 1;
                        let (sep, sat) = self.next();
                        if sep == Token::ArrEnd {
                            let Some(Open::Array(t, _)) = open.pop() else {
                                unreachable!("an array is open")
                            };
                            self.depth -= 1;
                            used -= 1;
                            value = Value::Table(t);
                            continue;
                        }
                        if sep != Token::Comma {
                            return Err(self.parse_error("comma or array end", &sep, sat));
                        }
                    }
                    Open::Object(t, key) => {
                        let key = std::mem::take(key);
                        t.raw_set(lua.create_string(key).map_err(lua_err)?, value)
                            .map_err(lua_err)?;
                        let (sep, sat) = self.next();
                        if sep == Token::ObjEnd {
                            let Some(Open::Object(t, _)) = open.pop() else {
                                unreachable!("an object is open")
                            };
                            self.depth -= 1;
                            used -= 2;
                            value = Value::Table(t);
                            continue;
                        }
                        if sep != Token::Comma {
                            return Err(self.parse_error("comma or object end", &sep, sat));
                        }
                        let next_key = self.object_key()?;
                        if let Some(Open::Object(_, key)) = open.last_mut() {
                            *key = next_key;
                        }
                    }
                }
                (token, at) = self.next();
                break;
            }
        }
    }
}

/// `cjson.decode(text)` into Lua values, or the error's text.
pub fn decode(lua: &Lua, cfg: &Config, data: &[u8]) -> Result<Value, Failure> {
    if data.len() >= 2 && (data[0] == 0 || data[1] == 0) {
        return Err("JSON parser does not support UTF-16 or UTF-32".into());
    }
    let mut p = Parser {
        data,
        pos: 0,
        depth: 0,
        cfg,
    };
    let (token, at) = p.next();
    let value = p.value(lua, token, at)?;
    let (token, at) = p.next();
    if token != Token::End {
        return Err(p.parse_error("the end", &token, at));
    }
    Ok(value)
}

type Shared = Rc<RefCell<Config>>;

/// json_arg_init: at most `max` arguments.
fn arg_init(lua: &Lua, p: &Pending, args: &MultiValue, max: usize) -> mlua::Result<()> {
    if args.len() > max {
        return Err(arg_error(lua, p, max + 1, "found too many arguments"));
    }
    Ok(())
}

/// json_enum_option with on/off (booleans accepted): sets the setting from argument
/// `narg` unless nil; returns it.
fn bool_option(
    lua: &Lua,
    p: &Pending,
    args: &MultiValue,
    narg: usize,
    setting: &mut bool,
) -> mlua::Result<bool> {
    match arg(args, narg) {
        Value::Nil => {}
        Value::Boolean(b) => *setting = *b,
        _ => *setting = check_option(lua, p, args, narg, &["off", "on"])? == 1,
    }
    Ok(*setting)
}

/// luaL_checkoption: the index of the option argument `narg` names.
fn check_option(
    lua: &Lua,
    p: &Pending,
    args: &MultiValue,
    narg: usize,
    options: &[&str],
) -> mlua::Result<usize> {
    let name = check_bytes(lua, p, args, narg)?;
    options
        .iter()
        .position(|o| o.as_bytes() == name.as_slice())
        .ok_or_else(|| {
            arg_error(
                lua,
                p,
                narg,
                &format!("invalid option '{}'", String::from_utf8_lossy(&name)),
            )
        })
}

/// json_integer_option: sets the setting from argument `narg` unless nil (an integer in
/// min..=max); returns it.
fn integer_option(
    lua: &Lua,
    p: &Pending,
    args: &MultiValue,
    narg: usize,
    setting: &mut i64,
    min: i64,
    max: i64,
) -> mlua::Result<i64> {
    if !arg(args, narg).is_nil() {
        let value = match to_number(arg(args, narg)) {
            Some(n) => n as i64,
            None => return Err(type_error(lua, p, args, narg, "number")),
        };
        if value < min || value > max {
            return Err(arg_error(
                lua,
                p,
                1,
                &format!("expected integer between {min} and {max}"),
            ));
        }
        *setting = value;
    }
    Ok(*setting)
}

/// The `cjson` table (installed before the sandbox, which hides the globals: Lua's own
/// `next` is taken from them here).
pub fn module(lua: &Lua, pending: &Pending) -> mlua::Result<Table> {
    let next: Function = lua.globals().raw_get("next")?;
    instance(lua, pending, next)
}

/// A new `cjson` table with settings of its own (`cjson.new()` makes another).
fn instance(lua: &Lua, pending: &Pending, next: Function) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    let cfg: Shared = Rc::default();
    const INT_MAX: i64 = i32::MAX as i64;

    let (c, p, walk) = (cfg.clone(), pending.clone(), next.clone());
    t.raw_set(
        "encode",
        lua.create_function(move |lua, args: MultiValue| {
            if args.len() != 1 {
                return Err(arg_error(lua, &p, 1, "expected 1 argument"));
            }
            let cfg = c.borrow().clone();
            match encode(&cfg, &walk, &args[0]) {
                Ok(bytes) => lua.create_string(bytes),
                Err(text) => Err(error(lua, &p, &text)),
            }
        })?,
    )?;
    let (c, p) = (cfg.clone(), pending.clone());
    t.raw_set(
        "decode",
        lua.create_function(move |lua, args: MultiValue| {
            if args.len() != 1 {
                return Err(arg_error(lua, &p, 1, "expected 1 argument"));
            }
            let data = check_bytes(lua, &p, &args, 1)?;
            let cfg = c.borrow().clone();
            decode(lua, &cfg, &data).map_err(|text| error(lua, &p, &text))
        })?,
    )?;
    let (c, p) = (cfg.clone(), pending.clone());
    t.raw_set(
        "encode_sparse_array",
        lua.create_function(move |lua, args: MultiValue| {
            arg_init(lua, &p, &args, 3)?;
            let mut cfg = c.borrow_mut();
            let convert = bool_option(lua, &p, &args, 1, &mut cfg.sparse_convert)?;
            let ratio = integer_option(lua, &p, &args, 2, &mut cfg.sparse_ratio, 0, INT_MAX)?;
            let safe = integer_option(lua, &p, &args, 3, &mut cfg.sparse_safe, 0, INT_MAX)?;
            Ok((convert, ratio, safe))
        })?,
    )?;
    type Field = fn(&mut Config) -> &mut i64;
    let integers: [(&str, Field, i64, i64); 3] = [
        ("encode_max_depth", |c| &mut c.encode_max_depth, 1, INT_MAX),
        ("decode_max_depth", |c| &mut c.decode_max_depth, 1, INT_MAX),
        ("encode_number_precision", |c| &mut c.precision, 1, 14),
    ];
    for (name, field, min, max) in integers {
        let (c, p) = (cfg.clone(), pending.clone());
        t.raw_set(
            name,
            lua.create_function(move |lua, args: MultiValue| {
                arg_init(lua, &p, &args, 1)?;
                let mut cfg = c.borrow_mut();
                integer_option(lua, &p, &args, 1, field(&mut cfg), min, max)
            })?,
        )?;
    }
    type Flag = fn(&mut Config) -> &mut bool;
    let flags: [(&str, Flag); 2] = [
        ("encode_keep_buffer", |c| &mut c.keep_buffer),
        ("decode_invalid_numbers", |c| &mut c.decode_invalid),
    ];
    for (name, field) in flags {
        let (c, p) = (cfg.clone(), pending.clone());
        t.raw_set(
            name,
            lua.create_function(move |lua, args: MultiValue| {
                arg_init(lua, &p, &args, 1)?;
                let mut cfg = c.borrow_mut();
                bool_option(lua, &p, &args, 1, field(&mut cfg))
            })?,
        )?;
    }
    let (c, p) = (cfg.clone(), pending.clone());
    t.raw_set(
        "encode_invalid_numbers",
        lua.create_function(move |lua, args: MultiValue| {
            arg_init(lua, &p, &args, 1)?;
            let mut cfg = c.borrow_mut();
            match arg(&args, 1) {
                Value::Nil => {}
                Value::Boolean(b) => cfg.encode_invalid = *b as i64,
                _ => {
                    cfg.encode_invalid =
                        check_option(lua, &p, &args, 1, &["off", "on", "null"])? as i64
                }
            }
            Ok(match cfg.encode_invalid {
                0 => Value::Boolean(false),
                1 => Value::Boolean(true),
                _ => Value::String(lua.create_string("null")?),
            })
        })?,
    )?;
    let p = pending.clone();
    t.raw_set(
        "new",
        lua.create_function(move |lua, ()| instance(lua, &p, next.clone()))?,
    )?;
    t.raw_set("null", null())?;
    t.raw_set("_NAME", "cjson")?;
    t.raw_set("_VERSION", "2.1.0")?;
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(lua: &Lua, code: &str) -> Result<String, String> {
        let v: Value = lua.load(code).eval().unwrap();
        let next: Function = lua.globals().get("next").unwrap();
        encode(&Config::default(), &next, &v).map(|b| String::from_utf8(b).unwrap())
    }

    #[test]
    fn encodes_as_lua_cjson() {
        let lua = Lua::new();
        assert_eq!(enc(&lua, "return {1, 2, 'a'}").unwrap(), "[1,2,\"a\"]");
        assert_eq!(enc(&lua, "return {}").unwrap(), "{}");
        assert_eq!(enc(&lua, "return 0.1").unwrap(), "0.1");
        assert_eq!(enc(&lua, "return math.pi").unwrap(), "3.1415926535898");
        assert_eq!(enc(&lua, "return -0").unwrap(), "-0");
        assert_eq!(
            enc(&lua, "return 'a/\\n\\1\\127'").unwrap(),
            "\"a\\/\\n\\u0001\\u007f\""
        );
        assert_eq!(enc(&lua, "return {[1]=1, [3]=3}").unwrap(), "[1,null,3]");
        assert_eq!(
            enc(&lua, "return {[20]=1}").unwrap_err(),
            "Cannot serialise table: excessively sparse array"
        );
        assert_eq!(
            enc(&lua, "return 1/0").unwrap_err(),
            "Cannot serialise number: must not be NaN or Inf"
        );
        assert_eq!(
            enc(&lua, "return {[true]=1}").unwrap_err(),
            "Cannot serialise boolean: table key must be a number or string"
        );
        let deep = enc(&lua, "local t = {} t[1] = t return t").unwrap_err();
        assert_eq!(deep, "Cannot serialise, excessive nesting (1001)");
    }

    fn dec(lua: &Lua, text: &str) -> Result<String, String> {
        let v = decode(lua, &Config::default(), text.as_bytes())?;
        let next: Function = lua.globals().get("next").unwrap();
        Ok(String::from_utf8(encode(&Config::default(), &next, &v).unwrap()).unwrap())
    }

    #[test]
    fn decodes_as_lua_cjson() {
        let lua = Lua::new();
        assert_eq!(
            dec(&lua, " [1, 2.5, \"x\\u00e9\", true, null] ").unwrap(),
            "[1,2.5,\"x\u{e9}\",true,null]"
        );
        assert_eq!(
            dec(&lua, "{\"a\":{\"b\":[]}}").unwrap(),
            "{\"a\":{\"b\":{}}}"
        );
        assert_eq!(dec(&lua, "\"\\ud83d\\ude00\"").unwrap(), "\"\u{1f600}\"");
        assert_eq!(dec(&lua, "0x10").unwrap(), "16");
        assert_eq!(dec(&lua, "1e5").unwrap(), "100000");
        for (text, error) in [
            ("", "Expected value but found T_END at character 1"),
            ("x", "Expected value but found invalid token at character 1"),
            ("[1,", "Expected value but found T_END at character 4"),
            (
                "[1 2]",
                "Expected comma or array end but found T_NUMBER at character 4",
            ),
            (
                "{1:2}",
                "Expected object key string but found T_NUMBER at character 2",
            ),
            (
                "{\"a\" 2}",
                "Expected colon but found T_NUMBER at character 6",
            ),
            (
                "\"abc",
                "Expected value but found unexpected end of string at character 5",
            ),
            (
                "\"\\x\"",
                "Expected value but found invalid escape code at character 2",
            ),
            (
                "\"\\ud800\"",
                "Expected value but found invalid unicode escape code at character 2",
            ),
            ("1 2", "Expected the end but found T_NUMBER at character 3"),
            (
                "-",
                "Expected value but found invalid number at character 1",
            ),
            ("a\0", "JSON parser does not support UTF-16 or UTF-32"),
        ] {
            assert_eq!(dec(&lua, text).unwrap_err(), error, "{text:?}");
        }
    }

    #[test]
    fn strtod_reads_what_c_reads() {
        assert_eq!(strtod_prefix(b"1.5e3x"), Some((1500.0, 5)));
        assert_eq!(strtod_prefix(b"1e+"), Some((1.0, 1)));
        assert_eq!(strtod_prefix(b"-.5"), Some((-0.5, 3)));
        assert_eq!(strtod_prefix(b"0x1p4"), Some((16.0, 5)));
        assert_eq!(strtod_prefix(b"0xg"), Some((0.0, 1)));
        assert_eq!(strtod_prefix(b"Infinity"), Some((f64::INFINITY, 8)));
        assert_eq!(strtod_prefix(b"-"), None);
        assert_eq!(strtod_prefix(b"."), None);
    }

    proptest::proptest! {
        /// Any bytes decode or fail with an error (never a panic), and what decodes
        /// encodes to text that decodes and encodes again.
        #[test]
        fn decode_then_encode_is_stable(text in proptest::collection::vec(
            proptest::sample::select(b"[]{},:\"\\ 0123456789.eE+-truefalsnl\\u00e9xINa".to_vec()),
            0..40,
        )) {
            let lua = Lua::new();
            let next: Function = lua.globals().get("next").unwrap();
            let cfg = Config::default();
            if let Ok(v) = decode(&lua, &cfg, &text) {
                if let Ok(once) = encode(&cfg, &next, &v) {
                    let again = decode(&lua, &cfg, &once).expect("our own output decodes");
                    // As long (an object's keys may come out in another order).
                    proptest::prop_assert_eq!(encode(&cfg, &next, &again).unwrap().len(), once.len());
                }
            }
        }
    }
}
