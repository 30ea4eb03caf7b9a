//! Bitmaps, which are strings: SETBIT, GETBIT, BITCOUNT (BYTE|BIT ranges), BITPOS, BITOP
//! (AND OR XOR NOT, and Redis 8.2's DIFF DIFF1 ANDOR ONE). Bit 0 is the most significant bit of the first byte.

use super::{store, write_string};
use crate::commands::Ctx;
use crate::keyspace::{StringValue, Value};
use crate::pubsub::notify;

/// The error of a bit offset that is not an integer or past proto-max-bulk-len.
const BAD_OFFSET: &str = "ERR bit offset is not an integer or out of range";

/// Parses a bit offset as Redis's getBitOffsetFromArgument: an integer, or with `hash` and
/// a `#` prefix a count of `bits`-wide fields; below proto-max-bulk-len bytes.
pub(super) fn bit_offset(ctx: &mut Ctx, arg: &[u8], hash_bits: Option<u64>) -> Option<u64> {
    let (text, times) = match (arg.first(), hash_bits) {
        (Some(b'#'), Some(bits)) if bits > 0 => (&arg[1..], bits as i64),
        _ => (arg, 1),
    };
    let max = ctx.server.config.proto_max_bulk_len;
    match crate::numbers::parse_i64(text).map(|v| v.wrapping_mul(times)) {
        Some(v) if v >= 0 && (v >> 3) < max => Some(v as u64),
        _ => {
            ctx.error(BAD_OFFSET);
            None
        }
    }
}

/// The string at `key` for an in-place bit write reaching bit `max_bit` (Redis's
/// lookupStringForBitCommand): created `raw` and zeroed when missing. Returns whether the
/// key was created or grew (a change even when no bit flips); None after WRONGTYPE.
pub(super) fn string_for_bits(ctx: &mut Ctx, key: &[u8], max_bit: u64) -> Option<bool> {
    let need = (max_bit >> 3) as usize + 1;
    match write_string(ctx, key) {
        Err(_) => None,
        Ok(Some(s)) => {
            let before = s.len();
            Some(s.bytes_mut(need).len() != before)
        }
        Ok(None) => {
            // Created without counting a change: the bit command counts its own.
            let db = ctx.db();
            let zeroed = StringValue::raw(&vec![0; need]);
            ctx.server.keyspace.store(db, key, Value::Str(zeroed));
            Some(true)
        }
    }
}

/// SETBIT key offset value: the bit's previous value.
pub fn setbit(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(bit) = bit_offset(ctx, args[2], None) else {
        return;
    };
    let on = match crate::numbers::parse_i64(args[3]) {
        Some(v @ (0 | 1)) => v == 1,
        _ => return ctx.error("ERR bit is not an integer or out of range"),
    };
    let Some(grew) = string_for_bits(ctx, args[1], bit) else {
        return;
    };
    let s = write_string(ctx, args[1])
        .ok()
        .flatten()
        .expect("made above");
    let old = s.set_bit(bit as usize, on);
    if grew || old != on {
        let db = ctx.db();
        ctx.server.keyspace.signal_modified(db, args[1]);
        ctx.server.keyspace.add_dirty(1);
        ctx.notify(notify::STRING, "setbit", args[1]);
    }
    ctx.out.int(old as i64);
}

/// GETBIT key offset
pub fn getbit(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(bit) = bit_offset(ctx, args[2], None) else {
        return;
    };
    let (found, out) = ctx.read_typed_and_out(args[1], Value::as_string);
    let Ok(found) = found else {
        return;
    };
    let on = found.is_some_and(|s| {
        let bytes = s.bytes();
        let byte = (bit >> 3) as usize;
        byte < bytes.len() && bytes[byte] & (0x80 >> (bit & 7)) != 0
    });
    out.int(on as i64);
}

/// A bit range of BITCOUNT or BITPOS, parsed before the key is read.
struct Range {
    start: i64,
    end: Option<i64>,
    bits: bool,
}

