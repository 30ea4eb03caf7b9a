//! The sorted-set commands (Z*), their parsing and replies, on the `goblin-zset` engine.

use crate::commands::Command;

/// Every sorted-set command.
pub static COMMANDS: &[Command] = &[];
