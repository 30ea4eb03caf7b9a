//! MONITOR: the command, and the line every monitoring client gets for each command the
//! server runs (Redis's replicationFeedMonitors).
//!
//! A line is `+<unix seconds>.<microseconds> [<db> <ip:port>] "arg" "arg" ...`, with
//! `[<db> lua]` for a script's commands and each argument quoted as Redis's sdscatrepr
//! quotes it. [`super::call`] feeds a command after it ran (so SELECT shows its new
//! database, and EXEC follows the commands it ran), but for the commands flagged
//! [`Flags::MONITOR_BEFORE`] (EVAL and its kin, so a script's commands follow it), never
//! for administrative commands nor for a blocked command run again. The arguments of AUTH,
//! and HELLO's AUTH username and password, show as `(redacted)`.

use super::{Command, Ctx, Flags};
use crate::clients::{Client, ClientAddr};
use crate::server::Server;
use std::borrow::Cow;

/// The error MONITOR gets inside EXEC (Redis's CLIENT_DENY_BLOCKING clients).
const DENY_BLOCKING: &str = "ERR MONITOR isn't allowed for DENY BLOCKING client";

/// What a redacted argument shows.
const REDACTED: &[u8] = b"(redacted)";

/// MONITOR: the client gets a line for every command from now on. A second MONITOR
/// answers nothing, as in Redis.
pub fn monitor(ctx: &mut Ctx, _args: &[&[u8]]) {
    if ctx.in_exec {
        return ctx.error(DENY_BLOCKING);
    }
    if ctx.client.monitor {
        return;
    }
    ctx.client.monitor = true;
    ctx.server.monitors.push(ctx.client.id);
    ctx.out.ok();
}

/// Ends MONITOR mode for `client` (RESET, a closed connection).
pub fn stop(server: &mut Server, client: &mut Client) {
    if client.monitor {
        client.monitor = false;
        server.monitors.retain(|&id| id != client.id);
    }
}

/// Whether `cmd`, run now, is shown to the monitors after it ran.
#[inline]
pub fn shown_after(cmd: &Command) -> bool {
    !cmd.flags.contains(Flags::ADMIN) && !cmd.flags.contains(Flags::MONITOR_BEFORE)
}

/// Sends the line of the command `args` that `ctx`'s client ran in `db` to every monitor.
pub fn feed(ctx: &mut Ctx, db: usize, args: &[&[u8]]) {
    if ctx.server.monitors.is_empty() || ctx.client.id == crate::aof::load::AOF_CLIENT_ID {
        return;
    }
    let origin = if ctx.client.id == crate::scripting::run::SCRIPT_CLIENT_ID {
        Origin::Lua
    } else {
        Origin::Peer(&ctx.client.addr)
    };
    let line = line(crate::clock::unix_us(), db, origin, &redact(args));
    let Ctx {
        server,
        client,
        out,
        ..
    } = ctx;
    let hard = server.config.output_limit.hard;
    for &id in &server.monitors {
        if id == client.id {
            out.simple(&line);
        } else {
            server.clients.push_to(id, hard, |w, _| w.simple(&line));
        }
    }
}

/// Where a monitored command came from.
#[derive(Debug, Clone, Copy)]
pub enum Origin<'a> {
    /// A script's command.
    Lua,
    /// A client connected from this address.
    Peer(&'a crate::clients::ClientAddr),
}

/// The monitor line (without `+` and CRLF) of `args` run in `db` at Unix time `unix_us`.
pub fn line(unix_us: u64, db: usize, origin: Origin, args: &[Cow<[u8]>]) -> String {
    let mut s = format!("{}.{:06} ", unix_us / 1_000_000, unix_us % 1_000_000);
    match origin {
        Origin::Lua => s.push_str(&format!("[{db} lua]")),
        // As Redis's replicationFeedMonitors: `unix:path` for a Unix client.
        Origin::Peer(ClientAddr::Unix(path)) => s.push_str(&format!("[{db} unix:{path}]")),
        // SocketAddr prints IPv6 as [addr]:port, as Redis's getClientPeerId.
        Origin::Peer(addr) => s.push_str(&format!("[{db} {addr}]")),
    }
    for arg in args {
        s.push(' ');
        repr(&mut s, arg);
    }
    s
}

/// Appends `bytes` quoted as Redis's sdscatrepr: `"` and `\` escaped, \n \r \t \a \b by
/// name, other bytes outside printable ASCII as \xHH.
pub fn repr(s: &mut String, bytes: &[u8]) {
    s.push('"');
    for &b in bytes {
        match b {
            b'\\' | b'"' => {
                s.push('\\');
                s.push(b as char);
            }
            b'\n' => s.push_str("\\n"),
            b'\r' => s.push_str("\\r"),
            b'\t' => s.push_str("\\t"),
            0x07 => s.push_str("\\a"),
            0x08 => s.push_str("\\b"),
            0x20..=0x7e => s.push(b as char),
            _ => s.push_str(&format!("\\x{b:02x}")),
        }
    }
    s.push('"');
}

