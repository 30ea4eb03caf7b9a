//! The dense registers: 16384 six-bit values packed least significant bit first, register
//! `i` starting at bit `6 * i` (so registers 4k..4k+3 fill bytes 3k..3k+2 exactly).

use super::{Registers, REGISTERS};

/// The value of register `i`.
#[inline]
pub fn get(regs: &[u8], i: usize) -> u8 {
    let bit = i * 6;
    let (byte, shift) = (bit / 8, bit % 8);
    let low = regs[byte] as u16 >> shift;
    let high = regs.get(byte + 1).map_or(0, |&b| (b as u16) << (8 - shift));
    ((low | high) & 63) as u8
}

/// Sets register `i` to `value` (at most 63).
#[inline]
pub fn set(regs: &mut [u8], i: usize, value: u8) {
    let bit = i * 6;
    let (byte, shift) = (bit / 8, bit % 8);
    let field = 63u16 << shift;
    let v = (value as u16) << shift;
    regs[byte] = (regs[byte] & !(field as u8)) | v as u8;
    if field > 0xff {
        let b = &mut regs[byte + 1];
        *b = (*b & !((field >> 8) as u8)) | (v >> 8) as u8;
    }
}

/// Raises register `i` to `value` when it is lower; true when it changed.
#[inline]
pub fn raise(regs: &mut [u8], i: usize, value: u8) -> bool {
    let grows = value > get(regs, i);
    if grows {
        set(regs, i, value);
    }
    grows
}

/// Calls `f` with each of the 16384 registers in order, four at a time from three bytes.
#[inline]
fn for_each(regs: &[u8], mut f: impl FnMut(usize, u8)) {
    for (k, b) in regs[..REGISTERS * 6 / 8].chunks_exact(3).enumerate() {
        let word = b[0] as u32 | (b[1] as u32) << 8 | (b[2] as u32) << 16;
        f(4 * k, (word & 63) as u8);
        f(4 * k + 1, (word >> 6 & 63) as u8);
        f(4 * k + 2, (word >> 12 & 63) as u8);
        f(4 * k + 3, (word >> 18 & 63) as u8);
    }
}

/// How many registers hold each value.
pub fn histogram(regs: &[u8]) -> [u64; 64] {
    let mut histogram = [0u64; 64];
    for_each(regs, |_, v| histogram[v as usize] += 1);
    histogram
}

/// Raises each of `max` to the matching register.
pub fn merge_into(max: &mut Registers, regs: &[u8]) {
    for_each(regs, |i, v| max[i] = max[i].max(v));
}
