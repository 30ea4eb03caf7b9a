//! The manifest: which files of the AOF directory make the dataset, in Redis 7's format
//! (aofInfoFormat / aofLoadManifestFromFile), and their names.
//!
//! ```text
//! appendonlydir/
//!   appendonly.aof.manifest          file appendonly.aof.2.base.rdb seq 2 type b
//!                                    file appendonly.aof.1.incr.aof seq 1 type h
//!                                    file appendonly.aof.3.incr.aof seq 3 type i
//!                                    file appendonly.aof.4.incr.aof seq 4 type i
//!   appendonly.aof.2.base.rdb        the base: an RDB file (aof-use-rdb-preamble yes)
//!                                    or commands (...base.aof)
//!   appendonly.aof.3.incr.aof        commands after the base, in order; the last one
//!   appendonly.aof.4.incr.aof        takes the writes
//!   temp-rewriteaof-bg-<pid>.aof     a rewrite child's new base, while it runs (in `dir`)
//!   temp-appendonly.aof.incr         the writes during the first rewrite (appendonly
//!                                    turned on at run time)
//! ```
//!
//! One line per file: base first, then history (files a rewrite replaced, deleted
//! after it), then the incremental files by increasing seq. A name with spaces, quotes or
//! unprintable bytes is written quoted with C escapes (sdscatrepr) and read back by
//! Redis's argument splitter (sdssplitargs); `#` lines are comments; keys are matched
//! case-insensitively and unknown key pairs are ignored (forward compatibility).

use crate::resp::parse::split_args;
use std::fmt;

/// What a file is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The base (`b`).
    Base,
    /// Replaced by a rewrite, to be deleted (`h`).
    History,
    /// Commands after the base (`i`).
    Incr,
}

impl Kind {
    fn letter(self) -> char {
        match self {
            Kind::Base => 'b',
            Kind::History => 'h',
            Kind::Incr => 'i',
        }
    }
}

/// One file of the manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AofFile {
    /// Its name in the directory.
    pub name: String,
    /// Its sequence number.
    pub seq: i64,
    /// What it is.
    pub kind: Kind,
}

/// The files of the AOF directory (Redis's aofManifest).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Manifest {
    /// The base file.
    pub base: Option<AofFile>,
    /// Files to delete, newest first.
    pub history: Vec<AofFile>,
    /// Incremental files, oldest first.
    pub incrs: Vec<AofFile>,
    /// The seq of the newest base.
    pub base_seq: i64,
    /// The seq of the newest incremental file.
    pub incr_seq: i64,
}

/// A manifest that does not parse: the line (1-based, 0 for the whole file), its text and
/// Redis's reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestError {
    /// The line number.
    pub line: usize,
    /// The line, trimmed.
    pub text: Option<String>,
    /// Redis's words for the error.
    pub reason: &'static str,
}

impl fmt::Display for ManifestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.reason)
    }
}

/// The longest line Redis reads (MANIFEST_MAX_LINE).
const MAX_LINE: usize = 1024;

/// The manifest's name for `filename` (appendfilename).
pub fn manifest_name(filename: &str) -> String {
    format!("{filename}.manifest")
}

/// The temporary manifest written before the rename.
pub fn temp_manifest_name(filename: &str) -> String {
    format!("temp-{filename}.manifest")
}

/// The incremental file that takes the writes during the first rewrite.
pub fn temp_incr_name(filename: &str) -> String {
    format!("temp-{filename}.incr")
}

