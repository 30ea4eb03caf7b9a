//! Runs Lua scripts through EVAL (and, now and then, as a library's function through
//! FUNCTION LOAD and FCALL) on an in-process server. The input is read as choices in a
//! small grammar of script fragments: redis.call / redis.pcall with command names and
//! arguments from a word list, pcall, error(), loops (some longer than the time limit),
//! table constructors, cjson / cmsgpack / bit / struct calls, string operations,
//! redis.setresp, redis.set_repl, redis.error_reply / status_reply; a first byte of
//! 0xff makes the rest of the input the script itself, raw.
//!
//! busy-reply-threshold is 20 ms, and once a script passes it the harness does what
//! another client would: SCRIPT KILL, or SHUTDOWN NOSAVE's kill once the script has
//! written (the server's shutdown flag, cleared again after the command). So no script
//! runs for long. Nothing may panic; every reply must be one well-formed RESP value, no
//! script may be left running, and the keyspace must survive an RDB round trip.
//!
//! `EVAL_SCRIPT_SHOW=1` prints each generated script (to read what a crash input runs).
//!
//! Run from server/fuzz (seeds in corpus/eval_script/, dictionary eval_script.dict):
//!
//! ```text
//! mkdir -p /tmp/eval-corpus && cp corpus/eval_script/* /tmp/eval-corpus/
//! cargo +nightly fuzz run eval_script /tmp/eval-corpus -- -dict=eval_script.dict \
//!     -max_total_time=300 -max_len=1024
//! ```

#![no_main]

use common::new_client;
use goblin_server::commands::{execute_with, WhileBlocked};
use goblin_server::config::Config;
use goblin_server::server::Server;
use libfuzzer_sys::fuzz_target;

mod common;

/// Script time limit of the run, in milliseconds.
const BUSY_MS: u64 = 20;

/// Command names scripts call (never DEBUG or SHUTDOWN: those leave the process).
const COMMANDS: &[&str] = &[
    "set",
    "get",
    "incr",
    "incrbyfloat",
    "del",
    "exists",
    "type",
    "append",
    "getrange",
    "setrange",
    "mset",
    "mget",
    "lpush",
    "rpop",
    "lrange",
    "hset",
    "hgetall",
    "hincrby",
    "sadd",
    "smembers",
    "spop",
    "zadd",
    "zrange",
    "zscore",
    "xadd",
    "xrange",
    "setbit",
    "bitcount",
    "expire",
    "pexpire",
    "ttl",
    "persist",
    "rename",
    "copy",
    "object",
    "keys",
    "scan",
    "sort",
    "select",
    "swapdb",
    "flushdb",
    "randomkey",
    "dbsize",
    "ping",
    "echo",
    "time",
    "info",
    "publish",
    "eval",
    "script",
    "function",
    "fcall",
    "multi",
    "exec",
    "watch",
    "blpop",
    "subscribe",
    "client",
    "config",
    "acl",
    "hello",
    "wait",
    "pfadd",
    "pfcount",
    "geoadd",
    "geodist",
    "lmpop",
    "getex",
    "nosuch",
];

/// Arguments and string literals.
const WORDS: &[&str] = &[
    "k1",
    "k2",
    "{k}3",
    "a1",
    "0",
    "1",
    "-1",
    "2",
    "10",
    "1.5",
    "inf",
    "nan",
    "",
    "hello",
    "*",
    "x",
    "ex",
    "px",
    "nx",
    "xx",
    "get",
    "withscores",
    "count",
    "limit",
    "9223372036854775807",
    "-9223372036854775808",
    "1e400",
    "{}",
    "[1,2,{\"a\":null}]",
    "\\0",
    "\u{0}",
    "%s%d",
    "encoding",
    "refcount",
    "\u{80}\u{ff}",
];

/// Reads the input as a sequence of choices (zero once it runs out).
struct Choices<'a> {
    data: &'a [u8],
    pos: usize,
}

impl Choices<'_> {
    fn byte(&mut self) -> u8 {
        let b = self.data.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        b
    }

    fn pick<'w>(&mut self, list: &[&'w str]) -> &'w str {
        list[self.byte() as usize % list.len()]
    }

    fn done(&self) -> bool {
        self.pos >= self.data.len()
    }
}

/// A Lua string literal of `text` (escaped byte by byte).
fn quote(text: &str) -> String {
    let mut out = String::from("\"");
    for b in text.bytes() {
        match b {
            b' '..=b'~' if b != b'"' && b != b'\\' => out.push(b as char),
            _ => out.push_str(&format!("\\{b}")),
        }
    }
    out.push('"');
    out
}

