//! The pure parts of function libraries: the `#!<engine> name=<library>` first line of a
//! library's code (Redis's functionExtractLibMetaData), the names Redis accepts for
//! libraries and functions, the flags a function may carry, and the FUNCTION DUMP
//! payload (what FUNCTION RESTORE reads back).
//!
//! ```text
//! payload:  (0xF5 <code as an RDB string>)*  <RDB version: u16 LE>  <CRC64 of all before: u64 LE>
//! ```

use super::cache::ScriptFlags;
use crate::rdb::crc64;
use crate::rdb::format::{OP_FUNCTION2, OP_FUNCTION_PRE_GA, WRITE_VERSION};
use crate::rdb::read::Input;
use crate::rdb::write::RdbWriter;

/// The error for a bad library or function name.
pub const BAD_NAME: &str = "Library names can only contain letters, numbers, or underscores(_) and must be at least one character long";

/// What the first line of a library's code says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Metadata {
    /// The engine after `#!` (Redis matches it ignoring case).
    pub engine: Vec<u8>,
    /// The library's name (`name=`).
    pub name: Vec<u8>,
    /// Where the code given to the engine starts: the first line's newline, so that
    /// line numbers stay those of the whole text.
    pub code_start: usize,
}

/// Reads the first line of `code`, or Redis's error text (without its `ERR`).
pub fn metadata(code: &[u8]) -> Result<Metadata, String> {
    if !code.starts_with(b"#!") {
        return Err("Missing library metadata".into());
    }
    // The code is a C string to Redis's strchr: a NUL before the newline ends it.
    let Some(end) = code.iter().position(|&b| b == b'\n' || b == 0) else {
        return Err("Invalid library metadata".into());
    };
    if code[end] == 0 {
        return Err("Invalid library metadata".into());
    }
    let parts = split_args(&code[..end]).ok_or("Invalid library metadata")?;
    let Some(first) = parts.first() else {
        return Err("Invalid library metadata".into());
    };
    let engine = first.get(2..).unwrap_or_default().to_vec();
    let mut name = None;
    for part in &parts[1..] {
        if part.len() >= 5 && part[..5].eq_ignore_ascii_case(b"name=") {
            if name.is_some() {
                return Err(
                    "Invalid metadata value, name argument was given multiple times".into(),
                );
            }
            name = Some(part[5..].to_vec());
            continue;
        }
        return Err(format!(
            "Invalid metadata value given: {}",
            String::from_utf8_lossy(part)
        ));
    }
    let name = name.ok_or("Library name was not given")?;
    Ok(Metadata {
        engine,
        name,
        code_start: end,
    })
}

/// Splits a line into arguments as Redis's sdssplitargs does: blanks separate them,
/// double quotes take `\n`, `\xHH`-style escapes, single quotes take `\'`; `None` for
/// unbalanced quotes or a closing quote not followed by a blank.
pub fn split_args(line: &[u8]) -> Option<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    let mut i = 0;
    let blank = |b: u8| matches!(b, b' ' | b'\n' | b'\r' | b'\t' | 0x0b | 0x0c);
    loop {
        while i < line.len() && blank(line[i]) {
            i += 1;
        }
        if i >= line.len() {
            return Some(out);
        }
        let mut current = Vec::new();
        let (mut in_dq, mut in_sq) = (false, false);
        loop {
            if in_dq {
                let c = *line.get(i)?;
                if c == b'\\' && i + 3 < line.len() && line[i + 1] == b'x' {
                    let hex = |b: u8| (b as char).to_digit(16);
                    if let (Some(h), Some(l)) = (hex(line[i + 2]), hex(line[i + 3])) {
                        current.push((h * 16 + l) as u8);
                        i += 4;
                        continue;
                    }
                }
                if c == b'\\' && i + 1 < line.len() {
                    i += 1;
                    current.push(match line[i] {
                        b'n' => b'\n',
                        b'r' => b'\r',
                        b't' => b'\t',
                        b'b' => 8,
                        b'a' => 7,
                        other => other,
                    });
                } else if c == b'"' {
                    if i + 1 < line.len() && !blank(line[i + 1]) {
                        return None;
                    }
                    i += 1;
                    break;
                } else {
                    current.push(c);
                }
            } else if in_sq {
                let c = *line.get(i)?;
                if c == b'\\' && i + 1 < line.len() && line[i + 1] == b'\'' {
                    i += 1;
                    current.push(b'\'');
                } else if c == b'\'' {
                    if i + 1 < line.len() && !blank(line[i + 1]) {
                        return None;
                    }
                    i += 1;
                    break;
                } else {
                    current.push(c);
                }
            } else {
                match line.get(i) {
                    None => break,
                    Some(&c) if blank(c) => break,
                    Some(b'"') => in_dq = true,
                    Some(b'\'') => in_sq = true,
                    Some(&c) => current.push(c),
                }
            }
            i += 1;
        }
        out.push(current);
    }
}

