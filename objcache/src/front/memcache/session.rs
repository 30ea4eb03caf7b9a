//! A memcache protocol session without its socket: input bytes in, ordered replies out.
//! It knows what comes next (a request line, a data block, bytes to swallow) and runs every
//! complete request it has; the event loop feeds it and drains its [`Output`]. The fuzz
//! target drives it directly.

use crate::front::memcache::binary::{self, Header};
use crate::front::memcache::exec::{self, Flow};
use crate::front::memcache::meta::{self, SetPlan, SetStep};
use crate::front::memcache::parse::{self, Line, Request};
use crate::front::memcache::Output;
use crate::store::classes::item_total;
use crate::store::{Mode, Store};

/// Stop running requests while this many reply bytes wait to be sent.
const OUTPUT_HIGH_WATER: usize = 4 << 20;

/// What the connection expects next from the client.
enum Wait {
    /// A request line.
    Line,
    /// The data block of a classic storage command.
    Store {
        mode: Mode,
        key: Vec<u8>,
        flags: u32,
        exptime: i32,
        cas: u64,
        noreply: bool,
        len: usize,
    },
    /// The data block of an ms.
    MetaSet(SetPlan),
    /// Bytes to drop (the data of a refused storage command).
    Swallow(usize),
}

/// Protocol state of one connection.
pub struct Session {
    input: Vec<u8>,
    wait: Wait,
    /// Replies not yet sent.
    pub out: Output,
    /// Close once the output is flushed.
    pub closing: bool,
    /// The connection speaks the binary protocol (decided by its first byte; `None`
    /// before it arrives).
    binary: Option<bool>,
}

impl Default for Session {
    fn default() -> Self {
        Session {
            input: Vec::with_capacity(16 << 10),
            wait: Wait::Line,
            out: Output::default(),
            closing: false,
            binary: None,
        }
    }
}

impl Session {
    /// Adds received bytes.
    pub fn feed(&mut self, bytes: &[u8]) {
        self.input.extend_from_slice(bytes);
    }

    /// Bytes of input not processed yet.
    pub fn input_len(&self) -> usize {
        self.input.len()
    }

    /// Runs every complete request in the input.
    pub fn process(&mut self, store: &Store) {
        let mut pos = 0;
        // A reply waiting for an SSD tail holds back later requests of this connection, so
        // a pipelined write cannot change or free the object before its read is answered.
        while !self.closing
            && self.out.ready_len() < OUTPUT_HIGH_WATER
            && !self.out.waits_for_tail()
        {
            let avail = &self.input[pos..];
            let binary = match (self.binary, avail.first()) {
                (Some(b), _) => b,
                (None, Some(&first)) => *self.binary.insert(first == binary::REQUEST_MAGIC),
                // Nothing arrived yet: the line is incomplete.
                (None, None) => false,
            };
            match std::mem::replace(&mut self.wait, Wait::Line) {
                Wait::Swallow(n) => {
                    let take = n.min(avail.len());
                    pos += take;
                    if take < n {
                        self.wait = Wait::Swallow(n - take);
                        break;
                    }
                }
                Wait::Store {
                    mode,
                    key,
                    flags,
                    exptime,
                    cas,
                    noreply,
                    len,
                } => {
                    if avail.len() < len + 2 {
                        self.wait = Wait::Store {
                            mode,
                            key,
                            flags,
                            exptime,
                            cas,
                            noreply,
                            len,
                        };
                        break;
                    }
                    let block = &avail[..len + 2];
                    exec::finish_store(
                        store,
                        mode,
                        &key,
                        flags,
                        exptime,
                        cas,
                        noreply,
                        block,
                        &mut self.out,
                    );
                    pos += len + 2;
                }
                Wait::MetaSet(plan) => {
                    if avail.len() < plan.len + 2 {
                        self.wait = Wait::MetaSet(plan);
                        break;
                    }
                    meta::finish_set(store, &plan, &avail[..plan.len + 2], &mut self.out);
                    pos += plan.len + 2;
                }
                Wait::Line if binary => match binary::read_header(avail) {
                    Header::Incomplete => break,
                    Header::BadMagic => {
                        self.closing = true;
                        break;
                    }
                    Header::Request {
                        opcode,
                        opaque,
                        body,
                    } => {
                        binary::unknown_command(self.out.bytes(), opcode, opaque);
                        pos += binary::HEADER;
                        if body > 0 {
                            self.wait = Wait::Swallow(body);
                        }
                    }
                },
                Wait::Line => match parse::next_line(avail) {
                    Line::Incomplete => break,
                    Line::Junk => {
                        self.closing = true;
                        break;
                    }
                    Line::Complete(line, used) => {
                        pos += used;
                        if exec::verbosity() >= 2 {
                            crate::store_log!(Notice, "<{}", String::from_utf8_lossy(line));
                        }
                        self.wait = request(store, line, &mut self.out, &mut self.closing);
                    }
                },
            }
        }
        self.input.drain(..pos);
    }
}

