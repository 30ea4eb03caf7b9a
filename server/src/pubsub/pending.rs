//! Messages for the client whose command publishes them, held until its reply is written
//! (Redis 7.2's pending push messages): a PUBLISH to a channel the client itself listens
//! to, run on its own, inside EXEC or from a script, answers first and pushes its message
//! after the whole reply.

use crate::resp::reply::ReplyWriter;

/// The running client's own messages, held until its command's reply is complete.
#[derive(Debug, Default)]
pub struct PendingPushes {
    /// The client whose command runs, and whether it speaks RESP3.
    target: Option<(u64, bool)>,
    frames: Vec<u8>,
}

impl PendingPushes {
    /// A command of client `id` starts: its own messages are held from now on. Returns the
    /// hold of the command it interrupts (a busy script letting other clients in), to be
    /// given back to [`PendingPushes::finish`].
    pub fn start(&mut self, id: u64, resp3: bool) -> PendingPushes {
        std::mem::replace(
            self,
            PendingPushes {
                target: Some((id, resp3)),
                frames: Vec::new(),
            },
        )
    }

    /// The command ended: its held messages, to follow its reply; the interrupted
    /// command's hold is back.
    pub fn finish(&mut self, outer: PendingPushes) -> Vec<u8> {
        std::mem::replace(self, outer).frames
    }

    /// Holds the frame `write` makes when `id` is the running client; false otherwise.
    pub fn hold(&mut self, id: u64, write: impl FnOnce(&mut ReplyWriter)) -> bool {
        match self.target {
            Some((target, resp3)) if target == id => {
                write(&mut ReplyWriter::new(&mut self.frames, resp3));
                true
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_the_running_clients_frames_and_restores_the_outer_hold() {
        let mut p = PendingPushes::default();
        assert!(!p.hold(1, |w| w.int(1)), "no command runs");
        let outer = p.start(1, true);
        assert!(
            !p.hold(2, |w| w.int(2)),
            "another client's frame is not held"
        );
        assert!(p.hold(1, |w| w.int(3)));
        let inner_outer = p.start(2, false);
        assert!(p.hold(2, |w| w.int(4)));
        assert_eq!(p.finish(inner_outer), b":4\r\n");
        assert!(
            p.hold(1, |w| w.int(5)),
            "the interrupted command's hold is back"
        );
        assert_eq!(p.finish(outer), b":3\r\n:5\r\n");
        assert!(!p.hold(1, |w| w.int(6)));
    }
}
