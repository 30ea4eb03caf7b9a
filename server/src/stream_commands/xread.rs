//! XREAD [COUNT count] [BLOCK milliseconds] STREAMS key [key ...] id [id ...]
//!
//! The entries after each id, per stream that has any; with BLOCK and none, the client
//! waits on the keys (the blocking machinery of BLPOP: the command runs again when an
//! XADD makes a key ready), its `$` ids rewritten to the last ids they stood for, as Redis
//! rewrites them, so the wait ends with the entries added meanwhile.

use super::id::{self, IdRules};
use super::{write_entries, write_served_header, write_served_key};
use crate::commands::Ctx;
use crate::keyspace::stream::EntryRef;
use crate::keyspace::{StreamId, Value};
use crate::scripting::run::SCRIPT_CLIENT_ID;

/// The options of XREAD and XREADGROUP.
pub(super) struct Options<'a> {
    /// The deadline of BLOCK (None inside: forever); None without BLOCK.
    pub block: Option<Option<u64>>,
    /// Most entries per stream (0: all).
    pub count: usize,
    /// Index of the first key.
    pub streams: usize,
    /// XREADGROUP's GROUP: the group and the consumer.
    pub group: Option<(&'a [u8], &'a [u8])>,
    /// XREADGROUP's NOACK.
    pub noack: bool,
}

/// Parses the options of XREAD, or of XREADGROUP (`readgroup`), in Redis's order and
/// with its errors; None after the error reply.
pub(super) fn parse_options<'a>(
    ctx: &mut Ctx,
    args: &[&'a [u8]],
    readgroup: bool,
) -> Option<Options<'a>> {
    let mut o = Options {
        block: None,
        count: 0,
        streams: 0,
        group: None,
        noack: false,
    };
    let mut i = 1;
    while i < args.len() {
        let more = args.len() - 1 - i;
        let opt = args[i];
        if opt.eq_ignore_ascii_case(b"BLOCK") && more > 0 {
            if ctx.client.id == SCRIPT_CLIENT_ID {
                let name = String::from_utf8_lossy(args[0]);
                ctx.error(&format!(
                    "ERR {name} command is not allowed with BLOCK option from scripts"
                ));
                return None;
            }
            i += 1;
            o.block = Some(crate::zset_commands::parse::timeout_ms(ctx, args[i])?);
        } else if opt.eq_ignore_ascii_case(b"COUNT") && more > 0 {
            i += 1;
            o.count = ctx.int_arg(args[i])?.max(0) as usize;
        } else if opt.eq_ignore_ascii_case(b"STREAMS") && more > 0 {
            o.streams = i + 1;
            if !(args.len() - o.streams).is_multiple_of(2) {
                let (name, symbol) = if readgroup {
                    ("xreadgroup", '>')
                } else {
                    ("xread", '$')
                };
                ctx.error(&format!(
                    "ERR Unbalanced '{name}' list of streams: for each stream key an ID or '{symbol}' must be specified."
                ));
                return None;
            }
            break;
        } else if opt.eq_ignore_ascii_case(b"GROUP") && more >= 2 {
            if !readgroup {
                ctx.error(
                    "ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.",
                );
                return None;
            }
            o.group = Some((args[i + 1], args[i + 2]));
            i += 2;
        } else if opt.eq_ignore_ascii_case(b"NOACK") {
            if !readgroup {
                ctx.error(
                    "ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.",
                );
                return None;
            }
            o.noack = true;
        } else {
            ctx.syntax_error();
            return None;
        }
        i += 1;
    }
    if o.streams == 0 {
        ctx.syntax_error();
        return None;
    }
    if readgroup && o.group.is_none() {
        ctx.error("ERR Missing GROUP option for XREADGROUP");
        return None;
    }
    Some(o)
}

/// XREAD [COUNT count] [BLOCK milliseconds] STREAMS key [key ...] id [id ...]
pub fn xread(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(o) = parse_options(ctx, args, false) else {
        return;
    };
    let n = (args.len() - o.streams) / 2;
    let (keys, id_args) = args[o.streams..].split_at(n);
    // Each key is looked up and its id parsed in turn, as Redis does; a key is served when
    // its last live entry is past the id.
    let mut after = Vec::with_capacity(n);
    let mut serve = Vec::with_capacity(n);
    for (key, arg) in keys.iter().zip(id_args) {
        let Ok(found) = ctx.read_typed(key, Value::as_stream) else {
            return;
        };
        let last_live = found
            .filter(|s| !s.is_empty())
            .map(|s| s.edge_id(false, true));
        let id = match *arg {
            b"$" => found.map_or(StreamId::MIN, |s| s.last_id()),
            b">" => {
                return ctx.error(
                    "ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option.",
                )
            }
            _ => match id::parse(arg, IdRules::STRICT) {
                Some(p) => p.id,
                None => return ctx.error(id::INVALID_ID),
            },
        };
        serve.push(last_live.is_some_and(|last| last > id));
        after.push(id);
    }
    let served = serve.iter().filter(|&&s| s).count();
    if served > 0 {
        write_served_header(&mut ctx.out, served);
        for ((key, id), _) in keys.iter().zip(&after).zip(&serve).filter(|(_, &s)| s) {
            let (found, out) = ctx.read_typed_and_out(key, Value::as_stream);
            let Ok(Some(stream)) = found else {
                continue;
            };
            let start = id.next().unwrap_or(StreamId::MIN);
            let entries: Vec<EntryRef> = stream
                .range(start, StreamId::MAX, false)
                .take(if o.count == 0 { usize::MAX } else { o.count })
                .collect();
            write_served_key(out, key);
            write_entries(out, &entries);
        }
        return;
    }
    match o.block {
        Some(deadline) if !ctx.in_exec => {
            let mut command: Vec<Vec<u8>> = args.iter().map(|a| a.to_vec()).collect();
            for (j, id) in after.iter().enumerate() {
                let at = o.streams + n + j;
                if command[at] == b"$" {
                    command[at] = id.to_string().into_bytes();
                }
            }
            let keys = keys.iter().map(|k| k.to_vec()).collect();
            ctx.block = Some((keys, deadline));
            ctx.blocked_command = Some(command);
        }
        _ => ctx.out.null_array(),
    }
}
