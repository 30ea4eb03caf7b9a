//! The script cache: compiled scripts by SHA1 (the lowercase hex digest of the body, as
//! Redis's sha1hex), each with the flags of its `#!lua` shebang line.

use mlua::Function;
use sha1::{Digest, Sha1};
use std::collections::HashMap;
use std::rc::Rc;

/// The lowercase hex SHA1 of `bytes` (Redis's sha1hex, redis.sha1hex).
pub fn sha1hex(bytes: &[u8]) -> String {
    let digest = Sha1::digest(bytes);
    let mut out = String::with_capacity(40);
    for b in digest {
        out.push(char::from_digit((b >> 4) as u32, 16).expect("nibble"));
        out.push(char::from_digit((b & 15) as u32, 16).expect("nibble"));
    }
    out
}

/// The flags a `#!lua flags=...` line gives a script.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ScriptFlags {
    /// No shebang: the script runs as before Redis 7 (may write; OOM checked per command).
    pub compat: bool,
    /// no-writes
    pub no_writes: bool,
    /// allow-oom
    pub allow_oom: bool,
    /// allow-stale
    pub allow_stale: bool,
    /// no-cluster
    pub no_cluster: bool,
    /// allow-cross-slot-keys
    pub allow_cross_slot: bool,
}

/// Reads the shebang line of `body`, as Redis's evalExtractShebangFlags: the flags and the
/// length of the line (kept out of the compiled code, its newline kept so line numbers
/// stay), or Redis's error text.
pub fn shebang(body: &[u8]) -> Result<(ScriptFlags, usize), String> {
    if !body.starts_with(b"#!") {
        let flags = ScriptFlags {
            compat: true,
            ..ScriptFlags::default()
        };
        return Ok((flags, 0));
    }
    let Some(end) = body.iter().position(|&b| b == b'\n') else {
        return Err("Invalid script shebang".into());
    };
    let line = String::from_utf8_lossy(&body[..end]);
    let mut parts = line.split_ascii_whitespace();
    let Some(engine) = parts.next() else {
        return Err("Invalid engine in script shebang".into());
    };
    if engine != "#!lua" {
        return Err(format!("Unexpected engine in script shebang: {engine}"));
    }
    let mut flags = ScriptFlags::default();
    for part in parts {
        let Some(list) = part.strip_prefix("flags=") else {
            return Err(format!("Unknown lua shebang option: {part}"));
        };
        // `flags=` alone declares no flags (Redis splits an empty list into none).
        for flag in list.split(',').filter(|_| !list.is_empty()) {
            let slot = match flag {
                "no-writes" => &mut flags.no_writes,
                "allow-oom" => &mut flags.allow_oom,
                "allow-stale" => &mut flags.allow_stale,
                "no-cluster" => &mut flags.no_cluster,
                "allow-cross-slot-keys" => &mut flags.allow_cross_slot,
                _ => return Err(format!("Unexpected flag in script shebang: {flag}")),
            };
            *slot = true;
        }
    }
    Ok((flags, end))
}

/// One cached script.
pub struct Script {
    /// Its SHA1.
    pub sha: String,
    /// Its shebang flags.
    pub flags: ScriptFlags,
    /// The compiled body.
    pub function: Function,
    /// Bytes of the body (INFO used_memory_scripts_eval).
    pub body_len: usize,
}

/// The scripts by SHA1.
#[derive(Default)]
pub struct Cache {
    scripts: HashMap<String, Rc<Script>>,
    body_bytes: usize,
}

impl Cache {
    /// The script with this SHA1 (ASCII case ignored, as Redis's dictionary compares).
    pub fn get(&self, sha: &[u8]) -> Option<Rc<Script>> {
        if sha.len() != 40 {
            return None;
        }
        let lower = String::from_utf8_lossy(&sha.to_ascii_lowercase()).into_owned();
        self.scripts.get(&lower).cloned()
    }

    /// Adds a compiled script.
    pub fn insert(&mut self, script: Script) -> Rc<Script> {
        let script = Rc::new(script);
        self.body_bytes += script.body_len;
        self.scripts.insert(script.sha.clone(), script.clone());
        script
    }

    /// Number of scripts (INFO number_of_cached_scripts).
    pub fn len(&self) -> usize {
        self.scripts.len()
    }

    /// Whether the cache is empty.
    pub fn is_empty(&self) -> bool {
        self.scripts.is_empty()
    }

    /// The memory the cache holds outside the interpreter, counted as Redis's
    /// evalScriptsMemory counts it: each SHA and body, a dictionary entry and a script
    /// record per script, a pointer per bucket.
    pub fn memory(&self) -> usize {
        let per_script = 48 + 24 + 16;
        self.body_bytes
            + self.scripts.len() * per_script
            + self.scripts.capacity() * std::mem::size_of::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha1hex_is_lowercase_hex_of_the_body() {
        assert_eq!(sha1hex(b""), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
        assert_eq!(
            sha1hex(b"return 1"),
            "e0e1f9fabfc9d4800c877a703b823ac0578ff8db"
        );
    }

    #[test]
    fn shebang_flags_and_errors_as_redis_words_them() {
        let (flags, len) = shebang(b"return 1").unwrap();
        assert!(flags.compat);
        assert_eq!(len, 0);
        let (flags, len) = shebang(b"#!lua flags=no-writes,allow-oom\nreturn 1").unwrap();
        assert!(flags.no_writes && flags.allow_oom && !flags.compat && !flags.allow_stale);
        assert_eq!(len, 31);
        let (flags, _) = shebang(b"#!lua\nreturn 1").unwrap();
        assert_eq!(flags, ScriptFlags::default());
        let (flags, _) = shebang(b"#!lua flags=\nreturn 1").unwrap();
        assert_eq!(flags, ScriptFlags::default());
        for (body, error) in [
            (&b"#!lua"[..], "Invalid script shebang"),
            (
                b"#!python\n",
                "Unexpected engine in script shebang: #!python",
            ),
            (
                b"#!lua flags=nope\n",
                "Unexpected flag in script shebang: nope",
            ),
            (b"#!lua name=x\n", "Unknown lua shebang option: name=x"),
            (
                b"#!lua flags=no-writes,\n",
                "Unexpected flag in script shebang: ",
            ),
            (b"#! \n", "Unexpected engine in script shebang: #!"),
        ] {
            assert_eq!(shebang(body).unwrap_err(), error);
        }
    }
}
