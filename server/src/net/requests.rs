//! Running what a connection received: every complete request in the read buffer is parsed
//! and dispatched to `commands`, its reply appended to the write buffer.

use super::conn::Conn;
use super::limits::PAUSE_OUTPUT;
use crate::clients::Client;
use crate::commands::{self, WhileBlocked};
use crate::resp::parse::{Limits, Parsed};
use crate::server::Server;
use std::time::Instant;

/// Requests with at most this many arguments pass them in a stack array.
const STACK_ARGS: usize = 16;

/// Runs every complete request in the read buffer, until the client blocks, the connection
/// is to close, or [`PAUSE_OUTPUT`] reply bytes wait; the clients a request unblocks are
/// served before the next one runs. `while_blocked` services the other
/// connections if a command runs long (a busy script).
pub fn run_requests(
    server: &mut Server,
    conn: &mut Conn,
    client: &mut Client,
    mut while_blocked: Option<&mut dyn WhileBlocked>,
) {
    if conn.pending_input() > 0 {
        // Once per read, as Redis updates lastinteraction per read, not per command.
        client.last_interaction = Instant::now();
    }
    let batch_start = conn.rpos;
    loop {
        if client.blocked.is_some()
            || client.postponed.is_some()
            || conn.closing
            || conn.pending_output() >= PAUSE_OUTPUT
        {
            break;
        }
        let limits = Limits {
            max_bulk: server.config.proto_max_bulk_len,
            authenticated: client.authenticated || !server.acl.auth_required(),
        };
        match conn.parser.parse(&conn.rbuf, conn.rpos, limits) {
            Ok(Parsed::Incomplete) => break,
            Ok(Parsed::Request { end }) => {
                conn.rpos = end;
                let argv = match conn.parser.inline_args() {
                    Some(inline) => inline.iter().map(Vec::len).sum(),
                    None => conn.parser.args().iter().map(|r| r.len()).sum(),
                };
                client.io = conn.running_buffers(batch_start, argv);
                if super::evict::before_command(server, client) {
                    conn.closing = true;
                    break;
                }
                let Conn {
                    rbuf, parser, wbuf, ..
                } = conn;
                // Most requests have a few arguments: those borrow a stack array.
                let mut inline_store: [&[u8]; STACK_ARGS] = [&[]; STACK_ARGS];
                let heap_store: Vec<&[u8]>;
                let args: &[&[u8]] = match parser.inline_args() {
                    Some(inline) => {
                        heap_store = inline.iter().map(Vec::as_slice).collect();
                        &heap_store
                    }
                    None if parser.args().len() <= STACK_ARGS => {
                        let ranges = parser.args();
                        for (dst, r) in inline_store.iter_mut().zip(ranges) {
                            *dst = &rbuf[r.clone()];
                        }
                        &inline_store[..ranges.len()]
                    }
                    None => {
                        heap_store = parser.args().iter().map(|r| &rbuf[r.clone()]).collect();
                        &heap_store
                    }
                };
                let events = commands::lend(&mut while_blocked);
                commands::execute_with(server, client, wbuf, args, events);
                // Clients blocked on keys this command made ready are served before the
                // next pipelined command runs, as Redis does after each command (not while
                // a busy script has this connection serviced).
                if while_blocked.is_some() && server.keyspace.has_ready_keys() {
                    commands::serve_ready_keys(server);
                }
                if client.close_after_reply {
                    conn.closing = true;
                }
            }
            Err(e) => {
                crate::log::log(
                    crate::config::LogLevel::Verbose,
                    &format!(
                        "Protocol error ({}) from client: id={} addr={}",
                        e.0, client.id, client.addr
                    ),
                );
                conn.wbuf.extend_from_slice(b"-ERR ");
                conn.wbuf.extend_from_slice(e.0.as_bytes());
                conn.wbuf.extend_from_slice(b"\r\n");
                server.stats.count_error("ERR");
                conn.closing = true;
                break;
            }
        }
    }
    conn.compact_input();
}
