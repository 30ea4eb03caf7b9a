//! One client's subscriptions, by kind.

use super::Kind;
use hashbrown::HashSet;

/// The channels, patterns and shard channels one client is subscribed to.
#[derive(Debug, Default)]
pub struct Subscriptions {
    channels: HashSet<Vec<u8>>,
    patterns: HashSet<Vec<u8>>,
    shard: HashSet<Vec<u8>>,
}

impl Subscriptions {
    /// The names of one kind.
    pub fn names(&self, kind: Kind) -> &HashSet<Vec<u8>> {
        match kind {
            Kind::Channel => &self.channels,
            Kind::Pattern => &self.patterns,
            Kind::Shard => &self.shard,
        }
    }

    /// The names of one kind, to change.
    pub fn names_mut(&mut self, kind: Kind) -> &mut HashSet<Vec<u8>> {
        match kind {
            Kind::Channel => &mut self.channels,
            Kind::Pattern => &mut self.patterns,
            Kind::Shard => &mut self.shard,
        }
    }

    /// The count a confirmation of `kind` carries: channels and patterns together, or shard
    /// channels alone (as Redis counts them).
    pub fn confirmed_count(&self, kind: Kind) -> usize {
        match kind {
            Kind::Channel | Kind::Pattern => self.channels.len() + self.patterns.len(),
            Kind::Shard => self.shard.len(),
        }
    }

    /// Whether the client has any subscription (CLIENT LIST flag `P`, the pubsub client
    /// class, RESP2's subscribed mode).
    #[inline]
    pub fn active(&self) -> bool {
        !(self.channels.is_empty() && self.patterns.is_empty() && self.shard.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_as_redis_confirms() {
        let mut s = Subscriptions::default();
        assert!(!s.active());
        s.names_mut(Kind::Channel).insert(b"a".to_vec());
        s.names_mut(Kind::Pattern).insert(b"p*".to_vec());
        s.names_mut(Kind::Shard).insert(b"s".to_vec());
        assert!(s.active());
        assert_eq!(s.confirmed_count(Kind::Channel), 2);
        assert_eq!(s.confirmed_count(Kind::Pattern), 2);
        assert_eq!(s.confirmed_count(Kind::Shard), 1);
        s.names_mut(Kind::Channel).clear();
        s.names_mut(Kind::Pattern).clear();
        assert!(
            s.active(),
            "a shard channel alone keeps the client subscribed"
        );
    }
}
