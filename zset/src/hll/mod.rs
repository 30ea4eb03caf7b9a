//! HyperLogLog as Redis 7.2 keeps it: a plain string whose bytes are Redis's, so a value
//! moves between Goblin and Redis (GET/SET, DUMP/RESTORE, RDB, replication) and counts the
//! same. Functions here take and edit those bytes; the commands live in the server.
//!
//! # Layout
//!
//! ```text
//! header (16 bytes)
//!   [b"HYLL": 4][encoding: 1][unused, zero: 3][cached cardinality: 8, little endian]
//!   encoding 0 = dense, 1 = sparse; bit 7 of the last cardinality byte set = the cached
//!   cardinality is stale (it is set alone: the other 63 bits keep the old count)
//!
//! dense (16 + 12288 = 12304 bytes)
//!   16384 registers of 6 bits, register i at bit 6*i of the register bytes, least
//!   significant bit first, so a register may straddle two bytes
//!
//! sparse (16 + 2 bytes when empty, grown up to `hll-sparse-max-bytes`)
//!   run-length opcodes covering the 16384 registers in order:
//!     ZERO   00llllll            1 byte: 1..=64 registers at 0 (l + 1)
//!     XZERO  01llllll llllllll   2 bytes: 1..=16384 registers at 0 (l + 1, 14 bits)
//!     VAL    1vvvvvll            1 byte: 1..=4 registers at 1..=32 (l + 1, v + 1)
//!   an empty HLL is one XZERO of 16384; a register above 32, or an edit that would make
//!   the string longer than `hll-sparse-max-bytes`, turns it dense
//! ```
//!
//! An element's register and value come from MurmurHash64A (seed 0xadc83b19) of its bytes:
//! the low 14 bits pick the register, the value is 1 + the trailing zeros of the other 50
//! ([`pattern`]). The count is Ertl's estimator over the registers' histogram
//! ([`estimate`]).

pub mod dense;
mod estimate;
mod murmur;
mod selftest;
pub mod sparse;
#[cfg(test)]
mod tests;

pub use estimate::estimate;
pub use murmur::{murmur64a, pattern};
pub use selftest::self_test;

/// Bytes of the header before the registers.
pub const HEADER_LEN: usize = 16;
/// Bits of the hash that pick the register.
const P: u32 = 14;
/// Number of registers.
pub const REGISTERS: usize = 1 << P;
/// The highest register value the hash can produce is `Q + 1`.
const Q: usize = 64 - P as usize;
/// Length of a dense HLL string.
pub const DENSE_LEN: usize = HEADER_LEN + REGISTERS * 6 / 8;
/// Redis's default `hll-sparse-max-bytes`.
pub const DEFAULT_SPARSE_MAX_BYTES: usize = 3000;

const MAGIC: &[u8; 4] = b"HYLL";
const ENCODING_BYTE: usize = 4;
const DENSE: u8 = 0;
const SPARSE: u8 = 1;
/// The cached cardinality's bytes, and the byte whose top bit marks it stale.
const CARD: std::ops::Range<usize> = 8..16;
const STALE_BYTE: usize = 15;
const STALE_BIT: u8 = 0x80;

/// A register array with one byte per register (merges and multi-key counts).
pub type Registers = [u8; REGISTERS];

/// The error of an HLL string whose registers cannot be read (Redis's INVALIDOBJ).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Corrupt;

/// How an HLL string stores its registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// 6 bits a register.
    Dense,
    /// Run-length opcodes.
    Sparse,
}

impl Encoding {
    /// The name PFDEBUG ENCODING replies with.
    pub fn as_str(self) -> &'static str {
        match self {
            Encoding::Dense => "dense",
            Encoding::Sparse => "sparse",
        }
    }
}

/// The encoding of `bytes` when they pass Redis's HLL check (magic, a known encoding, a
/// dense string of the exact length); None when they are not an HLL.
pub fn encoding_of(bytes: &[u8]) -> Option<Encoding> {
    if bytes.len() < HEADER_LEN || &bytes[..4] != MAGIC {
        return None;
    }
    match bytes[ENCODING_BYTE] {
        DENSE if bytes.len() == DENSE_LEN => Some(Encoding::Dense),
        SPARSE => Some(Encoding::Sparse),
        _ => None,
    }
}

