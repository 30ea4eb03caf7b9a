//! Which arguments of a command are keys, as Redis 7 finds them (db.c's
//! getKeysFromCommandWithSpecs): from the key specifications in the command metadata
//! (COMMAND INFO's 9th field), and, for the commands whose specs are incomplete or whose
//! flags depend on the arguments, from Redis's own per-command rules. COMMAND GETKEYS and
//! GETKEYSANDFLAGS answer with it, and client-side caching (CLIENT TRACKING) remembers the
//! keys of read commands with it.
//!
//! A spec is a start and a walk:
//!
//! ```text
//! begin_search  index N          the first key is argument N
//!               keyword K from S  the argument after the first K found from S (S < 0:
//!                                 searching backwards from the end); none found: no keys
//! find_keys     range L step T    keys at first, first+T, ... up to first+L (L < 0: up to
//!               limit M           argc+L; with M > 0, the first 1/M of the rest)
//!               keynum I F T      the count is argument first+I, the keys start at first+F
//! ```

use super::introspection::info_of;
use super::Command;
use crate::resp::value::Value;
use std::sync::OnceLock;

/// The flags of a key argument, in the order Redis prints them.
pub const FLAG_NAMES: [&str; 11] = [
    "RO",
    "RW",
    "OW",
    "RM",
    "access",
    "update",
    "insert",
    "delete",
    "not_key",
    "incomplete",
    "variable_flags",
];

/// A set of [`FLAG_NAMES`] as bits (bit i is `FLAG_NAMES[i]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct KeyFlags(u16);

impl KeyFlags {
    const RO: KeyFlags = KeyFlags(1);
    const RW: KeyFlags = KeyFlags(1 << 1);
    const OW: KeyFlags = KeyFlags(1 << 2);
    const ACCESS: KeyFlags = KeyFlags(1 << 4);
    const UPDATE: KeyFlags = KeyFlags(1 << 5);
    const DELETE: KeyFlags = KeyFlags(1 << 7);
    const NOT_KEY: KeyFlags = KeyFlags(1 << 8);
    const INCOMPLETE: KeyFlags = KeyFlags(1 << 9);
    const VARIABLE: KeyFlags = KeyFlags(1 << 10);

    const fn with(self, other: KeyFlags) -> KeyFlags {
        KeyFlags(self.0 | other.0)
    }

    fn contains(self, other: KeyFlags) -> bool {
        self.0 & other.0 == other.0
    }

    fn from_names<'a>(names: impl Iterator<Item = &'a [u8]>) -> KeyFlags {
        let mut flags = KeyFlags::default();
        for name in names {
            if let Some(i) = FLAG_NAMES.iter().position(|f| f.as_bytes() == name) {
                flags.0 |= 1 << i;
            }
        }
        flags
    }

    /// Whether the command reads the key's value (`access`): ACL read permission applies.
    pub fn reads_value(self) -> bool {
        self.contains(KeyFlags::ACCESS)
    }

    /// Whether the command inserts, deletes or updates the key: ACL write permission
    /// applies.
    pub fn changes_key(self) -> bool {
        self.0 & (KeyFlags::UPDATE.0 | 1 << 6 | 1 << 7) != 0
    }

    /// Whether the argument is not a key (a shard channel).
    pub fn is_not_key(self) -> bool {
        self.contains(KeyFlags::NOT_KEY)
    }

    /// The names of the flags set, in Redis's order.
    pub fn names(self) -> impl Iterator<Item = &'static str> {
        FLAG_NAMES
            .iter()
            .enumerate()
            .filter(move |(i, _)| self.0 & (1 << i) != 0)
            .map(|(_, name)| *name)
    }
}

/// Where a spec's keys begin.
#[derive(Debug, Clone, PartialEq)]
enum Begin {
    Index(i64),
    Keyword { keyword: Vec<u8>, start_from: i64 },
    Unknown,
}

/// How a spec's keys go on from the first.
#[derive(Debug, Clone, PartialEq)]
enum Find {
    Range { last: i64, step: i64, limit: i64 },
    Keynum { index: i64, first: i64, step: i64 },
    Unknown,
}

