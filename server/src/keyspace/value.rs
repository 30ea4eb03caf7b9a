//! The value stored under a key: one variant per data type, each type in its own module
//! with its encoding rules, memory figure and conversions. Goblin stores sorted sets and
//! sets.

use super::set::Set;
use super::zset::SortedSet;

/// The key holds a value of another type than the command works on (WRONGTYPE).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WrongType;

/// A value in the keyspace.
#[derive(Clone)]
pub enum Value {
    /// A sorted set.
    ZSet(SortedSet),
    /// A set.
    Set(Set),
}

impl Value {
    /// The name TYPE reports.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::ZSet(_) => "zset",
            Value::Set(_) => "set",
        }
    }

    /// The name OBJECT ENCODING reports.
    pub fn encoding_name(&self) -> &'static str {
        match self {
            Value::ZSet(z) => z.encoding().as_str(),
            Value::Set(s) => s.encoding().as_str(),
        }
    }

    /// Bytes the engine holds for the value.
    pub fn memory_bytes(&self) -> usize {
        match self {
            Value::ZSet(z) => z.memory_bytes(),
            Value::Set(s) => s.memory_bytes(),
        }
    }

    /// Elements in the value (how expensive it is to free).
    pub fn len(&self) -> usize {
        match self {
            Value::ZSet(z) => z.len(),
            Value::Set(s) => s.len(),
        }
    }

    /// The sorted set, or WRONGTYPE.
    #[inline]
    pub fn as_zset(&self) -> Result<&SortedSet, WrongType> {
        match self {
            Value::ZSet(z) => Ok(z),
            _ => Err(WrongType),
        }
    }

    /// The sorted set for writing, or WRONGTYPE.
    #[inline]
    pub fn as_zset_mut(&mut self) -> Result<&mut SortedSet, WrongType> {
        match self {
            Value::ZSet(z) => Ok(z),
            _ => Err(WrongType),
        }
    }

    /// The set, or WRONGTYPE.
    #[inline]
    pub fn as_set(&self) -> Result<&Set, WrongType> {
        match self {
            Value::Set(s) => Ok(s),
            _ => Err(WrongType),
        }
    }

    /// The set for writing, or WRONGTYPE.
    #[inline]
    pub fn as_set_mut(&mut self) -> Result<&mut Set, WrongType> {
        match self {
            Value::Set(s) => Ok(s),
            _ => Err(WrongType),
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

#[cfg(test)]
mod tests {
    #[test]
    fn a_set_does_not_grow_the_value() {
        assert_eq!(std::mem::size_of::<super::Value>(), 32);
    }
}
