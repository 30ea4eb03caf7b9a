//! Keyspace notifications (notify-keyspace-events): the event classes, Redis's parsing and
//! printing of the class letters, and the queue of events the commands and the keyspace
//! fire.
//!
//! An event fired while its class is off (or while neither `K` nor `E` is on) costs one
//! flag test ([`Notifier::fire`]). An event that passes is queued with its database and key;
//! `commands::pubsub::publish_notifications` publishes the queue, in order, after the
//! command that fired it has replied (as Redis 7.2 defers push messages to the running
//! client), or after the cron's active expiry: `__keyspace@<db>__:<key>` with the event
//! name as the message, then `__keyevent@<db>__:<event>` with the key.

/// `K`: publish to `__keyspace@<db>__:<key>`.
pub const KEYSPACE: u32 = 1 << 0;
/// `E`: publish to `__keyevent@<db>__:<event>`.
pub const KEYEVENT: u32 = 1 << 1;
/// `g`: generic commands (DEL, EXPIRE, RENAME, ...).
pub const GENERIC: u32 = 1 << 2;
/// `$`: string commands.
pub const STRING: u32 = 1 << 3;
/// `l`: list commands.
pub const LIST: u32 = 1 << 4;
/// `s`: set commands.
pub const SET: u32 = 1 << 5;
/// `h`: hash commands.
pub const HASH: u32 = 1 << 6;
/// `z`: sorted-set commands.
pub const ZSET: u32 = 1 << 7;
/// `x`: a key expired.
pub const EXPIRED: u32 = 1 << 8;
/// `e`: a key was evicted.
pub const EVICTED: u32 = 1 << 9;
/// `t`: stream commands.
pub const STREAM: u32 = 1 << 10;
/// `m`: a read found no key (not part of `A`).
pub const KEY_MISS: u32 = 1 << 11;
/// `d`: module key types.
pub const MODULE: u32 = 1 << 13;
/// `n`: a key was created (not part of `A`).
pub const NEW: u32 = 1 << 14;
/// `A`: `g$lshzxetd`.
pub const ALL: u32 =
    GENERIC | STRING | LIST | SET | HASH | ZSET | EXPIRED | EVICTED | STREAM | MODULE;

/// The error CONFIG SET gives for a letter that names no class.
pub const BAD_CLASS: &str = "Invalid event class character. Use 'Ag$lshzxeKEtmdn'.";

/// Parses the class letters of notify-keyspace-events (Redis's
/// keyspaceEventsStringToFlags); None for a letter that names no class.
pub fn parse_flags(text: &[u8]) -> Option<u32> {
    let mut flags = 0;
    for &c in text {
        flags |= match c {
            b'A' => ALL,
            b'g' => GENERIC,
            b'$' => STRING,
            b'l' => LIST,
            b's' => SET,
            b'h' => HASH,
            b'z' => ZSET,
            b'x' => EXPIRED,
            b'e' => EVICTED,
            b'K' => KEYSPACE,
            b'E' => KEYEVENT,
            b't' => STREAM,
            b'm' => KEY_MISS,
            b'd' => MODULE,
            b'n' => NEW,
            _ => return None,
        };
    }
    Some(flags)
}

/// The class letters of `flags` as CONFIG GET prints them (Redis's
/// keyspaceEventsFlagsToString: `A` for the whole of it, then `K`, `E`, `m`).
pub fn flags_to_string(flags: u32) -> String {
    let mut s = String::new();
    if flags & ALL == ALL {
        s.push('A');
    } else {
        for (bit, letter) in [
            (GENERIC, 'g'),
            (STRING, '$'),
            (LIST, 'l'),
            (SET, 's'),
            (HASH, 'h'),
            (ZSET, 'z'),
            (EXPIRED, 'x'),
            (EVICTED, 'e'),
            (STREAM, 't'),
            (MODULE, 'd'),
            (NEW, 'n'),
        ] {
            if flags & bit != 0 {
                s.push(letter);
            }
        }
    }
    for (bit, letter) in [(KEYSPACE, 'K'), (KEYEVENT, 'E'), (KEY_MISS, 'm')] {
        if flags & bit != 0 {
            s.push(letter);
        }
    }
    s
}

