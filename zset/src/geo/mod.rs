//! Geohash math for the geo commands, as Redis computes it (geohash.c and
//! geohash_helper.c), with no sorted-set or I/O code: the commands store points as
//! sorted-set members scored by [`hash::score_of`] and search with the score ranges of
//! [`search::Shape::cells`].
//!
//! - [`hash`]: encoding and decoding of interleaved geohashes, neighbours, GEOHASH strings.
//! - [`search`]: bounding boxes, the cells a search reads, distances and membership tests.

pub mod hash;
pub mod search;
