//! XINFO STREAM [FULL [COUNT n]], XINFO GROUPS, XINFO CONSUMERS and XINFO HELP, in the
//! shapes of Redis 7.2's xinfoCommand: maps (arrays of pairs in RESP2), the key looked up
//! for reading before anything else ("no such key", WRONGTYPE), then the subcommand's own
//! options.

use super::{no_group, write_entries, write_entry};
use crate::commands::{help_reply, subcommand_syntax_error, Ctx};
use crate::errors;
use crate::keyspace::stream::{Consumer, EntryRef, Group, NEVER};
use crate::keyspace::{Stream, StreamId, Value};
use crate::numbers::parse_i64;
use crate::resp::reply::ReplyWriter;

/// FULL's default COUNT (also for a negative one), so a large stream does not stall the
/// server.
const FULL_DEFAULT_COUNT: usize = 10;

/// Why a subcommand refused, replied once the key's borrow ends.
enum Refusal {
    /// Options that do not parse: the subcommand syntax error.
    Syntax,
    /// A COUNT that is not an integer.
    NotInteger,
    /// No group of the name given.
    NoGroup,
}

/// Looks `args[2]` up for reading ("no such key" when absent, WRONGTYPE) and replies with
/// `reply` on the stream, or with the error it refuses with.
fn with_stream(
    ctx: &mut Ctx,
    args: &[&[u8]],
    reply: impl FnOnce(&Stream, &mut ReplyWriter) -> Result<(), Refusal>,
) {
    let (found, out) = ctx.read_typed_and_out(args[2], Value::as_stream);
    let refused = match found {
        Err(_) => return,
        Ok(None) => return ctx.error("ERR no such key"),
        Ok(Some(s)) => reply(s, out),
    };
    match refused {
        Ok(()) => {}
        Err(Refusal::Syntax) => subcommand_syntax_error(ctx, args),
        Err(Refusal::NotInteger) => ctx.error(errors::NOT_AN_INTEGER),
        Err(Refusal::NoGroup) => ctx.error(&no_group(args[2], args[3])),
    }
}

/// XINFO STREAM's options: None for the summary, else FULL's COUNT.
fn full_count(opts: &[&[u8]]) -> Result<Option<usize>, Refusal> {
    match opts {
        [] => Ok(None),
        [full, rest @ ..] if full.eq_ignore_ascii_case(b"FULL") => match rest {
            [] => Ok(Some(FULL_DEFAULT_COUNT)),
            [word, n] if word.eq_ignore_ascii_case(b"COUNT") => {
                let n = parse_i64(n).ok_or(Refusal::NotInteger)?;
                Ok(Some(usize::try_from(n).unwrap_or(FULL_DEFAULT_COUNT)))
            }
            _ => Err(Refusal::Syntax),
        },
        _ => Err(Refusal::Syntax),
    }
}

/// XINFO STREAM key [FULL [COUNT count]]
pub fn stream_info(ctx: &mut Ctx, args: &[&[u8]]) {
    with_stream(ctx, args, |s, out| {
        let full = full_count(&args[3..])?;
        write_stream(out, s, full);
        Ok(())
    });
}

/// The reply of XINFO STREAM, the summary or (`full`: its COUNT) the FULL one.
fn write_stream(out: &mut ReplyWriter, s: &Stream, full: Option<usize>) {
    out.map(if full.is_some() { 9 } else { 10 });
    let meta = s.meta();
    let int = |out: &mut ReplyWriter, name: &str, v: i64| {
        out.bulk(name.as_bytes());
        out.int(v);
    };
    let id = |out: &mut ReplyWriter, name: &str, v: StreamId| {
        out.bulk(name.as_bytes());
        out.bulk(v.to_string().as_bytes());
    };
    int(out, "length", meta.len as i64);
    int(out, "radix-tree-keys", s.node_count() as i64);
    int(out, "radix-tree-nodes", s.radix_tree_nodes() as i64);
    id(out, "last-generated-id", meta.last_id);
    id(out, "max-deleted-entry-id", meta.max_deleted_id);
    int(out, "entries-added", meta.entries_added as i64);
    id(out, "recorded-first-entry-id", meta.first_id);
    match full {
        None => {
            int(out, "groups", s.groups().len() as i64);
            for (name, rev) in [("first-entry", false), ("last-entry", true)] {
                out.bulk(name.as_bytes());
                match s.range(StreamId::MIN, StreamId::MAX, rev).next() {
                    Some(e) => write_entry(out, &e),
                    None => out.null(),
                }
            }
        }
        Some(count) => {
            let limit = limit(count);
            out.bulk(b"entries");
            let entries: Vec<EntryRef> = s
                .range(StreamId::MIN, StreamId::MAX, false)
                .take(limit)
                .collect();
            write_entries(out, &entries);
            out.bulk(b"groups");
            out.array(s.groups().len());
            for (name, g) in s.groups() {
                write_full_group(out, s, name, g, limit);
            }
        }
    }
}

