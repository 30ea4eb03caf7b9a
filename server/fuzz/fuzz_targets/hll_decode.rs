//! Feeds arbitrary bytes to the HyperLogLog reader and editor as the string of an HLL key
//! (what SET, SETRANGE, RESTORE or a replica may store there). Nothing may panic or loop;
//! the readers agree on whether the registers are valid (as far as Redis's do: merge and
//! the dense conversion always, count where it is stricter), a valid sparse HLL counts the
//! same once dense, and an edit that succeeds
//! leaves a valid HLL holding the old registers raised by the edit.
//!
//! The first input byte picks the header (bit 0: dense or sparse), the
//! hll-sparse-max-bytes (bits 1-7, times 25) and the register edited; the rest follows the
//! 16-byte header. Seeds in corpus/hll_decode/ are sparse HLLs Redis wrote.
//!
//! ```text
//! mkdir -p /tmp/hll-corpus && cp corpus/hll_decode/* /tmp/hll-corpus/
//! cargo +nightly fuzz run hll_decode /tmp/hll-corpus -- -max_total_time=300 -max_len=16000
//! ```

#![no_main]

use goblin_zset::hll::{self, Encoding, Registers, HEADER_LEN, REGISTERS};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&control, body)) = data.split_first() else {
        return;
    };
    let mut bytes = b"HYLL\x01\0\0\0\0\0\0\0\0\0\0\x80".to_vec();
    if control & 1 == 1 {
        bytes[4] = 0;
    }
    bytes.extend_from_slice(body);
    let Some(encoding) = hll::encoding_of(&bytes) else {
        return;
    };
    let sparse_max = (control >> 1) as usize * 25;

    let counted = hll::count(&bytes);
    let mut before: Box<Registers> = Box::new([0; REGISTERS]);
    let merged = hll::merge_into(&mut before, &bytes);
    // Registers that count are registers that merge; the converse fails for a VAL past the
    // 16384th register, which merging stops at and counting does not (as in Redis 7.2.4).
    assert!(counted.is_err() || merged.is_ok());
    let mut dense = bytes.clone();
    let converted = hll::to_dense(&mut dense);
    assert_eq!(converted.is_ok(), merged.is_ok());
    if encoding == Encoding::Sparse {
        let _ = hll::sparse::decode(&bytes[HEADER_LEN..]);
    }
    if let (Ok(n), Ok(_)) = (counted, converted) {
        assert_eq!(hll::count(&dense), Ok(n));
        assert_eq!(hll::count_registers(&before), n);
    }

    let index = (body.len() * 7919 + control as usize) % REGISTERS;
    let value = 1 + control % 51;
    // An XZERO cut by the end of the string reads a zero byte past it, and an edit of it is
    // cut short as Redis's is: the result need not be valid.
    let cut_xzero = encoding == Encoding::Sparse
        && hll::sparse::ops(&bytes[HEADER_LEN..])
            .last()
            .is_some_and(|(at, op)| at + op.width() > body.len());
    let mut edited = bytes.clone();
    let edit = hll::set_register(&mut edited, index, value, sparse_max);
    if edit.is_ok() && counted.is_ok() && !cut_xzero {
        let mut after: Box<Registers> = Box::new([0; REGISTERS]);
        assert!(hll::encoding_of(&edited).is_some());
        hll::merge_into(&mut after, &edited).expect("an edit of a valid HLL stays valid");
        before[index] = before[index].max(value);
        assert!(before[..] == after[..]);
    }
});