/// Parses `BYTE` or `BIT`.
fn unit(ctx: &mut Ctx, arg: Option<&&[u8]>) -> Option<bool> {
    match arg {
        None => Some(false),
        Some(a) if a.eq_ignore_ascii_case(b"BIT") => Some(true),
        Some(a) if a.eq_ignore_ascii_case(b"BYTE") => Some(false),
        Some(_) => {
            ctx.syntax_error();
            None
        }
    }
}

/// The inclusive bit range `r` selects in a string of `len` bytes, with Redis's
/// negative indexes and clamping; None when it is empty. Without an end, the string's end.
fn bit_span(r: &Range, len: usize) -> Option<(u64, u64)> {
    let total = if r.bits { len as i64 * 8 } else { len as i64 };
    let end = r.end.unwrap_or(total - 1);
    let fix = |i: i64| (if i < 0 { total + i } else { i }).max(0);
    let (start, end) = (fix(r.start), fix(end).min(total - 1));
    if start > end {
        return None;
    }
    Some(if r.bits {
        (start as u64, end as u64)
    } else {
        (start as u64 * 8, end as u64 * 8 + 7)
    })
}

/// The first bit equal to `want` from bit `from` to bit `to` (both included), skipping
/// whole bytes that cannot hold it.
fn find_bit(bytes: &[u8], from: u64, to: u64, want: bool) -> Option<u64> {
    let skip = if want { 0x00 } else { 0xff };
    let mut i = from;
    while i <= to {
        let byte = bytes[(i >> 3) as usize];
        if i & 7 == 0 && i + 7 <= to && byte == skip {
            i += 8;
            continue;
        }
        if (byte & (0x80 >> (i & 7)) != 0) == want {
            return Some(i);
        }
        i += 1;
    }
    None
}

/// BITCOUNT key [start end [BYTE|BIT]]
pub fn bitcount(ctx: &mut Ctx, args: &[&[u8]]) {
    let range = match args.len() {
        2 => None,
        4 | 5 => {
            let Some(start) = ctx.int_arg(args[2]) else {
                return;
            };
            let Some(end) = ctx.int_arg(args[3]) else {
                return;
            };
            let Some(bits) = unit(ctx, args.get(4)) else {
                return;
            };
            Some(Range {
                start,
                end: Some(end),
                bits,
            })
        }
        _ => return ctx.syntax_error(),
    };
    let (found, out) = ctx.read_typed_and_out(args[1], Value::as_string);
    let Ok(found) = found else {
        return;
    };
    let count = found.map_or(0, |s| {
        let bytes = s.bytes();
        if let Some(Range {
            start,
            end: Some(end),
            ..
        }) = range
        {
            if start < 0 && end < 0 && start > end {
                return 0;
            }
        }
        let whole = Range {
            start: 0,
            end: None,
            bits: false,
        };
        match bit_span(range.as_ref().unwrap_or(&whole), bytes.len()) {
            None => 0,
            Some((from, to)) => count_bits(&bytes, from, to),
        }
    });
    out.int(count as i64);
}

/// Set bits of `bytes` from bit `from` to bit `to`, both included.
fn count_bits(bytes: &[u8], from: u64, to: u64) -> u64 {
    let (first, last) = ((from >> 3) as usize, (to >> 3) as usize);
    let whole: u64 = bytes[first..=last]
        .iter()
        .map(|b| b.count_ones() as u64)
        .sum();
    let head = ((bytes[first] as u16) >> (8 - (from & 7))).count_ones() as u64;
    let tail = (bytes[last] & ((1u16 << (7 - (to & 7))) - 1) as u8).count_ones() as u64;
    whole - head - tail
}

