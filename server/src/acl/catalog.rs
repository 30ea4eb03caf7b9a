//! What ACL rules name: Redis's command categories, and for every command and subcommand
//! its bit in a selector's command bitmap and the categories COMMAND INFO gives it (the
//! metadata in commands/meta, so the categories are written down once).

use crate::commands::{self, Command};
use std::collections::HashMap;
use std::sync::OnceLock;

/// Redis's command categories, in its order (ACL CAT, COMMAND INFO and the describe follow
/// it); bit i of a category set is `CATEGORIES[i]`.
pub const CATEGORIES: [&str; 21] = [
    "keyspace",
    "read",
    "write",
    "set",
    "sortedset",
    "list",
    "hash",
    "string",
    "bitmap",
    "hyperloglog",
    "geo",
    "stream",
    "pubsub",
    "admin",
    "fast",
    "slow",
    "blocking",
    "dangerous",
    "connection",
    "transaction",
    "scripting",
];

/// Bits in a selector's command bitmap.
pub const BITS: usize = 512;
/// The bit no command has: set only by `+@all` / `allcommands`, it records that the
/// selector started from every command (Redis's "future commands" bit).
pub const FUTURE: usize = BITS - 1;

/// One command or subcommand as ACL sees it.
pub struct Entry {
    /// The command.
    pub cmd: &'static Command,
    /// Its categories (bit i: `CATEGORIES[i]`).
    pub categories: u32,
    /// The ids of its subcommands.
    pub subs: Vec<usize>,
    /// Whether it is a subcommand.
    pub is_sub: bool,
}

/// Every command with its id (the index into `entries`), in the table's order.
pub struct Catalog {
    /// By id.
    pub entries: Vec<Entry>,
    /// Top-level commands' ids, in table order.
    pub top: Vec<usize>,
    ids: HashMap<&'static str, usize>,
    /// Command stat slot -> id (the request path's lookup, without hashing).
    by_slot: Vec<usize>,
}

/// The catalog of the server's command table.
pub fn catalog() -> &'static Catalog {
    static CATALOG: OnceLock<Catalog> = OnceLock::new();
    CATALOG.get_or_init(|| {
        let mut entries = Vec::new();
        let mut top = Vec::new();
        let mut ids = HashMap::new();
        for cmd in commands::all() {
            let id = entries.len();
            top.push(id);
            ids.insert(cmd.name, id);
            entries.push(Entry {
                cmd,
                categories: categories_of(cmd),
                subs: Vec::new(),
                is_sub: false,
            });
            for sub in cmd.subcommands {
                let sid = entries.len();
                ids.insert(sub.name, sid);
                entries.push(Entry {
                    cmd: sub,
                    categories: categories_of(sub),
                    subs: Vec::new(),
                    is_sub: true,
                });
                entries[id].subs.push(sid);
            }
        }
        assert!(
            entries.len() < FUTURE,
            "the command bitmap holds every command"
        );
        let mut by_slot = Vec::new();
        for (id, e) in entries.iter().enumerate() {
            let slot = e.cmd.slot.get();
            if by_slot.len() <= slot {
                by_slot.resize(slot + 1, usize::MAX);
            }
            by_slot[slot] = id;
        }
        Catalog {
            entries,
            top,
            ids,
            by_slot,
        }
    })
}

/// The categories COMMAND INFO lists for `cmd` (its 7th field, "@name" strings).
fn categories_of(cmd: &Command) -> u32 {
    let Some(crate::resp::value::Value::Array(fields)) =
        commands::introspection_info(cmd.name.as_bytes())
    else {
        return 0;
    };
    let items = match fields.get(6) {
        Some(crate::resp::value::Value::Set(items) | crate::resp::value::Value::Array(items)) => {
            items
        }
        _ => return 0,
    };
    items
        .iter()
        .filter_map(|v| v.as_bytes())
        .filter_map(|name| category(name.strip_prefix(b"@").unwrap_or(name)))
        .fold(0, |acc, bit| acc | bit)
}

/// The bit of the category `name` (ASCII case ignored), if Redis has it.
pub fn category(name: &[u8]) -> Option<u32> {
    CATEGORIES
        .iter()
        .position(|c| c.as_bytes().eq_ignore_ascii_case(name))
        .map(|i| 1 << i)
}

impl Catalog {
    /// The id of `cmd`.
    pub fn id(&self, cmd: &Command) -> usize {
        self.by_slot[cmd.slot.get()]
    }

    /// The command `name` names, as Redis's ACLLookupCommand: `cmd` or `cmd|sub`
    /// (ASCII case ignored); `None` for anything else.
    pub fn lookup(&self, name: &[u8]) -> Option<usize> {
        let mut parts = name.split(|&b| b == b'|');
        let base = commands::lookup(parts.next()?)?;
        let found = match (parts.next(), parts.next()) {
            (None, _) => base,
            (Some(sub), None) if !base.subcommands.is_empty() => base.subcommand(sub)?,
            _ => return None,
        };
        Some(self.ids[found.name])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn categories_come_from_the_metadata() {
        let c = catalog();
        let get = c.lookup(b"GET").unwrap();
        let names: Vec<&str> = CATEGORIES
            .iter()
            .enumerate()
            .filter(|(i, _)| c.entries[get].categories & (1 << i) != 0)
            .map(|(_, n)| *n)
            .collect();
        assert_eq!(names, ["read", "string", "fast"]);
        assert!(c.lookup(b"config|get").is_some());
        assert!(c.lookup(b"config|nosuch").is_none());
        assert!(c.lookup(b"get|x").is_none());
        assert!(c.lookup(b"config|get|x").is_none());
        assert_eq!(category(b"SortedSet"), Some(1 << 4));
        assert_eq!(category(b"all"), None);
    }
}
