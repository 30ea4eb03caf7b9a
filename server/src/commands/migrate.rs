//! MIGRATE host port key|"" destination-db timeout [COPY] [REPLACE] [AUTH password]
//! [AUTH2 username password] [KEYS key ...] (cluster.c's migrateCommand).
//!
//! The keys go to the target as RESTORE commands (RESTORE-ASKING in cluster mode, which
//! Goblin does not have yet), after AUTH and a SELECT when the cached connection is not on
//! that database, all in one write; the replies are read in order, and each key the target
//! acknowledged is deleted here unless COPY (and propagated as one DEL of those keys).
//! The server waits for the target meanwhile, as Redis does, bounded by the timeout in
//! milliseconds (1000 when not positive) on each read and write.
//!
//! The payloads are the portable ones ([`Payload::Portable`], RDB version 10): Redis 7.0
//! targets refuse Redis 7.2's version-11 payloads, and 7.2 loads both.

use super::Ctx;
use crate::migrate::{ConnectError, Target};
use crate::propagate::encode as encode_command;
use crate::rdb::dump::{self, Payload};
use std::time::Duration;

/// The arguments of a MIGRATE that its AUTH and AUTH2 options name as passwords (and
/// AUTH2's user), which MONITOR and the slowlog show as "(redacted)" (Redis redacts them
/// while it parses them).
pub fn password_positions(args: &[&[u8]]) -> Vec<usize> {
    let mut found = Vec::new();
    let mut j = 6;
    while j < args.len() {
        let more = args.len() - 1 - j;
        let arg = args[j];
        if arg.eq_ignore_ascii_case(b"AUTH") && more >= 1 {
            found.push(j + 1);
            j += 1;
        } else if arg.eq_ignore_ascii_case(b"AUTH2") && more >= 2 {
            found.extend([j + 1, j + 2]);
            j += 2;
        } else if arg.eq_ignore_ascii_case(b"KEYS")
            || !(arg.eq_ignore_ascii_case(b"COPY") || arg.eq_ignore_ascii_case(b"REPLACE"))
        {
            break;
        }
        j += 1;
    }
    found
}

/// The command that stores a key on the target: RESTORE, or RESTORE-ASKING in cluster
/// mode (the target imports the slot and must take it before the slot is its own).
fn restore_command(server: &crate::server::Server) -> &'static [u8] {
    if server.cluster.is_some() {
        b"RESTORE-ASKING"
    } else {
        b"RESTORE"
    }
}

/// What MIGRATE was asked.
struct Request<'a> {
    copy: bool,
    replace: bool,
    auth: Option<(Option<&'a [u8]>, &'a [u8])>,
    /// Index of the first key and how many.
    first_key: usize,
    num_keys: usize,
}

fn parse<'a>(ctx: &mut Ctx, args: &[&'a [u8]]) -> Option<Request<'a>> {
    let mut req = Request {
        copy: false,
        replace: false,
        auth: None,
        first_key: 3,
        num_keys: 1,
    };
    let mut j = 6;
    while j < args.len() {
        let more = args.len() - 1 - j;
        let arg = args[j];
        if arg.eq_ignore_ascii_case(b"COPY") {
            req.copy = true;
        } else if arg.eq_ignore_ascii_case(b"REPLACE") {
            req.replace = true;
        } else if arg.eq_ignore_ascii_case(b"AUTH") {
            if more == 0 {
                ctx.syntax_error();
                return None;
            }
            j += 1;
            req.auth = Some((None, args[j]));
        } else if arg.eq_ignore_ascii_case(b"AUTH2") {
            if more < 2 {
                ctx.syntax_error();
                return None;
            }
            req.auth = Some((Some(args[j + 1]), args[j + 2]));
            j += 2;
        } else if arg.eq_ignore_ascii_case(b"KEYS") {
            if !args[3].is_empty() {
                ctx.error("ERR When using MIGRATE KEYS option, the key argument must be set to the empty string");
                return None;
            }
            req.first_key = j + 1;
            req.num_keys = args.len() - j - 1;
            break;
        } else {
            ctx.syntax_error();
            return None;
        }
        j += 1;
    }
    Some(req)
}

