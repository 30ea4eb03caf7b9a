//! The options XADD and XTRIM share (Redis's streamParseAddOrTrimArgsOrReply): MAXLEN or
//! MINID with `=` or `~`, LIMIT, and for XADD NOMKSTREAM and the id; and the rewrite of an
//! approximate trim into the exact one it came to, for the AOF and replicas.

use super::id::{self, IdRules, ParsedId};
use crate::commands::Ctx;
use crate::keyspace::stream::Trim;
use crate::keyspace::Stream;

/// Parsed XADD / XTRIM options.
#[derive(Clone, Copy, Debug, Default)]
pub struct TrimArgs {
    /// The strategy, if any.
    pub trim: Option<Trim>,
    /// `~`: only whole nodes go.
    pub approx: bool,
    /// Most entries one trim removes (0: no limit).
    pub limit: u64,
    /// Index of the MAXLEN count or MINID id argument (the `=` / `~` before it, if any,
    /// is rewritten too).
    pub arg_index: usize,
    /// XADD's NOMKSTREAM.
    pub no_mkstream: bool,
    /// XADD's id: None for `*`.
    pub id: Option<ParsedId>,
    /// Index of XADD's id argument.
    pub id_index: usize,
}

/// Parses the options of XADD (`xadd`: up to and including the id) or XTRIM (all of
/// them), replying the error on failure. `obeyed` is a master's or the AOF's client, whose
/// LIMIT is ignored (its trims were rewritten exact).
pub fn parse(ctx: &mut Ctx, args: &[&[u8]], xadd: bool, obeyed: bool) -> Option<TrimArgs> {
    let mut a = TrimArgs::default();
    let mut limit_given = false;
    let mut i = 2;
    while i < args.len() {
        let more = args.len() - 1 - i;
        let opt = args[i];
        let strategy = [&b"MAXLEN"[..], b"MINID"]
            .iter()
            .position(|s| opt.eq_ignore_ascii_case(s));
        if xadd && opt == b"*" {
            break;
        } else if let (Some(which), true) = (strategy, more > 0) {
            if a.trim.is_some() {
                ctx.error(
                    "ERR syntax error, MAXLEN and MINID options at the same time are not compatible",
                );
                return None;
            }
            a.approx = false;
            if more >= 2 && (args[i + 1] == b"~" || args[i + 1] == b"=") {
                a.approx = args[i + 1] == b"~";
                i += 1;
            }
            let value = args[i + 1];
            a.trim = Some(if which == 0 {
                let n = ctx.int_arg(value)?;
                if n < 0 {
                    ctx.error("ERR The MAXLEN argument must be >= 0.");
                    return None;
                }
                Trim::MaxLen(n as u64)
            } else {
                Trim::MinId(strict_id(ctx, value)?.id)
            });
            i += 1;
            a.arg_index = i;
        } else if opt.eq_ignore_ascii_case(b"LIMIT") && more > 0 {
            let n = ctx.int_arg(args[i + 1])?;
            if n < 0 {
                ctx.error("ERR The LIMIT argument must be >= 0.");
                return None;
            }
            a.limit = n as u64;
            limit_given = true;
            i += 1;
        } else if xadd && opt.eq_ignore_ascii_case(b"NOMKSTREAM") {
            a.no_mkstream = true;
        } else if xadd {
            let rules = IdRules {
                auto_seq: true,
                ..IdRules::STRICT
            };
            a.id = Some(parsed_or_reply(ctx, opt, rules)?);
            break;
        } else {
            ctx.syntax_error();
            return None;
        }
        i += 1;
    }
    a.id_index = i;
    if a.limit != 0 && a.trim.is_none() {
        ctx.error("ERR syntax error, LIMIT cannot be used without specifying a trimming strategy");
        return None;
    }
    if !xadd && a.trim.is_none() {
        ctx.error("ERR syntax error, XTRIM must be called with a trimming strategy");
        return None;
    }
    if obeyed {
        a.limit = 0;
    } else if limit_given && !a.approx {
        ctx.error("ERR syntax error, LIMIT cannot be used without the special ~ option");
        return None;
    } else if !limit_given && a.approx {
        let per_node = ctx.server.config.stream.node_max_entries as u64;
        a.limit = match per_node.saturating_mul(100) {
            0 => 10_000,
            n => n.min(1_000_000),
        };
    } else if !limit_given {
        a.limit = 0;
    }
    Some(a)
}

/// Parses a strict id (no `-` or `+`), replying the error when it is not one.
pub fn strict_id(ctx: &mut Ctx, arg: &[u8]) -> Option<ParsedId> {
    parsed_or_reply(ctx, arg, IdRules::STRICT)
}

fn parsed_or_reply(ctx: &mut Ctx, arg: &[u8], rules: IdRules) -> Option<ParsedId> {
    let parsed = id::parse(arg, rules);
    if parsed.is_none() {
        ctx.error(id::INVALID_ID);
    }
    parsed
}

/// Trims `s` as `a` says; returns the entries removed.
pub fn apply(s: &mut Stream, a: &TrimArgs) -> u64 {
    a.trim.map_or(0, |how| s.trim(how, a.approx, a.limit))
}

/// Rewrites `argv` (a copy of the command) so an approximate trim replays exactly: `=`
/// for the `~`, and the length reached (MAXLEN) or the first entry left, tombstones
/// included (MINID), as Redis's streamRewriteTrimArgument.
pub fn rewrite_approx(argv: &mut [Vec<u8>], a: &TrimArgs, s: &Stream) {
    argv[a.arg_index - 1] = b"=".to_vec();
    argv[a.arg_index] = match a.trim {
        Some(Trim::MaxLen(_)) => s.len().to_string().into_bytes(),
        _ => s.edge_id(true, false).to_string().into_bytes(),
    };
}
