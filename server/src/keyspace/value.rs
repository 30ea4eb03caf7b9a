//! The value stored under a key: one variant per data type, each type in its own module
//! with its encoding rules, memory figure and conversions: sorted sets, strings, sets,
//! hashes, lists and streams.
//!
//! Commands reach a value of their type through the typed accessors ([`Value::as_zset`],
//! [`Value::as_string`], [`Value::as_set`], [`Value::as_hash`], [`Value::as_list`], [`Value::as_stream`] and their
//! `_mut` forms), which answer [`WrongType`] for a value of another type, so no command can
//! forget the check.

use super::hash::Hash;
use super::list::List;
use super::set::Set;
use super::stream::Stream;
use super::string::StringValue;
use super::zset::SortedSet;

/// A key holds a value of another type than the command works on (the WRONGTYPE reply).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WrongType;

/// A value in the keyspace.
#[derive(Clone)]
pub enum Value {
    /// A sorted set.
    ZSet(SortedSet),
    /// A string (integers and bitmaps included).
    Str(StringValue),
    /// A set.
    Set(Set),
    /// A hash.
    Hash(Hash),
    /// A list.
    List(List),
    /// A stream (boxed: its header is larger than the other variants').
    Stream(Box<Stream>),
}

impl Value {
    /// The name TYPE reports.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::ZSet(_) => "zset",
            Value::Str(_) => "string",
            Value::Set(_) => "set",
            Value::Hash(_) => "hash",
            Value::List(_) => "list",
            Value::Stream(_) => "stream",
        }
    }

    /// The name OBJECT ENCODING reports.
    pub fn encoding_name(&self) -> &'static str {
        match self {
            Value::ZSet(z) => z.encoding().as_str(),
            Value::Str(s) => s.encoding().as_str(),
            Value::Set(s) => s.encoding().as_str(),
            Value::Hash(h) => h.encoding().as_str(),
            Value::List(l) => l.encoding().as_str(),
            Value::Stream(_) => "stream",
        }
    }

    /// The reference count Redis reports for the value (OBJECT REFCOUNT, DEBUG OBJECT): its
    /// shared object's 2147483647 for an `int`-encoded string of 0 to 9999 while `sharing` (Redis
    /// stores those as references to shared integer objects, see
    /// [`crate::memory::config::MemoryConfig::shares_integers`]), else 1. Goblin shares no
    /// values: the count follows the configuration of now, where Redis keeps what a value
    /// got when it was written.
    pub fn refcount(&self, sharing: bool) -> i64 {
        /// Redis's OBJ_SHARED_INTEGERS and OBJ_SHARED_REFCOUNT.
        const SHARED_INTEGERS: std::ops::Range<i64> = 0..10_000;
        const SHARED_REFCOUNT: i64 = i32::MAX as i64;
        match self {
            Value::Str(s)
                if sharing
                    && s.encoding() == super::string::Encoding::Int
                    && s.as_int().is_some_and(|v| SHARED_INTEGERS.contains(&v)) =>
            {
                SHARED_REFCOUNT
            }
            _ => 1,
        }
    }

    /// Bytes the engine holds for the value.
    pub fn memory_bytes(&self) -> usize {
        match self {
            Value::ZSet(z) => z.memory_bytes(),
            Value::Str(s) => s.memory_bytes(),
            Value::Set(s) => s.memory_bytes(),
            Value::Hash(h) => h.memory_bytes(),
            Value::List(l) => l.memory_bytes(),
            Value::Stream(s) => std::mem::size_of::<Stream>() + s.memory_bytes(),
        }
    }

    /// Elements in the value (a string is one).
    pub fn len(&self) -> usize {
        match self {
            Value::ZSet(z) => z.len(),
            Value::Str(_) => 1,
            Value::Set(s) => s.len(),
            Value::Hash(h) => h.len(),
            Value::List(l) => l.len(),
            Value::Stream(s) => s.len() as usize,
        }
    }

    /// Whether the value holds no element (a key never keeps an empty collection; an
    /// empty string is a value, and so is a stream with no entries).
    pub fn is_empty(&self) -> bool {
        !matches!(self, Value::Stream(_)) && self.len() == 0
    }

    /// The sorted set, or [`WrongType`].
    #[inline]
    pub fn as_zset(&self) -> Result<&SortedSet, WrongType> {
        match self {
            Value::ZSet(z) => Ok(z),
            _ => Err(WrongType),
        }
    }

    /// The sorted set for writing, or [`WrongType`].
    #[inline]
    pub fn as_zset_mut(&mut self) -> Result<&mut SortedSet, WrongType> {
        match self {
            Value::ZSet(z) => Ok(z),
            _ => Err(WrongType),
        }
    }

    /// The string, or [`WrongType`].
    #[inline]
    pub fn as_string(&self) -> Result<&StringValue, WrongType> {
        match self {
            Value::Str(s) => Ok(s),
            _ => Err(WrongType),
        }
    }

    /// The string for writing, or [`WrongType`].
    #[inline]
    pub fn as_string_mut(&mut self) -> Result<&mut StringValue, WrongType> {
        match self {
            Value::Str(s) => Ok(s),
            _ => Err(WrongType),
        }
    }

    /// The set, or [`WrongType`].
    #[inline]
    pub fn as_set(&self) -> Result<&Set, WrongType> {
        match self {
            Value::Set(s) => Ok(s),
            _ => Err(WrongType),
        }
    }

    /// The set for writing, or [`WrongType`].
    #[inline]
    pub fn as_set_mut(&mut self) -> Result<&mut Set, WrongType> {
        match self {
            Value::Set(s) => Ok(s),
            _ => Err(WrongType),
        }
    }

    /// The hash, or [`WrongType`].
    #[inline]
    pub fn as_hash(&self) -> Result<&Hash, WrongType> {
        match self {
            Value::Hash(h) => Ok(h),
            _ => Err(WrongType),
        }
    }

    /// The list, or [`WrongType`].
    #[inline]
    pub fn as_list(&self) -> Result<&List, WrongType> {
        match self {
            Value::List(l) => Ok(l),
            _ => Err(WrongType),
        }
    }

    /// The hash for writing, or [`WrongType`].
    #[inline]
    pub fn as_hash_mut(&mut self) -> Result<&mut Hash, WrongType> {
        match self {
            Value::Hash(h) => Ok(h),
            _ => Err(WrongType),
        }
    }

    /// The list for writing, or [`WrongType`].
    #[inline]
    pub fn as_list_mut(&mut self) -> Result<&mut List, WrongType> {
        match self {
            Value::List(l) => Ok(l),
            _ => Err(WrongType),
        }
    }
}

impl Value {
    /// The stream, or [`WrongType`].
    #[inline]
    pub fn as_stream(&self) -> Result<&Stream, WrongType> {
        match self {
            Value::Stream(s) => Ok(s),
            _ => Err(WrongType),
        }
    }

    /// The stream for writing, or [`WrongType`].
    #[inline]
    pub fn as_stream_mut(&mut self) -> Result<&mut Stream, WrongType> {
        match self {
            Value::Stream(s) => Ok(s),
            _ => Err(WrongType),
        }
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
    fn strings_and_sets_do_not_grow_the_value() {
        assert_eq!(std::mem::size_of::<super::Value>(), 32);
    }
}
