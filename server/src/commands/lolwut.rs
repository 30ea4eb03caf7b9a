//! LOLWUT [VERSION v] [args...]: Redis's version-dependent computer art. Version 5 draws
//! Schotter, 6 the skyline ([`crate::lolwut`]); any other version (7.2's own, the default)
//! replies its version line, as Redis 7.2's lolwutUnstableCommand. The randomness is C's
//! `rand()` seeded with the start time and pid, as Redis seeds it.

use super::Ctx;
use crate::lolwut::{schotter, skyline, Rand};
use std::sync::Mutex;

/// The process's `rand()` state.
static RAND: Mutex<Option<Rand>> = Mutex::new(None);

/// LOLWUT [VERSION v] [args...]
pub fn lolwut(ctx: &mut Ctx, args: &[&[u8]]) {
    let mut version = crate::REDIS_VERSION.to_owned();
    let mut rest = &args[1..];
    if args.len() >= 3 && args[1].eq_ignore_ascii_case(b"version") {
        let Some(v) = ctx.int_arg(args[2]) else {
            return;
        };
        // C's (unsigned int) of the long.
        version = format!("{}.0.0", v as u32);
        rest = &args[3..];
    }
    let mut numbers = Vec::with_capacity(rest.len().min(3));
    let v = version.as_bytes();
    let art = if (v[0] == b'5' && v[1] == b'.' && v[2] != b'9') || v.starts_with(b"4.9") {
        5
    } else if (v[0] == b'6' && v[1] == b'.' && v[2] != b'9') || v.starts_with(b"5.9") {
        6
    } else {
        let line = format!("Redis ver. {}\n", crate::REDIS_VERSION);
        return ctx.out.verbatim(line.as_bytes());
    };
    let wanted = if art == 5 { 3 } else { 2 };
    for arg in rest.iter().take(wanted) {
        let Some(n) = ctx.int_arg(arg) else {
            return;
        };
        numbers.push(n);
    }
    let arg = |i: usize, default: i64| numbers.get(i).copied().unwrap_or(default);
    let mut state = RAND.lock().unwrap_or_else(|p| p.into_inner());
    let rng = state.get_or_insert_with(|| {
        let now = crate::clock::unix_ms() / 1000;
        Rand::new((now as u32) ^ std::process::id())
    });
    let text = if art == 5 {
        schotter::lolwut5(arg(0, 66), arg(1, 8), arg(2, 12), crate::REDIS_VERSION, rng)
    } else {
        skyline::lolwut6(arg(0, 80), arg(1, 20), crate::REDIS_VERSION, rng)
    };
    drop(state);
    ctx.out.verbatim(text.as_bytes());
}
