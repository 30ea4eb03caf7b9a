//! goblin-store: Goblin Store on its own, for testing and benchmarking without the
//! sorted-set server. Takes the same store flags as goblin-server.

use clap::Parser;

/// Goblin Store without the sorted-set server.
#[derive(Parser)]
#[command(name = "goblin-store", version)]
struct Cli {
    #[command(flatten)]
    store: goblin_objcache::StoreArgs,
}

fn main() -> anyhow::Result<()> {
    goblin_evloop::alloc::keep_large_buffers_out_of_the_heap();
    let cli = Cli::parse();
    if goblin_objcache::start(&cli.store)?.is_none() {
        anyhow::bail!("no store flag given; for example: goblin-store --memcache-port 11211");
    }
    loop {
        std::thread::park();
    }
}
