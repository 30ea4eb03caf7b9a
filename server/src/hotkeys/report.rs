//! HOTKEYS GET: the session's report, an array of one map (RESP2: a flat array of field
//! names and values), in Redis 8.6's field order; null when no session was started (or
//! after RESET).

use super::Session;
use crate::clock::cpu_us;
use crate::cluster::slot::SLOTS;
use crate::commands::Ctx;
use crate::resp::reply::ReplyWriter;

/// HOTKEYS GET.
pub(super) fn get(ctx: &mut Ctx, _: &[&[u8]]) {
    let now_ms = ctx.now_ms;
    ctx.server.hotkeys.expire(now_ms);
    let active = ctx.server.hotkeys.active;
    // The slots a session without SLOTS covers: this node's in cluster mode, else all.
    let node_slots = match ctx.server.cluster.as_deref() {
        Some(c) => c.state.me().slots.ranges(),
        None => vec![(0, SLOTS as u16 - 1)],
    };
    let Some(session) = ctx.server.hotkeys.session.as_deref() else {
        return ctx.out.null();
    };
    let duration = if active {
        now_ms.saturating_sub(session.start_ms)
    } else {
        session.duration_ms
    };
    let slots = match &session.slots {
        Some(bits) => bits.ranges(),
        None => node_slots,
    };
    write(&mut ctx.out, session, active, duration, &slots);
}

/// Milliseconds of CPU time between two readings in microseconds, as Redis subtracts
/// timevals and keeps whole milliseconds.
fn cpu_ms(now: u64, start: u64) -> i64 {
    (now.saturating_sub(start) / 1000) as i64
}

fn write(out: &mut ReplyWriter, s: &Session, active: bool, duration: u64, slots: &[(u16, u16)]) {
    let selected = s.slots.is_some();
    let sampled = selected && s.sample_ratio > 1;
    let (time, bytes) = (&s.time, &s.bytes);
    // The integer fields after selected-slots, each with whether it is shown.
    let totals: [(&[u8], u64, bool); 8] = [
        (
            b"sampled-commands-selected-slots-us",
            time.sampled_commands_selected_slots,
            sampled,
        ),
        (
            b"all-commands-selected-slots-us",
            time.all_commands_selected_slots,
            selected,
        ),
        (
            b"all-commands-all-slots-us",
            time.all_commands_all_slots,
            true,
        ),
        (
            b"net-bytes-sampled-commands-selected-slots",
            bytes.sampled_commands_selected_slots,
            sampled,
        ),
        (
            b"net-bytes-all-commands-selected-slots",
            bytes.all_commands_selected_slots,
            selected,
        ),
        (
            b"net-bytes-all-commands-all-slots",
            bytes.all_commands_all_slots,
            true,
        ),
        (b"collection-start-time-unix-ms", s.start_ms, true),
        (b"collection-duration-ms", duration, true),
    ];
    let cpu = s.cpu.is_some() as usize;
    let net = s.net.is_some() as usize;
    let shown = totals.iter().filter(|t| t.2).count();
    out.array(1);
    out.map(3 + shown + 3 * cpu + 2 * net);
    out.bulk(b"tracking-active");
    out.int(active as i64);
    out.bulk(b"sample-ratio");
    out.int(s.sample_ratio as i64);
    out.bulk(b"selected-slots");
    out.array(slots.len());
    for &(first, last) in slots {
        if first == last {
            out.array(1);
        } else {
            out.array(2);
            out.int(first as i64);
        }
        out.int(last as i64);
    }
    for (name, v, _) in totals.iter().filter(|t| t.2) {
        out.bulk(name);
        out.int(*v as i64);
    }
    if s.cpu.is_some() {
        let (user, sys) = cpu_us(libc::RUSAGE_SELF);
        out.bulk(b"total-cpu-time-user-ms");
        out.int(cpu_ms(user, s.rusage_start.0));
        out.bulk(b"total-cpu-time-sys-ms");
        out.int(cpu_ms(sys, s.rusage_start.1));
    }
    if let Some(net) = &s.net {
        out.bulk(b"total-net-bytes");
        out.int(net.total() as i64);
    }
    for (name, sketch) in [
        (&b"by-cpu-time-us"[..], &s.cpu),
        (&b"by-net-bytes"[..], &s.net),
    ] {
        let Some(sketch) = sketch else { continue };
        let mut listed = sketch.list();
        listed.truncate(s.count);
        out.bulk(name);
        out.array(2 * listed.len());
        for (key, weight) in listed {
            out.bulk(key);
            out.int(weight as i64);
        }
    }
}
