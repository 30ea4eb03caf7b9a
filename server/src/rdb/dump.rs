//! DUMP payloads: one value in the RDB encoding, as Redis's DUMP returns it and RESTORE
//! takes it (cluster.c's createDumpPayload and verifyDumpPayload).
//!
//! ```text
//! type byte | value (as in an RDB file) | RDB version (2 bytes LE) | CRC64 (8 bytes LE)
//! ```
//!
//! The CRC64 (Jones, [`super::crc64`]) covers everything before it, version included.
//! DUMP writes what Redis 7.2 writes: RDB version 11, listpack sets as SET_LISTPACK.
//! Payloads for another server ([`Payload::Portable`], what MIGRATE sends) are written at
//! RDB version 10 in the file form, which Redis 7.0 loads as well as 7.2 (Redis 7.0
//! refuses every version-11 payload, whatever its type).

use super::crc64;
use super::format::TYPE_SET_LISTPACK;
use super::read::{self, LoadError, LoadOptions};
use super::write::{self, Form, RdbWriter};
use crate::keyspace::Value;

/// The RDB version of Redis 7.2, which DUMP writes.
pub const DUMP_VERSION: u16 = 11;
/// The highest RDB version RESTORE accepts: Redis 7.4's, whose payloads carry hashes with
/// field times (types 24 and 25, which Goblin reads).
pub const RESTORE_MAX_VERSION: u16 = 12;
/// The RDB version of portable payloads (Redis 7.0's).
pub const PORTABLE_VERSION: u16 = 10;

/// Which payload to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Payload {
    /// Redis 7.2's bytes (DUMP).
    Exact,
    /// A payload Redis 7.0 and later load (MIGRATE).
    Portable,
}