/// One key specification.
#[derive(Debug, Clone, PartialEq)]
struct KeySpec {
    flags: KeyFlags,
    begin: Begin,
    find: Find,
}

/// What the metadata says of one command's keys.
#[derive(Debug, Default)]
struct CommandKeys {
    specs: Vec<KeySpec>,
    /// The command may be called with no key (`no_mandatory_keys`, EVAL's flag).
    no_mandatory_keys: bool,
}

/// A key argument: its position in the command's arguments and its flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyRef {
    /// Index into the arguments (0 is the command name).
    pub pos: usize,
    /// The key's flags.
    pub flags: KeyFlags,
}

/// Whether `cmd` has key arguments at all (a spec that is not `not_key`).
pub fn has_keys(cmd: &Command) -> bool {
    of(cmd).is_some_and(|k| k.specs.iter().any(|s| !s.flags.contains(KeyFlags::NOT_KEY)))
}

/// Whether `cmd` may be called without a key (`no_mandatory_keys`).
pub fn no_mandatory_keys(cmd: &Command) -> bool {
    of(cmd).is_some_and(|k| k.no_mandatory_keys)
}

/// The keys of `args` (a whole command, name first) for `cmd`, or `None` when the
/// arguments do not fit its specs (a key count that is not a number, keys past the end).
pub fn keys(cmd: &Command, args: &[&[u8]]) -> Option<Vec<KeyRef>> {
    let Some(meta) = of(cmd) else {
        return Some(Vec::new());
    };
    let all = meta
        .specs
        .iter()
        .fold(KeyFlags::default(), |acc, s| acc.with(s.flags));
    if !all.contains(KeyFlags::INCOMPLETE) && !all.contains(KeyFlags::VARIABLE) {
        if let Some(found) = from_specs(&meta.specs, args) {
            return Some(found);
        }
    }
    from_rules(cmd.name, args).or_else(|| from_specs(&meta.specs, args))
}

/// The keys the specs give; `None` when one of them does not fit.
fn from_specs(specs: &[KeySpec], args: &[&[u8]]) -> Option<Vec<KeyRef>> {
    let argc = args.len() as i64;
    let mut found = Vec::new();
    for spec in specs {
        let first = match &spec.begin {
            Begin::Index(i) => *i,
            Begin::Keyword {
                keyword,
                start_from,
            } => {
                // As Redis, the search stops before the last argument (forwards) or the
                // first (backwards): a keyword there would have no key after it.
                let (from, to, step) = if *start_from > 0 {
                    (*start_from, argc - 1, 1)
                } else {
                    (argc + start_from, 1, -1)
                };
                let mut i = from;
                let mut at = None;
                while i != to && (1..argc).contains(&i) {
                    if args[i as usize].eq_ignore_ascii_case(keyword) {
                        at = Some(i + 1);
                        break;
                    }
                    i += step;
                }
                match at {
                    Some(first) => first,
                    None => continue,
                }
            }
            Begin::Unknown => return None,
        };
        let (first, last, step) = match spec.find {
            Find::Range { last, step, limit } => {
                let end = if last >= 0 {
                    first + last
                } else if limit <= 1 {
                    argc + last
                } else {
                    first + ((argc - first) / limit + last)
                };
                (first, end, step)
            }
            Find::Keynum {
                index,
                first: f,
                step,
            } => {
                let count = args.get((first + index) as usize)?;
                let count: i64 = std::str::from_utf8(count).ok()?.parse().ok()?;
                if count < 0 {
                    return None;
                }
                (first + f, first + f + (count - 1) * step, step)
            }
            Find::Unknown => return None,
        };
        let mut i = first;
        while i <= last {
            if i >= argc || i < 1 {
                return None;
            }
            found.push(KeyRef {
                pos: i as usize,
                flags: spec.flags,
            });
            i += step.max(1);
        }
    }
    Some(found)
}

