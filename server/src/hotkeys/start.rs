//! HOTKEYS START: its arguments, checked in Redis 8.6's order with its error texts.

use super::{Metrics, Options, Session};
use crate::cluster::node::SlotBits;
use crate::cluster::slot::SLOTS;
use crate::commands::Ctx;
use crate::numbers::parse_i64;

/// The most metrics METRICS may name.
const METRICS_MAX: i64 = 2;

/// HOTKEYS START METRICS count [CPU] [NET] [COUNT k] [DURATION seconds] [SAMPLE ratio]
/// [SLOTS count slot [slot ...]]: starts a session, replacing a stopped one.
pub(super) fn start(ctx: &mut Ctx, args: &[&[u8]]) {
    let now_ms = ctx.now_ms;
    ctx.server.hotkeys.expire(now_ms);
    if ctx.server.hotkeys.active {
        return ctx.error("ERR hotkey tracking session already in progress");
    }
    let options = match parse(ctx, args) {
        Ok(options) => options,
        Err(message) => return ctx.error(&message),
    };
    let seed = ctx.server.keyspace.random();
    ctx.server.hotkeys.session = Some(Box::new(Session::new(&options, now_ms, seed)));
    ctx.server.hotkeys.active = true;
    ctx.out.ok();
}

/// An integer argument within `min..=max`, else `message` (Redis's
/// getRangeLongFromObjectOrReply with a message: the same text for a non-number).
fn ranged(arg: &[u8], min: i64, max: i64, message: &str) -> Result<i64, String> {
    parse_i64(arg)
        .filter(|v| (min..=max).contains(v))
        .ok_or_else(|| format!("ERR {message}"))
}

/// The START options of `args`, or the error reply's text.
fn parse(ctx: &Ctx, args: &[&[u8]]) -> Result<Options, String> {
    if args.len() < 4 || !args[2].eq_ignore_ascii_case(b"METRICS") {
        return Err("ERR METRICS parameter is required".into());
    }
    let wanted = ranged(
        args[3],
        1,
        METRICS_MAX,
        &format!("METRICS count must be > 0 and <= {METRICS_MAX}"),
    )?;
    // `count` tokens follow; unknown ones are allowed (forward compatibility) but at least
    // one must be CPU or NET.
    let mut metrics = Metrics::default();
    let mut j = 4;
    let mut parsed = 0;
    while j < args.len() && parsed < wanted {
        let token = args[j];
        for (name, on) in [("CPU", &mut metrics.cpu), ("NET", &mut metrics.net)] {
            if token.eq_ignore_ascii_case(name.as_bytes()) {
                if *on {
                    return Err(format!("ERR METRICS {name} defined more than once!"));
                }
                *on = true;
            }
        }
        parsed += 1;
        j += 1;
    }
    if parsed != wanted {
        return Err("ERR METRICS count does not match number of metric types provided".into());
    }
    if metrics == Metrics::default() {
        return Err("ERR METRICS no valid metrics passed. Supported: CPU|NET".into());
    }
    let mut options = Options {
        metrics,
        count: 10,
        duration_ms: 0,
        sample_ratio: 1,
        slots: None,
    };
    while j < args.len() {
        let more = j + 1 < args.len();
        let token = args[j];
        if more && token.eq_ignore_ascii_case(b"COUNT") {
            options.count = ranged(args[j + 1], 1, 64, "COUNT must be between 1 and 64")? as usize;
            j += 2;
        } else if more && token.eq_ignore_ascii_case(b"DURATION") {
            let seconds = ranged(
                args[j + 1],
                1,
                1_000_000,
                "DURATION must be between 1 and 1000000",
            )?;
            options.duration_ms = seconds as u64 * 1000;
            j += 2;
        } else if more && token.eq_ignore_ascii_case(b"SAMPLE") {
            let ratio = ranged(
                args[j + 1],
                1,
                i32::MAX as i64,
                "SAMPLE ratio must be positive",
            )?;
            options.sample_ratio = ratio as u32;
            j += 2;
        } else if more && token.eq_ignore_ascii_case(b"SLOTS") {
            let (bits, count) = slots(ctx, &args[j + 1..], options.slots.is_some())?;
            options.slots = Some(bits);
            j += 2 + count;
        } else {
            return Err(crate::errors::SYNTAX.into());
        }
    }
    Ok(options)
}

/// SLOTS count slot...: `rest` starts at the count; returns the slots and their count.
/// Cluster mode only; each slot served by this node, none twice. As Redis, every slot is
/// checked for its range and its node before any for a duplicate (a bitmap tells them).
fn slots(ctx: &Ctx, rest: &[&[u8]], already: bool) -> Result<(SlotBits, usize), String> {
    let Some(cluster) = ctx.server.cluster.as_deref() else {
        return Err("ERR SLOTS parameter cannot be used in non-cluster mode".into());
    };
    if already {
        return Err("ERR SLOTS parameter already specified".into());
    }
    let max = SLOTS as i64;
    let count = ranged(
        rest[0],
        1,
        max,
        &format!("SLOTS count must be between 1 and {max}"),
    )? as usize;
    if count >= rest.len() {
        return Err("ERR not enough slot numbers provided".into());
    }
    let mine = &cluster.state.me().slots;
    let mut out = SlotBits::default();
    let mut duplicate = false;
    for arg in &rest[1..=count] {
        let slot = parse_i64(arg)
            .filter(|s| (0..max).contains(s))
            .ok_or("ERR Invalid or out of range slot")? as usize;
        if !mine.get(slot) {
            return Err(format!("ERR slot {slot} not handled by this node"));
        }
        duplicate |= out.get(slot);
        out.set(slot, true);
    }
    if duplicate {
        return Err("ERR duplicate slot number".into());
    }
    Ok((out, count))
}
