//! The HLL against a model (a plain array of 16384 registers) and against bytes Redis 7.2.4
//! produced.

use super::sparse::{ops, Op};
use super::*;
use proptest::prelude::*;

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// The registers of any valid HLL string, one byte each.
fn model_of(hll: &[u8]) -> Registers {
    let mut regs = [0u8; REGISTERS];
    merge_into(&mut regs, hll).expect("valid");
    regs
}

#[test]
fn bytes_match_redis_after_pfadd_and_pfcount() {
    // redis-server 7.2.4: PFADD h a b c, then GET h, PFCOUNT h, GET h.
    let mut hll = new_sparse();
    assert_eq!(hll, hex("48594c4c0100000000000000000000007fff"));
    for e in [b"a", b"b", b"c"] {
        assert_eq!(add(&mut hll, e, DEFAULT_SPARSE_MAX_BYTES), Ok(true));
    }
    assert_eq!(
        hll,
        hex("48594c4c01000000000000000000008060f38050b1844bfb80425a")
    );
    assert_eq!(
        sparse::decode(&hll[HEADER_LEN..]),
        "Z:8436 v:1,1 Z:4274 v:2,1 Z:3068 v:1,1 Z:603"
    );
    assert_eq!(cached_count(&hll), None);
    assert_eq!(count(&hll), Ok(3));
    store_count(&mut hll, 3);
    assert_eq!(
        hll,
        hex("48594c4c01000000030000000000000060f38050b1844bfb80425a")
    );
    assert_eq!(cached_count(&hll), Some(3));
}

#[test]
fn promotion_and_count_match_redis() {
    // redis-server 7.2.4: PFADD d 0 1 .. 4999 turns dense and counts 4985.
    let mut hll = new_sparse();
    for i in 0..5000 {
        add(&mut hll, i.to_string().as_bytes(), DEFAULT_SPARSE_MAX_BYTES).unwrap();
    }
    assert_eq!(encoding_of(&hll), Some(Encoding::Dense));
    assert_eq!(count(&hll), Ok(4985));
}

#[test]
fn corrupt_sparse_is_detected() {
    let mut hll = new_sparse();
    add(&mut hll, b"a", DEFAULT_SPARSE_MAX_BYTES).unwrap();
    let mut longer = hll.clone();
    longer.extend_from_slice(b"hello");
    assert_eq!(count(&longer), Err(Corrupt));
    assert_eq!(to_dense(&mut longer), Err(Corrupt));
    let mut short = hll[..HEADER_LEN].to_vec();
    assert_eq!(
        add(&mut short, b"x", DEFAULT_SPARSE_MAX_BYTES),
        Err(Corrupt)
    );
    assert_eq!(count(&short), Err(Corrupt));
    assert_eq!(encoding_of(&hll[..10]), None);
    let mut bad = hll.clone();
    bad[4] = 2;
    assert_eq!(encoding_of(&bad), None);
    bad[4] = 0;
    assert_eq!(encoding_of(&bad), None, "dense of the wrong length");
}

#[test]
fn unreachable_estimates_come_out_as_redis_rounds_them() {
    // Every register at 60: no term of the estimator sees them.
    let mut hll = new_sparse();
    to_dense(&mut hll).unwrap();
    for i in 0..REGISTERS {
        dense::set(&mut hll[HEADER_LEN..], i, 60);
    }
    assert_eq!(count(&hll), Ok(1 << 63));
}

/// One step on an HLL and on the model.
#[derive(Debug, Clone)]
enum Step {
    Raise(usize, u8),
    Add(Vec<u8>),
    ToDense,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        8 => (0..REGISTERS, prop_oneof![8 => 1u8..=6, 1 => 1u8..=63]).prop_map(|(i, v)| Step::Raise(i, v)),
        // Clustered registers, so runs of VAL opcodes meet and merge.
        8 => (0usize..40, 1u8..=4).prop_map(|(i, v)| Step::Raise(100 + i, v)),
        4 => proptest::collection::vec(any::<u8>(), 0..20).prop_map(Step::Add),
        1 => Just(Step::ToDense),
    ]
}

