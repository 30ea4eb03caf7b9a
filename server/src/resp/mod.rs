//! The Redis protocol: parsing requests ([`parse`]), writing replies ([`reply`]), and a
//! value tree for data kept in RESP form ([`value`]).

pub mod parse;
pub mod reply;
pub mod value;
