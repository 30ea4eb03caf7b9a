//! LDB, Redis's Lua debugger: SCRIPT DEBUG YES|SYNC|NO and the debugging session of the
//! client's next EVAL, driven over its own connection (what `redis-cli --ldb` speaks).
//!
//! A session starts when a client in debug mode sends EVAL: with YES the server forks and
//! the child runs it (its writes die with it, see [`fork`]); with SYNC the server runs it
//! and serves nothing else meanwhile. A line hook stops the script before the first line,
//! after a `step`, at a breakpoint or a `redis.breakpoint()`, and when it ran past
//! busy-reply-threshold (5 s when 0) without a stop; at a stop the debugger reads the
//! client's commands from its socket and answers each with a multi-bulk of status lines
//! (see [`repl`]). The session ends with `<endsession>`, then the EVAL's reply, then the
//! connection is closed.
//!
//! - [`wire`]: the socket I/O and the parser of the client's commands.
//! - [`show`]: Lua values and command replies as the debugger prints them.
//! - [`repl`]: the hook and the debugger's commands.
//! - [`fork`]: the forked sessions' children.
//!
//! While a session runs, its state is the interpreter's app data, where `redis.debug()`,
//! `redis.breakpoint()`, redis.call and the error tables (see [`log_error`]) find it.

pub mod fork;
pub mod repl;
pub mod show;
pub mod wire;

use mlua::{Lua, MultiValue};
use std::cell::RefCell;
use std::rc::Rc;

/// How SCRIPT DEBUG runs a client's sessions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// YES: in a forked child, its changes rolled back.
    Fork,
    /// SYNC: in the server, blocking it, its changes kept.
    Sync,
}

/// Breakpoints a session holds at most.
const MAX_BREAKPOINTS: usize = 64;
/// The default length past which replies and values are trimmed (`maxlen`).
const DEFAULT_MAXLEN: usize = 256;

/// One debugging session's state.
pub struct Session {
    /// The client's connection.
    wire: wire::Wire,
    /// Lines waiting to be sent.
    logs: Vec<Vec<u8>>,
    /// Breakpoint lines; the first `breakpoint_count` are set.
    breakpoints: [i32; MAX_BREAKPOINTS],
    breakpoint_count: usize,
    /// Stop at the next line (and log redis.call's commands and replies meanwhile).
    step: bool,
    /// redis.breakpoint() was called: stop at the next line.
    lua_breakpoint: bool,
    /// The script's source, by line.
    source: Vec<Vec<u8>>,
    /// The line the script is at.
    current_line: i64,
    /// What the client sent and no command consumed yet.
    input: Vec<u8>,
    /// Logged replies and values longer than this are trimmed (0: never).
    maxlen: usize,
    /// The hint about `maxlen 0` was given (or the user used maxlen).
    maxlen_hint_sent: bool,
}

/// A session, shared by the hook and the `redis` functions.
pub type Shared = Rc<RefCell<Session>>;

impl Session {
    /// A session on connection `fd` for a script with this body (its lines are what
    /// `list` shows: trailing line breaks dropped, split at each `\n`).
    pub fn start(fd: i32, body: &[u8]) -> Shared {
        let end = body
            .iter()
            .rposition(|&b| b != b'\n' && b != b'\r')
            .map_or(0, |i| i + 1);
        let source = match end {
            0 => Vec::new(),
            _ => body[..end]
                .split(|&b| b == b'\n')
                .map(<[u8]>::to_vec)
                .collect(),
        };
        Rc::new(RefCell::new(Session {
            wire: wire::Wire::new(fd),
            logs: Vec::new(),
            breakpoints: [0; MAX_BREAKPOINTS],
            breakpoint_count: 0,
            step: true,
            lua_breakpoint: false,
            source,
            current_line: 0,
            input: Vec::new(),
            maxlen: DEFAULT_MAXLEN,
            maxlen_hint_sent: false,
        }))
    }

    /// Queues a line for the client.
    fn log(&mut self, entry: impl Into<Vec<u8>>) {
        self.logs.push(entry.into());
    }

