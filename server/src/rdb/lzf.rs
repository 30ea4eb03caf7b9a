//! LZF (liblzf's format), for RDB strings stored with `ENC_LZF`: decompression, and a
//! greedy compressor for the string values the writer compresses as Redis does.
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

/// Longest back reference: 7 + 255 + 2 bytes.
const MAX_REF: usize = 264;
/// Farthest back a reference reaches.
const MAX_DISTANCE: usize = 1 << 13;

/// Compresses `input`, or None when the result would not be at least 4 bytes shorter (when
/// Redis's rdbSaveLzfStringObject stores the string as it is).
pub fn compress(input: &[u8]) -> Option<Vec<u8>> {
    let limit = input.len().checked_sub(4)?;
    let mut out = Vec::with_capacity(limit);
    // The table is sized to the input (up to 16K slots): one of 16K for every short string
    // made a snapshot of small values spend its time filling tables.
    let bits = input
        .len()
        .next_power_of_two()
        .trailing_zeros()
        .clamp(8, 14);
    let mut table = vec![usize::MAX; 1 << bits];
    let hash = |at: usize| {
        let v = u32::from_le_bytes([input[at], input[at + 1], input[at + 2], 0]);
        (v.wrapping_mul(2654435761) >> (32 - bits)) as usize
    };
    let (mut literal, mut i) = (0, 0);
    while i + 2 < input.len() {
        let h = hash(i);
        let candidate = std::mem::replace(&mut table[h], i);
        let reachable = candidate != usize::MAX && i - candidate <= MAX_DISTANCE;
        if !reachable || input[candidate..candidate + 3] != input[i..i + 3] {
            i += 1;
            continue;
        }
        let most = MAX_REF.min(input.len() - i);
        let mut len = 3;
        while len < most && input[candidate + len] == input[i + len] {
            len += 1;
        }
        push_literals(&input[literal..i], &mut out);
        let (field, offset) = (len - 2, i - candidate - 1);
        if field < 7 {
            out.push(((field as u8) << 5) | (offset >> 8) as u8);
        } else {
            out.extend_from_slice(&[(7 << 5) | (offset >> 8) as u8, (field - 7) as u8]);
        }
        out.push(offset as u8);
        i += len;
        literal = i;
        if out.len() > limit {
            return None;
        }
    }
    push_literals(&input[literal..], &mut out);
    (out.len() <= limit).then_some(out)
}

/// Appends `bytes` as literal runs of up to 32 bytes.
fn push_literals(bytes: &[u8], out: &mut Vec<u8>) {
    for run in bytes.chunks(32) {
        out.push(run.len() as u8 - 1);
        out.extend_from_slice(run);
    }
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