/// MIGRATE: see the module documentation.
pub fn migrate(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(req) = parse(ctx, args) else {
        return;
    };
    let Some(timeout) = ctx.int_arg(args[5]) else {
        return;
    };
    let Some(dbid) = ctx.int_arg(args[4]) else {
        return;
    };
    let timeout = Duration::from_millis(if timeout <= 0 { 1000 } else { timeout as u64 });
    let (db, now) = (ctx.db(), ctx.now_ms);
    let touch = !ctx.client.no_touch;
    let mut keys: Vec<&[u8]> = Vec::new();
    for &key in &args[req.first_key..req.first_key + req.num_keys] {
        if ctx
            .server
            .keyspace
            .lookup_read(db, key, now, touch)
            .is_some()
        {
            keys.push(key);
        }
    }
    if keys.is_empty() {
        return ctx.out.simple("NOKEY");
    }
    let (host, port) = (args[1], args[2]);
    let compress = ctx.server.config.rdbcompression;
    let restore = restore_command(ctx.server);
    let mut may_retry = true;
    loop {
        let server = &mut *ctx.server;
        let target = match server.migrate.get(host, port, timeout) {
            Ok(target) => target,
            Err(ConnectError::Resolve) => {
                return ctx.error("IOERR error or timeout connecting to the client")
            }
            // Where Redis's write on the unconnected socket fails, and is retried once.
            Err(ConnectError::Connect) if may_retry => {
                may_retry = false;
                continue;
            }
            Err(ConnectError::Connect) => {
                return ctx.error("IOERR error or timeout writing to target instance")
            }
        };
        // AUTH, SELECT unless the connection is on that database, then a RESTORE per key
        // still alive (a key that expired since the lookup is left out).
        let mut cmd = Vec::new();
        match req.auth {
            Some((Some(user), password)) => encode_command(&mut cmd, &[b"AUTH", user, password]),
            Some((None, password)) => encode_command(&mut cmd, &[b"AUTH", password]),
            None => {}
        }
        let select = target.last_db != Some(dbid);
        if select {
            encode_command(&mut cmd, &[b"SELECT", dbid.to_string().as_bytes()]);
        }
        let mut sent: Vec<&[u8]> = Vec::new();
        for &key in &keys {
            let Some(entry) = server.keyspace.db(db).get(key) else {
                continue;
            };
            let ttl = match entry.expire_at() {
                Some(at) if at < now => continue,
                Some(at) => (at - now).max(1),
                None => 0,
            };
            let payload = dump::payload(&entry.value, compress, Payload::Portable);
            let ttl = ttl.to_string();
            let mut argv: Vec<&[u8]> = vec![restore, key, ttl.as_bytes(), &payload];
            if req.replace {
                argv.push(b"REPLACE");
            }
            encode_command(&mut cmd, &argv);
            sent.push(key);
        }
        let auth = req.auth.is_some();
        let result = exchange(target, &cmd, auth, select, sent.len(), timeout);
        // A connection that failed before anything was acknowledged (a cached one the
        // target closed, typically) is made again once, unless the deadline passed.
        let retry = result.target_error.is_none()
            && result
                .io
                .as_ref()
                .is_some_and(|io| io.restores_read == 0 && !io.timed_out);
        if retry && may_retry {
            server.migrate.close(host, port);
            may_retry = false;
            continue;
        }
        if result.io.is_some() {
            server.migrate.close(host, port);
        }
        // The keys the target stored are deleted here unless COPY, propagated as one DEL.
        if !req.copy && !result.acked.is_empty() {
            let mut del: Vec<&[u8]> = vec![b"DEL"];
            for &i in &result.acked {
                server.keyspace.delete(db, sent[i]);
                let notifier = &mut server.keyspace.notifier;
                notifier.fire(crate::pubsub::notify::GENERIC, "del", db, sent[i]);
                server.keyspace.add_dirty(1);
                del.push(sent[i]);
            }
            ctx.propagate_instead(&del);
        }
        if let Some(text) = result.target_error {
            let message = format!(
                "ERR Target instance replied with error: {}",
                String::from_utf8_lossy(&text)
            );
            return ctx.error(&message);
        }
        if let Some(io) = result.io {
            let doing = if io.writing { "writing" } else { "reading" };
            return ctx.error(&format!(
                "IOERR error or timeout {doing} to target instance"
            ));
        }
        if let Ok(target) = ctx.server.migrate.get(host, port, timeout) {
            target.last_db = Some(dbid);
        }
        return ctx.out.ok();
    }
}

/// What came back from one exchange with the target.
#[derive(Default)]
struct Exchange {
    /// Indexes of the RESTOREs acknowledged with success (when AUTH and SELECT succeeded).
    acked: Vec<usize>,
    /// The first error line of the target, without its '-'.
    target_error: Option<Vec<u8>>,
    /// The connection failed.
    io: Option<IoError>,
}

/// A failed connection: while writing or reading, by the deadline or not, after how many
/// RESTORE replies.
struct IoError {
    writing: bool,
    timed_out: bool,
    restores_read: usize,
}

/// Sends `cmd` and reads the replies: AUTH's when `auth`, SELECT's when `select`, then one
/// per RESTORE (`restores`); a RESTORE counts as acknowledged only when none of the three
/// replies is an error, as in Redis.
fn exchange(
    target: &mut Target,
    cmd: &[u8],
    auth: bool,
    select: bool,
    restores: usize,
    timeout: Duration,
) -> Exchange {
    let mut out = Exchange::default();
    let failed = |writing, timed_out, restores_read| {
        Some(IoError {
            writing,
            timed_out,
            restores_read,
        })
    };
    if let Err(e) = target.write_all(cmd, timeout) {
        out.io = failed(true, e.timed_out, 0);
        return out;
    }
    let mut head = Vec::new();
    for _ in 0..usize::from(auth) + usize::from(select) {
        match target.read_line(timeout) {
            Ok(line) => head.push(line),
            Err(e) => {
                out.io = failed(false, e.timed_out, 0);
                return out;
            }
        }
    }
    let head_error = head.into_iter().find(|l| l.first() == Some(&b'-'));
    for i in 0..restores {
        let line = match target.read_line(timeout) {
            Ok(line) => line,
            Err(e) => {
                out.io = failed(false, e.timed_out, i);
                return out;
            }
        };
        let error = head_error
            .as_ref()
            .or(Some(&line).filter(|l| l.first() == Some(&b'-')));
        match error {
            Some(e) => {
                if out.target_error.is_none() {
                    // After an error the selected database is no longer known.
                    target.last_db = None;
                    out.target_error = Some(e[1..].to_vec());
                }
            }
            None => out.acked.push(i),
        }
    }
    out
}
