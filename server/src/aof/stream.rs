//! Reading a commands file (an incremental file, or a base without the RDB preamble) as
//! Redis's loadSingleAppendOnlyFile does, command by command:
//!
//! ```text
//! #TS:1700000000\r\n                  annotation line: skipped
//! *<argc>\r\n                         argc >= 1, else a format error
//! $<len>\r\n<len bytes>\r\n           argc times ('$' missing: format error)
//! ```
//!
//! The file ending inside a command is a truncation (loadable up to the last whole
//! command under aof-load-truncated); anything else malformed is a format error.

/// The longest line read at once (AOF_ANNOTATION_LINE_MAX_LEN).
const LINE_MAX: usize = 1024;

/// Why a command could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bad {
    /// The file ends inside the command.
    Truncated,
    /// The bytes are not a command.
    Format,
}

/// A cursor over a commands file's bytes.
pub struct Commands<'a> {
    data: &'a [u8],
    /// Offset of the next byte.
    pub pos: usize,
}

impl<'a> Commands<'a> {
    /// Reads `data` from `pos`.
    pub fn new(data: &'a [u8], pos: usize) -> Self {
        Commands { data, pos }
    }

    /// A line as C's fgets reads it into a buffer of LINE_MAX: up to and with its
    /// newline, at most LINE_MAX - 1 bytes; None at the end of the data.
    fn line(&mut self) -> Option<&'a [u8]> {
        let rest = &self.data[self.pos..];
        if rest.is_empty() {
            return None;
        }
        let cap = rest.len().min(LINE_MAX - 1);
        let n = rest[..cap]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(cap, |i| i + 1);
        self.pos += n;
        Some(&rest[..n])
    }

    /// The next command; Ok(None) at the end of the data.
    pub fn next_command(&mut self) -> Result<Option<Vec<Vec<u8>>>, Bad> {
        let header = loop {
            match self.line() {
                None => return Ok(None),
                Some(l) if l[0] == b'#' => continue,
                Some(l) => break l,
            }
        };
        if header[0] != b'*' {
            return Err(Bad::Format);
        }
        if header.len() == 1 {
            return Err(Bad::Truncated);
        }
        let argc = atoi(&header[1..]);
        if argc < 1 {
            return Err(Bad::Format);
        }
        let mut argv = Vec::with_capacity((argc as usize).min(1024));
        for _ in 0..argc {
            let Some(line) = self.line() else {
                return Err(Bad::Truncated);
            };
            if line[0] != b'$' {
                return Err(Bad::Format);
            }
            let len = atoi(&line[1..]).max(0) as usize;
            let rest = self.data.len() - self.pos;
            if len > rest {
                return Err(Bad::Truncated);
            }
            argv.push(self.data[self.pos..self.pos + len].to_vec());
            self.pos += len;
            if self.data.len() - self.pos < 2 {
                return Err(Bad::Truncated);
            }
            self.pos += 2;
        }
        Ok(Some(argv))
    }
}

/// C's atoi / strtol: optional spaces and sign, then the digits up to the first other
/// byte (saturating).
fn atoi(bytes: &[u8]) -> i64 {
    let mut i = 0;
    while i < bytes.len() && bytes[i].is_ascii_whitespace() {
        i += 1;
    }
    let neg = bytes.get(i) == Some(&b'-');
    if matches!(bytes.get(i), Some(b'-' | b'+')) {
        i += 1;
    }
    let mut v: i64 = 0;
    while let Some(d) = bytes.get(i).filter(|b| b.is_ascii_digit()) {
        v = v.saturating_mul(10).saturating_add((d - b'0') as i64);
        i += 1;
    }
    if neg {
        -v
    } else {
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(data: &[u8]) -> (Vec<Vec<Vec<u8>>>, Option<Bad>, usize) {
        let mut c = Commands::new(data, 0);
        let mut out = Vec::new();
        let mut valid = 0;
        loop {
            match c.next_command() {
                Ok(Some(cmd)) => {
                    out.push(cmd);
                    valid = c.pos;
                }
                Ok(None) => return (out, None, valid),
                Err(b) => return (out, Some(b), valid),
            }
        }
    }

    #[test]
    fn commands_and_annotations() {
        let data = b"#TS:1700000000\r\n*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n";
        let (cmds, bad, valid) = all(data);
        assert_eq!(bad, None);
        assert_eq!(valid, data.len());
        assert_eq!(cmds[1], [b"SET".to_vec(), b"k".to_vec(), Vec::new()]);
    }

    #[test]
    fn a_file_cut_anywhere_in_its_last_command_is_truncated() {
        let whole = b"*1\r\n$4\r\nPING\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nvalue\r\n";
        let first = 14;
        for cut in first + 1..whole.len() {
            let (cmds, bad, valid) = all(&whole[..cut]);
            assert_eq!(cmds.len(), 1, "cut at {cut}");
            assert_eq!(bad, Some(Bad::Truncated), "cut at {cut}");
            assert_eq!(valid, first);
        }
    }

    #[test]
    fn garbage_is_a_format_error() {
        assert_eq!(all(b"*1\r\n$4\r\nPING\r\nhello\r\n").1, Some(Bad::Format));
        assert_eq!(all(b"*0\r\n").1, Some(Bad::Format));
        assert_eq!(all(b"*1\r\nPING\r\n").1, Some(Bad::Format));
        assert_eq!(all(b"*").1, Some(Bad::Truncated));
    }
}
