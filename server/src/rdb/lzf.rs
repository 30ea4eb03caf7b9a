//! LZF decompression (liblzf's lzf_d.c format), for RDB strings stored with `ENC_LZF`.
//!
//! The stream is a sequence of runs, each led by a control byte `c`:
//! - `c < 32`: `c + 1` literal bytes follow;
//! - otherwise a back reference: length `c >> 5` (7 means "7 + the next byte"), plus 2;
//!   distance `((c & 0x1f) << 8) + next byte + 1` back from the output's end. Copies may
//!   overlap their source (a distance of 1 repeats one byte).
//!
//! Goblin writes no compressed strings, so there is no compressor.

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

#[cfg(test)]
mod tests {
    use super::*;

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
