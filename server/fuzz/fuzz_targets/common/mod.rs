//! Set-up and end checks shared by the targets that drive an in-process server
//! (`command_stream`, `eval_script`): a connection-less client, and the keyspace check
//! that every value survives an RDB round trip unchanged.

use goblin_server::clients::Client;
use goblin_server::rdb::contents;
use goblin_server::rdb::read::{load, LoadOptions};
use goblin_server::rdb::write::{write_snapshot, AuxInfo};
use goblin_server::server::Server;

/// A client as a connection from 127.0.0.1 would have, authenticated.
pub fn new_client(id: u64) -> Client {
    let any = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
    Client::new(id, -1, any.into(), any.into(), true)
}

/// Writes the keyspace (and function libraries) as an RDB snapshot, loads it back and
/// panics unless the loaded keyspace equals the one written.
pub fn check_rdb_round_trip(server: &Server) {
    let dbs = server.keyspace.databases();
    let before = contents(dbs);
    let aux = AuxInfo {
        functions: server.scripting.functions.codes(),
        ..AuxInfo::default()
    };
    let (bytes, _) = write_snapshot(Vec::new(), dbs, &aux).expect("writing to memory");
    let opts = LoadOptions {
        databases: dbs.len(),
        size: Some(bytes.len() as u64),
        ..LoadOptions::default()
    };
    let (loaded, _) = match load(&bytes[..], &opts) {
        Ok(loaded) => loaded,
        Err(e) => panic!("Goblin's own snapshot does not load: {e}"),
    };
    assert!(
        before == contents(&loaded),
        "round trip changed the keyspace"
    );
}
