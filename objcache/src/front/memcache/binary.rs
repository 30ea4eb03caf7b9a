//! memcached's binary protocol, as far as Goblin goes with it. A connection whose first byte
//! is the request magic 0x80 speaks it for its whole life (memcached decides the same way,
//! on the first byte). Goblin reads each packet's 24-byte header for its framing, skips the
//! body, and answers with the binary error memcached gives an opcode it does not implement:
//! status 0x0081 and the text "Unknown command", with the request's opcode and opaque
//! echoed, so a binary client gets an error per request instead of silence. A header with
//! another magic byte closes the connection, as memcached closes it.
//!
//! Header layout (bytes, big-endian): magic 1, opcode 1, key length 2, extras length 1,
//! data type 1, vbucket (status in a response) 2, total body length 4, opaque 4, CAS 8.

/// First byte of every binary request.
pub const REQUEST_MAGIC: u8 = 0x80;
/// First byte of every binary response.
const RESPONSE_MAGIC: u8 = 0x81;
/// Bytes of a request or response header.
pub const HEADER: usize = 24;
/// The status memcached answers an opcode it does not implement with.
const UNKNOWN_COMMAND: u16 = 0x0081;
/// The body memcached sends with that status.
const UNKNOWN_COMMAND_TEXT: &[u8] = b"Unknown command";

/// What the input holds at a packet boundary.
#[derive(Debug, PartialEq, Eq)]
pub enum Header {
    /// Fewer than [`HEADER`] bytes.
    Incomplete,
    /// The first byte is not [`REQUEST_MAGIC`].
    BadMagic,
    /// A request header.
    Request {
        /// Its opcode.
        opcode: u8,
        /// Its opaque, echoed in the reply.
        opaque: [u8; 4],
        /// Bytes of body (extras, key and value) after the header.
        body: usize,
    },
}

/// Reads the request header at the start of `input`.
pub fn read_header(input: &[u8]) -> Header {
    let Some(h) = input.get(..HEADER) else {
        return Header::Incomplete;
    };
    if h[0] != REQUEST_MAGIC {
        return Header::BadMagic;
    }
    Header::Request {
        opcode: h[1],
        opaque: [h[12], h[13], h[14], h[15]],
        body: u32::from_be_bytes([h[8], h[9], h[10], h[11]]) as usize,
    }
}

/// Appends the "Unknown command" error reply to a request with `opcode` and `opaque`.
pub fn unknown_command(out: &mut Vec<u8>, opcode: u8, opaque: [u8; 4]) {
    out.extend_from_slice(&[RESPONSE_MAGIC, opcode, 0, 0, 0, 0]);
    out.extend_from_slice(&UNKNOWN_COMMAND.to_be_bytes());
    out.extend_from_slice(&(UNKNOWN_COMMAND_TEXT.len() as u32).to_be_bytes());
    out.extend_from_slice(&opaque);
    out.extend_from_slice(&[0; 8]);
    out.extend_from_slice(UNKNOWN_COMMAND_TEXT);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_framing() {
        let mut get = vec![0x80, 0x00, 0, 3, 0, 0, 0, 0, 0, 0, 0, 3, 1, 2, 3, 4];
        get.extend_from_slice(&[0; 8]);
        assert_eq!(read_header(&get[..23]), Header::Incomplete);
        assert_eq!(
            read_header(&get),
            Header::Request {
                opcode: 0,
                opaque: [1, 2, 3, 4],
                body: 3
            }
        );
        get[0] = b'g';
        assert_eq!(read_header(&get), Header::BadMagic);
    }

    #[test]
    fn the_reply_is_memcacheds() {
        let mut out = Vec::new();
        unknown_command(&mut out, 0xee, [0x11, 0x22, 0x33, 0x44]);
        // As memcached 1.6.18 answers opcode 0xee.
        let mut want = b"\x81\xee\x00\x00\x00\x00\x00\x81\x00\x00\x00\x0f\x11\x22\x33\x44".to_vec();
        want.extend_from_slice(&[0; 8]);
        want.extend_from_slice(b"Unknown command");
        assert_eq!(out, want);
    }
}