/// Builds a script from the choices: a few statements, then a return.
struct Builder<'c, 'a> {
    c: &'c mut Choices<'a>,
}

impl Builder<'_, '_> {
    fn call_args(&mut self, depth: u32) -> String {
        let mut args = vec![quote(self.c.pick(COMMANDS))];
        for _ in 0..self.c.byte() % 5 {
            args.push(match self.c.byte() % 4 {
                0 => self.expr(depth + 1),
                _ => quote(self.c.pick(WORDS)),
            });
        }
        args.join(", ")
    }

    fn expr(&mut self, depth: u32) -> String {
        if depth > 4 {
            return quote(self.c.pick(WORDS));
        }
        let d = depth + 1;
        match self.c.byte() % 20 {
            0 => (self.c.byte() as i32 - 128).to_string(),
            1 => format!("{}.5", self.c.byte()),
            2 => format!("redis.call({})", self.call_args(d)),
            3 => format!("redis.pcall({})", self.call_args(d)),
            4 => format!("select(2, pcall(function() return {} end))", self.expr(d)),
            5 => format!(
                "{{{}, {}, k = {}}}",
                self.expr(d),
                self.expr(d),
                self.expr(d)
            ),
            6 => format!("cjson.encode({})", self.expr(d)),
            7 => format!("cjson.decode({})", self.expr(d)),
            8 => format!("cmsgpack.pack({}, {})", self.expr(d), self.expr(d)),
            9 => format!("cmsgpack.unpack({})", self.expr(d)),
            10 => {
                let f = self
                    .c
                    .pick(&["band", "bor", "bxor", "lshift", "rshift", "arshift"]);
                format!("bit.{f}({}, {})", self.expr(d), self.expr(d))
            }
            11 => format!("bit.tohex({})", self.expr(d)),
            12 => {
                let fmt = quote(self.c.pick(&[">I2", "<i4", "b", "s", "d", "Bc0", ">!4 h"]));
                match self.c.byte() % 2 {
                    0 => format!("struct.pack({fmt}, {})", self.expr(d)),
                    _ => format!("struct.unpack({fmt}, {})", self.expr(d)),
                }
            }
            13 => format!("string.rep({}, {})", self.expr(d), self.c.byte() % 16),
            14 => {
                let op = self
                    .c
                    .pick(&["sub", "upper", "len", "reverse", "byte", "format"]);
                format!("string.{op}({}, {})", self.expr(d), self.expr(d))
            }
            15 => match self.c.byte() % 2 {
                0 => format!("redis.error_reply({})", self.expr(d)),
                _ => format!("redis.status_reply({})", self.expr(d)),
            },
            16 => format!("redis.sha1hex({})", self.expr(d)),
            17 => self
                .c
                .pick(&["KEYS[1]", "ARGV[1]", "x", "nil", "true", "false", "{}"])
                .into(),
            18 => {
                let op = self
                    .c
                    .pick(&["+", "-", "*", "/", "%", "..", "==", "<", "and", "or"]);
                format!("({} {op} {})", self.expr(d), self.expr(d))
            }
            _ => quote(self.c.pick(WORDS)),
        }
    }

    fn stmt(&mut self, depth: u32) -> String {
        let d = depth + 1;
        match self.c.byte() % 14 {
            0 | 1 => format!("x = {}", self.expr(d)),
            2 | 3 => format!("redis.call({})", self.call_args(d)),
            4 => format!("redis.pcall({})", self.call_args(d)),
            5 => format!("redis.setresp({})", 2 + self.c.byte() % 2),
            6 => {
                let r = self
                    .c
                    .pick(&["REPL_ALL", "REPL_AOF", "REPL_REPLICA", "REPL_NONE"]);
                format!("redis.set_repl(redis.{r})")
            }
            7 => match self.c.byte() % 3 {
                0 => format!("error({})", self.expr(d)),
                1 => format!("error({{err = {}}})", self.expr(d)),
                _ => format!("pcall(error, {})", self.expr(d)),
            },
            8 if depth < 3 => {
                // Up to 255 rounds, or a loop that only the time limit ends.
                let n = match self.c.byte() % 4 {
                    0 => "1e12".to_string(),
                    _ => self.c.byte().to_string(),
                };
                format!("for i = 1, {n} do {} end", self.stmt(d))
            }
            9 if depth < 3 => format!(
                "if {} then {} else {} end",
                self.expr(d),
                self.stmt(d),
                self.stmt(d)
            ),
            10 => "while true do end".into(),
            11 => format!("return {}", self.expr(d)),
            12 => format!("y = {}", self.expr(d)),
            _ => format!("local _ = {}", self.expr(d)),
        }
    }