/// A new, empty HLL (sparse: the header and one XZERO of every register).
pub fn new_sparse() -> Vec<u8> {
    let mut hll = Vec::with_capacity(HEADER_LEN + 2);
    hll.extend_from_slice(MAGIC);
    hll.extend_from_slice(&[SPARSE, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    sparse::push_zeros(&mut hll, REGISTERS);
    hll
}

/// The cached cardinality, when it is not stale.
pub fn cached_count(hll: &[u8]) -> Option<u64> {
    (hll[STALE_BYTE] & STALE_BIT == 0)
        .then(|| u64::from_le_bytes(hll[CARD].try_into().expect("8 bytes")))
}

/// Caches `count` in the header (valid).
pub fn store_count(hll: &mut [u8], count: u64) {
    hll[CARD].copy_from_slice(&count.to_le_bytes());
}

/// Marks the cached cardinality stale.
pub fn invalidate(hll: &mut [u8]) {
    hll[STALE_BYTE] |= STALE_BIT;
}

/// Adds `element`; true when a register grew. A sparse HLL may turn dense (see
/// [`set_register`]); Err when its opcodes are corrupt.
pub fn add(hll: &mut Vec<u8>, element: &[u8], sparse_max: usize) -> Result<bool, Corrupt> {
    let (index, value) = pattern(element);
    set_register(hll, index, value, sparse_max)
}

/// Raises register `index` to `value` when it is lower; true when it changed. A sparse HLL
/// turns dense when `value` is above 32 or the edit would make it longer than
/// `sparse_max`; Err when its opcodes are corrupt or the encoding is unknown.
pub fn set_register(
    hll: &mut Vec<u8>,
    index: usize,
    value: u8,
    sparse_max: usize,
) -> Result<bool, Corrupt> {
    match hll[ENCODING_BYTE] {
        DENSE => Ok(dense::raise(&mut hll[HEADER_LEN..], index, value)),
        SPARSE => sparse::raise(hll, index, value, sparse_max),
        _ => Err(Corrupt),
    }
}

/// The estimated cardinality of a valid HLL string (not the cache); Err for sparse
/// opcodes that do not cover exactly the 16384 registers.
pub fn count(hll: &[u8]) -> Result<u64, Corrupt> {
    let histogram = match hll[ENCODING_BYTE] {
        DENSE => dense::histogram(&hll[HEADER_LEN..]),
        _ => sparse::histogram(&hll[HEADER_LEN..])?,
    };
    Ok(estimate(&histogram))
}

/// Raises each of `max` to the matching register of a valid HLL string; Err for corrupt
/// sparse opcodes (`max` may then be partly raised).
pub fn merge_into(max: &mut Registers, hll: &[u8]) -> Result<(), Corrupt> {
    match hll[ENCODING_BYTE] {
        DENSE => {
            dense::merge_into(max, &hll[HEADER_LEN..]);
            Ok(())
        }
        _ => sparse::merge_into(max, &hll[HEADER_LEN..]),
    }
}

/// The estimated cardinality of one-byte registers (the union PFCOUNT computes).
pub fn count_registers(registers: &Registers) -> u64 {
    let mut histogram = [0u64; 64];
    for &r in registers.iter() {
        histogram[(r & 63) as usize] += 1;
    }
    estimate(&histogram)
}

/// Raises the registers of a valid HLL string to `max` (PFMERGE's write), dense first when
/// `dense` (Err when it was corrupt sparse). The cached cardinality is marked stale.
pub fn raise_to(
    hll: &mut Vec<u8>,
    max: &Registers,
    dense: bool,
    sparse_max: usize,
) -> Result<(), Corrupt> {
    if dense {
        to_dense(hll)?;
    }
    for (index, &value) in max.iter().enumerate() {
        if value != 0 {
            // As Redis, a corrupt sparse destination is left as the failed edit left it.
            let _ = set_register(hll, index, value, sparse_max);
        }
    }
    invalidate(hll);
    Ok(())
}

/// Turns a sparse HLL dense; true when it was sparse, Err when its opcodes are corrupt
/// (the string is then unchanged).
pub fn to_dense(hll: &mut Vec<u8>) -> Result<bool, Corrupt> {
    if hll[ENCODING_BYTE] == DENSE {
        return Ok(false);
    }
    *hll = sparse::to_dense(hll)?;
    Ok(true)
}

/// The 16384 register values of a dense HLL string (PFDEBUG GETREG).
pub fn registers(hll: &[u8]) -> impl Iterator<Item = u8> + '_ {
    (0..REGISTERS).map(|i| dense::get(&hll[HEADER_LEN..], i))
}