/// Whether `name` is a valid library or function name: letters, digits and `_`, at
/// least one (Redis's functionsVerifyName).
pub fn valid_name(name: &[u8]) -> bool {
    !name.is_empty() && name.iter().all(|&b| b.is_ascii_alphanumeric() || b == b'_')
}

/// The function flags in the order Redis lists them (scripts_flags_def).
pub const FLAG_NAMES: [&str; 5] = [
    "no-writes",
    "allow-oom",
    "allow-stale",
    "no-cluster",
    "allow-cross-slot-keys",
];

/// Sets the flag called `name` (ASCII case ignored); false for an unknown name.
pub fn set_flag(flags: &mut ScriptFlags, name: &[u8]) -> bool {
    let slot = match FLAG_NAMES
        .iter()
        .position(|f| f.as_bytes().eq_ignore_ascii_case(name))
    {
        Some(0) => &mut flags.no_writes,
        Some(1) => &mut flags.allow_oom,
        Some(2) => &mut flags.allow_stale,
        Some(3) => &mut flags.no_cluster,
        Some(4) => &mut flags.allow_cross_slot,
        _ => return false,
    };
    *slot = true;
    true
}

/// The names of the flags set, in Redis's order.
pub fn flag_names(flags: &ScriptFlags) -> Vec<&'static str> {
    let set = [
        flags.no_writes,
        flags.allow_oom,
        flags.allow_stale,
        flags.no_cluster,
        flags.allow_cross_slot,
    ];
    FLAG_NAMES
        .iter()
        .zip(set)
        .filter(|(_, on)| *on)
        .map(|(name, _)| *name)
        .collect()
}