/// The arguments as MONITOR (and the slow log) show them: AUTH's password (and username),
/// the username and password after HELLO's AUTH, the user names and rules of ACL SETUSER,
/// DELUSER and GETUSER, the values of CONFIG SET requirepass, masterauth and masteruser and MIGRATE's AUTH / AUTH2
/// passwords (and user), replaced by `(redacted)`
/// as Redis's redactClientCommandArgument does while the command parses them (a HELLO whose
/// protocol version is refused redacts nothing).
pub fn redact<'a>(args: &[&'a [u8]]) -> Vec<Cow<'a, [u8]>> {
    let mut out: Vec<Cow<[u8]>> = args.iter().map(|a| Cow::Borrowed(*a)).collect();
    let name = args.first().copied().unwrap_or_default();
    if name.eq_ignore_ascii_case(b"auth") {
        for a in out.iter_mut().skip(1) {
            *a = Cow::Borrowed(REDACTED);
        }
    } else if name.eq_ignore_ascii_case(b"hello") && args.len() >= 2 {
        if !matches!(crate::numbers::parse_i64(args[1]), Some(2 | 3)) {
            return out;
        }
        let mut j = 2;
        while j < args.len() {
            let more = args.len() - 1 - j;
            if args[j].eq_ignore_ascii_case(b"auth") && more >= 2 {
                out[j + 1] = Cow::Borrowed(REDACTED);
                out[j + 2] = Cow::Borrowed(REDACTED);
                j += 3;
            } else if args[j].eq_ignore_ascii_case(b"setname") && more >= 1 {
                j += 2;
            } else {
                break;
            }
        }
    } else if name.eq_ignore_ascii_case(b"migrate") {
        for i in super::migrate::password_positions(args) {
            out[i] = Cow::Borrowed(REDACTED);
        }
    } else if name.eq_ignore_ascii_case(b"acl") && args.len() >= 2 {
        let sub = args[1];
        if [&b"setuser"[..], b"deluser", b"getuser"]
            .iter()
            .any(|s| sub.eq_ignore_ascii_case(s))
        {
            for a in out.iter_mut().skip(2) {
                *a = Cow::Borrowed(REDACTED);
            }
        }
    } else if name.eq_ignore_ascii_case(b"config")
        && args.len() >= 2
        && args[1].eq_ignore_ascii_case(b"set")
    {
        // Redis's SENSITIVE_CONFIG parameters.
        const SENSITIVE: [&[u8]; 3] = [b"requirepass", b"masterauth", b"masteruser"];
        for i in (3..args.len()).step_by(2) {
            if SENSITIVE
                .iter()
                .any(|p| args[i - 1].eq_ignore_ascii_case(p))
            {
                out[i] = Cow::Borrowed(REDACTED);
            }
        }
    }
    out
}

/// Whether a monitoring client may run `cmd`: not the commands that read, write or may
/// replicate (Redis refuses those to its replicas, which monitors are).
pub fn refusal(client: &Client, cmd: &Command) -> Option<&'static str> {
    const MAY_REPLICATE: [&str; 6] = [
        "eval",
        "evalsha",
        "publish",
        "spublish",
        "script|flush",
        "script|load",
    ];
    let touches = cmd.flags.contains(Flags::WRITE)
        || cmd.flags.contains(Flags::READONLY)
        || MAY_REPLICATE.contains(&cmd.name);
    (client.monitor && touches).then_some("ERR Replica can't interact with the keyspace")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_quoted_as_sdscatrepr() {
        let mut s = String::new();
        repr(&mut s, b"a b\"\\\n\r\t\x07\x08\x00\x7f\xff \xc3\xa9");
        assert_eq!(s, r#""a b\"\\\n\r\t\a\b\x00\x7f\xff \xc3\xa9""#);
    }

    #[test]
    fn lines_name_the_database_and_origin() {
        let args = redact(&[b"SET", b"k", b"v"]);
        let addr = ClientAddr::Tcp("127.0.0.1:5000".parse().unwrap());
        assert_eq!(
            line(1_700_000_000_000_042, 3, Origin::Peer(&addr), &args),
            r#"1700000000.000042 [3 127.0.0.1:5000] "SET" "k" "v""#
        );
        assert_eq!(
            line(5_000_001, 0, Origin::Lua, &args[..1]),
            r#"5.000001 [0 lua] "SET""#
        );
        let v6 = ClientAddr::Tcp("[::1]:7".parse().unwrap());
        assert!(line(0, 0, Origin::Peer(&v6), &args).contains("[0 [::1]:7]"));
        let unix = ClientAddr::Unix("/run/g.sock".into());
        assert!(line(0, 2, Origin::Peer(&unix), &args).contains("[2 unix:/run/g.sock]"));
    }

    #[test]
    fn passwords_are_redacted() {
        let shown =
            |args: &[&[u8]]| -> Vec<Vec<u8>> { redact(args).iter().map(|a| a.to_vec()).collect() };
        assert_eq!(
            shown(&[b"AUTH", b"pw"]),
            vec![b"AUTH".to_vec(), REDACTED.to_vec()]
        );
        assert_eq!(
            shown(&[b"hello", b"3", b"SETNAME", b"n", b"auth", b"u", b"p"]),
            vec![
                b"hello".to_vec(),
                b"3".to_vec(),
                b"SETNAME".to_vec(),
                b"n".to_vec(),
                b"auth".to_vec(),
                REDACTED.to_vec(),
                REDACTED.to_vec()
            ]
        );
        assert_eq!(
            shown(&[b"hello", b"4", b"auth", b"u", b"p"])[3],
            b"u".to_vec()
        );
        assert_eq!(shown(&[b"hello", b"3", b"auth", b"u"])[3], b"u".to_vec());
    }
}
