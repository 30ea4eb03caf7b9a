//! Feeds arbitrary bytes to the request parser, whole and split at every chunk boundary a
//! connection could see, and checks that both ways agree: same requests, same arguments,
//! same error. The parser must never panic or loop.

#![no_main]

use goblin_server::resp::parse::{Limits, Parsed, ProtocolError, RequestParser, MAX_INLINE};
use libfuzzer_sys::fuzz_target;

const LIMITS: Limits = Limits {
    max_bulk: 1 << 20,
    authenticated: true,
};

/// Runs the parser over `data` arriving in chunks of `chunk` bytes, as the event loop does
/// (it discards consumed bytes and shifts the parser). Returns the requests and the error.
fn run(data: &[u8], chunk: usize) -> (Vec<Vec<Vec<u8>>>, Option<ProtocolError>) {
    let mut parser = RequestParser::default();
    let mut buf: Vec<u8> = Vec::new();
    let mut requests = Vec::new();
    let mut rpos = 0;
    for piece in data.chunks(chunk.max(1)) {
        buf.extend_from_slice(piece);
        loop {
            match parser.parse(&buf, rpos, LIMITS) {
                Ok(Parsed::Incomplete) => break,
                Ok(Parsed::Request { end }) => {
                    let args = match parser.inline_args() {
                        Some(a) => a.to_vec(),
                        None => parser
                            .args()
                            .iter()
                            .map(|r| buf[r.clone()].to_vec())
                            .collect(),
                    };
                    requests.push(args);
                    rpos = end;
                }
                Err(e) => return (requests, Some(e)),
            }
        }
        buf.drain(..rpos);
        parser.shift(rpos);
        rpos = 0;
    }
    (requests, None)
}

fuzz_target!(|data: &[u8]| {
    let whole = run(data, data.len());
    // Past the inline limit, whether a line is refused depends on how it arrives (as in
    // Redis): only check that nothing panics.
    if data.len() > MAX_INLINE {
        return;
    }
    let split = run(data, 1 + data.first().copied().unwrap_or(0) as usize % 7);
    // A stream cut short may end in an incomplete request: compare what both completed.
    let n = whole.0.len().min(split.0.len());
    assert_eq!(whole.0[..n], split.0[..n]);
    if whole.1.is_some() && split.1.is_some() {
        assert_eq!(whole, split);
    }
});
