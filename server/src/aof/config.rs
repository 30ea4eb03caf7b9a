//! The append-only file's directives, with Redis 7.2's names, defaults and checks.

/// When the AOF is fsynced (appendfsync).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fsync {
    /// After every event-loop iteration's writes, before their replies go out.
    Always,
    /// In the background, at most about a second behind.
    Everysec,
    /// Never: the kernel decides.
    No,
}

impl Fsync {
    /// The values, in Redis's order.
    pub const NAMES: [&'static str; 3] = ["always", "everysec", "no"];

    /// The mode named `name` (one of [`Fsync::NAMES`]).
    pub fn named(name: &str) -> Option<Fsync> {
        match name {
            "always" => Some(Fsync::Always),
            "everysec" => Some(Fsync::Everysec),
            "no" => Some(Fsync::No),
            _ => None,
        }
    }

    /// The directive's value.
    pub fn name(self) -> &'static str {
        match self {
            Fsync::Always => "always",
            Fsync::Everysec => "everysec",
            Fsync::No => "no",
        }
    }
}

/// appendonly, appendfilename, appenddirname, appendfsync and the rest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AofConfig {
    /// appendonly
    pub enabled: bool,
    /// appendfilename: the base of every file name in the directory.
    pub filename: String,
    /// appenddirname: the directory in `dir` that holds the files.
    pub dirname: String,
    /// appendfsync
    pub fsync: Fsync,
    /// no-appendfsync-on-rewrite: no fsync while a child writes.
    pub no_fsync_on_rewrite: bool,
    /// auto-aof-rewrite-percentage (0: no automatic rewrite).
    pub auto_rewrite_percentage: u64,
    /// auto-aof-rewrite-min-size, bytes.
    pub auto_rewrite_min_size: u64,
    /// aof-use-rdb-preamble: the base file is an RDB file (else commands).
    pub use_rdb_preamble: bool,
    /// aof-load-truncated: a file cut inside its last command loads up to it.
    pub load_truncated: bool,
    /// aof-timestamp-enabled: `#TS:` annotations.
    pub timestamp_enabled: bool,
    /// aof-disable-auto-gc (hidden): keep the history files a rewrite leaves (listed in the
    /// manifest) until it is turned off again.
    pub disable_auto_gc: bool,
    /// aof-rewrite-incremental-fsync: a rewrite syncs its new base every 4 MB written.
    pub rewrite_incremental_fsync: bool,
}

impl Default for AofConfig {
    fn default() -> Self {
        AofConfig {
            enabled: false,
            filename: "appendonly.aof".into(),
            dirname: "appendonlydir".into(),
            fsync: Fsync::Everysec,
            no_fsync_on_rewrite: false,
            auto_rewrite_percentage: 100,
            auto_rewrite_min_size: 64 << 20,
            use_rdb_preamble: true,
            load_truncated: true,
            timestamp_enabled: false,
            disable_auto_gc: false,
            rewrite_incremental_fsync: true,
        }
    }
}