    fn script(&mut self) -> String {
        let mut body = Vec::new();
        for _ in 0..1 + self.c.byte() % 6 {
            body.push(self.stmt(0));
            if self.c.done() {
                break;
            }
        }
        body.push(format!("return {}", self.expr(0)));
        // `do ... end` lets a `return` sit in the middle; `x` is the script's local.
        let body: Vec<String> = body.iter().map(|s| format!("do {s} end")).collect();
        format!("local x\n{}", body.join("\n"))
    }
}

/// The end of one well-formed RESP2/RESP3 value starting at `pos`, if it is one.
fn resp_value(buf: &[u8], pos: usize, depth: u32) -> Option<usize> {
    let line_end = pos + buf.get(pos..)?.windows(2).position(|w| w == b"\r\n")?;
    let head = std::str::from_utf8(buf.get(pos + 1..line_end)?).ok()?;
    let next = line_end + 2;
    let tag = *buf.get(pos)?;
    let count = || head.parse::<i64>().ok();
    if depth > 1000 {
        return None;
    }
    match tag {
        b'+' | b'-' => (!head.contains('\r') && !head.contains('\n')).then_some(next),
        b':' | b'(' => count()
            .map(|_| next)
            .or_else(|| (tag == b'(').then_some(next)),
        b',' => Some(next),
        b'_' => head.is_empty().then_some(next),
        b'#' => (head == "t" || head == "f").then_some(next),
        b'$' | b'=' | b'!' => {
            let n = count()?;
            if n == -1 && tag == b'$' {
                return Some(next);
            }
            let n = usize::try_from(n).ok()?;
            (buf.get(next + n..next + n + 2)? == b"\r\n").then_some(next + n + 2)
        }
        b'*' | b'~' | b'>' | b'%' | b'|' => {
            let n = count()?;
            if n == -1 && tag == b'*' {
                return Some(next);
            }
            let n = usize::try_from(n).ok()? * if matches!(tag, b'%' | b'|') { 2 } else { 1 };
            let mut at = next;
            for _ in 0..n {
                at = resp_value(buf, at, depth + 1)?;
            }
            Some(at)
        }
        _ => None,
    }
}

/// Stops a script past the time limit as another client would (SCRIPT KILL, or
/// SHUTDOWN NOSAVE once it wrote).
struct Killer;

impl WhileBlocked for Killer {
    fn process_events(&mut self, server: &mut Server) {
        if let Some(running) = server.scripting.running.as_mut() {
            if running.wrote {
                server.shutdown = true;
            } else {
                running.kill = true;
            }
        }
    }
}

fn run(server: &mut Server, client: &mut goblin_server::clients::Client, args: &[&[u8]]) {
    let mut out = Vec::new();
    execute_with(server, client, &mut out, args, Some(&mut Killer));
    server.shutdown = false;
    assert!(
        server.scripting.running.is_none(),
        "a script is left running"
    );
    assert!(
        resp_value(&out, 0, 0) == Some(out.len()),
        "not one RESP value: {:?}",
        String::from_utf8_lossy(&out)
    );
}

fuzz_target!(|data: &[u8]| {
    let mut config = Config::default();
    config.busy_reply_threshold = BUSY_MS;
    let mut server = Server::new(config);
    let mut client = new_client(1);
    if data.first() == Some(&0xff) {
        run(
            &mut server,
            &mut client,
            &[b"EVAL", &data[1..], b"1", b"k1", b"a1"],
        );
        common::check_rdb_round_trip(&server);
        return;
    }
    let mut choices = Choices { data, pos: 0 };
    for round in 0..4 {
        if choices.done() {
            break;
        }
        let mode = choices.byte();
        if mode % 8 == 7 {
            let resp = if mode & 0x80 != 0 { b"3" } else { b"2" };
            run(&mut server, &mut client, &[b"HELLO", resp]);
        }
        let script = Builder { c: &mut choices }.script();
        if std::env::var_os("EVAL_SCRIPT_SHOW").is_some() {
            eprintln!("{script}");
        }
        if mode % 5 == 4 {
            let lib = format!(
                "#!lua name=lib{round}\nredis.register_function('f{round}', function(KEYS, ARGV)\n{script}\nend)"
            );
            run(
                &mut server,
                &mut client,
                &[b"FUNCTION", b"LOAD", b"REPLACE", lib.as_bytes()],
            );
            let name = format!("f{round}");
            run(
                &mut server,
                &mut client,
                &[b"FCALL", name.as_bytes(), b"1", b"k1", b"a1"],
            );
        } else {
            run(
                &mut server,
                &mut client,
                &[b"EVAL", script.as_bytes(), b"1", b"k1", b"a1"],
            );
        }
    }
    common::check_rdb_round_trip(&server);
});
