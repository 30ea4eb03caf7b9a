//! What a replica reads from its master before the stream, with no I/O: the handshake's
//! one-line replies, the PSYNC answer, and the RDB payload's two forms:
//!
//! ```text
//! \n\n...                 newlines: the master is still making the snapshot (keep-alive)
//! $<len>\r\n<len bytes>   a snapshot file (disk-based sync)
//! $EOF:<40 bytes>\r\n<RDB><the same 40 bytes>   a diskless sync (the length is unknown)
//! ```

/// The first line of `buf` (without its `\r\n` or `\n`) and the bytes it took, once complete.
pub fn line(buf: &[u8]) -> Option<(&[u8], usize)> {
    let end = buf.iter().position(|&b| b == b'\n')?;
    let text = &buf[..end];
    let text = text.strip_suffix(b"\r").unwrap_or(text);
    Some((text, end + 1))
}

/// The master's answer to PSYNC.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PsyncReply {
    /// `+FULLRESYNC <replid> <offset>`: a snapshot follows; the stream starts after `offset`.
    Full {
        /// The master's replication id.
        replid: String,
        /// The offset of the snapshot.
        offset: u64,
    },
    /// `+CONTINUE [<replid>]`: the stream continues where the replica was (the master's id
    /// when it changed).
    Continue(Option<String>),
    /// `-NOMASTERLINK` or `-LOADING`: the master cannot serve now.
    TryLater(String),
    /// Anything else.
    Error(String),
}

/// Parses the PSYNC reply line.
pub fn psync_reply(line: &[u8]) -> PsyncReply {
    let text = String::from_utf8_lossy(line).into_owned();
    if let Some(rest) = text.strip_prefix("+FULLRESYNC") {
        let mut words = rest.split_whitespace();
        let replid = words.next().filter(|id| id.len() == 40);
        let offset = words.next().and_then(|o| o.parse::<u64>().ok());
        return match (replid, offset) {
            (Some(replid), Some(offset)) => PsyncReply::Full {
                replid: replid.to_string(),
                offset,
            },
            _ => PsyncReply::Error(format!(
                "Master replied with wrong +FULLRESYNC syntax: {text}"
            )),
        };
    }
    if let Some(rest) = text.strip_prefix("+CONTINUE") {
        let id = rest.trim();
        return PsyncReply::Continue((id.len() == 40).then(|| id.to_string()));
    }
    if text.starts_with("-NOMASTERLINK") || text.starts_with("-LOADING") {
        return PsyncReply::TryLater(text);
    }
    PsyncReply::Error(text)
}

/// How the snapshot comes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Header {
    /// `$<len>`: this many bytes.
    Len(u64),
    /// `$EOF:<mark>`: until the mark.
    Eof(Vec<u8>),
}

/// The length of a diskless sync's end mark.
pub const MARK_LEN: usize = 40;

/// Parses the payload's header from `buf` after the keep-alive newlines: Ok(None) while
/// incomplete, Ok((header, bytes taken)) once read, Err with the reason when it is not one.
pub fn header(buf: &[u8]) -> Result<Option<(Header, usize)>, String> {
    let skip = buf.iter().take_while(|&&b| b == b'\n').count();
    let Some((text, used)) = line(&buf[skip..]) else {
        return Ok(None);
    };
    let used = skip + used;
    if text.first() == Some(&b'-') {
        return Err(format!(
            "MASTER aborted replication with an error: {}",
            String::from_utf8_lossy(&text[1..])
        ));
    }
    let Some(rest) = text.strip_prefix(b"$") else {
        return Err(format!(
            "Bad protocol from MASTER, the first byte is not '$' (we received '{}'), are you sure the host and port are right?",
            String::from_utf8_lossy(text)
        ));
    };
    if let Some(mark) = rest.strip_prefix(b"EOF:") {
        if mark.len() != MARK_LEN {
            return Err("Bad EOF mark from MASTER".into());
        }
        return Ok(Some((Header::Eof(mark.to_vec()), used)));
    }
    let len = std::str::from_utf8(rest)
        .ok()
        .and_then(|t| t.parse::<u64>().ok())
        .ok_or_else(|| "Bad payload length from MASTER".to_string())?;
    Ok(Some((Header::Len(len), used)))
}