/// Sparse opcodes cover exactly the 16384 registers.
fn covers_all(hll: &[u8]) -> bool {
    ops(&hll[HEADER_LEN..])
        .map(|(_, op)| op.run())
        .sum::<usize>()
        == REGISTERS
}

proptest! {
    #[test]
    fn sparse_and_dense_hold_the_model_registers(
        steps in proptest::collection::vec(step(), 1..120),
        sparse_max in prop_oneof![Just(DEFAULT_SPARSE_MAX_BYTES), 0usize..200],
    ) {
        let mut model = [0u8; REGISTERS];
        let mut hll = new_sparse();
        let mut dense_twin = new_sparse();
        to_dense(&mut dense_twin).unwrap();
        for step in steps {
            let (index, value) = match &step {
                Step::Raise(i, v) => (*i, *v),
                Step::Add(e) => pattern(e),
                Step::ToDense => {
                    let was_sparse = encoding_of(&hll) == Some(Encoding::Sparse);
                    prop_assert_eq!(to_dense(&mut hll), Ok(was_sparse));
                    continue;
                }
            };
            let before = encoding_of(&hll);
            let len = hll.len();
            let grows = value > model[index];
            model[index] = model[index].max(value);
            prop_assert_eq!(set_register(&mut hll, index, value, sparse_max), Ok(grows));
            prop_assert_eq!(dense::raise(&mut dense_twin[HEADER_LEN..], index, value), grows);
            match encoding_of(&hll) {
                Some(Encoding::Sparse) => {
                    prop_assert!(covers_all(&hll));
                    prop_assert!(hll.len() <= len || hll.len() <= sparse_max);
                    prop_assert!(value <= 32 || !grows);
                }
                Some(Encoding::Dense) => {
                    prop_assert_eq!(hll.len(), DENSE_LEN);
                    if before == Some(Encoding::Sparse) {
                        prop_assert!(value > 32 || len + 3 > sparse_max);
                    }
                }
                None => prop_assert!(false, "no longer an HLL"),
            }
            // A sparse edit marks the cache stale; a promotion leaves that to the caller.
            if grows && before == encoding_of(&hll) && before == Some(Encoding::Sparse) {
                prop_assert_eq!(cached_count(&hll), None);
            }
        }
        prop_assert_eq!(&model_of(&hll)[..], &model[..]);
        prop_assert_eq!(&model_of(&dense_twin)[..], &model[..]);
        let want = count_registers(&model);
        prop_assert_eq!(count(&hll), Ok(want));
        prop_assert_eq!(count(&dense_twin), Ok(want));
        let dense_regs: Vec<u8> = registers(&dense_twin).collect();
        prop_assert_eq!(&dense_regs[..], &model[..]);

        // PFMERGE's write onto an empty HLL gives the same registers.
        let mut merged = new_sparse();
        raise_to(&mut merged, &model, false, sparse_max).unwrap();
        prop_assert_eq!(&model_of(&merged)[..], &model[..]);
    }

    #[test]
    fn any_bytes_after_the_header_never_panic(body in proptest::collection::vec(any::<u8>(), 0..64), index in 0..REGISTERS, value in 1u8..=51) {
        let mut hll = new_sparse();
        hll.truncate(HEADER_LEN);
        hll.extend_from_slice(&body);
        let _ = count(&hll);
        let mut max = [0u8; REGISTERS];
        let _ = merge_into(&mut max, &hll);
        let _ = sparse::decode(&hll[HEADER_LEN..]);
        let mut edited = hll.clone();
        if set_register(&mut edited, index, value, DEFAULT_SPARSE_MAX_BYTES).is_ok() {
            prop_assert!(encoding_of(&edited).is_some());
        }
        let _ = to_dense(&mut hll);
    }
}

#[test]
fn xzero_cut_by_the_end_reads_a_zero_byte() {
    let mut hll = new_sparse();
    hll.truncate(HEADER_LEN);
    hll.push(0x40);
    assert_eq!(Op::at(&hll, HEADER_LEN), Op::XZero(1));
}