/// The FUNCTION DUMP payload of these library codes (strings LZF-compressed when
/// `compress`, as rdbcompression does).
pub fn dump_payload<'a>(codes: impl IntoIterator<Item = &'a [u8]>, compress: bool) -> Vec<u8> {
    let mut w = RdbWriter::new(Vec::new());
    let write = || -> std::io::Result<()> {
        for code in codes {
            w.byte(OP_FUNCTION2)?;
            w.string_value(code, compress)?;
        }
        Ok(())
    };
    // Writing to a Vec cannot fail.
    let _ = write();
    let (mut out, _) = w.finish().unwrap_or_default();
    // finish wrote the EOF opcode and a checksum: the payload has neither.
    out.truncate(out.len().saturating_sub(9));
    out.extend_from_slice(&(WRITE_VERSION as u16).to_le_bytes());
    let crc = crc64::update(0, &out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// The newest RDB version a payload may carry: Redis 7.2's (its verifyDumpPayload refuses
/// versions newer than its own).
const READ_VERSION: u16 = 11;

/// The library codes of a FUNCTION RESTORE payload, or Redis's error text.
pub fn read_payload(payload: &[u8]) -> Result<Vec<Vec<u8>>, String> {
    if payload.len() < 10 {
        return Err("DUMP payload version or checksum are wrong".into());
    }
    let footer = &payload[payload.len() - 10..];
    let version = u16::from_le_bytes([footer[0], footer[1]]);
    let crc = u64::from_le_bytes(footer[2..].try_into().expect("8 bytes"));
    let expected = crc64::update(0, &payload[..payload.len() - 8]);
    if version > READ_VERSION || crc != expected {
        return Err("DUMP payload version or checksum are wrong".into());
    }
    // As Redis: items are read while more than the footer's 10 bytes remain, and a string
    // may run into the footer.
    let mut input = Input::new(payload);
    let mut codes = Vec::new();
    while payload.len() - input.offset() as usize > 10 {
        match input.u8() {
            Ok(OP_FUNCTION_PRE_GA) => return Err("Pre-GA function format not supported".into()),
            Ok(OP_FUNCTION2) => {}
            Ok(_) => return Err("given type is not a function".into()),
            Err(_) => return Err("can not read data type".into()),
        }
        let mut code = Vec::new();
        if input.string(&mut code).is_err() {
            return Err("Failed loading library payload".into());
        }
        codes.push(code);
    }
    Ok(codes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_as_redis_reads_it() {
        let md = metadata(b"#!lua name=mylib\nreturn 1").unwrap();
        assert_eq!(md.engine, b"lua");
        assert_eq!(md.name, b"mylib");
        assert_eq!(md.code_start, 16);
        let md = metadata(b"#!LUA NAME=\"a b\"\n").unwrap();
        assert_eq!(
            (md.engine.as_slice(), md.name.as_slice()),
            (&b"LUA"[..], &b"a b"[..])
        );
        for (code, error) in [
            (&b"lua name=a\n"[..], "Missing library metadata"),
            (b"#!lua name=a", "Invalid library metadata"),
            (b"#!lua name=\"a\n", "Invalid library metadata"),
            (b"#!lua foo=bar\n", "Invalid metadata value given: foo=bar"),
            (
                b"#!lua name=a name=b\n",
                "Invalid metadata value, name argument was given multiple times",
            ),
            (b"#!lua\n", "Library name was not given"),
        ] {
            assert_eq!(metadata(code).unwrap_err(), error, "{code:?}");
        }
    }

    #[test]
    fn names_and_flags() {
        assert!(valid_name(b"a_1Z"));
        assert!(!valid_name(b""));
        assert!(!valid_name(b"a-b"));
        let mut flags = ScriptFlags::default();
        assert!(set_flag(&mut flags, b"NO-WRITES"));
        assert!(set_flag(&mut flags, b"allow-stale"));
        assert!(!set_flag(&mut flags, b"nope"));
        assert_eq!(flag_names(&flags), ["no-writes", "allow-stale"]);
    }

    #[test]
    fn payload_round_trip_and_errors() {
        let codes: Vec<&[u8]> = vec![b"#!lua name=a\nx", &[b'y'; 100]];
        for compress in [false, true] {
            let payload = dump_payload(codes.iter().copied(), compress);
            assert_eq!(read_payload(&payload).unwrap(), codes);
        }
        let empty = dump_payload([], true);
        assert_eq!(empty.len(), 10);
        assert_eq!(read_payload(&empty).unwrap(), Vec::<Vec<u8>>::new());
        let mut bad = dump_payload(codes.iter().copied(), false);
        bad[3] ^= 1;
        assert_eq!(
            read_payload(&bad).unwrap_err(),
            "DUMP payload version or checksum are wrong"
        );
        assert!(read_payload(b"short").is_err());
    }

    proptest::proptest! {
        /// Any body behind a valid footer reads without a panic, and what it reads comes
        /// back the same through the writer (the fuzz target's property, on the stable
        /// toolchain).
        #[test]
        fn any_payload_body_reads_or_fails_cleanly(
            body in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..300),
            cut in 0usize..300,
        ) {
            let mut payload = body.clone();
            payload.extend_from_slice(&10u16.to_le_bytes());
            let crc = crc64::update(0, &payload);
            payload.extend_from_slice(&crc.to_le_bytes());
            if let Ok(codes) = read_payload(&payload) {
                for code in &codes {
                    let _ = metadata(code);
                }
                let again = dump_payload(codes.iter().map(Vec::as_slice), true);
                proptest::prop_assert_eq!(read_payload(&again).unwrap(), codes);
            }
            let _ = read_payload(&payload[..cut.min(payload.len())]);
        }
    }
}
