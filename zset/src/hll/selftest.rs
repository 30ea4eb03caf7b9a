//! PFSELFTEST: Redis's self-test of the register code and the estimate's error.

use super::{add, count, dense, encoding_of, new_sparse, Encoding, DENSE_LEN, HEADER_LEN};
use super::{pattern, REGISTERS};

/// Rounds of random register writes read back.
const REGISTER_ROUNDS: usize = 1000;
/// Elements added in the estimate test.
const ELEMENTS: u64 = 10_000_000;

/// Runs the self-test with random numbers from `random` and the server's
/// `hll-sparse-max-bytes`:
/// registers read back as written; one element after another, a dense and an HLL built
/// as PFADD builds it agree (the latter sparse while small), and at 1, 10, 100, ... elements
/// the count is within six standard errors. Err holds the failure reply.
pub fn self_test(mut random: impl FnMut() -> u64, sparse_max: usize) -> Result<(), String> {
    let mut regs = vec![0u8; DENSE_LEN - HEADER_LEN];
    let mut expected = vec![0u8; REGISTERS];
    for _ in 0..REGISTER_ROUNDS {
        for (i, e) in expected.iter_mut().enumerate() {
            *e = (random() & 63) as u8;
            dense::set(&mut regs, i, *e);
        }
        for (i, &e) in expected.iter().enumerate() {
            let got = dense::get(&regs, i);
            if got != e {
                return Err(format!(
                    "TESTFAILED Register {i} should be {e} but is {got}"
                ));
            }
        }
    }

    // A zeroed header reads as dense.
    let mut reference = vec![0u8; DENSE_LEN];
    let mut hll = new_sparse();
    let relerr = 1.04 / (REGISTERS as f64).sqrt();
    let salt = random();
    let mut checkpoint = 1u64;
    for j in 1..=ELEMENTS {
        let element = (j ^ salt).to_le_bytes();
        let (index, value) = pattern(&element);
        dense::raise(&mut reference[HEADER_LEN..], index, value);
        add(&mut hll, &element, sparse_max).map_err(|_| "TESTFAILED corrupt".to_string())?;
        if j != checkpoint {
            continue;
        }
        if j < (sparse_max / 2) as u64 && encoding_of(&hll) != Some(Encoding::Sparse) {
            return Err("TESTFAILED sparse encoding not used".into());
        }
        let want = count(&reference).expect("dense");
        if count(&hll) != Ok(want) {
            return Err("TESTFAILED dense/sparse disagree".into());
        }
        let abserr = (checkpoint as i64 - want as i64).unsigned_abs();
        let maxerr = if j == 10 {
            1
        } else {
            (relerr * 6.0 * checkpoint as f64).ceil() as u64
        };
        if abserr > maxerr {
            return Err(format!(
                "TESTFAILED Too big error. card:{checkpoint} abserr:{abserr}"
            ));
        }
        checkpoint *= 10;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn passes() {
        // xorshift64 for the random numbers.
        let mut state = 42u64;
        let random = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let limit = super::super::DEFAULT_SPARSE_MAX_BYTES;
        assert_eq!(super::self_test(random, limit), Ok(()));
    }
}