/// One fired event, waiting to be published.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// The event name ("set", "expired", ...).
    pub name: &'static str,
    /// The database of the key.
    pub db: usize,
    /// The key.
    pub key: Vec<u8>,
}

/// The enabled classes and the events waiting to be published.
#[derive(Debug, Default)]
pub struct Notifier {
    flags: u32,
    pending: Vec<Event>,
}

impl Notifier {
    /// Sets the classes (CONFIG SET notify-keyspace-events).
    pub fn set_flags(&mut self, flags: u32) {
        self.flags = flags;
    }

    /// The classes, with `K` and `E`.
    pub fn flags(&self) -> u32 {
        self.flags
    }

    /// Fires event `name` of class `class` for `key` of `db`: queued when the class is on
    /// and `K` or `E` is (Redis's notifyKeyspaceEvent).
    #[inline]
    pub fn fire(&mut self, class: u32, name: &'static str, db: usize, key: &[u8]) {
        if self.flags & class != 0 && self.flags & (KEYSPACE | KEYEVENT) != 0 {
            self.pending.push(Event {
                name,
                db,
                key: key.to_vec(),
            });
        }
    }

    /// Whether events wait to be published.
    #[inline]
    pub fn has_pending(&self) -> bool {
        !self.pending.is_empty()
    }

    /// Takes the events fired since the last call, in order.
    pub fn take(&mut self) -> Vec<Event> {
        std::mem::take(&mut self.pending)
    }

    /// The channels and messages one event is published as, in order: the keyspace
    /// channel (message: the event name) under `K`, the keyevent channel (message: the
    /// key) under `E`.
    pub fn channels(&self, event: &Event) -> Vec<(Vec<u8>, Vec<u8>)> {
        let mut out = Vec::with_capacity(2);
        if self.flags & KEYSPACE != 0 {
            let mut chan = format!("__keyspace@{}__:", event.db).into_bytes();
            chan.extend_from_slice(&event.key);
            out.push((chan, event.name.as_bytes().to_vec()));
        }
        if self.flags & KEYEVENT != 0 {
            let chan = format!("__keyevent@{}__:{}", event.db, event.name).into_bytes();
            out.push((chan, event.key.clone()));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn letters_round_trip_as_redis_prints_them() {
        assert_eq!(parse_flags(b""), Some(0));
        assert_eq!(parse_flags(b"?"), None);
        assert_eq!(parse_flags(b"KEA"), Some(ALL | KEYSPACE | KEYEVENT));
        assert_eq!(flags_to_string(parse_flags(b"EKA").unwrap()), "AKE");
        assert_eq!(flags_to_string(parse_flags(b"mEgx$").unwrap()), "g$xEm");
        assert_eq!(flags_to_string(parse_flags(b"nA").unwrap()), "A");
        assert_eq!(
            flags_to_string(parse_flags(b"g$lshzxetdnKEm").unwrap()),
            "AKEm"
        );
        assert_eq!(flags_to_string(parse_flags(b"ndK").unwrap()), "dnK");
    }

    #[test]
    fn events_are_queued_only_when_their_class_and_a_channel_kind_are_on() {
        let mut n = Notifier::default();
        n.fire(GENERIC, "del", 0, b"k");
        assert!(!n.has_pending());
        n.set_flags(GENERIC);
        n.fire(GENERIC, "del", 0, b"k");
        assert!(!n.has_pending(), "neither K nor E");
        n.set_flags(GENERIC | KEYEVENT);
        n.fire(STRING, "set", 0, b"k");
        assert!(!n.has_pending());
        n.fire(GENERIC, "del", 3, b"k");
        let events = n.take();
        assert_eq!(events.len(), 1);
        assert_eq!(
            n.channels(&events[0]),
            vec![(b"__keyevent@3__:del".to_vec(), b"k".to_vec())]
        );
        n.set_flags(GENERIC | KEYEVENT | KEYSPACE);
        assert_eq!(
            n.channels(&events[0]),
            vec![
                (b"__keyspace@3__:k".to_vec(), b"del".to_vec()),
                (b"__keyevent@3__:del".to_vec(), b"k".to_vec())
            ]
        );
        assert!(!n.has_pending());
    }
}