/// Redis's own rules for the commands whose specs cannot say (db.c's getkeys procs):
/// SET and BITFIELD, whose key flags depend on the arguments, SORT, whose STORE key can be
/// anywhere, and MIGRATE, whose KEYS follow options.
fn from_rules(name: &str, args: &[&[u8]]) -> Option<Vec<KeyRef>> {
    let key = |pos, flags| KeyRef { pos, flags };
    let read = KeyFlags::RO.with(KeyFlags::ACCESS);
    let read_write = KeyFlags::RW.with(KeyFlags::ACCESS).with(KeyFlags::UPDATE);
    let overwrite = KeyFlags::OW.with(KeyFlags::UPDATE);
    let is = |arg: &[u8], word: &str| arg.eq_ignore_ascii_case(word.as_bytes());
    match name {
        "set" => {
            let get = args.iter().skip(3).any(|a| is(a, "get"));
            Some(vec![key(1, if get { read_write } else { overwrite })])
        }
        "bitfield" => {
            let mut i = 2;
            let mut readonly = true;
            while i < args.len() {
                let left = args.len() - i - 1;
                match args[i] {
                    a if is(a, "get") && left >= 2 => i += 3,
                    a if is(a, "overflow") && left >= 1 => i += 2,
                    _ => {
                        // SET, INCRBY, or a syntax error: taken as a write.
                        readonly = false;
                        break;
                    }
                }
            }
            Some(vec![key(1, if readonly { read } else { read_write })])
        }
        "sort" => {
            let mut keys = vec![key(1, read)];
            let mut store = None;
            let mut i = 2;
            while i < args.len() {
                match args[i] {
                    a if is(a, "limit") => i += 2,
                    a if is(a, "get") || is(a, "by") => i += 1,
                    a if is(a, "store") && i + 1 < args.len() => store = Some(i + 1),
                    _ => {}
                }
                i += 1;
            }
            keys.extend(store.map(|pos| key(pos, overwrite)));
            Some(keys)
        }
        "sort_ro" => Some(vec![key(1, read)]),
        "migrate" => {
            // migrateGetKeys: the key argument, or with KEYS (and an empty key argument) the
            // arguments after it; AUTH and AUTH2 skip their arguments on the way.
            let (mut first, mut num) = (3, 1);
            let mut i = 6;
            while i < args.len() {
                let a = args[i];
                if is(a, "keys") {
                    if !args[3].is_empty() {
                        return Some(Vec::new());
                    }
                    first = i + 1;
                    num = args.len() - first;
                    break;
                }
                i += if is(a, "auth") {
                    2
                } else if is(a, "auth2") {
                    3
                } else {
                    1
                };
            }
            let flags = KeyFlags::RW.with(KeyFlags::ACCESS).with(KeyFlags::DELETE);
            Some((first..first + num).map(|pos| key(pos, flags)).collect())
        }
        _ => None,
    }
}

/// What the metadata says of `cmd`'s keys (found by its stat slot: no hashing on the
/// request path, which ACL checks take).
fn of(cmd: &Command) -> Option<&'static CommandKeys> {
    commands().get(cmd.slot.get())?.as_ref()
}

/// Builds the key specs now rather than at their first use.
pub(super) fn load_now() {
    commands();
}

/// The key specs of every command and subcommand in the metadata, by stat slot.
fn commands() -> &'static Vec<Option<CommandKeys>> {
    static KEYS: OnceLock<Vec<Option<CommandKeys>>> = OnceLock::new();
    KEYS.get_or_init(|| {
        let mut by_slot: Vec<Option<CommandKeys>> = Vec::new();
        for cmd in super::table::all().flat_map(|cmd| std::iter::once(cmd).chain(cmd.subcommands)) {
            let slot = cmd.slot.get();
            if by_slot.len() <= slot {
                by_slot.resize_with(slot + 1, || None);
            }
            by_slot[slot] = info_of(cmd.name.as_bytes()).map(parse_command);
        }
        by_slot
    })
}