impl Manifest {
    /// Parses a manifest's bytes as Redis 7 does.
    pub fn parse(bytes: &[u8]) -> Result<Manifest, ManifestError> {
        let mut m = Manifest::default();
        let mut max_seq = 0;
        let err = |line, text: Option<&str>, reason| ManifestError {
            line,
            text: text.map(str::to_owned),
            reason,
        };
        if bytes.is_empty() {
            return Err(err(0, None, "Found an empty AOF manifest"));
        }
        let mut rest = bytes;
        let mut lineno = 0;
        while !rest.is_empty() {
            // fgets reads at most MAX_LINE bytes a call: a longer line reads as two.
            let take = rest
                .iter()
                .take(MAX_LINE)
                .position(|&b| b == b'\n')
                .map_or(rest.len().min(MAX_LINE), |i| i + 1);
            let (raw, tail) = rest.split_at(take);
            rest = tail;
            lineno += 1;
            if raw[0] == b'#' {
                continue;
            }
            let line = String::from_utf8_lossy(raw);
            let trimmed = line.trim_matches(|c| matches!(c, ' ' | '\t' | '\r' | '\n'));
            if raw.last() != Some(&b'\n') {
                return Err(err(
                    lineno,
                    None,
                    "The AOF manifest file contains too long line",
                ));
            }
            let invalid = |reason| err(lineno, Some(trimmed), reason);
            if trimmed.is_empty() {
                return Err(invalid("Invalid AOF manifest file format"));
            }
            let args = split_args(trimmed.as_bytes())
                .filter(|a| a.len() >= 6 && a.len() % 2 == 0)
                .ok_or_else(|| invalid("Invalid AOF manifest file format"))?;
            let (mut name, mut seq, mut kind) = (None, 0i64, None);
            for pair in args.chunks(2) {
                let key = String::from_utf8_lossy(&pair[0]).to_ascii_lowercase();
                match key.as_str() {
                    "file" => {
                        let n = String::from_utf8_lossy(&pair[1]).into_owned();
                        if n.contains('/') {
                            return Err(invalid("File can't be a path, just a filename"));
                        }
                        name = Some(n);
                    }
                    "seq" => seq = atoll(&pair[1]),
                    "type" => kind = Some(pair[1].first().copied().unwrap_or(0)),
                    _ => {}
                }
            }
            let (Some(name), Some(kind)) = (name, kind.filter(|&k| k != 0)) else {
                return Err(invalid("Invalid AOF manifest file format"));
            };
            if seq == 0 {
                return Err(invalid("Invalid AOF manifest file format"));
            }
            match kind {
                b'b' => {
                    if m.base.is_some() {
                        return Err(invalid("Found duplicate base file information"));
                    }
                    m.base = Some(AofFile {
                        name,
                        seq,
                        kind: Kind::Base,
                    });
                    m.base_seq = seq;
                }
                b'h' => m.history.push(AofFile {
                    name,
                    seq,
                    kind: Kind::History,
                }),
                b'i' => {
                    if seq <= max_seq {
                        return Err(invalid("Found a non-monotonic sequence number"));
                    }
                    m.incrs.push(AofFile {
                        name,
                        seq,
                        kind: Kind::Incr,
                    });
                    m.incr_seq = seq;
                    max_seq = seq;
                }
                _ => return Err(invalid("Unknown AOF file type")),
            }
        }
        Ok(m)
    }

    /// The manifest as Redis writes it (getAofManifestAsString).
    pub fn format(&self) -> String {
        let mut out = String::new();
        for f in self.base.iter().chain(&self.history).chain(&self.incrs) {
            out.push_str(&format!(
                "file {} seq {} type {}\n",
                quoted(&f.name),
                f.seq,
                f.kind.letter()
            ));
        }
        out
    }

    /// A new base's name (`<filename>.<seq>.base.rdb` or `.aof`); the old base becomes
    /// history.
    pub fn new_base(&mut self, filename: &str, rdb: bool) -> String {
        if let Some(mut old) = self.base.take() {
            old.kind = Kind::History;
            self.history.insert(0, old);
        }
        self.base_seq += 1;
        let name = format!(
            "{filename}.{}.base.{}",
            self.base_seq,
            if rdb { "rdb" } else { "aof" }
        );
        self.base = Some(AofFile {
            name: name.clone(),
            seq: self.base_seq,
            kind: Kind::Base,
        });
        name
    }

    /// A new incremental file's name (`<filename>.<seq>.incr.aof`), added last.
    pub fn new_incr(&mut self, filename: &str) -> String {
        self.incr_seq += 1;
        let name = format!("{filename}.{}.incr.aof", self.incr_seq);
        self.incrs.push(AofFile {
            name: name.clone(),
            seq: self.incr_seq,
            kind: Kind::Incr,
        });
        name
    }

    /// The incremental files a finished rewrite covered become history: all of them, or
    /// all but the last when `keep_last` (the one taking the writes).
    pub fn rewritten_incrs_to_history(&mut self, keep_last: bool) {
        let keep = usize::from(keep_last).min(self.incrs.len());
        let covered = self.incrs.len() - keep;
        // Redis walks them from the newest, each put first: oldest first in the end.
        let drained: Vec<AofFile> = self.incrs.drain(..covered).collect();
        for mut f in drained.into_iter().rev() {
            f.kind = Kind::History;
            self.history.insert(0, f);
        }
    }

    /// The base and incremental files, in loading order.
    pub fn files(&self) -> impl Iterator<Item = &AofFile> {
        self.base.iter().chain(&self.incrs)
    }
}

