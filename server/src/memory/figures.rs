//! The memory figures INFO memory and MEMORY STATS report, with Redis's meanings: used is
//! what the allocator handed out, overhead what the server spends beside the values (the
//! start-up figure, client buffers, keys and their entries), dataset the rest. Every
//! figure is read in constant time (counters, not walks of the keyspace or the allocator),
//! so INFO costs the same at 10 keys and 100M.

use super::allocator;
use crate::server::Server;

/// One reading of the figures.
#[derive(Debug, Clone, Copy)]
pub struct Figures {
    /// Allocated bytes (used_memory).
    pub used: u64,
    /// The highest allocated figure read.
    pub peak: u64,
    /// Allocated bytes when the server had started, before loading (used_memory_startup).
    pub startup: u64,
    /// Resident set size (used_memory_rss).
    pub rss: u64,
    /// What the allocator holds from the system: as Redis built with libc malloc reports
    /// it (allocator_active and allocator_resident), the resident set less the Lua VM's.
    pub resident: u64,
    /// Bytes of the clients that are not replicas (clients.normal, mem_clients_normal).
    pub clients: u64,
    /// The shared replication buffer, split between the backlog and the replicas.
    pub replication: crate::replication::memory::Figures,
    /// The AOF's buffer (aof.buffer, mem_aof_buffer).
    pub aof_buffer: u64,
    /// The cluster bus links (cluster.links, mem_cluster_links).
    pub cluster_links: u64,
    /// The EVAL scripts' cache (lua.caches, used_memory_scripts_eval).
    pub lua_caches: u64,
    /// The function libraries (functions.caches, used_memory_functions).
    pub functions_caches: u64,
    /// Bytes beside the values (used_memory_overhead, overhead.total), as Redis's
    /// getMemoryOverheadData adds them: start-up, the replication buffer (counted once),
    /// the clients, the cluster links, the AOF buffer, the scripts' and functions' caches,
    /// the key tables.
    pub overhead: u64,
    /// used - overhead (used_memory_dataset).
    pub dataset: u64,
    /// Keys in every database.
    pub keys: u64,
}

impl Figures {
    /// The figures of `server` now (a fresh reading of the allocator).
    pub fn of(server: &mut Server) -> Figures {
        let used = server.memory.gauge.read(&server.keyspace);
        let rss = allocator::rss_bytes();
        let startup = server.memory.startup.min(used);
        let clients: u64 = server
            .clients
            .iter()
            .filter(|(c, _)| c.repl_role != crate::clients::ReplRole::Replica)
            .map(|(c, buffers)| crate::clients::memory::usage(c, buffers) as u64)
            .sum();
        let replication = crate::replication::memory::figures(server);
        let aof_buffer = server.aof.buffer_memory() as u64;
        let cluster_links = server
            .cluster
            .as_deref()
            .map_or(0, crate::cluster::bus::links_memory) as u64;
        let lua_caches = server.scripting.cache.memory() as u64;
        let functions_caches = server.scripting.functions.memory() as u64;
        let ks = &server.keyspace;
        let key_overhead = ks.tables_memory() as u64;
        let overhead = (startup
            + replication.total()
            + clients
            + cluster_links
            + aof_buffer
            + lua_caches
            + functions_caches
            + key_overhead)
            .min(used);
        Figures {
            used,
            peak: server.memory.gauge.peak(),
            startup,
            rss,
            resident: rss.saturating_sub(server.scripting.vm_memory() as u64),
            clients,
            replication,
            aof_buffer,
            cluster_links,
            lua_caches,
            functions_caches,
            overhead,
            dataset: used - overhead,
            keys: ks.databases().iter().map(|db| db.len() as u64).sum(),
        }
    }

    /// dataset as a share of what is above the start-up figure, percent.
    pub fn dataset_percent(&self) -> f64 {
        ratio(self.dataset, self.used.saturating_sub(self.startup)) * 100.0
    }

    /// used as a share of the peak, percent.
    pub fn peak_percent(&self) -> f64 {
        ratio(self.used, self.peak) * 100.0
    }

    /// Bytes of key overhead and data a key costs on average (MEMORY STATS keys.bytes-per-key).
    pub fn bytes_per_key(&self) -> u64 {
        self.used
            .saturating_sub(self.startup)
            .checked_div(self.keys)
            .unwrap_or(0)
    }

    /// The pairs of ratios and byte differences Redis reports between the layers: allocator
    /// active / allocated, resident / active, RSS / resident, and RSS / used (the
    /// fragmentation ratio).
    pub fn ratios(&self) -> Ratios {
        let (allocated, active, resident) = (self.used, self.resident, self.resident);
        Ratios {
            allocator_frag: (ratio(active, allocated), diff(active, allocated)),
            allocator_rss: (ratio(resident, active), diff(resident, active)),
            rss_overhead: (ratio(self.rss, resident), diff(self.rss, resident)),
            fragmentation: (ratio(self.rss, self.used), diff(self.rss, self.used)),
        }
    }
}

/// Ratios and byte differences between the layers of memory (see [`Figures::ratios`]).
#[derive(Debug, Clone, Copy)]
pub struct Ratios {
    /// allocator_frag_ratio, allocator_frag_bytes.
    pub allocator_frag: (f64, i64),
    /// allocator_rss_ratio, allocator_rss_bytes.
    pub allocator_rss: (f64, i64),
    /// rss_overhead_ratio, rss_overhead_bytes.
    pub rss_overhead: (f64, i64),
    /// mem_fragmentation_ratio, mem_fragmentation_bytes.
    pub fragmentation: (f64, i64),
}

fn ratio(a: u64, b: u64) -> f64 {
    if b > 0 {
        a as f64 / b as f64
    } else {
        0.0
    }
}

fn diff(a: u64, b: u64) -> i64 {
    a as i64 - b as i64
}

/// Bytes as Redis prints them for people: 512B, 1.50K, 3.00M, ...
pub fn human(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "K", "M", "G", "T"];
    let mut v = bytes as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit < UNITS.len() - 1 {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes}B")
    } else {
        format!("{v:.2}{}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_overhead_counts_the_replication_buffer_once() {
        let mut server = Server::new(crate::config::Config::default());
        server.config.repl.backlog_size = 16 * 1024;
        crate::replication::create_backlog(&mut server);
        crate::replication::feed(&mut server, &[b'x'; 100_000]);
        let f = Figures::of(&mut server);
        let buffer = server.replication.backlog.as_ref().unwrap().memory() as u64;
        assert_eq!(f.replication.total(), buffer);
        assert!(f.used > f.overhead, "not clamped to the allocated figure");
        let parts = f.startup
            + f.replication.total()
            + f.clients
            + f.cluster_links
            + f.aof_buffer
            + f.lua_caches
            + f.functions_caches
            + server.keyspace.tables_memory() as u64;
        assert_eq!(f.overhead, parts);
        assert!(f.overhead >= buffer);
    }

    #[test]
    fn human_bytes_as_redis() {
        assert_eq!(human(1023), "1023B");
        assert_eq!(human(1536), "1.50K");
        assert_eq!(human(100 << 20), "100.00M");
        assert_eq!(human(3 << 30), "3.00G");
    }
}
