//! The messages tracking sends, as tracking.c's sendTrackingMessage writes them:
//!
//! ```text
//! RESP3 client            >2 $10 invalidate  *N <key>...   (a flush: _ in place of the keys)
//! RESP2 client redirected  *3 $7 message $20 __redis__:invalidate  *N <key>...
//!   to, in pub/sub mode      (a flush: the null of the tracking client's protocol)
//! RESP3 client whose       >2 $21 tracking-redir-broken :<id>
//!   redirect is gone
//! ```

use crate::resp::reply::ReplyWriter;

/// The channel RESP2 clients receive redirected invalidations on.
pub const CHANNEL: &[u8] = b"__redis__:invalidate";

/// Whether a client can receive invalidations at all: RESP3, or RESP2 in pub/sub mode as
/// the target of a redirection.
pub fn can_receive(resp3: bool, redirected: bool, subscribed: bool) -> bool {
    resp3 || (redirected && subscribed)
}

/// One invalidation in the receiver's protocol: `keys`, or `None` for a flush, whose null
/// takes the tracking client's protocol (`tracker_resp3`), as Redis writes it.
pub fn invalidation(out: &mut ReplyWriter, keys: Option<&[Vec<u8>]>, tracker_resp3: bool) {
    if out.is_resp3() {
        out.push(2);
        out.bulk(b"invalidate");
    } else {
        out.array(3);
        out.bulk(b"message");
        out.bulk(CHANNEL);
    }
    match keys {
        Some(keys) => {
            out.array(keys.len());
            keys.iter().for_each(|k| out.bulk(k));
        }
        None => {
            let receiver_resp3 = out.is_resp3();
            out.set_resp3(tracker_resp3);
            out.null();
            out.set_resp3(receiver_resp3);
        }
    }
}

/// The notice that the client redirected to is gone (RESP3 only).
pub fn redirect_broken(out: &mut ReplyWriter, redirect: u64) {
    out.push(2);
    out.bulk(b"tracking-redir-broken");
    out.int(redirect as i64);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(resp3: bool, f: impl FnOnce(&mut ReplyWriter)) -> Vec<u8> {
        let mut buf = Vec::new();
        f(&mut ReplyWriter::new(&mut buf, resp3));
        buf
    }

    #[test]
    fn shapes_by_protocol() {
        let keys = [b"k".to_vec()];
        assert_eq!(
            written(true, |w| invalidation(w, Some(&keys), true)),
            b">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nk\r\n"
        );
        assert_eq!(
            written(false, |w| invalidation(w, None, false)),
            b"*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n$-1\r\n"
        );
        assert_eq!(
            written(true, |w| redirect_broken(w, 9)),
            b">2\r\n$21\r\ntracking-redir-broken\r\n:9\r\n"
        );
    }
}