    /// Queues a line trimmed to `maxlen` (with ` ...`), and the first time one is trimmed
    /// a hint about `maxlen 0`.
    fn log_trimmed(&mut self, mut entry: Vec<u8>) {
        let trimmed = self.maxlen != 0 && entry.len() > self.maxlen;
        if trimmed {
            entry.truncate(self.maxlen);
            entry.extend_from_slice(b" ...");
        }
        self.log(entry);
        if trimmed && !self.maxlen_hint_sent {
            self.maxlen_hint_sent = true;
            self.log("<hint> The above reply was trimmed. Use 'maxlen 0' to disable trimming.");
        }
    }

    /// Sends the queued lines as one multi-bulk of status replies (line breaks inside
    /// become spaces).
    fn send_logs(&mut self) {
        let mut out = format!("*{}\r\n", self.logs.len()).into_bytes();
        for entry in self.logs.drain(..) {
            out.push(b'+');
            out.extend(entry.iter().map(|&b| match b {
                b'\r' | b'\n' => b' ',
                b => b,
            }));
            out.extend_from_slice(b"\r\n");
        }
        self.wire.send(&out);
    }

    /// Whether line `line` has a breakpoint.
    fn is_breakpoint(&self, line: i64) -> bool {
        self.breakpoints[..self.breakpoint_count]
            .iter()
            .any(|&b| b as i64 == line)
    }

    /// Queues source line `n` (1-based) with its marks: `->` where the script is, `#` at a
    /// breakpoint.
    fn log_source_line(&mut self, n: i64) {
        let text: &[u8] = match usize::try_from(n - 1).ok().and_then(|i| self.source.get(i)) {
            Some(line) => line,
            None => b"<out of range source code line>",
        };
        let prefix = match (self.current_line == n, self.is_breakpoint(n)) {
            (true, true) => "->#",
            (true, false) => "-> ",
            (false, true) => "  #",
            (false, false) => "   ",
        };
        let mut entry = format!("{prefix}{n:<3} ").into_bytes();
        entry.extend_from_slice(text);
        self.log(entry);
    }

    /// Queues the source lines within `context` lines of `around` (all of them when
    /// `around` is 0).
    fn list(&mut self, around: i64, context: i64) {
        for n in 1..=self.source.len() as i64 {
            if around == 0 || (around - n).abs() <= context {
                self.log_source_line(n);
            }
        }
    }
}

/// Sends what is left of the session's lines and `<endsession>`; the EVAL's reply follows
/// on the connection.
pub fn end(session: &Shared) {
    let mut s = session.borrow_mut();
    s.log("<endsession>");
    s.send_logs();
}

/// Writes bytes to the session's connection (a forked child's last reply).
pub fn send(session: &Shared, bytes: &[u8]) {
    session.borrow().wire.send(bytes);
}

/// Makes `session` the one the interpreter's script runs under.
pub fn attach(lua: &Lua, session: &Shared) {
    lua.set_app_data(session.clone());
}

/// Ends the interpreter's debugging (after the script ran).
pub fn detach(lua: &Lua) {
    lua.remove_app_data::<Shared>();
}

/// The session the interpreter's script runs under, if any.
fn session(lua: &Lua) -> Option<Shared> {
    lua.app_data_ref::<Shared>().map(|s| s.clone())
}

/// The session, while it steps (Redis's ldbIsEnabled): only then are redis.call's
/// commands, replies and errors logged.
fn stepping(lua: &Lua) -> Option<Shared> {
    session(lua).filter(|s| s.borrow().step)
}

/// Logs an error a `redis` function or a command gave the script (`<error> text`).
pub fn log_error(lua: &Lua, text: &[u8]) {
    if let Some(s) = stepping(lua) {
        s.borrow_mut().log([b"<error> ".as_slice(), text].concat());
    }
}

