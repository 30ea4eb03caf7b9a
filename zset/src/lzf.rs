//! LZF (liblzf's format), for RDB strings stored with `ENC_LZF`: decompression, and
//! liblzf's compressor as Redis runs it, for the strings the writer compresses.
//!
//! The stream is a sequence of runs, each led by a control byte `c`:
//! - `c < 32`: `c + 1` literal bytes follow;
//! - otherwise a back reference: length `c >> 5` (7 means "7 + the next byte"), plus 2;
//!   distance `((c & 0x1f) << 8) + next byte + 1` back from the output's end. Copies may
//!   overlap their source (a distance of 1 repeats one byte).

/// The most bytes one input byte can expand to: a 3-byte reference yields up to 264 bytes.
pub const MAX_EXPANSION: u64 = 88;

/// Decompresses `input` into `out` (appending), which must come to exactly `expected` bytes.
pub fn decompress(input: &[u8], expected: usize, out: &mut Vec<u8>) -> Result<(), &'static str> {
    let start = out.len();
    out.reserve(expected);
    let limit = start + expected;
    let mut i = 0;
    while i < input.len() {
        let ctrl = input[i] as usize;
        i += 1;
        if ctrl < 32 {
            let run = ctrl + 1;
            if i + run > input.len() {
                return Err("LZF literal run past the end of the input");
            }
            if out.len() + run > limit {
                return Err("LZF data longer than its stated length");
            }
            out.extend_from_slice(&input[i..i + run]);
            i += run;
        } else {
            let mut len = ctrl >> 5;
            if len == 7 {
                let Some(&extra) = input.get(i) else {
                    return Err("LZF reference cut short");
                };
                len += extra as usize;
                i += 1;
            }
            let Some(&low) = input.get(i) else {
                return Err("LZF reference cut short");
            };
            i += 1;
            let distance = ((ctrl & 0x1f) << 8) + low as usize + 1;
            let len = len + 2;
            let produced = out.len() - start;
            if distance > produced {
                return Err("LZF reference before the start of the output");
            }
            if out.len() + len > limit {
                return Err("LZF data longer than its stated length");
            }
            let from = out.len() - distance;
            if distance >= len {
                out.extend_from_within(from..from + len);
            } else {
                for k in 0..len {
                    let b = out[from + k];
                    out.push(b);
                }
            }
        }
    }
    if out.len() != limit {
        return Err("LZF data shorter than its stated length");
    }
    Ok(())
}

/// Literals per run.
const MAX_LIT: usize = 1 << 5;
/// Farthest back a reference reaches (its offset field is 13 bits).
const MAX_OFF: usize = 1 << 13;
/// The longest match looked for, in bytes (a reference encodes 7 + 255 + 2 at most).
const MAX_REF: usize = (1 << 8) + (1 << 3);
/// log2 of the hash table's slots (Redis's lzfP.h).
const HLOG: u32 = 16;

/// The hash slot of the three bytes in the low 24 bits of `h` (liblzf's IDX, VERY_FAST).
#[inline]
fn idx(h: u32) -> usize {
    ((h >> (24 - HLOG)).wrapping_sub(h.wrapping_mul(5)) & ((1 << HLOG) - 1)) as usize
}

/// Compresses `input` as Redis's rdbSaveLzfStringObject does: Redis's lzf_compress
/// (liblzf, VERY_FAST, 2^16 hash slots) into `input.len() - 4` bytes at most. None when it does not
/// fit (or the input is 4 bytes or less), and Redis stores the string as it is.
///
/// A faithful port, output limit checks included, so that the bytes (and whether a string
/// compresses at all) are Redis's. One difference: liblzf's hash table starts as whatever
/// the stack held, here empty; a stale slot can only add a match Redis finds by chance.
pub fn compress(input: &[u8]) -> Option<Vec<u8>> {
    let out_len = input.len().checked_sub(4).filter(|&n| n > 0)?;
    compress_within(input, out_len)
}

/// Compresses `input` into `out_len` bytes at most, None when it does not fit: Redis's
/// lzf_compress with the output limit its caller gives (quicklist nodes give their size).
pub fn compress_within(input: &[u8], out_len: usize) -> Option<Vec<u8>> {
    if out_len == 0 {
        return None;
    }
    HASH_TABLE.with(|table| compress_with(input, out_len, &mut table.borrow_mut()))
}