/// C's atoll: optional spaces and sign, then digits up to the first other byte.
fn atoll(bytes: &[u8]) -> i64 {
    let text = String::from_utf8_lossy(bytes);
    let t = text.trim_start();
    let (neg, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let end = digits
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(digits.len());
    let v = digits[..end].bytes().fold(0i64, |acc, d| {
        acc.wrapping_mul(10).wrapping_add((d - b'0') as i64)
    });
    if neg {
        v.wrapping_neg()
    } else {
        v
    }
}

/// `name` as sdscatrepr writes it when sdsneedsrepr says so, else as is. Two names Redis
/// writes bare and then cannot read back are quoted too: the empty name (a bare one is a
/// missing word) and a name with a single quote (which opens a quoted word in
/// sdssplitargs). Redis reads both quoted forms.
fn quoted(name: &str) -> String {
    let needs = name.is_empty()
        || name.bytes().any(|b| {
            matches!(b, b'\\' | b'"' | b'\'' | b'\n' | b'\r' | b'\t' | 7 | 8)
                || !(0x20..0x7f).contains(&b)
                || b == b' '
        });
    if !needs {
        return name.to_owned();
    }
    let mut out = String::from("\"");
    for b in name.bytes() {
        match b {
            b'\\' => out.push_str("\\\\"),
            b'"' => out.push_str("\\\""),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            7 => out.push_str("\\a"),
            8 => out.push_str("\\b"),
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\x{b:02x}")),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redis_manifest_parses_and_formats_back() {
        let text = "file appendonly.aof.2.base.rdb seq 2 type b\n\
                    file appendonly.aof.1.incr.aof seq 1 type h\n\
                    file appendonly.aof.3.incr.aof seq 3 type i\n\
                    file appendonly.aof.4.incr.aof seq 4 type i\n";
        let m = Manifest::parse(text.as_bytes()).unwrap();
        assert_eq!(m.base_seq, 2);
        assert_eq!(m.incr_seq, 4);
        assert_eq!(m.history.len(), 1);
        let names: Vec<_> = m.files().map(|f| f.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "appendonly.aof.2.base.rdb",
                "appendonly.aof.3.incr.aof",
                "appendonly.aof.4.incr.aof"
            ]
        );
        assert_eq!(m.format(), text);
    }

    #[test]
    fn names_redis_would_write_bare_and_not_read_back_are_quoted() {
        let text = "file \"\" seq 1 type b\nfile \"a'b\" seq 2 type i\n";
        let m = Manifest::parse(text.as_bytes()).unwrap();
        assert_eq!(m.format(), text);
        assert_eq!(
            Manifest::parse(m.format().as_bytes()).unwrap().format(),
            text
        );
    }

    #[test]
    fn comments_unknown_keys_and_case_are_accepted() {
        let text = "# comment\nFILE a seq 1 TYPE b extra x\n";
        let m = Manifest::parse(text.as_bytes()).unwrap();
        assert_eq!(m.base.unwrap().name, "a");
    }

    #[test]
    fn errors_are_redis_words() {
        let reason = |t: &str| Manifest::parse(t.as_bytes()).unwrap_err().reason;
        assert_eq!(reason(""), "Found an empty AOF manifest");
        assert_eq!(
            reason("file a seq 1 type b"),
            "The AOF manifest file contains too long line"
        );
        assert_eq!(reason("\n"), "Invalid AOF manifest file format");
        assert_eq!(reason("file a seq 1\n"), "Invalid AOF manifest file format");
        assert_eq!(
            reason("file a seq x type b\n"),
            "Invalid AOF manifest file format"
        );
        assert_eq!(
            reason("file d/a seq 1 type b\n"),
            "File can't be a path, just a filename"
        );
        assert_eq!(
            reason("file a seq 1 type b\nfile b seq 2 type b\n"),
            "Found duplicate base file information"
        );
        assert_eq!(
            reason("file a seq 2 type i\nfile b seq 2 type i\n"),
            "Found a non-monotonic sequence number"
        );
        assert_eq!(reason("file a seq 1 type x\n"), "Unknown AOF file type");
        assert_eq!(
            reason("file \"a seq 1 type b\n"),
            "Invalid AOF manifest file format"
        );
        let long = format!("file {} seq 1 type b\n", "a".repeat(1100));
        assert_eq!(
            reason(&long),
            "The AOF manifest file contains too long line"
        );
        let e = Manifest::parse(b"file a seq 1 type b\nfile a seq 1 type z\n").unwrap_err();
        assert_eq!(
            (e.line, e.text.as_deref()),
            (2, Some("file a seq 1 type z"))
        );
    }

    #[test]
    fn names_that_need_quoting_round_trip() {
        for name in [
            "my aof",
            "q\"uote",
            "tab\there",
            "nl\n",
            "bs\\",
            "\u{7f}x",
            "é",
        ] {
            let m = Manifest {
                base: Some(AofFile {
                    name: name.into(),
                    seq: 1,
                    kind: Kind::Base,
                }),
                ..Manifest::default()
            };
            let text = m.format();
            assert!(text.starts_with("file \""), "{text}");
            let back = Manifest::parse(text.as_bytes()).unwrap();
            assert_eq!(back.base.unwrap().name, name);
        }
    }

    #[test]
    fn a_rewrite_moves_the_covered_files_to_history() {
        let mut m = Manifest::default();
        assert_eq!(
            m.new_base("appendonly.aof", true),
            "appendonly.aof.1.base.rdb"
        );
        assert_eq!(m.new_incr("appendonly.aof"), "appendonly.aof.1.incr.aof");
        assert_eq!(m.new_incr("appendonly.aof"), "appendonly.aof.2.incr.aof");
        assert_eq!(
            m.new_base("appendonly.aof", false),
            "appendonly.aof.2.base.aof"
        );
        m.rewritten_incrs_to_history(true);
        assert_eq!(
            m.format(),
            "file appendonly.aof.2.base.aof seq 2 type b\n\
             file appendonly.aof.1.incr.aof seq 1 type h\n\
             file appendonly.aof.1.base.rdb seq 1 type h\n\
             file appendonly.aof.2.incr.aof seq 2 type i\n"
        );
    }
}