/// A COMMAND INFO entry's flags and key specs.
fn parse_command(info: &Value) -> CommandKeys {
    let Value::Array(fields) = info else {
        return CommandKeys::default();
    };
    let no_mandatory_keys = members(fields.get(2)).any(|f| f == b"no_mandatory_keys");
    let specs = match fields.get(8) {
        Some(Value::Set(specs) | Value::Array(specs)) => specs.iter().map(parse_spec).collect(),
        _ => Vec::new(),
    };
    CommandKeys {
        specs,
        no_mandatory_keys,
    }
}

/// The strings of a set or array value.
fn members(value: Option<&Value>) -> impl Iterator<Item = &[u8]> {
    let items: &[Value] = match value {
        Some(Value::Set(items) | Value::Array(items)) => items,
        _ => &[],
    };
    items.iter().filter_map(Value::as_bytes)
}

fn parse_spec(spec: &Value) -> KeySpec {
    let int = |part: Option<&Value>, name: &str| match part.and_then(|p| p.get("spec")?.get(name)) {
        Some(Value::Int(n)) => *n,
        _ => 0,
    };
    fn kind(part: Option<&Value>) -> Option<&[u8]> {
        part?.get("type")?.as_bytes()
    }
    let begin_part = spec.get("begin_search");
    let begin = match kind(begin_part) {
        Some(b"index") => Begin::Index(int(begin_part, "index")),
        Some(b"keyword") => Begin::Keyword {
            keyword: begin_part
                .and_then(|p| p.get("spec")?.get("keyword")?.as_bytes())
                .unwrap_or_default()
                .to_vec(),
            start_from: int(begin_part, "startfrom"),
        },
        _ => Begin::Unknown,
    };
    let find_part = spec.get("find_keys");
    let find = match kind(find_part) {
        Some(b"range") => Find::Range {
            last: int(find_part, "lastkey"),
            step: int(find_part, "keystep"),
            limit: int(find_part, "limit"),
        },
        Some(b"keynum") => Find::Keynum {
            index: int(find_part, "keynumidx"),
            first: int(find_part, "firstkey"),
            step: int(find_part, "keystep"),
        },
        _ => Find::Unknown,
    };
    KeySpec {
        flags: KeyFlags::from_names(members(spec.get("flags"))),
        begin,
        find,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::lookup;

    fn positions(args: &[&str]) -> Option<Vec<usize>> {
        let cmd = lookup(args[0].as_bytes()).unwrap();
        let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        keys(cmd, &args).map(|k| k.iter().map(|k| k.pos).collect())
    }

    #[test]
    fn index_range_and_keynum_specs() {
        assert_eq!(positions(&["get", "k"]), Some(vec![1]));
        assert_eq!(positions(&["mset", "a", "1", "b", "2"]), Some(vec![1, 3]));
        assert_eq!(positions(&["del", "a", "b", "c"]), Some(vec![1, 2, 3]));
        assert_eq!(
            positions(&["zunionstore", "d", "2", "a", "b", "WEIGHTS", "1", "2"]),
            Some(vec![1, 3, 4])
        );
        assert_eq!(positions(&["zunionstore", "d", "3", "a"]), None);
        assert_eq!(positions(&["zunionstore", "d", "x", "a"]), None);
    }

    #[test]
    fn rules_give_set_and_bitfield_flags_and_sort_store() {
        let flags = |args: &[&str]| {
            let cmd = lookup(args[0].as_bytes()).unwrap();
            let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
            keys(cmd, &args).unwrap()[0]
                .flags
                .names()
                .collect::<Vec<_>>()
        };
        assert_eq!(flags(&["set", "k", "v", "get"]), ["RW", "access", "update"]);
        assert_eq!(flags(&["set", "k", "v"]), ["OW", "update"]);
        assert_eq!(
            flags(&["bitfield", "k", "get", "u8", "0"]),
            ["RO", "access"]
        );
        assert_eq!(
            flags(&["bitfield", "k", "incrby", "u8", "0", "1"]),
            ["RW", "access", "update"]
        );
    }
}
