//! BITFIELD and BITFIELD_RO: integers of 1 to 64 bits (signed) or 63 (unsigned) at any bit
//! offset, with GET, SET, INCRBY and OVERFLOW WRAP|SAT|FAIL, as Redis's bitfieldGeneric
//! (its overflow checks are ported with their wrapping arithmetic, edge cases included).

use super::bits::{bit_offset, string_for_bits};
use super::write_string;
use crate::commands::Ctx;
use crate::keyspace::Value;
use crate::pubsub::notify;

/// What an operation does.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Get,
    Set,
    IncrBy,
}

/// What a SET or INCRBY does when the result does not fit.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Overflow {
    Wrap,
    Sat,
    Fail,
}

/// One parsed operation.
struct Op {
    kind: Kind,
    signed: bool,
    bits: u32,
    offset: u64,
    value: i64,
    overflow: Overflow,
}

/// Parses `i<bits>` (1 to 64) or `u<bits>` (1 to 63).
fn field_type(arg: &[u8]) -> Option<(bool, u32)> {
    let signed = match arg.first() {
        Some(b'i') => true,
        Some(b'u') => false,
        _ => None?,
    };
    match crate::numbers::parse_i64(&arg[1..]) {
        Some(bits) if bits >= 1 && bits <= if signed { 64 } else { 63 } => {
            Some((signed, bits as u32))
        }
        _ => None,
    }
}

/// Parses the operations after the key; None after the error reply.
fn parse(ctx: &mut Ctx, args: &[&[u8]]) -> Option<Vec<Op>> {
    let mut ops = Vec::new();
    let mut overflow = Overflow::Wrap;
    let mut j = 0;
    while j < args.len() {
        let left = args.len() - j - 1;
        let name = args[j].to_ascii_uppercase();
        let kind = match name.as_slice() {
            b"GET" if left >= 2 => Kind::Get,
            b"SET" if left >= 3 => Kind::Set,
            b"INCRBY" if left >= 3 => Kind::IncrBy,
            b"OVERFLOW" if left >= 1 => {
                overflow = match args[j + 1].to_ascii_uppercase().as_slice() {
                    b"WRAP" => Overflow::Wrap,
                    b"SAT" => Overflow::Sat,
                    b"FAIL" => Overflow::Fail,
                    _ => {
                        ctx.error("ERR Invalid OVERFLOW type specified");
                        return None;
                    }
                };
                j += 2;
                continue;
            }
            _ => {
                ctx.syntax_error();
                return None;
            }
        };
        let Some((signed, bits)) = field_type(args[j + 1]) else {
            ctx.error("ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.");
            return None;
        };
        let offset = bit_offset(ctx, args[j + 2], Some(bits as u64))?;
        let value = if kind == Kind::Get {
            0
        } else {
            ctx.int_arg(args[j + 3])?
        };
        ops.push(Op {
            kind,
            signed,
            bits,
            offset,
            value,
            overflow,
        });
        j += if kind == Kind::Get { 3 } else { 4 };
    }
    Some(ops)
}

/// The unsigned `bits`-wide field at bit `offset` (bits past the end read as zero).
fn get_unsigned(bytes: &[u8], offset: u64, bits: u32) -> u64 {
    (offset..offset + bits as u64).fold(0, |v, i| {
        let byte = bytes.get((i >> 3) as usize).copied().unwrap_or(0);
        (v << 1) | ((byte >> (7 - (i & 7))) & 1) as u64
    })
}

/// The signed field: the unsigned one with its top bit extended.
fn get_signed(bytes: &[u8], offset: u64, bits: u32) -> i64 {
    let v = get_unsigned(bytes, offset, bits) as i64;
    if bits < 64 && v & (1 << (bits - 1)) != 0 {
        v | (-1i64 << bits)
    } else {
        v
    }
}

/// Writes the low `bits` bits of `value` at bit `offset` (the bytes reach that far).
fn set_bits(bytes: &mut [u8], offset: u64, bits: u32, value: u64) {
    for k in 0..bits as u64 {
        let i = offset + k;
        let mask = 0x80u8 >> (i & 7);
        let byte = &mut bytes[(i >> 3) as usize];
        if (value >> (bits as u64 - 1 - k)) & 1 == 1 {
            *byte |= mask;
        } else {
            *byte &= !mask;
        }
    }
}

/// Redis's checkUnsignedBitfieldOverflow: whether `value + incr` overflows, and the value
/// to store then under `overflow` (wrapped or saturated).
fn unsigned_overflow(value: u64, incr: i64, bits: u32, overflow: Overflow) -> Option<u64> {
    let max = if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    let max_incr = max.wrapping_sub(value) as i64;
    let min_incr = (value as i64).wrapping_neg();
    let wrap = || value.wrapping_add(incr as u64) & !(u64::MAX << bits);
    if value > max || (incr > 0 && incr > max_incr) {
        Some(if overflow == Overflow::Wrap {
            wrap()
        } else {
            max
        })
    } else if incr < 0 && incr < min_incr {
        Some(if overflow == Overflow::Wrap {
            wrap()
        } else {
            0
        })
    } else {
        None
    }
}