/// Runs one request line and says what to expect next.
fn request(store: &Store, line: &[u8], out: &mut Output, closing: &mut bool) -> Wait {
    match parse::parse_line(line) {
        Request::Store {
            mode,
            key,
            flags,
            exptime,
            len,
            cas,
            noreply,
        } => {
            if item_total(key.len(), flags, len) > store.config().max_item_size {
                exec::too_large(store, mode, key, noreply, out);
                return Wait::Swallow(len + 2);
            }
            Wait::Store {
                mode,
                key: key.to_vec(),
                flags,
                exptime,
                cas,
                noreply,
                len,
            }
        }
        Request::Meta {
            cmd: b's',
            args,
            ntokens,
        } => match meta::plan_set(store, &args, ntokens) {
            SetStep::Data(plan) => Wait::MetaSet(plan),
            SetStep::Fail(reply, swallow) => {
                out.line(reply);
                if swallow > 0 {
                    Wait::Swallow(swallow)
                } else {
                    Wait::Line
                }
            }
        },
        Request::Meta { cmd, args, ntokens } => {
            meta::run(store, cmd, &args, ntokens, out);
            Wait::Line
        }
        req => {
            if exec::run(store, req, out) == Flow::Close {
                *closing = true;
            }
            Wait::Line
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::StoreArgs;
    use crate::front::memcache::Segment;

    fn store() -> Store {
        let args = StoreArgs {
            small_memory: Some(8 << 20),
            cores: Some(1),
            ..StoreArgs::default()
        };
        Store::new(args.resolve().unwrap()).unwrap()
    }

    fn drain(s: &mut Session) -> Vec<u8> {
        let mut v = Vec::new();
        for seg in s.out.segs.drain(..) {
            if let Segment::Bytes(b) = seg {
                v.extend_from_slice(&b);
            }
        }
        v
    }

    #[test]
    fn byte_at_a_time_equals_all_at_once() {
        let st = store();
        let script: &[u8] = b"set a 0 0 3\r\nabc\r\nget a b\r\nset big 0 0 2000000\r\nxx";
        let mut whole = Session::default();
        whole.feed(script);
        whole.process(&st);
        let mut piecewise = Session::default();
        for b in script {
            piecewise.feed(std::slice::from_ref(b));
            piecewise.process(&st);
        }
        assert_eq!(drain(&mut whole), drain(&mut piecewise));
    }

    #[test]
    fn swallows_refused_data_then_continues() {
        let st = store();
        let mut s = Session::default();
        s.feed(b"set t 0 0 2000000\r\n");
        s.process(&st);
        s.feed(&vec![b'\n'; 2_000_002]);
        s.feed(b"mn\r\n");
        s.process(&st);
        assert_eq!(
            drain(&mut s),
            b"SERVER_ERROR object too large for cache\r\nMN\r\n"
        );
        assert_eq!(s.input_len(), 0);
    }

    #[test]
    fn binary_packets_get_memcacheds_unknown_command_error() {
        let st = store();
        let mut s = Session::default();
        let mut get = vec![0x80, 0x00, 0, 3, 0, 0, 0, 0, 0, 0, 0, 3, 9, 9, 9, 9];
        get.extend_from_slice(&[0; 8]);
        get.extend_from_slice(b"foo");
        // Byte by byte: the body is skipped, the next packet answered too.
        for b in get.iter().chain(&get) {
            s.feed(std::slice::from_ref(b));
            s.process(&st);
        }
        let out = drain(&mut s);
        assert_eq!(out.len(), 2 * (24 + 15));
        assert_eq!(&out[..2], b"\x81\x00");
        assert_eq!(&out[6..8], b"\x00\x81");
        assert_eq!(&out[12..16], b"\x09\x09\x09\x09");
        assert!(!s.closing);
        // A text line (a header's length of it) on a binary connection is a bad magic
        // byte: memcached closes.
        s.feed(b"get foo bar baz quux xyzzy\r\n");
        s.process(&st);
        assert!(s.closing);
        // A text connection stays text.
        let mut t = Session::default();
        t.feed(b"version\r\n");
        t.process(&st);
        assert!(drain(&mut t).starts_with(b"VERSION "));
    }

    #[test]
    fn quit_stops_processing() {
        let st = store();
        let mut s = Session::default();
        s.feed(b"version\r\nquit\r\nversion\r\n");
        s.process(&st);
        assert!(s.closing);
        assert_eq!(drain(&mut s).iter().filter(|&&b| b == b'\n').count(), 1);
    }
}