thread_local! {
    /// The hash table, reused: a fresh 2^16-slot table for every string made a snapshot of
    /// many short strings spend its time mapping and zeroing tables.
    static HASH_TABLE: std::cell::RefCell<HashTable> = std::cell::RefCell::new(HashTable::default());
}

/// liblzf's hash table of input positions, emptied in O(1) per string: a slot is filled
/// only when it carries the current string's generation.
#[derive(Default)]
struct HashTable {
    /// Per slot: generation in the high 32 bits, input position + 1 in the low 32.
    slots: Vec<u64>,
    generation: u32,
}

impl HashTable {
    /// Starts a new string: every slot reads as empty.
    fn clear(&mut self) {
        if self.slots.is_empty() {
            self.slots = vec![0; 1 << HLOG];
        }
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            self.slots.fill(0);
            self.generation = 1;
        }
    }

    /// The position + 1 stored in `slot` for this string (0: empty).
    #[inline]
    fn get(&self, slot: usize) -> usize {
        let v = self.slots[slot];
        if (v >> 32) as u32 == self.generation {
            (v & 0xffff_ffff) as usize
        } else {
            0
        }
    }

    /// Stores position + 1 in `slot`.
    #[inline]
    fn set(&mut self, slot: usize, pos1: usize) {
        self.slots[slot] = (u64::from(self.generation) << 32) | pos1 as u64;
    }
}

