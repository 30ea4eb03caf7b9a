//! Commands whose replies nobody reads: a replica applying its master's stream, and the
//! AOF's replay. An error among their replies means the data may now differ from the
//! source's, so, as Redis's afterErrorReply, each one is logged as a `== CRITICAL ==`
//! line (a replica adds the latest bytes of its stream), counted in INFO's
//! unexpected_error_replies, and panics the server when propagation-error-behavior asks.

use super::{Ctx, WhileBlocked};
use crate::clients::{Client, ReplRole};
use crate::replication::config::PropagationError;
use crate::server::Server;

/// Bytes of the replication stream logged after a replica's error (Redis: 256).
const LATEST_BACKLOG: usize = 256;

/// Who sent the command whose reply was an error, and so who gets it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// This replica's master: the error goes to the master.
    Master,
    /// The AOF being replayed.
    Aof,
    /// A replica of this server: the error goes to the replica.
    Replica,
}

/// Runs `args` for `client` (the master's client or the AOF's), its replies into `out`,
/// then reports every error among them. `while_blocked` serves the other clients if the
/// command runs long (a busy script).
pub fn execute(
    server: &mut Server,
    client: &mut Client,
    out: &mut Vec<u8>,
    args: &[&[u8]],
    while_blocked: Option<&mut dyn WhileBlocked>,
) {
    let source = if client.repl_role == ReplRole::Master {
        Source::Master
    } else {
        Source::Aof
    };
    let start = out.len();
    let events = while_blocked.map(|w| w as &mut dyn WhileBlocked);
    super::execute_with(server, client, out, args, events);
    let errors = errors_in(&out[start..]);
    if errors.is_empty() {
        return;
    }
    let name = super::lookup(args[0]).map(|cmd| {
        args.get(1)
            .and_then(|sub| cmd.subcommand(sub))
            .unwrap_or(cmd)
            .name
    });
    for error in errors {
        report(server, source, &error_text(error), name);
    }
}

/// Logs one error reply the way Redis does, counts it, and panics when configured to.
pub fn report(server: &mut Server, source: Source, text: &str, name: Option<&str>) {
    let (from, to) = match source {
        Source::Master => ("replica", "master"),
        Source::Aof => ("server", "AOF-loading-client"),
        Source::Replica => ("master", "replica"),
    };
    let name = name.unwrap_or("<unknown>");
    crate::warning!(
        "== CRITICAL == This {from} is sending an error to its {to}: '{text}' after processing the command '{name}'"
    );
    let backlog = server.replication.backlog.as_ref();
    if let Some(backlog) = backlog.filter(|b| source == Source::Master && b.histlen() > 0) {
        let mut dump = String::new();
        super::monitor::repr(&mut dump, &backlog.latest(LATEST_BACKLOG));
        crate::notice!("Latest backlog is: '{dump}'");
    }
    server.stats.unexpected_error_replies += 1;
    let behavior = server.config.repl.propagation_error;
    let panics = match source {
        Source::Master => server.config.repl.read_only && behavior != PropagationError::Ignore,
        Source::Aof => behavior == PropagationError::Panic,
        Source::Replica => false,
    };
    if panics {
        crate::service::crash::panic(&format!(
            "This {from} panicked sending an error to its {to} after processing the command '{name}'"
        ));
    }
}

/// An error line as Redis passes it to afterErrorReply: a plain `ERR` error without its
/// code, any other with its `-CODE`.
pub fn error_text(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(line);
    match text.strip_prefix("ERR ") {
        Some(rest) => rest.to_string(),
        None => format!("-{text}"),
    }
}

/// The error messages in `reply` (RESP2 or RESP3, one or more replies), at any depth (an
/// EXEC's array holds one reply per command), without their `-` / `!` framing.
fn errors_in(reply: &[u8]) -> Vec<&[u8]> {
    let mut errors = Vec::new();
    let mut pos = 0;
    while let Some(end) = line_end(reply, pos) {
        let kind = reply[pos];
        let line = &reply[pos + 1..end];
        pos = end + 2;
        match kind {
            b'-' => errors.push(line),
            b'$' | b'=' | b'!' => {
                // A null ($-1) has no body.
                let Some(len) = std::str::from_utf8(line)
                    .ok()
                    .and_then(|l| l.parse::<usize>().ok())
                else {
                    continue;
                };
                if kind == b'!' {
                    errors.push(&reply[pos.min(reply.len())..(pos + len).min(reply.len())]);
                }
                pos += len + 2;
            }
            // Aggregates: their elements follow as replies of their own.
            _ => {}
        }
    }
    errors
}

/// Where the line starting at `pos` ends (its `\r`); None past the end.
fn line_end(reply: &[u8], pos: usize) -> Option<usize> {
    reply
        .get(pos..)?
        .windows(2)
        .position(|w| w == b"\r\n")
        .map(|i| pos + i)
}

/// DEBUG REPLICATE command ...: `argv` goes down the replication stream as it is, with no
/// SELECT and nothing run here (Redis's test hook for data divergence); not on a replica,
/// whose stream is its master's.
pub fn debug_replicate(ctx: &mut Ctx, argv: &[&[u8]]) {
    ctx.server.drain_propagation();
    let mut command = Vec::new();
    crate::propagate::encode(&mut command, argv);
    crate::replication::feed_own(ctx.server, &command);
    ctx.out.ok();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_are_found_at_any_depth_and_in_blobs() {
        let reply = b"+OK\r\n-ERR top\r\n*3\r\n:1\r\n$5\r\n-ERR \r\n-WRONGTYPE inner\r\n!9\r\nSYNTAX ab\r\n";
        let found: Vec<&[u8]> = errors_in(reply);
        assert_eq!(found, [&b"ERR top"[..], b"WRONGTYPE inner", b"SYNTAX ab"]);
        assert!(errors_in(b"*2\r\n$-1\r\n:5\r\n").is_empty());
    }

    #[test]
    fn error_text_drops_only_the_generic_code() {
        assert_eq!(
            error_text(b"ERR unknown command 'x'"),
            "unknown command 'x'"
        );
        assert_eq!(error_text(b"WRONGTYPE Operation"), "-WRONGTYPE Operation");
    }
}