/// Finds a diskless payload's end mark as the bytes arrive, keeping back the last bytes
/// that could be the start of it.
#[derive(Debug)]
pub struct EofScanner {
    mark: Vec<u8>,
    tail: Vec<u8>,
}

impl EofScanner {
    /// A scanner for `mark`.
    pub fn new(mark: Vec<u8>) -> EofScanner {
        EofScanner {
            mark,
            tail: Vec::new(),
        }
    }

    /// Takes the next bytes: returns the payload bytes now known (to be written out) and,
    /// once the mark was seen, the bytes that followed it.
    pub fn feed(&mut self, data: &[u8]) -> (Vec<u8>, Option<Vec<u8>>) {
        let mut all = std::mem::take(&mut self.tail);
        all.extend_from_slice(data);
        if let Some(pos) = find(&all, &self.mark) {
            let rest = all[pos + self.mark.len()..].to_vec();
            all.truncate(pos);
            return (all, Some(rest));
        }
        let keep = all.len().min(self.mark.len() - 1);
        self.tail = all.split_off(all.len() - keep);
        (all, None)
    }
}

/// The first position of `needle` (not empty) in `hay`: candidates by their first byte.
fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    let mut from = 0;
    while let Some(at) = crate::resp::parse::memchr(needle[0], &hay[from..]) {
        let pos = from + at;
        if hay.len() - pos < needle.len() {
            return None;
        }
        if &hay[pos..pos + needle.len()] == needle {
            return Some(pos);
        }
        from = pos + 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn psync_replies() {
        let id = "a".repeat(40);
        assert_eq!(
            psync_reply(format!("+FULLRESYNC {id} 123").as_bytes()),
            PsyncReply::Full {
                replid: id.clone(),
                offset: 123
            }
        );
        assert_eq!(psync_reply(b"+CONTINUE"), PsyncReply::Continue(None));
        assert_eq!(
            psync_reply(format!("+CONTINUE {id}").as_bytes()),
            PsyncReply::Continue(Some(id))
        );
        assert!(matches!(
            psync_reply(b"-NOMASTERLINK Can't SYNC while not connected with my master"),
            PsyncReply::TryLater(_)
        ));
        assert!(matches!(
            psync_reply(b"+FULLRESYNC x"),
            PsyncReply::Error(_)
        ));
        assert!(matches!(
            psync_reply(b"-ERR unknown command"),
            PsyncReply::Error(_)
        ));
    }

    #[test]
    fn headers_after_keepalive_newlines() {
        assert_eq!(header(b"\n\n$12").unwrap(), None);
        assert_eq!(
            header(b"\n\n$12\r\nREDIS").unwrap(),
            Some((Header::Len(12), 7))
        );
        let mark = "m".repeat(40);
        let text = format!("$EOF:{mark}\r\n");
        assert_eq!(
            header(text.as_bytes()).unwrap(),
            Some((Header::Eof(mark.into_bytes()), text.len()))
        );
        assert!(header(b"-ERR BGSAVE failed\r\n").is_err());
        assert!(header(b"+OK\r\n").is_err());
        assert!(header(b"$EOF:short\r\n").is_err());
        assert!(header(b"$-3\r\n").is_err());
    }

    proptest! {
        /// Whatever the chunking, the scanner gives back exactly the payload before the
        /// mark, and what followed it.
        #[test]
        fn eof_mark_found_across_chunks(
            payload in proptest::collection::vec(0u8..4, 0..300),
            after in proptest::collection::vec(any::<u8>(), 0..20),
            cuts in proptest::collection::vec(0usize..400, 0..8),
        ) {
            let mark = vec![9u8; 40];
            let mut stream = payload.clone();
            stream.extend_from_slice(&mark);
            stream.extend_from_slice(&after);
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(stream.len())).collect();
            cuts.push(stream.len());
            cuts.sort();
            let mut s = EofScanner::new(mark);
            let mut got = Vec::new();
            let mut rest = None;
            let mut start = 0;
            for cut in cuts {
                let (out, done) = s.feed(&stream[start..cut]);
                got.extend_from_slice(&out);
                start = cut;
                if let Some(r) = done {
                    let mut r = r;
                    r.extend_from_slice(&stream[start..]);
                    rest = Some(r);
                    break;
                }
            }
            prop_assert_eq!(got, payload);
            prop_assert_eq!(rest.unwrap(), after);
        }
    }
}
