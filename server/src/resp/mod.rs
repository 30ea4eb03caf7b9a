//! The Redis protocol: parsing requests ([`parse`]) and writing replies ([`reply`]).

pub mod parse;
pub mod reply;