/// Redis's checkSignedBitfieldOverflow, as [`unsigned_overflow`].
fn signed_overflow(value: i64, incr: i64, bits: u32, overflow: Overflow) -> Option<i64> {
    let max = if bits == 64 {
        i64::MAX
    } else {
        (1i64 << (bits - 1)) - 1
    };
    let min = -max - 1;
    let max_incr = (max as u64).wrapping_sub(value as u64) as i64;
    let min_incr = min.wrapping_sub(value);
    let wrap = || {
        let mut c = (value as u64).wrapping_add(incr as u64);
        if bits < 64 {
            let mask = u64::MAX << bits;
            if c & (1u64 << (bits - 1)) != 0 {
                c |= mask;
            } else {
                c &= !mask;
            }
        }
        c as i64
    };
    let up = value > max
        || (bits != 64 && incr > max_incr)
        || (value >= 0 && incr > 0 && incr > max_incr);
    let down = value < min
        || (bits != 64 && incr < min_incr)
        || (value < 0 && incr < 0 && incr < min_incr);
    match (up, down) {
        (true, _) => Some(if overflow == Overflow::Wrap {
            wrap()
        } else {
            max
        }),
        (false, true) => Some(if overflow == Overflow::Wrap {
            wrap()
        } else {
            min
        }),
        _ => None,
    }
}

/// Runs a SET or INCRBY on `bytes`: the reply (None when FAIL refused it) and whether the
/// field changed.
fn write_op(bytes: &mut [u8], op: &Op) -> (Option<i64>, bool) {
    if op.signed {
        let old = get_signed(bytes, op.offset, op.bits);
        let (new, reply, over) = if op.kind == Kind::IncrBy {
            let over = signed_overflow(old, op.value, op.bits, op.overflow);
            let new = over.unwrap_or(old.wrapping_add(op.value));
            (new, new, over.is_some())
        } else {
            let over = signed_overflow(op.value, 0, op.bits, op.overflow);
            (over.unwrap_or(op.value), old, over.is_some())
        };
        if over && op.overflow == Overflow::Fail {
            return (None, false);
        }
        set_bits(bytes, op.offset, op.bits, new as u64);
        (Some(reply), old != new)
    } else {
        let old = get_unsigned(bytes, op.offset, op.bits);
        let (new, reply, over) = if op.kind == Kind::IncrBy {
            let over = unsigned_overflow(old, op.value, op.bits, op.overflow);
            let new = over.unwrap_or(old.wrapping_add(op.value as u64));
            (new, new, over.is_some())
        } else {
            let over = unsigned_overflow(op.value as u64, 0, op.bits, op.overflow);
            (over.unwrap_or(op.value as u64), old, over.is_some())
        };
        if over && op.overflow == Overflow::Fail {
            return (None, false);
        }
        set_bits(bytes, op.offset, op.bits, new);
        (Some(reply as i64), old != new)
    }
}

/// A GET on `bytes`.
fn read_op(bytes: &[u8], op: &Op) -> i64 {
    if op.signed {
        get_signed(bytes, op.offset, op.bits)
    } else {
        get_unsigned(bytes, op.offset, op.bits) as i64
    }
}

/// BITFIELD and BITFIELD_RO (`read_only`).
fn bitfield_generic(ctx: &mut Ctx, args: &[&[u8]], read_only: bool) {
    let key = args[1];
    let Some(ops) = parse(ctx, &args[2..]) else {
        return;
    };
    let writes = ops.iter().filter(|o| o.kind != Kind::Get);
    let Some(highest) = writes.map(|o| o.offset + o.bits as u64 - 1).max() else {
        let (found, out) = ctx.read_typed_and_out(key, Value::as_string);
        let Ok(found) = found else {
            return;
        };
        let bytes = found.map_or_else(Vec::new, |s| s.bytes().to_vec());
        out.array(ops.len());
        for op in &ops {
            out.int(read_op(&bytes, op));
        }
        return;
    };
    if read_only {
        return ctx.error("ERR BITFIELD_RO only supports the GET subcommand");
    }
    let Some(grew) = string_for_bits(ctx, key, highest) else {
        return;
    };
    let s = write_string(ctx, key).ok().flatten().expect("made above");
    let bytes = s.bytes_mut(0);
    let mut changes = 0u64;
    let replies: Vec<Option<i64>> = ops
        .iter()
        .map(|op| match op.kind {
            Kind::Get => Some(read_op(bytes, op)),
            _ => {
                let (reply, change) = write_op(bytes, op);
                changes += u64::from(reply.is_some() && (grew || change));
                reply
            }
        })
        .collect();
    if changes > 0 {
        let db = ctx.db();
        ctx.server.keyspace.signal_modified(db, key);
        ctx.server.keyspace.add_dirty(changes);
        ctx.notify(notify::STRING, "setbit", key);
    }
    ctx.out.array(replies.len());
    for reply in replies {
        match reply {
            Some(v) => ctx.out.int(v),
            None => ctx.out.null(),
        }
    }
}

/// BITFIELD key [GET type offset | SET type offset value | INCRBY type offset increment |
/// OVERFLOW WRAP|SAT|FAIL ...]
pub fn bitfield(ctx: &mut Ctx, args: &[&[u8]]) {
    bitfield_generic(ctx, args, false);
}

/// BITFIELD_RO key [GET type offset ...]
pub fn bitfield_ro(ctx: &mut Ctx, args: &[&[u8]]) {
    bitfield_generic(ctx, args, true);
}
