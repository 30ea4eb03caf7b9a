//! The value stored under a key: one variant per data type, each type in its own module
//! with its encoding rules, memory figure and conversions. Goblin stores sorted sets today.

use super::zset::SortedSet;

/// A value in the keyspace.
#[derive(Clone)]
pub enum Value {
    /// A sorted set.
    ZSet(SortedSet),
}

impl Value {
    /// The name TYPE reports.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::ZSet(_) => "zset",
        }
    }

    /// The name OBJECT ENCODING reports.
    pub fn encoding_name(&self) -> &'static str {
        match self {
            Value::ZSet(z) => z.encoding().as_str(),
        }
    }

    /// Bytes the engine holds for the value.
    pub fn memory_bytes(&self) -> usize {
        match self {
            Value::ZSet(z) => z.memory_bytes(),
        }
    }

    /// Elements in the value (how expensive it is to free).
    pub fn len(&self) -> usize {
        match self {
            Value::ZSet(z) => z.len(),
        }
    }

    /// Whether the value holds no element (a key never keeps an empty value).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
impl Value {
    /// An empty sorted set: some value for tests of the key table.
    pub(crate) fn empty_zset() -> Value {
        Value::ZSet(Default::default())
    }
}
