//! What a replica reads before the stream, from arbitrary bytes: the PSYNC reply line, the
//! payload header after keep-alive newlines, and the diskless payload's end mark found at
//! every chunking. None may panic; the mark scanner must give back exactly the bytes before
//! the first mark and the bytes after it, whatever the chunks.

#![no_main]

use goblin_server::replication::payload::{header, line, psync_reply, EofScanner, MARK_LEN};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Some((text, used)) = line(data) {
        assert!(used <= data.len() && text.len() < used);
        let _ = psync_reply(text);
    }
    if let Ok(Some((_, used))) = header(data) {
        assert!(used <= data.len());
    }
    let Some((&chunk, rest)) = data.split_first() else {
        return;
    };
    let mark = [b'#'; MARK_LEN];
    let first = rest.windows(MARK_LEN).position(|w| w == mark);
    let mut scanner = EofScanner::new(mark.to_vec());
    let mut got = Vec::new();
    let mut after = None;
    let mut fed = 0;
    for piece in rest.chunks(usize::from(chunk).max(1)) {
        fed += piece.len();
        let (out, done) = scanner.feed(piece);
        got.extend_from_slice(&out);
        if let Some(mut r) = done {
            r.extend_from_slice(&rest[fed..]);
            after = Some(r);
            break;
        }
    }
    match first {
        Some(pos) => {
            assert_eq!(got, &rest[..pos]);
            assert_eq!(after.expect("the mark was seen"), &rest[pos + MARK_LEN..]);
        }
        None => {
            assert!(after.is_none());
            assert!(rest.starts_with(&got) && rest.len() - got.len() < MARK_LEN);
        }
    }
});
