//! LLEN, LINDEX, LRANGE, LPOS.

use std::ops::ControlFlow;

use super::{bulk, position, read_list_and_out};
use crate::commands::Ctx;
use crate::keyspace::{List, Member, Value};
use crate::zset_commands::parse;

/// LLEN key
pub fn llen(ctx: &mut Ctx, args: &[&[u8]]) {
    let Ok(found) = ctx.read_typed(args[1], Value::as_list) else {
        return;
    };
    let len = found.map_or(0, List::len);
    ctx.out.int(len as i64);
}

/// LINDEX key index
pub fn lindex(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(index) = ctx.int_arg(args[2]) else {
        return;
    };
    let (found, out) = read_list_and_out(ctx, args[1]);
    match found {
        Err(_) => {}
        Ok(Some(list)) => match position(index, list.len()) {
            Some(i) => list.get(i, |m| bulk(out, m)),
            None => out.null(),
        },
        Ok(None) => out.null(),
    }
}

/// LRANGE key start stop
pub fn lrange(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(start) = ctx.int_arg(args[2]) else {
        return;
    };
    let Some(stop) = ctx.int_arg(args[3]) else {
        return;
    };
    let (found, out) = read_list_and_out(ctx, args[1]);
    let Ok(found) = found else {
        return;
    };
    let Some(range) = found.and_then(|l| parse::rank_range(start, stop, l.len()).map(|r| (l, r)))
    else {
        return out.array(0);
    };
    let (list, range) = range;
    out.array(range.len());
    let mut left = range.len();
    list.each_from(range.start, |m| {
        bulk(out, m);
        left -= 1;
        if left == 0 {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    });
}

/// LPOS key element [RANK rank] [COUNT num-matches] [MAXLEN len]
pub fn lpos(ctx: &mut Ctx, args: &[&[u8]]) {
    let (mut rank, mut count, mut maxlen) = (1i64, None, 0usize);
    let mut j = 3;
    while j < args.len() {
        let more = j + 1 < args.len();
        let opt = args[j];
        if opt.eq_ignore_ascii_case(b"RANK") && more {
            rank = match parse::int_in_range(ctx, args[j + 1], -i64::MAX, i64::MAX, None) {
                Some(0) => return ctx.error(
                    "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list",
                ),
                Some(r) => r,
                None => return,
            };
        } else if opt.eq_ignore_ascii_case(b"COUNT") && more {
            let Some(c) = parse::int_in_range(
                ctx,
                args[j + 1],
                0,
                i64::MAX,
                Some("ERR COUNT can't be negative"),
            ) else {
                return;
            };
            count = Some(c as usize);
        } else if opt.eq_ignore_ascii_case(b"MAXLEN") && more {
            let Some(m) = parse::int_in_range(
                ctx,
                args[j + 1],
                0,
                i64::MAX,
                Some("ERR MAXLEN can't be negative"),
            ) else {
                return;
            };
            maxlen = m as usize;
        } else {
            return ctx.syntax_error();
        }
        j += 2;
    }
    let (found, out) = read_list_and_out(ctx, args[1]);
    let list = match found {
        Err(_) => return,
        Ok(Some(list)) => list,
        Ok(None) if count.is_some() => return out.array(0),
        Ok(None) => return out.null(),
    };
    let (element, len) = (args[2], list.len());
    let from_back = rank < 0;
    let skip = rank.unsigned_abs() as usize - 1;
    let scanned = if maxlen == 0 { len } else { maxlen.min(len) };
    let wanted = match count {
        Some(0) | None => usize::MAX,
        Some(c) => c,
    };
    let wanted = if count.is_none() { 1 } else { wanted };
    let (mut found, mut seen, mut skipped) = (Vec::new(), 0usize, 0usize);
    let mut visit = |m: Member<'_>| {
        if seen == scanned || found.len() == wanted {
            return ControlFlow::Break(());
        }
        let i = seen;
        seen += 1;
        if List::element_eq(m, element) {
            if skipped < skip {
                skipped += 1;
            } else {
                found.push(if from_back { len - 1 - i } else { i } as i64);
            }
        }
        ControlFlow::Continue(())
    };
    if from_back {
        list.each_rev(&mut visit);
    } else {
        list.each_from(0, &mut visit);
    }
    if count.is_none() {
        match found.first() {
            Some(&i) => out.int(i),
            None => out.null(),
        }
    } else {
        out.array(found.len());
        for i in found {
            out.int(i);
        }
    }
}
