//! The man page in packaging/goblin-server.1 is generated from the command line's definition
//! (clap_mangen): this test fails when the two differ. `GOBLIN_WRITE_MAN=1 cargo test -p
//! goblin-server --test man_page` writes the page anew.

use clap::CommandFactory;

#[test]
fn the_man_page_is_the_command_lines() {
    let mut page = Vec::new();
    clap_mangen::Man::new(goblin_server::config::Args::command())
        .section("1")
        .render(&mut page)
        .expect("rendered");
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../packaging/goblin-server.1");
    if std::env::var_os("GOBLIN_WRITE_MAN").is_some() {
        std::fs::write(&path, &page).expect("written");
    }
    let committed = std::fs::read(&path).unwrap_or_default();
    assert!(
        committed == page,
        "packaging/goblin-server.1 is not the page the command line gives: run \
         GOBLIN_WRITE_MAN=1 cargo test -p goblin-server --test man_page"
    );
}
