//! The sparse registers: run-length opcodes (see the layout in [`super`]), read and edited
//! in place as Redis edits them, so the bytes stay Redis's after every change.
//!
//! Reading an XZERO whose second byte is past the end takes that byte as 0, as Redis reads
//! the string's terminating NUL there.

use super::{dense, Corrupt, Registers, DENSE, DENSE_LEN, ENCODING_BYTE, HEADER_LEN, REGISTERS};

/// Longest run of a ZERO opcode.
const ZERO_MAX: usize = 64;
/// Longest run of an XZERO opcode.
const XZERO_MAX: usize = REGISTERS;
/// Highest value a VAL opcode holds.
const VAL_MAX: u8 = 32;
/// Longest run of a VAL opcode.
const VAL_RUN_MAX: usize = 4;
/// How many opcodes from the one before an edit are tried for merging.
const MERGE_SCAN: usize = 5;

/// One opcode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `run` registers at 0, in one byte.
    Zero(usize),
    /// `run` registers at 0, in two bytes.
    XZero(usize),
    /// `run` registers at `value`.
    Val(u8, usize),
}

impl Op {
    /// The opcode starting at `ops[at]` (which must exist).
    #[inline]
    pub fn at(ops: &[u8], at: usize) -> Op {
        let b = ops[at];
        match b >> 6 {
            0 => Op::Zero((b & 0x3f) as usize + 1),
            1 => {
                let low = ops.get(at + 1).copied().unwrap_or(0) as usize;
                Op::XZero((((b & 0x3f) as usize) << 8 | low) + 1)
            }
            _ => Op::Val((b >> 2 & 0x1f) + 1, (b & 3) as usize + 1),
        }
    }

    /// How many registers it covers.
    #[inline]
    pub fn run(self) -> usize {
        match self {
            Op::Zero(run) | Op::XZero(run) | Op::Val(_, run) => run,
        }
    }

    /// Its length in bytes.
    #[inline]
    pub fn width(self) -> usize {
        match self {
            Op::XZero(_) => 2,
            _ => 1,
        }
    }

    /// Its value (0 for the zero runs).
    #[inline]
    fn value(self) -> u8 {
        match self {
            Op::Val(value, _) => value,
            _ => 0,
        }
    }
}

/// The VAL byte for `run` (1..=4) registers at `value` (1..=32).
fn val(value: u8, run: usize) -> u8 {
    0x80 | (value - 1) << 2 | (run - 1) as u8
}

/// Appends the opcode for `run` zero registers: ZERO up to 64, else XZERO.
fn push_zero_run(out: &mut Vec<u8>, run: usize) {
    if run > ZERO_MAX {
        let n = run - 1;
        out.extend_from_slice(&[0x40 | (n >> 8) as u8, n as u8]);
    } else {
        out.push((run - 1) as u8);
    }
}

/// Appends XZERO opcodes covering `registers` zero registers (a new HLL's body).
pub fn push_zeros(out: &mut Vec<u8>, mut registers: usize) {
    while registers > 0 {
        let run = registers.min(XZERO_MAX);
        let n = run - 1;
        out.extend_from_slice(&[0x40 | (n >> 8) as u8, n as u8]);
        registers -= run;
    }
}

/// The opcodes of `ops` (the bytes after the header) with their offsets.
pub fn ops(ops: &[u8]) -> impl Iterator<Item = (usize, Op)> + '_ {
    let mut at = 0;
    std::iter::from_fn(move || {
        (at < ops.len()).then(|| {
            let op = Op::at(ops, at);
            let here = at;
            at += op.width();
            (here, op)
        })
    })
}

/// Calls `f(first, run, value)` for each VAL opcode that fits inside the 16384 registers,
/// stopping at the first that does not; Err unless the opcodes cover exactly 16384
/// registers (how Redis reads a sparse HLL to convert or merge it).
fn for_each_value(body: &[u8], mut f: impl FnMut(usize, usize, u8)) -> Result<(), Corrupt> {
    let mut index = 0usize;
    for (_, op) in ops(body) {
        if let Op::Val(value, run) = op {
            if index + run > REGISTERS {
                break;
            }
            f(index, run, value);
        }
        index += op.run();
    }
    if index == REGISTERS {
        Ok(())
    } else {
        Err(Corrupt)
    }
}

/// How many registers hold each value; Err unless the opcodes cover exactly 16384.
pub fn histogram(body: &[u8]) -> Result<[u64; 64], Corrupt> {
    let mut histogram = [0u64; 64];
    let mut index = 0u64;
    for (_, op) in ops(body) {
        histogram[op.value() as usize] += op.run() as u64;
        index += op.run() as u64;
    }
    if index == REGISTERS as u64 {
        Ok(histogram)
    } else {
        Err(Corrupt)
    }
}

/// Raises each of `max` to the matching register; Err for corrupt opcodes.
pub fn merge_into(max: &mut Registers, body: &[u8]) -> Result<(), Corrupt> {
    for_each_value(body, |first, run, value| {
        for m in &mut max[first..first + run] {
            *m = (*m).max(value);
        }
    })
}

