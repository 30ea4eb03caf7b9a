//! CRC-64/Jones, the checksum that ends an RDB file (Redis's crc64.c): reflected,
//! polynomial 0xad93d23594c935a9, initial value 0, no final xor; stored little-endian.
//!
//! Slicing by 8: eight 256-entry tables built at compile time, one table lookup per input
//! byte with eight independent lookups per step (about 2 GB/s on one core).

/// The polynomial, bit-reversed for the LSB-first loop.
const POLY_REFLECTED: u64 = 0x95ac_9329_ac4b_c9b5;

const fn tables() -> [[u64; 256]; 8] {
    let mut t = [[0u64; 256]; 8];
    let mut i = 0;
    while i < 256 {
        let mut crc = i as u64;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ POLY_REFLECTED
            } else {
                crc >> 1
            };
            bit += 1;
        }
        t[0][i] = crc;
        i += 1;
    }
    let mut k = 1;
    while k < 8 {
        let mut i = 0;
        while i < 256 {
            let prev = t[k - 1][i];
            t[k][i] = (prev >> 8) ^ t[0][(prev & 0xff) as usize];
            i += 1;
        }
        k += 1;
    }
    t
}

static TABLES: [[u64; 256]; 8] = tables();

/// Continues `crc` over `data` (start with 0).
pub fn update(mut crc: u64, data: &[u8]) -> u64 {
    let t = &TABLES;
    let mut chunks = data.chunks_exact(8);
    for chunk in &mut chunks {
        let x = crc ^ u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        crc = t[7][(x & 0xff) as usize]
            ^ t[6][((x >> 8) & 0xff) as usize]
            ^ t[5][((x >> 16) & 0xff) as usize]
            ^ t[4][((x >> 24) & 0xff) as usize]
            ^ t[3][((x >> 32) & 0xff) as usize]
            ^ t[2][((x >> 40) & 0xff) as usize]
            ^ t[1][((x >> 48) & 0xff) as usize]
            ^ t[0][(x >> 56) as usize];
    }
    for &b in chunks.remainder() {
        crc = t[0][((crc ^ b as u64) & 0xff) as usize] ^ (crc >> 8);
    }
    crc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_value_of_redis_crc64() {
        // crc64.c's own test: crc64(0, "123456789", 9) == 0xe9c6d914c4b8d9ca.
        assert_eq!(update(0, b"123456789"), 0xe9c6_d914_c4b8_d9ca);
    }

    #[test]
    fn sliced_equals_bytewise_and_is_incremental() {
        let data: Vec<u8> = (0..1000u32).map(|i| (i * 7 + i / 13) as u8).collect();
        let bytewise = data.iter().fold(0u64, |crc, &b| {
            TABLES[0][((crc ^ b as u64) & 0xff) as usize] ^ (crc >> 8)
        });
        assert_eq!(update(0, &data), bytewise);
        for split in [0, 1, 7, 8, 9, 500, 999, 1000] {
            assert_eq!(update(update(0, &data[..split]), &data[split..]), bytewise);
        }
    }
}
