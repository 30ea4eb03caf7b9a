//! The frames pub/sub writes: confirmations and messages, arrays in RESP2 and push (`>`)
//! frames in RESP3.

use super::Kind;
use crate::resp::reply::ReplyWriter;

/// A (un)subscribe confirmation: kind, the name (null for an unsubscribe from nothing), and
/// the client's count of that kind after it.
pub fn confirmation(out: &mut ReplyWriter, what: &str, name: Option<&[u8]>, count: usize) {
    out.push(3);
    out.bulk(what.as_bytes());
    match name {
        Some(name) => out.bulk(name),
        None => out.null(),
    }
    out.int(count as i64);
}

/// A published message as one subscriber receives it: `message` (or `smessage` for a shard
/// channel) with channel and payload, or `pmessage` with the pattern first.
pub fn message(
    out: &mut ReplyWriter,
    kind: Kind,
    pattern: Option<&[u8]>,
    channel: &[u8],
    payload: &[u8],
) {
    match pattern {
        Some(pattern) => {
            out.push(4);
            out.bulk(b"pmessage");
            out.bulk(pattern);
        }
        None => {
            out.push(3);
            out.bulk(if kind == Kind::Shard {
                b"smessage"
            } else {
                b"message"
            });
        }
    }
    out.bulk(channel);
    out.bulk(payload);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(resp3: bool, f: impl Fn(&mut ReplyWriter)) -> Vec<u8> {
        let mut buf = Vec::new();
        f(&mut ReplyWriter::new(&mut buf, resp3));
        buf
    }

    #[test]
    fn frames_in_both_protocols() {
        let sub = |w: &mut ReplyWriter| confirmation(w, "subscribe", Some(b"ch"), 1);
        assert_eq!(
            written(false, sub),
            b"*3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n"
        );
        assert_eq!(
            written(true, sub),
            b">3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n"
        );
        let none = |w: &mut ReplyWriter| confirmation(w, "unsubscribe", None, 0);
        assert_eq!(
            written(false, none),
            b"*3\r\n$11\r\nunsubscribe\r\n$-1\r\n:0\r\n"
        );
        assert_eq!(
            written(true, none),
            b">3\r\n$11\r\nunsubscribe\r\n_\r\n:0\r\n"
        );
        let pm = |w: &mut ReplyWriter| message(w, Kind::Channel, Some(b"c*"), b"ch", b"hi");
        assert_eq!(
            written(true, pm),
            b">4\r\n$8\r\npmessage\r\n$2\r\nc*\r\n$2\r\nch\r\n$2\r\nhi\r\n"
        );
        let sm = |w: &mut ReplyWriter| message(w, Kind::Shard, None, b"ch", b"hi");
        assert_eq!(
            written(false, sm),
            b"*3\r\n$8\r\nsmessage\r\n$2\r\nch\r\n$2\r\nhi\r\n"
        );
    }
}