/// COUNT 0 means no limit.
fn limit(count: usize) -> usize {
    if count == 0 {
        usize::MAX
    } else {
        count
    }
}

/// A group's last delivered id, read counter and lag, fields GROUPS and FULL share.
fn write_counters(out: &mut ReplyWriter, s: &Stream, g: &Group) {
    out.bulk(b"last-delivered-id");
    out.bulk(g.last_id.to_string().as_bytes());
    out.bulk(b"entries-read");
    match g.entries_read {
        Some(n) => out.int(n as i64),
        None => out.null(),
    }
    out.bulk(b"lag");
    match s.lag(g) {
        Some(n) => out.int(n),
        None => out.null(),
    }
}

/// One group of XINFO STREAM FULL: its counters, its PEL and its consumers with theirs,
/// each PEL cut at `limit` entries.
fn write_full_group(out: &mut ReplyWriter, s: &Stream, name: &[u8], g: &Group, limit: usize) {
    out.map(7);
    out.bulk(b"name");
    out.bulk(name);
    write_counters(out, s, g);
    out.bulk(b"pel-count");
    out.int(g.pending_len() as i64);
    out.bulk(b"pending");
    let shown = g.pending_len().min(limit);
    out.array(shown);
    for (id, nack) in g.pending_from(StreamId::MIN).take(shown) {
        out.array(4);
        out.bulk(id.to_string().as_bytes());
        out.bulk(nack.consumer);
        out.int(nack.delivery_time as i64);
        out.int(nack.delivery_count as i64);
    }
    out.bulk(b"consumers");
    out.array(g.consumers_len());
    for c in g.consumers() {
        write_full_consumer(out, g, c, limit);
    }
}

/// One consumer of XINFO STREAM FULL, with its PEL (ids, delivery times and counts).
fn write_full_consumer(out: &mut ReplyWriter, g: &Group, c: &Consumer, limit: usize) {
    out.map(5);
    out.bulk(b"name");
    out.bulk(c.name());
    out.bulk(b"seen-time");
    out.int(c.seen_time as i64);
    out.bulk(b"active-time");
    out.int(c.active_time as i64);
    out.bulk(b"pel-count");
    out.int(c.pending_len() as i64);
    out.bulk(b"pending");
    let shown = c.pending_len().min(limit);
    out.array(shown);
    for (id, nack) in g.consumer_pending(c, StreamId::MIN).take(shown) {
        out.array(3);
        out.bulk(id.to_string().as_bytes());
        out.int(nack.delivery_time as i64);
        out.int(nack.delivery_count as i64);
    }
}

/// XINFO GROUPS key
pub fn groups(ctx: &mut Ctx, args: &[&[u8]]) {
    with_stream(ctx, args, |s, out| {
        write_groups(out, s);
        Ok(())
    });
}

/// The reply of XINFO GROUPS.
fn write_groups(out: &mut ReplyWriter, s: &Stream) {
    out.array(s.groups().len());
    for (name, g) in s.groups() {
        out.map(6);
        out.bulk(b"name");
        out.bulk(name);
        out.bulk(b"consumers");
        out.int(g.consumers_len() as i64);
        out.bulk(b"pending");
        out.int(g.pending_len() as i64);
        write_counters(out, s, g);
    }
}

/// XINFO CONSUMERS key group: each consumer's pending count, the milliseconds since it was
/// last seen (idle) and since it last read or claimed (inactive; -1 when it never did).
pub fn consumers(ctx: &mut Ctx, args: &[&[u8]]) {
    let now = ctx.now_ms as i64;
    with_stream(ctx, args, |s, out| {
        let g = s.group(args[3]).ok_or(Refusal::NoGroup)?;
        write_consumers(out, g, now);
        Ok(())
    });
}

/// The reply of XINFO CONSUMERS at Unix time `now` (milliseconds).
fn write_consumers(out: &mut ReplyWriter, g: &Group, now: i64) {
    out.array(g.consumers_len());
    for c in g.consumers() {
        let inactive = match c.active_time {
            NEVER => -1,
            t => now - t as i64,
        };
        out.map(4);
        out.bulk(b"name");
        out.bulk(c.name());
        out.bulk(b"pending");
        out.int(c.pending_len() as i64);
        out.bulk(b"idle");
        out.int((now - c.seen_time as i64).max(0));
        out.bulk(b"inactive");
        out.int(inactive);
    }
}

/// XINFO HELP
pub fn help(ctx: &mut Ctx, _args: &[&[u8]]) {
    help_reply(
        ctx,
        "XINFO",
        &[
            "CONSUMERS <key> <groupname>",
            "    Show consumers of <groupname>.",
            "GROUPS <key>",
            "    Show the stream consumer groups.",
            "STREAM <key> [FULL [COUNT <count>]",
            "    Show information about the stream.",
        ],
    );
}