/// BITPOS key bit [start [end [BYTE|BIT]]]
pub fn bitpos(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(bit) = ctx.int_arg(args[2]) else {
        return;
    };
    if bit != 0 && bit != 1 {
        return ctx.error("ERR The bit argument must be 1 or 0.");
    }
    let want = bit == 1;
    let mut range = Range {
        start: 0,
        end: None,
        bits: false,
    };
    match args.len() {
        3 => {}
        4..=6 => {
            let Some(start) = ctx.int_arg(args[3]) else {
                return;
            };
            range.start = start;
            let Some(bits) = unit(ctx, args.get(5)) else {
                return;
            };
            range.bits = bits;
            if let Some(end) = args.get(4) {
                let Some(end) = ctx.int_arg(end) else {
                    return;
                };
                range.end = Some(end);
            }
        }
        _ => return ctx.syntax_error(),
    }
    let (found, out) = ctx.read_typed_and_out(args[1], Value::as_string);
    let Ok(found) = found else {
        return;
    };
    let Some(s) = found else {
        return out.int(if want { -1 } else { 0 });
    };
    let bytes = s.bytes();
    let pos = match bit_span(&range, bytes.len()) {
        None => -1,
        Some((from, to)) => match find_bit(&bytes, from, to, want) {
            Some(i) => i as i64,
            // A string is followed by clear bits, unless the range had an explicit end.
            None if !want && range.end.is_none() => bytes.len() as i64 * 8,
            None => -1,
        },
    };
    out.int(pos);
}

/// BITOP AND|OR|XOR|NOT|DIFF|DIFF1|ANDOR|ONE destkey key [key ...]: the result's length
/// (the longest input's, missing keys and short strings read as zero bytes); an empty
/// result deletes destkey. DIFF, DIFF1, ANDOR and ONE are Redis 8.2's: the first key
/// against the union of the others (X & !U, !X & U, X & U), and the bits set in exactly
/// one key.
pub fn bitop(ctx: &mut Ctx, args: &[&[u8]]) {
    let op = args[1].to_ascii_uppercase();
    let against_union = matches!(op.as_slice(), b"DIFF" | b"DIFF1" | b"ANDOR");
    if !against_union && !matches!(op.as_slice(), b"AND" | b"OR" | b"XOR" | b"NOT" | b"ONE") {
        return ctx.syntax_error();
    }
    if op == b"NOT" && args.len() != 4 {
        return ctx.error("ERR BITOP NOT must be called with a single source key.");
    }
    if against_union && args.len() < 5 {
        let name = String::from_utf8_lossy(&op);
        return ctx.error(&format!(
            "ERR BITOP {name} must be called with at least two source keys."
        ));
    }
    let mut inputs: Vec<Vec<u8>> = Vec::with_capacity(args.len() - 3);
    for key in &args[3..] {
        match ctx.read_typed(key, Value::as_string) {
            Err(_) => return,
            Ok(found) => inputs.push(found.map_or_else(Vec::new, |s| s.bytes().to_vec())),
        }
    }
    let len = inputs.iter().map(Vec::len).max().unwrap_or(0);
    let byte = |input: &Vec<u8>, i: usize| input.get(i).copied().unwrap_or(0);
    let result: Vec<u8> = (0..len)
        .map(|i| {
            let mut all = inputs.iter().map(|input| byte(input, i));
            let first = all.next().unwrap_or(0);
            match op.as_slice() {
                b"AND" => all.fold(first, |a, b| a & b),
                b"OR" => all.fold(first, |a, b| a | b),
                b"XOR" => all.fold(first, |a, b| a ^ b),
                b"DIFF" => first & !all.fold(0, |a, b| a | b),
                b"DIFF1" => !first & all.fold(0, |a, b| a | b),
                b"ANDOR" => first & all.fold(0, |a, b| a | b),
                b"ONE" => {
                    // Bits set in any key so far, and in more than one.
                    let (any, more) =
                        all.fold((first, 0), |(any, more), b| (any | b, more | (any & b)));
                    any & !more
                }
                _ => !first,
            }
        })
        .collect();
    let db = ctx.db();
    if result.is_empty() {
        if ctx.server.keyspace.delete(db, args[2]) {
            ctx.notify(notify::GENERIC, "del", args[2]);
        }
        ctx.server.keyspace.add_dirty(1);
    } else {
        store(ctx, args[2], StringValue::raw(&result), false);
        ctx.notify(notify::STRING, "set", args[2]);
    }
    ctx.out.int(len as i64);
}