/// The dense string with the same registers and header as the sparse `hll`.
pub fn to_dense(hll: &[u8]) -> Result<Vec<u8>, Corrupt> {
    let mut out = vec![0u8; DENSE_LEN];
    out[..HEADER_LEN].copy_from_slice(&hll[..HEADER_LEN]);
    out[ENCODING_BYTE] = DENSE;
    let regs = &mut out[HEADER_LEN..];
    for_each_value(&hll[HEADER_LEN..], |first, run, value| {
        for i in first..first + run {
            dense::set(regs, i, value);
        }
    })?;
    Ok(out)
}

/// PFDEBUG DECODE's text: `z:run`, `Z:run` and `v:value,run` separated by spaces.
pub fn decode(body: &[u8]) -> String {
    let parts: Vec<String> = ops(body)
        .map(|(_, op)| match op {
            Op::Zero(run) => format!("z:{run}"),
            Op::XZero(run) => format!("Z:{run}"),
            Op::Val(value, run) => format!("v:{value},{run}"),
        })
        .collect();
    parts.join(" ")
}

/// Raises register `index` of the sparse `hll` to `value` when it is lower; true when it
/// changed (the cached count then marked stale). The edit splits the opcode covering the
/// register into at most three and merges equal VALs around it; the HLL turns dense
/// instead when `value` is above 32 or the split would grow the string past `sparse_max`.
/// Err when the opcodes do not reach the register, or are corrupt when turning dense.
pub fn raise(
    hll: &mut Vec<u8>,
    index: usize,
    value: u8,
    sparse_max: usize,
) -> Result<bool, Corrupt> {
    if value > VAL_MAX {
        return promote(hll, index, value);
    }
    let Some((at, prev, first, op)) = locate(hll, index) else {
        return Err(Corrupt);
    };
    match op {
        Op::Val(old, _) if old >= value => return Ok(false),
        Op::Val(_, 1) | Op::Zero(1) => hll[at] = val(value, 1),
        _ => {
            let seq = split(op, first, index, value);
            let len = hll.len();
            let grown = len as isize + seq.len() as isize - op.width() as isize;
            if grown > len as isize && grown as usize > sparse_max {
                return promote(hll, index, value);
            }
            // An XZERO cut short by the end of the string is replaced and the result cut
            // to the length Redis gives it.
            hll.splice(at..(at + op.width()).min(len), seq);
            hll.truncate(grown as usize);
        }
    }
    merge_around(hll, prev.unwrap_or(HEADER_LEN));
    super::invalidate(hll);
    Ok(true)
}

/// The opcode covering register `index`: its offset, the previous opcode's offset, the
/// first register it covers, and the opcode. None when the opcodes end before it.
fn locate(hll: &[u8], index: usize) -> Option<(usize, Option<usize>, usize, Op)> {
    let mut at = HEADER_LEN;
    let mut prev = None;
    let mut first = 0;
    while at < hll.len() {
        let op = Op::at(hll, at);
        if index < first + op.run() {
            return Some((at, prev, first, op));
        }
        prev = Some(at);
        at += op.width();
        first += op.run();
    }
    None
}

/// The opcodes replacing `op` (covering registers from `first`) once register `index`
/// holds `value`: the part before, the register, the part after (at most 5 bytes).
fn split(op: Op, first: usize, index: usize, value: u8) -> Vec<u8> {
    let last = first + op.run() - 1;
    let mut seq = Vec::with_capacity(5);
    let around = |seq: &mut Vec<u8>, run: usize| match op {
        Op::Val(old, _) => seq.push(val(old, run)),
        _ => push_zero_run(seq, run),
    };
    if index != first {
        around(&mut seq, index - first);
    }
    seq.push(val(value, 1));
    if index != last {
        around(&mut seq, last - index);
    }
    seq
}

/// Merges adjacent VAL opcodes of one value whose runs fit one opcode, looking at up to
/// five opcodes from offset `from`.
fn merge_around(hll: &mut Vec<u8>, from: usize) {
    let mut at = from;
    for _ in 0..MERGE_SCAN {
        if at >= hll.len() {
            break;
        }
        let op = Op::at(hll, at);
        let Op::Val(value, run) = op else {
            at += op.width();
            continue;
        };
        if let Some(&next) = hll.get(at + 1) {
            if let Op::Val(next_value, next_run) = Op::at(&[next], 0) {
                if next_value == value && run + next_run <= VAL_RUN_MAX {
                    hll[at + 1] = val(value, run + next_run);
                    hll.remove(at);
                    continue;
                }
            }
        }
        at += 1;
    }
}

/// Turns `hll` dense and raises the register there (always a change).
fn promote(hll: &mut Vec<u8>, index: usize, value: u8) -> Result<bool, Corrupt> {
    *hll = to_dense(hll)?;
    Ok(dense::raise(&mut hll[HEADER_LEN..], index, value))
}