/// [`compress`] with its hash table.
fn compress_with(input: &[u8], out_len: usize, htab: &mut HashTable) -> Option<Vec<u8>> {
    htab.clear();
    let in_len = input.len();
    let mut out = vec![0u8; out_len + 4];
    let in_end = in_len;
    let out_end = out_len;
    let mut ip = 0usize;
    let mut lit = 0usize;
    let mut op = 1usize; // start run
    let frst = |p: usize| (u32::from(input[p]) << 8) | u32::from(input[p + 1]);
    let next = |v: u32, p: usize| (v << 8) | u32::from(input[p + 2]);
    let mut hval = if in_len >= 2 { frst(0) } else { 0 };
    while in_end >= 2 && ip < in_end - 2 {
        hval = next(hval, ip);
        let slot = idx(hval);
        let stored = htab.get(slot);
        htab.set(slot, ip + 1);
        // ref > in_data: position 0 is never a reference.
        let matched = stored > 1 && {
            let r = stored - 1;
            ip - r - 1 < MAX_OFF
                && input[r..r + 2] == input[ip..ip + 2]
                && input[r + 2] == input[ip + 2]
        };
        if matched {
            let r = stored - 1;
            let off = ip - r - 1;
            let mut len = 2;
            let maxlen = (in_end - ip - len).min(MAX_REF);
            if op + 3 + 1 >= out_end && op - usize::from(lit == 0) + 3 + 1 >= out_end {
                return None;
            }
            out[op - lit - 1] = (lit as u8).wrapping_sub(1); // stop run
            op -= usize::from(lit == 0); // undo run if length is zero
                                         // liblzf first compares 16 more bytes unchecked against maxlen when it is over
                                         // 16, so a match can run 2 bytes past it, to the input's end.
            let mut mismatch = false;
            if maxlen > 16 {
                for _ in 0..16 {
                    len += 1;
                    if input[r + len] != input[ip + len] {
                        mismatch = true;
                        break;
                    }
                }
            }
            if !mismatch {
                loop {
                    len += 1;
                    if !(len < maxlen && input[r + len] == input[ip + len]) {
                        break;
                    }
                }
            }
            len -= 2; // now the octets - 1
            ip += 1;
            if len < 7 {
                out[op] = ((off >> 8) + (len << 5)) as u8;
                op += 1;
            } else {
                out[op] = ((off >> 8) + (7 << 5)) as u8;
                out[op + 1] = (len - 7) as u8;
                op += 2;
            }
            out[op] = off as u8;
            op += 1;
            lit = 0;
            op += 1; // start run
            ip += len + 1;
            if ip >= in_end - 2 {
                break;
            }
            ip -= 2;
            hval = frst(ip);
            hval = next(hval, ip);
            htab.set(idx(hval), ip + 1);
            ip += 1;
            hval = next(hval, ip);
            htab.set(idx(hval), ip + 1);
            ip += 1;
        } else {
            if op >= out_end {
                return None;
            }
            lit += 1;
            out[op] = input[ip];
            op += 1;
            ip += 1;
            if lit == MAX_LIT {
                out[op - lit - 1] = (lit - 1) as u8; // stop run
                lit = 0;
                op += 1; // start run
            }
        }
    }
    if op + 3 > out_end {
        return None;
    }
    while ip < in_end {
        lit += 1;
        out[op] = input[ip];
        op += 1;
        ip += 1;
        if lit == MAX_LIT {
            out[op - lit - 1] = (lit - 1) as u8;
            lit = 0;
            op += 1;
        }
    }
    out[op - lit - 1] = (lit as u8).wrapping_sub(1); // end run
    op -= usize::from(lit == 0);
    out.truncate(op);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compressed_strings_decompress_to_themselves() {
        let mut inputs: Vec<Vec<u8>> = vec![
            vec![b'a'; 1000],
            b"abcabcabcabcabcabcabcabc".to_vec(),
            (0..5000u32).map(|i| (i * 7 % 13) as u8).collect(),
            (0..300u32)
                .flat_map(|i| format!("key:{i:012}").into_bytes())
                .collect(),
        ];
        let mut x = 1u64;
        inputs.push(
            (0..4000)
                .map(|_| {
                    x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                    (x >> 60) as u8
                })
                .collect(),
        );
        for input in inputs {
            let packed = compress(&input).expect("compressible");
            assert!(packed.len() <= input.len() - 4);
            assert_eq!(run(&packed, input.len()).unwrap(), input);
        }
        assert_eq!(
            compress(b"abcdefghijklmnopqrstuvwxyz"),
            None,
            "incompressible"
        );
        assert_eq!(compress(b"abc"), None);
    }

    #[test]
    fn earlier_calls_leave_no_matches_behind() {
        // The second input repeats the first one's bytes: a slot left from the first call
        // must not turn into a reference.
        let a: Vec<u8> = (0..200u32).map(|i| (i * 37 % 251) as u8).collect();
        let fresh = compress(&[&a[..100], &a[..100]].concat()).unwrap();
        for _ in 0..3 {
            compress(&a);
            assert_eq!(compress(&[&a[..100], &a[..100]].concat()).unwrap(), fresh);
        }
        // Redis's bytes for "a" * 51: literal "aa", then 47 bytes at distance 1, literal "aa"
        // (the match stops 2 bytes before the end).
        assert_eq!(
            compress(&[b'a'; 51]).unwrap(),
            [1, b'a', b'a', 0xe0, 38, 0, 1, b'a', b'a']
        );
    }

    fn run(input: &[u8], expected: usize) -> Result<Vec<u8>, &'static str> {
        let mut out = Vec::new();
        decompress(input, expected, &mut out).map(|_| out)
    }

    #[test]
    fn literals_and_references() {
        // "abcabcabcabc": literal "abc" then a reference of 9 bytes at distance 3.
        // Length 9 = 7 + 2 -> ctrl len field 7 with extra byte 0.
        let input = [2, b'a', b'b', b'c', (7 << 5), 0, 2];
        assert_eq!(run(&input, 12).unwrap(), b"abcabcabcabc");
        // Short reference: "aaaa" = literal "a" + ref len 3 (field 1) at distance 1.
        assert_eq!(run(&[0, b'a', 1 << 5, 0], 4).unwrap(), b"aaaa");
    }

    #[test]
    fn corrupt_streams_are_refused() {
        assert!(run(&[5, b'a'], 6).is_err(), "literal past input");
        assert!(
            run(&[0, b'a', 1 << 5, 5], 4).is_err(),
            "reference before start"
        );
        assert!(run(&[0, b'a', 1 << 5, 0], 3).is_err(), "longer than stated");
        assert!(run(&[0, b'a'], 2).is_err(), "shorter than stated");
        assert!(run(&[0, b'a', 7 << 5], 10).is_err(), "cut reference");
    }
}
