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

use crate::numbers::strtol;

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

/// One command read: its arguments, None at the end of the data, or why it could not be.
pub type Parsed = Result<Option<Vec<Vec<u8>>>, Bad>;

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
    pub fn next_command(&mut self) -> Parsed {
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
        let argc = strtol(&header[1..]);
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
            let len = strtol(&line[1..]).max(0) as usize;
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

/// The part of a commands file in memory while it is replayed: a window that slides over
/// the file, so a file of any size costs a few MiB however long it is (a whole-file read
/// would hold all of it for the length of the load).
///
/// ```text
/// file:   |<- replayed ->|<------------- buf ------------->|<-- not read yet -->|
///                        base                    base + buf.len()
/// ```
///
/// A command is parsed from the window; when it runs past the window's end (the parser
/// says Truncated, or sees no more data) the window slides to the command's start and
/// reads on, doubling when one command is larger than the whole window. Only at the end
/// of the file is a Truncated answer the file's.
pub struct FileWindow {
    /// Bytes of the file from offset `base`.
    pub buf: Vec<u8>,
    /// The file offset of `buf[0]`.
    pub base: u64,
    /// Whether `buf` reaches the end of the file.
    pub eof: bool,
}

/// The window's size before any command needs it larger.
const WINDOW_BYTES: usize = 4 << 20;

impl FileWindow {
    /// An empty window at file offset `at` (nothing read yet).
    pub fn at(at: u64) -> Self {
        FileWindow {
            buf: Vec::new(),
            base: at,
            eof: false,
        }
    }

    /// The command at file offset `at` (at or after `base`) and the offset after it, read
    /// on from `reader` (positioned at `base + buf.len()`) as far as the command needs:
    /// Ok(None) at the end of the file, Truncated only when the file ends inside it.
    pub fn command_at(
        &mut self,
        at: u64,
        reader: &mut impl std::io::Read,
    ) -> std::io::Result<(Parsed, u64)> {
        loop {
            let mut commands = Commands::new(&self.buf, (at - self.base) as usize);
            let parsed = commands.next_command();
            if matches!(parsed, Ok(None) | Err(Bad::Truncated)) && !self.eof {
                self.slide(at, reader)?;
                continue;
            }
            return Ok((parsed, self.base + commands.pos as u64));
        }
    }

    /// Slides the window to file offset `from` (at or after `base`) and reads on from
    /// `reader` until it is full or the file ends, straight into the buffer's spare
    /// capacity (nothing is zero-filled first).
    fn slide(&mut self, from: u64, reader: &mut impl std::io::Read) -> std::io::Result<()> {
        use std::io::Read;
        let keep_from = (from - self.base) as usize;
        self.buf.drain(..keep_from);
        self.base = from;
        let want = if self.buf.len() >= WINDOW_BYTES / 2 {
            // One command fills most of the window: make room for it to be whole.
            self.buf.len() * 2
        } else {
            WINDOW_BYTES
        };
        let room = want - self.buf.len();
        self.buf.reserve_exact(room);
        // Bytes read before an error stay in the buffer, as the parser may use them.
        let got = reader
            .by_ref()
            .take(room as u64)
            .read_to_end(&mut self.buf)?;
        self.eof = got < room;
        Ok(())
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

    /// Every command of `data` read through a window, as the replay reads a file.
    fn through_window(data: &[u8]) -> (Vec<Vec<Vec<u8>>>, Option<Bad>, u64) {
        read_through_window(&mut std::io::Cursor::new(data))
    }

    fn read_through_window(
        reader: &mut impl std::io::Read,
    ) -> (Vec<Vec<Vec<u8>>>, Option<Bad>, u64) {
        let mut window = FileWindow::at(0);
        let (mut out, mut at) = (Vec::new(), 0);
        loop {
            match window.command_at(at, reader).expect("in memory") {
                (Ok(Some(cmd)), next) => {
                    out.push(cmd);
                    at = next;
                }
                (Ok(None), _) => return (out, None, at),
                (Err(b), _) => return (out, Some(b), at),
            }
        }
    }

    #[test]
    fn a_window_reads_commands_across_its_edges_and_larger_than_itself() {
        let mut data = Vec::new();
        for i in 0..200_000 {
            data.extend_from_slice(
                format!("*3\r\n$3\r\nSET\r\n$8\r\nk{i:07}\r\n$2\r\nvv\r\n").as_bytes(),
            );
        }
        let big = vec![b'x'; 3 * WINDOW_BYTES + 7];
        data.extend_from_slice(
            format!("*3\r\n$3\r\nSET\r\n$3\r\nbig\r\n${}\r\n", big.len()).as_bytes(),
        );
        data.extend_from_slice(&big);
        data.extend_from_slice(b"\r\n#TS:1\r\n*1\r\n$4\r\nPING\r\n");
        let whole = all(&data);
        let windowed = through_window(&data);
        assert_eq!(windowed.0.len(), 200_002);
        assert_eq!(windowed.0[200_000][2].len(), big.len());
        assert_eq!((windowed.1, windowed.2), (whole.1, whole.2 as u64));
        assert!(windowed.0 == whole.0);
        // Cut inside the big value: a truncation at the big command's start.
        let cut = data.len() - 100;
        let (cmds, bad, valid) = through_window(&data[..cut]);
        assert_eq!((cmds.len(), bad), (200_000, Some(Bad::Truncated)));
        assert_eq!(valid, all(&data[..cut]).2 as u64);
    }

    /// A pipe-like reader: at most 5 bytes a call, and every other call interrupted.
    struct Trickle<'a> {
        data: &'a [u8],
        calls: usize,
    }

    impl std::io::Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            self.calls += 1;
            if self.calls.is_multiple_of(2) {
                return Err(std::io::ErrorKind::Interrupted.into());
            }
            let n = buf.len().min(5).min(self.data.len());
            buf[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    #[test]
    fn a_window_fills_from_short_and_interrupted_reads() {
        let mut data = Vec::new();
        for i in 0..2000 {
            data.extend_from_slice(format!("*2\r\n$3\r\nGET\r\n$5\r\nk{i:04}\r\n").as_bytes());
        }
        data.extend_from_slice(b"*1\r\n$4\r\nPI");
        let mut reader = Trickle {
            data: &data,
            calls: 0,
        };
        let (cmds, bad, valid) = read_through_window(&mut reader);
        let whole = all(&data);
        assert!(cmds == whole.0);
        assert_eq!((bad, valid), (Some(Bad::Truncated), whole.2 as u64));
    }

    #[test]
    fn garbage_is_a_format_error() {
        assert_eq!(all(b"*1\r\n$4\r\nPING\r\nhello\r\n").1, Some(Bad::Format));
        assert_eq!(all(b"*0\r\n").1, Some(Bad::Format));
        assert_eq!(all(b"*1\r\nPING\r\n").1, Some(Bad::Format));
        assert_eq!(all(b"*").1, Some(Bad::Truncated));
    }
}