/// The payload of `value`; `compress` is rdbcompression, which Redis applies to DUMP too.
pub fn payload(value: &Value, compress: bool, kind: Payload) -> Vec<u8> {
    let (form, version) = match kind {
        Payload::Exact => (
            Form {
                compress,
                exact: true,
            },
            DUMP_VERSION,
        ),
        Payload::Portable => (Form::file(compress), PORTABLE_VERSION),
    };
    debug_assert!(kind == Payload::Exact || write::value_type(value, form) != TYPE_SET_LISTPACK);
    let mut w = RdbWriter::with_capacity(Vec::new(), 64);
    // Writing to a Vec cannot fail.
    let _ = w.byte(write::value_type(value, form));
    let _ = write::write_body(&mut w, value, form);
    // The writer kept the CRC64 of the body: the footer continues it over the version.
    let (mut out, crc) = w.into_parts().unwrap_or_default();
    out.extend_from_slice(&version.to_le_bytes());
    let crc = crc64::update(crc, &version.to_le_bytes());
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// A payload of `body` (a type byte and a value): the body, `version` (2 bytes LE) and the
/// CRC64 of both (8 bytes LE).
pub fn seal(body: &[u8], version: u16) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len() + 10);
    out.extend_from_slice(body);
    out.extend_from_slice(&version.to_le_bytes());
    let crc = crc64::update(0, &out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// Why a payload was refused.
#[derive(Debug, Clone)]
pub enum RestoreError {
    /// Shorter than its footer, a version above [`RESTORE_MAX_VERSION`], or a wrong checksum
    /// ("DUMP payload version or checksum are wrong").
    Footer,
    /// The value does not parse, is empty or of a type Goblin does not store ("Bad data
    /// format"); the loader's error says which.
    Data(LoadError),
}

/// The payload's RDB version when its footer is good (Redis's verifyDumpPayload).
pub fn verify(payload: &[u8]) -> Result<u16, RestoreError> {
    if payload.len() < 10 {
        return Err(RestoreError::Footer);
    }
    let footer = &payload[payload.len() - 10..];
    let version = u16::from_le_bytes([footer[0], footer[1]]);
    if version > RESTORE_MAX_VERSION {
        return Err(RestoreError::Footer);
    }
    if super::skip_checksum() {
        return Ok(version);
    }
    let crc = crc64::update(0, &payload[..payload.len() - 8]);
    if crc.to_le_bytes() != footer[2..] {
        return Err(RestoreError::Footer);
    }
    Ok(version)
}

/// The value a payload holds, checked as RESTORE checks it. The value is read from the
/// whole payload, footer included, as Redis reads it (a value that runs into the footer
/// is read from it).
pub fn restore(payload: &[u8], opts: &LoadOptions) -> Result<Value, RestoreError> {
    let version = verify(payload)?;
    read::read_object(payload, u32::from(version), opts).map_err(RestoreError::Data)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keyspace::StringValue;

    #[test]
    fn a_string_payload_is_redis_bytes() {
        // Redis 7.2: DUMP of SET k hello.
        let value = Value::Str(StringValue::from_set(b"hello"));
        let p = payload(&value, true, Payload::Exact);
        assert_eq!(&p[..7], b"\x00\x05hello");
        assert_eq!(&p[7..9], &[11, 0]);
        assert_eq!(p.len(), 17);
        assert_eq!(verify(&p).unwrap(), 11);
        let back = restore(&p, &LoadOptions::default()).unwrap();
        assert_eq!(&*back.as_string().unwrap().bytes(), b"hello");
    }

    #[test]
    fn footer_checks() {
        let value = Value::Str(StringValue::from_set(b"12345"));
        let mut p = payload(&value, true, Payload::Exact);
        assert!(matches!(verify(&p[..9]), Err(RestoreError::Footer)));
        let last = p.len() - 1;
        p[last] ^= 1;
        assert!(matches!(verify(&p), Err(RestoreError::Footer)));
        p[last] ^= 1;
        // Version 12 (Redis 7.4) with a correct checksum is read, 13 refused.
        let n = p.len();
        for (version, ok) in [(12, true), (13, false)] {
            p[n - 10] = version;
            let crc = crc64::update(0, &p[..n - 8]);
            p[n - 8..].copy_from_slice(&crc.to_le_bytes());
            assert_eq!(verify(&p).is_ok(), ok, "version {version}");
        }
        let portable = payload(&value, true, Payload::Portable);
        assert_eq!(verify(&portable).unwrap(), 10);
    }

    #[test]
    fn garbage_is_bad_data() {
        for body in [&b""[..], b"\x63", b"\x02\x05", b"\x00\x85"] {
            let p = seal(body, 11);
            assert!(
                matches!(
                    restore(&p, &LoadOptions::default()),
                    Err(RestoreError::Data(_))
                ),
                "{body:?}"
            );
        }
    }

    #[test]
    fn hashes_with_field_times_round_trip_as_redis_7_4_types() {
        use crate::keyspace::{Hash, HashConfig};
        let cfg = HashConfig::default();
        for (fields, rdb_type) in [(3usize, 25u8), (600, 24)] {
            let mut h = Hash::new();
            for i in 0..fields {
                h.set(format!("f{i}").as_bytes(), b"v", &cfg);
            }
            h.set_field_expiry(b"f1", Some(4_102_444_800_000));
            h.set_field_expiry(b"f2", Some(1_700_000_000_000));
            let p = payload(&Value::Hash(h.clone()), true, Payload::Exact);
            assert_eq!(p[0], rdb_type);
            let Value::Hash(back) = restore(&p, &LoadOptions::default()).unwrap() else {
                panic!("a hash");
            };
            assert_eq!(back.encoding(), h.encoding());
            let all = |h: &Hash| {
                let mut v: Vec<_> = h
                    .iter_with_expiry()
                    .map(|(f, v, t)| (f.to_vec(), v.to_vec(), t))
                    .collect();
                v.sort();
                v
            };
            assert_eq!(all(&back), all(&h));
        }
    }

    /// The fuzz target's property on its seeds (Redis's DUMPs of each type, led by the
    /// version byte): each restores, and DUMPed again in both forms restores the same.
    #[test]
    fn fuzz_seeds_restore_and_round_trip() {
        use crate::keyspace::Db;
        let as_contents = |value: Value| {
            let mut db = Db::default();
            db.insert(b"k", value, 0);
            crate::rdb::contents(&[db])
        };
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/fuzz/corpus/restore_payload");
        let mut seeds = 0;
        for seed in std::fs::read_dir(dir).unwrap() {
            let path = seed.unwrap().path();
            let bytes = std::fs::read(&path).unwrap();
            let (&version, body) = bytes.split_first().unwrap();
            let value = restore(&seal(body, u16::from(version)), &LoadOptions::default())
                .unwrap_or_else(|e| panic!("{path:?}: {e:?}"));
            for kind in [Payload::Exact, Payload::Portable] {
                let again = restore(&payload(&value, true, kind), &LoadOptions::default()).unwrap();
                assert!(as_contents(value.clone()) == as_contents(again), "{path:?}");
            }
            seeds += 1;
        }
        assert!(seeds >= 8);
    }
}
