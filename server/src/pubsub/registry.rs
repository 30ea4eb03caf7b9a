//! The server-wide registry: for each channel, pattern and shard channel, the CLIENT IDs
//! subscribed to it, in subscription order.

use super::Kind;
use crate::glob::glob_match;
use hashbrown::HashMap;

/// Subscribers by name, one map per [`Kind`]; a name with no subscriber left is removed.
#[derive(Debug, Default)]
pub struct Registry {
    channels: HashMap<Vec<u8>, Vec<u64>>,
    patterns: HashMap<Vec<u8>, Vec<u64>>,
    shard: HashMap<Vec<u8>, Vec<u64>>,
}

impl Registry {
    fn map(&self, kind: Kind) -> &HashMap<Vec<u8>, Vec<u64>> {
        match kind {
            Kind::Channel => &self.channels,
            Kind::Pattern => &self.patterns,
            Kind::Shard => &self.shard,
        }
    }

    fn map_mut(&mut self, kind: Kind) -> &mut HashMap<Vec<u8>, Vec<u64>> {
        match kind {
            Kind::Channel => &mut self.channels,
            Kind::Pattern => &mut self.patterns,
            Kind::Shard => &mut self.shard,
        }
    }

    /// Adds client `id` under `name` (the caller checked it was not there).
    pub fn add(&mut self, kind: Kind, name: &[u8], id: u64) {
        match self.map_mut(kind).get_mut(name) {
            Some(ids) => ids.push(id),
            None => {
                self.map_mut(kind).insert(name.to_vec(), vec![id]);
            }
        }
    }

    /// Removes client `id` from under `name`.
    pub fn remove(&mut self, kind: Kind, name: &[u8], id: u64) {
        let map = self.map_mut(kind);
        let Some(ids) = map.get_mut(name) else {
            return;
        };
        ids.retain(|&i| i != id);
        if ids.is_empty() {
            map.remove(name);
        }
    }

    /// How many names of `kind` have subscribers (INFO pubsub_channels, PUBSUB NUMPAT, ...).
    pub fn len(&self, kind: Kind) -> usize {
        self.map(kind).len()
    }

    /// Whether nobody is subscribed to anything.
    pub fn is_empty(&self) -> bool {
        self.channels.is_empty() && self.patterns.is_empty() && self.shard.is_empty()
    }

    /// The subscribers of exactly `name`.
    pub fn subscribers(&self, kind: Kind, name: &[u8]) -> &[u64] {
        self.map(kind).get(name).map_or(&[], Vec::as_slice)
    }

    /// The names of `kind` with subscribers that match `pattern` (all without one).
    pub fn names(&self, kind: Kind, pattern: Option<&[u8]>) -> Vec<&[u8]> {
        self.map(kind)
            .keys()
            .filter(|name| pattern.is_none_or(|p| glob_match(p, name, false)))
            .map(Vec::as_slice)
            .collect()
    }

    /// The patterns that match `channel`, each with its subscribers.
    pub fn matching_patterns<'a>(
        &'a self,
        channel: &'a [u8],
    ) -> impl Iterator<Item = (&'a [u8], &'a [u64])> + 'a {
        self.patterns
            .iter()
            .filter(move |(p, _)| glob_match(p, channel, false))
            .map(|(p, ids)| (p.as_slice(), ids.as_slice()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds_and_removes_subscribers_in_order() {
        let mut r = Registry::default();
        assert!(r.is_empty());
        r.add(Kind::Channel, b"news", 3);
        r.add(Kind::Channel, b"news", 1);
        r.add(Kind::Shard, b"news", 2);
        assert_eq!(r.subscribers(Kind::Channel, b"news"), &[3, 1]);
        assert_eq!(r.subscribers(Kind::Shard, b"news"), &[2]);
        assert_eq!(r.subscribers(Kind::Pattern, b"news"), &[] as &[u64]);
        r.remove(Kind::Channel, b"news", 3);
        assert_eq!(r.subscribers(Kind::Channel, b"news"), &[1]);
        r.remove(Kind::Channel, b"news", 1);
        assert_eq!(r.len(Kind::Channel), 0, "an empty channel is dropped");
        r.remove(Kind::Shard, b"news", 2);
        assert!(r.is_empty());
    }

    #[test]
    fn lists_names_and_matches_patterns() {
        let mut r = Registry::default();
        r.add(Kind::Channel, b"news.tech", 1);
        r.add(Kind::Channel, b"sport", 1);
        r.add(Kind::Pattern, b"news.*", 2);
        r.add(Kind::Pattern, b"n?ws.[st]*", 3);
        r.add(Kind::Pattern, b"NEWS.*", 4);
        let mut names = r.names(Kind::Channel, None);
        names.sort();
        assert_eq!(names, vec![&b"news.tech"[..], b"sport"]);
        assert_eq!(r.names(Kind::Channel, Some(b"n*")), vec![&b"news.tech"[..]]);
        let mut hits: Vec<_> = r.matching_patterns(b"news.tech").collect();
        hits.sort();
        assert_eq!(
            hits,
            vec![(&b"n?ws.[st]*"[..], &[3u64][..]), (b"news.*", &[2][..])],
            "patterns match case-sensitively"
        );
        assert_eq!(r.len(Kind::Pattern), 3);
    }
}