/// Logs a command a script runs (`<redis> ...`, ten arguments at most).
pub fn log_command(lua: &Lua, argv: &[Vec<u8>]) {
    let Some(s) = stepping(lua) else { return };
    let mut entry = b"<redis>".to_vec();
    for (j, arg) in argv.iter().enumerate() {
        if j == 10 {
            // Redis's count, one short of the arguments left.
            entry.extend_from_slice(format!(" ... ({} more)", argv.len() - j - 1).as_bytes());
            break;
        }
        entry.push(b' ');
        entry.extend_from_slice(arg);
    }
    s.borrow_mut().log(entry);
}

/// Logs the reply of a command a script ran (`<reply> ...`, trimmed to `maxlen`).
pub fn log_reply(lua: &Lua, reply: &[u8]) {
    let Some(s) = stepping(lua) else { return };
    let mut entry = b"<reply> ".to_vec();
    show::reply(&mut entry, reply, 0);
    s.borrow_mut().log_trimmed(entry);
}

/// redis.breakpoint(): stops at the next line when debugging; whether it will.
pub fn breakpoint(lua: &Lua) -> bool {
    match session(lua) {
        Some(s) => {
            s.borrow_mut().lua_breakpoint = true;
            true
        }
        None => false,
    }
}

/// redis.debug(...): logs the values (`<debug> line N: a, b`) when debugging.
pub fn debug(lua: &Lua, args: &MultiValue) {
    let Some(s) = session(lua) else { return };
    let mut s = s.borrow_mut();
    let mut entry = format!("<debug> line {}: ", s.current_line).into_bytes();
    for (i, v) in args.iter().enumerate() {
        if i != 0 {
            entry.extend_from_slice(b", ");
        }
        show::value(&mut entry, v);
    }
    s.log(entry);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn logged(s: &Shared) -> Vec<String> {
        s.borrow_mut()
            .logs
            .drain(..)
            .map(|l| String::from_utf8(l).unwrap())
            .collect()
    }

    #[test]
    fn source_lines_show_position_and_breakpoints() {
        let s = Session::start(-1, b"local a = 1\nlocal b = 2\r\nreturn a\n\n");
        {
            let mut m = s.borrow_mut();
            assert_eq!(m.source.len(), 3);
            m.current_line = 2;
            m.breakpoints[0] = 3;
            m.breakpoint_count = 1;
            m.list(0, 0);
            m.log_source_line(9);
        }
        assert_eq!(
            logged(&s),
            [
                "   1   local a = 1",
                "-> 2   local b = 2\r",
                "  #3   return a",
                "   9   <out of range source code line>",
            ]
        );
        assert!(Session::start(-1, b"\n\r\n").borrow().source.is_empty());
    }

    #[test]
    fn long_entries_are_trimmed_with_one_hint() {
        let s = Session::start(-1, b"");
        {
            let mut m = s.borrow_mut();
            m.maxlen = 4;
            m.log_trimmed(b"123456".to_vec());
            m.log_trimmed(b"abcdef".to_vec());
            m.log_trimmed(b"xy".to_vec());
        }
        assert_eq!(
            logged(&s),
            [
                "1234 ...",
                "<hint> The above reply was trimmed. Use 'maxlen 0' to disable trimming.",
                "abcd ...",
                "xy",
            ]
        );
    }

    #[test]
    fn commands_are_logged_with_ten_arguments_at_most() {
        let lua = Lua::new();
        let s = Session::start(-1, b"");
        attach(&lua, &s);
        let argv: Vec<Vec<u8>> = (0..13).map(|i| format!("a{i}").into_bytes()).collect();
        log_command(&lua, &argv[..2]);
        log_command(&lua, &argv);
        log_reply(&lua, b"+OK\r\n");
        log_error(&lua, b"boom");
        s.borrow_mut().step = false;
        log_error(&lua, b"not while running on");
        detach(&lua);
        assert!(!breakpoint(&lua));
        assert_eq!(
            logged(&s),
            [
                "<redis> a0 a1",
                "<redis> a0 a1 a2 a3 a4 a5 a6 a7 a8 a9 ... (2 more)",
                "<reply> \"+OK\"",
                "<error> boom",
            ]
        );
    }
}
